"""Offsets through ``%`` and ``//`` keep their known multiples (``rules.multiples``): a remainder
is a multiple of the gcd of its operands' multiples, a quotient by a power of two that divides
the dividend's multiple is exact.  The verifier bounds a remainder of a small non-negative
dividend by the dividend.  Each new transfer function is proved by the rule checker, and a
wrong one gets a counterexample."""

from __future__ import annotations

import pytest

import egraph_tiles as et
from canon_helpers import assert_canonicalizes
from dslkit import kernel
from egraph_tiles.rulecheck.check import Checker
from egraph_tiles.rulecheck.collect import _rules_of, collect
from egraph_tiles.egraph.sexp import parse_sexps

X = "x: pl.Tensor[[16, 64], pl.FP32], c0: pl.Scalar[pl.INDEX]"
T = """
local: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
"""


def loop_over(offset: str) -> str:
    return T + f"""
for i in pl.range(0, 4, 1):
    w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, {offset}])
    y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w, 2.0)
"""


@pytest.mark.parametrize("offset", ["(i * 8) % 32", "(i * 16) // 2", "(i * 32) // 4 + 8",
                                    "(i * 8) % 64", "(c0 * 16) % 8"])
def test_offset_through_mod_or_floordiv_of_a_known_multiple_stays_a_view(offset):
    # every offset is a multiple of 8 FP32 elements = 256 bits: the window stays a view
    assert_canonicalizes(X, loop_over(offset), loop_over(offset))


@pytest.mark.parametrize("offset", ["(i * 8) % 36", "(i * 8) // 2", "(i * 16) // 3"])
def test_offset_through_mod_or_floordiv_without_a_known_multiple_is_copied(offset):
    rep = et.Report()
    et.canonicalize_tile_slice(et.parse_program(kernel(X, loop_over(offset))), report=rep)
    (d,) = [d for d in rep.functions[0].decisions if d.use == "tile.muls operand 0"]
    assert d.decision == "copy"


def test_verifier_bounds_a_remainder_of_a_small_dividend_by_the_dividend():
    # i in [0, 3]: (i*8) % 64 = i*8 in [0, 24], so the window [24, 32) fits the 64 columns
    et.verify_program(et.parse_program(kernel(X, loop_over("(i * 8) % 64"))))


def test_verifier_still_bounds_a_remainder_of_a_large_dividend_by_the_modulus():
    # i*8 in [0, 120]: the remainder can be 63, and [63, 71) leaves the tile
    prog = et.parse_program(kernel(X, T + """
for i in pl.range(0, 16, 1):
    w = pl.tile.slice(local, [16, 8], [0, (i * 8) % 64])
    y = pl.tile.muls(w, 2.0)
"""))
    with pytest.raises(ValueError, match="can be 63"):
        et.verify_program(prog)


RULES, SIGS = collect()
BY_NAME = {(r.module, r.name): r for r in RULES}


def check_text(text: str):
    (rule,) = _rules_of("multiples", parse_sexps(text))
    return Checker(SIGS).check(rule)


@pytest.mark.parametrize("name", ["mult-mod", "mult-floordiv-integer", *(f"mult-floordiv-{1 << k}" for k in range(1, 13))])
def test_quasi_affine_multiple_transfer_function_is_proved(name):
    v = Checker(SIGS).check(BY_NAME[("multiples", name)])
    assert v.status == "proved", v


@pytest.mark.parametrize("wrong", [
    # a remainder is a multiple of the smaller multiple, not the larger
    '(rule ((= e (Mod a b)) (= ma (Mult a)) (= mb (Mult b))) ((set (Mult e) (max ma mb))) '
    ':ruleset multiples :name "mult-mod-wrong")',
    # a quotient by 8 of a multiple of 4 is not exact: (4 // 8) = 0 but (12 // 8) = 1
    '(rule ((= e (FloorDiv a (Lit 8))) (= ma (Mult a)) (>= ma 4)) ((set (Mult e) (/ ma 4))) '
    ':ruleset multiples :name "mult-floordiv-inexact-wrong")',
    # a quotient by 3 of a multiple of 6 is a multiple of 2, not 6 / 2
    '(rule ((= e (FloorDiv a (Lit 3))) (= ma (Mult a)) (>= ma 8)) ((set (Mult e) ma)) '
    ':ruleset multiples :name "mult-floordiv-keeps-multiple-wrong")',
])
def test_wrong_quasi_affine_multiple_gets_a_counterexample(wrong):
    v = check_text(wrong)
    assert v.status == "counterexample", v
