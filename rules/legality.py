"""Zero-copy proofs: the only rules that add a view (``Keep`` of a window) as an alternative.

A missing fact must mean "copy", so every rule here matches a *positive* proof.
"""

from egraph_tiles.ir.ops import Role
from egraph_tiles.ir.target import ALIGN_BITS

ORD, COLX = Role.ORD.egg, Role.COLX.egg

RULES = f"""
(ruleset legality)
; the proofs that read another proof run after it, each stratum once (``schedule.FACTS``): ``views``
; reads ``IdentityCopy`` / ``Dense`` (derived by ``legality``), ``proven`` reads a proven ``Keep``
(ruleset views)
(ruleset proven)
; #1789: "Vec tile.slice feeding an ordinary call, inherited address provably 32-byte aligned:
; untouched; keeps the zero-copy subview" — bit address a multiple of {ALIGN_BITS}
(rule ((= u (Use w ctx)) (= ctx {ORD}) (= w (Win b r c h wd)) (MemOf w "Vec") (= am (AddrMult w))
       (= (% am {ALIGN_BITS}) 0))
      ((union u (Keep w ctx))) :ruleset legality :name "aligned-vec-view")
; #1640 / #2010: "Static-offset contiguous Vec tile.slice (single row, or full source width)
; feeding a tile.col_expand_* op: untouched (the lazy textract is a safe identity copy)".
; ``(IdentityCopy w)``: the lazy materialization of window ``w`` is an identity copy — constant
; offset AND contiguous window.  Matched on the peeled window over a non-window base, so an
; accumulated dynamic offset of a chained slice is never mistaken for a constant one.  The
; one notion serves both the view below and the valid_shape / drop_dims check (rules.checks).
; Both need the base's columns to be consecutive elements (``UnitCols``: a row of a
; ``transpose_view`` is a column of its source, and a base of unknown storage proves nothing).
(relation IdentityCopy (Tile))
(rule ((= w (Win (Leaf s) (Lit r) (Lit c) 1 wd)) (UnitCols (Leaf s)))
      ((IdentityCopy w)) :ruleset legality :name "identity-copy-single-row")
(rule ((= w (Win (Leaf s) (Lit r) (Lit c) h wd)) (= wd (Pitch (Leaf s))) (UnitCols (Leaf s)))
      ((IdentityCopy w)) :ruleset legality :name "identity-copy-full-width")
(rule ((= u (Use w ctx)) (= ctx {COLX}) (IdentityCopy w) (MemOf w "Vec"))
      ((union u (Keep w ctx))) :ruleset views :name "col-expand-identity-view")
"""
