"""Two tile parameters that some call binds to tiles sharing storage (``self.g(local, local)``,
two windows of one tile) are one storage class in the function (``Summaries.aliased``): a write
through one may change what a window of the other reads, so a copy of that window is made after
the write and is not hoisted out of a loop that writes the other."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import kernel
from egraph_tiles.ir.summaries import call_summaries
from simkit import inputs_for, unsound_because

PARAMS = "x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]"
BODY = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
{call}
pl.store(local, [0, 0], out)
return out"""
LOOP = """
    @pl.function(type=pl.FunctionType.InCore)
    def g(self, a: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec], b: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]):
        for i in pl.range(3):
            {body}
            pl.tile.assemble(b, m, [0, 0])
"""
SLICED = "w = pl.tile.slice(a, [1, 8], [0, 1])\n            m = pl.tile.adds(w, 1.0)"
COPIED = ("w_ext = pl.tile.extract(a, 0, 1, shape=[1, 8], target_memory=pl.Mem.Vec)\n"
          "            m = pl.tile.adds(w_ext, 1.0)")


def program(call: str, body: str) -> et.ir.Program:
    text = kernel(PARAMS, BODY.format(call=call), "pl.Tensor[[16, 64], pl.FP32]",
                  more=LOOP.format(body=body))
    return et.verify_program(et.parse_program(text))


def test_parameters_bound_to_one_tile_share_storage():
    p = program("self.g(local, local)", SLICED)
    g = p.function("g")
    assert call_summaries(p).aliased(g) == [(g.params[0].var, g.params[1].var)]


def test_parameters_bound_to_different_tiles_do_not():
    p = program("other = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)\n"
                "self.g(local, other)", SLICED)
    assert call_summaries(p).aliased(p.function("g")) == []


def test_a_window_of_a_parameter_another_one_writes_in_the_loop_is_copied_in_the_loop():
    # (each trip writes b = local, columns 0-7, which the next trip's window of a reads: before,
    # the copy was hoisted before the loop and every trip read the first trip's values)
    p = program("self.g(local, local)", SLICED)
    et.assert_structural_equal(et.optimize(p), program("self.g(local, local)", COPIED))
    assert unsound_because(et.optimize, p, inputs_for(p), {}) is None


def test_a_summary_speaks_of_each_parameter_though_its_calls_alias_them():
    # (the caller knows its arguments share storage; pair's second result is u's tile itself,
    # not a part of t as well)
    p = et.verify_program(et.parse_program(kernel(PARAMS, BODY.format(call="pr = self.pair(local, local)"),
                                                  "pl.Tensor[[16, 64], pl.FP32]", more="""
    @pl.function(type=pl.FunctionType.InCore)
    def pair(self, t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec], u: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]) -> tuple[pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec], pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]]:
        return t, u
""")))
    sums = call_summaries(p)
    assert len(sums.aliased(p.function("pair"))) == 1
    assert [[(r.param, r.whole) for r in res] for res in sums.get("pair").results] == \
        [[(0, True)], [(1, True)]]
