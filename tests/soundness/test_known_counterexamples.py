"""Counterexamples the nightly route properties found, kept as specifications until they are
fixed.  Each is marked ``xfail(strict=True)``: it fails today, and the day the optimizer gets it
right the test passes, strict xfail turns that into a failure, and the marker must go.

The verdict is the route property's: the optimizer either rejects a program that the hardware
model shows unsound as written, or its output runs on the hardware model exactly as the program
runs ideally.  A false rejection (a sound program rejected) fails too."""


import egraph_tiles as et
from simkit import inputs_for, unsound_because

HEAD = """import pypto.language as pl


@pl.program
class Routes:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Tensor[[16, 12], pl.FP32],
               p: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
               src: pl.Out[pl.Tensor[[16, {w}], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
"""
TAIL = """        pt = pl.tile.load(p, [0, 0], [1, 1], target_memory=pl.Mem.Vec)
        pl.tile.assemble({written}, pt, [0, 0])
        pl.store(root, [0, 0], src)
        return out
"""
SUB = """
    @pl.function(type=pl.FunctionType.InCore)
    def sub(self, t: pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [1, 1], [1, 0])
        return s
"""
ROOT12 = "        root = pl.tile.load(y, [0, 0], [16, 12], target_memory=pl.Mem.Vec)\n"
ROOT64 = "        root = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)\n"


def _judge(body: str, written: str, width: int, callee: str = "") -> None:
    p = et.verify_program(et.parse_program(HEAD.format(w=width) + body
                                           + TAIL.format(written=written) + callee))
    ins = inputs_for(p)
    try:
        opt = et.optimize(p)
    except ValueError as e:
        assert unsound_because(lambda q: q, p, ins, {}) is not None, f"false rejection: {e}"
        return
    assert unsound_because(lambda q: opt, p, ins, {}) is None


def test_write_through_the_result_of_a_call_on_an_alias_of_a_window_is_not_lost():
    _judge(ROOT12 + "        win1 = pl.tile.slice(root, [2, 8], [0, 0])\n"
                    "        al2 = win1\n"
                    "        cr3 = self.sub(al2)\n", "cr3", 12, SUB)


def test_write_through_a_slice_of_a_set_validshape_view_of_a_window_is_not_lost():
    _judge(ROOT64 + "        win1 = pl.tile.slice(root, [1, 4], [0, 7])\n"
                    "        sv2 = pl.tile.set_validshape(win1, [1, 4])\n"
                    "        vv3 = pl.tile.slice(sv2, [1, 1], [0, 1])\n", "vv3", 64)


def test_write_through_an_aligned_slice_a_callee_takes_of_an_unaligned_window_is_accepted():
    _judge(ROOT12 + "        win1 = pl.tile.slice(root, [2, 8], [1, 0])\n"
                    "        cr2 = self.sub(win1)\n", "cr2", 12, SUB)


def test_write_through_the_result_of_a_one_trip_loop_ignores_its_initializer():
    _judge(ROOT64 + "        win1 = pl.tile.slice(root, [1, 1], [0, 1])\n"
                    "        for i2, (cv3,) in pl.range(1, init_values=(win1,)):\n"
                    "            w4 = pl.tile.slice(root, [1, 1], [0, 0])\n"
                    "            cres4 = pl.yield_(w4)\n", "cres4", 64)


COL3 = """
    @pl.function(type=pl.FunctionType.InCore)
    def col3(self, t: pl.Tile[[1, 4], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [1, 1], [0, 3])
        return s
"""


def test_vector_read_of_an_aligned_element_a_callee_hands_back_of_a_valid_shape_slice_is_accepted():
    _judge(ROOT12 + "        win1 = pl.tile.slice(root, [1, 4], [1, 1], valid_shape=[1, 1])\n"
                    "        cr2 = self.col3(win1)\n"
                    "        y3 = pl.tile.muls(cr2, 2.0)\n", "y3", 12, COL3)


SUB21 = """
    @pl.function(type=pl.FunctionType.InCore)
    def sub21(self, t: pl.Tile[[2, 1], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [1, 1], [1, 0])
        return s
"""


def test_write_through_a_row_a_callee_hands_back_of_a_column_window_is_accepted():
    # (the callee judges row 1 of its parameter where the caller's window puts it, 256 B in,
    # not at the 4 B of a dense [2, 1] tile of its own: its parameter is framed by its call)
    _judge(ROOT64 + "        win1 = pl.tile.slice(root, [2, 1], [0, 0])\n"
                    "        cr2 = self.sub21(win1)\n", "cr2", 64, SUB21)
