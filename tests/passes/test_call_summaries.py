"""Calls of the program's own functions seen through their summaries (ir.effects
``CallSummary``): a call's result shares the storage of the arguments the callee returns (its
tile, a view, a window, a tuple element of them), the call writes what the callee writes (also
through a slice of its parameter), a window the callee returns is a window of the argument for
the Acc-window check, and a returned window is an escape of the callee.  Each program is shown
before and after; where the hardware model can run it, the verdict is checked there too."""

from __future__ import annotations

import pytest

import egraph_tiles as et
from dslkit import kernel, rejection
from egraph_tiles.sim.soundness import unsound_because
from simkit import inputs_for

X = "x: pl.Tensor[[16, 64], pl.FP32]"
T = """
local: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
z: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 8], dtype=pl.FP32, target_memory=pl.Mem.Vec)
"""
EXT = "pl.tile.extract(local, 0, 3, shape=[16, 8], target_memory=pl.Mem.Vec)"
TILE64 = "pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]"
TILE8 = "pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]"
IDENT = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def ident(self, t: {TILE64}) -> {TILE64}:
        return t
"""
RESHAPED = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def ident(self, t: {TILE64}) -> {TILE64}:
        v: {TILE64} = pl.tile.reshape(t, [16, 64])
        return v
"""
TWO = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def two(self, t: {TILE64}, u: {TILE8}) -> pl.Tuple[{TILE64}, {TILE8}]:
        return t, u
"""


def canonicalizes(before: str, after: str, more: str) -> None:
    """``before`` (a kernel body after :data:`T`, with the functions ``more``) canonicalizes to
    ``after``; the callees are left as they are."""
    prog = et.parse_program(kernel(X, T + before, more=more))
    out = et.canonicalize_tile_slice(prog)
    expected = et.parse_program(kernel(X, T + after, more=more))
    et.assert_structural_equal(out, expected)


def on_hardware(text: str) -> tuple[str | None, str | None]:
    """Why the program ``text`` and its optimized form are wrong on the hardware model (None:
    they are right)."""
    p = et.verify_program(et.parse_program(text, filename="kernel.py"))
    inputs = inputs_for(p)
    return (unsound_because(lambda q: q, p, inputs, {}, "kernel"),
            unsound_because(et.optimize, p, inputs, {}, "kernel"))


def stored(body: str, more: str, out: str = "res") -> str:
    """The program of :data:`T` + ``body`` storing ``out`` (16 x 8) to an Out tensor."""
    return kernel(f"{X}, out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]",
                  T + body + f"\nout = pl.store({out}, [0, 0], out)\nreturn out",
                  "pl.Tensor[[16, 8], pl.FP32]", more=more)


# ---------------------------------------------------------------------- class A: results alias

LOOP = """
r: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = {call}
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
    nxt: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, w)
    r2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(r, nxt, [0, 0])
    res = pl.yield_(nxt)
"""


def _not_hoisted(body: str) -> str:
    return body.replace(
        "w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])",
        f"w_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = {EXT}").replace("acc, w)", "acc, w_ext)")


@pytest.mark.parametrize("more", [IDENT, RESHAPED], ids=["returns-its-parameter",
                                                         "returns-a-view-of-it"])
def test_write_through_a_call_result_in_the_loop_keeps_the_copy_of_the_argument_inside(more):
    body = LOOP.format(call="self.ident(local)")
    canonicalizes(body, _not_hoisted(body), more)
    assert on_hardware(stored(body, more)) == (
        "hardware fault MisalignedAccess: tile.add: operand 'rhs' at Vec byte 1048588 is not "
        "32-byte aligned", None)


def test_write_through_a_tuple_element_of_a_call_result_keeps_the_copy_inside_the_loop():
    body = ("pair: pl.Tuple[pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec], "
            "pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]] = self.two(local, z)\n"
            + LOOP.format(call="pair[0]"))
    canonicalizes(body, _not_hoisted(body), TWO)


def test_copy_is_placed_after_a_write_through_a_call_result_made_before_the_slice():
    before = """
r: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = self.ident(local)
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
r2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(r, z, [0, 0])
res: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(z, w)
"""
    canonicalizes(before, f"""
r: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = self.ident(local)
r2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(r, z, [0, 0])
w_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = {EXT}
res: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(z, w_ext)
""", IDENT)
    assert on_hardware(stored(before, IDENT))[1] is None


def test_no_view_of_a_parent_copy_is_made_after_a_write_through_a_call_result():
    # round 2 would read c from p_ext, made before the write through r: c is copied from local
    x128 = "x: pl.Tensor[[16, 128], pl.FP32]"
    head = """
local: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Vec)
r: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = self.ident(local)
"""
    more = IDENT.replace(TILE64, "pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec]")
    assert_canonicalizes_more(x128, head + """
p: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 1])
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(p, 0.5)
r2: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(r, y, [0, 0])
c: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(p, [1, 8], [2, 0])
q: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c, 0.5)
""", head + """
p_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, 1, shape=[16, 8], target_memory=pl.Mem.Vec)
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(p_ext, 0.5)
r2: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(r, y, [0, 0])
c_ext: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 2, 1, shape=[1, 8], target_memory=pl.Mem.Vec)
q: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c_ext, 0.5)
""", more)


def assert_canonicalizes_more(params: str, before: str, after: str, more: str) -> None:
    out = et.canonicalize_tile_slice(et.parse_program(kernel(params, before, more=more)))
    et.assert_structural_equal(out, et.parse_program(kernel(params, after, more=more)))


# ---------------------------------------------------------------------- class B: callee writes

FILL = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec], q: {TILE8}):
        s: {TILE8} = pl.tile.slice(t, [16, 8], [0, 0])
        s2: {TILE8} = pl.tile.assemble(s, q, [0, 0])
        return
"""
SUB8 = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def sub8(self, t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]) -> {TILE8}:
        s: {TILE8} = pl.tile.slice(t, [16, 8], [0, 0])
        return s
"""
WIN = "w: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 16], [0, {c}])\n"
CALLS = {
    "through-a-slice-of-its-parameter": ("self.fill(w, z)", FILL,
                                         "in function 'fill', slice 's' (tile.slice at line 17) is "
                                         "written in place by tile.assemble at line 18"),
    "through-a-returned-view": (
        "r: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = self.sub8(w)\n"
        "r2: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(r, z, [0, 0])", SUB8,
        "in function 'sub8', slice 's' (tile.slice at line 18) is written in place by the return"),
}


def written_window(route: str, c: int) -> str:
    call, more, _ = CALLS[route]
    return stored(WIN.format(c=c) + call + "\nres: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = "
                  "pl.tile.add(z, z)", more)


@pytest.mark.parametrize("route", CALLS)
def test_unaligned_window_a_callee_writes_is_rejected_not_copied_before_the_call(route):
    # a view faults, a copy would take the write and lose it; the callee's window is judged
    # where the caller's window puts it (column 3 of local: 12 B in)
    p = et.verify_program(et.parse_program(written_window(route, 3), filename="kernel.py"))
    msg = rejection(p)
    for piece in (CALLS[route][2], "can be neither copied", "Parameter 't' is where every call "
                  "passes it: rows 64 elements apart, its first element at byte 12"):
        assert piece in msg, (piece, msg)


@pytest.mark.parametrize("route", CALLS)
def test_aligned_window_a_callee_writes_through_a_row_0_slice_stays_a_view(route):
    # (16 of 64 columns, not dense: the callee's window at row 0 starts at the same byte
    # whatever the pitch, so it may take it as it is; the write lands in local)
    text = written_window(route, 8).replace(
        "\nout = pl.store(res, [0, 0], out)", "\nlocal_out = pl.store(local, [0, 0], src)"
        "\nout = pl.store(res, [0, 0], out)").replace(
        "out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]",
        "out: pl.Out[pl.Tensor[[16, 8], pl.FP32]], src: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
    prog = et.parse_program(text)
    et.assert_structural_equal(et.canonicalize_tile_slice(prog), prog)
    assert on_hardware(text) == (None, None)


def test_explain_names_what_the_callee_does_with_the_window():
    more = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def dbl(self, t: {TILE8}) -> {TILE8}:
        y: {TILE8} = pl.tile.muls(t, 2.0)
        return y
"""
    rep = et.Report()
    et.canonicalize_tile_slice(et.parse_program(kernel(X, T + """
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = self.dbl(w)
""", more=more)), report=rep)
    (d,) = [d for d in rep.functions[0].decisions if d.decision == "copy"]
    assert d.use == "self.dbl operand 0 (a program function: an operand it reads or writes in place)"


# ---------------------------------------------------------------------- class C: Acc windows

ACC = """
import pypto.language as pl
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 32], pl.FP16],
               out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        a_mat = pl.tile.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        a_l = pl.tile.extract(a_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
        b_r = pl.tile.extract(b_mat, 0, 0, shape=[16, 32], target_memory=pl.Mem.Right)
        acc = pl.tile.create([32, 32], pl.FP32, target_memory=pl.Mem.Acc)
{body}
        out = pl.store(acc, [0, 0], out)
        return out
"""
ACC_T = "pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc]"
ROW_T = "pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc]"
LOWER = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def lower(self, t: {ACC_T}) -> {ROW_T}:
        s: {ROW_T} = pl.tile.slice(t, [16, 32], [16, 0])
        return s
"""
ACCUM = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def accum(self, t: {ROW_T}, l: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left],
              rr: pl.Tile[[16, 32], pl.FP16, pl.Mem.Right]):
        s: {ROW_T} = pl.tile.slice(t, [16, 32], [0, 0])
        s2 = pl.tile.matmul_acc(s, l, rr)
        return
"""
HALVES = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def halves(self, t: {ACC_T}, l: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left]
               ) -> pl.Tuple[{ROW_T}, pl.Tile[[16, 16], pl.FP16, pl.Mem.Left]]:
        s: {ROW_T} = pl.tile.slice(t, [16, 32], [16, 0])
        return s, l
"""


@pytest.mark.parametrize("body, more, where", [
    (["y = self.lower(acc)", "y2 = pl.tile.matmul_acc(y, a_l, b_r)"], LOWER,
     "tile.matmul_acc at line 14: its accumulator `y`"),
    ([f"win: {ROW_T} = pl.tile.slice(acc, [16, 32], [16, 0])", "self.accum(win, a_l, b_r)"],
     ACCUM, "self.accum (a function that accumulates into this argument: checked as if "
            "inlined) at line 14: its accumulator `win`"),
    ([f"pair: pl.Tuple[{ROW_T}, pl.Tile[[16, 16], pl.FP16, pl.Mem.Left]] = "
      "self.halves(acc, a_l)", f"y: {ROW_T} = pair[0]", "y2 = pl.tile.matmul_acc(y, a_l, b_r)"],
     HALVES, "tile.matmul_acc at line 15: its accumulator `y`"),
], ids=["returned-row-window", "accumulated-full-extent-slice-of-a-row-window",
        "row-window-in-a-returned-tuple"])
def test_acc_row_window_crossing_a_call_is_rejected(body, more, where):
    text = ACC.format(body="".join(" " * 8 + ln + "\n" for ln in body).rstrip("\n")) + more
    p = et.verify_program(et.parse_program(text, filename="kernel.py"))
    msg = rejection(p)
    for piece in (where, "16x32 row window of a 32x32 Acc (L0C) tile `acc`",
                  "not contiguous in L0C's block layout"):
        assert piece in msg, (piece, msg)


def test_acc_window_a_callee_returns_at_a_dynamic_offset_is_checked_not_left_as_it_is():
    more = LOWER.replace(f"def lower(self, t: {ACC_T})",
                         f"def lower(self, t: {ACC_T}, r: pl.Scalar[pl.INDEX])").replace(
        "[16, 32], [16, 0])", "[16, 32], [r, 0])")
    text = ACC.format(body="        y = self.lower(acc, 16)\n"
                           "        y2 = pl.tile.matmul_acc(y, a_l, b_r)") + more
    msg = rejection(et.verify_program(et.parse_program(text, filename="kernel.py")))
    assert "its accumulator `y` is a 16x32 row window of a 32x32 Acc (L0C) tile `acc`" in msg


def test_acc_column_window_returned_by_a_callee_is_accepted():
    col_t = "pl.Tile[[32, 16], pl.FP32, pl.Mem.Acc]"
    text = ACC.replace("[[16, 16], pl.FP16]", "[[32, 16], pl.FP16]").replace(
        "[16, 32], pl.FP16]", "[16, 16], pl.FP16]").replace(
        "a, [0, 0], [16, 16]", "a, [0, 0], [32, 16]").replace(
        "b, [0, 0], [16, 32]", "b, [0, 0], [16, 16]").replace(
        "a_mat, 0, 0, shape=[16, 16]", "a_mat, 0, 0, shape=[32, 16]").replace(
        "b_mat, 0, 0, shape=[16, 32]", "b_mat, 0, 0, shape=[16, 16]").format(body=(
            "        y = self.lower(acc)\n        y2 = pl.tile.matmul_acc(y, a_l, b_r)")) + f"""
    @pl.function(type=pl.FunctionType.InCore)
    def lower(self, t: {ACC_T}) -> {col_t}:
        s: {col_t} = pl.tile.slice(t, [32, 16], [0, 16])
        return s
"""
    assert on_hardware(text) == (None, None)


# ---------------------------------------------------------------------- class H: escapes

SUB = """
    @pl.function(type=pl.FunctionType.InCore)
    def sub(self, t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]:
        s: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, {c}])
        return s
"""


def test_unaligned_window_a_callee_returns_is_returned_as_a_copy():
    body = ("r: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = self.sub(local)\n"
            "res: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(r, 2.0)")
    before = stored(body, SUB.format(c=1))
    out = et.canonicalize_tile_slice(et.parse_program(before))
    after = stored(body, SUB.format(c=1).replace(
        "s: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, 1])\n"
        "        return s",
        "s_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 1, shape=[16, 8], "
        "target_memory=pl.Mem.Vec)\n        return s_ext"))
    et.assert_structural_equal(out, et.parse_program(after))
    assert on_hardware(before) == (
        "hardware fault MisalignedAccess: tile.muls: operand 'src' at Vec byte 1048580 is not "
        "32-byte aligned", None)


WRITES_R = ("r: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = self.sub(local)\n"
            "r2: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(r, z, [0, 0])\n"
            "res: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(z, z)")


def test_unaligned_window_returned_to_a_caller_that_writes_through_it_is_rejected():
    p = et.verify_program(et.parse_program(stored(WRITES_R, SUB.format(c=1)),
                                           filename="kernel.py"))
    msg = rejection(p)
    for piece in ("in function 'sub', slice 's'", "is written in place by the return (a caller "
                  "writes through the returned view", "can be neither copied"):
        assert piece in msg, (piece, msg)


READ_THEN_WRITE = ("r: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = self.sub(local)\n"
                   "res: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(r, 2.0)\n"
                   "a: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(local, z, [0, 0])")


def test_window_a_caller_reads_before_writing_the_argument_is_returned_as_a_copy():
    text = stored(READ_THEN_WRITE, SUB.format(c=1))
    out = et.canonicalize_tile_slice(et.parse_program(text))
    (ret,) = [s for s in out.function("sub").body if type(s).__name__ == "ReturnStmt"]
    assert ret.values[0].var.name == "s_ext"
    assert on_hardware(text)[1] is None


def test_window_a_caller_reads_after_writing_the_argument_in_a_loop_is_rejected():
    # (the next trip reads r after this trip's write: a returned copy would be stale)
    body = """
r: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = self.sub(local)
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    y0: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, r)
    a: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(local, y0, [0, 0])
    res = pl.yield_(y0)
"""
    p = et.verify_program(et.parse_program(stored(body, SUB.format(c=1)), filename="kernel.py"))
    assert "is written in place by the return" in rejection(p)


def test_aligned_window_returned_to_a_caller_that_writes_through_it_stays_the_view():
    text = stored(WRITES_R, SUB.format(c=8))
    prog = et.parse_program(text)
    et.assert_structural_equal(et.canonicalize_tile_slice(prog), prog)
    assert on_hardware(text) == (None, None)


# ---------------------------------------------------------------------- what callers do decides

HI32 = """
    @pl.function(type=pl.FunctionType.InCore)
    def hi32(self, t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]:
        s: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 32], [0, 32])
        return s
"""
COLX = """
gv: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.create([1, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
r: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = self.hi32(local)
ce: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(r, gv)
"""


def test_window_returned_to_a_col_expand_caller_is_returned_as_a_copy():
    # aligned, but a [16, 32] window of a [16, 64] tile: col_expand would repack it in place
    before = et.parse_program(kernel(X, T + COLX, more=HI32))
    out = et.canonicalize_tile_slice(before)
    et.assert_structural_equal(out, et.parse_program(kernel(X, T + COLX, more=HI32.replace(
        "s: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 32], [0, 32])\n"
        "        return s",
        "s_ext: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 32, "
        "shape=[16, 32], target_memory=pl.Mem.Vec)\n        return s_ext"))))


def test_window_returned_to_a_vector_caller_stays_a_view():
    body = COLX.replace("pl.tile.col_expand_mul(r, gv)", "pl.tile.muls(r, 2.0)")
    prog = et.parse_program(kernel(X, T + body, more=HI32))
    et.assert_structural_equal(et.canonicalize_tile_slice(prog), prog)


def test_mat_window_returned_to_a_matmul_caller_is_rejected():
    text = """
import pypto.language as pl
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 64], pl.FP16],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a_mat = pl.tile.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        lt = pl.tile.extract(a_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
        r = self.colm(b_mat)
        o = pl.tile.matmul(lt, r)
        out = pl.store(o, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def colm(self, t: pl.Tile[[16, 64], pl.FP16, pl.Mem.Mat]) -> pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat]:
        s = pl.tile.slice(t, [16, 16], [0, 16])
        return s
"""
    p = et.verify_program(et.parse_program(text, filename="kernel.py"))
    assert unsound_because(lambda q: q, p, inputs_for(p), {}, "kernel").startswith(
        "hardware fault UnsupportedTransfer")
    msg = rejection(p)
    for piece in ("in function 'colm', Mat window 's' (tile.slice at line 18)",
                  "is returned at line 19 to callers that",
                  "use it as a matmul operand"):
        assert piece in msg, (piece, msg)


def test_tuple_element_that_is_the_argument_window_is_that_window_for_col_expand():
    pairw = """
    @pl.function(type=pl.FunctionType.InCore)
    def pairw(self, t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec], u: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec]
              ) -> pl.Tuple[pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec], pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec]]:
        return t, u
"""
    head = """
gv: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.create([1, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
w: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 32], [0, 32])
"""
    call = """
pr: pl.Tuple[pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec], pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec]] = self.pairw(w, gv)
r: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pr[0]
"""
    # (the callee does nothing with w but hand it back: w is passed as it is, and the caller's
    # col_expand use of the element is a use of w, copied there)
    canonicalizes(head + call + "ce: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = "
                  "pl.tile.col_expand_mul(r, gv)\n", head + """
w_ext: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, 32, shape=[16, 32], target_memory=pl.Mem.Vec)
""" + call + "ce: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(w_ext, gv)\n",
                  pairw)


def test_valid_shape_window_whose_returned_row_0_window_a_caller_reads_is_returned_as_a_copy():
    # the callee's window at [0, 0] starts at the argument's own base, 10 rows and 21 columns
    # into local (84 B past a row): the callee judges it there and returns a copy (a valid_shape
    # slice is never copied itself)
    more = """
    @pl.function(type=pl.FunctionType.InCore)
    def head(self, t: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]:
        s: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 8], [0, 0])
        return s
"""
    text = stored("""
win = pl.tile.slice(local, [1, 16], [10, 21], valid_shape=[1, 12])
r: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = self.head(win)
y: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(r, 2.0)
res: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(z, z)
""", more)
    p = et.verify_program(et.parse_program(text, filename="kernel.py"))
    assert unsound_because(lambda q: q, p, inputs_for(p), {}, "kernel").startswith(
        "hardware fault MisalignedAccess: tile.muls")
    assert unsound_because(et.optimize, p, inputs_for(p), {}, "kernel") is None
    opt = et.print_program(et.optimize(p))
    assert "s_ext: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 0, shape=[1, 8]" in opt


def test_window_a_callee_col_expands_through_a_row_0_window_is_copied_in_the_callee():
    # rows 0-3 of w (16 of 64 columns) are not contiguous where w lies, and col_expand would
    # repack them in place: the callee, its parameter framed by its one call, copies that
    # window (256 B), not the caller the whole of w (1,024 B)
    more = """
    @pl.function(type=pl.FunctionType.InCore)
    def top(self, t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec], gg: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec]
            ) -> pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec]:
        s: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [4, 16], [0, 0])
        c: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(s, gg)
        return c
"""
    head = """
gv: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.create([1, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)
"""
    body = T + head + """
w: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 16], [0, 16])
y: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] = self.top(w, gv)
"""
    copied = more.replace(
        "s: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [4, 16], [0, 0])\n"
        "        c: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(s, gg)",
        "s_ext: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 0, shape=[4, 16], "
        "target_memory=pl.Mem.Vec)\n"
        "        c: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(s_ext, gg)")
    et.assert_structural_equal(et.canonicalize_tile_slice(et.parse_program(kernel(X, body, more=more))),
                               et.parse_program(kernel(X, body, more=copied)))


# ---------------------------------------------------------------------- windows handed back

Y12 = "y: pl.Tensor[[16, 12], pl.FP32], src: pl.Out[pl.Tensor[[16, 12], pl.FP32]]"
ROOT12 = """
root: pl.Tile[[16, 12], pl.FP32, pl.Mem.Vec] = pl.tile.load(y, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
pt: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.full([1, 1], dtype=pl.FP32, value=5.0)
"""
W28 = "pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]"
T11 = "pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]"
ROW1 = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def row1(self, t: {W28}) -> {T11}:
        s: {T11} = pl.tile.slice(t, [1, 1], [1, 0])
        return s
"""
TOUCH = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def touch(self, t: {W28}) -> {W28}:
        s: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 8], [1, 0])
        v: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.adds(s, 1.0)
        return t
"""


def root12(body: str, more: str) -> str:
    """A kernel over a [16, 12] FP32 tile ``root`` (a 48-byte row pitch) running ``body`` and
    storing ``root``."""
    return kernel(Y12, ROOT12 + body + "\nsrc = pl.store(root, [0, 0], src)\nreturn src",
                  "pl.Tensor[[16, 12], pl.FP32]", more=more)


#: a window [2, 8] of root (not dense: 8 of 12 columns) passed to a function whose result shares
#: its storage, then written through the result; the function needs the tile dense, so a view
#: is wrong where the callee lands (48 B in) and a copy would take the write
HANDED_BACK_WRITES = {
    "alias-of-the-window-then-row-1-of-it-handed-back": (
        f"w: {W28} = pl.tile.slice(root, [2, 8], [0, 0])\na: {W28} = w\n"
        f"r: {T11} = self.row1(a)\nr2: {T11} = pl.tile.assemble(r, pt, [0, 0])", ROW1,
        "in function 'row1', slice 's' (tile.slice at line 18) is written in place by the return"),
    "alias-of-the-window-returned-whole-after-a-read-of-row-1": (
        f"w: {W28} = pl.tile.slice(root, [2, 8], [0, 0])\na: {W28} = w\n"
        f"r: {W28} = self.touch(a)\nr2: {W28} = pl.tile.assemble(r, pt, [0, 0])", TOUCH,
        "is passed to self.touch at line 11 (through 'a': an alias), and tile.assemble at line 12 "
        "writes through its result ('r')"),
}


@pytest.mark.parametrize("route", HANDED_BACK_WRITES)
def test_window_copied_for_a_call_whose_result_is_written_is_rejected(route):
    # (another use of the window kept as a view, the alias, proves nothing of the call's copy)
    body, more, piece = HANDED_BACK_WRITES[route]
    p = et.verify_program(et.parse_program(root12(body, more), filename="kernel.py"))
    assert unsound_because(lambda q: q, p, inputs_for(p), {}, "kernel").startswith(
        "hardware fault MisalignedAccess")
    msg = rejection(p)
    wants = (piece,) + (("can be neither copied", "Parameter 't' is where every call passes "
                         "it: rows 12 elements apart") if "function 'row1'" in piece else
                        ("slice 'w' (tile.slice at line 9)",
                         "a copy passed instead would take the write and lose it"))
    for want in wants:
        assert want in msg, (want, msg)


def test_unaligned_window_a_callee_hands_back_an_aligned_row_of_is_written_in_place():
    # w starts 48 B in (row 1 of root), row 1 of w is row 2 of root, 96 B in: aligned where the
    # write lands, so w is passed as it is and the write reaches root
    text = root12(f"w: {W28} = pl.tile.slice(root, [2, 8], [1, 0])\nr: {T11} = self.row1(w)\n"
                  f"r2: {T11} = pl.tile.assemble(r, pt, [0, 0])", ROW1)
    prog = et.parse_program(text)
    et.assert_structural_equal(et.canonicalize_tile_slice(prog), prog)
    assert on_hardware(text) == (None, None)


def test_window_a_callee_hands_back_an_unaligned_row_of_to_a_vector_read_is_copied():
    # row 1 of w is 48 B in: the callee judges it there (its parameter is framed by its one
    # call), not at the 32 B a dense tile of its own would put it, and returns a copy of it
    read = f"r: {T11} = self.row1(w)\nr2: {T11} = pl.tile.adds(r, 1.0)\n" \
           f"r3: {T11} = pl.tile.assemble(pt, r2, [0, 0])"
    before = root12(f"w: {W28} = pl.tile.slice(root, [2, 8], [0, 0])\n" + read, ROW1)
    after = root12(f"w: {W28} = pl.tile.slice(root, [2, 8], [0, 0])\n" + read, ROW1.replace(
        f"s: {T11} = pl.tile.slice(t, [1, 1], [1, 0])\n        return s",
        f"s_ext: {T11} = pl.tile.extract(t, 1, 0, shape=[1, 1], target_memory=pl.Mem.Vec)\n"
        "        return s_ext"))
    et.assert_structural_equal(et.canonicalize_tile_slice(et.parse_program(before)),
                               et.parse_program(after))
    assert on_hardware(before) == (
        "hardware fault MisalignedAccess: tile.adds: operand 'src' at Vec byte 1048624 is not "
        "32-byte aligned", None)


def test_explain_names_where_the_window_a_callee_hands_back_lies():
    rep = et.Report()
    et.canonicalize_tile_slice(et.parse_program(root12(
        f"w: {W28} = pl.tile.slice(root, [2, 8], [1, 0])\nr: {T11} = self.row1(w)\n"
        f"r2: {T11} = pl.tile.assemble(r, pt, [0, 0])", ROW1)), report=rep)
    text = rep.explain()
    assert "s as return value 0 (escapes to the caller): view [line 18] — offset (1 × 12 cols " \
           "+ 0) × 32 bits = 384 bits + 't' (where every call passes it) starting 48 B (384 " \
           "bits) = 768 bits: multiple of 256 → view" in text, text


# ---------------------------------------------------------------------- values that name a window

ROW1V = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def row1v(self, t: {W28}) -> pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]:
        s: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 8], [1, 0])
        return s
"""
READ_ROW1V = ("r: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = self.row1v(v)\n"
              "r2: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(r, 2.0)")


def test_row_a_callee_takes_of_a_set_validshape_view_of_a_window_is_judged_where_it_lies():
    # row 1 of w's view is 48 B in (root's pitch), not the 32 B a dense tile of the callee's own
    # would put it at: the callee, its parameter framed by its one call, copies that row
    before = root12(f"w: {W28} = pl.tile.slice(root, [2, 8], [0, 0])\n"
                    f"v: {W28} = pl.tile.set_validshape(w, [2, 8])\n" + READ_ROW1V, ROW1V)
    after = root12(f"w: {W28} = pl.tile.slice(root, [2, 8], [0, 0])\n"
                   f"v: {W28} = pl.tile.set_validshape(w, [2, 8])\n" + READ_ROW1V, ROW1V.replace(
                       "s: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 8], [1, 0])"
                       "\n        return s",
                       "s_ext: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 1, 0, "
                       "shape=[1, 8], target_memory=pl.Mem.Vec)\n        return s_ext"))
    et.assert_structural_equal(et.canonicalize_tile_slice(et.parse_program(before)),
                               et.parse_program(after))
    assert on_hardware(before) == (
        "hardware fault MisalignedAccess: tile.muls: operand 'src' at Vec byte 1048624 is not "
        "32-byte aligned", None)


def test_row_a_callee_takes_of_a_transposed_view_of_a_window_is_copied_in_the_callee():
    # row 1 of the transposed view is column 1 of w, 4 B in; the callee takes it for row 1 of a
    # dense tile (32 B in), and no copy of w is transposed differently
    more = """
    @pl.function(type=pl.FunctionType.InCore)
    def row1t(self, t: pl.Tile[[4, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]:
        s: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 1], [1, 0])
        return s
"""
    text = stored("""
w: pl.Tile[[8, 4], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [8, 4], [0, 0])
tv: pl.Tile[[4, 8], pl.FP32, pl.Mem.Vec] = pl.tile.transpose_view(w)
r: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = self.row1t(tv)
y1: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(r, 2.0)
res: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(z, y1, [0, 0])
""", more)
    before, after = on_hardware(text)
    assert before.startswith("hardware fault MisalignedAccess: tile.muls") and after is None
    # (the callee's parameter is framed by the transposed view: no row-major layout, so
    # nothing about its windows is provable, and the row it hands back is copied)
    opt = et.print_program(et.optimize(et.verify_program(et.parse_program(text))))
    assert "s_ext: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 1, 0" in opt, opt


def test_transposed_back_view_of_a_window_handed_back_to_a_col_expand_is_accepted():
    # the view of the view is w again (rows are rows, the pitch root's): row 1 of it is one row
    # of root, 256 B in, which col_expand reads in place as an identity copy
    more = """
    @pl.function(type=pl.FunctionType.InCore)
    def row1c(self, t: pl.Tile[[2, 1], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]:
        s: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 1], [1, 0])
        return s
"""
    text = stored("""
w: pl.Tile[[2, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [2, 1], [0, 0])
tv: pl.Tile[[1, 2], pl.FP32, pl.Mem.Vec] = pl.tile.transpose_view(w)
tw: pl.Tile[[2, 1], pl.FP32, pl.Mem.Vec] = pl.tile.transpose_view(tv)
r: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = self.row1c(tw)
gv: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.create([1, 1], dtype=pl.FP32, target_memory=pl.Mem.Vec)
ce: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(r, gv)
res: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(z, ce, [0, 0])
""", more)
    prog = et.parse_program(text)
    et.assert_structural_equal(et.canonicalize_tile_slice(prog), prog)
    assert on_hardware(text) == (None, None)


def test_transposed_view_of_a_row_window_handed_back_to_a_col_expand_is_accepted():
    # the transpose of one row is one column whose rows are consecutive elements: a dense
    # [4, 1] tile; row 1 of it, 4 B in, is one element, which col_expand reads in place
    more = """
    @pl.function(type=pl.FunctionType.InCore)
    def row1c(self, t: pl.Tile[[4, 1], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]:
        s: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 1], [1, 0])
        return s
"""
    text = stored("""
w: pl.Tile[[1, 4], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [1, 4], [0, 0])
tv: pl.Tile[[4, 1], pl.FP32, pl.Mem.Vec] = pl.tile.transpose_view(w)
r: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = self.row1c(tv)
gv: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.create([1, 1], dtype=pl.FP32, target_memory=pl.Mem.Vec)
ce: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(r, gv)
res: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(z, ce, [0, 0])
""", more)
    prog = et.parse_program(text)
    et.assert_structural_equal(et.canonicalize_tile_slice(prog), prog)
    assert on_hardware(text) == (None, None)


def test_transposed_valid_shape_slice_handed_back_to_a_col_expand_is_accepted():
    # the callee only hands back one element of the view (8 B in): col_expand reads it in place,
    # and nothing needs the slice itself aligned
    more = """
    @pl.function(type=pl.FunctionType.InCore)
    def row1c(self, t: pl.Tile[[4, 1], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec]:
        s: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 1], [1, 0])
        return s
"""
    text = stored("""
w: pl.Tile[[1, 4], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[1, 1])] = pl.tile.slice(local, [1, 4], [0, 1], valid_shape=[1, 1])
tv: pl.Tile[[4, 1], pl.FP32, pl.Mem.Vec] = pl.tile.transpose_view(w)
r: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = self.row1c(tv)
gv: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.create([1, 1], dtype=pl.FP32, target_memory=pl.Mem.Vec)
ce: pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(r, gv)
res: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(z, ce, [0, 0])
""", more)
    prog = et.parse_program(text)
    et.assert_structural_equal(et.canonicalize_tile_slice(prog), prog)
    assert on_hardware(text) == (None, None)



def test_transposed_column_window_handed_back_whole_to_a_col_expand_is_copied_in_the_callee():
    # the transpose of a column is a row whose two elements are a row pitch apart: the callee
    # takes it for a dense row, and col_expand would repack it over root
    more = """
    @pl.function(type=pl.FunctionType.InCore)
    def whole(self, t: pl.Tile[[1, 2], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 2], pl.FP32, pl.Mem.Vec]:
        s: pl.Tile[[1, 2], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 2], [0, 0])
        return s
"""
    text = kernel(f"{X}, out: pl.Out[pl.Tensor[[1, 2], pl.FP32]], src: pl.Out[pl.Tensor[[16, 64], pl.FP32]]",
                  T + """
w: pl.Tile[[2, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [2, 1], [0, 0])
tv: pl.Tile[[1, 2], pl.FP32, pl.Mem.Vec] = pl.tile.transpose_view(w)
r: pl.Tile[[1, 2], pl.FP32, pl.Mem.Vec] = self.whole(tv)
gv: pl.Tile[[1, 2], pl.FP32, pl.Mem.Vec] = pl.tile.create([1, 2], dtype=pl.FP32, target_memory=pl.Mem.Vec)
ce: pl.Tile[[1, 2], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(r, gv)
out = pl.store(ce, [0, 0], out)
src = pl.store(local, [0, 0], src)
return out
""", "pl.Tensor[[1, 2], pl.FP32]", more=more)
    before, after = on_hardware(text)
    assert before is not None and after is None
    # (framed by the transposed view, the callee cannot prove its row an identity copy: copied)
    opt = et.print_program(et.optimize(et.verify_program(et.parse_program(text))))
    assert "s_ext: pl.Tile[[1, 2], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, 0, 0" in opt, opt


def test_window_passed_through_a_function_returning_it_is_judged_where_its_caller_uses_it():
    # ident does nothing with w but return it: r is w itself, and row1 hands back row 1 of it,
    # row 2 of root, 96 B in, where the write lands
    ident = f"""
    @pl.function(type=pl.FunctionType.InCore)
    def ident(self, t: {W28}) -> {W28}:
        return t
"""
    text = root12(f"w: {W28} = pl.tile.slice(root, [2, 8], [1, 0])\na: {W28} = self.ident(w)\n"
                  f"r: {T11} = self.row1(a)\nr2: {T11} = pl.tile.assemble(r, pt, [0, 0])",
                  ident + ROW1)
    prog = et.parse_program(text)
    et.assert_structural_equal(et.canonicalize_tile_slice(prog), prog)
    assert on_hardware(text) == (None, None)


def test_valid_shape_slice_a_function_returns_whole_is_checked_where_its_windows_are_used():
    # ident does nothing with win but return it: only the caller's own uses of the result are
    # checked, where they are — a one-element window col_expanded is an identity copy (its
    # slice is read of win itself, the result being win)
    body = T + """
win = pl.tile.slice(local, [2, 1], [0, 0], valid_shape=[2, 1])
cr = self.ident(win)
one = pl.tile.slice({src}, [1, 1], [0, 0])
gv = pl.tile.load(g, [0, 0], [1, 1], target_memory=pl.Mem.Vec)
ce = pl.tile.col_expand_mul(one, gv)
out = pl.store(ce, [0, 0], out)
return out
"""
    ident = """
    @pl.function(type=pl.FunctionType.InCore)
    def ident(self, t: pl.Tile[[2, 1], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[2, 1], pl.FP32, pl.Mem.Vec]:
        return t
"""
    params = f"{X}, g: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]"

    def prog(src: str) -> et.ir.Program:
        return et.verify_program(et.parse_program(kernel(
            params, body.format(src=src), "pl.Tensor[[16, 64], pl.FP32]", more=ident)))
    p = prog("cr")
    et.assert_structural_equal(et.optimize(p), prog("win"))
    assert unsound_because(et.optimize, p, inputs_for(p), {}, "kernel") is None
