"""The hardware model catches every hazard of the seed: each "Before" program faults or
differs from the ideal semantics, and each "After" program (the canonicalized form)
matches it — so a rule that drops a needed extract, or keeps an illegal view, fails."""

from __future__ import annotations

import numpy as np
import pytest

import egraph_tiles as et
from egraph_tiles.ir import AssignStmt, Call, MemorySpace, Symbol, walk
from egraph_tiles.sim import (MisalignedAccess, UnsupportedTransfer, outputs_equal, run_hardware,
                              run_ideal)
from hazard_programs import (ACC_COLUMN_WINDOW_AFTER, ACC_ROW_WINDOW_BEFORE, COLUMN_SLICE_AFTER,
                             COLUMN_SLICE_BEFORE, DYNAMIC_ROW_AFTER, DYNAMIC_ROW_BEFORE,
                             MAT_SLICE_MATMUL_AFTER, MAT_SLICE_MATMUL_BEFORE, UNALIGNED_AFTER,
                             UNALIGNED_BEFORE)
from simkit import both, inputs_for

# ---------------------------------------------------------------- #1789 unaligned vector operand


def test_unaligned_fp32_column_slice_into_muls_faults_on_hardware() -> None:
    p = et.parse_program(UNALIGNED_BEFORE)
    ins = inputs_for(p)
    run_ideal(p, ins)  # the program itself is meaningful
    with pytest.raises(MisalignedAccess):
        run_hardware(p, ins)


def test_unaligned_column_extracted_matches_ideal() -> None:
    ideal, hw = both(UNALIGNED_AFTER)
    assert outputs_equal(ideal, hw)


def test_after_program_of_unaligned_slice_equals_ideal_of_before() -> None:
    p_before, p_after = et.parse_program(UNALIGNED_BEFORE), et.parse_program(UNALIGNED_AFTER)
    ins = inputs_for(p_before)
    assert outputs_equal(run_ideal(p_before, ins), run_hardware(p_after, ins))


def test_fp32_column_8_slice_is_32_byte_aligned_and_matches_ideal() -> None:
    text = UNALIGNED_BEFORE.replace("[[16, 8], pl.FP32],", "[[16, 16], pl.FP32],").replace(
        "[16, 8], target_memory", "[16, 16], target_memory").replace("[0, 1])", "[0, 8])")
    ideal, hw = both(text)
    assert outputs_equal(ideal, hw)


# ---------------------------------------------------------------- #1640 dynamic row, col_expand


def test_dynamic_row_slice_into_col_expand_overwrites_source_row_0_on_hardware() -> None:
    ideal, hw = both(DYNAMIC_ROW_BEFORE, {"row_off": 5})
    assert not outputs_equal(ideal, hw)
    assert np.array_equal(hw["src"][0], ideal["src"][5])  # the window landed on row 0
    assert np.array_equal(hw["src"][1:], ideal["src"][1:])


def test_dynamic_row_extracted_for_col_expand_matches_ideal() -> None:
    ideal, hw = both(DYNAMIC_ROW_AFTER, {"row_off": 5})
    assert outputs_equal(ideal, hw)


def test_same_slice_with_constant_row_offset_is_an_identity_copy() -> None:
    text = DYNAMIC_ROW_BEFORE.replace("[row_off, 0])", "[5, 0])")
    ideal, hw = both(text, {"row_off": 5})
    assert outputs_equal(ideal, hw)


def test_offset_from_a_constant_scalar_definition_counts_as_static() -> None:
    text = DYNAMIC_ROW_BEFORE.replace(
        "        row: pl.Tile", "        five: pl.Scalar[pl.INDEX] = 5\n        row: pl.Tile"
    ).replace("[row_off, 0])", "[five, 0])")
    ideal, hw = both(text, {"row_off": 0})
    assert outputs_equal(ideal, hw)


# ---------------------------------------------------------------- #2010 column slice repack


def test_column_slice_into_col_expand_destroys_its_source_except_row_0() -> None:
    ideal, hw = both(COLUMN_SLICE_BEFORE)
    assert not outputs_equal(ideal, hw)
    assert np.array_equal(hw["src"][0], ideal["src"][0])
    assert not np.array_equal(hw["src"][1:], ideal["src"][1:])


def test_column_slice_extracted_for_col_expand_matches_ideal() -> None:
    ideal, hw = both(COLUMN_SLICE_AFTER)
    assert outputs_equal(ideal, hw)


def test_full_width_row_block_slice_into_col_expand_is_an_identity_copy() -> None:
    text = COLUMN_SLICE_BEFORE.replace("pl.Tensor[[16, 64], pl.FP32]]", "pl.Tensor[[4, 128], pl.FP32]]") \
        .replace("-> pl.Tensor[[16, 64], pl.FP32]", "-> pl.Tensor[[4, 128], pl.FP32]") \
        .replace("[[1, 64], pl.FP32]", "[[1, 128], pl.FP32]").replace("[1, 64], target", "[1, 128], target") \
        .replace("hi: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 64], [0, 64])",
                 "hi: pl.Tile[[4, 128], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [4, 128], [8, 0])")
    ideal, hw = both(text)
    assert outputs_equal(ideal, hw)


# ---------------------------------------------------------------- pto-isa#253 Acc row window


def test_matmul_acc_into_multi_block_column_row_window_is_garbled_on_hardware() -> None:
    ideal, hw = both(ACC_ROW_WINDOW_BEFORE)
    assert not outputs_equal(ideal, hw)
    # the first 16 columns of the window's row tile are right, the next block column is not
    assert np.array_equal(hw["out"][16:, :16], ideal["out"][16:, :16])
    assert not np.array_equal(hw["out"][16:, 16:], ideal["out"][16:, 16:])


def test_matmul_acc_into_full_row_extent_column_window_matches_ideal() -> None:
    ideal, hw = both(ACC_COLUMN_WINDOW_AFTER)
    assert outputs_equal(ideal, hw)


def test_matmul_acc_into_single_block_column_row_window_matches_ideal() -> None:
    text = ACC_ROW_WINDOW_BEFORE.replace("[[16, 32], pl.FP16]", "[[16, 16], pl.FP16]") \
        .replace("[[32, 32], pl.FP32]", "[[32, 16], pl.FP32]") \
        .replace("[0, 0], [16, 32], target", "[0, 0], [16, 16], target") \
        .replace("shape=[16, 32], target_memory=pl.Mem.Right", "shape=[16, 16], target_memory=pl.Mem.Right") \
        .replace("win: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc, [16, 32], [16, 0])",
                 "win: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc, [16, 16], [16, 0])")
    ideal, hw = both(text)
    assert outputs_equal(ideal, hw)


# ---------------------------------------------------------------- Mat -> Mat


def test_mat_slice_matmul_operand_needs_an_unsupported_mat_to_mat_copy() -> None:
    p = et.parse_program(MAT_SLICE_MATMUL_BEFORE)
    ins = inputs_for(p)
    run_ideal(p, ins)
    with pytest.raises(UnsupportedTransfer):
        run_hardware(p, ins)


def test_mat_slice_operands_extracted_to_left_and_right_match_ideal() -> None:
    ideal, hw = both(MAT_SLICE_MATMUL_AFTER)
    assert outputs_equal(ideal, hw)


MAT_EXTRACT = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        m = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        e = pl.tile.extract(m, 0, 0, shape=[16, 16], target_memory=pl.Mem.Vec)
        out = pl.store(e, [0, 0], out)
        return out
"""


def test_explicit_mat_to_mat_extract_raises_unsupported_transfer() -> None:
    # the parser rejects Mat -> Mat, so retarget the Mat -> Vec extract in the IR
    p = et.parse_program(MAT_EXTRACT)
    ins = inputs_for(p)
    assert outputs_equal(run_ideal(p, ins), run_hardware(p, ins))
    for s in walk(p.functions[0].body):
        if isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == "tile.extract":
            kw = tuple((k, Symbol(("Mem", "Mat"), MemorySpace.Mat) if k == "target_memory" else v)
                       for k, v in s.value.kwargs)
            s.value = s.value.with_args(s.value.args, kw)
    with pytest.raises(UnsupportedTransfer):
        run_hardware(p, ins)
