"""Slice structure: peeling chains, folding into ``tile.extract``, matmul operands, safe forms.

Seed (canonicalize_tile_slice): Mat-resident slices are folded into their ``tile.extract`` /
matmul consumers; a Mat slice with any other consumer stays (a valid ``pto.subview``); chained
slices are peeled with accumulated offsets.  The ``safe`` ruleset gives every use the realization
that is always correct; zero-copy alternatives come only from ``rules.legality``.

The ``copyview`` ruleset (run only in the driver's second round) adds, for a use of a slice of a
slice whose parent was copied at its definition, the form that reads the parent's copy.
"""

from egraph_tiles.ir.ops import Role

from ..ir.target import CAP

ORD, COLX, LEFT, RIGHT, PASS = (r.egg for r in (Role.ORD, Role.COLX, Role.LEFT, Role.RIGHT,
                                                 Role.PASS))
#: the bytes a copy of an ``h`` x ``wd`` window of ``bits``-bit elements moves: the extractor's
#: cost of a ``Copy`` (the same formula as ``egraph_tiles.ir.target.copy_bytes``)
COPY_BYTES = "(/ (* (* h wd) bits) 8)"

#: each operand context the pass canonicalizes: the memory of the windows it handles there, the
#: memory of the safe copy it gives them, and the names of that copy rule and of the rule that
#: keeps a window in any other memory as it is (``_safe_rules``).
CONTEXTS = (
    # context, window memory, copy memory, copy rule, keep rule
    # a matmul-family left / right operand that is a Mat window: "replaced by a fresh
    # tile.extract(base, off_row, off_col, slice_shape, target_memory=Left|Right)"
    (LEFT, "Mat", "Left", "matmul-left-operand-extract", "keep-non-mat-left-window"),
    (RIGHT, "Mat", "Right", "matmul-right-operand-extract", "keep-non-mat-right-window"),
    # a Vec window feeding an ordinary operand (or escaping through alias / loop init / yield) or
    # a col_expand operand: the safe form is a fresh tile.extract(..., target_memory=Vec) (#1640,
    # #2010, #1789); the view comes back only through a proof in rules.legality
    (ORD, "Vec", "Vec", "vec-operand-extract", "keep-non-vec-window"),
    (COLX, "Vec", "Vec", "col-expand-operand-extract", "keep-non-vec-col-expand-window"),
)


def _safe_rules(ctx: str, mem: str, to: str, copy: str, keep: str) -> str:
    """The safe form of a window operand in context ``ctx``: a ``mem`` window gets a fresh copy
    into ``to``; a window in any other memory is outside the pass's scope and left as it is (a
    Mat (or Left/Right/Acc) window with a consumer that is not canonicalized: "A Mat slice with a
    consumer that is not canonicalized (e.g. tile.move) is left intact"; a non-Mat matmul
    operand)."""
    return f"""
(rule ((= u (Use w ctx)) (= ctx {ctx}) (= w (Win b r c h wd)) (MemOf w "{mem}") (= bits (Bits w)))
      ((union u (Copy w "{to}" ctx)) (set (cost_table_Copy w "{to}" ctx) {COPY_BYTES}))
      :ruleset safe :name "{copy}")
(rule ((= u (Use w ctx)) (= ctx {ctx}) (= w (Win b r c h wd)) (MemOf w m) (!= m "{mem}"))
      ((union u (Keep w ctx))) :ruleset safe :name "{keep}")"""


RULES = f"""
(ruleset slices)
; "Chained Mat tile.slice (slice of a slice): peeled; offsets accumulated" (any depth: the rule
; re-fires on the peeled term)
(rewrite (Win (Win b r0 c0 h0 w0) r1 c1 h w) (Win b (Add r0 r1) (Add c0 c1) h w)
  :ruleset slices :name "peel-chained-slice")
; "tile.extract(slice, ir, ic, shape) -> tile.extract(base, ir + off_row, ic + off_col, shape)":
; kwargs are kept by the decoder; the folded form has no window node, so it is one statement
; cheaper and the slice becomes dead
(rewrite (Ext (Win b r0 c0 h w) i j) (Ext b (Add i r0) (Add j c0))
  :ruleset slices :name "fold-slice-into-extract")

(ruleset safe)
{"".join(_safe_rules(*c) for c in CONTEXTS)}
; a window handed on (a loop initializer, a yield, a same-layout view's operand) to a value only
; windows are taken of: nothing accesses it there, and those windows are judged from its storage
; as written (ir.storage), so it stays as it is — a copy would move what they name
(rule ((= u (Use w ctx)) (= ctx {PASS}) (= w (Win b r c h wd))) ((union u (Keep w ctx)))
      :ruleset safe :name "keep-passed-window")
; a non-window operand is left as it is
(rule ((= u (Use (Leaf s) ctx))) ((union u (Keep (Leaf s) ctx))) :ruleset safe :name "keep-non-window")

(ruleset copyview)
(relation CopyViewGateRow (i64 i64 String))
; A slice ``c = slice(p, [h, w], [r1, c1])`` of a Vec window ``p`` that was copied
; at its definition (``p_ext``, a fresh aligned buffer whose pitch is p's column count) may read
; the copy instead of the source: ``(Win (CopyBuf p) r1 c1 h w)``.  "p was copied and nothing
; writes the source between p's definition and this use" is not a positive fact the rules can
; derive, so the driver states it as a gate row after round 1.  The form is added to the *use*,
; never to c's window class: alignment facts are per e-class, and the copy's proof must not leak
; onto the source view.  The safe copy and the legality proof of a view then apply as for any
; window.  A child identical to its parent is excluded (the parent's own uses would read the copy).
(rule ((CopyViewGateRow kp ck ctx) (= p (NT kp)) (= child (NT ck)) (!= child p)
       (= child (Win p r1 c1 h w)) (= p (Win b r0 c0 hp wp)) (MemOf p "Vec") (= bits (Bits p))
       (= u (Use child ctx)))
      ((union u (Use (Win (CopyBuf kp) r1 c1 h w) ctx))
       (MemOf (CopyBuf kp) "Vec") (FreshAlloc (CopyBuf kp)) (set (Bits (CopyBuf kp)) bits)
       (set (Pitch (CopyBuf kp)) wp) (set (PitchMult (CopyBuf kp)) (min (& wp (- 0 wp)) {CAP})))
      :ruleset copyview :name "view-of-parent-copy")
"""
