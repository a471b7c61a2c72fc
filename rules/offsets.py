"""Offset arithmetic on ``Idx``: constant folding, identities, constant collection.

Offsets stay affine terms over loop variables and scalar parameters: ``ko + 256`` folds from
``extract(slice(x, [0, 256]), 0, ko)``, ``(i*16 + 8) - 8`` is recognized as ``i*16`` (seed:
"the index add is constant-folded when both terms are ConstInt").  Every rule shrinks a term or
moves a constant outward, so the ruleset saturates.
"""

RULES = """
(ruleset offsets)
; constant folding (seed: "the index add is constant-folded when both terms are ConstInt")
(rewrite (Add (Lit a) (Lit b)) (Lit (+ a b)) :ruleset offsets :name "fold-add")
(rewrite (Sub (Lit a) (Lit b)) (Lit (- a b)) :ruleset offsets :name "fold-sub")
(rewrite (Mul (Lit a) (Lit b)) (Lit (* a b)) :ruleset offsets :name "fold-mul")
; identities: x + 0, 0 + x, x - 0, x * 1, 1 * x, x * 0, x - x
(rewrite (Add x (Lit 0)) x :ruleset offsets :name "add-zero-r")
(rewrite (Add (Lit 0) x) x :ruleset offsets :name "add-zero-l")
(rewrite (Sub x (Lit 0)) x :ruleset offsets :name "sub-zero")
(rewrite (Mul x (Lit 1)) x :ruleset offsets :name "mul-one-r")
(rewrite (Mul (Lit 1) x) x :ruleset offsets :name "mul-one-l")
(rewrite (Mul x (Lit 0)) (Lit 0) :ruleset offsets :name "mul-zero-r")
(rewrite (Mul (Lit 0) x) (Lit 0) :ruleset offsets :name "mul-zero-l")
(rewrite (Sub x x) (Lit 0) :ruleset offsets :name "sub-self")
; like terms: constants collected to the right, so (i*16 + 8) - 8 = i*16
(rewrite (Add (Add x (Lit a)) (Lit b)) (Add x (Lit (+ a b))) :ruleset offsets :name "collect-add-add")
(rewrite (Sub (Add x (Lit a)) (Lit b)) (Add x (Lit (- a b))) :ruleset offsets :name "collect-add-sub")
(rewrite (Add (Sub x (Lit a)) (Lit b)) (Add x (Lit (- b a))) :ruleset offsets :name "collect-sub-add")
(rewrite (Sub (Sub x (Lit a)) (Lit b)) (Sub x (Lit (+ a b))) :ruleset offsets :name "collect-sub-sub")
(rewrite (Add x (Add y (Lit a))) (Add (Add x y) (Lit a)) :ruleset offsets :name "collect-nested")
(rewrite (Sub (Add x y) y) x :ruleset offsets :name "cancel-add-sub")
"""
