"""A shape-changing ``tile.reshape`` of an Acc (L0C) tile is not a zero-copy view: the
device keeps the bytes and reads them as the NZ blocks of the new shape, so a value read or
written through it is another element of the source.  Such a reshape is rejected as soon as an op
reads or writes it (directly, or through aliases, loop carries, if results); a same-shape reshape,
one whose NZ layout puts every element at the same address, and one nothing uses are kept.  Every rejected kernel is confirmed on the hardware model:
it computes something else than the ideal program."""

from __future__ import annotations

import numpy as np
import pytest

import egraph_tiles as et
from egraph_tiles.ir.ops import lookup
from egraph_tiles.ir.types import MemorySpace
from egraph_tiles.sim import run_hardware, run_ideal
from dslkit import rejection
from simkit import inputs_for

HEAD = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 16], pl.FP16], b: pl.Tensor[[16, 32], pl.FP16],
               flag: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[{out}], pl.FP32]]) -> pl.Tensor[[{out}], pl.FP32]:
        a_mat = pl.tile.load(a, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        a32 = pl.tile.extract(a_mat, 0, 0, shape=[32, 16], target_memory=pl.Mem.Left)
        a16 = pl.tile.extract(a_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
        b16 = pl.tile.extract(b_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Right)
        b32 = pl.tile.extract(b_mat, 0, 0, shape=[16, 32], target_memory=pl.Mem.Right)
        acc = pl.tile.matmul(a16, b32)
"""


def prog(*lines: str, out: str = "16, 32") -> et.ir.Program:
    text = HEAD.format(out=out) + "".join(f"        {x}\n" for x in lines) + "        return out\n"
    return et.verify_program(et.parse_program(text, filename="kernel.py"))


def hardware_garbles(p: et.ir.Program, flag: int = 1) -> bool:
    ins = inputs_for(p, 5)
    return not np.array_equal(run_ideal(p, ins, {"flag": flag})["out"],
                              run_hardware(p, ins, {"flag": flag})["out"])


WHY = ("An Acc tile is stored in 16x16 NZ blocks placed by its own shape; a reshape keeps the "
       "bytes (on the device an alias of the same buffer) but reads them as the NZ blocks of the "
       "new shape, so every element read or written through 'r' is another element of 'acc' than "
       "the reshape names (silently). It is not a zero-copy view, and no copy can stand in for it "
       "(there is no Acc->Acc data path, and a matmul_acc would accumulate into the copy). Fix: "
       "accumulate into a tile of the target shape ([32, 16] FP32) from the start, or reshape the "
       "result after the accumulation, once it has left Acc (tile.move(..., "
       "target_memory=pl.Mem.Vec), or store it and reshape the loaded tile); a reshape to the "
       "same shape is fine.")


def test_matmul_acc_into_a_shape_changing_acc_reshape_is_rejected():
    p = prog("r = pl.tile.reshape(acc, [32, 16])",
             "r2 = pl.tile.matmul_acc(r, a32, b16)",
             "out = pl.store(acc, [0, 0], out)")
    assert rejection(p) == (
        "kernel.py:15:8: in function 'kernel', tile.reshape at line 15 reshapes Acc (L0C) tile "
        "'acc' ([16, 32] FP32) into 'r' ([32, 16] FP32), and 'r' reaches tile.matmul_acc at line 16, which "
        "writes back into it. " + WHY)
    assert hardware_garbles(p)


def test_matmul_acc_read_back_through_the_reshape_is_rejected():
    # the MAD writes the NZ tile of the new shape, but it accumulates onto the source's bytes
    # read in that order
    p = prog("r = pl.tile.reshape(acc, [32, 16])",
             "r2 = pl.tile.matmul_acc(r, a32, b16)",
             "out = pl.store(r2, [0, 0], out)", out="32, 16")
    assert "'r' reaches tile.matmul_acc at line 16, which writes back into it" in rejection(p)
    assert hardware_garbles(p)


def test_reading_a_shape_changing_acc_reshape_is_rejected():
    p = prog("r = pl.tile.reshape(acc, [32, 16])", "out = pl.store(r, [0, 0], out)",
             out="32, 16")
    assert "'r' reaches store at line 16, which reads it. " in rejection(p)
    assert hardware_garbles(p)


def test_an_acc_reshape_reaching_the_accumulator_through_an_if_names_the_arm():
    p = prog("if flag > 0:",
             "    r = pl.tile.reshape(acc, [32, 16])",
             "    y = pl.yield_(r)",
             "else:",
             "    z = pl.tile.matmul(a32, b16)",
             "    y = pl.yield_(z)",
             "y2 = pl.tile.matmul_acc(y, a32, b16)",
             "out = pl.store(y2, [0, 0], out)", out="32, 16")
    assert ("'y' (it holds the view through the result of the if at line 15 when it takes its "
            "then arm) reaches tile.matmul_acc at line 21, which writes back into it") in rejection(p)
    assert hardware_garbles(p, flag=1) and not hardware_garbles(p, flag=0)


def test_an_acc_reshape_carried_into_a_loop_and_aliased_is_rejected():
    p = prog("r = pl.tile.reshape(acc, [32, 16])",
             "for i, (it,) in pl.range(2, init_values=(r,)):",
             "    ita = it",
             "    c = pl.tile.matmul_acc(ita, a32, b16)",
             "    res = pl.yield_(c)",
             "out = pl.store(res, [0, 0], out)", out="32, 16")
    assert ("'ita' (it holds the view through the carry of the loop at line 16 ('it'), then an "
            "alias at line 17) reaches tile.matmul_acc at line 18") in rejection(p)
    assert hardware_garbles(p)


def test_an_acc_reshape_passed_to_a_program_function_is_rejected():
    text = HEAD.format(out="32, 16") + """        r = pl.tile.reshape(acc, [32, 16])
        r2 = self.accum(r, a32, b16)
        out = pl.store(r2, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def accum(self, w: pl.Tile[[32, 16], pl.FP32, pl.Mem.Acc],
              lt: pl.Tile[[32, 16], pl.FP16, pl.Mem.Left],
              rt: pl.Tile[[16, 16], pl.FP16, pl.Mem.Right]) -> pl.Tile[[32, 16], pl.FP32, pl.Mem.Acc]:
        w2 = pl.tile.matmul_acc(w, lt, rt)
        return w2
"""
    p = et.verify_program(et.parse_program(text, filename="kernel.py"))
    assert "'r' reaches self.accum at line 16, which passes it on" in rejection(p)
    assert hardware_garbles(p)


def test_reading_an_acc_tile_reinterpreted_as_a_narrower_dtype_is_rejected():
    # FP32 [16, 32] as FP16 [16, 64]: the device reads the bytes as FP16 NZ blocks of [16, 64]
    text = HEAD.format(out="16, 32").replace("pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> "
                                             "pl.Tensor[[16, 32], pl.FP32]",
                                             "pl.Out[pl.Tensor[[16, 64], pl.FP16]]) -> "
                                             "pl.Tensor[[16, 64], pl.FP16]")
    text += ("        r = pl.tile.reinterpret_view(acc, pl.FP16, [16, 64])\n"
             "        out = pl.store(r, [0, 0], out)\n        return out\n")
    p = et.verify_program(et.parse_program(text, filename="kernel.py"))
    assert rejection(p).startswith(
        "kernel.py:15:8: in function 'kernel', tile.reinterpret_view at line 15 reshapes Acc (L0C) "
        "tile 'acc' ([16, 32] FP32) into 'r' ([16, 64] FP16), and 'r' reaches store at line 16, "
        "which reads it.")
    assert hardware_garbles(p)


def test_a_same_shape_acc_reshape_is_kept():
    # before == after: r = reshape(acc, [16, 32]); r2 = matmul_acc(r, ...); store(acc)
    p = prog("r = pl.tile.reshape(acc, [16, 32])",
             "r2 = pl.tile.matmul_acc(r, a16, b32)",
             "out = pl.store(acc, [0, 0], out)")
    assert et.print_program(et.optimize(p)) == et.print_program(p)
    assert not hardware_garbles(p)


def test_a_shape_changing_acc_reshape_nothing_uses_is_kept():
    p = prog("r = pl.tile.reshape(acc, [32, 16])", "out = pl.store(acc, [0, 0], out)")
    assert et.print_program(et.optimize(p)) == et.print_program(p)
    assert not hardware_garbles(p)


def test_an_acc_reshape_that_keeps_the_nz_order_is_kept():
    # [16, 32] -> [1, 16, 32]: the page of a batch of one is the NZ tile itself
    p = prog("r = pl.tile.reshape(acc, [1, 16, 32])",
             "r2 = pl.tile.reshape(r, [16, 32])",
             "r3 = pl.tile.matmul_acc(r2, a16, b32)",
             "out = pl.store(acc, [0, 0], out)")
    assert et.print_program(et.optimize(p)) == et.print_program(p)
    assert not hardware_garbles(p)


def test_reshaping_after_moving_out_of_acc_is_kept():
    # the fix the message gives: the reshape reads a row-major Vec tile
    p = prog("v = pl.tile.move(acc, target_memory=pl.Mem.Vec)",
             "r = pl.tile.reshape(v, [32, 16])", "out = pl.store(r, [0, 0], out)", out="32, 16")
    assert et.print_program(et.optimize(p)) == et.print_program(p)
    assert not hardware_garbles(p)


@pytest.mark.parametrize("memory, src, out, relayout", [
    (MemorySpace.Acc, (16, 32), (32, 16), True),
    (MemorySpace.Acc, (2, 16, 32), (32, 32), True),
    (MemorySpace.Acc, (16, None), (16, None), True),
    (MemorySpace.Acc, (16, 32), (16, 32), False),
    (MemorySpace.Acc, (1, 16, 32), (16, 32), False),  # a leading batch dim of 1
    (MemorySpace.Acc, (2, 32, 16), (64, 16), False),  # 16-column pages stacked
    (MemorySpace.Vec, (16, 32), (32, 16), False),
    (MemorySpace.Mat, (16, 32), (32, 16), False),
])
def test_the_registry_says_which_reshapes_lay_the_bytes_out_afresh(memory, src, out, relayout):
    assert lookup("tile.reshape").relayouts(memory, src, out) is relayout


# ---------------------------------------------------------------------- views of Acc windows

WINDOW = "w = pl.tile.slice(acc2, [16, 32], [{r0}, 0])"


def window_prog(*lines: str, r0: int = 16) -> et.ir.Program:
    return prog("acc2 = pl.tile.matmul(a32, b32)", WINDOW.format(r0=r0), *lines)


def test_reading_a_same_shape_view_of_an_acc_window_is_rejected():
    # a [16, 32] row window of a [32, 32] accumulator: its NZ blocks are not contiguous, and the
    # view reads 16 x 32 NZ blocks from its first element
    p = window_prog("r = pl.tile.reshape(w, [16, 32])", "out = pl.store(r, [0, 0], out)")
    assert rejection(p).startswith(
        "kernel.py:17:8: in function 'kernel', tile.reshape at line 17 views 'w' ([16, 32] FP32), "
        "a window of an Acc (L0C) tile, as 'r' ([16, 32] FP32), and 'r' reaches store at line 18, "
        "which reads it. The view reads the window from its first element as a standalone tile")
    assert hardware_garbles(p)


def test_a_view_of_an_acc_window_read_after_a_matmul_acc_into_it_is_kept():
    # the accumulation proves the window contiguous (rules.windows): the result may be read
    p = prog("acc2 = pl.tile.matmul(a16, b32)", "w = pl.tile.slice(acc2, [16, 16], [0, 16])",
             "r = pl.tile.reshape(w, [16, 16])", "r2 = pl.tile.matmul_acc(r, a16, b16)",
             "out = pl.store(r2, [0, 0], out)", out="16, 16")
    assert et.print_program(et.optimize(p)) == et.print_program(p)
    assert not hardware_garbles(p)
