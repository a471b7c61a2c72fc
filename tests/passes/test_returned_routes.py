"""A value a function returns that may name a window of its parameter without being one — an
``if`` merge of windows, a loop carry of one, a ``set_validshape`` view of one — hands the window
to the callers as surely as returning it: a caller's write through the result lands in it
(``egraph.encode`` ``visit_ReturnStmt`` states the write on the returned value, and it travels
the storage edges back to the window).  A copy of the window would take the write, so it must
stay the view itself, aligned, or the kernel is rejected."""

from __future__ import annotations

import pytest

import egraph_tiles as et
from dslkit import kernel, rejection
from simkit import inputs_for, unsound_because

PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], p: pl.Tensor[[16, 64], pl.FP32], "
          "flag: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
BODY = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
pt = pl.tile.load(p, [0, 0], [1, 8], target_memory=pl.Mem.Vec)
r = self.g(local, flag)
pl.tile.assemble(r, pt, [0, 0])
pl.store(local, [0, 0], out)
return out"""
G = """
    @pl.function(type=pl.FunctionType.InCore)
    def g(self, t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec], flag: pl.Scalar[pl.INDEX]) -> pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]:
        s1 = pl.tile.slice(t, [1, 8], [1, {col}])
{route}
"""
#: how ``g`` hands ``s1`` back (its result named ``m``)
ROUTES = {
    "if-merge": """        s2 = pl.tile.slice(t, [1, 8], [2, {col}])
        if flag > 0:
            m = pl.yield_(s1)
        else:
            m = pl.yield_(s2)
        return m""",
    "loop-carry": """        for i, (c,) in pl.range(2, init_values=(s1,)):
            m = pl.yield_(c)
        return m""",
    "set-validshape": """        m = pl.tile.set_validshape(s1, [1, 4])
        return m""",
}


def program(route: str, col: int) -> et.ir.Program:
    callee = G.format(col=col, route=ROUTES[route].format(col=col))
    return et.verify_program(et.parse_program(kernel(PARAMS, BODY, "pl.Tensor[[16, 64], pl.FP32]",
                                                     more=callee)))


@pytest.mark.parametrize("route", ROUTES)
def test_an_unaligned_window_a_returned_value_names_is_rejected_when_a_caller_writes_it(route):
    # (row 1, column 1 of t is 260 B in; before, g copied it where it was handed on, and the
    # caller's write landed in the copy)
    p = program(route, col=1)
    assert "in function 'g', slice 's1'" in rejection(p)
    assert "written in place by the return" in rejection(p)
    assert unsound_because(lambda q: q, p, inputs_for(p), {"flag": 1}) is not None


@pytest.mark.parametrize("route", ROUTES)
def test_an_aligned_window_a_returned_value_names_stays_a_view_the_callers_write_reaches(route):
    # (column 8: 288 B in)
    p = program(route, col=8)
    et.assert_structural_equal(et.optimize(p), p)
    for flag in (0, 1):
        assert unsound_because(et.optimize, p, inputs_for(p), {"flag": flag}) is None


COLX = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
r = self.g(local, flag)
gv = pl.tile.load(p, [0, 0], [1, 6], target_memory=pl.Mem.Vec)
ce = pl.tile.col_expand_add(r, gv)
pl.store(ce, [0, 0], out)
return out"""
CARRY = """
    @pl.function(type=pl.FunctionType.InCore)
    def g(self, t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec], flag: pl.Scalar[pl.INDEX]) -> pl.Tile[[5, 6], pl.FP32, pl.Mem.Vec]:
        {window}
        for i, (c,) in pl.range(1, init_values=({name},)):
            cs = pl.yield_(c)
        return cs
"""


def test_a_window_a_returned_carry_names_is_copied_for_a_callers_col_expand():
    # (a 5 x 6 window of 64-wide rows is no identity layout: col_expand_add would repack it over
    # its source; the callers' use of the result is the carry's, so the window is copied where
    # it enters the carry.  Before, it entered as itself and the repack corrupted t.)
    def prog(window: str, name: str) -> et.ir.Program:
        return et.verify_program(et.parse_program(kernel(
            PARAMS, COLX, "pl.Tensor[[16, 64], pl.FP32]", more=CARRY.format(window=window, name=name))))

    p = prog("s = pl.tile.slice(t, [5, 6], [3, 0])", "s")
    expected = prog("s_ext = pl.tile.extract(t, 3, 0, shape=[5, 6], target_memory=pl.Mem.Vec)",
                    "s_ext")
    et.assert_structural_equal(et.optimize(p), expected)
    assert unsound_because(et.optimize, p, inputs_for(p), {"flag": 0}) is None
