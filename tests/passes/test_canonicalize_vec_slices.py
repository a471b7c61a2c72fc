"""Vec slices — alignment proofs, col_expand identity copies, SSA escapes, placement."""

import pytest

import egraph_tiles as et
from canon_helpers import assert_canonicalizes, kernel
from seed_kernels import SEED_KERNELS

X = "x: pl.Tensor[[16, 64], pl.FP32]"
T = "t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)"
XG = "x: pl.Tensor[[16, 64], pl.FP32], g: pl.Tensor[[1, 64], pl.FP32]"
TG = T + "\ngamma: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(g, [0, 0], [1, 64], target_memory=pl.Mem.Vec)"


def unchanged(params: str, body: str) -> None:
    assert_canonicalizes(params, body, body)


@pytest.mark.parametrize("name", ["col_expand_dynamic_row", "col_expand_column_slice", "unaligned_column"])
def test_seed_example_gives_exactly_the_after_program(name):
    before = et.parse_program(SEED_KERNELS[f"{name}_before"])
    et.assert_structural_equal(et.canonicalize_tile_slice(before),
                               et.parse_program(SEED_KERNELS[f"{name}_after"]))


def test_fp32_column_8_stays_zero_copy():
    unchanged(X, T + """
c8: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, 8])
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c8, 0.5)
""")


def test_dynamic_row_of_32_byte_aligned_row_stride_stays_zero_copy():
    unchanged(X + ", r: pl.Scalar[pl.INDEX]", T + """
row: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 64], [r, 0])
y: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.muls(row, 0.5)
""")


def test_constant_ssa_offset_16_is_aligned_and_stays():
    unchanged(X, T + """
off: pl.Scalar[pl.INDEX] = 16
c: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, off])
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c, 0.5)
""")


def test_constant_ssa_offset_1_is_copied_with_the_literal_folded_in():
    assert_canonicalizes(X, T + """
off: pl.Scalar[pl.INDEX] = 1
c: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, off])
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c, 0.5)
""", T + """
off: pl.Scalar[pl.INDEX] = 1
c_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 8], target_memory=pl.Mem.Vec)
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c_ext, 0.5)
""")


XI = "x: pl.Tensor[[16, 256], pl.INT32]"
TI = "t: pl.Tile[[16, 256], pl.INT32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 256], target_memory=pl.Mem.Vec)"


def test_dynamic_column_block_idx_times_16_times_2_on_int32_stays():
    unchanged(XI, TI + """
b = pl.tile.get_block_idx()
col: pl.Scalar[pl.INDEX] = b * 16 * 2
c: pl.Tile[[16, 8], pl.INT32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, col])
y: pl.Tile[[16, 8], pl.INT32, pl.Mem.Vec] = pl.tile.muls(c, 2)
""")


def test_bare_parameter_column_is_copied():
    assert_canonicalizes(XI + ", k: pl.Scalar[pl.INDEX]", TI + """
c: pl.Tile[[16, 8], pl.INT32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, k])
y: pl.Tile[[16, 8], pl.INT32, pl.Mem.Vec] = pl.tile.muls(c, 2)
""", TI + """
c_ext: pl.Tile[[16, 8], pl.INT32, pl.Mem.Vec] = pl.tile.extract(t, 0, k, shape=[16, 8], target_memory=pl.Mem.Vec)
y: pl.Tile[[16, 8], pl.INT32, pl.Mem.Vec] = pl.tile.muls(c_ext, 2)
""")


OUT = ", out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]"


def test_bare_call_operand_is_guarded():
    assert_canonicalizes(X + OUT, T + """
head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 1], [0, 1])
pl.tile.tpush_to_aiv(head)
""", T + """
head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
pl.tile.tpush_to_aiv(head_ext)
""")


def test_plain_alias_escape_is_materialized_under_the_alias_name():
    assert_canonicalizes(X, T + """
head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 1], [0, 1])
h2 = head
""", T + """
h2: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
""")


def test_consumer_of_a_plain_alias_reads_the_copy_under_the_alias_name():
    assert_canonicalizes(X, T + """
head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 1], [0, 1])
head_alias = head
y: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head_alias, 0.5)
""", T + """
head_alias: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
y: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head_alias, 0.5)
""")


def test_a_slice_read_before_its_alias_shares_one_copy_under_the_slice_name():
    # the first use makes the copy (head_ext); the alias then names that shared copy
    assert_canonicalizes(X, T + """
head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 1], [0, 1])
y: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 0.5)
head_alias = head
z: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head_alias, 2.0)
""", T + """
head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
y: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head_ext, 0.5)
head_alias = head_ext
z: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head_alias, 2.0)
""")


def test_an_alias_declared_with_another_type_keeps_its_statement():
    # the copy's type is [16, 1] FP32 Vec; an alias carrying more (a valid shape) is not renamed
    assert_canonicalizes(X, T + """
head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[8, 1])] = pl.tile.slice(t, [16, 1], [0, 1])
head_alias = head
y: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head_alias, 0.5)
""", T + """
head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
head_alias: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[8, 1])] = head_ext
y: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[8, 1])] = pl.tile.muls(head_alias, 0.5)
""")


def test_loop_initializer_escape_is_materialized_before_the_loop():
    assert_canonicalizes(X, T + """
head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 1], [0, 1])
for i, (acc,) in pl.range(0, 4, 1, init_values=(head,)):
    nxt: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.adds(acc, 1.0)
    res = pl.yield_(nxt)
""", T + """
head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
for i, (acc,) in pl.range(0, 4, 1, init_values=(head_ext,)):
    nxt: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.adds(acc, 1.0)
    res = pl.yield_(nxt)
""")


def test_yield_escape_is_materialized_before_the_yield():
    assert_canonicalizes(X, T + """
z: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 1], dtype=pl.FP32, target_memory=pl.Mem.Vec)
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 1], [0, 1])
    res = pl.yield_(head)
o: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.adds(res, 1.0)
""", T + """
z: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 1], dtype=pl.FP32, target_memory=pl.Mem.Vec)
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
    res = pl.yield_(head_ext)
o: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.adds(res, 1.0)
""")


@pytest.mark.parametrize("shape,offset", [("[2, 64]", "[4, 0]"), ("[1, 32]", "[3, 5]"), ("[16, 64]", "[0, 0]")],
                         ids=["full-width-rows", "single-row-constant-offset", "whole-tile"])
def test_identity_copy_col_expand_window_stays(shape, offset):
    cols = shape.strip("[]").split(",")[1].strip()
    vec = "gamma" if cols == "64" else "gh"
    extra = "" if cols == "64" else f"\ngh: pl.Tile[[1, {cols}], pl.FP32, pl.Mem.Vec] = pl.tile.slice(gamma, [1, {cols}], [0, 0])"
    unchanged(XG, TG + extra + f"""
w: pl.Tile[{shape}, pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, {shape}, {offset})
y: pl.Tile[{shape}, pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(w, {vec})
""")


def test_multi_row_column_slice_feeding_col_expand_is_copied():
    assert_canonicalizes(XG, TG + """
gh: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(gamma, [1, 32], [0, 0])
w: pl.Tile[[4, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [4, 32], [0, 32])
y: pl.Tile[[4, 32], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_add(w, gh)
""", TG + """
gh: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(gamma, [1, 32], [0, 0])
w_ext: pl.Tile[[4, 32], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 32, shape=[4, 32], target_memory=pl.Mem.Vec)
y: pl.Tile[[4, 32], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_add(w_ext, gh)
""")


def test_one_copy_for_a_slice_with_two_col_expand_consumers():
    assert_canonicalizes(XG + ", r: pl.Scalar[pl.INDEX]", TG + """
row: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 64], [r, 0])
a: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(row, gamma)
b: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_add(row, gamma)
""", TG + """
row_ext: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, r, 0, shape=[1, 64], target_memory=pl.Mem.Vec)
a: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(row_ext, gamma)
b: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_add(row_ext, gamma)
""")


def test_copy_goes_to_the_consumer_after_fillpad_inplace_writes_the_source():
    assert_canonicalizes(X, T + """
head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 1], [0, 1])
t2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad_inplace(t, pl.PadValue.zero)
y: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 0.5)
""", T + """
t2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad_inplace(t, pl.PadValue.zero)
head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
y: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head_ext, 0.5)
""")


def test_chained_slice_under_copied_parent_is_copied_again_when_unaligned_everywhere():
    assert_canonicalizes(X, T + """
p: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 16], [0, 1])
y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(p, 0.5)
q: pl.Tile[[16, 4], pl.FP32, pl.Mem.Vec] = pl.tile.slice(p, [16, 4], [0, 2])
z: pl.Tile[[16, 4], pl.FP32, pl.Mem.Vec] = pl.tile.muls(q, 0.5)
""", T + """
p_ext: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 16], target_memory=pl.Mem.Vec)
y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(p_ext, 0.5)
q_ext: pl.Tile[[16, 4], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 3, shape=[16, 4], target_memory=pl.Mem.Vec)
z: pl.Tile[[16, 4], pl.FP32, pl.Mem.Vec] = pl.tile.muls(q_ext, 0.5)
""")


def test_chained_slice_aligned_in_the_source_is_a_view_of_the_source_under_a_copied_parent():
    assert_canonicalizes(X, T + """
p: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 16], [0, 1])
y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(p, 0.5)
q: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(p, [16, 8], [0, 7])
z: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(q, 0.5)
""", T + """
p_ext: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 16], target_memory=pl.Mem.Vec)
y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(p_ext, 0.5)
q: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, 8])
z: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(q, 0.5)
""")


X128 = "x: pl.Tensor[[16, 128], pl.FP32]"
L128 = ("local: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = "
        "pl.tile.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Vec)")
P8 = L128 + """
p: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 1])
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(p, 0.5)
"""
P8_EXT = L128 + """
p_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, 1, shape=[16, 8], target_memory=pl.Mem.Vec)
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(p_ext, 0.5)
"""


def test_chained_slice_aligned_in_its_copied_parent_is_a_view_of_the_parent_copy():
    # in p_ext (pitch 8): (2*8 + 0) * 32 = 512 bits, aligned; in local: (2*128 + 1) * 32, not
    assert_canonicalizes(X128, P8 + """
c: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(p, [1, 8], [2, 0])
z: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c, 0.5)
""", P8_EXT + """
c_view: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(p_ext, [1, 8], [2, 0])
z: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c_view, 0.5)
""")


def test_chained_slice_unaligned_in_the_source_and_in_the_parent_copy_is_copied_from_the_source():
    # in p_ext: (1*8 + 1) * 32 bits; in local: (1*128 + 2) * 32 bits: neither is aligned
    assert_canonicalizes(X128, P8 + """
c: pl.Tile[[1, 4], pl.FP32, pl.Mem.Vec] = pl.tile.slice(p, [1, 4], [1, 1])
z: pl.Tile[[1, 4], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c, 0.5)
""", P8_EXT + """
c_ext: pl.Tile[[1, 4], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 1, 2, shape=[1, 4], target_memory=pl.Mem.Vec)
z: pl.Tile[[1, 4], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c_ext, 0.5)
""")


def test_chained_slice_does_not_read_the_parent_copy_after_fillpad_inplace_writes_the_source():
    # p_ext is a snapshot taken before the fillpad; c must see the padded source
    assert_canonicalizes(X128, P8 + """
c: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(p, [1, 8], [2, 0])
t2: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad_inplace(local, pl.PadValue.zero)
z: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c, 0.5)
""", P8_EXT + """
t2: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad_inplace(local, pl.PadValue.zero)
c_ext: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 2, 1, shape=[1, 8], target_memory=pl.Mem.Vec)
z: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c_ext, 0.5)
""")


def test_explain_shows_the_arithmetic_of_a_view_of_the_parent_copy():
    from egraph_tiles.report.report import Report

    rep = Report()
    et.canonicalize_tile_slice(et.parse_program(kernel(X128, P8 + """
c: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(p, [1, 8], [2, 0])
z: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c, 0.5)
""")), report=rep)
    assert ("view of the parent's copy p_ext: offset (2 × 8 cols + 0) × 32 bits = 512 bits: "
            "multiple of 256 → view") in rep.explain()


def test_identical_slice_after_fillpad_inplace_gets_its_own_copy_not_the_stale_one():
    # q_ext is a snapshot taken before the fillpad; p (the same window) must see the padded source
    assert_canonicalizes(X128, L128 + """
q: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 1])
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(q, 2.0)
t2: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad_inplace(local, pl.PadValue.zero)
p: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 1])
z: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(p, 3.0)
""", L128 + """
q_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, 1, shape=[16, 8], target_memory=pl.Mem.Vec)
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(q_ext, 2.0)
t2: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad_inplace(local, pl.PadValue.zero)
p_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, 1, shape=[16, 8], target_memory=pl.Mem.Vec)
z: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(p_ext, 3.0)
""")


def test_loop_variable_stepping_by_8_over_fp32_columns_stays_zero_copy():
    unchanged(X, T + """
for j in pl.range(0, 64, 8):
    c: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, j])
    y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c, 0.5)
""")


def test_loop_variable_stepping_by_4_over_fp32_columns_is_copied():
    prog = et.parse_program(kernel(X, T + """
for j in pl.range(0, 64, 4):
    c: pl.Tile[[16, 4], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 4], [0, j])
    y: pl.Tile[[16, 4], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c, 0.5)
"""))
    assert "pl.tile.extract(t, 0, j" in et.print_program(et.canonicalize_tile_slice(prog))


def test_affine_simplified_offset_gets_the_multiple_of_its_simplified_form():
    unchanged(X + ", i: pl.Scalar[pl.INDEX]", T + """
a: pl.Scalar[pl.INDEX] = i * 16 + 8
off: pl.Scalar[pl.INDEX] = a - 8
c: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, off])
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c, 0.5)
""")


@pytest.mark.parametrize("extra", ["[i, 0], valid_shape=[1, 64]", "[0, 0], valid_shape=[16, 32]"],
                         ids=["dynamic-offset", "non-contiguous"])
def test_valid_shape_slice_feeding_col_expand_unsafely_raises(extra):
    shape = "[1, 64]" if "i," in extra else "[16, 32]"
    cols = shape.strip("[]").split(", ")[1]
    text = kernel(XG + ", i: pl.Scalar[pl.INDEX]", TG + f"""
gh: pl.Tile[[1, {cols}], pl.FP32, pl.Mem.Vec] = pl.tile.slice(gamma, [1, {cols}], [0, 0])
w: pl.Tile[{shape}, pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, {shape}, {extra})
y: pl.Tile[{shape}, pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(w, gh)
""")
    with pytest.raises(ValueError, match="slice 'w'.*col_expand_mul"):
        et.canonicalize_tile_slice(et.parse_program(text))


def test_explain_shows_the_alignment_arithmetic():
    from egraph_tiles.report.report import Report

    rep = Report()
    et.canonicalize_tile_slice(et.parse_program(SEED_KERNELS["unaligned_column_before"]), report=rep)
    text = rep.explain()
    assert "(0 × 8 cols + 1) × 32 bits = 32 bits, not provably ≡ 0 mod 256 → copy 64 B" in text


def test_view_proven_for_one_context_does_not_leak_into_another():
    # hi is 32-byte aligned (a view for muls) but a non-contiguous col_expand operand (#2010)
    assert_canonicalizes(XG, TG + """
hi: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 32], [0, 32])
sc: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.muls(hi, 0.125)
g1: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(gamma, [1, 32], [0, 32])
y: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(hi, g1)
""", TG + """
hi: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 32], [0, 32])
hi_ext: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 32, shape=[16, 32], target_memory=pl.Mem.Vec)
sc: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.muls(hi, 0.125)
g1: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(gamma, [1, 32], [0, 32])
y: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(hi_ext, g1)
""")


def test_valid_shape_single_row_at_constant_offset_feeding_col_expand_is_accepted_and_untouched():
    # the identity-copy proof (rules.legality) clears the check (rules.checks): no violation
    unchanged(XG, TG + """
w: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 64], [3, 0], valid_shape=[1, 32])
y: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(w, gamma)
""")


def test_valid_shape_slice_reaching_col_expand_through_an_alias_raises():
    text = kernel(XG + ", i: pl.Scalar[pl.INDEX]", TG + """
w: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 64], [i, 0], valid_shape=[1, 32])
w2 = w
y: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(w2, gamma)
""")
    with pytest.raises(ValueError, match=r"slice 'w' .*col_expand_mul at line .* \(through 'w2': an alias\)"):
        et.canonicalize_tile_slice(et.parse_program(text))
