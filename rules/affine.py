"""NKI affine index rules: loop-axis substitution and interval bounds over ``arith`` normal forms.

These rules implement the parts of the NKI index layer
(``shared/seeds/nki_affine_index_inference.txt``) that are algebra:

* ``AffineExpr.substitute(subst_map)`` (backend ``QuasiAffineExpr::substituteLoopAxes``):
  ``subst(P, m)`` rewrites every variable of the normal form ``P`` by its binding in the
  substitution map ``m`` -- simultaneously, because it walks ``P``'s original atoms.
* ``diff.supremum`` / infimum used by ``normalize_expr_range_args`` for a runtime-length ``ds``:
  an interval lattice ``lin_lo`` / ``lin_hi`` (merge = max / min: intervals only tighten) on
  normal forms and ``atom_lo`` / ``atom_hi`` on atoms, seeded from declared variable ranges.
* Bound-aware quasi-affine simplification: ``R // d = 0`` and ``R % d = R`` once ``0 <= R < d``
  is proven, and a variable whose range is a single value is that constant (a size-1 broadcast
  axis disappears from every normal form).

``is_const`` / ``c`` need no rule of their own: a constant's normal form is ``Lin(c)``.

How to reuse
------------
Run ``affine_schedule()``: it includes the arith rules and stratifies them -- every analysis
(keys, bounds, bound-aware simplification, which *subsume* what they simplify) saturates before
each structural step, so an opaque ``//`` / ``%`` atom is only built for a remainder no analysis
could simplify.  The driver supplies positive facts only, before running:

* a variable's range: ``set_(atom_lo(Atom.var(n, k))).to(lo)`` and ``atom_hi`` likewise;
* a substitution map ``m`` (an ``i64`` id): ``union(subst_binding(m, k)).with_(target_lin)`` for
  **every** variable key ``k`` occurring in the substituted expressions (identity bindings
  included -- a missing binding leaves the substitution unresolved rather than guessing);
* the substituted expression itself: ``Num.of_lin(subst(norm(e), m))`` or ``subst(norm(e), m)``.

Then read ``norm(e)`` (extract it) and ``lin_lo`` / ``lin_hi`` of it.  The NKI driver doing
exactly that, for a whole batch at once, is ``egraph_tiles.nki.index.solver.AffineSolver``.

Example (tested in ``tests/nki/test_nki_rules_affine.py``)::

    eg = EGraph()
    i, j = var("i"), var("j")
    eg.register(set_(atom_lo(Atom.var("i", var_key("i")))).to(0),
                set_(atom_hi(Atom.var("i", var_key("i")))).to(7),
                union(subst_binding(1, var_key("i"))).with_(norm(j * 2)),
                subst(norm(i * 3 + 1), 1))
    eg.run(affine_schedule())
    eg.extract(subst(norm(i * 3 + 1), 1))     # 6*j + 1
    eg.extract(lin_hi(norm(i * 3 + 1)))       # 22
"""

from __future__ import annotations

from egglog import (
    Schedule,
    String,
    eq,
    function,
    i64,
    i64Like,
    rule,
    ruleset,
    set_,
    subsume,
    union,
    vars_,
)

from egraph_tiles.rules.arith import (
    Atom,
    Lin,
    Num,
    arith_analysis,
    arith_rules,
    floor_div,
    lin_add,
    lin_floordiv,
    lin_mod,
    lin_scale,
    norm,
    rem_floordiv,
    rem_mod,
)

__all__ = [
    "affine_analysis",
    "affine_rules",
    "affine_schedule",
    "atom_hi",
    "atom_lo",
    "lin_hi",
    "lin_lo",
    "subst",
    "subst_atom",
    "subst_binding",
]


@function(egg_fn="subst", unextractable=True)
def subst(p: Lin, m: i64Like) -> Lin:
    """``p`` with every variable replaced by its binding in substitution map ``m``."""


@function(egg_fn="subst_atom", unextractable=True)
def subst_atom(a: Atom, m: i64Like) -> Lin:
    """Normal form of atom ``a`` after substitution map ``m``."""


@function(egg_fn="subst_binding", unextractable=True)
def subst_binding(m: i64Like, key: i64Like) -> Lin:
    """What map ``m`` sends the variable with ``key`` to (declared by the driver)."""


@function(egg_fn="lin_lo", merge=lambda old, new: old.max(new))
def lin_lo(p: Lin) -> i64:
    """Infimum (inclusive lower bound) of a normal form; the lattice only tightens."""


@function(egg_fn="lin_hi", merge=lambda old, new: old.min(new))
def lin_hi(p: Lin) -> i64:
    """Supremum (inclusive upper bound) of a normal form; the lattice only tightens."""


@function(egg_fn="atom_lo", merge=lambda old, new: old.max(new))
def atom_lo(a: Atom) -> i64:
    """Lower bound of an atom (a variable's is declared by the driver)."""


@function(egg_fn="atom_hi", merge=lambda old, new: old.min(new))
def atom_hi(a: Atom) -> i64:
    """Upper bound of an atom."""


p, r, t = vars_("p r t", Lin)
x = vars_("x", Atom).__next__()
c, k, d, m, lo, hi, lo2, hi2 = vars_("c k d m lo hi lo2 hi2", i64)
name = vars_("name", String).__next__()

affine_rules = ruleset(
    # --- substituteLoopAxes: walk the ORIGINAL atoms, so the substitution is simultaneous ----
    # A constant is unchanged by any substitution.
    rule(subst(Lin(c), m), name="subst_const").then(union(subst(Lin(c), m)).with_(Lin(c))),
    # coef*atom + rest  ->  coef*subst(atom) + subst(rest), re-normalized by the arith merge.
    rule(subst(Lin.term(c, k, x, r), m), name="subst_term").then(
        union(subst(Lin.term(c, k, x, r), m)).with_(
            lin_add(lin_scale(subst_atom(x, m), c), subst(r, m))
        )
    ),
    # A loop axis / scalar becomes its binding in the map (identity bindings are declared too).
    rule(subst_atom(Atom.var(name, k), m), eq(t).to(subst_binding(m, k)), name="subst_var").then(
        union(subst_atom(Atom.var(name, k), m)).with_(t)
    ),
    # Quasi-affine atoms substitute inside, then re-divide (the arith split applies again).
    rule(subst_atom(Atom.floordiv(p, d), m), name="subst_floordiv").then(
        union(subst_atom(Atom.floordiv(p, d), m)).with_(lin_floordiv(subst(p, m), d))
    ),
    rule(subst_atom(Atom.mod(p, d), m), name="subst_mod").then(
        union(subst_atom(Atom.mod(p, d), m)).with_(lin_mod(subst(p, m), d))
    ),
    name="affine_rules",
)

affine_analysis = ruleset(
    # --- interval bounds (supremum / infimum) --------------------------------------------------
    # A constant is its own bound.
    rule(Lin(c), name="bounds_const").then(set_(lin_lo(Lin(c))).to(c), set_(lin_hi(Lin(c))).to(c)),
    # coef > 0: [coef*lo(x) + lo(rest), coef*hi(x) + hi(rest)].
    rule(
        Lin.term(c, k, x, r), c > 0,
        atom_lo(x) == lo, atom_hi(x) == hi, lin_lo(r) == lo2, lin_hi(r) == hi2,
        name="bounds_term_pos",
    ).then(
        set_(lin_lo(Lin.term(c, k, x, r))).to(c * lo + lo2),
        set_(lin_hi(Lin.term(c, k, x, r))).to(c * hi + hi2),
    ),
    # coef < 0: the atom's bounds swap.
    rule(
        Lin.term(c, k, x, r), c < 0,
        atom_lo(x) == lo, atom_hi(x) == hi, lin_lo(r) == lo2, lin_hi(r) == hi2,
        name="bounds_term_neg",
    ).then(
        set_(lin_lo(Lin.term(c, k, x, r))).to(c * hi + lo2),
        set_(lin_hi(Lin.term(c, k, x, r))).to(c * lo + hi2),
    ),
    # floor(R/d) is monotone: [floor(lo/d), floor(hi/d)].
    rule(Atom.floordiv(p, d), lin_lo(p) == lo, lin_hi(p) == hi, name="bounds_floordiv").then(
        set_(atom_lo(Atom.floordiv(p, d))).to(floor_div(lo, d)),
        set_(atom_hi(Atom.floordiv(p, d))).to(floor_div(hi, d)),
    ),
    # R mod d is always in [0, d-1] ...
    rule(Atom.mod(p, d), name="bounds_mod").then(
        set_(atom_lo(Atom.mod(p, d))).to(i64(0)), set_(atom_hi(Atom.mod(p, d))).to(d - 1)
    ),
    # ... and never exceeds R when R >= 0.
    rule(Atom.mod(p, d), lin_lo(p) == lo, lo >= 0, lin_hi(p) == hi, name="bounds_mod_nonneg").then(
        set_(atom_hi(Atom.mod(p, d))).to(hi)
    ),
    # --- bound-aware simplification (subsumed, so the opaque atom is never built) -------------
    # 0 <= R < d  =>  floor(R/d) = 0.
    rule(rem_floordiv(r, d), lin_lo(r) == lo, lo >= 0, lin_hi(r) == hi, hi < d,
         name="floordiv_in_range").then(
        union(rem_floordiv(r, d)).with_(Lin(0)), subsume(rem_floordiv(r, d))
    ),
    # 0 <= R < d  =>  R mod d = R.
    rule(rem_mod(r, d), lin_lo(r) == lo, lo >= 0, lin_hi(r) == hi, hi < d,
         name="mod_in_range").then(union(rem_mod(r, d)).with_(r), subsume(rem_mod(r, d))),
    # A variable with a one-point range (a size-1 broadcast axis) is that constant.
    rule(norm(Num.var(name, k)), atom_lo(Atom.var(name, k)) == lo, atom_hi(Atom.var(name, k)) == lo,
         name="singleton_var_is_const").then(
        union(norm(Num.var(name, k))).with_(Lin(lo)), subsume(norm(Num.var(name, k)))
    ),
    name="affine_analysis",
)


def affine_schedule() -> Schedule:
    """The full NKI schedule: all analyses to a fixpoint, then one structural step, repeated."""
    return ((arith_analysis | affine_analysis).saturate() + (arith_rules | affine_rules)).saturate()
