"""The accumulator-window check through the public pass API."""

from __future__ import annotations

import pytest

import egraph_tiles as et

BAD = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, lhs: pl.Tile[[16, 64], pl.BF16, pl.Mem.Left],
               rhs: pl.Tile[[64, 32], pl.BF16, pl.Mem.Right]):
        acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
        w = pl.tile.slice(acc, [16, 32], [16, 0])
        for ko, (c,) in pl.range(0, 256, 64, init_values=(w,)):
            cc = pl.tile.matmul_acc(c, lhs, rhs)
            out = pl.yield_(cc)
        return out
"""

GOOD = BAD.replace("[32, 32], pl.FP32", "[16, 64], pl.FP32").replace("[16, 0])", "[0, 32])")


def test_canonicalize_tile_slice_rejects_a_row_window_accumulator():
    prog = et.parse_program(BAD, filename="kernel.py")
    with pytest.raises(ValueError, match=r"kernel\.py:10: .*16x32 row window of a 32x32 Acc \(L0C\)"):
        et.canonicalize_tile_slice(prog)


def test_optimize_rejects_a_row_window_accumulator():
    prog = et.parse_program(BAD, filename="kernel.py")
    with pytest.raises(ValueError, match="not contiguous in L0C's block layout"):
        et.optimize(prog)


def test_pypto_spelling_of_the_pass_rejects_a_row_window_accumulator():
    prog = et.parse_program(BAD, filename="kernel.py")
    with pytest.raises(ValueError, match=r"tile\.slice\(acc, \[16, 32\], \[0, i \* 32\]\)"):
        et.passes.canonicalize_tile_slice()(prog)


def test_contiguous_accumulator_window_passes_through_unchanged():
    prog = et.parse_program(GOOD, filename="kernel.py")
    et.assert_structural_equal(et.canonicalize_tile_slice(prog), prog)
