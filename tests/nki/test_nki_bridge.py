"""NKI-style subscripts on tiles lower to canonical tile.slice (the DSL bridge).

Each form is checked by structural equality with its explicit ``pl.tile.slice`` spelling;
errors by message and location; and end to end through ``et.optimize``, so the slice
canonicalization and its alignment proofs apply to NKI-style kernels.
"""

import pytest

import egraph_tiles as et
from canon_helpers import kernel

PARAMS = ("x: pl.Tensor[[16, 128], pl.FP32], i: pl.Scalar[pl.INDEX], off: pl.Scalar[pl.INDEX], "
          "n: pl.Scalar[pl.INDEX], f: pl.Scalar[pl.FP32]")
LOAD = "t = pl.tile.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Vec)"


def prog(line: str):
    return et.parse_program(kernel(PARAMS, LOAD + "\n" + line))


def assert_lowers_to(subscript_line: str, explicit_line: str) -> None:
    et.assert_structural_equal(prog(subscript_line), prog(explicit_line))


def parse_error(line: str) -> et.DslError:
    with pytest.raises(et.DslError) as info:
        prog(line)
    return info.value


# ------------------------------------------------------------------ forms


def test_integer_index_selects_a_size_one_row_and_keeps_rank_2():
    assert_lowers_to("w = t[3, :]", "w = pl.tile.slice(t, [1, 128], [3, 0])")


def test_scalar_index_selects_a_size_one_row_at_a_dynamic_offset():
    assert_lowers_to("w = t[i, :]", "w = pl.tile.slice(t, [1, 128], [i, 0])")


def test_scalar_index_on_the_column_axis_selects_a_size_one_column():
    assert_lowers_to("w = t[:, i]", "w = pl.tile.slice(t, [16, 1], [0, i])")


def test_column_range_lowers_to_a_full_height_window():
    assert_lowers_to("w = t[:, 64:128]", "w = pl.tile.slice(t, [16, 64], [0, 64])")


def test_two_ranges_lower_to_one_window():
    assert_lowers_to("w = t[2:4, 8:16]", "w = pl.tile.slice(t, [2, 8], [2, 8])")


def test_open_ended_range_runs_to_the_tile_end():
    assert_lowers_to("w = t[12:, :64]", "w = pl.tile.slice(t, [4, 64], [12, 0])")


def test_missing_trailing_subscript_means_the_full_axis():
    assert_lowers_to("w = t[2:4]", "w = pl.tile.slice(t, [2, 128], [2, 0])")


def test_ds_with_a_constant_size_is_a_window_at_the_scalar_offset():
    assert_lowers_to("w = t[ds(off, 4), :]", "w = pl.tile.slice(t, [4, 128], [off, 0])")


def test_pl_ds_is_accepted_like_bare_ds():
    assert_lowers_to("w = t[:, pl.ds(off, 64)]", "w = pl.tile.slice(t, [16, 64], [0, off])")


def test_affine_index_lowers_to_its_affine_offset():
    assert_lowers_to("w = t[i * 16 + 8, :]", "w = pl.tile.slice(t, [1, 128], [i * 16 + 8, 0])")


def test_affine_index_is_put_in_normal_form():
    assert_lowers_to("w = t[8 + 2 * i, :]", "w = pl.tile.slice(t, [1, 128], [i * 2 + 8, 0])")


def test_equal_affine_indices_give_structurally_equal_slices():
    et.assert_structural_equal(prog("w = t[(i + 1) * 16 - 8, :]"), prog("w = t[i * 16 + 8, :]"))


def test_negative_term_is_written_as_a_subtraction_after_the_positive_ones():
    assert_lowers_to("w = t[0:4, -2 * i + off]", "w = pl.tile.slice(t, [4, 1], [0, off - i * 2])")


def test_floor_division_by_a_constant_gives_a_quasi_affine_offset():
    assert_lowers_to("w = t[i // 2, :]", "w = pl.tile.slice(t, [1, 128], [i // 2, 0])")


def test_runtime_length_ds_gets_the_supremum_extent_and_the_runtime_valid_shape():
    assert_lowers_to("w = t[:, ds(off, n)]", "w = pl.tile.slice(t, [16, 128], [0, off], [16, n])")


def test_runtime_length_extent_is_bounded_by_the_room_after_the_constant_part_of_start():
    assert_lowers_to("w = t[ds(off + 8, n), :]",
                     "w = pl.tile.slice(t, [8, 128], [off + 8, 0], [n, 128])")


def test_runtime_stop_slice_lowers_like_the_runtime_length_ds():
    et.assert_structural_equal(prog("w = t[off:off + n, :]"), prog("w = t[ds(off, n), :]"))


def test_runtime_start_with_constant_span_is_a_static_window():
    assert_lowers_to("w = t[off:off + 4, :]", "w = pl.tile.slice(t, [4, 128], [off, 0])")


def test_subscript_prints_as_the_canonical_tile_slice_and_round_trips():
    p = prog("w = t[8 + i * 16, 64:]")
    text = et.print_program(p)
    assert "pl.tile.slice(t, [1, 64], [i * 16 + 8, 64])" in text
    et.assert_structural_equal(et.parse_program(text), p)


def test_subscript_result_type_is_checked_against_its_annotation():
    err = parse_error("w: pl.Tile[[2, 128], pl.FP32, pl.Mem.Vec] = t[0, :]")
    assert "annotation of 'w' disagrees" in err.message


# ------------------------------------------------------------------ errors


def test_step_zero_is_rejected_with_the_seed_message():
    assert "step of `...` must be non-zero" in parse_error("w = t[0:8:0, :]").message


def test_strided_static_subscript_is_rejected():
    assert "strided subscript (step 2)" in parse_error("w = t[0:8:2, :]").message


def test_strided_runtime_length_is_rejected_with_the_seed_message():
    err = parse_error("w = t[off:off + n:2, :]")
    assert "step of `...` must be 1 when `stop - start` is not compile time constant" in err.message


def test_float_start_is_rejected_with_the_seed_message():
    assert "`start` must be int or scalar[int]" in parse_error("w = t[1.5, :]").message


def test_float_scalar_index_is_rejected_with_the_seed_message():
    assert "`start` must be int or scalar[int]" in parse_error("w = t[f, :]").message


def test_float_stop_is_rejected_with_the_seed_message():
    assert "`stop` must be int or scalar[int]" in parse_error("w = t[:, 0:n + 0.5]").message


def test_out_of_bounds_constant_window_is_rejected_at_its_element():
    err = parse_error("w = t[:, 120:136]")
    assert "window [120, 136) lies outside the tile's extent 128" in err.message
    assert (err.line, err.col) == (8, 18)  # the `120:136` element, kernel line 8


def test_index_one_past_the_last_row_is_rejected():
    assert "window [16, 17) lies outside" in parse_error("w = t[16, :]").message


def test_ds_longer_than_the_tile_is_rejected():
    assert "window extent 200 does not fit" in parse_error("w = t[:, ds(off, 200)]").message


def test_empty_range_is_rejected():
    assert "empty window" in parse_error("w = t[4:2, :]").message


def test_product_of_two_scalars_is_not_an_affine_index():
    assert "not affine" in parse_error("w = t[i * off, :]").message


def test_floor_division_by_a_scalar_is_rejected_with_the_seed_message():
    err = parse_error("w = t[i // n, :]")
    assert "'//' between NKI index and non integer is not supported." in err.message


def test_more_subscripts_than_the_tile_rank_is_rejected():
    assert "3 subscripts for the rank-2 tile 't'" in parse_error("w = t[1, 2, 3]").message


def test_none_subscript_is_rejected():
    assert "`None` is not supported" in parse_error("w = t[None, :]").message


def test_subscript_of_a_tensor_is_rejected():
    assert "'x' is a tensor; subscripts apply to tiles only" in parse_error("w = x[0, :]").message


def test_subscript_inside_a_call_is_rejected():
    err = parse_error("w = pl.tile.muls(t[0, :], 2.0)")
    assert "must be the whole right-hand side of an assignment" in err.message


# ------------------------------------------------------------------ end to end

E2E = "x: pl.Tensor[[16, 16], pl.FP32], row_off: pl.Scalar[pl.INDEX], i: pl.Scalar[pl.INDEX]"
E2E_LOAD = "t = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)"


def optimized(body: str):
    return et.optimize(et.parse_program(kernel(E2E, E2E_LOAD + "\n" + body)))


def assert_optimizes_to(body: str, expected: str) -> None:
    et.assert_structural_equal(optimized(body),
                               et.parse_program(kernel(E2E, E2E_LOAD + "\n" + expected)))


def test_unaligned_column_subscript_feeding_muls_becomes_an_extract():
    assert_optimizes_to("""
head = t[:, 1:2]
scaled = pl.tile.muls(head, 0.5)
""", """
head_ext = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
scaled = pl.tile.muls(head_ext, 0.5)
""")


def test_aligned_fp32_column_subscript_feeding_muls_stays_a_view():
    body = """
hi = t[:, 8:16]
scaled = pl.tile.muls(hi, 2.0)
"""
    assert_optimizes_to(body, body.replace("t[:, 8:16]", "pl.tile.slice(t, [16, 8], [0, 8])"))


def test_dynamic_row_ds_feeding_col_expand_mul_is_materialized():
    assert_optimizes_to("""
row = t[ds(row_off, 1), :]
r = pl.tile.col_expand_mul(t, row)
""", """
row_ext = pl.tile.extract(t, row_off, 0, shape=[1, 16], target_memory=pl.Mem.Vec)
r = pl.tile.col_expand_mul(t, row_ext)
""")


def test_affine_row_index_with_an_aligned_row_stride_stays_a_view():
    body = """
row = t[i * 2 + 1, :]
scaled = pl.tile.muls(row, 2.0)
"""
    assert_optimizes_to(body, body.replace("t[i * 2 + 1, :]",
                                           "pl.tile.slice(t, [1, 16], [i * 2 + 1, 0])"))


def test_runtime_length_subscript_is_a_valid_shape_slice_the_pass_leaves_alone():
    body = """
rows = t[ds(0, row_off), :]
scaled = pl.tile.muls(rows, 2.0)
"""
    assert_optimizes_to(body, body.replace("t[ds(0, row_off), :]",
                                           "pl.tile.slice(t, [16, 16], [0, 0], [row_off, 16])"))
