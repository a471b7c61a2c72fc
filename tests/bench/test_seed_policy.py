"""The plain seed policy reproduces the seed's examples and decision procedure."""

import dslkit
import egraph_tiles.dsl as dsl
from egraph_tiles.passes.baselines import seed_policy


def _kernel(params: str, body: str) -> str:
    return dslkit.kernel(params, body, bare=True)


def _assert_seed(params: str, before: str, after: str) -> None:
    got = dsl.print_program(seed_policy(dsl.parse_program(_kernel(params, before))))
    want = dsl.print_program(dsl.parse_program(_kernel(params, after)))
    assert got == want, f"--- got\n{got}\n--- want\n{want}"


MAT_PARAMS = "x: pl.Tensor[[64, 512], pl.INT8], ko: pl.Scalar[pl.INDEX]"


def test_offset_zero_mat_slice_folds_into_the_k_loop_extract_and_is_dropped():
    _assert_seed(MAT_PARAMS, """
        x_mat: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [32, 512], target_memory=pl.Mem.Mat)
        lhs_slice: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [32, 512], [0, 0])
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(lhs_slice, 0, ko, shape=[32, 256], target_memory=pl.Mem.Left)
        return a
    """, """
        x_mat: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [32, 512], target_memory=pl.Mem.Mat)
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(x_mat, 0, ko, shape=[32, 256], target_memory=pl.Mem.Left)
        return a
    """)


def test_nonzero_page_offset_folds_into_the_extract_index():
    _assert_seed(MAT_PARAMS, """
        x_mat: pl.Tile[[64, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
        page: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [32, 512], [32, 0])
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(page, 0, ko, shape=[32, 256], target_memory=pl.Mem.Left)
        return a
    """, """
        x_mat: pl.Tile[[64, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(x_mat, 32, ko, shape=[32, 256], target_memory=pl.Mem.Left)
        return a
    """)


def test_chained_mat_slices_are_peeled_and_their_offsets_accumulated():
    _assert_seed(MAT_PARAMS, """
        x_mat: pl.Tile[[64, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
        outer: pl.Tile[[48, 512], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [48, 512], [16, 0])
        inner: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.slice(outer, [32, 512], [16, 0])
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(inner, 0, 256, shape=[32, 256], target_memory=pl.Mem.Left)
        return a
    """, """
        x_mat: pl.Tile[[64, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(x_mat, 32, 256, shape=[32, 256], target_memory=pl.Mem.Left)
        return a
    """)


def test_constant_ssa_offsets_are_resolved_before_folding():
    _assert_seed(MAT_PARAMS, """
        x_mat: pl.Tile[[64, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
        page_row: pl.Scalar[pl.INDEX] = 32
        row_alias: pl.Scalar[pl.INDEX] = page_row
        page: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [32, 512], [row_alias, 0])
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(page, 0, 0, shape=[32, 256], target_memory=pl.Mem.Left)
        return a
    """, """
        x_mat: pl.Tile[[64, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
        page_row: pl.Scalar[pl.INDEX] = 32
        row_alias: pl.Scalar[pl.INDEX] = page_row
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(x_mat, 32, 0, shape=[32, 256], target_memory=pl.Mem.Left)
        return a
    """)


def test_mat_slice_matmul_operands_become_left_and_right_extracts():
    _assert_seed("l: pl.Tensor[[16, 256], pl.BF16], r: pl.Tensor[[256, 64], pl.BF16]", """
        lhs_mat: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.load(l, [0, 0], [16, 256], target_memory=pl.Mem.Mat)
        rhs_mat: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(r, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        lhs_slice: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.slice(lhs_mat, [16, 256], [0, 0])
        rhs_slice: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.slice(rhs_mat, [256, 64], [0, 0])
        c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lhs_slice, rhs_slice)
        return c
    """, """
        lhs_mat: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.load(l, [0, 0], [16, 256], target_memory=pl.Mem.Mat)
        rhs_mat: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(r, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        lhs_left: pl.Tile[[16, 256], pl.BF16, pl.Mem.Left] = pl.tile.extract(lhs_mat, 0, 0, shape=[16, 256], target_memory=pl.Mem.Left)
        rhs_right: pl.Tile[[256, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(rhs_mat, 0, 0, shape=[256, 64], target_memory=pl.Mem.Right)
        c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lhs_left, rhs_right)
        return c
    """)


def test_mat_slice_feeding_a_move_is_left_intact():
    before = """
        x_mat: pl.Tile[[64, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
        page: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [32, 512], [32, 0])
        moved: pl.Tile[[32, 512], pl.INT8, pl.Mem.Left] = pl.tile.move(page, target_memory=pl.Mem.Left)
        return moved
    """
    _assert_seed(MAT_PARAMS, before, before)


VEC_PARAMS = "x: pl.Tensor[[16, 256], pl.FP32], g: pl.Tensor[[1, 256], pl.FP32], row_off: pl.Scalar[pl.INDEX]"
LOADS = """
        local: pl.Tile[[16, 256], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 256], target_memory=pl.Mem.Vec)
        gamma_t: pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.load(g, [0, 0], [1, 256], target_memory=pl.Mem.Vec)
"""


def test_dynamic_row_slice_feeding_col_expand_mul_is_materialized():
    _assert_seed(VEC_PARAMS, LOADS + """
        row: pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [1, 256], [row_off, 0])
        scaled: pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(row, gamma_t)
        return scaled
    """, LOADS + """
        row_ext: pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, row_off, 0, shape=[1, 256], target_memory=pl.Mem.Vec)
        scaled: pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(row_ext, gamma_t)
        return scaled
    """)


def test_static_single_row_slice_feeding_col_expand_stays_a_view():
    before = LOADS + """
        row: pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [1, 256], [3, 0])
        scaled: pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(row, gamma_t)
        return scaled
    """
    _assert_seed(VEC_PARAMS, before, before)


def test_column_slice_of_a_multi_row_tile_feeding_col_expand_is_materialized():
    params = "x: pl.Tensor[[16, 128], pl.FP32], g: pl.Tensor[[1, 64], pl.FP32]"
    loads = """
        t: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Vec)
        gamma_t: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(g, [0, 0], [1, 64], target_memory=pl.Mem.Vec)
    """
    _assert_seed(params, loads + """
        hi: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 64], [0, 64])
        scaled: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(hi, gamma_t)
        return scaled
    """, loads + """
        hi_ext: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 64, shape=[16, 64], target_memory=pl.Mem.Vec)
        scaled: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(hi_ext, gamma_t)
        return scaled
    """)


HEAD_PARAMS = "x: pl.Tensor[[16, 16], pl.FP32], k: pl.Scalar[pl.INDEX], i: pl.Scalar[pl.INDEX]"
HEAD_LOAD = """
        local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
"""


def test_unaligned_fp32_column_slice_feeding_muls_is_materialized():
    _assert_seed(HEAD_PARAMS, HEAD_LOAD + """
        head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 1])
        scaled: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 0.5)
        return scaled
    """, HEAD_LOAD + """
        head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
        scaled: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head_ext, 0.5)
        return scaled
    """)


def test_fp32_column_8_is_32_bytes_from_the_base_and_stays_a_view():
    before = HEAD_LOAD + """
        head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 8])
        scaled: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 0.5)
        return scaled
    """
    _assert_seed(HEAD_PARAMS, before, before)


def test_dynamic_row_offset_over_an_aligned_row_stride_stays_a_view():
    before = HEAD_LOAD + """
        row: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [1, 16], [i, 0])
        scaled: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(row, 0.5)
        return scaled
    """
    _assert_seed(HEAD_PARAMS, before, before)


def test_scalar_ssa_multiple_of_8_proves_a_dynamic_fp32_column_aligned():
    before = HEAD_LOAD + """
        base: pl.Scalar[pl.INDEX] = k * 8
        head: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, base])
        scaled: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 0.5)
        return scaled
    """
    _assert_seed(HEAD_PARAMS, before, before)


def test_scalar_ssa_multiple_of_4_does_not_prove_an_fp32_column_aligned():
    _assert_seed(HEAD_PARAMS, HEAD_LOAD + """
        base: pl.Scalar[pl.INDEX] = k * 4
        head: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, base])
        scaled: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 0.5)
        return scaled
    """, HEAD_LOAD + """
        base: pl.Scalar[pl.INDEX] = k * 4
        head_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, base, shape=[16, 8], target_memory=pl.Mem.Vec)
        scaled: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head_ext, 0.5)
        return scaled
    """)


def test_loop_variable_stepping_by_8_is_not_a_proof_the_seed_knows():
    # the seed follows scalar SSA definitions only; a loop variable has none
    _assert_seed(HEAD_PARAMS, HEAD_LOAD + """
        for j in pl.range(0, 16, 8):
            head: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, j])
            scaled: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 0.5)
        return local
    """, HEAD_LOAD + """
        for j in pl.range(0, 16, 8):
            head_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, j, shape=[16, 8], target_memory=pl.Mem.Vec)
            scaled: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head_ext, 0.5)
        return local
    """)


def test_unaligned_slice_escaping_through_an_alias_is_materialized_at_the_alias():
    _assert_seed(HEAD_PARAMS, HEAD_LOAD + """
        head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 1])
        other: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = head
        return other
    """, HEAD_LOAD + """
        other: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
        return other
    """)


def test_unaligned_loop_initializer_is_materialized_before_the_loop():
    _assert_seed(HEAD_PARAMS, HEAD_LOAD + """
        head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 1])
        for j, (acc,) in pl.range(0, 4, 1, init_values=(head,)):
            nxt: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.adds(acc, 1.0)
            res = pl.yield_(nxt)
        return res
    """, HEAD_LOAD + """
        head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
        for j, (acc,) in pl.range(0, 4, 1, init_values=(head_ext,)):
            nxt: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.adds(acc, 1.0)
            res = pl.yield_(nxt)
        return res
    """)


def test_unaligned_yielded_slice_is_materialized_before_the_yield():
    _assert_seed(HEAD_PARAMS, HEAD_LOAD + """
        if k > 0:
            head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 3])
            chosen = pl.yield_(head)
        else:
            other: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 8])
            chosen = pl.yield_(other)
        return chosen
    """, HEAD_LOAD + """
        if k > 0:
            head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, 3, shape=[16, 1], target_memory=pl.Mem.Vec)
            chosen = pl.yield_(head_ext)
        else:
            other: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 8])
            chosen = pl.yield_(other)
        return chosen
    """)


def test_function_without_slices_is_returned_unchanged():
    prog = dsl.parse_program(_kernel(HEAD_PARAMS, HEAD_LOAD + """
        scaled: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(local, 0.5)
        return scaled
    """))
    assert seed_policy(prog).functions[0] is prog.functions[0]
