"""Windows a program function hands back: the checks of a window passed to one of the program's
own functions whose storage the call's result shares (``egraph.calls``, the call summaries).

A window passed to a program function may be copied for the call (its use context asks for a
dense, aligned tile, ``rules.checks`` ``call-operand-extract``).  When the callee writes the tile,
or returns it or a part of it and the caller then writes through the result (or reads the result
after writing the window), a copy passed in its place would take the write, or miss it: the use
must stay the view itself.  The encoder states each such use as ``(CallKeepRow k)``; ``UseKept``
(``rules.checks``: 0 at load, 1 once the use's class holds a ``Keep``) is read after saturation,
and no view is a ``CallWriteViolation`` (reject, never copy).  The fact is per use, not per
window: another use of the same window kept as a view (a plain alias of it, say) proves nothing
about the copy made for the call.

A window passed to a function that does nothing with the tile but hand one constant window of
it back (``egraph.calls.passed_window``; use context HAND_BACK) needs nothing of its own address:
the callee judged no address of the tile, and the one address that matters is the window handed
back, which the caller then reads in vector ops or writes in place.  The encoder states that
window at its real address, ``(PassWin w n need)`` with ``n = (Win w r c h wd)`` (the callee's
offsets over the argument: ``peel-chained-slice`` adds them to the argument's, at the argument's
own pitch) and ``need`` what the callers' uses of the result need of it: an aligned address
(vector reads, writes), an identity copy (col_expand) or both; the argument stays a view when
``n`` is proven so, as a window used that way in the caller would be.
A dense, aligned argument stays a view as for CALL; otherwise it is copied for the call
(``rules.checks`` ``hand-back-operand-extract``), which a write through the result then rejects.
The encoder states at most one such window per argument window: a second call handing back
another window of it gets the CALL context.

A value that is no window but names part of one (a ``transpose_view`` of a window, a window a
function handed back, ...) passed where the function reads its tile as one of its own (CALL /
HAND_BACK) cannot be copied by the pass (it is no slice), so it must be the tile the function
assumes: the encoder states it as a full-extent window of its own leaf, whose facts are its
storage's (``ir.storage``: pitch, buffer start, row-major or not), ``(CallValueUse k n need)``
(and, for HAND_BACK, the window handed back, ``(CallValueHandedBack k p need)``).  ``CallValueProven``
(0 at load, 1 once one of them fits: an identity copy, at an aligned address unless the function
only col_expands it; a handed-back window over a row-major leaf fitting its callers' uses) is
read after saturation: no proof is a ``CallValueViolation`` (reject:
the callee would address other elements, or unaligned ones).  A value reached from a window only
through loop carries, ``if`` merges, same-layout views, write-backs or reshapes is not stated:
the window's use where it escapes into it already needs it dense and aligned, or copies it there
(``egraph.encode`` ``escape_context``).
"""

from egraph_tiles.ir.ops import Role
from egraph_tiles.ir.target import ALIGN_BITS

HAND_BACK = Role.HAND_BACK.egg

RULES = f"""
(relation PassWin (Tile Tile String))
; what the callers' uses need of the window handed back where it lies: an aligned address
; (vector reads, writes), an identity copy (col_expand), or both
(relation HandedBack (Tile String))
(relation HandedBackFits (Tile String))
(rule ((HandedBack n need) (MemOf n "Vec") (= am (AddrMult n)) (= (% am {ALIGN_BITS}) 0))
      ((HandedBackFits n "align")) :ruleset legality :name "handed-back-window-aligned")
(rule ((HandedBack n need) (IdentityCopy n)) ((HandedBackFits n "identity"))
      :ruleset legality :name "handed-back-window-identity")
(rule ((HandedBackFits n "align") (HandedBackFits n "identity")) ((HandedBackFits n "both"))
      :ruleset legality :name "handed-back-window-both")
; the window the callee hands back fits its callers' uses where it lies: the argument stays a view
(rule ((= u (Use w ctx)) (= ctx {HAND_BACK}) (PassWin w n need) (HandedBackFits n need))
      ((union u (Keep w ctx))) :ruleset views :name "hand-back-returned-window-view")
; a dense argument at an aligned address is exactly the tile the callee assumed
(rule ((= u (Use w ctx)) (= ctx {HAND_BACK}) (IdentityCopy w) (MemOf w "Vec") (= am (AddrMult w))
       (= (% am {ALIGN_BITS}) 0))
      ((union u (Keep w ctx))) :ruleset views :name "hand-back-dense-aligned-view")
(relation CallValueUse (i64 Tile String))
(relation CallValueHandedBack (i64 Tile String))
(function CallValueProven (i64) i64 :merge (max old new))
(relation CallValueViolation (i64))
; the value is the dense tile the function assumes (at an aligned address, unless all the
; function does is col_expand it: "identity")
(rule ((CallValueUse k n need) (HandedBackFits n need))
      ((set (CallValueProven k) 1)) :ruleset proven :name "call-value-dense-aligned")
; the function only hands a window of it back, and that window fits its callers' uses where it
; lies (over a row-major value: its rows are the value's rows)
(rule ((CallValueHandedBack k p need) (= p (Win (Leaf s) r c h wd)) (UnitCols (Leaf s))
       (HandedBackFits p need))
      ((set (CallValueProven k) 1)) :ruleset proven :name "call-value-handed-back-fits")
(rule ((CallValueUse k n need) (MemOf n m) (!= m "Vec")) ((set (CallValueProven k) 1))
      :ruleset proven :name "call-value-not-vec")
(rule ((CallValueUse k n need) (= 0 (CallValueProven k))) ((CallValueViolation k))
      :ruleset checks :name "call-value-violation")
(relation CallWriteUse (i64))
(relation CallWriteViolation (i64))
; a window whose call result (or callee) writes it, not kept as a view at the call: a violation
(rule ((CallWriteUse k) (= 0 (UseKept k))) ((CallWriteViolation k))
      :ruleset checks :name "call-written-argument-violation")
"""

LOAD = """
(relation CallValueRow (i64 i64 String))
(relation CallHandedRow (i64 i64 String))
(rule ((CallValueRow k n need))
      ((CallValueUse k (NT n) need) (HandedBack (NT n) need) (set (CallValueProven k) 0))
      :ruleset load :name "load-call-value")
(rule ((CallHandedRow k p need)) ((CallValueHandedBack k (NT p) need) (HandedBack (NT p) need))
      :ruleset load :name "load-call-value-handed-back")
(relation PassWinRow (i64 i64 String))
(rule ((PassWinRow w n need)) ((PassWin (NT w) (NT n) need) (HandedBack (NT n) need)) :ruleset load :name "load-hand-back-window")
(relation CallKeepRow (i64))
(rule ((CallKeepRow k)) ((CallWriteUse k) (set (UseKept k) 0)) :ruleset load :name "load-call-keep-use")
"""

#: What the violation tells the kernel author (fields as ``rules.checks.VIOLATIONS``, with ``op``
#: / ``op_line`` the call, ``how`` the write that reaches the window through it, ``need`` what
#: the callee's use of the tile asks of a view and ``fix`` the matching advice).
VIOLATIONS = {
    "CallValueViolation": (
        "call-value-violation",
        "{where}: in function {fn!r}, {operand!r} is passed to {op} at line {op_line}, which "
        "reads its tile as one of its own (windows of it at its own pitch, a reshape, an opaque "
        "op: a dense, row-major tile at a {align_bytes}-byte aligned address){handed}, but "
        "{operand!r} names part of another tile ({route}) and is not provably laid out so: the "
        "function would address other elements than the program names, or unaligned ones. The "
        "pass cannot copy it there (it is no slice). Pass a copy made with tile.extract(..., "
        "target_memory=pl.Mem.Vec) of the window it comes from, or the window itself."),
    "CallWriteViolation": (
        "call-written-argument-violation",
        "{where}: in function {fn!r}, slice {slice!r} (tile.slice at line {line}) is passed to "
        "{op} at line {op_line}{through}, and {how}. The window can stay a view there only "
        "when {need}, which is not provable; a copy passed instead would take the write and "
        "lose it. {align}{fix}, or pass an explicit copy "
        "(tile.extract(..., target_memory=pl.Mem.Vec)) and write the copy back yourself."),
}
