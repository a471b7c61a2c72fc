"""The reusable arithmetic ruleset (rules/arith.py) on its own: normal form, folding, unions."""

from egglog import EGraph, eq

from egraph_tiles.rules.arith import Lin, Num, arith_schedule, arith_union_rules, norm, var, var_key


def _normal_form(expr: Num) -> Lin:
    eg = EGraph()
    eg.register(norm(expr))
    eg.run(arith_schedule())
    return eg.extract(norm(expr))


def test_offset_minus_its_constant_is_the_scaled_axis():
    i = var("i")
    assert str(_normal_form((i * Num(16) + Num(8)) - Num(8))) == str(
        Lin.term(16, var_key("i"), _atom("i"), Lin(0))
    )


def _atom(name: str):
    from egraph_tiles.rules.arith import Atom

    return Atom.var(name, var_key(name))


def test_like_terms_cancel_to_the_remaining_variable():
    i, j = var("i"), var("j")
    assert str(_normal_form(i * Num(3) + j - i * Num(3))) == str(
        Lin.term(1, var_key("j"), _atom("j"), Lin(0))
    )


def test_constants_fold():
    assert str(_normal_form((Num(3) + Num(4)) * Num(5) - Num(1))) == str(Lin(34))


def test_floordiv_splits_off_the_divisible_part():
    i, j = var("i"), var("j")
    # (7i + j + 5) // 2 = 3i + 2 + (i + j + 1) // 2
    nf = "".join(str(_normal_form((i * Num(7) + j + Num(5)) // Num(2))).split())
    ki, kj = var_key("i"), var_key("j")
    assert nf.startswith(f'Lin.term(3,{ki},Atom.var("i",{ki}),Lin.term(1,')
    inner = f'Lin.term(1,{ki},Atom.var("i",{ki}),Lin.term(1,{kj},Atom.var("j",{kj}),Lin(1)))'
    assert f"Atom.floordiv({inner},2),Lin(2))" in nf


def test_mod_of_multiple_plus_constant_is_constant():
    i = var("i")
    assert str(_normal_form((i * Num(4) + Num(3)) % Num(4))) == str(Lin(3))


def test_nested_floordiv_merges_divisors():
    i = var("i")
    nf = str(_normal_form((i // Num(4)) // Num(2)))
    assert "8)" in nf and nf.count("Atom.floordiv") == 1


def test_product_of_two_variables_has_no_normal_form():
    i, j = var("i"), var("j")
    eg = EGraph()
    eg.register(norm(i * j))
    eg.run(arith_schedule())
    try:
        eg.extract(norm(i * j))
    except Exception as exc:  # egglog: no extractable member
        assert "extract" in str(exc).lower()
    else:
        raise AssertionError("a non-affine product must not get a normal form")


def test_union_rules_make_equal_offsets_one_eclass():
    i = var("i")
    a = (i * Num(16) + Num(8)) - Num(8)
    b = i * Num(16)
    eg = EGraph()
    eg.register(a, b, Num(2) * Num(3) + Num(1))
    eg.run((arith_schedule() + arith_union_rules.saturate()).saturate())
    eg.check(eq(a).to(b))
    eg.check(eq(Num(2) * Num(3) + Num(1)).to(Num(7)))


def test_var_key_is_stable_and_below_atom_keys():
    from egraph_tiles.rules.arith import ATOM_KEY_BASE

    assert var_key("p0_128") == var_key("p0_128")
    assert 0 <= var_key("some_long_name") < ATOM_KEY_BASE


def test_module_docstring_reuse_example_runs():
    from egglog import EGraph, eq

    i = var("i")
    a = (i * 16 + 8) - 8
    eg = EGraph()
    eg.register(a, i * 16)
    eg.run((arith_schedule() + arith_union_rules.saturate()).saturate())
    eg.check(eq(a).to(i * Num(16)))


def test_affine_schedule_includes_the_arith_rules():
    from egraph_tiles.rules.affine import affine_schedule

    i = var("i")
    eg = EGraph()
    eg.register(norm((i * 16 + 8) - 8))
    eg.run(affine_schedule())
    assert str(eg.extract(norm((i * 16 + 8) - 8))) == str(Lin.term(16, var_key("i"), _atom("i"), Lin(0)))
