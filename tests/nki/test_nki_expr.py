"""AffineExpr: the per-expression API on top of the e-graph solver."""

import pytest

from egraph_tiles.nki import AffineExpr, AffineSolver, axis_var, scalar_var, solve
from egraph_tiles.nki.index.solver import clear_cache, solution_of

I = axis_var("i", 8)
J = axis_var("j", 4)
i, j = AffineExpr.var(I), AffineExpr.var(J)


def test_offset_arithmetic_normalizes():
    assert ((i * 16 + 8) - 8).equiv(i * 16)
    assert not (i * 16 + 1).equiv(i * 16)


def test_is_const_and_c():
    e = (i + 5) - i
    assert e.is_const and e.c == 5
    assert not (i + 5).is_const and (i + 5).c == 5


def test_supremum_and_infimum_come_from_axis_ranges():
    e = i * 2 - j + 1
    assert (e.infimum, e.supremum) == (1 - 3, 14 + 1)


def test_unbounded_scalar_has_no_supremum():
    n = AffineExpr.var(scalar_var("n"))
    assert (n + 1).supremum is None and (n + 1).infimum is None


def test_substitution_is_simultaneous():
    swapped = (i * 2 + j).substitute({I: j, J: i})
    assert swapped.normal_form().coefficient(J) == 2
    assert swapped.normal_form().coefficient(I) == 1


def test_substitution_inside_quasi_affine_atoms():
    e = ((i + 1) // 2).substitute({I: i * 2})
    assert e.equiv(i)  # (2i + 1) // 2 = i


def test_bounds_simplify_mod_and_floordiv():
    assert (j % 4).equiv(j)           # 0 <= j < 4
    assert (j // 4).equiv(0)
    assert ((i * 4 + 3) % 4).equiv(3)


def test_size_one_axis_is_the_constant_zero():
    b = AffineExpr.var(axis_var("b", 1))
    assert (b * 7 + i).equiv(i)


def test_mul_by_non_int_is_rejected():
    with pytest.raises(TypeError, match="unexpected type"):
        i * j  # noqa: B018
    with pytest.raises(TypeError, match="unexpected type"):
        i * 1.5  # noqa: B018


def test_floordiv_by_non_positive_is_rejected():
    with pytest.raises(ValueError, match="non-positive"):
        i // 0  # noqa: B018
    with pytest.raises(ValueError, match="non-positive"):
        i % -2  # noqa: B018


def test_one_variable_name_with_two_ranges_is_rejected():
    s = AffineSolver()
    s.add(AffineExpr.var(axis_var("k", 4)) + AffineExpr.var(axis_var("k", 8)))
    with pytest.raises(ValueError, match="two different ranges"):
        s.solve()


def test_interning_makes_equal_syntax_identical():
    assert (i + 1) is (i + 1)
    assert (i + 1) != (1 + i)  # syntax differs ...
    assert (i + 1).equiv(1 + i)  # ... the normal form does not


def test_batch_solve_fills_the_memo_used_by_properties():
    clear_cache()
    exprs = [i * k + j for k in range(1, 30)]
    sols = solve(exprs)
    assert [s.normal_form.coefficient(I) for s in sols] == list(range(1, 30))
    assert all(solution_of(e) is s for e, s in zip(exprs, sols, strict=True))


def test_evaluate_uses_floor_semantics():
    import numpy as np

    e = (i - 5) // 2 + (i - 5) % 3
    vals = np.arange(8)
    want = [(v - 5) // 2 + (v - 5) % 3 for v in vals]
    assert list(e.evaluate({"i": vals})) == want
    assert list(e.normal_form().evaluate({"i": vals})) == want
