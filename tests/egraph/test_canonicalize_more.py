"""Further guarantees of the engine: extract naming, node/time limits, Vec-slice folds, AIC/AIV
functions, drop_dims slices, shared windows, idempotence on random programs."""

import pytest
from hypothesis import given, settings

import egraph_tiles as et
from canon_helpers import assert_canonicalizes, kernel
from strategies import programs

MM = "l: pl.Tensor[[16, 512], pl.BF16], r: pl.Tensor[[512, 64], pl.BF16]"
LOADS = """
lhs_mat: pl.Tile[[16, 512], pl.BF16, pl.Mem.Mat] = pl.tile.load(l, [0, 0], [16, 512], target_memory=pl.Mem.Mat)
rhs_mat: pl.Tile[[512, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(r, [0, 0], [512, 64], target_memory=pl.Mem.Mat)
"""
MATMUL = LOADS + """
lhs_slice: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.slice(lhs_mat, [16, 256], [0, 256])
rhs_slice: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.slice(rhs_mat, [256, 64], [256, 0])
c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lhs_slice, rhs_slice)
"""


def optimized_text(params: str, body: str, ftype: str = "InCore") -> str:
    return et.print_program(et.canonicalize_tile_slice(et.parse_program(kernel(params, body, ftype=ftype))))


def test_matmul_operand_extracts_are_named_after_the_slice_with_left_and_right():
    text = optimized_text(MM, MATMUL)
    assert "lhs_slice_left: pl.Tile[[16, 256], pl.BF16, pl.Mem.Left] = pl.tile.extract(lhs_mat, 0, 256" in text
    assert "rhs_slice_right: pl.Tile[[256, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(rhs_mat, 256, 0" in text
    assert "pl.tile.matmul(lhs_slice_left, rhs_slice_right)" in text


def test_extract_name_does_not_clash_with_an_existing_name():
    body = MATMUL + """
lhs_slice_left: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lhs_slice, rhs_slice)
"""
    text = optimized_text(MM, body)
    names = [ln.split(":")[0].strip() for ln in text.splitlines() if " = pl." in ln]
    assert len(names) == len(set(names)), names
    assert text.count("lhs_slice_left:") == 1
    et.verify_program(et.parse_program(text))


@pytest.mark.parametrize("limits", [{"nodes": 1}, {"seconds": 0.0}], ids=["node-limit", "time-limit"])
def test_node_and_time_limits_are_reported_and_keep_only_views_proven_without_limits(limits):
    from pathlib import Path

    from egraph_tiles.report.report import Report
    from egraph_tiles.egraph.schedule import Limits
    from egraph_tiles.passes import Options

    text = (Path(__file__).parents[2] / "examples" / "rmsnorm_heads.py").read_text()
    full, limited = Report(), Report()
    et.canonicalize_tile_slice(et.parse_program(text), report=full)
    et.canonicalize_tile_slice(et.parse_program(text), options=Options(limits=Limits(**limits)),
                               report=limited)
    assert limited.functions[0].limit_hit is not None and "limit" in limited.explain()
    def views(rep):
        return {(d.slice, d.use) for d in rep.functions[0].decisions if d.decision == "view"}

    assert views(limited) <= views(full)
    assert limited.functions[0].bytes_after >= full.functions[0].bytes_after


def test_vec_slice_feeding_an_extract_folds_and_keeps_the_kwargs():
    assert_canonicalizes("x: pl.Tensor[[16, 64], pl.FP32]", """
        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        s: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [8, 32], [8, 16])
        e: pl.Tile[[4, 8], pl.FP32, pl.Mat] = pl.tile.extract(s, 2, 3, shape=[4, 8], target_memory=pl.Mem.Mat)
    """.replace("pl.FP32, pl.Mat]", "pl.FP32, pl.Mem.Mat]"), """
        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        e: pl.Tile[[4, 8], pl.FP32, pl.Mem.Mat] = pl.tile.extract(t, 10, 19, shape=[4, 8], target_memory=pl.Mem.Mat)
    """)


@pytest.mark.parametrize("ftype", ["AIC", "AIV"])
def test_aic_and_aiv_functions_are_canonicalized_like_incore(ftype):
    assert_canonicalizes(MM, MATMUL, LOADS + """
lhs_left: pl.Tile[[16, 256], pl.BF16, pl.Mem.Left] = pl.tile.extract(lhs_mat, 0, 256, shape=[16, 256], target_memory=pl.Mem.Left)
rhs_right: pl.Tile[[256, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(rhs_mat, 256, 0, shape=[256, 64], target_memory=pl.Mem.Right)
c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lhs_left, rhs_right)
""", ftype)


def test_drop_dims_slice_is_returned_unchanged():
    body = """
        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        m: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.move(t, target_memory=pl.Mem.Mat)
        s = pl.tile.slice(m, [16, 32], [0, 32], drop_dims=[])
        e = pl.tile.extract(s, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
    """
    assert_canonicalizes("x: pl.Tensor[[16, 64], pl.FP32]", body, body)


def test_one_mat_window_used_as_left_operand_twice_is_extracted_once():
    text = optimized_text(MM, LOADS + """
lhs_slice: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.slice(lhs_mat, [16, 256], [0, 256])
rhs_slice: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.slice(rhs_mat, [256, 64], [256, 0])
c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lhs_slice, rhs_slice)
d: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lhs_slice, rhs_slice)
""")
    assert text.count("target_memory=pl.Mem.Left)") == 1
    assert text.count("target_memory=pl.Mem.Right)") == 1


@settings(max_examples=15, deadline=None)
@given(programs())
def test_optimize_is_idempotent_on_random_programs(prog):
    try:
        once = et.optimize(prog)
    except ValueError:
        return  # an Acc-window rejection: nothing to iterate
    et.assert_structural_equal(et.optimize(once), once)
