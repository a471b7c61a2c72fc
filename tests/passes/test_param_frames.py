"""A program function's tile parameter that the function only takes windows of, and that every
call passes at the same place (``ir.frames``), is judged where the argument lies: its pitch and
its first byte, not a dense, aligned tile of its own.  The callers then pass the argument as it
is.  Other parameters keep the dense-and-aligned assumption, which their callers make true by
copying the window for the call."""

from __future__ import annotations

import pytest

import egraph_tiles as et
from dslkit import kernel, rejection
from egraph_tiles.ir.frames import Frame, param_frames
from simkit import inputs_for, unsound_because

PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], y: pl.Tensor[[16, 12], pl.FP32], "
          "p: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
PINNED = ("root: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec, pl.MemRef(16)] = "
          "pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)")
ROOT12 = "root = pl.tile.load(y, [0, 0], [16, 12], target_memory=pl.Mem.Vec)"


def program(body: str, callees: str) -> et.ir.Program:
    text = kernel(PARAMS, body + "\nreturn out", "pl.Tensor[[16, 64], pl.FP32]", more=callees)
    return et.verify_program(et.parse_program(text))


def verdicts(p: et.ir.Program) -> tuple[str | None, str | None]:
    """Why ``p`` as written and as optimized go wrong on the hardware model (None: right)."""
    ins = inputs_for(p)
    return unsound_because(lambda q: q, p, ins, {}), unsound_because(et.optimize, p, ins, {})


COL8 = """
    @pl.function(type=pl.FunctionType.InCore)
    def col8(self, t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[4, 8], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [4, 8], [0, {col}])
        y = pl.tile.muls(s, 2.0)
        return y
"""
READ_COL8 = PINNED + """
r = self.col8(root)
pl.store(r, [0, 0], out)"""


def test_a_tile_at_a_memref_offset_passed_to_a_function_is_judged_at_its_start():
    # column 8 of the tile is 16 + 32 = 48 B in, not the 32 B of a tile of the callee's own:
    # the callee copies it (before frames it kept the view, and tile.muls faulted)
    p = program(READ_COL8, COL8.format(col=8))
    expected = program(READ_COL8, COL8.format(col=8).replace(
        "s = pl.tile.slice(t, [4, 8], [0, 8])\n        y = pl.tile.muls(s, 2.0)",
        "s_ext = pl.tile.extract(t, 0, 8, shape=[4, 8], target_memory=pl.Mem.Vec)\n"
        "        y = pl.tile.muls(s_ext, 2.0)"))
    et.assert_structural_equal(et.optimize(p), expected)
    before, after = verdicts(p)
    assert before.startswith("hardware fault MisalignedAccess: tile.muls") and after is None


def test_a_window_of_a_tile_at_a_memref_offset_that_lands_aligned_stays_a_view():
    # column 4 of the tile is 16 + 16 = 32 B in: aligned where it lies
    p = program(READ_COL8, COL8.format(col=4))
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


NESTED = """
    @pl.function(type=pl.FunctionType.InCore)
    def outer(self, t: pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]:
        w = pl.tile.slice(t, [2, 2], [0, 4])
        u = self.inner(w)
        return u

    @pl.function(type=pl.FunctionType.InCore)
    def inner(self, t: pl.Tile[[2, 2], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [1, 1], [1, 0])
        return s
"""


def test_a_row_two_functions_hand_back_of_an_unaligned_window_is_written_where_it_lies():
    # w is 4 B into root's row 1 (52 B in); outer takes columns 4-5 of it, inner row 1 of that:
    # row 2, column 8 of root, 2 x 48 + 32 = 128 B in, aligned; the write through the result
    # lands there.  (Before frames, outer judged its window at 16 B, in a tile of its own, and
    # rejected the kernel.)
    p = program(ROOT12 + """
w = pl.tile.slice(root, [2, 8], [1, 4])
r = self.outer(w)
pt = pl.tile.load(p, [0, 0], [1, 1], target_memory=pl.Mem.Vec)
pl.tile.assemble(r, pt, [0, 0])
pl.store(root, [0, 0], out)""", NESTED)
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


def test_the_frames_of_nested_functions_compose():
    p = program(ROOT12 + """
w = pl.tile.slice(root, [2, 8], [1, 4])
r = self.outer(w)
pl.store(r, [0, 0], out)""", NESTED)
    # (FP32 rows 12 elements apart: 384 bits; w at 48 + 16 = 64 B, inner's window 16 B further)
    assert param_frames(p) == {("outer", 0): Frame((384, 32), 64), ("inner", 0): Frame((384, 32), 80)}


ROW1 = """
    @pl.function(type=pl.FunctionType.InCore)
    def row1(self, t: pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [1, 8], [1, 0])
        return s
"""


def test_a_function_called_at_two_pitches_is_judged_in_what_they_share():
    # v (32-byte rows) and w (48-byte rows) disagree on where row 1 lies: the frame knows only
    # that rows are a multiple of 16 B (4 elements) apart, so row 1 is not provably aligned in
    # both, and row1 returns a copy of it (32 B; the caller no longer copies w, 64 B)
    body = ROOT12 + """
v = pl.tile.load(p, [0, 0], [2, 8], target_memory=pl.Mem.Vec)
a = self.row1(v)
ya = pl.tile.muls(a, 2.0)
w = pl.tile.slice(root, [2, 8], [0, 0])
r = self.row1(w)
y = pl.tile.muls(r, 2.0)
pl.store(y, [0, 0], out)"""
    p = program(body, ROW1)
    assert param_frames(p) == {("row1", 0): Frame((128, 32), 0, row_exact=False,
                                                  calls=((256, 32, 0), (384, 32, 0)))}
    expected = program(body, ROW1.replace(
        "s = pl.tile.slice(t, [1, 8], [1, 0])\n        return s",
        "s_ext = pl.tile.extract(t, 1, 0, shape=[1, 8], target_memory=pl.Mem.Vec)\n"
        "        return s_ext"))
    et.assert_structural_equal(et.optimize(p), expected)
    assert verdicts(p)[1] is None


def test_a_row_aligned_at_every_call_of_a_function_stays_a_view():
    # rows 64 (256 B) and 8 (32 B) elements apart: row 1 is a multiple of 32 B in at both calls
    body = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
v = pl.tile.load(p, [0, 0], [2, 8], target_memory=pl.Mem.Vec)
a = self.row1(v)
ya = pl.tile.muls(a, 2.0)
w = pl.tile.slice(local, [2, 8], [4, 8])
r = self.row1(w)
pt = pl.tile.load(p, [0, 0], [1, 8], target_memory=pl.Mem.Vec)
pl.tile.assemble(r, pt, [0, 0])
pl.store(local, [0, 0], out)"""
    p = program(body, ROW1)
    # (w starts 4 x 256 + 32 = 1,056 B in, v at 0: both 0 modulo 32)
    assert param_frames(p) == {("row1", 0): Frame((256, 32), 0, row_exact=False, residue=True,
                                                  calls=((256, 32, 0), (2048, 32, 0)))}
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


TWO_FRAMES = ROOT12 + """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
w1 = pl.tile.slice(root, [2, 8], [0, 4])
r1 = self.row1(w1)
w2 = pl.tile.slice(local, [2, 8], [0, {col}])
r2 = self.row1(w2)
pt = pl.tile.load(p, [0, 0], [1, 8], target_memory=pl.Mem.Vec)
pl.tile.assemble(r1, pt, [0, 0])
y2 = pl.tile.muls(r2, 2.0)
pl.store(y2, [8, 0], out)
pl.store(root, [0, 0], out)"""


def test_a_row_aligned_where_each_call_puts_it_stays_a_view_though_the_calls_share_no_alignment():
    # row 1 of w1 is 16 + 48 = 64 B in, of w2 256 B: aligned at both calls, though all they
    # share is rows a multiple of 16 B apart from a start a multiple of 16 B (each call's frame
    # is judged, rules.layout ``aligned-in-every-call-frame``); the write lands in root
    p = program(TWO_FRAMES.format(col=0), ROW1)
    assert param_frames(p)[("row1", 0)].calls == ((384, 32, 16), (2048, 32, 0))
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


def test_a_row_unaligned_where_one_call_puts_it_is_rejected():
    # (w2 at column 4: its row 1 is 256 + 16 = 272 B in; the write through r1 needs the view)
    p = program(TWO_FRAMES.format(col=4), ROW1)
    assert "in function 'row1', slice 's'" in rejection(p)
    assert unsound_because(lambda q: q, p, inputs_for(p), {}) is not None


def test_a_window_of_a_window_is_judged_where_each_call_puts_it():
    # row 1, column 4 of w1 (root at 0) is 48 + 16 = 64 B in, of w2 (local at 16 B) 16 + 256
    # + 16 = 288 B: aligned at both calls; the window of a window folds into one
    callee = ROW1.replace("-> pl.Tile[[1, 8]", "-> pl.Tile[[1, 4]").replace(
        "s = pl.tile.slice(t, [1, 8], [1, 0])",
        "s0 = pl.tile.slice(t, [2, 4], [0, 4])\n        s = pl.tile.slice(s0, [1, 4], [1, 0])")
    body = TWO_FRAMES.format(col=4).replace("[2, 8], [0, 4])\nr1", "[2, 8], [0, 0])\nr1") \
        .replace("[1, 8], target", "[1, 4], target")
    p = program(body, callee)
    expected = program(body, callee.replace(
        "s0 = pl.tile.slice(t, [2, 4], [0, 4])\n        s = pl.tile.slice(s0, [1, 4], [1, 0])",
        "s = pl.tile.slice(t, [1, 4], [1, 4])"))
    et.assert_structural_equal(et.optimize(p), expected)
    assert verdicts(p) == (None, None)


def test_a_function_that_reads_its_parameter_as_a_whole_keeps_the_dense_assumption():
    callee = """
    @pl.function(type=pl.FunctionType.InCore)
    def dbl(self, t: pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]:
        y = pl.tile.muls(t, 2.0)
        return y
"""
    body = ROOT12 + """
{w}
r = self.dbl({arg})
pl.store(r, [0, 0], out)"""
    p = program(body.format(w="w = pl.tile.slice(root, [2, 8], [1, 0])", arg="w"), callee)
    assert param_frames(p) == {}
    expected = program(body.format(w="w_ext = pl.tile.extract(root, 1, 0, shape=[2, 8], "
                                      "target_memory=pl.Mem.Vec)", arg="w_ext"), callee)
    et.assert_structural_equal(et.optimize(p), expected)


SUB33 = """
    @pl.function(type=pl.FunctionType.InCore)
    def sub(self, t: pl.Tile[[4, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[3, 3], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [3, 3], [0, 2])
        return s
"""
WRITE_SUB33 = """
win = pl.tile.slice(root, [4, 8], [5, 2])
{hand}
r = self.sub(v)
pt = pl.tile.load(p, [0, 0], [3, 3], target_memory=pl.Mem.Vec)
pl.tile.assemble(r, pt, [0, 0])
pl.store(root, [0, 0], out)"""


def test_a_window_viewed_before_it_is_passed_to_a_framed_function_stays_a_view():
    # win is 248 B in (unaligned); sub's window of its view, 8 B further, is aligned and
    # written.  A copy of win where it escapes into the view would move what sub writes.
    p = program(ROOT12 + WRITE_SUB33.format(hand="v = pl.tile.set_validshape(win, [4, 8])"), SUB33)
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


def test_an_alias_of_a_window_passed_to_a_framed_function_stays_a_view():
    # (an unaligned window's alias is otherwise copied where it is made)
    p = program(ROOT12 + WRITE_SUB33.format(hand="v = win"), SUB33)
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


def test_an_unaligned_window_a_framed_function_hands_back_to_a_writer_is_rejected_naming_the_frame():
    p = program(ROOT12 + WRITE_SUB33.replace("[5, 2]", "[5, 3]").format(hand="v = win"), SUB33)
    msg = rejection(p)
    for piece in ("in function 'sub', slice 's'", "written in place by the return",
                  "Parameter 't' is where every call passes it: rows 12 elements apart, its "
                  "first element at byte 252"):
        assert piece in msg, (piece, msg)
    assert unsound_because(lambda q: q, p, inputs_for(p), {}) is not None


def test_a_call_whose_result_nothing_reads_does_not_frame_a_function_that_only_hands_back():
    # row1 does nothing with its tile but hand row 1 back: the call on the pinned tile, whose
    # result nothing reads, touches no byte, so w's place alone frames row1 (row 1 of w is
    # 96 B in, aligned, and written)
    body = ROOT12 + """
v: pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec, pl.MemRef(16400)] = pl.tile.load(p, [0, 0], [2, 8], target_memory=pl.Mem.Vec)
a = self.row1(v)
w = pl.tile.slice(root, [2, 8], [1, 0])
r = self.row1(w)
pt = pl.tile.load(p, [0, 0], [1, 8], target_memory=pl.Mem.Vec)
pl.tile.assemble(r, pt, [0, 0])
pl.store(root, [0, 0], out)"""
    p = program(body, ROW1)
    assert param_frames(p) == {("row1", 0): Frame((384, 32), 48)}
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


def test_calls_at_starts_that_agree_modulo_the_alignment_frame_the_residue():
    # 16 B and 16 + 32 x 8 B: both 16 modulo 32, so column 4 (16 B further) is aligned at both
    callee = COL8.format(col=4).replace("[16, 64]", "[4, 16]")
    body = """
a: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec, pl.MemRef(16)] = pl.tile.load(x, [0, 0], [4, 16], target_memory=pl.Mem.Vec)
b: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec, pl.MemRef(272)] = pl.tile.load(x, [4, 0], [4, 16], target_memory=pl.Mem.Vec)
ra = self.col8(a)
rb = self.col8(b)
r = pl.tile.add(ra, rb)
pl.store(r, [0, 0], out)"""
    p = program(body, callee)
    assert param_frames(p) == {("col8", 0): Frame((512, 32), 16, residue=True)}
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


def test_one_element_a_function_writes_of_an_unaligned_window_reaches_the_window():
    # tile.write stores one element where it lies (no alignment to prove): poke's parameter is
    # framed, and w, 12 B in, is passed as it is (a copy would take the write)
    callee = """
    @pl.function(type=pl.FunctionType.InCore)
    def poke(self, t: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]):
        pl.tile.write(t, [1, 2], 7.0)
"""
    p = program("""
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [16, 8], [0, 3])
self.poke(w)
pl.store(local, [0, 0], out)""", callee)
    assert param_frames(p) == {("poke", 0): Frame((2048, 32), 12)}
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


ROW2 = """
    @pl.function(type=pl.FunctionType.InCore)
    def row2(self, t: pl.Tile[[8, 12], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[3, 12], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [3, 12], [2, 0])
        return s

    @pl.function(type=pl.FunctionType.InCore)
    def ident(self, t: pl.Tile[[8, 12], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[8, 12], pl.FP32, pl.Mem.Vec]:
        return t

    @pl.function(type=pl.FunctionType.InCore)
    def pair(self, t: pl.Tile[[8, 12], pl.FP32, pl.Mem.Vec], u: pl.Tile[[8, 12], pl.FP32, pl.Mem.Vec]
             ) -> tuple[pl.Tile[[8, 12], pl.FP32, pl.Mem.Vec], pl.Tile[[8, 12], pl.FP32, pl.Mem.Vec]]:
        return u, t
"""
#: win (12 of 64 columns, 7 rows and 8 columns in: 1,824 B) reaches row2 through ``{route}``; row 2
#: of it is 512 B further, aligned, and written
HANDED = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
win = pl.tile.slice(local, [8, 12], [7, 8])
{route}
r = self.row2(t=v)
pt = pl.tile.load(p, [0, 0], [3, 12], target_memory=pl.Mem.Vec)
pl.tile.assemble(r, pt, [0, 0])
pl.store(local, [0, 0], out)"""


def test_a_window_a_function_returns_by_keyword_is_passed_as_it_is_to_a_framed_function():
    # (ident(t=win) binds win to the parameter ident returns: its result is win itself)
    p = program(HANDED.format(route="v = self.ident(t=win)"), ROW2)
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


def test_a_window_a_function_returns_in_a_tuple_keeps_its_place_for_a_framed_function():
    # (pair[1] is win itself, at its own place: row2 is framed by it)
    p = program(HANDED.format(route="pr = self.pair(u=local, t=win)\nv = pr[1]")
                .replace("[16, 64], target_memory=pl.Mem.Vec)\nwin", "[16, 64], target_memory="
                         "pl.Mem.Vec)\nfr = pl.tile.load(x, [0, 0], [8, 12], target_memory=pl.Mem.Vec)\nwin")
                .replace("u=local", "u=fr"), ROW2)
    assert param_frames(p)[("row2", 0)] == Frame((2048, 32), 1824)
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)


PINNED_PARAM = """
    @pl.function(type=pl.FunctionType.InCore)
    def g(self, t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec, pl.MemRef(16)]) -> pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]:
        z = pl.tile.muls(t, 1.0)
        {window}
        return r
"""


def test_a_memref_a_parameters_type_names_is_not_where_its_calls_put_it():
    # g reads t whole (no frame): t is the dense, aligned tile its callers make it, so column 4
    # is 16 B in and copied.  Before, 16 + 16 = 32 B was judged aligned, and tile.muls faulted.
    body = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
r = self.g(local)
pl.tile.assemble(local, r, [4, 0])
pl.store(local, [0, 0], out)"""
    p = program(body, PINNED_PARAM.format(
        window="s = pl.tile.slice(t, [1, 8], [0, 4])\n        r = pl.tile.muls(s, 2.0)"))
    expected = program(body, PINNED_PARAM.format(
        window="s_ext = pl.tile.extract(t, 0, 4, shape=[1, 8], target_memory=pl.Mem.Vec)\n"
               "        r = pl.tile.muls(s_ext, 2.0)"))
    et.assert_structural_equal(et.optimize(p), expected)
    assert verdicts(p)[1] is None


WRAP = """
    @pl.function(type=pl.FunctionType.InCore)
    def wrap(self, t: pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]:
        r = self.row1(t)
        return r
"""


def test_a_parameter_passed_on_whole_frames_the_function_it_is_passed_to_where_its_callers_pass_it():
    # wrap does nothing with t but pass it to row1 (a framed parameter: so t is framed too): its
    # caller passes w as it is, so row1's tile lies where w does (52 B in, 48-byte rows) and
    # row 1 of it, 100 B in, is copied for the read.  (Before, row1 was framed at t's own start, 0: row 1 was read as aligned, and
    # tile.muls faulted.)
    body = ROOT12 + """
w = pl.tile.slice(root, [2, 8], [1, 1])
r = self.wrap(w)
y = pl.tile.muls(r, 2.0)
pl.store(y, [0, 0], out)"""
    p = program(body, WRAP + ROW1)
    assert param_frames(p) == {("wrap", 0): Frame((384, 32), 52), ("row1", 0): Frame((384, 32), 52)}
    assert verdicts(p)[1] is None


@pytest.mark.parametrize("callees", [WRAP + ROW1, ROW1 + WRAP], ids=["wrap-first", "row1-first"])
def test_a_row_written_through_a_function_passing_its_parameter_on_stays_a_view_where_aligned(callees):
    # (w at 16 B: row 1 of it is 64 B in, aligned; the write through wrap's result lands there.
    # The functions' order does not matter: each frame is settled once its cycle closes.)
    p = program(ROOT12 + """
w = pl.tile.slice(root, [2, 8], [0, 4])
r = self.wrap(w)
pt = pl.tile.load(p, [0, 0], [1, 8], target_memory=pl.Mem.Vec)
pl.tile.assemble(r, pt, [0, 0])
pl.store(root, [0, 0], out)""", callees)
    et.assert_structural_equal(et.optimize(p), p)
    assert verdicts(p) == (None, None)
