"""Checks on slices the pass does not rewrite: a violation is a fact the driver turns into a
``ValueError`` naming the statement.

Seed: a ``tile.slice`` with ``valid_shape`` / ``drop_dims`` is not a window the
pass canonicalizes, but its lazy materialization by a ``tile.col_expand_*`` consumer is the same
textract as for any slice: with a dynamic offset the address falls back to the source base
(#1640), and a non-contiguous window is densely repacked over its own source (#2010).  Either
would corrupt the source, so such a use is rejected rather than emitted.

The encoder states each such slice as a ``Win`` term (when its shape is two constant dims; any
other shape gets no term, so nothing can be proven about it) and each col_expand use of it as
``(RawColxUse n w)``.  Safety is a *positive* proof — ``IdentityCopy`` from ``rules.legality``, the
very notion that keeps a canonical col_expand operand zero-copy — recorded in the lattice
``ColxProven`` (0 at load, 1 once proven, merge = max).  The ``checks`` ruleset runs once, after
saturation (stratified): only then does ``ColxProven = 0`` mean "no proof exists", and a missing
proof is a violation (never a silent acceptance).

Written windows (a ``tile.slice`` an op writes back into): a Vec window whose storage a
registered op writes in place (registry ``reuses_arg``), directly or through a view of it
(``inherits_input_memory``: set_validshape, reshape, ...), an alias, a loop carry or an ``if``
result, must stay a view — a copy would take the write and lose it.  It may stay a view only when
its address is proven aligned (#1789).  The encoder states each write as ``(WriteRow n t)`` (write
``n`` lands in tile ``t``) and each storage-sharing edge as ``(ViewEdgeRow d s)`` (``d`` lives in
``s``'s storage); the ``written`` ruleset (saturated before ``checks``) propagates
``(WrittenBy tile n)`` from a view back to its source window, and ``(WrittenUse k)`` marks a use
whose value is written.  ``ViewProven`` (0 once written, 1 once an ordinary-operand view of the
window is proven, merge = max) is read by ``checks`` only after saturation: a written Vec window
without a proven view is a ``WriteViolation`` (reject, never accept).  A write through an operand
that has no use context (a matmul accumulator: never rewritten) is also stated as
``(AsIsWriteRow n t)``; its window is proven a view by its aligned address alone
(``written-accumulator-aligned-view``).

Unclassified ops: an op whose writes the registry does not know (unregistered,
or registered without a memory effect) is not assumed read-only.  The encoder states each of its
tile operands as ``(MayWriteRow n t)``; the ``written`` ruleset carries ``(MayWrittenBy tile n)``
back through views, aliases and carries like a registered write, and ``checks`` turns a Vec
window it reaches with no proven aligned view into an ``UnclassifiedViolation`` (the driver
names the op: "cannot prove `op` does not write its operand").

valid_shape / drop_dims slices feeding an ordinary vector op (registry family VECTOR, e.g.
``fillpad_inplace`` writing it in place, directly or through set_validshape): the pass does not
copy such a slice, so it reaches the op as a view, and an unaligned view can hang the device
(#1789).  The encoder states each such operand as ``(RawVecRow n k)`` (use ``n`` of slice tile
``k``); loading it states the slice's ordinary use ``(Use w "ord")`` so the very proof of
``aligned-vec-view`` (rules.legality: a Vec window whose ``AddrMult`` is a multiple of ``ALIGN_BITS``)
applies to it unchanged.  ``RawVecProven`` (0 at load, 1 once that proof exists, merge = max) is
read by ``checks`` after saturation: no proof is a ``RawVecViolation`` (reject, never accept).
"""

from egraph_tiles.ir.ops import Role
from egraph_tiles.ir.target import ALIGN_BITS
from egraph_tiles.rules.sorts import row

ORD, CALL, CUBE_CALL, DENSE, HAND_BACK = (r.egg for r in (Role.ORD, Role.CALL, Role.CUBE_CALL,
                                                      Role.DENSE, Role.HAND_BACK))
DENSE_PASS = Role.DENSE_PASS.egg
PASS = Role.PASS.egg

#: the contexts that read an operand as a dense tile of its own (``DenseUse``), each with the
#: names of its copy rule and of the rule keeping a non-Vec window (``_dense_rules``); a
#: program function that only hands a window of it back (HAND_BACK) is one too, with a view rule of
#: its own (``rules.calls``)
DENSE_CONTEXTS = ((CALL, "call-operand-extract", "keep-non-vec-call-window"),
                  (DENSE, "reshape-operand-extract", "keep-non-vec-reshape-window"),
                  (DENSE_PASS, "passed-reshape-operand-extract",
                   "keep-non-vec-passed-reshape-window"),
                  (HAND_BACK, "hand-back-operand-extract", "keep-non-vec-hand-back-window"))


def _dense_rules(ctx: str, copy: str, keep: str) -> str:
    """A Vec window in context ``ctx`` gets a fresh copy (a dense, aligned tile of its own); an
    Acc / Mat window cannot be copied (no such data path): it is passed as it is, and what the
    callee accumulates into it is checked by rules.windows as if inlined.  One rule per context,
    the context a constant: matched through ``(DenseUse ctx)`` instead, egglog's join began with
    the windows, not with the few uses in the context (~0.1 ms per rule at 1,000 statements)."""
    return f"""
(rule ((= u (Use w {ctx})) (= w (Win b r c h wd)) (MemOf w "Vec") (= bits (Bits w)))
      ((union u (Copy w "Vec" {ctx})) (set (cost_table_Copy w "Vec" {ctx}) (/ (* (* h wd) bits) 8)))
      :ruleset safe :name "{copy}")
(rule ((= u (Use w {ctx})) (= w (Win b r c h wd)) (MemOf w m) (!= m "Vec"))
      ((union u (Keep w {ctx}))) :ruleset safe :name "{keep}")"""


#: the ``DenseUse`` facts, one per context of :data:`DENSE_CONTEXTS` but ``DENSE_PASS`` (a view
#: kept there proves no aligned address: it must not stand for a written window's proof)
_DENSE_USE = "\n".join(f"(DenseUse {ctx})" for ctx, *_ in DENSE_CONTEXTS if ctx != DENSE_PASS)

RULES = f"""
(relation RawColxUse (i64 Tile))
(function ColxProven (Tile) i64 :merge (max old new))
(relation ColxViolation (i64))
; the identity-copy proof of a window (constant offset, contiguous) marks it safe to lower lazily
(rule ((IdentityCopy w)) ((set (ColxProven w) 1)) :ruleset views :name "colx-identity-proven")
(ruleset checks)
; #1640 / #2010 for a valid_shape / drop_dims slice: a col_expand use with no identity-copy proof
; (dynamic offset, or a window that is neither a single row nor full width) is a violation
(rule ((RawColxUse n w) (= 0 (ColxProven w))) ((ColxViolation n))
      :ruleset checks :name "raw-slice-col-expand-violation")

(relation WrittenBy (Tile i64))
(relation ViewOf (Tile Tile))
(function ViewProven (Tile) i64 :merge (max old new))
(relation WriteViolation (i64 i64))
(relation WindowWriteViolation (i64))
; a proven view of a window as an ordinary operand (aligned-vec-view, #1789): writes through it
; land in the source
(rule ((= u (Use w {ORD})) (= u (Keep w {ORD})) (= w (Win b r c h wd)))
      ((set (ViewProven w) 1)) :ruleset proven :name "written-window-view-proven")
; a window handed on as it is (PASS: never copied) at a proven aligned address: a write that may
; reach it through what it flows into lands in the source, aligned
(rule ((= u (Use w {PASS})) (= u (Keep w {PASS})) (= w (Win b r c h wd)) (MemOf w "Vec")
       (= am (AddrMult w)) (= (% am {ALIGN_BITS}) 0))
      ((set (ViewProven w) 1)) :ruleset proven :name "written-passed-window-view-proven")
(ruleset written)
; a write into a view (or alias / carry) of a tile is a write into that tile's storage
(rule ((WrittenBy d n) (ViewOf d s)) ((WrittenBy s n)) :ruleset written :name "written-through-view")
(rule ((WrittenBy w n) (= w (Win b r c h wd))) ((set (ViewProven w) 0))
      :ruleset written :name "written-window-needs-view")
; A write through an operand the pass never rewrites (no use context: the accumulator of a
; matmul-family op, registry role None) reaches the op as the window itself: no copy is ever
; chosen there, so the only question is whether that view is legal.  A Vec window whose address
; is provably a multiple of 32 bytes is (#1789, the very proof of ``aligned-vec-view``); without
; that proof ``ViewProven`` stays 0 and the write is a violation.  (PyPTO's memory-space
; inference moves a Vec accumulator into a fresh Acc tile before the MAD, so on the device the
; window is read there, not written; the proof covers both readings.  Without it the pass
; rejects rather than copy: under the registry's in-place meaning a copy would lose the write.)
(relation WrittenAsIs (Tile i64))
(rule ((WrittenAsIs w n) (= w (Win b r c h wd)) (MemOf w "Vec") (= am (AddrMult w))
       (= (% am {ALIGN_BITS}) 0))
      ((set (ViewProven w) 1)) :ruleset proven :name "written-accumulator-aligned-view")
; a written Vec window with no view proven: a copy would lose the write, an unaligned view can
; hang the device (#1789) — a violation
(rule ((WrittenBy w n) (= w (NT k)) (= w (Win b r c h wd)) (MemOf w "Vec") (= 0 (ViewProven w)))
      ((WriteViolation k n) (WindowWriteViolation k)) :ruleset checks :name "written-window-violation")

; a scalar store (registry family SCALAR: tile.write) writes one element at the window's
; address: its operand is never copied and needs no alignment, so it asks for no view proof; the
; window's other uses still read written storage
(relation ScalarWrittenBy (Tile i64))
(rule ((ScalarWrittenBy d n) (ViewOf d s)) ((ScalarWrittenBy s n))
      :ruleset written :name "scalar-written-through-view")


; An op the registry cannot classify may write any tile operand.  A window it
; reaches (directly, or through a view / alias / carry, as for a registered write) can be neither
; copied (a copy could swallow the write) nor used as an unaligned view (#1789): it stays only as
; a proven aligned view; otherwise a violation naming the op
(relation MayWrittenBy (Tile i64))
(relation UnclassifiedViolation (i64 i64))
(relation WindowUnclassifiedViolation (i64))
(rule ((MayWrittenBy d n) (ViewOf d s)) ((MayWrittenBy s n))
      :ruleset written :name "may-written-through-view")
(rule ((MayWrittenBy w n) (= w (Win b r c h wd))) ((set (ViewProven w) 0))
      :ruleset written :name "unclassified-window-needs-view")
(rule ((MayWrittenBy w n) (= w (NT k)) (= w (Win b r c h wd)) (MemOf w "Vec") (= 0 (ViewProven w)))
      ((UnclassifiedViolation k n) (WindowUnclassifiedViolation k))
      :ruleset checks :name "unclassified-operand-violation")

; a program function's result that lives in an argument binding a framed parameter (ir.frames):
; the function proved each window it hands back where it really lies, so a write through the
; result reaches the argument's storage (its copies and reads are ordered by it) but asks no
; view proof of the argument itself, as a scalar store's
(relation FramedOf (Tile Tile))
(rule ((WrittenBy d n) (FramedOf d s)) ((ScalarWrittenBy s n))
      :ruleset written :name "written-through-framed-call")
(rule ((ScalarWrittenBy d n) (FramedOf d s)) ((ScalarWrittenBy s n))
      :ruleset written :name "scalar-written-through-framed-call")
(rule ((MayWrittenBy d n) (FramedOf d s)) ((ScalarWrittenBy s n))
      :ruleset written :name "may-written-through-framed-call")

; an if merge that takes its value on one arm of a condition of the scalar parameters: a write ``n``
; crosses it only where a route of that write some run takes does (two ifs testing the same
; condition take the same arm; the encoder states those crossings, egraph.encode_facts
; ``written_edges``)
(relation ArmEdgeOf (i64 Tile Tile))
(rule ((WrittenBy d n) (ArmEdgeOf n d s)) ((WrittenBy s n)) :ruleset written
      :name "written-through-taken-arm")
(rule ((ScalarWrittenBy d n) (ArmEdgeOf n d s)) ((ScalarWrittenBy s n)) :ruleset written
      :name "scalar-written-through-taken-arm")
(rule ((MayWrittenBy d n) (ArmEdgeOf n d s)) ((MayWrittenBy s n)) :ruleset written
      :name "may-written-through-taken-arm")

; A window passed to a program function (``self.f(w)``, context CALL).  The
; callee is analysed on its own and takes its tile parameters for dense, 32-byte-aligned tiles of
; their own (rules.windows ``w-root-param``; the engine's leaf facts), so when what it does with
; the tile needs both (egraph.calls: windows taken of it, an opaque use, or a col_expand use with a
; vector use or write) the window may stay a view only when it *is* one: an identity copy of its
; source (constant offset, a single row or the full width: dense, the source's pitch) at an
; aligned address.  Otherwise the caller copies it before the call (a fresh aligned dense tile).
; The same holds for the operand of a reshape / reinterpret_view (context DENSE): it reads the
; tile from its base as a dense tile of the result's shape, so a window stays a view only when it
; is dense (one row or the full width: ``Dense``, any offset — the result is no slice, so no lazy
; materialization follows) and aligned; otherwise it is copied first.
; (``DenseUse``: these contexts; the copy and keep rules state each as a constant, _dense_rules)
(relation DenseUse (String))
{_DENSE_USE}
{"".join(_dense_rules(*c) for c in DENSE_CONTEXTS)}
(rule ((= u (Use w ctx)) (= ctx {CALL}) (IdentityCopy w) (MemOf w "Vec") (= am (AddrMult w))
       (= (% am {ALIGN_BITS}) 0))
      ((union u (Keep w ctx))) :ruleset views :name "call-dense-aligned-view")
(relation Dense (Tile))
(rule ((= w (Win (Leaf s) r c 1 wd)) (UnitCols (Leaf s))) ((Dense w)) :ruleset legality :name "dense-single-row")
(rule ((= w (Win (Leaf s) r c h wd)) (= wd (Pitch (Leaf s))) (UnitCols (Leaf s)))
      ((Dense w)) :ruleset legality :name "dense-full-width")
(rule ((= u (Use w ctx)) (= ctx {DENSE}) (Dense w) (MemOf w "Vec") (= am (AddrMult w))
       (= (% am {ALIGN_BITS}) 0))
      ((union u (Keep w ctx))) :ruleset views :name "reshape-dense-aligned-view")
; ... and when nothing reads or writes the reshaped value as a whole, only windows of it (each
; judged at its own address), the reshape touches no byte: a dense window stays at any address
(rule ((= u (Use w ctx)) (= ctx {DENSE_PASS}) (Dense w) (MemOf w "Vec"))
      ((union u (Keep w ctx))) :ruleset views :name "reshape-dense-passed-view")
(rule ((= u (Use w ctx)) (DenseUse ctx) (= u (Keep w ctx)) (= w (Win b r c h wd)))
      ((set (ViewProven w) 1)) :ruleset proven :name "written-window-call-view-proven")
; a window the callee uses as a matmul left / right operand (CUBE_CALL): any but a Mat window
; passes as it is; a Mat one would be materialized Mat->Mat (no such data path), and no copy can
; reach the callee (CubeCallViolation, stated in LOAD)
(relation CubeCallViolation (i64))
(rule ((= u (Use w ctx)) (= ctx {CUBE_CALL}) (= w (Win b r c h wd)) (MemOf w m) (!= m "Mat"))
      ((union u (Keep w ctx))) :ruleset safe :name "keep-non-mat-cube-call-window")

; A window escaping (loop initializer, yield, same-layout view, write-back, call result) into a
; value that a col_expand / reshape reads and that is also written in place (egraph.encode
; ``escape_context``): a copy there would take the write, so the escape use must stay a view —
; which its context (CALL / DENSE) allows only when proven dense and aligned: no view is a
; violation (reject, never copy).
; ``UseKept`` is stated for every use that must stay a view (this one, and the stale, judged
; and call-written uses below and in rules.calls): 0 at load, 1 once the use's class holds a
; ``Keep``; read after saturation by the violation rule of each
(function UseKept (i64) i64 :merge (max old new))
(rule ((= 0 (UseKept k)) (= (NR k) (Keep w ctx))) ((set (UseKept k) 1))
      :ruleset proven :name "must-stay-view-proven")
(relation EscapeWriteViolation (i64))
(relation KeepOnlyUse (i64))
(rule ((KeepOnlyUse k) (= 0 (UseKept k))) ((EscapeWriteViolation k))
      :ruleset checks :name "written-escape-violation")
; A window escaping in an ordinary use (loop initializer, yield, same-layout view, a call whose
; result shares its argument) into a value that is read after the window's storage may be written
; (later in program order, or in a later trip of a loop around both; egraph.encode
; ``stale_read``): a copy there is a snapshot taken before the write, and the read would see the
; old elements.  The use must stay a view (#1789: proven aligned); no view is a violation
; (reject, never copy)
(relation StaleEscapeUse (i64))
(relation StaleEscapeViolation (i64))
(rule ((StaleEscapeUse k) (= 0 (UseKept k))) ((StaleEscapeViolation k))
      :ruleset checks :name "stale-escape-violation")
; A window handed on (a loop initializer, a yield, a same-layout view's operand) to a value that
; windows are taken of, each judged at its address from the storage as written (ir.storage),
; and that is also read or written as a whole (egraph.encode ``use``): a copy there would move
; what those windows name, so the use must stay a view, which its context allows only where
; proven (aligned, ...); otherwise a violation (reject, never copy)
(relation ViewOnlyUse (i64))
(relation EscapeViewViolation (i64))
(rule ((ViewOnlyUse k) (= 0 (UseKept k))) ((EscapeViewViolation k))
      :ruleset checks :name "judged-escape-violation")

(relation RawVecUse (i64 Tile))
(function RawVecProven (Tile) i64 :merge (max old new))
(relation RawVecViolation (i64))
; the aligned-vec-view proof of the slice's ordinary use marks it safe to stay a view
(rule ((RawVecUse n w) (= u (Use w {ORD})) (= u (Keep w {ORD})))
      ((set (RawVecProven w) 1)) :ruleset proven :name "raw-slice-vector-view-proven")
; #1789 for a valid_shape / drop_dims slice: a vector-op use with no aligned-view proof
(rule ((RawVecUse n w) (= 0 (RawVecProven w))) ((RawVecViolation n))
      :ruleset checks :name "raw-slice-vector-violation")
"""

#: the encoder's rows (each logical table ``RawColxRow``, ``WriteRow``, ... read from the shared
#: two-integer relation: ``sorts.row``), turned into facts by ``load``; ``UseRow`` is ``rules.sorts``'
LOAD = f"""
(rule (({row("RawColxRow")} n k)) ((RawColxUse n (NT k)) (set (ColxProven (NT k)) 0))
      :ruleset load :name "load-raw-col-expand-use")
(relation KeepOnlyRow (i64))
(rule ((KeepOnlyRow k)) ((KeepOnlyUse k) (set (UseKept k) 0)) :ruleset load :name "load-keep-only-use")
(relation StaleEscapeRow (i64))
(rule ((StaleEscapeRow k)) ((StaleEscapeUse k) (set (UseKept k) 0)) :ruleset load
      :name "load-stale-escape-use")
(relation ViewOnlyRow (i64))
(rule ((ViewOnlyRow k)) ((ViewOnlyUse k) (set (UseKept k) 0)) :ruleset load :name "load-view-only-use")
(relation WrittenUse (i64))
(rule (({row("WriteRow")} n t)) ((WrittenBy (NT t) n)) :ruleset load :name "load-write")
(rule (({row("ViewEdgeRow")} d s)) ((ViewOf (NT d) (NT s))) :ruleset load :name "load-view-edge")
(rule (({row("FramedEdgeRow")} d s)) ((FramedOf (NT d) (NT s))) :ruleset load :name "load-framed-edge")
(rule (({row("ArmEdgeRow")} n d s)) ((ArmEdgeOf n (NT d) (NT s))) :ruleset load :name "load-arm-edge")
(rule (({row("AsIsWriteRow")} n t)) ((WrittenAsIs (NT t) n)) :ruleset load :name "load-as-is-write")
(rule (({row("RawVecRow")} n k)) ((RawVecUse n (NT k)) (Use (NT k) {ORD}) (set (RawVecProven (NT k)) 0))
      :ruleset load :name "load-raw-vector-use")
(rule ((UseRow k t ctx) (WrittenBy (NT t) n)) ((WrittenUse k)) :ruleset written :name "written-use")
(rule (({row("ScalarWriteRow")} n t)) ((ScalarWrittenBy (NT t) n)) :ruleset load :name "load-scalar-write")
(rule ((UseRow k t ctx) (ScalarWrittenBy (NT t) n)) ((WrittenUse k)) :ruleset written
      :name "scalar-written-use")
(rule (({row("MayWriteRow")} n t)) ((MayWrittenBy (NT t) n)) :ruleset load :name "load-may-write")
(rule ((UseRow k t ctx) (MayWrittenBy (NT t) n)) ((WrittenUse k)) :ruleset written
      :name "may-written-use")
; (also a Mat window flowing through a loop carry, an if result or a same-layout view into a
; matmul operand: egraph.encode gives that escape use this context)
(rule ((UseRow k t {CUBE_CALL}) (MemOf (NT t) "Mat")) ((CubeCallViolation k))
      :ruleset checks :name "mat-window-to-matmul-callee-violation")
"""

# Acc reshapes: the registry declares which views lay their operand's bytes out afresh
# (``OpDef.relayouts``): a shape-changing ``tile.reshape`` (or ``reinterpret_view``) of an Acc
# (L0C) tile keeps the bytes
# (on the device an alias of the same buffer) but reads them as the 16x16 NZ blocks of the new
# shape, so every element read or written through it is another element of its source than the
# reshape names.  It is not a zero-copy view, and nothing can stand in for it: there is no
# Acc->Acc copy (and a MAD writing through it would write the copy), while moving the tile out of
# Acc changes the memory every later use sees — the author's decision, so the pass rejects.
# Its value may travel (aliases, views of it, write-back results, loop carries, if results) and
# is harmless until an op reads or writes it (or the function returns it): that use is the
# violation.  The driver (checks.relayout) states the facts of one function in their own small
# e-graph, only when the function has such a reshape; no rule here creates a view.
RELAYOUT = """
(relation RelayoutRow (i64 i64))
(relation CarryRow (i64 i64))
(relation OperandRow (i64 i64))
(relation Relayout (i64 i64))
(relation RelayoutViolation (i64 i64 i64))
(ruleset relayout)
; statement n defines value v as a view that lays its operand's bytes out afresh (registry)
(rule ((RelayoutRow n v)) ((Relayout v n)) :ruleset relayout :name "acc-reshape-relayout")
; an alias, a view of it, a write-back result, a loop carry or an if result holds the same bytes
; in the same new order
(rule ((Relayout s n) (CarryRow d s)) ((Relayout d n)) :ruleset relayout :name "relayout-carried")
; an op reading or writing it (or the function returning it) sees other elements than the ideal
; program: a violation naming the reshape n, the use m and the value v that reaches it
(rule ((Relayout v n) (OperandRow m v)) ((RelayoutViolation n m v))
      :ruleset relayout :name "acc-reshape-use-violation")
; A reshape / reinterpret_view keeping the shape of an Acc *window* reads it from its first element
; as a standalone NZ tile: the window's own elements only when its blocks are contiguous in the
; parent.  A matmul_acc into it is checked for exactly that (rules.windows), so after one the
; value is proven right; an op that only reads it (before, or with no accumulation at all) has
; no proof: a violation.  (The write-back result is not carried: the MAD's check covers it.)
(relation WindowViewRow (i64 i64))
(relation ReadCarryRow (i64 i64))
(relation ReadRow (i64 i64))
(relation WindowView (i64 i64))
(relation WindowViewViolation (i64 i64 i64))
(rule ((WindowViewRow n v)) ((WindowView v n)) :ruleset relayout :name "acc-window-view")
(rule ((WindowView s n) (ReadCarryRow d s)) ((WindowView d n))
      :ruleset relayout :name "acc-window-view-carried")
(rule ((WindowView v n) (ReadRow m v)) ((WindowViewViolation n m v))
      :ruleset relayout :name "acc-window-view-read-violation")
"""

#: The message of ``RelayoutViolation`` (fields filled by ``checks.relayout``: ``where``, ``fn``,
#: ``op`` / ``line`` (the reshape), ``src`` / ``src_shape``, ``view`` / ``shape``, ``operand`` /
#: ``through`` (the value reaching the use), ``use`` (the op and line, or the return)).
RELAYOUT_VIOLATION = (
    "acc-reshape-use-violation",
    "{where}: in function {fn!r}, {op} at line {line} reshapes Acc (L0C) tile {src!r} "
    "({src_shape}) into {view!r} ({shape}), and {operand!r}{through} {use}. An Acc tile is "
    "stored in 16x16 NZ blocks placed by its own shape; a reshape keeps the bytes (on the device "
    "an alias of the same buffer) but reads them as the NZ blocks of the new shape, so every "
    "element read or written through {view!r} is another element of {src!r} than the reshape "
    "names (silently). It is not a zero-copy view, and no copy can stand in for it (there is no "
    "Acc->Acc data path, and a matmul_acc would accumulate into the copy). Fix: accumulate into a "
    "tile of the target shape ({shape}) from the start, or reshape the result after the "
    "accumulation, once it has left Acc (tile.move(..., target_memory=pl.Mem.Vec), or store it "
    "and reshape the loaded tile); a reshape to the same shape is fine.")

#: The message of ``WindowViewViolation`` (the same fields).
WINDOW_VIEW_VIOLATION = (
    "acc-window-view-read-violation",
    "{where}: in function {fn!r}, {op} at line {line} views {src!r} ({src_shape}), a window of "
    "an Acc (L0C) tile, as {view!r} ({shape}), and {operand!r}{through} {use}. The view reads "
    "the window from its first element as a standalone tile in 16x16 NZ blocks, which are the "
    "window's own elements only when its blocks are contiguous in its parent, and nothing proves "
    "that here (a matmul_acc into the view would be checked for it). Fix: read the window "
    "itself rather than a view of it, or move it out of Acc first (tile.move(..., "
    "target_memory=pl.Mem.Vec)) and reshape there.")

#: What each violation relation above tells the kernel author, declared beside the rule that
#: derives it: ``relation -> (rule name, message)``.  ``egraph_tiles.egraph.checks`` fills the
#: fields: ``where`` (file:line:col of the slice statement), ``fn``, ``slice`` (the slice's name),
#: ``operand`` (the name the consumer uses), ``line`` (the slice's line), ``op`` / ``op_line``
#: (the consumer), ``through`` (the view or alias written / read through, or nothing), ``by`` (the
#: writing ops), ``align_bytes`` and ``align`` (the alignment fix for the slice's dtype).
VIOLATIONS = {
    "ColxViolation": (
        "raw-slice-col-expand-violation",
        "{where}: in function {fn!r}, slice {slice!r} has valid_shape / drop_dims and a dynamic "
        "offset or non-contiguous window, and feeds {op} at line {op_line}{through}{how}: its "
        "lazy materialization would corrupt its source. Slice without valid_shape / drop_dims, "
        "or copy it first with tile.extract(..., target_memory=pl.Mem.Vec)."),
    "WindowWriteViolation": (
        "written-window-violation",
        "{where}: in function {fn!r}, slice {slice!r} (tile.slice at line {line}) is written in "
        "place by {by}, and its window is not provably {align_bytes}-byte aligned (or, where a "
        "reshape or a program function reads it as a dense tile of its own, not provably dense: "
        "one row or the full width). A window written in place can be neither copied (the write would land in the copy and be lost) "
        "nor used as an unaligned view (the device can hang, #1789). {align}, or write into a "
        "separate tile and copy the result back explicitly."),
    "WindowUnclassifiedViolation": (
        "unclassified-operand-violation",
        "{where}: in function {fn!r}, slice {slice!r} (tile.slice at line {line}) feeds `{op}` at "
        "line {op_line}{through}, an op the registry cannot classify: cannot prove `{op}` does "
        "not write its operand, and the window is not provably {align_bytes}-byte aligned. A "
        "copy could swallow a write the op makes; a misaligned view could fault (#1789). "
        "{align}, or, if `{op}` only reads it, copy it first with tile.extract(..., "
        "target_memory=pl.Mem.Vec)."),
    "RawVecViolation": (
        "raw-slice-vector-violation",
        "{where}: in function {fn!r}, slice {slice!r} (tile.slice at line {line}) has "
        "valid_shape / drop_dims and feeds {op} at line {op_line}{through}. The pass does not "
        "copy a slice with valid_shape / drop_dims, so it reaches the op as a view, and its "
        "address is not provably {align_bytes}-byte aligned: the device can hang (#1789). "
        "{align}, or slice without valid_shape / drop_dims and set the valid shape with "
        "tile.set_validshape on an aligned copy."),
    "EscapeWriteViolation": (
        "written-escape-violation",
        "{where}: in function {fn!r}, slice {slice!r} (tile.slice at line {line}) flows into "
        "{value!r} ({route} at line {at}), which {op} at line {op_line} reads as a "
        "{need}, and which is written in place. The window can be neither copied there (the "
        "write would land in the copy and be lost) nor kept as it is: it is not provably "
        "{what} at a {align_bytes}-byte aligned address. {align}, make it {what}, or copy it "
        "explicitly (tile.extract(..., target_memory=pl.Mem.Vec)) and write the copy."),
    "StaleEscapeViolation": (
        "stale-escape-violation",
        "{where}: in function {fn!r}, slice {slice!r} (tile.slice at line {line}) flows into "
        "{value!r} ({route} at line {at}), which {op} at line {op_line} reads after the "
        "window's storage may be written. The window can be neither copied there (the copy "
        "would hold the elements from before the write) nor kept as it is: it is not provably "
        "at a {align_bytes}-byte aligned address. {align}, or copy it explicitly "
        "(tile.extract(..., target_memory=pl.Mem.Vec)) where the value is read."),
    "EscapeViewViolation": (
        "judged-escape-violation",
        "{where}: in function {fn!r}, slice {slice!r} (tile.slice at line {line}) flows into "
        "{value} ({route} at line {at}), and windows are taken of that ({win_where}) at "
        "addresses judged from where {slice!r} lies in its source. The window can be neither "
        "copied there (those windows would name other bytes, of the copy, and writes through "
        "them would be lost) nor kept as it is: {why}. {align}, or copy it explicitly "
        "(tile.extract(..., target_memory=pl.Mem.Vec)) and take the windows of the copy."),
    "CubeCallViolation": (
        "mat-window-to-matmul-callee-violation",
        "{where}: in function {fn!r}, Mat window {slice!r} (tile.slice at line {line}) {route}. "
        "A Mat window used as a matmul operand is materialized lazily with a Mat->Mat "
        "textract, a data path the hardware does not have, and {nocopy}. Fix: {fix}"),
}
