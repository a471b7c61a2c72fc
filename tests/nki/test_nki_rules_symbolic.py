"""Symbolic checks of the normal-form and substitution rules against sympy / exhaustive numpy.

Each hypothesis example draws a batch of random expressions and solves them in ONE e-graph.
"""

import itertools

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from egraph_tiles.nki.index.expr import AffineExpr, axis_var
from egraph_tiles.nki.index.solver import AffineSolver

VARS = [axis_var("a", 5), axis_var("b", 3), axis_var("c", 4)]
SYMS = {v.name: sympy.Symbol(v.name, integer=True) for v in VARS}


def _exprs(quasi: bool) -> st.SearchStrategy[AffineExpr]:
    leaves = st.one_of(
        st.sampled_from([AffineExpr.var(v) for v in VARS]),
        st.integers(-20, 20).map(AffineExpr.const),
    )

    def extend(children: st.SearchStrategy[AffineExpr]) -> st.SearchStrategy[AffineExpr]:
        ops = [
            st.tuples(children, children).map(lambda t: t[0] + t[1]),
            st.tuples(children, children).map(lambda t: t[0] - t[1]),
            st.tuples(children, st.integers(-6, 6)).map(lambda t: t[0] * t[1]),
            children.map(lambda e: -e),
        ]
        if quasi:
            ops += [
                st.tuples(children, st.integers(1, 7)).map(lambda t: t[0] // t[1]),
                st.tuples(children, st.integers(1, 7)).map(lambda t: t[0] % t[1]),
            ]
        return st.one_of(*ops)

    return st.recursive(leaves, extend, max_leaves=8)


def to_sympy(e: AffineExpr) -> sympy.Expr:
    op, a = e.op, e.args
    if op == "const":
        return sympy.Integer(a[0])
    if op == "var":
        return SYMS[a[0].name]
    if op == "add":
        return to_sympy(a[0]) + to_sympy(a[1])
    if op == "mul":
        return to_sympy(a[0]) * a[1]
    if op == "subst":
        return to_sympy(a[0]).subs({SYMS[v.name]: to_sympy(t) for v, t in a[1]}, simultaneous=True)
    raise AssertionError(op)


def nf_to_sympy(nf) -> sympy.Expr:
    return nf.const + sum((c * SYMS[v.name] for v, c in nf.terms), sympy.Integer(0))


def _grid() -> dict[str, np.ndarray]:
    pts = np.array(list(itertools.product(*(range(v.hi + 1) for v in VARS))))
    return {v.name: pts[:, k] for k, v in enumerate(VARS)}


def _solve(exprs):
    s = AffineSolver()
    s.add(*exprs)
    s.solve()
    return [s.solution(e) for e in exprs]


@settings(max_examples=8)
@given(st.lists(_exprs(quasi=False), min_size=1, max_size=15))
def test_normal_form_equals_sympy_expansion(exprs):
    for e, sol in zip(exprs, _solve(exprs), strict=True):
        assert sol.normal_form is not None
        assert sympy.expand(nf_to_sympy(sol.normal_form) - to_sympy(e)) == 0, e


@settings(max_examples=8)
@given(st.lists(st.tuples(_exprs(quasi=False), _exprs(quasi=False), _exprs(quasi=False)),
                min_size=1, max_size=8))
def test_substitution_equals_sympy_simultaneous_subs(triples):
    a, b = VARS[0], VARS[1]
    exprs = [e.substitute({a: ta, b: tb}) for e, ta, tb in triples]
    for e, sol in zip(exprs, _solve(exprs), strict=True):
        assert sympy.expand(nf_to_sympy(sol.normal_form) - to_sympy(e)) == 0, e


@settings(max_examples=8)
@given(st.lists(_exprs(quasi=True), min_size=1, max_size=15))
def test_quasi_affine_normal_form_and_bounds_agree_with_exhaustive_numpy(exprs):
    env = _grid()
    for e, sol in zip(exprs, _solve(exprs), strict=True):
        want = np.broadcast_to(np.asarray(e.evaluate(env)), env["a"].shape)
        got = np.broadcast_to(np.asarray(sol.normal_form.evaluate(env)), env["a"].shape)
        np.testing.assert_array_equal(got, want, err_msg=str(e))
        # interval analysis is sound (and the box is small enough that it must be finite)
        assert sol.lo is not None and sol.hi is not None
        assert sol.lo <= want.min() and want.max() <= sol.hi, (e, sol)


def test_bounds_of_a_linear_form_are_exact():
    a, b, c = (AffineExpr.var(v) for v in VARS)
    (sol,) = _solve([a * 3 - b * 2 + c + 7])
    assert (sol.lo, sol.hi) == (0 - 4 + 0 + 7, 12 - 0 + 3 + 7)


@pytest.mark.slow
@settings(max_examples=100)
@given(st.lists(_exprs(quasi=True), min_size=1, max_size=40))
def test_quasi_affine_many_examples(exprs):
    test_quasi_affine_normal_form_and_bounds_agree_with_exhaustive_numpy.hypothesis.inner_test(exprs)
