"""A window passed to a program function by keyword (``self.fill(v=p8, t=w)``) is the
argument of the parameter of that name: what the function does with that parameter decides
its use, exactly as for the positional spelling.  A function writing it needs the window
itself — a copy would take the write — so an unaligned one is rejected."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import kernel, rejection
from simkit import inputs_for, unsound_because

PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], p: pl.Tensor[[16, 8], pl.FP32], "
          "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
BODY = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
p8 = pl.tile.load(p, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [16, 8], [0, {col}])
self.fill(v=p8, t=w)
out = pl.store(local, [0, 0], out)
return out
"""
FILL = """
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, t: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec], v: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]):
        pl.tile.assemble(t, v, [0, 0])
"""


def program(col: int) -> et.ir.Program:
    text = kernel(PARAMS, BODY.format(col=col), "pl.Tensor[[16, 64], pl.FP32]", more=FILL)
    return et.verify_program(et.parse_program(text))


def test_an_unaligned_window_passed_by_keyword_to_a_function_writing_it_is_rejected():
    p = program(3)
    assert "is written in place by self.fill" in rejection(p)
    assert unsound_because(lambda q: q, p, inputs_for(p), {}) is not None


def test_an_aligned_window_passed_by_keyword_to_a_function_writing_it_stays_a_view():
    p = program(8)
    et.assert_structural_equal(et.optimize(p), p)
    assert unsound_because(et.optimize, p, inputs_for(p), {}) is None
