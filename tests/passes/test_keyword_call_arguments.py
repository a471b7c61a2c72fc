"""A window passed to a program function by keyword (``self.fill(v=p8, t=w)``) is the
argument of the parameter of that name: what the function does with that parameter decides
its use, exactly as for the positional spelling.  A function writing it needs the window
itself — a copy would take the write — so an unaligned one is rejected."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import kernel, rejection
from simkit import inputs_for, unsound_because

PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], p: pl.Tensor[[16, 8], pl.FP32], "
          "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
BODY = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
p8 = pl.tile.load(p, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [16, 8], [0, {col}])
self.fill(v=p8, t=w)
out = pl.store(local, [0, 0], out)
return out
"""
FILL = """
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, t: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec], v: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]):
        pl.tile.assemble(t, v, [0, 0])
"""


def program(col: int) -> et.ir.Program:
    text = kernel(PARAMS, BODY.format(col=col), "pl.Tensor[[16, 64], pl.FP32]", more=FILL)
    return et.verify_program(et.parse_program(text))


def test_an_unaligned_window_passed_by_keyword_to_a_function_writing_it_is_rejected():
    p = program(3)
    assert "is written in place by self.fill" in rejection(p)
    assert unsound_because(lambda q: q, p, inputs_for(p), {}) is not None


def test_an_aligned_window_passed_by_keyword_to_a_function_writing_it_stays_a_view():
    p = program(8)
    et.assert_structural_equal(et.optimize(p), p)
    assert unsound_because(et.optimize, p, inputs_for(p), {}) is None


MAT = """
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, l: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left], t: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat]) -> pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc]:
        r = pl.tile.matmul(l, t)
        return r
"""


def test_a_mat_window_passed_by_keyword_to_a_function_using_it_in_a_matmul_is_rejected():
    # a Mat window reaching a matmul operand is materialized Mat->Mat: no such data path
    text = kernel("a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 64], pl.FP16], "
                  "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]", """
a_mat = pl.tile.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
b_mat = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
lt = pl.tile.extract(a_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
w = pl.tile.slice(b_mat, [16, 16], [0, 16])
o = self.mm(t=w, l=lt)
out = pl.store(o, [0, 0], out)
return out
""", "pl.Tensor[[16, 16], pl.FP32]", more=MAT)
    p = et.verify_program(et.parse_program(text))
    assert "uses it as a matmul operand" in rejection(p)
    assert unsound_because(lambda q: q, p, inputs_for(p), {}) is not None


ACC = """
    @pl.function(type=pl.FunctionType.InCore)
    def accin(self, t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc], lt: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left], rt: pl.Tile[[16, 16], pl.FP16, pl.Mem.Right]) -> pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc]:
        s = pl.tile.matmul_acc(t, lt, rt)
        return s
"""


def test_an_acc_window_passed_by_keyword_to_a_function_accumulating_into_it_is_checked():
    # column 1 of a 16x16 block: the MAD writes the window with no row stride (pto-isa#253)
    text = kernel("a: pl.Tensor[[32, 16], pl.FP16], b: pl.Tensor[[16, 64], pl.FP16], "
                  "out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]", """
a_mat = pl.tile.load(a, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
b_mat = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
a_all = pl.tile.extract(a_mat, 0, 0, shape=[32, 16], target_memory=pl.Mem.Left)
b_all = pl.tile.extract(b_mat, 0, 0, shape=[16, 64], target_memory=pl.Mem.Right)
acc = pl.tile.matmul(a_all, b_all)
win = pl.tile.slice(acc, [16, 16], [0, 1])
aw = pl.tile.extract(a_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
bw = pl.tile.extract(b_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Right)
r = self.accin(rt=bw, lt=aw, t=win)
out = pl.store(acc, [0, 0], out)
return out
""", "pl.Tensor[[32, 64], pl.FP32]", more=ACC)
    p = et.verify_program(et.parse_program(text))
    assert "self.accin (a function that accumulates into this argument" in rejection(p)
    assert unsound_because(lambda q: q, p, inputs_for(p), {}) is not None
