"""A reshape reads its operand from its base as a dense tile of the new shape, so a window that
is not dense (more than one row, not the full width) is copied before it is reshaped; a dense,
aligned window stays a view; one written through the reshape cannot be copied and is rejected.
Each before program is run on the hardware model: the copied ones miscompute before, not after."""

from __future__ import annotations

import numpy as np
import pytest

import egraph_tiles as et
from egraph_tiles.sim import run_hardware, run_ideal
from dslkit import rejection
from simkit import inputs_for

HEAD = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[{o}], pl.FP32]]) -> pl.Tensor[[{o}], pl.FP32]:
        xv = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
"""


def prog(*lines: str, out: str) -> et.ir.Program:
    text = HEAD.format(o=out) + "".join(f"        {x}\n" for x in lines) + "        return out\n"
    return et.verify_program(et.parse_program(text, filename="kernel.py"))


def right_on_hardware(p: et.ir.Program, q: et.ir.Program | None = None) -> bool:
    ins = inputs_for(p, 3)
    return np.array_equal(run_ideal(p, ins, {})["out"], run_hardware(q or p, ins, {})["out"])


def body(p: et.ir.Program) -> list[str]:
    return [ln.strip() for ln in et.print_program(p).splitlines()][-5:-1]


def test_a_window_that_is_not_dense_is_copied_before_its_reshape():
    p = prog("q = pl.tile.slice(xv, [16, 16], [0, 16])", "r = pl.tile.reshape(q, [8, 32])",
             "y = pl.tile.add(r, r)", "out = pl.store(y, [0, 0], out)", out="8, 32")
    q = et.optimize(p)
    assert body(q) == [
        "q_ext: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.extract(xv, 0, 16, shape=[16, 16], "
        "target_memory=pl.Mem.Vec)",
        "r: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(q_ext, [8, 32])",
        "y: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(r, r)",
        "out_1: pl.Tensor[[8, 32], pl.FP32] = pl.store(y, [0, 0], out)"]
    assert not right_on_hardware(p) and right_on_hardware(p, q)


def test_a_same_shape_reshape_of_a_window_that_is_not_dense_is_copied_too():
    p = prog("q = pl.tile.slice(xv, [4, 16], [0, 0])", "r = pl.tile.reshape(q, [4, 16])",
             "out = pl.store(r, [0, 0], out)", out="4, 16")
    q = et.optimize(p)
    assert "pl.tile.reshape(q_ext, [4, 16])" in et.print_program(q)
    assert not right_on_hardware(p) and right_on_hardware(p, q)


@pytest.mark.parametrize("shape, offset, out", [([8, 64], [8, 0], "16, 32"),
                                                ([1, 32], [3, 8], "2, 16")])
def test_a_dense_aligned_window_stays_a_view_under_its_reshape(shape, offset, out):
    # full width, or a single row at an aligned address: before == after
    p = prog(f"q = pl.tile.slice(xv, {shape}, {offset})", f"r = pl.tile.reshape(q, [{out}])",
             "out = pl.store(r, [0, 0], out)", out=out)
    assert et.print_program(et.optimize(p)) == et.print_program(p)
    assert right_on_hardware(p)


def test_a_window_that_is_not_dense_written_through_its_reshape_is_rejected():
    p = prog("q = pl.tile.slice(xv, [16, 16], [0, 16])", "r = pl.tile.reshape(q, [8, 32])",
             "v = pl.tile.set_validshape(r, [4, 32])",
             "pl.tile.fillpad_inplace(v, pad_value=pl.PadValue.zero)",
             "out = pl.store(xv, [0, 0], out)", out="16, 64")
    msg = rejection(p)
    for piece in ("slice 'q' (tile.slice at line 8) is written in place by tile.fillpad_inplace "
                  "at line 11 (through 'v': the view tile.reshape, then the view "
                  "tile.set_validshape)",
                  "reads it as a dense tile of its own, not provably dense: one row or the full "
                  "width", "can be neither copied"):
        assert piece in msg, (piece, msg)
    assert not right_on_hardware(p)


CALLEE = """
    @pl.function(type=pl.FunctionType.InCore)
    def f(self, t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec]:
        r = pl.tile.reshape(t, [8, 32])
        y = pl.tile.add(r, r)
        return y
"""


def test_a_window_passed_to_a_function_that_reshapes_it_is_copied_before_the_call():
    # the callee reads its parameter from its base as a dense [8, 32] tile (egraph.calls: a
    # reshape is a "sliced" use, so the window must be dense, aligned, at a constant offset)
    text = (HEAD.format(o="8, 32") + "        q = pl.tile.slice(xv, [16, 16], [0, 16])\n"
            "        y = self.f(q)\n        out = pl.store(y, [0, 0], out)\n        return out\n"
            + CALLEE)
    p = et.verify_program(et.parse_program(text, filename="kernel.py"))
    q = et.optimize(p)
    lines = [ln.strip() for ln in et.print_program(q).splitlines()]
    i = lines.index("y: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = self.f(q_ext)")
    assert lines[i - 1] == ("q_ext: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.extract(xv, 0, "
                            "16, shape=[16, 16], target_memory=pl.Mem.Vec)")
    assert not right_on_hardware(p) and right_on_hardware(p, q)
