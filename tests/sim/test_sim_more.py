"""More ideal / hardware semantics: gemv_acc, scalar // and %, parallel and pipelined loops,
split_aiv scopes, set_validshape and reinterpret_view views, Orchestration calls into InCore."""

from __future__ import annotations

import numpy as np
import pytest

import egraph_tiles as et
from egraph_tiles.sim import outputs_equal, run_hardware, run_ideal
from simkit import agree, inputs_for, kernel


X16 = "x: pl.Tensor[[64, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]"
R16 = "pl.Tensor[[16, 16], pl.FP32]"
MM = """
a_m = pl.tile.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
b_m = pl.tile.load(b, [0, 0], [32, 48], target_memory=pl.Mem.Mat)
a_l = pl.tile.extract(a_m, 0, 0, shape=[16, 32], target_memory=pl.Mem.Left)
b_r = pl.tile.extract(b_m, 0, 0, shape=[32, 48], target_memory=pl.Mem.Right)
"""


def test_gemv_acc_accumulates_like_matmul_acc() -> None:
    t = kernel("a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 48], pl.FP16], "
               "out: pl.Out[pl.Tensor[[16, 48], pl.FP32]]", MM + """
c0 = pl.tile.matmul(a_l, b_r)
c1 = pl.tile.gemv_acc(c0, a_l, b_r)
out = pl.store(c1, [0, 0], out)
return out""", "pl.Tensor[[16, 48], pl.FP32]")
    ins = inputs_for(et.parse_program(t))
    assert np.array_equal(agree(t)["out"], 2 * (ins["a"].astype(np.int64) @ ins["b"].astype(np.int64)))


@pytest.mark.parametrize("expr,row", [("n // 2", 8), ("n % 24", 16), ("(n + 8) - 8", 16)])
def test_scalar_floor_div_mod_and_affine_offsets_pick_the_right_rows(expr: str, row: int) -> None:
    t = kernel(f"{X16}, n: pl.Scalar[pl.INDEX]", f"""
v = pl.tile.load(x, [0, 0], [64, 16], target_memory=pl.Mem.Vec)
k = {expr}
w = pl.tile.slice(v, [16, 16], [k, 0])
out = pl.store(w, [0, 0], out)
return out""", R16)
    x = inputs_for(et.parse_program(t))["x"]
    assert np.array_equal(agree(t, {"n": 16})["out"], x[row:row + 16])


@pytest.mark.parametrize("loop", ["pl.parallel(0, 4, 1, init_values=(v,))",
                                  "pl.pipeline(0, 4, 1, stage=2, init_values=(v,))"])
def test_parallel_and_pipelined_loops_run_every_trip(loop: str) -> None:
    t = kernel(X16, f"""
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
for i, (acc,) in {loop}:
    a = pl.tile.adds(acc, 1)
    r = pl.yield_(a)
out = pl.store(r, [0, 0], out)
return out""", R16)
    x = inputs_for(et.parse_program(t))["x"]
    assert np.array_equal(agree(t)["out"], x[:16] + 4)


def test_split_aiv_scope_runs_its_body_once_per_lane() -> None:
    t = kernel(X16, """
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
    half = pl.tile.slice(v, [8, 16], [lane * 8, 0])
    d = pl.tile.muls(half, 2)
    out = pl.store(d, [lane * 8, 0], out)
return out""", R16)
    x = inputs_for(et.parse_program(t))["x"]
    assert np.array_equal(agree(t)["out"], x[:16] * 2)


def test_set_validshape_view_shares_its_source_and_fillpad_pads_outside() -> None:
    t = kernel(X16, """
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
p = pl.tile.set_validshape(v, [16, 8])
q = pl.tile.fillpad_inplace(p, pad_value=pl.PadValue.zero)
out = pl.store(v, [0, 0], out)
return out""", R16)
    x = inputs_for(et.parse_program(t))["x"]
    expect = x[:16].copy()
    expect[:, 8:] = 0
    assert np.array_equal(agree(t)["out"], expect)


def test_orchestration_function_runs_its_incore_callee() -> None:
    text = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {X16}) -> {R16}:
        r = self.kern(x, out)
        return r

    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, {X16}) -> {R16}:
        v = pl.tile.load(x, [16, 0], [16, 16], target_memory=pl.Mem.Vec)
        w = pl.tile.adds(v, 3)
        out = pl.store(w, [0, 0], out)
        return out
"""
    p = et.parse_program(text)
    ins = inputs_for(p)
    ideal, hw = run_ideal(p, ins, function="main"), run_hardware(p, ins, function="main")
    assert outputs_equal(ideal, hw) and np.array_equal(ideal["out"], ins["x"][16:32] + 3)
