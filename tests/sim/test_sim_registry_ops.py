"""The simulators apply the registry's numpy meaning of each op, and refuse (UnsupportedByModel)
what they cannot model rather than guess."""

from __future__ import annotations

import numpy as np
import pytest

import egraph_tiles as et
from egraph_tiles.sim import OutOfBounds, UnsupportedByModel, run_hardware, run_ideal
from simkit import agree, inputs_for, kernel

OUT = "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]"
R = "pl.Tensor[[16, 16], pl.FP32]"


def ins(text: str) -> dict[str, np.ndarray]:
    return inputs_for(et.parse_program(text))


def test_assemble_writes_the_source_into_the_target_at_its_offset() -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 8], pl.FP32], {OUT}", """
a = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
b = pl.tile.load(y, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
c = pl.tile.assemble(a, b, [0, 8])
out = pl.store(a, [0, 0], out)
return out""", R)
    r, i = agree(t), ins(t)
    assert np.array_equal(r["out"][:, :8], i["x"][:, :8]) and np.array_equal(r["out"][:, 8:], i["y"])


def test_assemble_past_the_target_end_is_out_of_bounds_in_both_models() -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 8], pl.FP32], n: pl.Scalar[pl.INDEX], {OUT}", """
a = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
b = pl.tile.load(y, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
c = pl.tile.assemble(a, b, [0, n])
out = pl.store(a, [0, 0], out)
return out""", R)
    p = et.parse_program(t)
    for run in (run_ideal, run_hardware):
        with pytest.raises(OutOfBounds):
            run(p, inputs_for(p), {"n": 16})


def test_nd_load_is_flattened_to_its_2d_annotation() -> None:
    t = kernel(f"x: pl.Tensor[[2, 8, 16], pl.FP32], {OUT}", """
a: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 8, 16], [2, 8, 16], target_memory=pl.Mem.Vec)
out = pl.store(a, [0, 0], out)
return out""", R)
    r = agree(t)
    assert np.array_equal(r["out"], ins(t)["x"].reshape(16, 16))


def test_transpose_with_axis_arguments() -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], {OUT}", """
a = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
b = pl.tile.transpose(a, 0, 1)
out = pl.store(b, [0, 0], out)
return out""", R)
    assert np.array_equal(agree(t)["out"], ins(t)["x"].T)


def test_scalar_min_bounds_a_slice_offset() -> None:
    t = kernel(f"x: pl.Tensor[[16, 32], pl.FP32], n: pl.Scalar[pl.INDEX], {OUT}", """
a = pl.tile.load(x, [0, 0], [16, 32], target_memory=pl.Mem.Vec)
k = pl.min(n, 16)
s = pl.tile.slice(a, [16, 16], [0, k])
e = pl.tile.extract(s, 0, 0, shape=[16, 16], target_memory=pl.Mem.Vec)
out = pl.store(e, [0, 0], out)
return out""", R)
    assert np.array_equal(agree(t, {"n": 40})["out"], ins(t)["x"][:, 16:])


def test_matmul_of_a_vec_tile_runs_ideally_but_is_not_modelled_on_hardware() -> None:
    # accepted before memory-space inference; the hardware model does not guess the move
    t = kernel("a: pl.Tensor[[16, 16], pl.FP16], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]", """
v = pl.tile.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
acc = pl.tile.matmul(v, v)
o = pl.store(acc, [0, 0], o)
return o""", R)
    p = et.parse_program(t)
    x = inputs_for(p)
    assert np.array_equal(run_ideal(p, x)["o"], (x["a"].astype(np.float64) @ x["a"]).astype(np.float32))
    with pytest.raises(UnsupportedByModel, match="operand 'lhs' in Vec"):
        run_hardware(p, x)


def test_op_without_a_numpy_meaning_is_not_modelled() -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], {OUT}", """
a = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
c: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.sort32(a, a)
out = pl.store(c, [0, 0], out)
return out""", R)
    p = et.parse_program(t)
    for run in (run_ideal, run_hardware):
        with pytest.raises(UnsupportedByModel, match="tile.sort32"):
            run(p, inputs_for(p))
