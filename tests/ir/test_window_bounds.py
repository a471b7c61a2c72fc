"""Every window (slice, extract, load; any memory, any consumer) is checked in bounds on every
axis whose offset is a constant or has known bounds — before the pass folds it and after."""

from __future__ import annotations


import egraph_tiles as et
import dslkit

PARAMS = "x: pl.Tensor[[16, 64], pl.FP32], m: pl.Tensor[[64, 512], pl.BF16], n: pl.Scalar[pl.INDEX]"
HEAD = dslkit.kernel(PARAMS, """
v = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
lhs_mat = pl.tile.load(m, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
""")


def prog(*lines: str):
    return et.parse_program(dslkit.extended(HEAD, *lines), "k.py")


def rejected(*lines: str) -> str:
    return dslkit.rejection(prog(*lines))


def accepted(*lines: str):
    return et.optimize(prog(*lines))


def test_negative_offset_of_a_mat_slice_folded_into_an_extract_is_rejected():
    msg = rejected("s = pl.tile.slice(lhs_mat, [64, 256], [0, -1])",
                   "e = pl.tile.extract(s, 0, 0, shape=[64, 256], target_memory=pl.Mem.Left)")
    assert "k.py:9" in msg and "pl.tile.slice(lhs_mat, [64, 256], [0, -1])" in msg
    assert "[-1, 255) on axis 1" in msg


def test_negative_offset_of_a_vec_slice_is_rejected():
    msg = rejected("s = pl.tile.slice(v, [16, 8], [0, -8])", "y = pl.tile.muls(s, 2.0)")
    assert "[-8, 0) on axis 1" in msg


def test_mat_slice_past_the_end_feeding_a_move_is_rejected():
    msg = rejected("s = pl.tile.slice(lhs_mat, [64, 256], [0, 384])",
                   "t = pl.tile.move(s, target_memory=pl.Mem.Vec)")
    assert "[384, 640) on axis 1" in msg and "extent 512" in msg


def test_extract_of_a_slice_past_the_slice_end_is_rejected():
    msg = rejected("s = pl.tile.slice(lhs_mat, [64, 256], [0, 0])",
                   "e = pl.tile.extract(s, 0, 128, shape=[64, 256], target_memory=pl.Mem.Left)")
    assert "[128, 384) on axis 1" in msg and "extent 256" in msg


def test_offset_through_a_scalar_definition_is_checked():
    msg = rejected("off: pl.Scalar[pl.INDEX] = 60", "s = pl.tile.slice(v, [16, 8], [0, off])",
                   "y = pl.tile.muls(s, 2.0)")
    assert "[60, 68) on axis 1" in msg


def test_loop_variable_offset_reaching_past_the_end_is_rejected():
    msg = rejected("for i in pl.range(0, 9, 1):", "    s = pl.tile.slice(v, [16, 8], [0, i * 8])",
                   "    y = pl.tile.muls(s, 2.0)")
    assert "axis 1 can be 64" in msg and "[64, 72)" in msg


def test_loop_variable_offset_inside_the_source_is_accepted():
    accepted("for i in pl.range(0, 8, 1):", "    s = pl.tile.slice(v, [16, 8], [0, i * 8])",
             "    y = pl.tile.muls(s, 2.0)")


def test_loop_variable_offset_under_a_guard_is_not_judged_by_its_range():
    accepted("for i in pl.range(0, 9, 1):", "    if i < 8:",
             "        s = pl.tile.slice(v, [16, 8], [0, i * 8])", "        y = pl.tile.muls(s, 2.0)")


def test_upper_bound_from_scalar_min_is_checked():
    msg = rejected("k = pl.min(n, 60)", "s = pl.tile.slice(v, [16, 8], [0, k])",
                   "y = pl.tile.muls(s, 2.0)")
    assert "axis 1 can be 60" in msg


def test_upper_bound_from_scalar_min_inside_the_source_is_accepted():
    accepted("k = pl.min(n, 56)", "s = pl.tile.slice(v, [16, 8], [0, k])",
             "y = pl.tile.muls(s, 2.0)")


def test_unbounded_runtime_offset_is_not_rejected():
    accepted("s = pl.tile.slice(v, [16, 8], [0, n])", "y = pl.tile.muls(s, 2.0)")


def test_load_window_outside_its_tensor_is_rejected():
    msg = rejected("w = pl.tile.load(x, [8, 0], [16, 64], target_memory=pl.Mem.Vec)")
    assert "[8, 24) on axis 0" in msg


def test_row_offset_of_a_vec_extract_is_checked():
    msg = rejected("e = pl.tile.extract(v, 1, 0, shape=[16, 8], target_memory=pl.Mem.Vec)")
    assert "[1, 17) on axis 0" in msg
