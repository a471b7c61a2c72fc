"""The NKI affine ruleset (rules/affine.py) driven by hand, as its docstring describes."""

from egglog import EGraph, set_, union

from egraph_tiles.rules.affine import affine_schedule, atom_hi, atom_lo, lin_hi, lin_lo, subst, subst_binding
from egraph_tiles.rules.arith import Atom, Lin, Num, norm, var, var_key


def _declare(eg: EGraph, name: str, lo: int, hi: int) -> None:
    a = Atom.var(name, var_key(name))
    eg.register(set_(atom_lo(a)).to(lo), set_(atom_hi(a)).to(hi))


def test_docstring_example_substitution_and_supremum():
    eg = EGraph()
    i, j = var("i"), var("j")
    _declare(eg, "i", 0, 7)
    eg.register(union(subst_binding(1, var_key("i"))).with_(norm(j * 2)), subst(norm(i * 3 + 1), 1))
    eg.run(affine_schedule())
    kj = var_key("j")
    want = Lin.term(6, kj, Atom.var("j", kj), Lin(1))
    assert str(eg.extract(subst(norm(i * 3 + 1), 1))) == str(want)
    assert eg.extract(lin_hi(norm(i * 3 + 1))).value == 22
    assert eg.extract(lin_lo(norm(i * 3 + 1))).value == 1


def test_negative_coefficients_swap_bounds():
    eg = EGraph()
    i = var("i")
    _declare(eg, "i", 2, 5)
    e = Num(10) - i * 3
    eg.register(norm(e))
    eg.run(affine_schedule())
    assert (eg.extract(lin_lo(norm(e))).value, eg.extract(lin_hi(norm(e))).value) == (-5, 4)


def test_in_range_mod_and_div_simplify_only_with_bounds():
    eg = EGraph()
    i, k = var("i"), var("k")  # k has no declared range
    _declare(eg, "i", 0, 3)
    eg.register(norm(i % 4), norm(k % 4), norm((i + 4) // 4))
    eg.run(affine_schedule())
    assert str(eg.extract(norm(i % 4))) == str(Lin.term(1, var_key("i"), Atom.var("i", var_key("i")), Lin(0)))
    assert "Atom.mod" in str(eg.extract(norm(k % 4)))
    assert str(eg.extract(norm((i + 4) // 4))) == str(Lin(1))
