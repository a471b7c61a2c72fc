"""A window a function returns to a caller that takes windows of the result — judged in the
caller where they lie as written (``ir.storage``: the call's result is that window of the
argument) — or that hands the result on to a framed parameter (``ir.frames``), must be returned
as the window itself: a copy would move what those windows name (``egraph.calls``
``result_windowed``; the return stays a view, asked only what the callers do with the result as
a whole)."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import kernel, rejection
from simkit import inputs_for, unsound_because

PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], p: pl.Tensor[[64, 64], pl.FP32], "
          "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
#: ``cols`` returns columns 6-8 of row 0: 24 B in, unaligned
COLS = """
    @pl.function(type=pl.FunctionType.InCore)
    def cols(self, t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 3], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [1, 3], [0, 6])
        return s
"""
THIRD = """
    @pl.function(type=pl.FunctionType.InCore)
    def third(self, t: pl.Tile[[1, 3], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [1, 1], [0, 2])
        return s
"""


def program(body: str, callees: str) -> et.ir.Program:
    text = kernel(PARAMS, "root = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)\n"
                  + body + "\nreturn out", "pl.Tensor[[16, 64], pl.FP32]", more=callees)
    return et.verify_program(et.parse_program(text))


def verdicts(p) -> tuple[str | None, str | None]:
    return (unsound_because(lambda q: q, p, inputs_for(p), {}),
            unsound_because(et.optimize, p, inputs_for(p), {}))


def test_a_returned_window_the_caller_takes_a_window_of_is_returned_as_the_view():
    # w, column 2 of cols' window, is 32 B in: the caller keeps it a view; cols returning a copy
    # of its unaligned window (as it did) put w 8 B into the copy, and tile.muls faulted
    p = program("cr = self.cols(root)\nw = pl.tile.slice(cr, [1, 1], [0, 2])\n"
                "y = pl.tile.muls(w, 2.0)\npl.store(y, [0, 0], out)", COLS)
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


def test_a_returned_window_handed_to_a_framed_function_is_returned_as_the_view():
    # third is framed by cr, where cols' window lies (24 B in): its column 2 is 32 B in
    p = program("cr = self.cols(root)\nr = self.third(cr)\ny = pl.tile.muls(r, 2.0)\n"
                "pl.store(y, [0, 0], out)", COLS + THIRD)
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


def test_a_write_through_a_framed_function_of_a_returned_window_lands_where_it_lies():
    p = program("cr = self.cols(root)\nr = self.third(cr)\n"
                "pt = pl.tile.load(p, [0, 0], [1, 1], target_memory=pl.Mem.Vec)\n"
                "pl.tile.assemble(r, pt, [0, 0])\npl.store(root, [0, 0], out)", COLS + THIRD)
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


def test_a_returned_window_the_caller_also_reads_whole_is_still_judged_for_that_read():
    # the caller reads cr itself in tile.muls (24 B in: unaligned) and takes a window of it:
    # a copy would move the window, a view faults the read
    p = program("cr = self.cols(root)\ny = pl.tile.muls(cr, 2.0)\n"
                "w = pl.tile.slice(cr, [1, 1], [0, 2])\nz = pl.tile.muls(w, 2.0)\n"
                "pl.store(y, [0, 0], out)", COLS)
    msg = rejection(p)
    for piece in ("in function 'cols', slice 's'", "flows into cols's result (returned at line 18), "
                  "and windows are taken of that (by a caller", "read or written as a whole"):
        assert piece in msg, (piece, msg)
    assert unsound_because(lambda q: q, p, inputs_for(p), {}) is not None


OWN = """
    @pl.function(type=pl.FunctionType.InCore)
    def own(self, y: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]:
        big = pl.tile.load(y, [0, 0], [4, 16], target_memory=pl.Mem.Vec)
        s = pl.tile.slice(big, [2, 8], [0, 1])
        return {ret}
"""
READ_ROW1 = """
r = self.own(p)
w = pl.tile.slice(r, [1, 8], [1, 0])
m = pl.tile.muls(w, 2.0)
pl.tile.assemble(root, m, [4, 0])
pl.store(root, [0, 0], out)"""


def test_a_window_of_the_functions_own_tile_is_returned_as_a_tile_of_its_own():
    # the caller knows nothing of where own's tile lies: it takes the result for a fresh, dense,
    # aligned tile, and own makes that true (s is 4 B in, 64-byte rows: copied).  Before, own
    # returned the view, and row 1 of it (68 B into big) faulted in tile.muls.
    p = program(READ_ROW1, OWN.format(ret="s"))
    expected = program(READ_ROW1, OWN.format(ret="s_ext").replace(
        "s = pl.tile.slice(big, [2, 8], [0, 1])",
        "s_ext = pl.tile.extract(big, 0, 1, shape=[2, 8], target_memory=pl.Mem.Vec)"))
    et.assert_structural_equal(et.optimize(p), expected)
    assert verdicts(p)[1] is None
