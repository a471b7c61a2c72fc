"""The engine and the Mat-slice canonicalization (folds, peeling, matmul operands)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import egraph_tiles as et
from canon_helpers import assert_canonicalizes, kernel
from seed_kernels import SEED_KERNELS

MAT_X = "x: pl.Tensor[[64, 512], pl.INT8], ko: pl.Scalar[pl.INDEX]"
LOAD_X = "x_mat: pl.Tile[[64, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [64, 512], target_memory=pl.Mem.Mat)"


@pytest.mark.parametrize("name", ["extract_fold", "matmul_operands"])
def test_seed_example_gives_exactly_the_after_program(name):
    before = et.parse_program(SEED_KERNELS[f"{name}_before"])
    after = et.parse_program(SEED_KERNELS[f"{name}_after"])
    et.assert_structural_equal(et.canonicalize_tile_slice(before), after)


def test_nonzero_page_offset_folds_into_extract_index():
    assert_canonicalizes(MAT_X, f"""
        {LOAD_X}
        page: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [32, 512], [32, 0])
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(page, 0, ko, shape=[32, 256], target_memory=pl.Mem.Left)
    """, f"""
        {LOAD_X}
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(x_mat, 32, ko, shape=[32, 256], target_memory=pl.Mem.Left)
    """)


def test_symbolic_extract_index_plus_constant_slice_offset_folds_to_sum():
    assert_canonicalizes(MAT_X, f"""
        {LOAD_X}
        hi: pl.Tile[[64, 256], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [64, 256], [0, 256])
        a: pl.Tile[[64, 128], pl.INT8, pl.Mem.Left] = pl.tile.extract(hi, 0, ko, shape=[64, 128], target_memory=pl.Mem.Left)
    """, f"""
        {LOAD_X}
        a: pl.Tile[[64, 128], pl.INT8, pl.Mem.Left] = pl.tile.extract(x_mat, 0, ko + 256, shape=[64, 128], target_memory=pl.Mem.Left)
    """)


def test_two_deep_slice_chain_folds_into_one_extract_index():
    assert_canonicalizes(MAT_X, f"""
        {LOAD_X}
        s1: pl.Tile[[64, 256], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [64, 256], [0, 256])
        s2: pl.Tile[[32, 256], pl.INT8, pl.Mem.Mat] = pl.tile.slice(s1, [32, 256], [32, 0])
        a: pl.Tile[[32, 128], pl.INT8, pl.Mem.Left] = pl.tile.extract(s2, 0, 128, shape=[32, 128], target_memory=pl.Mem.Left)
    """, f"""
        {LOAD_X}
        a: pl.Tile[[32, 128], pl.INT8, pl.Mem.Left] = pl.tile.extract(x_mat, 32, 384, shape=[32, 128], target_memory=pl.Mem.Left)
    """)


def test_three_deep_slice_chain_folds_into_one_extract_index():
    assert_canonicalizes(MAT_X, f"""
        {LOAD_X}
        s1: pl.Tile[[64, 256], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [64, 256], [0, 256])
        s2: pl.Tile[[32, 256], pl.INT8, pl.Mem.Mat] = pl.tile.slice(s1, [32, 256], [32, 0])
        s3: pl.Tile[[16, 128], pl.INT8, pl.Mem.Mat] = pl.tile.slice(s2, [16, 128], [16, 64])
        a: pl.Tile[[16, 64], pl.INT8, pl.Mem.Left] = pl.tile.extract(s3, 0, 0, shape=[16, 64], target_memory=pl.Mem.Left)
    """, f"""
        {LOAD_X}
        a: pl.Tile[[16, 64], pl.INT8, pl.Mem.Left] = pl.tile.extract(x_mat, 48, 320, shape=[16, 64], target_memory=pl.Mem.Left)
    """)


def test_slice_with_several_extract_consumers_folds_into_each():
    assert_canonicalizes(MAT_X, f"""
        {LOAD_X}
        page: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [32, 512], [32, 0])
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(page, 0, 0, shape=[32, 256], target_memory=pl.Mem.Left)
        b: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(page, 0, 256, shape=[32, 256], target_memory=pl.Mem.Left)
    """, f"""
        {LOAD_X}
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(x_mat, 32, 0, shape=[32, 256], target_memory=pl.Mem.Left)
        b: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(x_mat, 32, 256, shape=[32, 256], target_memory=pl.Mem.Left)
    """)


def test_slice_outside_pipelined_loop_folds_into_extract_inside_it():
    params = "x: pl.Tensor[[64, 512], pl.INT8], w: pl.Tensor[[256, 64], pl.INT8]"
    assert_canonicalizes(params, f"""
        {LOAD_X}
        w_right: pl.Tile[[256, 64], pl.INT8, pl.Mem.Right] = pl.tile.load(w, [0, 0], [256, 64], target_memory=pl.Mem.Right)
        page: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [32, 512], [32, 0])
        for ko in pl.pipeline(0, 512, 256, stage=2):
            a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(page, 0, ko, shape=[32, 256], target_memory=pl.Mem.Left)
            c: pl.Tile[[32, 64], pl.INT32, pl.Mem.Acc] = pl.tile.matmul(a, w_right)
    """, f"""
        {LOAD_X}
        w_right: pl.Tile[[256, 64], pl.INT8, pl.Mem.Right] = pl.tile.load(w, [0, 0], [256, 64], target_memory=pl.Mem.Right)
        for ko in pl.pipeline(0, 512, 256, stage=2):
            a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(x_mat, 32, ko, shape=[32, 256], target_memory=pl.Mem.Left)
            c: pl.Tile[[32, 64], pl.INT32, pl.Mem.Acc] = pl.tile.matmul(a, w_right)
    """)


MM = "l: pl.Tensor[[16, 512], pl.BF16], r: pl.Tensor[[512, 64], pl.BF16], bt: pl.Tensor[[1, 64], pl.FP32]"
MM_LOADS = """
lhs_mat: pl.Tile[[16, 512], pl.BF16, pl.Mem.Mat] = pl.tile.load(l, [0, 0], [16, 512], target_memory=pl.Mem.Mat)
rhs_mat: pl.Tile[[512, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(r, [0, 0], [512, 64], target_memory=pl.Mem.Mat)
"""


def test_matmul_acc_operands_become_left_right_extracts_and_the_accumulator_is_untouched():
    assert_canonicalizes(MM, MM_LOADS + """
acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
ls: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.slice(lhs_mat, [16, 256], [0, 256])
rs: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.slice(rhs_mat, [256, 64], [256, 0])
acc2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, ls, rs)
""", MM_LOADS + """
acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
ls_left: pl.Tile[[16, 256], pl.BF16, pl.Mem.Left] = pl.tile.extract(lhs_mat, 0, 256, shape=[16, 256], target_memory=pl.Mem.Left)
rs_right: pl.Tile[[256, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(rhs_mat, 256, 0, shape=[256, 64], target_memory=pl.Mem.Right)
acc2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, ls_left, rs_right)
""")


def test_matmul_bias_operands_become_extracts_and_the_bias_is_untouched():
    assert_canonicalizes(MM, MM_LOADS + """
bias: pl.Tile[[1, 64], pl.FP32, pl.Mem.Bias] = pl.tile.load(bt, [0, 0], [1, 64], target_memory=pl.Mem.Bias)
ls: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.slice(lhs_mat, [16, 256], [0, 0])
rs: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.slice(rhs_mat, [256, 64], [0, 0])
c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_bias(ls, rs, bias)
""", MM_LOADS + """
bias: pl.Tile[[1, 64], pl.FP32, pl.Mem.Bias] = pl.tile.load(bt, [0, 0], [1, 64], target_memory=pl.Mem.Bias)
ls_left: pl.Tile[[16, 256], pl.BF16, pl.Mem.Left] = pl.tile.extract(lhs_mat, 0, 0, shape=[16, 256], target_memory=pl.Mem.Left)
rs_right: pl.Tile[[256, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(rhs_mat, 0, 0, shape=[256, 64], target_memory=pl.Mem.Right)
c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_bias(ls_left, rs_right, bias)
""")


def test_mat_slice_feeding_move_stays_a_subview():
    body = MM_LOADS + """
ls: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.slice(lhs_mat, [16, 256], [0, 256])
v: pl.Tile[[16, 256], pl.BF16, pl.Mem.Vec] = pl.tile.move(ls, target_memory=pl.Mem.Vec)
"""
    assert_canonicalizes(MM, body, body)


@pytest.mark.parametrize("params,body,ftype", [
    ("x: pl.Tensor[[16, 64], pl.FP32]", """
        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        y: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.muls(t, 2.0)
    """, "InCore"),
    ("x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]", """
        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        whole: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 64], [0, 0])
        out = pl.store(whole, [0, 0], out)
    """, "InCore"),
    ("x: pl.Tensor[[16, 64], pl.FP32]", """
        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 1], [0, 1])
        y: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 2.0)
    """, "Orchestration"),
    ("x: pl.Tensor[[16, 64], pl.FP32], i: pl.Scalar[pl.INDEX]", """
        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        row: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 64], [i, 0], valid_shape=[1, 63])
        y: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.muls(row, 2.0)
    """, "InCore"),
], ids=["no-slice", "safe-whole-tile-view-stored", "non-incore-function", "four-argument-slice"])
def test_program_is_returned_unchanged(params, body, ftype):
    assert_canonicalizes(params, body, body, ftype)


def test_optimize_is_idempotent_on_the_seed_examples():
    for name, text in SEED_KERNELS.items():
        if name.endswith("_before"):
            once = et.optimize(et.parse_program(text))
            et.assert_structural_equal(et.optimize(once), once)


def test_pyPTO_spelling_runs_the_same_pass():
    prog = et.parse_program(SEED_KERNELS["matmul_operands_before"])
    et.assert_structural_equal(et.passes.canonicalize_tile_slice()(prog), et.canonicalize_tile_slice(prog))


_DETERMINISM = """
import sys
sys.path.insert(0, {tests!r})
import egraph_tiles as et
from seed_kernels import SEED_KERNELS
for name in sorted(SEED_KERNELS):
    if name.endswith("_before"):
        sys.stdout.write(et.print_program(et.optimize(et.parse_program(SEED_KERNELS[name]))))
"""


def test_output_text_is_byte_identical_across_processes_with_different_hash_seeds():
    code = _DETERMINISM.format(tests=str(Path(__file__).parents[1]))
    outs = []
    for seed in ("1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                   text=True, check=True).stdout)
    assert outs[0] == outs[1] and "tile.extract" in outs[0]


def test_egglog_panic_becomes_value_error_naming_the_function(monkeypatch):
    from egraph_tiles.egraph import schedule

    class Panic(BaseException):
        pass

    def boom(*_a, **_k):
        raise Panic("Already borrowed")

    monkeypatch.setattr(schedule, "saturate", boom)
    prog = et.parse_program(SEED_KERNELS["matmul_operands_before"])
    with pytest.raises(ValueError, match="function 'kernel'.*Already borrowed"):
        et.canonicalize_tile_slice(prog)


def test_iteration_limit_stops_the_term_rules_and_is_reported():
    from egraph_tiles.report.report import Report
    from egraph_tiles.egraph.schedule import Limits
    from egraph_tiles.passes import Options

    # a limit bounds the rules that make new terms: with no iteration, the fold of the slice
    # into its extract (a new Ext term) is never made, so the kernel keeps its (valid) slice
    rep = Report()
    out = et.canonicalize_tile_slice(et.parse_program(SEED_KERNELS["extract_fold_before"]),
                                     options=Options(limits=Limits(iterations=0)), report=rep)
    assert "tile.extract(lhs_slice, 0, ko" in et.print_program(out)
    assert rep.functions[0].limit_hit == "iteration limit 0"


def test_iteration_limit_still_proves_views_over_the_terms_made():
    from egraph_tiles.report.report import Report
    from egraph_tiles.egraph.schedule import Limits
    from egraph_tiles.passes import Options

    # FP32 column 8 is aligned once its multiple is proven; a limit stops new terms only, the
    # facts over the terms already there (multiples, layout, legality) are still derived, so
    # the use stays a proven view (an unproven one would be copied, never left a view)
    text = kernel("x: pl.Tensor[[16, 64], pl.FP32]", """
        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        c8: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, 8])
        y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c8, 2.0)
    """)
    rep = Report()
    out = et.canonicalize_tile_slice(et.parse_program(text), options=Options(limits=Limits(iterations=0)),
                                     report=rep)
    assert "tile.muls(c8, 2.0)" in et.print_program(out)
    assert "tile.extract" not in et.print_program(out)
    assert rep.functions[0].limit_hit == "iteration limit 0"
