"""The simulators on the routes a window can travel: a program function's result and
the elements of a tuple it returns alias its arguments, a callee writes through a slice of its
parameter, a copy made before a write keeps the old values, a slice of a carried window keeps its
source's pitch and lazy repack, and the hardware model's capacity check counts a loop body's
temporaries."""

from __future__ import annotations

import numpy as np
import pytest

import egraph_tiles as et
from egraph_tiles.sim import (CapacityExceeded, MisalignedAccess, UnsupportedTransfer,
                              outputs_equal, run_hardware, run_ideal)
from egraph_tiles.sim.hardware import CAPACITY, HardwareInterpreter
from egraph_tiles.ir import MemorySpace
from simkit import agree, inputs_for, kernel

V64, V8 = "pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]", "pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]"
XP = ("x: pl.Tensor[[16, 64], pl.FP32], p: pl.Tensor[[16, 8], pl.FP32], "
      "out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]")
R8 = "pl.Tensor[[16, 8], pl.FP32]"
LOAD = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
p8 = pl.tile.load(p, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
"""
TWO = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def two(self, t: {V64}, u: {V8}) -> tuple[{V64}, {V8}]:
        return t, u
"""
FILL = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, t: {V64}, u: {V8}) -> {V64}:
        s = pl.tile.slice(t, [16, 8], [0, 0])
        pl.tile.assemble(s, u, [0, 0])
        return t
"""


def _ins(text: str) -> dict[str, np.ndarray]:
    return inputs_for(et.parse_program(text))


def test_a_write_through_a_tuple_element_of_a_call_result_is_seen_through_its_argument() -> None:
    t = kernel(XP, LOAD + """
pair = self.two(local, p8)
r = pair[0]
pl.tile.assemble(r, p8, [0, 0])
w = pl.tile.slice(local, [16, 8], [0, 0])
y = pl.tile.muls(w, 1.0)
out = pl.store(y, [0, 0], out)
return out""", R8, more=TWO)
    assert np.array_equal(agree(t)["out"], _ins(t)["p"])


def test_a_callee_writing_through_a_slice_of_its_parameter_writes_the_callers_tile() -> None:
    t = kernel(XP, LOAD + """
f = self.fill(local, p8)
w = pl.tile.slice(local, [16, 8], [0, 0])
y = pl.tile.muls(w, 1.0)
out = pl.store(y, [0, 0], out)
return out""", R8, more=FILL)
    assert np.array_equal(agree(t)["out"], _ins(t)["p"])


def test_a_copy_made_before_the_write_keeps_the_old_values_on_the_hardware_model() -> None:
    body = LOAD + """
w = {window}
f = self.fill(local, p8)
y = pl.tile.muls(w, 1.0)
out = pl.store(y, [0, 0], out)
return out"""
    view = kernel(XP, body.format(window="pl.tile.slice(local, [16, 8], [0, 0])"), R8, more=FILL)
    early = kernel(XP, body.format(
        window="pl.tile.extract(local, 0, 0, shape=[16, 8], target_memory=pl.Mem.Vec)"), R8, more=FILL)
    ins = _ins(view)
    assert np.array_equal(run_ideal(et.parse_program(view), ins)["out"], ins["p"])
    assert np.array_equal(run_hardware(et.parse_program(early), ins)["out"], ins["x"][:, :8])


def test_a_slice_of_a_carried_window_keeps_its_sources_pitch_and_faults_when_unaligned() -> None:
    # row 1 of a [16, 8] window of a [16, 12] FP32 tile starts 48 bytes in
    t = kernel("x: pl.Tensor[[16, 12], pl.FP32], out: pl.Out[pl.Tensor[[1, 8], pl.FP32]]", """
t12 = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
w = pl.tile.slice(t12, [16, 8], [0, 0])
for i, (c,) in pl.range(1, init_values=(w,)):
    res = pl.yield_(c)
r1 = pl.tile.slice(res, [1, 8], [1, 0])
m = pl.tile.muls(r1, 2.0)
out = pl.store(m, [0, 0], out)
return out""", "pl.Tensor[[1, 8], pl.FP32]")
    p = et.parse_program(t)
    ins = inputs_for(p)
    assert np.array_equal(run_ideal(p, ins)["out"], ins["x"][1:2, :8] * 2)
    with pytest.raises(MisalignedAccess, match="byte 48 |not 32-byte aligned"):
        run_hardware(p, ins)


def test_a_window_returned_by_a_callee_is_still_repacked_in_place_by_col_expand() -> None:
    t = kernel("x: pl.Tensor[[16, 64], pl.FP32], g: pl.Tensor[[1, 32], pl.FP32], "
               "src: pl.Out[pl.Tensor[[16, 64], pl.FP32]]", """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
gv = pl.tile.load(g, [0, 0], [1, 32], target_memory=pl.Mem.Vec)
r = self.hi(local)
ce = pl.tile.col_expand_mul(r, gv)
src = pl.store(local, [0, 0], src)
return src""", "pl.Tensor[[16, 64], pl.FP32]", more=f"""
    @pl.function(type=pl.FunctionType.InCore)
    def hi(self, t: {V64}) -> pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [16, 32], [0, 32])
        return s
""")
    p = et.parse_program(t)
    ins = inputs_for(p)
    assert np.array_equal(run_ideal(p, ins)["src"], ins["x"])
    assert not np.array_equal(run_hardware(p, ins)["src"], ins["x"])


def test_a_mat_window_carried_by_a_loop_into_matmul_is_a_mat_to_mat_transfer() -> None:
    t = kernel("a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 64], pl.FP16], "
               "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]", """
a_mat = pl.tile.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
b_mat = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
lt = pl.tile.extract(a_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
bw = pl.tile.slice(b_mat, [16, 16], [0, 16])
for i, (c,) in pl.range(1, init_values=(bw,)):
    res = pl.yield_(c)
o = pl.tile.matmul(lt, res)
out = pl.store(o, [0, 0], out)
return out""", "pl.Tensor[[16, 16], pl.FP32]")
    p = et.parse_program(t)
    with pytest.raises(UnsupportedTransfer):
        run_hardware(p, inputs_for(p))


def _loop_with_temporaries(rows: int, hoisted: bool) -> str:
    """A 4-trip loop reading a [16, 8] copy of ``local`` (made in the loop or before it) and a
    [rows, 64] FP32 temporary; ``local`` is stored after the loop."""
    copy = "w = pl.tile.extract(local, 0, 8, shape=[16, 8], target_memory=pl.Mem.Vec)"
    return kernel(f"x: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[{rows}, 64], pl.FP32], "
                  "out: pl.Out[pl.Tensor[[16, 8], pl.FP32]], src: pl.Out[pl.Tensor[[16, 64], pl.FP32]]",
                  f"""
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
z = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
big = pl.tile.load(b, [0, 0], [{rows}, 64], target_memory=pl.Mem.Vec)
{copy if hoisted else ""}
for i, (acc,) in pl.range(4, init_values=(z,)):
    {"" if hoisted else copy}
    nxt = pl.tile.add(acc, w)
    tb = pl.tile.muls(big, 2.0)
    tbs = pl.tile.slice(tb, [16, 8], [0, 0])
    nxt2 = pl.tile.add(nxt, tbs)
    res = pl.yield_(nxt2)
out = pl.store(res, [0, 0], out)
src = pl.store(local, [0, 0], src)
return out""", R8)


def test_the_peak_counts_the_loop_bodys_temporaries_and_a_hoisted_copy_across_the_loop() -> None:
    # local 4096 + big 95744 + nxt 512 + tb 95744 + nxt2 512 = 196608 B, exactly 192 KiB
    peaks = {}
    for hoisted in (False, True):
        p = et.parse_program(_loop_with_temporaries(374, hoisted))
        hw = HardwareInterpreter(p)
        hw.run(None, inputs_for(p), {})
        peaks[hoisted] = hw.peak_bytes()[MemorySpace.Vec]
    assert peaks == {False: CAPACITY[MemorySpace.Vec], True: CAPACITY[MemorySpace.Vec] + 512}


def test_capacity_is_checked_only_when_asked_and_then_faults_over_192_kib_of_vec() -> None:
    fits = et.parse_program(_loop_with_temporaries(374, hoisted=False))
    over = et.parse_program(_loop_with_temporaries(374, hoisted=True))
    ins = inputs_for(fits)
    ideal = run_ideal(fits, ins)
    assert outputs_equal(run_hardware(fits, ins, capacity=True), ideal)
    assert outputs_equal(run_hardware(over, ins), ideal)  # the default run ignores capacity
    with pytest.raises(CapacityExceeded, match="197120 bytes"):
        run_hardware(over, ins, capacity=True)
