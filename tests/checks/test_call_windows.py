"""Windows crossing function boundaries: a window passed to an InCore function
is checked as if the callee were inlined.  What the callee does with the tile (egraph.calls)
decides the call operand's use: a col_expand use needs an identity copy, a vector use an aligned
address, windows taken of it a dense aligned tile; otherwise the caller copies the window before
the call.  A window the callee writes in place cannot be copied, and an Acc window it accumulates
into is checked by the NZ rule.  Every verdict is checked on the hardware model."""

import pytest

import egraph_tiles as et
from egraph_tiles.ir.exprs import Call
from egraph_tiles.ir.stmts import AssignStmt, walk
from egraph_tiles.sim.soundness import unsound_because
from dslkit import rejection
from simkit import inputs_for

KERNEL = """
import pypto.language as pl
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 32], pl.FP32], g: pl.Tensor[[1, {w}], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        x_vec = pl.tile.load(x, [0, 0], [16, 32], target_memory=pl.Mem.Vec)
        g_vec = pl.tile.load(g, [0, 0], [1, {w}], target_memory=pl.Mem.Vec)
        win: pl.Tile[[{h}, {w}], pl.FP32, pl.Mem.Vec] = pl.tile.slice(x_vec, [{h}, {w}], [{r}, {c}])
        y = self.helper(win, g_vec)
        out = pl.store(x_vec, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def helper(self, t: pl.Tile[[{h}, {w}], pl.FP32, pl.Mem.Vec],
               gv: pl.Tile[[1, {w}], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[{h}, {w}], pl.FP32, pl.Mem.Vec]:
{body}
"""
BODIES = {
    "col_expand": ["y = pl.tile.col_expand_mul(t, gv)", "return y"],
    "vector": ["y = pl.tile.muls(t, 2.0)", "return y"],
    "fillpad": ["v = pl.tile.set_validshape(t, [{h}, 1])",
                "pl.tile.fillpad_inplace(v, pad_value=pl.PadValue.zero)", "return t"],
    "nested": ["y = self.inner(t, gv)", "return y"],
}
INNER = """
    @pl.function(type=pl.FunctionType.InCore)
    def inner(self, t2: pl.Tile[[{h}, {w}], pl.FP32, pl.Mem.Vec],
              gv2: pl.Tile[[1, {w}], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[{h}, {w}], pl.FP32, pl.Mem.Vec]:
        y2 = pl.tile.col_expand_mul(t2, gv2)
        return y2
"""


def program(body: str, h: int, w: int, r: int, c: int) -> et.ir.Program:
    lines = "".join(" " * 8 + ln + "\n" for ln in BODIES[body]).rstrip("\n")
    text = KERNEL.format(h=h, w=w, r=r, c=c, body=lines.format(h=h)) + \
        (INNER.format(h=h, w=w) if body == "nested" else "")
    return et.verify_program(et.parse_program(text, filename="kernel.py"))


def hardware_ok(p: et.ir.Program) -> bool:
    return unsound_because(lambda q: q, p, inputs_for(p), {}, "kernel") is None


def copied(p: et.ir.Program) -> bool:
    """Whether the optimized caller passes a copy (a tile.extract) to the callee."""
    return any(isinstance(s, AssignStmt) and isinstance(s.value, Call)
               and s.value.op == "tile.extract" for s in walk(p.function("kernel").body))


@pytest.mark.parametrize("body", ["col_expand", "nested"])
def test_non_contiguous_window_passed_to_a_col_expand_callee_is_copied_before_the_call(body):
    # an aligned column window: a plain vector use could keep it, but the callee materializes it
    # lazily over its own source (#2010)
    p = program(body, 16, 8, 0, 8)
    assert not hardware_ok(p)
    q = et.optimize(p)
    assert copied(q) and hardware_ok(q)
    assert unsound_because(et.optimize, p, inputs_for(p), {}, "kernel") is None


def test_unaligned_window_passed_to_a_vector_callee_is_copied_before_the_call():
    p = program("vector", 16, 8, 0, 1)
    assert not hardware_ok(p)
    q = et.optimize(p)
    assert copied(q) and hardware_ok(q)


def test_aligned_window_passed_to_a_vector_callee_stays_a_view():
    p = program("vector", 16, 8, 0, 8)
    q = et.optimize(p)
    assert not copied(q) and hardware_ok(q)


def test_contiguous_constant_window_passed_to_a_col_expand_callee_stays_a_view():
    p = program("col_expand", 4, 32, 4, 0)
    q = et.optimize(p)
    assert not copied(q) and hardware_ok(q)


def test_unaligned_window_written_in_place_by_the_callee_is_rejected():
    p = program("fillpad", 16, 8, 0, 1)
    assert not hardware_ok(p)
    msg = rejection(p)
    for piece in ("slice 'win'", "is written in place by self.helper at line 11",
                  "not provably 32-byte aligned", "can be neither copied"):
        assert piece in msg, (piece, msg)


def test_aligned_window_written_in_place_by_the_callee_stays_a_view_and_the_write_lands():
    p = program("fillpad", 16, 8, 0, 8)
    q = et.optimize(p)
    assert not copied(q) and hardware_ok(q)


ACC = """
import pypto.language as pl
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 32], pl.FP16],
               out: pl.Out[pl.Tensor[[{pr}, 32], pl.FP32]]) -> pl.Tensor[[{pr}, 32], pl.FP32]:
        a_mat = pl.tile.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        a_l = pl.tile.extract(a_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
        b_r = pl.tile.extract(b_mat, 0, 0, shape=[16, 32], target_memory=pl.Mem.Right)
        acc = pl.tile.create([{pr}, 32], pl.FP32, target_memory=pl.Mem.Acc)
        win: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc, [16, 32], [{r}, 0])
        y = self.accumulate(win, a_l, b_r)
        out = pl.store(acc, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def accumulate(self, w: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc], l: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left],
                   rr: pl.Tile[[16, 32], pl.FP16, pl.Mem.Right]) -> pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc]:
        w2 = pl.tile.matmul_acc(w, l, rr)
        return w2
"""


def test_acc_window_accumulated_into_by_the_callee_is_checked_as_if_inlined():
    p = et.verify_program(et.parse_program(ACC.format(pr=32, r=16), filename="kernel.py"))
    assert not hardware_ok(p)
    msg = rejection(p)
    for piece in ("self.accumulate (a function that accumulates into this argument: checked as "
                  "if inlined) at line 14", "16x32 row window of a 32x32 Acc (L0C) tile `acc`",
                  "not contiguous in L0C's block layout", "Fix: pack the accumulator"):
        assert piece in msg, (piece, msg)


def test_full_acc_window_accumulated_into_by_the_callee_is_accepted():
    p = et.verify_program(et.parse_program(ACC.format(pr=16, r=0), filename="kernel.py"))
    assert hardware_ok(p) and hardware_ok(et.optimize(p))


MAT = """
import pypto.language as pl
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a_mat = pl.tile.load(a, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        a_win: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.tile.slice(a_mat, [16, 16], [16, 0])
        c = self.mm(a_win, b_mat)
        out = pl.store(c, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, l: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat],
           rr: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat]) -> pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc]:
        {body}
        return c2
"""


def test_mat_window_used_as_a_matmul_operand_by_the_callee_is_rejected():
    p = et.verify_program(et.parse_program(MAT.format(body="c2 = pl.tile.matmul(l, rr)"),
                                           filename="kernel.py"))
    assert not hardware_ok(p)  # the lazy Mat->Mat textract has no data path
    msg = rejection(p)
    for piece in ("Mat window 'a_win' (tile.slice at line 10) is passed to self.mm at line 11",
                  "uses it as a matmul operand", "Mat->Mat", "Fix: extract the window to Left"):
        assert piece in msg, (piece, msg)


def test_mat_window_the_callee_extracts_from_is_passed_as_it_is():
    body = ("l2 = pl.tile.extract(l, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)\n"
            "        r2 = pl.tile.extract(rr, 0, 0, shape=[16, 16], target_memory=pl.Mem.Right)\n"
            "        c2 = pl.tile.matmul(l2, r2)")
    p = et.verify_program(et.parse_program(MAT.format(body=body), filename="kernel.py"))
    q = et.optimize(p)
    assert hardware_ok(p) and hardware_ok(q)


def test_acc_window_returned_by_the_callee_is_still_the_window_for_the_caller():
    # `y` is the window the callee returns: the caller's own matmul_acc into it is checked
    text = ACC.format(pr=32, r=16).replace(
        "        y = self.accumulate(win, a_l, b_r)\n",
        "        y = self.ident(win)\n        y2 = pl.tile.matmul_acc(y, a_l, b_r)\n") + """
    @pl.function(type=pl.FunctionType.InCore)
    def ident(self, w: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc]) -> pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc]:
        return w
"""
    p = et.verify_program(et.parse_program(text, filename="kernel.py"))
    assert not hardware_ok(p)
    with pytest.raises(ValueError, match="tile.matmul_acc at line 15: its accumulator `y` is a "
                                         "16x32 row window of a 32x32 Acc"):
        et.optimize(p)


#: how a callee hands back its [16, 2] window ``s`` of its Acc parameter
HANDED_BACK = {
    "set-validshape": "v = pl.tile.set_validshape(s, [16, 2])\n        return v",
    "loop-carry": "for i, (c,) in pl.range(1, init_values=(s,)):\n            cs = pl.yield_(c)\n"
                  "        return cs",
}


@pytest.mark.parametrize("how", HANDED_BACK)
def test_acc_window_the_callee_hands_back_through_a_view_or_carry_is_known_to_the_caller(how):
    # (the result is the callee's window of the tile, columns 0-1, inside one 16-column block:
    # the caller's matmul_acc into it is one the MAD writes right.  Before, the view or carry
    # hid the window's offset from the call summary, and the accumulator was rejected as at a
    # dynamic offset.)
    text = ACC.format(pr=16, r=0).replace(
        "        y = self.accumulate(win, a_l, b_r)\n",
        "        b2 = pl.tile.extract(b_mat, 0, 0, shape=[16, 2], target_memory=pl.Mem.Right)\n"
        "        y = self.back(win)\n        y2 = pl.tile.matmul_acc(y, a_l, b2)\n") + f"""
    @pl.function(type=pl.FunctionType.InCore)
    def back(self, w: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc]) -> pl.Tile[[16, 2], pl.FP32, pl.Mem.Acc]:
        s = pl.tile.slice(w, [16, 2], [0, 0])
        {HANDED_BACK[how]}
"""
    p = et.verify_program(et.parse_program(text, filename="kernel.py"))
    assert hardware_ok(p)
    et.assert_structural_equal(et.optimize(p), p)
