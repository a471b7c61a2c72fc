"""A Vec window an op writes back into (registry ``reuses_arg``), directly or through a view of
it, must stay a view: a copy would lose the write.  It stays only when proven aligned (#1789);
otherwise the pass raises (rules.checks ``written-window-violation``)."""

import pytest

import egraph_tiles as et
from dslkit import call_ops, kernel, rejection, vec_program
from simkit import inputs_for
from egraph_tiles.sim import run_hardware, run_ideal

prog = vec_program  # v = all of x in Vec, then the lines (from line 9), then v stored


def test_unaligned_slice_written_through_set_validshape_raises():
    p = prog("q = pl.tile.slice(v, [16, 1], [0, 1])",
             "qv = pl.tile.set_validshape(q, [8, 1])",
             "pl.tile.fillpad_inplace(qv, pl.PadValue.zero)")
    msg = rejection(p)
    for piece in ("slice 'q'", "line 9", "tile.fillpad_inplace at line 11", "'qv'",
                  "written in place", "copied", "lost", "unaligned view", "#1789",
                  "multiple of 32 bytes", "8 for FP32", "separate tile"):
        assert piece in msg, (piece, msg)


def test_unaligned_slice_written_directly_by_fillpad_inplace_raises():
    p = prog("q = pl.tile.slice(v, [16, 1], [0, 1])",
             "pl.tile.fillpad_inplace(q, pl.PadValue.zero)")
    with pytest.raises(ValueError, match=r"slice 'q'.*tile.fillpad_inplace at line 10"):
        et.optimize(p)


def test_aligned_written_window_stays_a_view_and_runs_right_on_hardware():
    p = et.verify_program(prog("q = pl.tile.slice(v, [16, 8], [0, 8])",
                               "qv = pl.tile.set_validshape(q, [8, 8])",
                               "pl.tile.fillpad_inplace(qv, pl.PadValue.zero)"))
    opt = et.optimize(p)
    assert "tile.extract" not in call_ops(opt) and "tile.slice" in call_ops(opt)
    ins = inputs_for(p)
    ideal, hw = run_ideal(p, ins), run_hardware(opt, ins)
    assert set(ideal) == set(hw)
    for k in ideal:
        assert (ideal[k] == hw[k]).all(), k


def test_read_only_use_of_unaligned_slice_is_still_copied():
    p = prog("q = pl.tile.slice(v, [16, 1], [0, 1])",
             "y = pl.tile.muls(q, 0.5)")
    assert "tile.extract" in call_ops(et.optimize(p))


# -- a Vec window as a matmul accumulator (the pass never rewrites that operand) -------------

def acc_page_program(row: int, col: int) -> et.ir.Program:
    """A [16, 64] FP32 page of a [32, 128] Vec buffer at (row, col), accumulated into by
    tile.matmul_acc (line 10: the slice, line 11: the matmul_acc) and assembled back."""
    return et.parse_program(kernel(
        "a: pl.Tensor[[16, 32], pl.BF16], b: pl.Tensor[[32, 64], pl.BF16], "
        "out: pl.Out[pl.Tensor[[32, 128], pl.FP32]]", f"""
        am: pl.Tile[[16, 32], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        bm: pl.Tile[[32, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 64], target_memory=pl.Mem.Mat)
        buf: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.create([32, 128], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        page: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(buf, [16, 64], [{row}, {col}])
        acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(page, am, bm)
        buf_1: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(buf, acc, [{row}, {col}])
        out1: pl.Tensor[[32, 128], pl.FP32] = pl.tile.store(buf_1, [0, 0], out)
        return out1""", "pl.Tensor[[32, 128], pl.FP32]"), filename="k.py")


@pytest.mark.parametrize("row, col", [
    (0, 0),    # the buffer's own address
    (16, 0),   # a row page: 16 * 128 * 4 bytes in
    (0, 64),   # a column page: 256 bytes in
    (0, 8),    # 8 FP32 columns: 32 bytes in
    (16, 8),
])
def test_aligned_vec_accumulator_window_stays_the_slice(row, col):
    opt = et.optimize(acc_page_program(row, col))
    assert call_ops(opt) == ["tile.load", "tile.load", "tile.create", "tile.slice",
                             "tile.matmul_acc", "tile.assemble", "tile.store"]


@pytest.mark.parametrize("row, col", [(0, 4), (0, 1), (16, 2)])
def test_unaligned_vec_accumulator_window_is_rejected(row, col):
    msg = rejection(acc_page_program(row, col))
    for piece in ("k.py:10:8", "slice 'page'", "tile.matmul_acc at line 11", "written in place",
                  "32-byte aligned", "8 for FP32"):
        assert piece in msg, (piece, msg)


def test_accumulator_window_of_an_assembled_buffer_stays_the_slice():
    # pages of a buffer that earlier results were assembled into (FlattenTileNdTo2D's unrolled
    # batch_matmul_acc): the base is the assemble's result, each page accumulated in turn
    p = et.parse_program(kernel(
        "a: pl.Tensor[[16, 32], pl.BF16], b: pl.Tensor[[32, 64], pl.BF16], "
        "out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]", """
        am: pl.Tile[[16, 32], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        bm: pl.Tile[[32, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 64], target_memory=pl.Mem.Mat)
        buf: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.create([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        m0: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(am, bm)
        m0_vec: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.move(m0, target_memory=pl.Mem.Vec)
        buf_1: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(buf, m0_vec, [0, 0])
        page_0: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(buf_1, [16, 64], [0, 0])
        acc_0: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(page_0, am, bm)
        buf_2: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(buf_1, acc_0, [0, 0])
        page_1: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(buf_2, [16, 64], [16, 0])
        acc_1: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(page_1, am, bm)
        buf_3: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(buf_2, acc_1, [16, 0])
        out1: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(buf_3, [0, 0], out)
        return out1""", "pl.Tensor[[32, 64], pl.FP32]"), filename="k.py")
    opt = et.optimize(p)
    assert call_ops(opt).count("tile.slice") == 2 and "tile.extract" not in call_ops(opt)
