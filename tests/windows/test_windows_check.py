"""Acc accumulator windows (issue 5): which windows are accepted, which are rejected, and why.

Each kernel is DSL text; ``lhs`` / ``rhs`` are Left / Right parameters whose product has the
accumulator window's shape.
"""

from __future__ import annotations

import re

import pytest

from egraph_tiles.dsl import parse_program
from egraph_tiles.egraph import windows as win
from egraph_tiles.egraph.windows import check_acc_windows
from egraph_tiles.ir.stmts import AssignStmt, ForStmt, walk

import dslkit


def kernel(body: str, rows: int = 16, cols: int = 32, extra: str = "") -> str:
    """A one-function program whose matmul operands produce a ``rows x cols`` product (its body
    from line 6)."""
    return dslkit.kernel(f"lhs: pl.Tile[[{rows}, 64], pl.BF16, pl.Mem.Left],\n"
                         f"               rhs: pl.Tile[[64, {cols}], pl.BF16, pl.Mem.Right]{extra}",
                         body, bare=True)


def check(text: str) -> None:
    prog = parse_program(text, filename="kernel.py")
    check_acc_windows(prog.functions[0])


def rejection(text: str) -> str:
    with pytest.raises(ValueError) as info:
        check(text)
    return str(info.value)


def assert_message(msg: str, op: str, r: int, c: int, pr: int, pc: int | str, line: int) -> None:
    """Every piece issue 5 asks the message for."""
    assert op in msg
    assert f"{r}x{c} row window of a {pr}x{pc} Acc (L0C) tile" in msg
    assert "not contiguous in L0C's block layout" in msg
    assert "no destination stride" in msg
    assert "only the first 16 columns of each row tile would be correct" in msg
    assert "span every row of its parent" in msg and "inside one 16-column block" in msg
    assert f"kernel.py:{line}:" in msg and f"line {line}" in msg
    assert "compiler pass" in msg and "batch_matmul_acc" in msg
    if isinstance(pr, int) and pr % r == 0:
        assert f"{r} x {(pr // r) * c}" in msg
        assert f"tile.slice(acc, [{r}, {c}], [0, i * {c}])" in msg


# ---------------------------------------------------------------------- accepted


def test_full_row_window_at_column_offset_is_accepted():
    check(kernel("""
acc = pl.tile.create([16, 64], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [0, 32])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
"""))


def test_single_block_column_row_window_is_accepted():
    check(kernel("""
acc = pl.tile.create([32, 16], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 16], [16, 0])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", cols=16))


def test_narrow_window_inside_one_block_at_unaligned_offset_is_accepted():
    check(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 8], [16, 20])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", cols=8))


def test_chained_slice_is_judged_against_the_allocation_not_the_intermediate():
    # inner covers columns 16..31 of acc (one block), although 8..23 of outer straddles
    check(kernel("""
acc = pl.tile.create([32, 64], pl.FP32, target_memory=pl.Mem.Acc)
outer = pl.tile.slice(acc, [32, 48], [0, 8])
inner = pl.tile.slice(outer, [16, 16], [16, 8])
w2 = pl.tile.matmul_acc(inner, lhs, rhs)
return w2
""", cols=16))


def test_single_trip_loop_yielding_a_bad_window_is_accepted():
    check(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
bad = pl.tile.slice(acc, [16, 32], [16, 0])
for k, (c,) in pl.range(0, 1, 1, init_values=(good,)):
    cc = pl.tile.matmul_acc(c, lhs, rhs)
    out = pl.yield_(bad)
return out
"""))


def test_loop_carry_only_read_is_not_checked_on_the_back_edge():
    check(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
bad = pl.tile.slice(acc, [16, 32], [16, 0])
for k, (c,) in pl.range(0, 4, 1, init_values=(good,)):
    v = pl.tile.move(c, target_memory=pl.Mem.Vec)
    out = pl.yield_(bad)
return out
"""))


def test_while_loop_back_edge_is_rejected_naming_the_loop():
    # issue 15: a while loop may take its back edge; the yielded window is then the carry
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
bad = pl.tile.slice(acc, [16, 32], [16, 0])
for (c,) in pl.while_(init_values=(good,)):
    pl.cond(n < 2)
    cc = pl.tile.matmul_acc(c, lhs, rhs)
    out = pl.yield_(bad)
return out
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=11)
    assert "may name — through the loop at line 9: the value its body yields at line 12" in msg
    assert "make each branch" in msg


def test_symbolic_trip_count_back_edge_is_rejected_naming_the_loop():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
bad = pl.tile.slice(acc, [16, 32], [16, 0])
for k, (c,) in pl.range(0, n, 1, init_values=(good,)):
    cc = pl.tile.matmul_acc(c, lhs, rhs)
    out = pl.yield_(bad)
return out
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=10)
    assert "through the loop at line 9: the value its body yields at line 11" in msg


def test_dynamic_column_offset_that_may_cross_a_block_is_rejected():
    # issue 15: `off` is only known to be a multiple of 1, so the 16x16 window can cross a block
    msg = rejection(kernel("""
acc = pl.tile.create([32, 64], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 16], [16, off])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", cols=16, extra=", off: pl.Scalar[pl.INDEX]"))
    assert "tile.matmul_acc at line 8" in msg and "kernel.py:8:" in msg
    assert "16x16 row window of a 32x64 Acc (L0C) tile `acc` at a dynamic column offset" in msg
    assert "only known to be a multiple of 1" in msg
    assert "Fix: make the column offset a provable multiple of 16" in msg


def test_dynamic_column_offset_that_is_a_multiple_of_16_is_accepted_inside_one_block():
    check(kernel("""
acc = pl.tile.create([32, 64], pl.FP32, target_memory=pl.Mem.Acc)
for j in pl.range(0, 64, 16):
    w = pl.tile.slice(acc, [16, 16], [16, j])
    w2 = pl.tile.matmul_acc(w, lhs, rhs)
return acc
""", cols=16))


def test_dynamic_column_offset_of_a_full_row_window_is_accepted_when_a_multiple_of_16():
    check(kernel("""
acc = pl.tile.create([16, 128], pl.FP32, target_memory=pl.Mem.Acc)
off = blk * 32
w = pl.tile.slice(acc, [16, 32], [0, off])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", extra=", blk: pl.Scalar[pl.INDEX]"))


def test_dynamic_column_offset_of_a_full_row_window_at_a_multiple_of_8_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([16, 128], pl.FP32, target_memory=pl.Mem.Acc)
for j in pl.range(8, 96, 8):
    w = pl.tile.slice(acc, [16, 32], [0, j])
    w2 = pl.tile.matmul_acc(w, lhs, rhs)
return acc
"""))
    assert "only known to be a multiple of 8" in msg


def test_narrow_window_at_a_small_multiple_is_accepted():
    # a multiple of 4 and 4 columns wide: c mod 16 is 0, 4, 8 or 12, so it never crosses a block
    check(kernel("""
acc = pl.tile.create([32, 64], pl.FP32, target_memory=pl.Mem.Acc)
for j in pl.range(0, 60, 4):
    w = pl.tile.slice(acc, [16, 4], [16, j])
    w2 = pl.tile.matmul_acc(w, lhs, rhs)
return acc
""", cols=4))


def test_symbolic_parent_rows_stay_silent():
    check(kernel("""
acc = pl.tile.create([m, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", extra=", m: pl.Scalar[pl.INDEX]"))


def test_if_whose_arms_name_different_windows_is_rejected_naming_the_arm():
    # issue 15: the else arm brings the bad bottom half to the accumulator
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
top = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
bot = pl.tile.slice(acc, [16, 32], [16, 0])
if n > 0:
    w = pl.yield_(top)
else:
    w = pl.yield_(bot)
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=13)
    assert "may name — when the `if` at line 9 takes its else arm — a 16x32" in msg


def test_if_whose_arms_both_name_good_windows_is_accepted():
    check(kernel("""
acc = pl.tile.create([16, 64], pl.FP32, target_memory=pl.Mem.Acc)
left = pl.tile.slice(acc, [16, 32], [0, 0])
right = pl.tile.slice(acc, [16, 32], [0, 32])
if n > 0:
    w = pl.yield_(left)
else:
    w = pl.yield_(right)
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", extra=", n: pl.Scalar[pl.INDEX]"))


def test_nested_if_inside_a_loop_names_the_inner_arm():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
bot = pl.tile.slice(acc, [16, 32], [16, 0])
for k, (c,) in pl.range(0, 4, 1, init_values=(good,)):
    cc = pl.tile.matmul_acc(c, lhs, rhs)
    if n > k:
        y = pl.yield_(cc)
    else:
        y = pl.yield_(bot)
    out = pl.yield_(y)
return out
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=10)
    assert "when the `if` at line 11 takes its else arm" in msg


def test_transpose_produces_a_fresh_buffer_and_does_not_carry_the_window():
    check(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 16], [16, 8])
t = pl.tile.transpose(w)
t2 = pl.tile.matmul_acc(t, lhs, rhs)
return t2
""", cols=16))


def test_shape_changing_reshape_does_not_carry_the_window():
    check(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
r = pl.tile.reshape(w, [32, 16])
r2 = pl.tile.matmul_acc(r, lhs, rhs)
return r2
""", rows=32, cols=16))


def test_opaque_call_result_is_not_taken_as_a_parent():
    check(kernel("""
acc: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pld.tile.remote_alloc()
w = pl.tile.slice(acc, [16, 32], [16, 0])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
"""))


# ---------------------------------------------------------------------- rejected


def test_row_window_of_a_multi_block_column_accumulator_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=8)


def test_full_row_window_starting_mid_block_and_crossing_a_block_is_rejected():
    # [16, 16] at [0, 8] of [16, 64]: every row, but the compact NZ write is shifted by 8
    msg = rejection(kernel("""
acc = pl.tile.create([16, 64], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 16], [0, 8])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", cols=16))
    assert "tile.matmul_acc" in msg and "kernel.py:8:" in msg and "line 8" in msg
    assert "16x16 row window of a 16x64 Acc (L0C) tile" in msg
    assert "not contiguous in L0C's block layout" in msg and "no destination stride" in msg
    assert "starts at column 8, mid-block (not a multiple of 16)" in msg
    assert "crosses the block boundary at column 16" in msg
    assert "only the first 8 would be correct" in msg
    assert "span every row of its parent starting at a column offset that is a multiple of 16" in msg
    assert "inside one 16-column block" in msg
    assert "tile.slice(acc, [16, 16], [0, i * 16])" in msg
    assert "compiler pass" in msg and "batch_matmul_acc" in msg


def test_full_row_window_at_an_unaligned_offset_inside_one_block_is_accepted():
    check(kernel("""
acc = pl.tile.create([16, 64], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 8], [0, 40])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", cols=8))


def test_window_straddling_two_blocks_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 16], [16, 8])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", cols=16))
    assert_message(msg, "tile.matmul_acc", 16, 16, 32, 32, line=8)


def test_valid_shape_slice_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0], valid_shape=[n, 32])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=8)


def test_hoisted_slice_through_loop_carry_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
for ko, (c,) in pl.range(0, 256, 64, init_values=(w,)):
    cc = pl.tile.matmul_acc(c, lhs, rhs)
    out = pl.yield_(cc)
return out
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=9)


def test_plain_alias_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
a = w
w2 = pl.tile.matmul_acc(a, lhs, rhs)
return w2
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=9)


def test_same_shape_reshape_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
r = pl.tile.reshape(w, [16, 32])
w2 = pl.tile.matmul_acc(r, lhs, rhs)
return w2
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=9)


def test_bare_matmul_acc_statement_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
pl.tile.matmul_acc(w, lhs, rhs)
return acc
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=8)


def test_loop_exit_value_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
for ko, (c,) in pl.range(0, n, 1, init_values=(w,)):
    v = pl.tile.move(c, target_memory=pl.Mem.Vec)
    out = pl.yield_(c)
w2 = pl.tile.matmul_acc(out, lhs, rhs)
return w2
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=11)


def test_if_merge_whose_arms_name_the_same_window_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
a = w
if n > 0:
    m = pl.yield_(w)
else:
    m = pl.yield_(a)
w2 = pl.tile.matmul_acc(m, lhs, rhs)
return w2
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=13)


def test_two_trip_loop_yielding_a_bad_window_is_rejected_on_the_back_edge():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
bad = pl.tile.slice(acc, [16, 32], [16, 0])
for k, (c,) in pl.range(0, 2, 1, init_values=(good,)):
    cc = pl.tile.matmul_acc(c, lhs, rhs)
    out = pl.yield_(bad)
return out
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=10)
    assert "through the loop at line 9: the value its body yields at line 11" in msg


def test_two_loops_reject_naming_the_bad_loops_shape():
    msg = rejection(kernel("""
acc = pl.tile.create([16, 64], pl.FP32, target_memory=pl.Mem.Acc)
big = pl.tile.create([48, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.slice(acc, [16, 32], [0, 32])
bad = pl.tile.slice(big, [16, 32], [32, 0])
for ko, (c,) in pl.range(0, 128, 64, init_values=(good,)):
    cc = pl.tile.matmul_acc(c, lhs, rhs)
    o1 = pl.yield_(cc)
for ko2, (d,) in pl.range(0, 128, 64, init_values=(bad,)):
    dd = pl.tile.matmul_acc(d, lhs, rhs)
    o2 = pl.yield_(dd)
return o2
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 48, 32, line=14)
    assert "16x32 row window of a 16x64" not in msg


def test_chained_slice_offsets_accumulate_into_a_rejection():
    # inner covers columns 12..27 of acc: it straddles the block boundary at 16
    msg = rejection(kernel("""
acc = pl.tile.create([32, 64], pl.FP32, target_memory=pl.Mem.Acc)
outer = pl.tile.slice(acc, [32, 48], [0, 8])
inner = pl.tile.slice(outer, [16, 16], [16, 4])
w2 = pl.tile.matmul_acc(inner, lhs, rhs)
return w2
""", cols=16))
    assert_message(msg, "tile.matmul_acc", 16, 16, 32, 64, line=9)


def test_scalar_ssa_column_offset_is_resolved():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
off: pl.Scalar[pl.INDEX] = 4 + 4
w = pl.tile.slice(acc, [16, 16], [16, off])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", cols=16))
    assert_message(msg, "tile.matmul_acc", 16, 16, 32, 32, line=9)


def test_dynamic_row_offset_with_constant_columns_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([64, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [i * 16, 0])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", extra=", i: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 64, 32, line=8)


def test_gemv_acc_is_covered_by_the_registry():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
w2 = pl.tile.gemv_acc(w, lhs, rhs)
return w2
"""))
    assert_message(msg, "tile.gemv_acc", 16, 32, 32, 32, line=8)


def test_chained_matmul_acc_result_carries_the_window():
    prog = parse_program(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
w1 = pl.tile.matmul_acc(w, lhs, rhs)
w3 = pl.tile.matmul_acc(w1, lhs, rhs)
return w3
"""), filename="kernel.py")
    _, found = win.violations(prog.functions[0])
    assert len(found) == 2  # both the first write and the chained write land in the window
    assert {(v.rows, v.cols) for v in found} == {(16, 32)}


# ---------------------------------------------------------------------- message details


def test_symbolic_parent_columns_print_as_question_mark():
    msg = rejection(kernel("""
w = pl.tile.slice(acc, [16, 32], [16, 0])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", extra=", n: pl.Scalar[pl.INDEX], acc: pl.Tile[[32, n], pl.FP32, pl.Mem.Acc]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, "?", line=7)


def test_fix_is_omitted_when_parent_rows_are_not_a_multiple_of_window_rows():
    msg = rejection(kernel("""
acc = pl.tile.create([48, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [32, 32], [16, 0])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", rows=32))
    assert "32x32 row window of a 48x32 Acc (L0C) tile" in msg
    assert "tile.slice(acc, [32, 32], [0, i * 32])" not in msg
    assert "pack the accumulator along columns" in msg


def test_fix_gives_the_packed_allocation():
    msg = rejection(kernel("""
acc = pl.tile.create([64, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [48, 0])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
"""))
    assert "allocate it as 16 x 128" in msg
    assert "tile.slice(acc, [16, 32], [0, i * 32])" in msg


def test_egglog_panic_becomes_a_value_error_naming_the_function(monkeypatch):
    class PanicException(BaseException):
        pass

    def panic(facts, read):
        raise PanicException("Already borrowed")

    monkeypatch.setattr(win, "run_rules", panic)
    with pytest.raises(ValueError, match=re.escape("'kernel'")):
        check(kernel("""
acc = pl.tile.create([16, 64], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [0, 32])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
"""))


@pytest.fixture
def no_egraph(monkeypatch):
    """Fail the test if the windows e-graph is built."""
    def must_not_run(facts, read):
        raise AssertionError("the windows e-graph was built")

    monkeypatch.setattr(win, "run_rules", must_not_run)


def test_function_writing_back_into_no_tile_skips_the_egraph(no_egraph):
    # no registry reuses_arg operand is a tile (a matmul makes a fresh Acc tile), so no rule
    # could derive a violation: the rules are not even run
    check(kernel("""
acc = pl.tile.matmul(lhs, rhs)
w = pl.tile.slice(acc, [16, 16], [0, 8])
return w
"""))


#: an accumulator a loop fills in an Acc tile of its own (no slice takes a window of it)
OWN_ACCUMULATOR = """
mine = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
for k, (a,) in pl.range(0, 2, 1, init_values=(mine,)):
    a2 = pl.tile.matmul_acc(a, lhs, rhs)
    out = pl.yield_(a2)"""


def test_accumulator_of_its_own_next_to_no_window_skips_the_egraph(no_egraph):
    # the accumulator's storage holds no tile a slice takes a window of (another Acc tile's
    # window is only read): no window can reach it, so the rules are not even run
    check(kernel(OWN_ACCUMULATOR + """
other = pl.tile.create([16, 64], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(other, [16, 32], [0, 8])
return out
"""))


def test_accumulator_of_its_own_is_not_encoded_next_to_a_checked_window():
    # only the storage holding the sliced Acc tile is stated: the other accumulator's loop and
    # its tile give no fact, and the window is still rejected
    text = kernel(OWN_ACCUMULATOR + """
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""")
    fn = parse_program(text, filename="kernel.py").functions[0]
    enc, found = win.violations(fn)
    assert {v.name for v in enc.vars.values()} == {"acc", "w", "w2"}
    assert [(v.rows, v.cols, v.col) for v in found] == [(16, 32, 0)]


def test_only_the_definitions_and_loop_variables_a_window_offset_uses_are_stated():
    # `unused` and the loop variable `i` reach no window offset: no fact about them is stated,
    # and the offsets that use `off` and `j` still get their known multiples (32 and 16)
    text = kernel("""
acc = pl.tile.create([16, 128], pl.FP32, target_memory=pl.Mem.Acc)
unused = blk * 3 + 1
off = blk * 32
for i in pl.range(0, 4, 1):
    w = pl.tile.slice(acc, [16, 32], [0, off])
    w2 = pl.tile.matmul_acc(w, lhs, rhs)
for j in pl.range(0, 96, 16):
    w3 = pl.tile.slice(acc, [16, 32], [0, j])
    w4 = pl.tile.matmul_acc(w3, lhs, rhs)
return acc
""", extra=", blk: pl.Scalar[pl.INDEX]")
    fn = parse_program(text, filename="kernel.py").functions[0]
    enc, found = win.violations(fn)
    assert found == []
    symbol = {n: uid for uid, n in enc.syms.items()}
    defined = {symbol[n] for n, _ in enc.rows["SymDefRow"]}
    looped = {symbol[n] for n, _, _ in enc.rows["LoopRow"]}
    names = {v.uid: v.name for v in (*(s.target for s in walk(fn.body) if isinstance(s, AssignStmt)),
                                     *(s.loop_var for s in walk(fn.body) if isinstance(s, ForStmt)))}
    assert {names[u] for u in defined} == {"off"}
    assert {names[u] for u in looped} == {"j"}


def test_an_offset_defined_through_a_scalar_keeps_its_multiple_for_the_verdict():
    msg = rejection(kernel("""
acc = pl.tile.create([16, 128], pl.FP32, target_memory=pl.Mem.Acc)
off = blk * 8
w = pl.tile.slice(acc, [16, 32], [0, off])
w2 = pl.tile.matmul_acc(w, lhs, rhs)
return w2
""", extra=", blk: pl.Scalar[pl.INDEX]"))
    assert "only known to be a multiple of 8" in msg


def test_slice_of_a_loop_carried_allocation_is_judged_against_the_carried_tile():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
for b, (a,) in pl.range(0, 2, 1, init_values=(acc,)):
    page = pl.tile.slice(a, [16, 32], [16, 0])
    pl.tile.matmul_acc(page, lhs, rhs)
    out = pl.yield_(a)
return out
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=9)


def test_window_inside_a_split_aiv_scope_is_checked():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
    w = pl.tile.slice(acc, [16, 32], [16, 0])
    pl.tile.matmul_acc(w, lhs, rhs)
return acc
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=9)


def test_slice_of_a_loop_result_carrying_an_allocation_is_checked():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
for b, (a,) in pl.range(0, n, 1, init_values=(acc,)):
    out = pl.yield_(a)
w = pl.tile.slice(out, [16, 32], [16, 0])
pl.tile.matmul_acc(w, lhs, rhs)
return out
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=10)


def test_slice_of_an_if_merging_two_allocations_is_checked():
    msg = rejection(kernel("""
if n > 0:
    x = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
    m = pl.yield_(x)
else:
    y = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
    m = pl.yield_(y)
w = pl.tile.slice(m, [16, 32], [16, 0])
pl.tile.matmul_acc(w, lhs, rhs)
return m
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=13)


def test_scalar_ssa_product_column_offset_is_resolved():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
k: pl.Scalar[pl.INDEX] = 4
off = k * 2
w = pl.tile.slice(acc, [16, 16], [16, off])
pl.tile.matmul_acc(w, lhs, rhs)
return acc
""", cols=16))
    assert_message(msg, "tile.matmul_acc", 16, 16, 32, 32, line=10)


def test_scalar_ssa_difference_column_offset_is_resolved():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
k: pl.Scalar[pl.INDEX] = 12
off = k - 4
w = pl.tile.slice(acc, [16, 16], [16, off])
pl.tile.matmul_acc(w, lhs, rhs)
return acc
""", cols=16))
    assert_message(msg, "tile.matmul_acc", 16, 16, 32, 32, line=10)


def test_if_arms_naming_one_window_through_a_zero_offset_subslice_are_merged():
    # outer names (acc, i, 0); inner, a zero-offset slice of outer, names (acc, i + 0, 0 + 0)
    msg = rejection(kernel("""
acc = pl.tile.create([64, 32], pl.FP32, target_memory=pl.Mem.Acc)
outer = pl.tile.slice(acc, [16, 32], [i, 0])
inner = pl.tile.slice(outer, [16, 32], [0, 0])
if n > 0:
    m = pl.yield_(outer)
else:
    m = pl.yield_(inner)
pl.tile.matmul_acc(m, lhs, rhs)
return acc
""", extra=", i: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 64, 32, line=13)


def test_if_arms_naming_one_window_through_a_full_zero_offset_parent_are_merged():
    # direct names (acc, i, 0); via names (acc, 0 + i, 0 + 0)
    msg = rejection(kernel("""
acc = pl.tile.create([64, 32], pl.FP32, target_memory=pl.Mem.Acc)
direct = pl.tile.slice(acc, [16, 32], [i, 0])
full = pl.tile.slice(acc, [64, 32], [0, 0])
via = pl.tile.slice(full, [16, 32], [i, 0])
if n > 0:
    m = pl.yield_(direct)
else:
    m = pl.yield_(via)
pl.tile.matmul_acc(m, lhs, rhs)
return acc
""", extra=", i: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 64, 32, line=14)


def test_carry_used_as_destination_through_an_alias_is_checked_on_the_back_edge():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
bad = pl.tile.slice(acc, [16, 32], [16, 0])
for k, (c,) in pl.range(0, 2, 1, init_values=(good,)):
    a = c
    pl.tile.matmul_acc(a, lhs, rhs)
    out = pl.yield_(bad)
return out
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=11)


# ---------------------------------------------------------------------- audit: remaining edges


def test_set_validshape_carries_the_window_into_a_rejection():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
v = pl.tile.set_validshape(w, [n, 32])
pl.tile.matmul_acc(v, lhs, rhs)
return acc
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=9)


def test_matmul_mx_acc_is_covered_by_the_registry():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
w2 = pl.tile.matmul_mx_acc(w, lhs, ls, rhs, rs)
return w2
""", extra=", ls: pl.Tile[[16, 2], pl.INT8, pl.Mem.Left], rs: pl.Tile[[2, 32], pl.INT8, pl.Mem.Right]"))
    assert_message(msg, "tile.matmul_mx_acc", 16, 32, 32, 32, line=8)


def test_loop_result_that_may_be_its_initializer_is_rejected_naming_the_zero_trip_path():
    # initializer names the bad window; with a symbolic trip count the loop may run no trip, and
    # its result is then the initializer
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
for ko, (c,) in pl.range(0, n, 1, init_values=(w,)):
    fresh = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
    out = pl.yield_(fresh)
w2 = pl.tile.matmul_acc(out, lhs, rhs)
return w2
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=11)
    assert "when the loop at line 8 runs no trip (its result is then its initializer)" in msg


def test_loop_result_of_a_loop_that_runs_at_least_once_is_its_yield_only():
    # range(0, 2): the result is always the fresh tile the body yields, never the bad initializer
    check(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
for ko, (c,) in pl.range(0, 2, 1, init_values=(w,)):
    fresh = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
    out = pl.yield_(fresh)
w2 = pl.tile.matmul_acc(out, lhs, rhs)
return w2
"""))


def test_one_trip_loop_result_naming_another_bad_window_is_rejected():
    # issue 15 "any trip count, including one": the result is the yielded bad window
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.slice(acc, [32, 16], [0, 0])
bad = pl.tile.slice(acc, [16, 32], [16, 0])
top = pl.tile.slice(acc, [16, 32], [0, 0])
for ko, (c,) in pl.range(0, 1, 1, init_values=(top,)):
    out = pl.yield_(bad)
w2 = pl.tile.matmul_acc(out, lhs, rhs)
return w2
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=12)
    assert "through the loop at line 10" in msg


def test_while_loop_exit_value_is_rejected():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
w = pl.tile.slice(acc, [16, 32], [16, 0])
for (c,) in pl.while_(init_values=(w,)):
    pl.cond(n < 2)
    out = pl.yield_(c)
w2 = pl.tile.matmul_acc(out, lhs, rhs)
return w2
""", extra=", n: pl.Scalar[pl.INDEX]"))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=11)


def test_loop_whose_step_allows_one_trip_only_is_accepted_on_the_back_edge():
    # range(0, 2, 2): start + step == stop, a single trip, the yield is never used as a carry
    check(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
bad = pl.tile.slice(acc, [16, 32], [16, 0])
for k, (c,) in pl.range(0, 2, 2, init_values=(good,)):
    cc = pl.tile.matmul_acc(c, lhs, rhs)
    out = pl.yield_(bad)
return out
"""))


def test_loop_with_a_nonzero_start_and_two_trips_is_rejected_on_the_back_edge():
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
bad = pl.tile.slice(acc, [16, 32], [16, 0])
for k, (c,) in pl.range(64, 256, 128, init_values=(good,)):
    cc = pl.tile.matmul_acc(c, lhs, rhs)
    out = pl.yield_(bad)
return out
"""))
    assert_message(msg, "tile.matmul_acc", 16, 32, 32, 32, line=10)


def test_back_edge_window_is_judged_with_the_iter_args_extent():
    # the yielded window is the 16x32 bottom half of a 32x32 accumulator; the carry is 16x32
    msg = rejection(kernel("""
acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
good = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)
bad = pl.tile.slice(acc, [16, 32], [16, 0])
for k, (c,) in pl.range(0, 3, 1, init_values=(good,)):
    cc = pl.tile.matmul_acc(c, lhs, rhs)
    out = pl.yield_(bad)
return out
"""))
    assert "16x32 row window of a 32x32 Acc (L0C) tile" in msg
