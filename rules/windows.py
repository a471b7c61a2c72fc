"""Acc accumulator windows: which window each value names, and which the MAD writes wrong.

Seed: "Acc accumulator windows" in ``shared/seeds/canonicalize_tile_slice.txt``.  L0C is NZ:
block (rb, cb) of an [M, N] tile sits at (cb * M/16 + rb) * fractal, so a window is contiguous
only when it spans the parent's full row extent or lies inside one 16-column block — and, as the
exhaustive NZ sweep shows (a tightening of the seed, for soundness), a full-row window that crosses
a block boundary only when its column offset is a multiple of 16.  The MAD
writes its destination compactly with no destination stride, so any other window used as an
accumulator is a silent miscompute, and there is no repair: it is rejected.

This module is egglog text run in a small e-graph of its own (``egraph_tiles.egraph.windows``
encodes one function's dataflow as the facts below — bulk-loaded as the ``LOAD`` tables, whose
``w_load`` rules rebuild the terms — and reads the violation facts back).

Vocabulary (every id is an ``i64``: variables by ``Var.uid``, statements / loops / ifs by their
program-order index; all of them are *structure*, encoded verbatim from the IR):

``WOff``          scalar offsets: ``(WK 16)``, ``(WSym uid)`` (a parameter / loop variable / scalar
                  SSA name — *unioned* with its definition), ``(WOpaque n)`` (anything else),
                  ``WAdd`` / ``WSub`` / ``WMul``.
``WExt``          an all-constant extent: ``(WExt "FP32" (WCons 16 (WCons 32 (WNil))))``.
``(w_tile v mem bits rank)``   v is a tile in memory ``mem`` ("Acc", "Vec", ..., "?" when unset).
``(w_dim v i n)``              dimension i of v is the constant n.
``(w_ext v e)``                v's dtype and every dimension are constants (extent e).
``(w_param v)``                v is a function parameter.
``(w_slice v src r c)``        ``v = tile.slice(src, shape, [r, c], ...)`` (canonical, valid_shape or
                               drop_dims: the window needs only the physical base and offset).
``(w_alias v w)``              ``v = w``.
``(w_call s op)`` / ``(w_arg s k v)`` / ``(w_result s v)``   any other registered or opaque call.
``(w_op_view op)``             registry: output inherits argument 0's memory and is in-place safe.
``(w_op_reuses op k)``         registry: output is written back into argument k (reuses_arg).
``(w_op_fresh op)``            registry: neither — the output is a value of its own.
``(w_iter L k ia init)`` / ``(w_yield L k y)`` / ``(w_loop_ret L k ret)``   for / while carries.
``(w_bounds L start stop step)``  a ``for`` loop's bounds (folded by the offset rules).
``(w_if I k then_y else_y ret)``  an if's k-th merged value.

Derived, in the order the rules below build them:

same extent          both ends of an edge provably have the same extent (dtype, rank, equal
                     constants): every edge rule joins ``(w_ext a e) (w_ext b e)`` on its own ends.
``(w_ident v src)``   an identity-preserving edge whose ends have the same extent.
``(w_root v)``        v provably names no window: its own storage is a parent.
``(w_names v P r c)`` v names the window of root parent P at offset (r, c).
``(w_dest s v)``      statement s writes back into v (a registry reuses_arg operand).
``(w_probe P R C c)`` an R x C accumulator window at constant column offset c of P is written.
``(w_noncontig P R C c)``  THE rules: that window is not contiguous in P's NZ layout — fewer
                          rows than P and crossing a 16-column block boundary, or every row of P
                          but starting mid-block (c not a multiple of 16) and crossing one.
``(w_mid_block P R C c)``   the second reason (the message explains it).
``(w_violation s v P R C c)``              s accumulates into such a window (v names it).
``(w_backedge_violation L s y P R C c)``   loop L's carry is an accumulator destination of s and
                                         its trailing yield names such a window (R x C being
                                         the iter-arg's extent), and L provably runs twice.

Anything unprovable derives nothing, so it stays silent: a value that is neither ``w_root`` nor
``w_names`` (an opaque call, a shape-changing reshape, an if whose arms differ) is never taken as
a parent, a symbolic extent has no ``w_ext``, a dynamic column offset never folds to ``WK``.
"""

SCHEMA = """
(datatype WOff
  (WN i64 :unextractable)
  (WK i64)
  (WSym i64)
  (WOpaque i64)
  (WAdd WOff WOff)
  (WSub WOff WOff)
  (WMul WOff WOff))
(datatype WDims (WD i64 :unextractable) (WNil) (WCons i64 WDims))
(datatype WExtent (WExt String WDims))

(relation w_tile (i64 String i64 i64))
(relation w_dim (i64 i64 i64))
(relation w_ext (i64 WExtent))
(relation w_param (i64))
(relation w_slice (i64 i64 WOff WOff))
(relation w_alias (i64 i64))
(relation w_call (i64 i64))
(relation w_arg (i64 i64 i64))
(relation w_result (i64 i64))
(relation w_op_view (i64))
(relation w_op_reuses (i64 i64))
(relation w_op_fresh (i64))
(relation w_iter (i64 i64 i64 i64))
(relation w_yield (i64 i64 i64))
(relation w_loop_ret (i64 i64 i64))
(relation w_bounds (i64 WOff WOff WOff))
(relation w_if (i64 i64 i64 i64 i64))

(relation w_dims2 (i64 i64 i64))
(relation w_acc_parent (i64 i64))
(relation w_ident (i64 i64))
(relation w_root (i64))
(relation w_names (i64 i64 WOff WOff))
(relation w_dest (i64 i64))
(relation w_flow (i64 i64))
(relation w_carry_dest (i64 i64))
(relation w_two_trips (i64))
(relation w_probe (i64 i64 i64 i64))
(relation w_noncontig (i64 i64 i64 i64))
(relation w_mid_block (i64 i64 i64 i64))
(relation w_violation (i64 i64 i64 i64 i64 i64))
(relation w_backedge_violation (i64 i64 i64 i64 i64 i64 i64))
"""

LOAD = """
(relation WKRow (i64 i64))
(relation WSymRow (i64 i64))
(relation WOpaqueRow (i64 i64))
(relation WAddRow (i64 i64 i64))
(relation WSubRow (i64 i64 i64))
(relation WMulRow (i64 i64 i64))
(relation WDefRow (i64 i64))
(relation WNilRow (i64))
(relation WConsRow (i64 i64 i64))
(relation WExtRow (i64 String i64))
(relation WSliceRow (i64 i64 i64 i64))
(relation WBoundsRow (i64 i64 i64 i64))
(ruleset w_load)
; bulk loading (``egraph_tiles.egraph.schedule.load_tables``): each row names a term by a node id
; (``WN`` / ``WD``); these rules rebuild the terms the vocabulary above describes.  Structure only.
(rule ((WKRow n k)) ((union (WN n) (WK k))) :ruleset w_load :name "w-load-constant")
(rule ((WSymRow n u)) ((union (WN n) (WSym u))) :ruleset w_load :name "w-load-symbol")
(rule ((WOpaqueRow n k)) ((union (WN n) (WOpaque k))) :ruleset w_load :name "w-load-opaque")
(rule ((WAddRow n a b)) ((union (WN n) (WAdd (WN a) (WN b)))) :ruleset w_load :name "w-load-add")
(rule ((WSubRow n a b)) ((union (WN n) (WSub (WN a) (WN b)))) :ruleset w_load :name "w-load-sub")
(rule ((WMulRow n a b)) ((union (WN n) (WMul (WN a) (WN b)))) :ruleset w_load :name "w-load-mul")
; a scalar SSA definition is unioned with what it names
(rule ((WDefRow u n)) ((union (WSym u) (WN n))) :ruleset w_load :name "w-load-ssa-definition")
(rule ((WNilRow n)) ((union (WD n) (WNil))) :ruleset w_load :name "w-load-dims-nil")
(rule ((WConsRow n d t)) ((union (WD n) (WCons d (WD t)))) :ruleset w_load :name "w-load-dims-cons")
(rule ((WExtRow v dt n)) ((w_ext v (WExt dt (WD n)))) :ruleset w_load :name "w-load-extent")
(rule ((WSliceRow v src r c)) ((w_slice v src (WN r) (WN c))) :ruleset w_load :name "w-load-slice")
(rule ((WBoundsRow L a b st)) ((w_bounds L (WN a) (WN b) (WN st))) :ruleset w_load :name "w-load-bounds")
"""

RULES = """
(ruleset windows)

; ---- offsets: constant folding, so chained slices accumulate a constant column offset
; (seed: "chained slices are peeled, offsets accumulated"; scalar SSA definitions are unioned)
(rewrite (WAdd (WK a) (WK b)) (WK (+ a b)) :ruleset windows :name "w-fold-add")
(rewrite (WSub (WK a) (WK b)) (WK (- a b)) :ruleset windows :name "w-fold-sub")
(rewrite (WMul (WK a) (WK b)) (WK (* a b)) :ruleset windows :name "w-fold-mul")
(rewrite (WAdd x (WK 0)) x :ruleset windows :name "w-add-zero-r")
(rewrite (WAdd (WK 0) x) x :ruleset windows :name "w-add-zero-l")

; ---- extents (seed: "an edge is recorded only when both ends provably describe the same window
; extent — same rank, same dtype, and every dimension a compile-time constant of the same value")
; (joined inline below — ``(w_ext a e) (w_ext b e)`` — so only the pairs an edge relates are
; compared, never every pair of values with one extent)
(rule ((w_ext v (WExt dt (WCons r (WCons c (WNil))))))
      ((w_dims2 v r c)) :ruleset windows :name "w-dims2")
; the parent the verdict is read from: a 2-D Acc tile of 4-byte elements with constant rows
; (seed: "the 16-column-block arithmetic assumes a 4-byte accumulator element"; the parent's
; column count may be symbolic — a window crossing a block boundary has >= 2 block columns)
(rule ((w_tile p "Acc" 32 2) (w_dim p 0 pr))
      ((w_acc_parent p pr)) :ruleset windows :name "w-acc-parent")

; ---- identity-preserving edges, each only between equal extents
; seed edge "v = w (plain SSA alias)"
(rule ((w_alias v w) (w_ext v e) (w_ext w e)) ((w_ident v w)) :ruleset windows :name "w-edge-alias")
; seed edge "the op's output lands in a source operand's storage": a registry read —
; OutputMemoryInheritsInput() && IsInplaceSafe() (reshape, set_validshape, ...) ...
(rule ((w_result s v) (w_call s op) (w_op_view op) (w_arg s 0 src) (w_ext v e) (w_ext src e))
      ((w_ident v src)) :ruleset windows :name "w-edge-view")
; ... or set_output_reuses_input (a chained matmul_acc)
(rule ((w_result s v) (w_call s op) (w_op_reuses op k) (w_arg s k src) (w_ext v e) (w_ext src e))
      ((w_ident v src)) :ruleset windows :name "w-edge-reuses")
; seed edge "Loop IterArg: its initializer's window (ForStmt / WhileStmt)"
(rule ((w_iter L k ia init) (w_ext ia e) (w_ext init e))
      ((w_ident ia init)) :ruleset windows :name "w-edge-iter-arg")

; ---- roots: values that provably name no window (their storage is a parent)
; seed: "a window arriving as an InCore function parameter carries no window information"
(rule ((w_param v)) ((w_root v)) :ruleset windows :name "w-root-param")
; a registered op that neither views nor writes back produces a value of its own
(rule ((w_result s v) (w_call s op) (w_op_fresh op)) ((w_root v)) :ruleset windows :name "w-root-fresh")
(rule ((w_ident v src) (w_root src)) ((w_root v)) :ruleset windows :name "w-root-ident")
; a loop result is the initializer (zero trips) or the yield: a root only when both are
(rule ((w_loop_ret L k ret) (w_iter L k ia init) (w_yield L k y)
       (w_root init) (w_root y) (w_ext ret e) (w_ext init e) (w_ext y e))
      ((w_root ret)) :ruleset windows :name "w-root-loop-ret")
(rule ((w_if I k t el ret) (w_root t) (w_root el) (w_ext ret x) (w_ext t x) (w_ext el x))
      ((w_root ret)) :ruleset windows :name "w-root-if")

; ---- window resolution
; seed "v = tile.slice(src, shape, offset): the window itself"
(rule ((w_slice v src r c) (w_root src))
      ((w_names v src r c)) :ruleset windows :name "w-names-slice")
; seed "chained slices are peeled, offsets accumulated"
(rule ((w_slice v src r c) (w_names src p r0 c0))
      ((w_names v p (WAdd r0 r) (WAdd c0 c))) :ruleset windows :name "w-names-peel")
; alias / registry view / registry write-back / loop iter-arg, between equal extents
(rule ((w_ident v src) (w_names src p r c))
      ((w_names v p r c)) :ruleset windows :name "w-names-ident")
; seed "ForStmt / WhileStmt return_vars_[i]: the window the trailing pl.yield_ names — only when
; that is the same window the initializer names"
(rule ((w_loop_ret L k ret) (w_iter L k ia init) (w_yield L k y)
       (w_names init p r c) (w_names y p r c) (w_ext ret e) (w_ext init e) (w_ext y e))
      ((w_names ret p r c)) :ruleset windows :name "w-names-loop-ret")
; seed "IfStmt::return_vars_[i]: the window both arms yield, when they provably yield the same one
; (same parent Var, equal offsets)"
(rule ((w_if I k t el ret) (w_names t p r c) (w_names el p r c)
       (w_ext ret x) (w_ext t x) (w_ext el x))
      ((w_names ret p r c)) :ruleset windows :name "w-names-if")

; ---- accumulator destinations, from the registry's reuses_arg (never an op list)
(rule ((w_call s op) (w_op_reuses op k) (w_arg s k v))
      ((w_dest s v)) :ruleset windows :name "w-dest")
; seed: "it fires only for carries the body actually uses as an accumulator destination" —
; the iter-arg itself or a value identical to it
(rule ((w_iter L k ia init)) ((w_flow ia ia)) :ruleset windows :name "w-flow-self")
(rule ((w_flow ia u) (w_ident v u)) ((w_flow ia v)) :ruleset windows :name "w-flow-ident")
(rule ((w_flow ia v) (w_dest s v)) ((w_carry_dest ia s)) :ruleset windows :name "w-carry-dest")
; seed: "only when the loop provably runs more than once — constant start / stop / step with
; start + step < stop" (step > 0; a while has no bounds, so it never counts)
(rule ((w_bounds L (WK a) (WK b) (WK st)) (> st 0) (< (+ a st) b))
      ((w_two_trips L)) :ruleset windows :name "w-two-trips")

; ---- the windows that are written
; seed: "a matmul accumulator operand that is a non-contiguous Acc window" — at a constant
; column offset (a dynamic column offset stays silent)
(rule ((w_dest s v) (w_names v p r (WK c)) (w_dims2 v rows cols))
      ((w_probe p rows cols c)) :ruleset windows :name "w-probe-dest")
; seed "the loop back edge is checked, not recorded": the yielded window, with the destination
; extent taken from the IterArg
(rule ((w_two_trips L) (w_iter L k ia init) (w_carry_dest ia s) (w_yield L k y)
       (w_names y p r (WK c)) (w_dims2 ia rows cols))
      ((w_probe p rows cols c)) :ruleset windows :name "w-probe-back-edge")

; ---- THE contiguity rule (seed: "A window is therefore contiguous only when it spans the
; parent's full row extent, or lies inside a single 16-column block"): fewer rows than the
; parent, and the first and last column fall in different 16-column blocks
(rule ((w_probe p rows cols c) (w_acc_parent p pr) (< rows pr) (>= c 0) (> cols 0)
       (!= (/ c 16) (/ (+ c (- cols 1)) 16)))
      ((w_noncontig p rows cols c)) :ruleset windows :name "w-noncontiguous")

; THE tightening for full-row windows (soundness, found by the exhaustive NZ sweep in
; tests/windows/test_windows_nz_layout.py): the seed's "spans the parent's full row extent" is
; contiguous only from a column offset that is a multiple of 16.  From mid-block the compact NZ
; write puts, in every 16 columns of the window, the last (c mod 16) into the next row of the
; block layout — e.g. [16,16] at [0,8] of [16,64].  Inside one block ("lies inside a single
; 16-column block") stays accepted.  ``w_mid_block`` records the reason for the message.
(rule ((w_probe p rows cols c) (w_acc_parent p rows) (> c 0) (> cols 0) (!= (% c 16) 0)
       (!= (/ c 16) (/ (+ c (- cols 1)) 16)))
      ((w_noncontig p rows cols c) (w_mid_block p rows cols c))
      :ruleset windows :name "w-noncontiguous-mid-block")

; ---- violations (the driver turns each into a ValueError; c, the constant column offset,
; lets it say why when the window starts mid-block)
(rule ((w_dest s v) (w_names v p r (WK c)) (w_dims2 v rows cols) (w_noncontig p rows cols c))
      ((w_violation s v p rows cols c)) :ruleset windows :name "w-violation")
(rule ((w_two_trips L) (w_iter L k ia init) (w_carry_dest ia s) (w_yield L k y)
       (w_names y p r (WK c)) (w_dims2 ia rows cols) (w_noncontig p rows cols c))
      ((w_backedge_violation L s y p rows cols c)) :ruleset windows :name "w-backedge-violation")
"""

SCHEDULE = "(run-schedule (saturate (run windows)))"
