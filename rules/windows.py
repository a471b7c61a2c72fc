"""Acc accumulator windows: which windows each value may name, and which the MAD writes wrong.

Seed: "Acc accumulator windows" in ``shared/seeds/canonicalize_tile_slice.txt``.  L0C is NZ:
block (rb, cb) of an [M, N] tile sits at (cb * M/16 + rb) * fractal, so a window is contiguous
only when it spans the parent's full row extent or lies inside one 16-column block — and, as the
exhaustive NZ sweep shows (a tightening of the seed, for soundness), a full-row window that crosses
a block boundary only when its column offset is a multiple of 16.  The MAD writes its destination
compactly with no destination stride, so any other window used as an accumulator is a silent
miscompute, and there is no repair: it is rejected.

Beyond the seed, every accumulator window must be *proven* contiguous, on every path:

* **may-name** — a value may name several windows: an ``if`` whose arms yield different windows,
  a loop whose yield names another window than its initializer (the back edge, unless the loop
  provably runs at most once; the zero-trip exit, unless it provably runs at least once), and any
  nesting of these.  ``w_may`` holds every window a value may name, with the first branch point
  on the path to it; each one reaching a write-back operand is checked.
* **positive proofs** — a checked window is accepted only by a contiguity proof: a constant
  column offset (``w_contig``), or a dynamic one whose known multiple keeps the window inside one
  block or starts every full-row window on a block boundary (``w_dyn_contig``).  A check left
  without a proof after saturation is a violation — a missing fact means "reject".
* **any element width, batch parents** — the NZ layout is 16 x 16 *elements* whatever the element
  width, so the rule holds for every dtype; a 3-D (batch) Acc tile stores each page as an NZ tile
  of its own, so a 2-D window of one page (``tile.slice(acc3, [1, R, C], [b, r, c], drop_dims=[0])``)
  is judged against the page's rows.

This module is egglog text (``PROGRAM``; ``egraph_tiles.checks.windows`` encodes one function's
dataflow as the facts below — bulk-loaded as the index tables of ``rules.sorts`` and the ``LOAD``
tables, whose ``load`` rules rebuild the terms — and reads the violation facts back).  It runs in
the tile pass's e-graph, before the function's own facts arrive, as ``TEXT``: the same program
with the names it shares with the pass's (``Idx``, its tables, ``load``, ``offsets``,
``multiples``) renamed ``w_...``, so the two programs' facts never meet, and the row tables
of one column signature read from one tagged relation (``TAGGED``: one ``input`` each).

Vocabulary (every id is an ``i64``: variables by ``Var.uid``, statements / loops / ifs by their
program-order index; all of them are *structure*, encoded verbatim from the IR):

``Idx``           scalar offsets, the tile pass's integer sort (``rules.sorts``): ``(Lit 16)``,
                  ``(Sym "u12")`` (a parameter / loop variable / scalar SSA name, by ``Var.uid`` —
                  *unioned* with its definition), ``(Sym "o3")`` (anything else, opaque),
                  ``Add`` / ``Sub`` / ``Mul``; loaded through the ``rules.sorts`` index tables,
                  folded by ``rules.offsets`` and given known multiples (``Mult``, a loop
                  variable's through ``LoopVar``) by ``rules.multiples`` — the same rulesets as
                  the tile pass, composed into this program (``PROGRAM``).
extent ids       an all-constant extent (dtype and every dimension) is an ``i64``, one per
                  distinct extent of the function, so equal ids are equal extents.
``(w_tile v mem bits rank)``   v is a tile in memory ``mem`` ("Acc", "Vec", ..., "?" when unset).
``(w_dim v i n)``              dimension i of v is the constant n.
``(w_ext v e)``                v's dtype and every dimension are constants (extent e).
``(w_extent2 e rows cols)``    extent e is two-dimensional, rows x cols.
``(w_param v)``                v is a function parameter.
``(w_slice v src r c)``        ``v = tile.slice(src, shape, [r, c], ...)`` (canonical, valid_shape or
                               drop_dims: the window needs only the physical base and offset).
``(w_slice3 v src b r c)``     ``v = tile.slice(src, [1, R, C], [b, r, c], drop_dims=[0])``: a 2-D
                               window of page b of a 3-D tile.
``(w_alias v w)``              ``v = w``.
``(w_arg s k v)`` / ``(w_result s v)``   any other registered or opaque call.
``(w_view s)`` / ``(w_reuses s k)`` / ``(w_fresh s)``   the registry's memory effect of s's op:
                               a view — the output inherits argument 0's memory and is in-place
                               safe; reuses — the output is written back into argument k
                               (reuses_arg; one row per such argument); fresh — neither, the
                               output is a value of its own.  A program function accumulating
                               into its parameter k reuses k (as if inlined); an opaque op has
                               no row.
``(w_iter L k ia init)`` / ``(w_yield L k y)`` / ``(w_loop_ret L k ret)``   for / while carries.
``(w_bounds L start stop step)``  a ``for`` loop's bounds (folded by the offset rules).
``(w_if I k then_y else_y ret)``  an if's k-th merged value.

Derived, in the order the rules below build them:

``(w_ident v src)``   an identity-preserving edge whose ends have the same extent.
``(w_root v)``        v provably names no window: its own storage is a parent.
``(w_merge v a b)``   v is a loop result (a: its initializer, b: its yield) or an if result (a, b:
                      the arms), all three of one extent.
``(w_names v P r c)`` v names the window of root parent P at offset (r, c) on every path.
``(w_ge1 L)`` / ``(w_le1 L)``  1 when loop L provably runs at least / at most once (else 0).
``(w_may v P r c via)``  v may name that window; ``via`` is -1 when it always does, else the first
                      branch point on the path: ``4*I`` / ``4*I+1`` (then / else arm of if I),
                      ``4*L+2`` (the value loop L yields: its result, or its carry after the back
                      edge), ``4*L+3`` (loop L's result when it runs no trip: its initializer).
``(w_zero_trip_arm L v src)`` / ``(w_back_arm L v src)``   the loop edges between equal extents
                      whose branch depends on the loop's trip count, not yet read (below);
``(w_branch v src b)``  v may name what src names, b being the branch point (``via`` code).
``(w_arm b cond arm)``  branch point b takes arm ``arm`` of condition ``cond``: two ifs testing
                        the same condition of the function's scalar parameters share it (a loop's
                        branch points have one each).
``(w_check s v P R C c via)``  an R x C window at column offset c of P is written by s.
``(w_probe P R C k)``          the same at a constant column offset k.
``(w_contig P R C k)``         THE positive rules: that window is contiguous in P's NZ layout.
``(w_dyn_contig P R C m)``     every such window at a column offset that is a multiple of m is.
``(w_ok P R C c)``             1 once the check is proven contiguous (merge max; 0 at the check).
``(w_noncontig P R C k)`` / ``(w_mid_block P R C k)``  why a constant window is not (the message).
``(w_violation s v P R C c via)``   a check with no proof (stratum ``w_verdict``); read back as
                                    ``w_viol_k`` (constant offset k) / ``w_viol_m`` (multiple m).

Termination: ``w_names`` is acyclic (loop results need the same window on both edges), and
``w_may`` only follows a slice with its offsets when the slice is strictly smaller than its source
(a same-extent slice of an in-bounds program has offset 0 and keeps the source's windows), so no
cycle through a loop's back edge can grow an offset.  Values with no fact — an opaque call, a
shape-changing reshape — name no window and are not checked here.
"""


from egraph_tiles.egraph.sexp import Sexp, parse_sexps, show

from . import multiples, offsets, sorts

#: the facts the encoder states (rows of ``input``: see :data:`TAGGED`)
INPUTS = """
(relation w_tile (i64 String i64 i64))
(relation w_dim (i64 i64 i64))
(relation w_ext (i64 i64))
(relation w_extent2 (i64 i64 i64))
(relation w_param (i64))
(relation w_slice (i64 i64 Idx Idx))
(relation w_slice3 (i64 i64 Idx Idx Idx))
(relation w_alias (i64 i64))
(relation w_view (i64))
(relation w_reuses (i64 i64))
(relation w_fresh (i64))
(relation w_arg (i64 i64 i64))
(relation w_result (i64 i64))
(relation w_iter (i64 i64 i64 i64))
(relation w_yield (i64 i64 i64))
(relation w_loop_ret (i64 i64 i64))
(relation w_bounds (i64 Idx Idx Idx))
(relation w_if (i64 i64 i64 i64 i64))
"""

#: the facts the rules derive
SCHEMA = """
(relation w_dims2 (i64 i64 i64))
(relation w_acc_parent (i64 i64))
(relation w_acc_cols (i64 i64))
(relation w_ident (i64 i64))
(relation w_root (i64))
(relation w_names (i64 i64 Idx Idx))
(relation w_merge (i64 i64 i64))
(function w_ge1 (i64) i64 :merge (max old new))
(function w_le1 (i64) i64 :merge (max old new))
(relation w_may (i64 i64 Idx Idx i64))
(relation w_zero_trip_arm (i64 i64 i64))
(relation w_back_arm (i64 i64 i64))
(relation w_branch (i64 i64 i64))
(relation w_arm (i64 i64 i64))
(relation w_check (i64 i64 i64 i64 i64 Idx i64))
(function w_ok (i64 i64 i64 Idx) i64 :merge (max old new))
(relation w_probe (i64 i64 i64 i64))
(relation w_contig (i64 i64 i64 i64))
(relation w_dprobe (i64 i64 i64 i64))
(relation w_dyn_contig (i64 i64 i64 i64))
(relation w_noncontig (i64 i64 i64 i64))
(relation w_mid_block (i64 i64 i64 i64))
(relation w_violation (i64 i64 i64 i64 i64 Idx i64))
(relation w_viol_k (i64 i64 i64 i64 i64 i64 i64))
(relation w_viol_m (i64 i64 i64 i64 i64 i64 i64))
"""

LOAD = """
(relation WSliceRow (i64 i64 i64 i64))
(relation WSlice3Row (i64 i64 i64 i64 i64))
(relation WBoundsRow (i64 i64 i64 i64))
; bulk loading (``egraph_tiles.egraph.schedule.load_tables``): each row names an offset by a
; node id (``NI``: the index tables of ``rules.sorts``); these rules, in the same ``load`` ruleset
; as the index ones, rebuild the terms the vocabulary above describes.  Structure only.
(rule ((WSliceRow v src r c)) ((w_slice v src (NI r) (NI c))) :ruleset load :name "w-load-slice")
(rule ((WSlice3Row v src b r c)) ((w_slice3 v src (NI b) (NI r) (NI c)))
      :ruleset load :name "w-load-page-slice")
(rule ((WBoundsRow L a b st)) ((w_bounds L (NI a) (NI b) (NI st))) :ruleset load :name "w-load-bounds")
"""

RULES = """
(ruleset windows)
(ruleset w_may_rules)
(ruleset w_verdict)

; ---- offsets are ``Idx`` terms: constant folding (so chained slices accumulate a constant column
; offset; seed: "chained slices are peeled, offsets accumulated") is ``rules.offsets``, and their
; known multiples (seed: "Dynamic offsets are also kept zero-copy when scalar SSA arithmetic proves
; that their known multiple ..."; a dynamic accumulator offset is accepted only when its
; known multiple proves the window cannot cross a block) are ``rules.multiples`` (``Mult``; a
; ``pl.range`` variable's through the ``LoopVar`` facts the encoder states) — both composed into
; this program by ``SCHEDULE``, not written again here.

; ---- extents (seed: "an edge is recorded only when both ends provably describe the same window
; extent — same rank, same dtype, and every dimension a compile-time constant of the same value")
; (joined inline below — ``(w_ext a e) (w_ext b e)`` — so only the pairs an edge relates are
; compared, never every pair of values with one extent)
(rule ((w_ext v e) (w_extent2 e r c))
      ((w_dims2 v r c)) :ruleset windows :name "w-dims2")
; the parent the verdict is read from: an Acc tile with constant rows.  The NZ blocks are 16 x 16
; *elements* for every element width, so any dtype qualifies (the seed only treated
; 4-byte accumulators).  A 2-D parent's rows are dimension 0; a 3-D (batch) parent keeps each
; page as an NZ tile of its own, so a window of one page is judged against the page's rows
; (dimension 1): either way the rows are dimension rank - 2 and the columns dimension rank - 1.
; The column count may be symbolic — only the may-name peel needs it.
(rule ((w_tile p "Acc" bits rank) (>= rank 2) (<= rank 3) (w_dim p (- rank 2) pr))
      ((w_acc_parent p pr)) :ruleset windows :name "w-acc-parent")
(rule ((w_tile p "Acc" bits rank) (>= rank 2) (<= rank 3) (w_dim p (- rank 1) pc))
      ((w_acc_cols p pc)) :ruleset windows :name "w-acc-cols")

; ---- identity-preserving edges, each only between equal extents
; seed edge "v = w (plain SSA alias)"
(rule ((w_alias v w) (w_ext v e) (w_ext w e)) ((w_ident v w)) :ruleset windows :name "w-edge-alias")
; seed edge "the op's output lands in a source operand's storage": a registry read —
; OutputMemoryInheritsInput() && IsInplaceSafe() (reshape, set_validshape, ...) ...
(rule ((w_result s v) (w_view s) (w_arg s 0 src) (w_ext v e) (w_ext src e))
      ((w_ident v src)) :ruleset windows :name "w-edge-view")
; ... or set_output_reuses_input (a chained matmul_acc)
(rule ((w_result s v) (w_reuses s k) (w_arg s k src) (w_ext v e) (w_ext src e))
      ((w_ident v src)) :ruleset windows :name "w-edge-reuses")
; seed edge "Loop IterArg: its initializer's window (ForStmt / WhileStmt)"
(rule ((w_iter L k ia init) (w_ext ia e) (w_ext init e))
      ((w_ident ia init)) :ruleset windows :name "w-edge-iter-arg")

; ---- roots: values that provably name no window (their storage is a parent)
; seed: "a window arriving as an InCore function parameter carries no window information"
(rule ((w_param v)) ((w_root v)) :ruleset windows :name "w-root-param")
; a registered op that neither views nor writes back produces a value of its own
(rule ((w_result s v) (w_fresh s)) ((w_root v)) :ruleset windows :name "w-root-fresh")
(rule ((w_ident v src) (w_root src)) ((w_root v)) :ruleset windows :name "w-root-ident")
; the merges of a loop result (its initializer, zero trips, and its yield) and of an if result
; (both arms), only between equal extents — joined once per merge, so the rules below follow a
; merge by its values instead of joining every value of one extent
(rule ((w_loop_ret L k ret) (w_iter L k ia init) (w_yield L k y)
       (w_ext ret e) (w_ext init e) (w_ext y e))
      ((w_merge ret init y)) :ruleset windows :name "w-merge-loop-ret")
(rule ((w_if I k t el ret) (w_ext ret x) (w_ext t x) (w_ext el x))
      ((w_merge ret t el)) :ruleset windows :name "w-merge-if")
; a loop result is the initializer (zero trips) or the yield, an if result either arm: a root
; only when both are
(rule ((w_merge ret a b) (w_root a) (w_root b)) ((w_root ret)) :ruleset windows :name "w-root-merge")

; ---- window resolution (must-name: the window on every path)
; seed "v = tile.slice(src, shape, offset): the window itself"
(rule ((w_slice v src r c) (w_root src))
      ((w_names v src r c)) :ruleset windows :name "w-names-slice")
; a 2-D window of one page of a 3-D (batch) tile: the page is an NZ tile of its own, so only the
; in-page offset matters
(rule ((w_slice3 v src b r c) (w_root src) (w_dims2 v h w))
      ((w_names v src r c)) :ruleset windows :name "w-names-page-slice")
; seed "chained slices are peeled, offsets accumulated"
(rule ((w_slice v src r c) (w_names src p r0 c0))
      ((w_names v p (Add r0 r) (Add c0 c))) :ruleset windows :name "w-names-peel")
; alias / registry view / registry write-back / loop iter-arg, between equal extents
(rule ((w_ident v src) (w_names src p r c))
      ((w_names v p r c)) :ruleset windows :name "w-names-ident")
; seed "ForStmt / WhileStmt return_vars_[i]: the window the trailing pl.yield_ names — only when
; that is the same window the initializer names" and "IfStmt::return_vars_[i]: the window both
; arms yield, when they provably yield the same one (same parent Var, equal offsets)"
(rule ((w_merge ret a b) (w_names a p r c) (w_names b p r c))
      ((w_names ret p r c)) :ruleset windows :name "w-names-merge")

; ---- trip counts: 0 for every carrying loop, 1 once proven (constant bounds, step > 0); a
; ``while`` has no bounds and proves nothing
(rule ((w_iter L k ia init)) ((set (w_ge1 L) 0) (set (w_le1 L) 0)) :ruleset windows :name "w-trips-unknown")
(rule ((w_bounds L (Lit a) (Lit b) (Lit st)) (> st 0) (< a b))
      ((set (w_ge1 L) 1)) :ruleset windows :name "w-runs-at-least-once")
(rule ((w_bounds L (Lit a) (Lit b) (Lit st)) (> st 0) (>= (+ a st) b))
      ((set (w_le1 L) 1)) :ruleset windows :name "w-runs-at-most-once")

; ---- may-name: every window a value may name, with the first branch point on the
; path.  Only windows of an Acc parent are followed (the only ones judged).  Read after the
; ``windows`` stratum: ``(= 0 (w_ge1 L))`` means "no proof that L runs at least once".
(rule ((w_names v p r c) (w_acc_parent p pr)) ((w_may v p r c -1))
      :ruleset w_may_rules :name "w-may-must")
(rule ((w_ident v src) (w_may src p r c via)) ((w_may v p r c via))
      :ruleset w_may_rules :name "w-may-ident")
; a slice strictly smaller than its source: offsets accumulate (the peel, on every path)
(rule ((w_slice v src r c) (w_may src p r0 c0 via) (w_dims2 v h w) (w_dims2 src hs ws) (< h hs))
      ((w_may v p (Add r0 r) (Add c0 c) via)) :ruleset w_may_rules :name "w-may-peel-rows")
(rule ((w_slice v src r c) (w_may src p r0 c0 via) (w_dims2 v h w) (w_dims2 src hs ws) (< w ws))
      ((w_may v p (Add r0 r) (Add c0 c) via)) :ruleset w_may_rules :name "w-may-peel-cols")
; a slice as large as its source is, in bounds, the source itself (offset 0)
(rule ((w_slice v src r c) (w_may src p r0 c0 via) (w_ext v e) (w_ext src e))
      ((w_may v p r0 c0 via)) :ruleset w_may_rules :name "w-may-peel-same-extent")
; a branch (``w_branch v src via``): v may name what src names, the branch point being via —
; an if result either arm's value (``4*I`` / ``4*I+1``), a loop result the value its body yields
; (``4*L+2``, any trip count, including one) and, unless the loop provably runs at least once,
; its initializer (``4*L+3``), and a carry, from the second trip on, the value the body yielded
; (``4*L+2``) — unless the loop provably runs at most once (seed: "a single-trip loop never takes
; its back edge").  Each edge only between equal extents, the extents joined once per edge in the
; ``windows`` stratum, so the may-name rules follow an edge by its source value instead of joining
; every value of one extent each round (that join made the check superlinear).  The
; branches that hold whatever the trip count are stated there (only the may-name rules read
; ``w_branch``, after that stratum); the two that depend on it are kept as ``w_zero_trip_arm`` /
; ``w_back_arm`` and become branches here, after the ``windows`` stratum fixed the trip counts.
(rule ((w_if I k t el ret) (w_ext ret x) (w_ext t x)) ((w_branch ret t (* I 4)))
      :ruleset windows :name "w-arm-if-then")
(rule ((w_if I k t el ret) (w_ext ret x) (w_ext el x)) ((w_branch ret el (+ (* I 4) 1)))
      :ruleset windows :name "w-arm-if-else")
(rule ((w_loop_ret L k ret) (w_yield L k y) (w_ext ret e) (w_ext y e))
      ((w_branch ret y (+ (* L 4) 2))) :ruleset windows :name "w-arm-loop-ret-yield")
(rule ((w_loop_ret L k ret) (w_iter L k ia init) (w_ext ret e) (w_ext init e))
      ((w_zero_trip_arm L ret init)) :ruleset windows :name "w-arm-loop-ret-zero-trips")
(rule ((w_iter L k ia init) (w_yield L k y) (w_ext ia e) (w_ext y e)) ((w_back_arm L ia y))
      :ruleset windows :name "w-arm-back-edge")
(rule ((w_zero_trip_arm L ret init) (= 0 (w_ge1 L))) ((w_branch ret init (+ (* L 4) 3)))
      :ruleset w_may_rules :name "w-branch-zero-trips")
(rule ((w_back_arm L ia y) (= 0 (w_le1 L))) ((w_branch ia y (+ (* L 4) 2)))
      :ruleset w_may_rules :name "w-branch-back-edge")
; the windows src names on every path reach v through the branch; the ones src itself may name
; through an earlier branch point keep that (first) one — unless the two branch points take
; opposite arms of one condition (``if flag > 0`` then, later ``if flag > 0`` else: no run takes
; both, so no window reaches v that way)
(rule ((w_branch v src b) (w_may src p r c -1)) ((w_may v p r c b))
      :ruleset w_may_rules :name "w-may-branch")
(rule ((w_branch v src b) (w_may src p r c via) (!= via -1) (w_arm b cb ab) (w_arm via cv av)
       (!= cb cv))
      ((w_may v p r c via)) :ruleset w_may_rules :name "w-may-branch-nested")
(rule ((w_branch v src b) (w_may src p r c via) (!= via -1) (w_arm b cb ab) (w_arm via cb ab))
      ((w_may v p r c via)) :ruleset w_may_rules :name "w-may-branch-nested-same-arm")
; (the offsets the peel accumulates are folded by the ``windows`` stratum, which the schedule
; re-saturates between rounds of these rules)

; ---- accumulator destinations, from the registry's reuses_arg (never an op list): every window
; the operand k a statement writes back into may name is checked, with the operand's own extent
(rule ((w_reuses s k) (w_arg s k v) (w_may v p r c via) (w_dims2 v rows cols) (w_acc_parent p pr))
      ((w_check s v p rows cols c via) (set (w_ok p rows cols c) 0))
      :ruleset w_may_rules :name "w-check-dest")
(rule ((w_check s v p rows cols (Lit k) via)) ((w_probe p rows cols k))
      :ruleset w_may_rules :name "w-probe-constant")
(rule ((w_check s v p rows cols c via) (= m (Mult c))) ((w_dprobe p rows cols m))
      :ruleset w_may_rules :name "w-probe-multiple")

; ---- THE contiguity rules, positive (seed: "A window is therefore contiguous only when it spans
; the parent's full row extent, or lies inside a single 16-column block"), each proved with z3
; against the NZ address function (egraph_tiles.rulecheck).
; inside one 16-column block: the first and the last column fall in the same block
(rule ((w_probe p rows cols c) (>= c 0) (> cols 0) (= (/ c 16) (/ (+ c (- cols 1)) 16)))
      ((w_contig p rows cols c)) :ruleset w_may_rules :name "w-contiguous-one-block")
; every row of the parent, from a block boundary (the tightening found by the exhaustive NZ sweep
; in tests/checks/test_windows_nz_layout.py: from mid-block the compact write puts, in every 16
; columns of the window, the last (c mod 16) into the next row of the block layout)
(rule ((w_probe p rows cols c) (w_acc_parent p rows) (>= c 0) (> cols 0) (= (% c 16) 0))
      ((w_contig p rows cols c)) :ruleset w_may_rules :name "w-contiguous-full-rows")
; a dynamic column offset that is a multiple of m: c mod 16 is a multiple of min(m, 16), so a
; window at most min(m, 16) columns wide never crosses a block ...
(rule ((w_dprobe p rows cols m) (> cols 0) (<= cols m) (<= cols 16))
      ((w_dyn_contig p rows cols m)) :ruleset w_may_rules :name "w-dyn-contiguous-one-block")
; ... and a full-row window whose offset is a multiple of 16 starts on a block boundary
(rule ((w_dprobe p rows cols m) (w_acc_parent p rows) (> cols 0) (>= m 16))
      ((w_dyn_contig p rows cols m)) :ruleset w_may_rules :name "w-dyn-contiguous-full-rows")
; the slice is in bounds, so its offset is at most hi = (parent columns - cols): with a multiple
; m < 16 the largest residue mod 16 it can reach is min(16 - m, the largest multiple of m <= hi)
; (an interval fact from the parent's bounds) — a window that fits after it never crosses ...
(rule ((w_dprobe p rows cols m) (w_acc_cols p pc) (> cols 0) (< m 16) (>= (- pc cols) 0)
       (<= (+ (min (- 16 m) (* (/ (- pc cols) m) m)) cols) 16))
      ((w_dyn_contig p rows cols m)) :ruleset w_may_rules :name "w-dyn-contiguous-in-bounds")
; ... and a full-row window whose only in-bounds offset is 0 starts on a block boundary
(rule ((w_dprobe p rows cols m) (w_acc_parent p rows) (w_acc_cols p pc) (> cols 0)
       (>= (- pc cols) 0) (< (- pc cols) m))
      ((w_dyn_contig p rows cols m)) :ruleset w_may_rules :name "w-dyn-contiguous-only-offset-0")
(rule ((w_check s v p rows cols (Lit k) via) (w_contig p rows cols k))
      ((set (w_ok p rows cols (Lit k)) 1)) :ruleset w_may_rules :name "w-ok-constant")
(rule ((w_check s v p rows cols c via) (= m (Mult c)) (w_dyn_contig p rows cols m))
      ((set (w_ok p rows cols c) 1)) :ruleset w_may_rules :name "w-ok-multiple")

; ---- why a constant window is not contiguous (the message), each proved with z3 by a witness
; fewer rows than the parent, and the first and last column fall in different 16-column blocks
(rule ((w_probe p rows cols c) (w_acc_parent p pr) (< rows pr) (>= c 0) (> cols 0)
       (!= (/ c 16) (/ (+ c (- cols 1)) 16)))
      ((w_noncontig p rows cols c)) :ruleset w_may_rules :name "w-noncontiguous")
; every row, but from mid-block and crossing a block boundary
(rule ((w_probe p rows cols c) (w_acc_parent p rows) (> c 0) (> cols 0) (!= (% c 16) 0)
       (!= (/ c 16) (/ (+ c (- cols 1)) 16)))
      ((w_noncontig p rows cols c) (w_mid_block p rows cols c))
      :ruleset w_may_rules :name "w-noncontiguous-mid-block")

; ---- violations (stratum ``w_verdict``, after saturation: only then does ``w_ok = 0`` mean "no
; proof exists"); the driver turns each into a ValueError naming the path
(rule ((w_check s v p rows cols c via) (= 0 (w_ok p rows cols c)))
      ((w_violation s v p rows cols c via)) :ruleset w_verdict :name "w-violation")
(rule ((w_violation s v p rows cols (Lit k) via))
      ((w_viol_k s v p rows cols k via)) :ruleset w_verdict :name "w-violation-constant-offset")
(rule ((w_violation s v p rows cols c via) (= m (Mult c)))
      ((w_viol_m s v p rows cols m via)) :ruleset w_verdict :name "w-violation-dynamic-offset")
"""

#: The whole program: the shared ``Idx`` sort with its loading tables, the offsets and
#: known-multiple rulesets of the tile pass, then this module's vocabulary and rules.
PROGRAM = "\n".join([sorts.IDX_SCHEMA, offsets.RULES, multiples.RULES, sorts.IDX_LOAD, INPUTS,
                     SCHEMA, LOAD, RULES,
                     "(unstable-combined-ruleset w_facts windows offsets multiples)"])

#: ``windows`` with the offsets / known-multiple rulesets (``w_facts``) to a fixpoint between
#: rounds of the may-name rules, then the verdict stratum.
SCHEDULE = ("(run-schedule (saturate (seq (saturate (run w_facts)) (run w_may_rules))) "
            "(saturate (run w_verdict)))")

#: the forms that declare a name (their second element)
_DECLARING = frozenset({"datatype", "sort", "function", "relation", "constructor", "ruleset",
                        "unstable-combined-ruleset"})


def _declared(text: str) -> set[str]:
    """What ``text`` declares: sorts, constructors (a datatype's variants included), functions,
    relations, rulesets."""
    names = set()
    for form in parse_sexps(text):
        if isinstance(form, list) and form and form[0] in _DECLARING:
            names.add(form[1])
            if form[0] == "datatype":
                names.update(variant[0] for variant in form[2:])
    return names


#: the names ``PROGRAM`` shares with the tile pass's program (the ``Idx`` sort, its loading
#: tables and ``load`` ruleset, ``offsets``, ``multiples``, ``Mult``, ``LoopVar``) and the name
#: each has in ``TEXT``
RENAMED = {n: "w_" + n for n in _declared("\n".join([sorts.IDX_SCHEMA, offsets.RULES,
                                                      multiples.RULES, sorts.IDX_LOAD]))}


def _renamed(form: Sexp) -> Sexp:
    """``form`` with every symbol of :data:`RENAMED` renamed (string literals are not symbols)."""
    if isinstance(form, list):
        return [_renamed(x) for x in form]
    return RENAMED.get(form, form) if isinstance(form, str) else form


def _own_names(text: str) -> str:
    """``text`` with every name of :data:`RENAMED` renamed (comments dropped)."""
    return "\n".join(show(_renamed(form)) for form in parse_sexps(text))


#: The check's row tables — every table of primitive columns the encoder fills: :data:`INPUTS`,
#: the slice / bounds rows of :data:`LOAD` and the renamed index tables — that share their
#: column types are one relation in ``TEXT`` (``w_in_ii``, ``w_in_iii``, ...: ``i`` an integer
#: column), each row led by its logical table's tag; a rule reading logical table ``T`` reads
#: ``(w_in_ii tag a b)`` (:func:`_tagged`).  One ``input`` per relation instead of one per table
#: (~30 µs each: 5 instead of 13 at 1,000 statements), and 15 tables fewer for every push / pop of
#: the prepared e-graph to copy.  Rows are not padded to one wider relation: at 50,000
#: statements the wider rows cost more to format and read than the inputs saved.
def _relations(text: str) -> dict[str, str]:
    """The relations ``text`` declares, with their column types (``"i64 String"``)."""
    return {form[1]: " ".join(map(str, form[2])) for form in parse_sexps(text)
            if isinstance(form, list) and len(form) == 3 and form[0] == "relation"}


def _shared(text: str, prefix: str) -> dict[str, tuple[str, int]]:
    """The relations of primitive columns declared in ``text`` grouped by their column types
    (``sorts.shared_relations``; not the terms the ``load`` rules rebuild)."""
    return sorts.shared_relations({name: cols for name, cols in _relations(text).items()
                                   if set(cols.split()) <= {"i64", "String"}}, prefix)


#: the row tables read from a shared relation, by name: ``(relation, tag)`` (``schedule.load_tables``
#: leads each row with the tag)
TAGGED = _shared(_own_names(sorts.IDX_LOAD) + INPUTS + LOAD, "w_in_")
#: The relations the ``windows`` stratum derives from the input relations alone: every rule
#: writing one reads only relations of :data:`INPUTS` (``tests/checks`` checks it), so all of
#: them are derived in the check's first run and none changes after it.  Those of one column
#: signature share a relation too (``w_first_ii``, ``w_first_iii``): a rule reading one runs again
#: only when that relation changes, which is in that same first run (so sharing adds at most
#: one run of such a rule, right after it) — 6 tables fewer for push / pop to copy.
FIRST_RUN = ("w_dims2", "w_acc_parent", "w_acc_cols", "w_ident", "w_merge", "w_zero_trip_arm",
             "w_back_arm")
_FIRST = _shared("".join(f"(relation {name} ({cols}))" for name, cols in _relations(SCHEMA).items()
                         if name in FIRST_RUN), "w_first_")


def _tagged(text: str) -> str:
    """``text`` (comments dropped) with every table of :data:`TAGGED` and ``_FIRST`` read and
    written as its tagged relation, which it declares instead."""
    tagged = {**TAGGED, **_FIRST}
    forms = parse_sexps(text)
    tables = {name: cols for name, cols in _relations(text).items() if name in tagged}

    def retag(form: Sexp) -> Sexp:
        if not isinstance(form, list):
            return form
        form = [retag(x) for x in form]
        if form and isinstance(form[0], str) and form[0] in tagged:
            relation, tag = tagged[form[0]]
            return [relation, tag, *form[1:]]
        return form

    kept = [form for form in forms if not (isinstance(form, list) and len(form) == 3
                                           and form[0] == "relation" and form[1] in tables)]
    return sorts.shared_declarations(tables, tagged) + "\n".join(show(retag(f)) for f in kept)


#: ``PROGRAM`` as the e-graph holds it: run in the tile pass's e-graph (``checks.windows``),
#: its sorts, tables and rulesets are copies of their own of the shared ones (``w_Idx``,
#: ``w_Lit``, ``w_Mult``, ``w_offsets``, ... — the same rules, renamed), so no fact of the
#: check is a fact of the pass: a literal both state is two terms, no rule of the pass reads
#: a fact of the check, and counting the pass's e-graph can leave the check's tables out
#: (:data:`TABLES`).  Its row tables are read from their tagged relations (:data:`TAGGED`).
TEXT = _tagged(_own_names(PROGRAM))
#: the ruleset turning the check's rows into terms (the renamed ``load``)
LOAD_RULESET = RENAMED["load"]
#: every table (and sort and ruleset) ``TEXT`` declares
TABLES = frozenset(_declared(TEXT))
