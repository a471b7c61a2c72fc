"""A call written inside a ``return`` or ``pl.yield_`` (``return self.row1(s)``) is a call like any
other: it frames its callee, its result shares its arguments' storage, and what it does to them
is seen (``ir.lift`` names it for the analyses).  The program prints as written wherever the
pass changed nothing there."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import kernel, rejection
from simkit import inputs_for, unsound_because

PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], y: pl.Tensor[[4, 16], pl.FP32], "
          "flag: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
#: row1 is called at two places: w1 (row 1 at 256 + 32 = 288 B, aligned) and, inside wrap's
#: return, s (row 1 at 64 + 4 = 68 B into small)
BODY = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
small = pl.tile.load(y, [0, 0], [4, 16], target_memory=pl.Mem.Vec)
w1 = pl.tile.slice(local, [2, 8], [0, 8])
r1 = self.row1(w1)
r2 = self.wrap(small, flag)
{use}
pl.store(local, [0, 0], out)
return out"""
READ = """pl.tile.assemble(local, r1, [4, 0])
pl.tile.assemble(local, r2, [5, 0])"""
WRITE = """pt = pl.tile.load(y, [0, 0], [1, 8], target_memory=pl.Mem.Vec)
pl.tile.assemble(r2, pt, [0, 0])"""
WRAP = """
    @pl.function(type=pl.FunctionType.InCore)
    def wrap(self, t: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec], flag: pl.Scalar[pl.INDEX]) -> pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [2, 8], [0, 1])
{tail}
"""
IN_RETURN = "        return self.row1(s)"
IN_YIELD = """        if flag > 0:
            r = pl.yield_(self.row1(s))
        else:
            z = pl.tile.create([1, 8], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            r = pl.yield_(z)
        return r"""
ROW1 = """
    @pl.function(type=pl.FunctionType.InCore)
    def row1(self, t: pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]:
        {then}
"""
SLICE = "s = pl.tile.slice(t, [1, 8], [1, 0])\n        "
SCALED = SLICE + "m = pl.tile.muls(s, 2.0)\n        return m"
COPIED = ("s_ext = pl.tile.extract(t, 1, 0, shape=[1, 8], target_memory=pl.Mem.Vec)\n"
          "        m = pl.tile.muls(s_ext, 2.0)\n        return m")


def program(use: str, tail: str, then: str) -> et.ir.Program:
    text = kernel(PARAMS, BODY.format(use=use), "pl.Tensor[[16, 64], pl.FP32]",
                  more=WRAP.format(tail=tail) + ROW1.format(then=then))
    return et.verify_program(et.parse_program(text))


def test_a_call_in_a_return_frames_its_callee():
    # (before, row1 was framed by w1 alone: row 1 stayed a view, and tile.muls faulted 68 B in)
    p = program(READ, IN_RETURN, SCALED)
    et.assert_structural_equal(et.optimize(p), program(READ, IN_RETURN, COPIED))
    assert unsound_because(et.optimize, p, inputs_for(p), {"flag": 1}) is None


def test_a_call_in_a_yield_frames_its_callee():
    p = program(READ, IN_YIELD, SCALED)
    et.assert_structural_equal(et.optimize(p), program(READ, IN_YIELD, COPIED))
    for flag in (0, 1):
        assert unsound_because(et.optimize, p, inputs_for(p), {"flag": flag}) is None


def test_a_write_through_a_call_returned_from_a_return_reaches_the_window():
    # (row1 hands back s's row 1, 68 B into small, and the kernel writes through wrap's result)
    p = program(WRITE, IN_RETURN, SLICE + "return s")
    assert "in function 'row1', slice 's'" in rejection(p)
    assert unsound_because(lambda q: q, p, inputs_for(p), {"flag": 1}) is not None


def test_a_function_returning_a_call_it_does_not_change_prints_as_written():
    p = program(READ, IN_RETURN, SCALED)
    q = et.optimize(p)
    assert q.function("wrap").body == p.function("wrap").body  # (the very statements read)
