"""A constant MemRef byte offset and a constant column offset are summed before the alignment
modulo (``window-address-exact-constant-part``): 16 B + 4 FP32 = 32 B is aligned though neither
part is; 20 B + 4 FP32 = 36 B is not."""

from __future__ import annotations

import pytest

import egraph_tiles as et
from canon_helpers import assert_canonicalizes
from dslkit import kernel
from egraph_tiles.rulecheck.check import Checker
from egraph_tiles.rulecheck.collect import _rules_of, collect
from egraph_tiles.egraph.sexp import parse_sexps

X = "x: pl.Tensor[[16, 128], pl.FP32]"


def at(byte_offset: int, row: str = "0") -> str:
    return f"""
mem: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)
xt: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem, {byte_offset}, 8192), pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Vec)
for i in pl.range(0, 4, 1):
    w: pl.Tile[[4, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(xt, [4, 8], [{row}, 4])
    y: pl.Tile[[4, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w, 2.0)
"""


@pytest.mark.parametrize("row", ["0", "i", "i * 2 + 1"])
def test_memref_offset_plus_column_offset_summing_to_32_bytes_stays_a_view(row):
    assert_canonicalizes(X, at(16, row), at(16, row))


def test_memref_offset_plus_column_offset_not_a_multiple_of_32_bytes_is_copied():
    rep = et.Report()
    et.canonicalize_tile_slice(et.parse_program(kernel(X, at(20))), report=rep)
    (d,) = [d for d in rep.functions[0].decisions if d.use == "tile.muls operand 0"]
    assert d.decision == "copy"
    assert "4) × 32 bits = 128 bits + MemRef byte offset 20 B (160 bits) = 288 bits" in d.reason


def test_explain_shows_the_exact_sum():
    rep = et.Report()
    et.canonicalize_tile_slice(et.parse_program(kernel(X, at(16))), report=rep)
    (d,) = [d for d in rep.functions[0].decisions if d.use == "tile.muls operand 0"]
    assert d.decision == "view"
    assert "+ MemRef byte offset 16 B (128 bits) = 256 bits: multiple of 256 → view" in d.reason


RULES, SIGS = collect()


def test_exact_constant_part_rule_is_proved():
    (rule,) = [r for r in RULES if r.name == "window-address-exact-constant-part"]
    assert Checker(SIGS).check(rule).status == "proved"


def test_exact_constant_part_rule_ignoring_the_row_part_gets_a_counterexample():
    (rule,) = _rules_of("layout", parse_sexps(
        '(rule ((= w (Win b r (Lit c) h wd)) (MemrefBytes b (Lit k)) (= bits (Bits b)) '
        '(= 0 (% (+ (* k 8) (* c bits)) 256))) ((set (AddrMult w) 256)) '
        ':ruleset layout :name "exact-ignores-row-wrong")'))
    assert Checker(SIGS).check(rule).status == "counterexample"
