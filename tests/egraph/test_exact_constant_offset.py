"""A constant row and column offset over a constant pitch are summed before the alignment modulo
(``window-address-exact-constant``): row 1, column 4 of a 12-wide FP32 tile starts 48 B + 16 B =
64 B in, aligned though neither part is; row 1, column 2 (56 B) is not."""

from __future__ import annotations

import egraph_tiles as et
from canon_helpers import assert_canonicalizes
from dslkit import kernel
from egraph_tiles.rulecheck.check import Checker
from egraph_tiles.rulecheck.collect import _rules_of, collect
from egraph_tiles.egraph.sexp import parse_sexps

X = "x: pl.Tensor[[16, 12], pl.FP32]"
LOAD = """
t: pl.Tile[[16, 12], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
"""


def test_a_window_whose_constant_offsets_sum_to_an_aligned_address_stays_a_view():
    body = LOAD + """
w: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 8], [1, 4])
y: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w, 2.0)
"""
    assert_canonicalizes(X, body, body)


def test_a_window_whose_constant_offsets_sum_to_an_unaligned_address_is_copied():
    assert_canonicalizes(X, LOAD + """
w: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 8], [1, 2])
y: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w, 2.0)
""", LOAD + """
w_ext: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 1, 2, shape=[1, 8], target_memory=pl.Mem.Vec)
y: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w_ext, 2.0)
""")


def test_a_valid_shape_slice_at_an_aligned_constant_address_reaches_a_vector_op():
    # before == after: accepted, not rejected as "not provably aligned"
    body = LOAD + """
w: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[1, 1])] = pl.tile.slice(t, [1, 8], [1, 4], valid_shape=[1, 1])
y: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w, 2.0)
"""
    p = et.parse_program(kernel(X, body))
    assert et.print_program(et.canonicalize_tile_slice(p)) == et.print_program(p)


RULES, SIGS = collect()


def test_the_exact_constant_rule_is_proved():
    (rule,) = [r for r in RULES if r.name == "window-address-exact-constant"]
    assert Checker(SIGS).check(rule).status == "proved"


def test_the_exact_constant_rule_ignoring_the_bases_alignment_gets_a_counterexample():
    (rule,) = _rules_of("layout", parse_sexps(
        '(rule ((= w (Win b (Lit r) (Lit c) h wd)) (= p (Pitch b)) (= bits (Bits b)) '
        '(= 0 (% (* (+ (* r p) c) bits) 256))) ((set (AddrMult w) 256)) '
        ':ruleset layout :name "exact-ignores-base-wrong")'))
    assert Checker(SIGS).check(rule).status == "counterexample"
