"""Loop-aware placement: dynamic copy costs and hoisting loop-invariant copies.

A copy inside a loop runs on every iteration.  The encoder (``cost.loops``) states, from the
memory effects of ``ir.effects``, where each use sits and what one execution there weighs:

* ``(InLoop u L)`` — use ``u`` sits inside loop ``L`` (loops are named by their program point),
  and a copy made before ``L`` would read nothing the program does not read itself (stated only
  when the window's offsets are constants, or every path through ``L``'s first iteration reaches
  the use: ``L`` and every loop between it and the use provably run, and no ``if`` around the
  use and no ``break`` / ``continue`` / ``return`` before it);
* ``(UseWeight u k)`` / ``(LoopWeight L k)`` — how many times the copy runs at its usual place /
  just before ``L``, in thousandths (the product of the trip counts of the enclosing loops, a
  default weight for a symbolic bound, a default probability per ``if`` arm).  A copy run once
  per call (1000) of a window of 8 elements or more gets no ``UseWeight``: the cost the rule
  below would give it is its static bytes (``rules.slices``), which it has already;
* ``(Stable t L)`` — tile ``t``'s storage is defined before ``L`` and **nothing in ``L`` writes
  it**, directly or through any alias, view, write-back or loop carry sharing it;
* ``(Inv (Sym s) L)`` — scalar ``s`` is defined before ``L`` (so not ``L``'s loop variable, nor a
  value defined inside ``L``); sums, differences, products, quotients and remainders of
  invariants are invariant;
* ``(HoistRoom w L)`` — a copy of window ``w`` fits in its memory space for the whole loop nest
  of ``L`` next to the nest's peak live bytes (the tiles live across it and the body's own
  temporaries) and the copies admitted before it (the per-memory-space capacities).

The rules below then price every copy by bytes × executions, derive loop invariance of offsets,
and offer ``(CopyOut w mem ctx L)`` — the same copy made once just before ``L`` — for every
invariant window.  Nested loops give one alternative per enclosing loop; the extractor picks the
cheapest and the decoder places it.  A missing fact only means "no hoist": the in-place copy is
always there.
"""

from .slices import COPY_BYTES
from .sorts import row

#: weights are stated in thousandths of an execution (integers)
MILLI = 1000

#: ``CopyOut`` costs its bytes × the executions of the point before the loop (``cost_table``)
SCHEMA = """
(constructor CopyOut (Tile String String i64) Real)
(function cost_table_CopyOut (Tile String String i64) i64 :merge (min old new))
(function UseWeight (Real) i64 :merge (max old new))
(function LoopWeight (i64) i64 :merge (max old new))
(relation InLoop (Real i64))
(relation Stable (Tile i64))
(relation Inv (Idx i64))
(relation HoistRoom (Tile i64))
"""

#: the encoder's rows, turned into facts by the engine's ``load`` ruleset (each logical table
#: ``UseLoopRow``, ... is read from the shared two-integer relation: ``sorts.row``)
LOAD = f"""
(rule (({row("UseLoopRow")} u l)) ((InLoop (NR u) l)) :ruleset load :name "load-use-in-loop")
(rule (({row("UseWeightRow")} u k)) ((set (UseWeight (NR u)) k)) :ruleset load :name "load-use-weight")
(rule (({row("LoopWeightRow")} l k)) ((set (LoopWeight l) k)) :ruleset load :name "load-loop-weight")
(rule (({row("StableRow")} t l)) ((Stable (NT t) l)) :ruleset load :name "load-stable-tile")
(rule (({row("SymStableRow")} s l)) ((Inv (NI s) l)) :ruleset load :name "load-invariant-symbol")
(rule (({row("HoistRoomRow")} t l)) ((HoistRoom (NT t) l)) :ruleset load :name "load-hoist-room")
"""

RULES = f"""
(ruleset hoist)
; demand flows down an offset, invariance up: each its own stratum, saturated before the hoist
; and cost rules run once over the final facts (``schedule.FACTS``)
(ruleset demand)
(ruleset invariance)
; invariance is derived on demand: only for the offsets (and their sub-terms) of a copy that
; sits in L — stating it for every index term and every loop would grow as their product
(relation NeedInv (Idx i64))
(rule ((= u (Copy w mem ctx)) (InLoop u l) (= w (Win b r c h wd)))
      ((NeedInv r l) (NeedInv c l)) :ruleset demand :name "invariance-demand-offsets")
(rule ((NeedInv e l) (= e (Add a b))) ((NeedInv a l) (NeedInv b l))
      :ruleset demand :name "invariance-demand-add")
(rule ((NeedInv e l) (= e (Sub a b))) ((NeedInv a l) (NeedInv b l))
      :ruleset demand :name "invariance-demand-sub")
(rule ((NeedInv e l) (= e (Mul a b))) ((NeedInv a l) (NeedInv b l))
      :ruleset demand :name "invariance-demand-mul")
(rule ((NeedInv e l) (= e (FloorDiv a b))) ((NeedInv a l) (NeedInv b l))
      :ruleset demand :name "invariance-demand-floordiv")
(rule ((NeedInv e l) (= e (Mod a b))) ((NeedInv a l) (NeedInv b l))
      :ruleset demand :name "invariance-demand-mod")
; an index is loop-invariant in L when it is a literal, a symbol defined before L, or a sum,
; difference, product, quotient or remainder of invariant indices (scalar SSA definitions are unioned with what they
; name, so ``k = 8`` inside the loop is the literal 8)
(rule ((NeedInv e l) (= e (Lit c))) ((Inv e l)) :ruleset invariance :name "invariant-literal")
(rule ((= e (Add a b)) (Inv a l) (Inv b l)) ((Inv e l)) :ruleset invariance :name "invariant-add")
(rule ((= e (Sub a b)) (Inv a l) (Inv b l)) ((Inv e l)) :ruleset invariance :name "invariant-sub")
(rule ((= e (Mul a b)) (Inv a l) (Inv b l)) ((Inv e l)) :ruleset invariance :name "invariant-mul")
(rule ((= e (FloorDiv a b)) (Inv a l) (Inv b l)) ((Inv e l)) :ruleset invariance
      :name "invariant-floordiv")
(rule ((= e (Mod a b)) (Inv a l) (Inv b l)) ((Inv e l)) :ruleset invariance :name "invariant-mod")
; dynamic cost: a copy at its usual place (the slice's definition, or right before its consumer)
; moves its bytes once per execution of that place (UseWeight is in thousandths); the table
; keeps the larger of this and the static bytes (``rules.safe``), so a copy is never free and a
; proven view (cost 0) always wins (a copy of under 8 elements always has a UseWeight: it may
; move 0 whole bytes)
(rule ((= u (Copy w mem ctx)) (= k (UseWeight u)) (= w (Win b r c h wd)) (= bits (Bits w)))
      ((set (cost_table_Copy w mem ctx) (max 1 (/ (* {COPY_BYTES} k) {MILLI}))))
      :ruleset hoist :name "copy-dynamic-cost")
; "a copy of a window is loop-invariant when its source is defined outside the loop, its offsets
; do not depend on the loop, and nothing in the loop writes the source or any alias of it": the
; same copy made once before L serves every iteration; it costs its bytes × the executions of
; the point before L.  Matched on the peeled window (base a leaf), so the stability fact is the
; root tile's.
(rule ((= u (Copy w mem ctx)) (InLoop u l) (HoistRoom w l) (= w (Win b r c h wd)) (Stable b l)
       (Inv r l) (Inv c l) (= k (LoopWeight l)) (= bits (Bits w)))
      ((union u (CopyOut w mem ctx l))
       (set (cost_table_CopyOut w mem ctx l) (max 1 (/ (* {COPY_BYTES} k) {MILLI}))))
      :ruleset hoist :name "hoist-invariant-copy")
"""
