"""The known-multiple lattice over ``Idx``: ``(Mult e)`` is a power of two dividing ``e``'s value.

Merge is ``max`` (two true power-of-two divisors: the larger one is true too); values are capped
at 2**30 so products stay inside i64.  Seed: "Scalar SSA definitions are followed through
aliases, addition/subtraction, and multiplication to prove aligned dynamic multiples" — aliases
and SSA definitions are unions, so they need no rule here.  Beyond the seed: a loop variable of
``pl.range(start, stop, step)`` is a multiple of gcd(start, step), whose power-of-two part is the
min of theirs.  For powers of two, gcd is ``min`` and a product's power-of-two part is the product.
A remainder ``a % b`` is ``a - b*q``: a multiple of the gcd again; a quotient ``a // d`` by a power
of two dividing ``a``'s multiple is exact.  ``CAP`` (``ir.target``) is the lattice's top.
"""

from ..ir.target import CAP

#: a // d by a power of two d that divides a's multiple m: the division is exact, so the quotient
#: is a multiple of m / d — (i*16) // 2 is a multiple of 8.  One rule per divisor 2 .. 2**12 (a
#: literal in each: the rule checker proves a division by a constant, not by a variable one)
FLOORDIV = "".join(
    f"""; a // {d}: exact when {d} divides a's multiple
(rule ((= e (FloorDiv a (Lit {d}))) (= ma (Mult a)) (>= ma {d})) ((set (Mult e) (/ ma {d})))
      :ruleset multiples :name "mult-floordiv-{d}")
""" for d in (1 << k for k in range(1, 13)))

RULES = f"""
(function Mult (Idx) i64 :merge (max old new))
(relation LoopVar (Idx Idx Idx))
(ruleset multiples)
; a literal c != 0 is a multiple of its power-of-two part c & -c; 0 is a multiple of everything
; (i64::MIN is excluded: -c overflows and c & -c would be negative)
(rule ((= e (Lit c)) (!= c 0) (> c -9223372036854775807)) ((set (Mult e) (min (& c (- 0 c)) {CAP})))
      :ruleset multiples :name "mult-literal")
(rule ((= e (Lit 0))) ((set (Mult e) {CAP})) :ruleset multiples :name "mult-zero")
; a parameter / opaque scalar is only known to be a multiple of 1
(rule ((= e (Sym s))) ((set (Mult e) 1)) :ruleset multiples :name "mult-symbol")
; a +- b: gcd of the two multiples (min for powers of two)
(rule ((= e (Add a b)) (= ma (Mult a)) (= mb (Mult b))) ((set (Mult e) (min ma mb)))
      :ruleset multiples :name "mult-add")
(rule ((= e (Sub a b)) (= ma (Mult a)) (= mb (Mult b))) ((set (Mult e) (min ma mb)))
      :ruleset multiples :name "mult-sub")
; a * b: product of the multiples, capped
(rule ((= e (Mul a b)) (= ma (Mult a)) (= mb (Mult b))) ((set (Mult e) (min (* ma mb) {CAP})))
      :ruleset multiples :name "mult-mul")
; a % b = a - b*q for an integer q (whatever the rounding of q): a multiple of gcd of the two,
; so (i*8) % 32 is a multiple of 8
(rule ((= e (Mod a b)) (= ma (Mult a)) (= mb (Mult b))) ((set (Mult e) (min ma mb)))
      :ruleset multiples :name "mult-mod")
; any other quotient is an integer: only known to be a multiple of 1 (as a symbol is)
(rule ((= e (FloorDiv a b))) ((set (Mult e) 1)) :ruleset multiples :name "mult-floordiv-integer")
{FLOORDIV}; loop variable of pl.range(start, stop, step): multiple of gcd(start, step)
(rule ((LoopVar v start step) (= ms (Mult start)) (= mt (Mult step)))
      ((set (Mult v) (min ms mt))) :ruleset multiples :name "mult-loop-var")
"""
