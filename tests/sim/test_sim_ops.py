"""Per-op semantics of the two simulators: each op computes what numpy says, and the
hardware model (addresses, NZ layout, allocator) agrees with the ideal semantics."""

from __future__ import annotations

import numpy as np
import pytest

import egraph_tiles as et
from egraph_tiles.sim import (MisalignedAccess, OutOfBounds, UnsupportedByModel, outputs_equal,
                              run_hardware, run_ideal)
from egraph_tiles.sim.hardware import HardwareInterpreter, nz_index
from egraph_tiles.ir import DType, MemorySpace
from simkit import agree, inputs_for, kernel


def inputs(text: str) -> dict[str, np.ndarray]:
    return inputs_for(et.parse_program(text))


OUT16 = "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]"
R16 = "pl.Tensor[[16, 16], pl.FP32]"


def test_load_then_store_copies_the_window_to_the_output_offset() -> None:
    t = kernel(f"x: pl.Tensor[[32, 32], pl.FP32], {OUT16}", """
a = pl.tile.load(x, [16, 8], [8, 16], target_memory=pl.Mem.Vec)
out = pl.store(a, [8, 0], out)
return out""", R16)
    r = agree(t)
    x = inputs(t)["x"]
    assert np.array_equal(r["out"][8:, :], x[16:24, 8:24]) and not r["out"][:8].any()


def test_slice_view_reads_its_source_at_use_time() -> None:
    t = kernel(f"a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16], {OUT16}", """
a_m = pl.tile.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
b_m = pl.tile.load(b, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
a_l = pl.tile.extract(a_m, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
b_r = pl.tile.extract(b_m, 0, 0, shape=[16, 16], target_memory=pl.Mem.Right)
acc = pl.tile.matmul(a_l, b_r)
view = pl.tile.slice(acc, [16, 16], [0, 0])
acc2 = pl.tile.matmul_acc(acc, a_l, b_r)
out = pl.store(view, [0, 0], out)
return out""", R16)
    r = agree(t)
    ins = inputs(t)
    prod = ins["a"].astype(np.float64) @ ins["b"].astype(np.float64)
    assert np.array_equal(r["out"], (2 * prod).astype(np.float32))


def test_extract_is_a_copy_unaffected_by_later_writes_to_its_source() -> None:
    t = kernel(f"x: pl.Tensor[[16, 32], pl.FP32], {OUT16}", """
v = pl.tile.load(x, [0, 0], [16, 32], target_memory=pl.Mem.Vec)
e = pl.tile.extract(v, 0, 16, shape=[16, 16], target_memory=pl.Mem.Vec)
z = pl.tile.fillpad_inplace(v, pl.PadValue.zero)
out = pl.store(e, [0, 0], out)
return out""", R16)
    r = agree(t)
    assert np.array_equal(r["out"], inputs(t)["x"][:, 16:])


def test_fillpad_inplace_pads_outside_the_valid_shape_through_aliases() -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], {OUT16}", """
v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView()] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
w: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.set_validshape(v, [8, 16])
z = pl.tile.fillpad_inplace(w, pl.PadValue.zero)
out = pl.store(v, [0, 0], out)
return out""", R16)
    r = agree(t)
    x = inputs(t)["x"]
    assert np.array_equal(r["out"][:8], x[:8]) and not r["out"][8:].any()


def test_move_and_transpose_copy_between_spaces() -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], {OUT16}", """
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
m = pl.tile.move(v, target_memory=pl.Mem.Mat)
w = pl.tile.move(m, target_memory=pl.Mem.Vec)
tt = pl.tile.transpose(w)
out = pl.store(tt, [0, 0], out)
return out""", R16)
    assert np.array_equal(agree(t)["out"], inputs(t)["x"].T)


def test_transpose_view_and_reshape_are_views_with_numpy_meaning() -> None:
    t = kernel("x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]", """
v = pl.tile.load(x, [0, 0], [16, 32], target_memory=pl.Mem.Vec)
r = pl.tile.reshape(v, [32, 16])
tv = pl.tile.transpose_view(r)
tt = pl.tile.transpose_view(tv)
out = pl.store(tt, [0, 0], out)
return out""", "pl.Tensor[[32, 16], pl.FP32]")
    assert np.array_equal(agree(t)["out"], inputs(t)["x"].reshape(32, 16))


MM = """
a_m = pl.tile.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
b_m = pl.tile.load(b, [0, 0], [32, 48], target_memory=pl.Mem.Mat)
a_l = pl.tile.extract(a_m, 0, 0, shape=[16, 32], target_memory=pl.Mem.Left)
b_r = pl.tile.extract(b_m, 0, 0, shape=[32, 48], target_memory=pl.Mem.Right)
"""


@pytest.mark.parametrize("dt,acc", [("pl.FP16", "pl.FP32"), ("pl.INT8", "pl.INT32"), ("pl.BF16", "pl.FP32")])
def test_matmul_multiplies_into_a_fresh_nz_accumulator(dt: str, acc: str) -> None:
    t = kernel(f"a: pl.Tensor[[16, 32], {dt}], b: pl.Tensor[[32, 48], {dt}], "
               f"out: pl.Out[pl.Tensor[[16, 48], {acc}]]", MM + """
c = pl.tile.matmul(a_l, b_r)
out = pl.store(c, [0, 0], out)
return out""", f"pl.Tensor[[16, 48], {acc}]")
    ins = inputs(t)
    expect = ins["a"].astype(np.int64) @ ins["b"].astype(np.int64)
    assert np.array_equal(agree(t)["out"], expect)


def test_matmul_acc_accumulates_in_place_across_loop_iterations() -> None:
    t = kernel("a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 48], pl.FP16], "
               "out: pl.Out[pl.Tensor[[16, 48], pl.FP32]]", MM + """
c0 = pl.tile.matmul(a_l, b_r)
for k, (c_it,) in pl.range(0, 3, 1, init_values=(c0,)):
    cc = pl.tile.matmul_acc(c_it, a_l, b_r)
    c = pl.yield_(cc)
out = pl.store(c, [0, 0], out)
return out""", "pl.Tensor[[16, 48], pl.FP32]")
    ins = inputs(t)
    assert np.array_equal(agree(t)["out"], 4 * (ins["a"].astype(np.int64) @ ins["b"].astype(np.int64)))


def test_matmul_bias_adds_the_bias_row() -> None:
    t = kernel("a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 48], pl.FP16], "
               "bb: pl.Tensor[[1, 48], pl.FP32], out: pl.Out[pl.Tensor[[16, 48], pl.FP32]]", MM + """
bias = pl.tile.load(bb, [0, 0], [1, 48], target_memory=pl.Mem.Vec)
c = pl.tile.matmul_bias(a_l, b_r, bias)
out = pl.store(c, [0, 0], out)
return out""", "pl.Tensor[[16, 48], pl.FP32]")
    ins = inputs(t)
    expect = ins["a"].astype(np.int64) @ ins["b"].astype(np.int64) + ins["bb"]
    assert np.array_equal(agree(t)["out"], expect)


@pytest.mark.parametrize("op,fn", [("col_expand_mul", np.multiply), ("col_expand_add", np.add),
                                    ("col_expand_sub", np.subtract),
                                    ("col_expand", lambda x, g: np.broadcast_to(g, x.shape))])
def test_col_expand_family_broadcasts_the_first_row_of_rhs(op: str, fn) -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], g: pl.Tensor[[1, 16], pl.FP32], {OUT16}", f"""
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
gv = pl.tile.load(g, [0, 0], [1, 16], target_memory=pl.Mem.Vec)
r = pl.tile.{op}(v, gv)
out = pl.store(r, [0, 0], out)
return out""", R16)
    ins = inputs(t)
    assert np.array_equal(agree(t)["out"], fn(ins["x"], ins["g"]))


@pytest.mark.parametrize("line,fn", [
    ("r = pl.tile.add(v, w)", lambda x, y: x + y),
    ("r = pl.tile.mul(v, w)", lambda x, y: x * y),
    ("r = pl.tile.max(v, w)", np.maximum),
    ("r = pl.tile.maximum(v, w)", np.maximum),
    ("r = pl.tile.minimum(v, w)", np.minimum),
    ("r = pl.tile.muls(v, 0.5)", lambda x, y: x * np.float32(0.5)),
    ("r = pl.tile.adds(v, 3)", lambda x, y: x + 3),
    ("r = pl.tile.neg(v)", lambda x, y: -x),
    ("r = pl.tile.abs(v)", lambda x, y: np.abs(x)),
    ("r = pl.tile.relu(v)", lambda x, y: np.maximum(x, 0)),
])
def test_vector_ops_compute_elementwise(line: str, fn) -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32], {OUT16}", f"""
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
w = pl.tile.load(y, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
{line}
out = pl.store(r, [0, 0], out)
return out""", R16)
    ins = inputs(t)
    assert np.array_equal(agree(t)["out"], fn(ins["x"], ins["y"]))


@pytest.mark.parametrize("op,shape,fn", [
    pytest.param("row_sum", "16, 1", lambda x: x.sum(axis=1, keepdims=True),
                 id="row_sum_reduces_each_row_to_one_column"),
    pytest.param("col_max", "1, 16", lambda x: x.max(axis=0, keepdims=True),
                 id="col_max_reduces_over_rows"),
])
def test_reductions_compute_their_numpy_meaning(op: str, shape: str, fn) -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[{shape}], pl.FP32]]", f"""
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
r = pl.tile.{op}(v)
out = pl.store(r, [0, 0], out)
return out""", f"pl.Tensor[[{shape}], pl.FP32]")
    assert np.array_equal(agree(t)["out"], fn(inputs(t)["x"]))


def test_cast_converts_the_element_type() -> None:
    t = kernel("x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP16]]", """
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
r = pl.tile.cast(v, pl.FP16)
out = pl.store(r, [0, 0], out)
return out""", "pl.Tensor[[16, 16], pl.FP16]")
    assert np.array_equal(agree(t)["out"], inputs(t)["x"].astype(np.float16))


def test_if_else_and_while_carry_values() -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], flag: pl.Scalar[pl.INDEX], {OUT16}", """
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
if flag > 0:
    a = pl.tile.adds(v, 1)
    c = pl.yield_(a)
else:
    b = pl.tile.adds(v, 2)
    c = pl.yield_(b)
n0: pl.Scalar[pl.INDEX] = 0
for (n, acc) in pl.while_(init_values=(n0, c)):
    pl.cond(n < 3)
    n1 = n + 1
    acc1 = pl.tile.muls(acc, 2)
    m, d = pl.yield_(n1, acc1)
out = pl.store(d, [0, 0], out)
return out""", R16)
    x = inputs(t)["x"]
    assert np.array_equal(agree(t, {"flag": 1})["out"], (x + 1) * 8)
    assert np.array_equal(agree(t, {"flag": 0})["out"], (x + 2) * 8)


def test_dynamic_slice_offset_from_loop_variable_reads_the_right_rows() -> None:
    t = kernel(f"x: pl.Tensor[[64, 16], pl.FP32], {OUT16}", """
v = pl.tile.load(x, [0, 0], [64, 16], target_memory=pl.Mem.Vec)
z = pl.tile.create([16, 16], pl.FP32, target_memory=pl.Mem.Vec)
for i, (s,) in pl.range(0, 64, 16, init_values=(z,)):
    w = pl.tile.slice(v, [16, 16], [i, 0])
    s2 = pl.tile.add(s, w)
    r = pl.yield_(s2)
out = pl.store(r, [0, 0], out)
return out""", R16)
    assert np.array_equal(agree(t)["out"], inputs(t)["x"].reshape(4, 16, 16).sum(axis=0))


def test_acc_tiles_use_the_16x16_nz_block_layout() -> None:
    idx = nz_index(32, 32)
    assert idx[0, 1] == 1 and idx[1, 0] == 16  # row-major inside a block
    assert idx[16, 0] == 256  # the block below comes next ...
    assert idx[0, 16] == 512  # ... then the next block column
    hw = HardwareInterpreter(et.parse_program(kernel(OUT16, "return out", R16)))
    r = hw.fresh([32, 32], DType.FP32, MemorySpace.Acc)
    assert int(r.offs[0, 16]) - r.base == 512 * 4 and r.base % 32 == 0


def test_memref_pins_a_tile_to_its_byte_offset_and_unaligned_base_faults() -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], {OUT16}", """
v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.MemRef(4)] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
r = pl.tile.muls(v, 2)
out = pl.store(r, [0, 0], out)
return out""", R16)
    p = et.parse_program(t)
    with pytest.raises(MisalignedAccess, match="byte 4 "):
        run_hardware(p, inputs_for(p))
    aligned = et.parse_program(t.replace("pl.MemRef(4)", "pl.MemRef(64)"))
    assert outputs_equal(run_ideal(aligned, inputs_for(aligned)), run_hardware(aligned, inputs_for(aligned)))


def test_memref_offset_plus_column_offset_can_make_a_slice_aligned() -> None:
    t = kernel("x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]", """
v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.MemRef(4)] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
h = pl.tile.slice(v, [16, 1], [0, 7])
r = pl.tile.muls(h, 2)
out = pl.store(r, [0, 0], out)
return out""", "pl.Tensor[[16, 1], pl.FP32]")
    assert np.array_equal(agree(t)["out"], inputs(t)["x"][:, 7:8] * 2)


@pytest.mark.parametrize("run", [run_ideal, run_hardware])
def test_window_outside_its_source_raises_out_of_bounds(run) -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], {OUT16}", """
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
e = pl.tile.extract(v, 8, 0, shape=[16, 16], target_memory=pl.Mem.Vec)
out = pl.store(e, [0, 0], out)
return out""", R16)
    p = et.parse_program(t)
    with pytest.raises(OutOfBounds):
        run(p, inputs_for(p))


@pytest.mark.parametrize("run", [run_ideal, run_hardware])
def test_opaque_calls_have_no_semantics(run) -> None:
    t = kernel(f"x: pl.Tensor[[16, 16], pl.FP32], {OUT16}", """
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
pld.tile.remote_store(v, out)
return out""", R16)
    p = et.parse_program(t)
    with pytest.raises(UnsupportedByModel):
        run(p, inputs_for(p))
