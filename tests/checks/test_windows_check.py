"""Acc accumulator windows: which windows are accepted, which are rejected, and why.

Each case is a kernel body (DSL text, from line 6 of the program); ``lhs`` / ``rhs`` are Left /
Right parameters whose product has the accumulator window's shape (``rows`` x ``cols``, 16 x 32
unless a case says otherwise).  :func:`window` writes the common four-line body: an Acc tile
``acc``, one window ``w`` of it, the op accumulating into ``w``, ``return w2``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from egraph_tiles.dsl import parse_program
from egraph_tiles.checks import windows as win
from egraph_tiles.checks.windows import check_acc_windows
from egraph_tiles.ir.stmts import AssignStmt, ForStmt, walk

import dslkit


def kernel(body: str, rows: int = 16, cols: int = 32, extra: str = "") -> str:
    """A one-function program whose matmul operands produce a ``rows x cols`` product (its body
    from line 6)."""
    return dslkit.kernel(f"lhs: pl.Tile[[{rows}, 64], pl.BF16, pl.Mem.Left],\n"
                         f"               rhs: pl.Tile[[64, {cols}], pl.BF16, pl.Mem.Right]{extra}",
                         body, bare=True)


def check(text: str) -> None:
    prog = parse_program(text, filename="kernel.py")
    check_acc_windows(prog.functions[0])


def rejection(text: str) -> str:
    with pytest.raises(ValueError) as info:
        check(text)
    return str(info.value)


def assert_message(msg: str, op: str, r: int, c: int, pr: int, pc: int | str, line: int) -> None:
    """Every piece a rejection's message must carry."""
    assert op in msg
    assert f"{r}x{c} row window of a {pr}x{pc} Acc (L0C) tile" in msg
    assert "not contiguous in L0C's block layout" in msg
    assert "no destination stride" in msg
    assert "only the first 16 columns of each row tile would be correct" in msg
    assert "span every row of its parent" in msg and "inside one 16-column block" in msg
    assert f"kernel.py:{line}:" in msg and f"line {line}" in msg
    assert "compiler pass" in msg and "batch_matmul_acc" in msg
    if isinstance(pr, int) and pr % r == 0:
        assert f"{r} x {(pr // r) * c}" in msg
        assert f"tile.slice(acc, [{r}, {c}], [0, i * {c}])" in msg


def body(*lines: str) -> str:
    return "\n".join(lines)


def acc(rows: int | str, cols: int | str, name: str = "acc") -> str:
    return f"{name} = pl.tile.create([{rows}, {cols}], pl.FP32, target_memory=pl.Mem.Acc)"


def window(parent: tuple, shape: tuple, at: tuple, op: str = "matmul_acc",
           args: str = "w, lhs, rhs", slice_kw: str = "") -> str:
    """``acc`` of shape ``parent``; ``w`` its window of ``shape`` at ``at``; ``w2 = op(args)``."""
    return body(acc(*parent),
                f"w = pl.tile.slice(acc, [{shape[0]}, {shape[1]}], [{at[0]}, {at[1]}]{slice_kw})",
                f"w2 = pl.tile.{op}({args})",
                "return w2")


#: a ``good`` 16 x 32 accumulator of its own and the ``bad`` bottom half of a 32 x 32 one
GOOD_AND_BAD = (acc(32, 32), acc(16, 32, "good"), "bad = pl.tile.slice(acc, [16, 32], [16, 0])")


#: a loop accumulating into its carry (initialized with ``good``) and yielding ``bad``
def back_edge(loop: str) -> str:
    return body(*GOOD_AND_BAD,
                f"for k, (c,) in {loop}:",
                "    cc = pl.tile.matmul_acc(c, lhs, rhs)",
                "    out = pl.yield_(bad)",
                "return out")


N = ", n: pl.Scalar[pl.INDEX]"
#: the window most cases reject: the bottom half of a 32 x 32 accumulator ``acc``
BOTTOM = "w = pl.tile.slice(acc, [16, 32], [16, 0])"


@dataclass(frozen=True)
class Rejects:
    """Rejected with the full message for ``op`` on an ``r x c`` window of a ``pr x pc`` tile at
    ``line``, which also says each of ``also`` and none of ``absent``."""

    op: str
    r: int
    c: int
    pr: int
    pc: int | str
    line: int
    also: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()


@dataclass(frozen=True)
class Says:
    """Rejected with a message saying each of ``also`` and none of ``absent``."""

    also: tuple[str, ...]
    absent: tuple[str, ...] = ()


def bottom(line: int) -> Rejects:
    """The full message for ``tile.matmul_acc`` on :data:`BOTTOM`, at ``line``."""
    return Rejects("tile.matmul_acc", 16, 32, 32, 32, line)


def case(name: str, text: str, expect: Rejects | Says | None = None, **kw) -> object:
    return pytest.param(text, kw, expect, id=name)


#: ``bad`` reaches ``m`` only through the then arm of a first ``if {c1}`` and ``m`` the accumulator
#: only through the else arm of a second ``if {c2}``
TWO_IFS = ("if {c1}:", "    f1 = pl.yield_(bad)", "else:", "    f1 = pl.yield_(good)",
           "if {c2}:", "    m = pl.yield_(good)", "else:", "    m = pl.yield_(f1)",
           "pl.tile.matmul_acc(m, lhs, rhs)", "return acc")


def two_ifs(c1: str, c2: str) -> str:
    return body(*GOOD_AND_BAD, *(ln.format(c1=c1, c2=c2) for ln in TWO_IFS))


ACCEPTED = [
    # (no run takes the then arm of the first and the else arm of the second)
    case("window reaching the accumulator only through opposite arms of one condition",
         two_ifs("n > 0", "n > 0"), extra=N),
    case("full row window at a column offset", window((16, 64), (16, 32), (0, 32))),
    case("single block column row window", window((32, 16), (16, 16), (16, 0)), cols=16),
    case("narrow window inside one block at an unaligned offset",
         window((32, 32), (16, 8), (16, 20)), cols=8),
    # inner covers columns 16..31 of acc (one block), although 8..23 of outer straddles
    case("chained slice judged against the allocation, not the intermediate",
         body(acc(32, 64), "outer = pl.tile.slice(acc, [32, 48], [0, 8])",
              "inner = pl.tile.slice(outer, [16, 16], [16, 8])",
              "w2 = pl.tile.matmul_acc(inner, lhs, rhs)", "return w2"), cols=16),
    case("single trip loop yielding a bad window", back_edge("pl.range(0, 1, 1, init_values=(good,))")),
    case("loop carry only read is not checked on the back edge",
         body(*GOOD_AND_BAD, "for k, (c,) in pl.range(0, 4, 1, init_values=(good,)):",
              "    v = pl.tile.move(c, target_memory=pl.Mem.Vec)", "    out = pl.yield_(bad)",
              "return out")),
    case("dynamic column offset a multiple of 16 inside one block",
         body(acc(32, 64), "for j in pl.range(0, 64, 16):",
              "    w = pl.tile.slice(acc, [16, 16], [16, j])",
              "    w2 = pl.tile.matmul_acc(w, lhs, rhs)", "return acc"), cols=16),
    case("dynamic column offset of a full row window a multiple of 16",
         body(acc(16, 128), "off = blk * 32", "w = pl.tile.slice(acc, [16, 32], [0, off])",
              "w2 = pl.tile.matmul_acc(w, lhs, rhs)", "return w2"),
         extra=", blk: pl.Scalar[pl.INDEX]"),
    # a multiple of 4 and 4 columns wide: c mod 16 is 0, 4, 8 or 12, so it never crosses a block
    case("narrow window at a small multiple",
         body(acc(32, 64), "for j in pl.range(0, 60, 4):",
              "    w = pl.tile.slice(acc, [16, 4], [16, j])",
              "    w2 = pl.tile.matmul_acc(w, lhs, rhs)", "return acc"), cols=4),
    case("symbolic parent rows stay silent", window(("m", 32), (16, 32), (16, 0)),
         extra=", m: pl.Scalar[pl.INDEX]"),
    case("if whose arms both name good windows",
         body(acc(16, 64), "left = pl.tile.slice(acc, [16, 32], [0, 0])",
              "right = pl.tile.slice(acc, [16, 32], [0, 32])", "if n > 0:",
              "    w = pl.yield_(left)", "else:", "    w = pl.yield_(right)",
              "w2 = pl.tile.matmul_acc(w, lhs, rhs)", "return w2"), extra=N),
    case("transpose makes a fresh buffer and does not carry the window",
         body(acc(32, 32), "w = pl.tile.slice(acc, [16, 16], [16, 8])", "t = pl.tile.transpose(w)",
              "t2 = pl.tile.matmul_acc(t, lhs, rhs)", "return t2"), cols=16),
    case("shape changing reshape does not carry the window",
         body(acc(32, 32), BOTTOM,
              "r = pl.tile.reshape(w, [32, 16])", "r2 = pl.tile.matmul_acc(r, lhs, rhs)",
              "return r2"), rows=32, cols=16),
    case("opaque call result is not taken as a parent",
         body("acc: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pld.tile.remote_alloc()",
              BOTTOM, "w2 = pl.tile.matmul_acc(w, lhs, rhs)",
              "return w2")),
    case("full row window at an unaligned offset inside one block",
         window((16, 64), (16, 8), (0, 40)), cols=8),
    # range(0, 2): the result is always the fresh tile the body yields, never the bad initializer
    case("loop result of a loop that runs at least once is its yield only",
         body(acc(32, 32), BOTTOM,
              "for ko, (c,) in pl.range(0, 2, 1, init_values=(w,)):",
              "    fresh = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)",
              "    out = pl.yield_(fresh)", "w2 = pl.tile.matmul_acc(out, lhs, rhs)", "return w2")),
    # range(0, 2, 2): start + step == stop, a single trip, the yield is never used as a carry
    case("loop whose step allows one trip only, on the back edge",
         back_edge("pl.range(0, 2, 2, init_values=(good,))")),
]


REJECTED = [
    case("window reaching the accumulator through the arms of two different conditions",
         two_ifs("n > 0", "n > 1"), Says(("may name — when the `if` at line 9 takes its then arm",)),
         extra=N),
    # (only conditions on the function's parameters are known to hold the same value twice)
    case("window reaching the accumulator through arms of one condition on a local scalar",
         body(*GOOD_AND_BAD, "k = n + 0", *(ln.format(c1="k > 0", c2="k > 0") for ln in TWO_IFS)),
         Says(("takes its then arm",)), extra=N),
    # a while loop may take its back edge; the yielded window is then the carry
    case("while loop back edge, naming the loop",
         body(*GOOD_AND_BAD, "for (c,) in pl.while_(init_values=(good,)):", "    pl.cond(n < 2)",
              "    cc = pl.tile.matmul_acc(c, lhs, rhs)", "    out = pl.yield_(bad)", "return out"),
         Rejects("tile.matmul_acc", 16, 32, 32, 32, 11, (
             "may name — through the loop at line 9: the value its body yields at line 12",
             "make each branch")), extra=N),
    case("symbolic trip count back edge, naming the loop",
         back_edge("pl.range(0, n, 1, init_values=(good,))"),
         Rejects("tile.matmul_acc", 16, 32, 32, 32, 10, (
             "through the loop at line 9: the value its body yields at line 11",)), extra=N),
    # `off` is only known to be a multiple of 1, so the 16x16 window can cross a block
    case("dynamic column offset that may cross a block", window((32, 64), (16, 16), (16, "off")),
         Says(("tile.matmul_acc at line 8", "kernel.py:8:",
               "16x16 row window of a 32x64 Acc (L0C) tile `acc` at a dynamic column offset",
               "only known to be a multiple of 1",
               "Fix: make the column offset a provable multiple of 16")),
         cols=16, extra=", off: pl.Scalar[pl.INDEX]"),
    case("dynamic column offset of a full row window at a multiple of 8",
         body(acc(16, 128), "for j in pl.range(8, 96, 8):",
              "    w = pl.tile.slice(acc, [16, 32], [0, j])",
              "    w2 = pl.tile.matmul_acc(w, lhs, rhs)", "return acc"),
         Says(("only known to be a multiple of 8",))),
    # the else arm brings the bad bottom half to the accumulator
    case("if whose arms name different windows, naming the arm",
         body(acc(32, 32), acc(16, 32, "top"), "bot = pl.tile.slice(acc, [16, 32], [16, 0])",
              "if n > 0:", "    w = pl.yield_(top)", "else:", "    w = pl.yield_(bot)",
              "w2 = pl.tile.matmul_acc(w, lhs, rhs)", "return w2"),
         Rejects("tile.matmul_acc", 16, 32, 32, 32, 13, (
             "may name — when the `if` at line 9 takes its else arm — a 16x32",)), extra=N),
    case("nested if inside a loop names the inner arm",
         body(acc(32, 32), acc(16, 32, "good"), "bot = pl.tile.slice(acc, [16, 32], [16, 0])",
              "for k, (c,) in pl.range(0, 4, 1, init_values=(good,)):",
              "    cc = pl.tile.matmul_acc(c, lhs, rhs)", "    if n > k:", "        y = pl.yield_(cc)",
              "    else:", "        y = pl.yield_(bot)", "    out = pl.yield_(y)", "return out"),
         Rejects("tile.matmul_acc", 16, 32, 32, 32, 10, (
             "when the `if` at line 11 takes its else arm",)), extra=N),
    case("row window of a multi-block column accumulator", window((32, 32), (16, 32), (16, 0)),
         bottom(8)),
    # [16, 16] at [0, 8] of [16, 64]: every row, but the compact NZ write is shifted by 8
    case("full row window starting mid-block and crossing a block",
         window((16, 64), (16, 16), (0, 8)),
         Says(("tile.matmul_acc", "kernel.py:8:", "line 8",
               "16x16 row window of a 16x64 Acc (L0C) tile",
               "not contiguous in L0C's block layout", "no destination stride",
               "starts at column 8, mid-block (not a multiple of 16)",
               "crosses the block boundary at column 16", "only the first 8 would be correct",
               "span every row of its parent starting at a column offset that is a multiple of 16",
               "inside one 16-column block", "tile.slice(acc, [16, 16], [0, i * 16])",
               "compiler pass", "batch_matmul_acc")), cols=16),
    case("window straddling two blocks", window((32, 32), (16, 16), (16, 8)),
         Rejects("tile.matmul_acc", 16, 16, 32, 32, 8), cols=16),
    case("valid_shape slice",
         window((32, 32), (16, 32), (16, 0), slice_kw=", valid_shape=[n, 32]"),
         bottom(8), extra=N),
    case("hoisted slice through a loop carry",
         body(acc(32, 32), BOTTOM,
              "for ko, (c,) in pl.range(0, 256, 64, init_values=(w,)):",
              "    cc = pl.tile.matmul_acc(c, lhs, rhs)", "    out = pl.yield_(cc)", "return out"),
         bottom(9)),
    case("plain alias",
         body(acc(32, 32), BOTTOM, "a = w",
              "w2 = pl.tile.matmul_acc(a, lhs, rhs)", "return w2"),
         bottom(9)),
    case("same shape reshape",
         body(acc(32, 32), BOTTOM,
              "r = pl.tile.reshape(w, [16, 32])", "w2 = pl.tile.matmul_acc(r, lhs, rhs)",
              "return w2"),
         bottom(9)),
    case("bare matmul_acc statement",
         body(acc(32, 32), BOTTOM,
              "pl.tile.matmul_acc(w, lhs, rhs)", "return acc"),
         bottom(8)),
    case("loop exit value",
         body(acc(32, 32), BOTTOM,
              "for ko, (c,) in pl.range(0, n, 1, init_values=(w,)):",
              "    v = pl.tile.move(c, target_memory=pl.Mem.Vec)", "    out = pl.yield_(c)",
              "w2 = pl.tile.matmul_acc(out, lhs, rhs)", "return w2"),
         bottom(11), extra=N),
    case("if merge whose arms name the same window",
         body(acc(32, 32), BOTTOM, "a = w", "if n > 0:",
              "    m = pl.yield_(w)", "else:", "    m = pl.yield_(a)",
              "w2 = pl.tile.matmul_acc(m, lhs, rhs)", "return w2"),
         bottom(13), extra=N),
    case("two trip loop yielding a bad window, on the back edge",
         back_edge("pl.range(0, 2, 1, init_values=(good,))"),
         Rejects("tile.matmul_acc", 16, 32, 32, 32, 10, (
             "through the loop at line 9: the value its body yields at line 11",))),
    case("two loops, naming the bad loop's shape",
         body(acc(16, 64), acc(48, 32, "big"), "good = pl.tile.slice(acc, [16, 32], [0, 32])",
              "bad = pl.tile.slice(big, [16, 32], [32, 0])",
              "for ko, (c,) in pl.range(0, 128, 64, init_values=(good,)):",
              "    cc = pl.tile.matmul_acc(c, lhs, rhs)", "    o1 = pl.yield_(cc)",
              "for ko2, (d,) in pl.range(0, 128, 64, init_values=(bad,)):",
              "    dd = pl.tile.matmul_acc(d, lhs, rhs)", "    o2 = pl.yield_(dd)", "return o2"),
         Rejects("tile.matmul_acc", 16, 32, 48, 32, 14, absent=("16x32 row window of a 16x64",))),
    # inner covers columns 12..27 of acc: it straddles the block boundary at 16
    case("chained slice offsets accumulate into a rejection",
         body(acc(32, 64), "outer = pl.tile.slice(acc, [32, 48], [0, 8])",
              "inner = pl.tile.slice(outer, [16, 16], [16, 4])",
              "w2 = pl.tile.matmul_acc(inner, lhs, rhs)", "return w2"),
         Rejects("tile.matmul_acc", 16, 16, 32, 64, 9), cols=16),
    case("scalar SSA column offset is resolved",
         body(acc(32, 32), "off: pl.Scalar[pl.INDEX] = 4 + 4",
              "w = pl.tile.slice(acc, [16, 16], [16, off])", "w2 = pl.tile.matmul_acc(w, lhs, rhs)",
              "return w2"),
         Rejects("tile.matmul_acc", 16, 16, 32, 32, 9), cols=16),
    case("dynamic row offset with constant columns", window((64, 32), (16, 32), ("i * 16", 0)),
         Rejects("tile.matmul_acc", 16, 32, 64, 32, 8), extra=", i: pl.Scalar[pl.INDEX]"),
    case("gemv_acc is covered by the registry",
         window((32, 32), (16, 32), (16, 0), op="gemv_acc"),
         Rejects("tile.gemv_acc", 16, 32, 32, 32, 8)),
    case("symbolic parent columns print as a question mark",
         body(BOTTOM, "w2 = pl.tile.matmul_acc(w, lhs, rhs)",
              "return w2"),
         Rejects("tile.matmul_acc", 16, 32, 32, "?", 7),
         extra=", n: pl.Scalar[pl.INDEX], acc: pl.Tile[[32, n], pl.FP32, pl.Mem.Acc]"),
    case("the fix is omitted when the parent rows are not a multiple of the window rows",
         window((48, 32), (32, 32), (16, 0)),
         Says(("32x32 row window of a 48x32 Acc (L0C) tile", "pack the accumulator along columns"),
              absent=("tile.slice(acc, [32, 32], [0, i * 32])",)), rows=32),
    case("the fix gives the packed allocation", window((64, 32), (16, 32), (48, 0)),
         Says(("allocate it as 16 x 128", "tile.slice(acc, [16, 32], [0, i * 32])"))),
    case("an offset defined through a scalar keeps its multiple for the verdict",
         body(acc(16, 128), "off = blk * 8", "w = pl.tile.slice(acc, [16, 32], [0, off])",
              "w2 = pl.tile.matmul_acc(w, lhs, rhs)", "return w2"),
         Says(("only known to be a multiple of 8",)), extra=", blk: pl.Scalar[pl.INDEX]"),
    case("slice of a loop-carried allocation is judged against the carried tile",
         body(acc(32, 32), "for b, (a,) in pl.range(0, 2, 1, init_values=(acc,)):",
              "    page = pl.tile.slice(a, [16, 32], [16, 0])", "    pl.tile.matmul_acc(page, lhs, rhs)",
              "    out = pl.yield_(a)", "return out"),
         bottom(9)),
    case("window inside a split_aiv scope",
         body(acc(32, 32), "for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):",
              "    w = pl.tile.slice(acc, [16, 32], [16, 0])", "    pl.tile.matmul_acc(w, lhs, rhs)",
              "return acc"),
         bottom(9)),
    case("slice of a loop result carrying an allocation",
         body(acc(32, 32), "for b, (a,) in pl.range(0, n, 1, init_values=(acc,)):",
              "    out = pl.yield_(a)", "w = pl.tile.slice(out, [16, 32], [16, 0])",
              "pl.tile.matmul_acc(w, lhs, rhs)", "return out"),
         bottom(10), extra=N),
    case("slice of an if merging two allocations",
         body("if n > 0:", "    " + acc(32, 32, "x"), "    m = pl.yield_(x)", "else:",
              "    " + acc(32, 32, "y"), "    m = pl.yield_(y)",
              "w = pl.tile.slice(m, [16, 32], [16, 0])", "pl.tile.matmul_acc(w, lhs, rhs)",
              "return m"),
         bottom(13), extra=N),
    case("scalar SSA product column offset is resolved",
         body(acc(32, 32), "k: pl.Scalar[pl.INDEX] = 4", "off = k * 2",
              "w = pl.tile.slice(acc, [16, 16], [16, off])", "pl.tile.matmul_acc(w, lhs, rhs)",
              "return acc"),
         Rejects("tile.matmul_acc", 16, 16, 32, 32, 10), cols=16),
    case("scalar SSA difference column offset is resolved",
         body(acc(32, 32), "k: pl.Scalar[pl.INDEX] = 12", "off = k - 4",
              "w = pl.tile.slice(acc, [16, 16], [16, off])", "pl.tile.matmul_acc(w, lhs, rhs)",
              "return acc"),
         Rejects("tile.matmul_acc", 16, 16, 32, 32, 10), cols=16),
    # outer names (acc, i, 0); inner, a zero-offset slice of outer, names (acc, i + 0, 0 + 0)
    case("if arms naming one window through a zero-offset subslice are merged",
         body(acc(64, 32), "outer = pl.tile.slice(acc, [16, 32], [i, 0])",
              "inner = pl.tile.slice(outer, [16, 32], [0, 0])", "if n > 0:",
              "    m = pl.yield_(outer)", "else:", "    m = pl.yield_(inner)",
              "pl.tile.matmul_acc(m, lhs, rhs)", "return acc"),
         Rejects("tile.matmul_acc", 16, 32, 64, 32, 13), extra=", i: pl.Scalar[pl.INDEX]" + N),
    # direct names (acc, i, 0); via names (acc, 0 + i, 0 + 0)
    case("if arms naming one window through a full zero-offset parent are merged",
         body(acc(64, 32), "direct = pl.tile.slice(acc, [16, 32], [i, 0])",
              "full = pl.tile.slice(acc, [64, 32], [0, 0])",
              "via = pl.tile.slice(full, [16, 32], [i, 0])", "if n > 0:", "    m = pl.yield_(direct)",
              "else:", "    m = pl.yield_(via)", "pl.tile.matmul_acc(m, lhs, rhs)", "return acc"),
         Rejects("tile.matmul_acc", 16, 32, 64, 32, 14), extra=", i: pl.Scalar[pl.INDEX]" + N),
    case("carry used as destination through an alias, on the back edge",
         body(*GOOD_AND_BAD, "for k, (c,) in pl.range(0, 2, 1, init_values=(good,)):", "    a = c",
              "    pl.tile.matmul_acc(a, lhs, rhs)", "    out = pl.yield_(bad)", "return out"),
         bottom(11)),
    case("set_validshape carries the window",
         body(acc(32, 32), BOTTOM,
              "v = pl.tile.set_validshape(w, [n, 32])", "pl.tile.matmul_acc(v, lhs, rhs)",
              "return acc"),
         bottom(9), extra=N),
    case("matmul_mx_acc is covered by the registry",
         window((32, 32), (16, 32), (16, 0), op="matmul_mx_acc", args="w, lhs, ls, rhs, rs"),
         Rejects("tile.matmul_mx_acc", 16, 32, 32, 32, 8),
         extra=", ls: pl.Tile[[16, 2], pl.INT8, pl.Mem.Left], rs: pl.Tile[[2, 32], pl.INT8, pl.Mem.Right]"),
    # the initializer names the bad window; with a symbolic trip count the loop may run no trip,
    # and its result is then the initializer
    case("loop result that may be its initializer, naming the zero-trip path",
         body(acc(32, 32), BOTTOM,
              "for ko, (c,) in pl.range(0, n, 1, init_values=(w,)):",
              "    fresh = pl.tile.create([16, 32], pl.FP32, target_memory=pl.Mem.Acc)",
              "    out = pl.yield_(fresh)", "w2 = pl.tile.matmul_acc(out, lhs, rhs)", "return w2"),
         Rejects("tile.matmul_acc", 16, 32, 32, 32, 11, (
             "when the loop at line 8 runs no trip (its result is then its initializer)",)),
         extra=N),
    # any trip count, including one: the result is the yielded bad window
    case("one trip loop result naming another bad window",
         body(acc(32, 32), "good = pl.tile.slice(acc, [32, 16], [0, 0])",
              "bad = pl.tile.slice(acc, [16, 32], [16, 0])",
              "top = pl.tile.slice(acc, [16, 32], [0, 0])",
              "for ko, (c,) in pl.range(0, 1, 1, init_values=(top,)):", "    out = pl.yield_(bad)",
              "w2 = pl.tile.matmul_acc(out, lhs, rhs)", "return w2"),
         Rejects("tile.matmul_acc", 16, 32, 32, 32, 12, ("through the loop at line 10",))),
    case("while loop exit value",
         body(acc(32, 32), BOTTOM,
              "for (c,) in pl.while_(init_values=(w,)):", "    pl.cond(n < 2)", "    out = pl.yield_(c)",
              "w2 = pl.tile.matmul_acc(out, lhs, rhs)", "return w2"),
         bottom(11), extra=N),
    case("loop with a nonzero start and two trips, on the back edge",
         back_edge("pl.range(64, 256, 128, init_values=(good,))"),
         bottom(10)),
    # the yielded window is the 16x32 bottom half of a 32x32 accumulator; the carry is 16x32
    case("the back edge window is judged with the iter arg's extent",
         back_edge("pl.range(0, 3, 1, init_values=(good,))"),
         Says(("16x32 row window of a 32x32 Acc (L0C) tile",))),
]


@pytest.mark.parametrize("text, kw, expect", ACCEPTED)
def test_window_is_accepted(text, kw, expect):
    check(kernel(text, **kw))


@pytest.mark.parametrize("text, kw, expect", REJECTED)
def test_window_is_rejected(text, kw, expect):
    msg = rejection(kernel(text, **kw))
    if isinstance(expect, Rejects):
        assert_message(msg, expect.op, expect.r, expect.c, expect.pr, expect.pc, line=expect.line)
    for part in expect.also:
        assert part in msg
    for part in expect.absent:
        assert part not in msg


def test_chained_matmul_acc_result_carries_the_window():
    prog = parse_program(kernel(body(
        acc(32, 32), "w = pl.tile.slice(acc, [16, 32], [16, 0])",
        "w1 = pl.tile.matmul_acc(w, lhs, rhs)", "w3 = pl.tile.matmul_acc(w1, lhs, rhs)",
        "return w3")), filename="kernel.py")
    _, found = win.violations(prog.functions[0])
    assert len(found) == 2  # both the first write and the chained write land in the window
    assert {(v.rows, v.cols) for v in found} == {(16, 32)}


def test_egglog_panic_becomes_a_value_error_naming_the_function(monkeypatch):
    class PanicException(BaseException):
        pass

    def panic(facts, read):
        raise PanicException("Already borrowed")

    monkeypatch.setattr(win, "run_rules", panic)
    with pytest.raises(ValueError, match=re.escape("'kernel'")):
        check(kernel(window((16, 64), (16, 32), (0, 32))))


@pytest.fixture
def no_egraph(monkeypatch):
    """Fail the test if the windows e-graph is built."""
    def must_not_run(facts, read):
        raise AssertionError("the windows e-graph was built")

    monkeypatch.setattr(win, "run_rules", must_not_run)


def test_function_writing_back_into_no_tile_skips_the_egraph(no_egraph):
    # no registry reuses_arg operand is a tile (a matmul makes a fresh Acc tile), so no rule
    # could derive a violation: the rules are not even run
    check(kernel(body("acc = pl.tile.matmul(lhs, rhs)", "w = pl.tile.slice(acc, [16, 16], [0, 8])",
                      "return w")))


#: an accumulator a loop fills in an Acc tile of its own (no slice takes a window of it)
OWN_ACCUMULATOR = body(acc(16, 32, "mine"),
                       "for k, (a,) in pl.range(0, 2, 1, init_values=(mine,)):",
                       "    a2 = pl.tile.matmul_acc(a, lhs, rhs)", "    out = pl.yield_(a2)")


def test_accumulator_of_its_own_next_to_no_window_skips_the_egraph(no_egraph):
    # the accumulator's storage holds no tile a slice takes a window of (another Acc tile's
    # window is only read): no window can reach it, so the rules are not even run
    check(kernel(body(OWN_ACCUMULATOR, acc(16, 64, "other"),
                      "w = pl.tile.slice(other, [16, 32], [0, 8])", "return out")))


def test_accumulator_of_its_own_is_not_encoded_next_to_a_checked_window():
    # only the storage holding the sliced Acc tile is stated: the other accumulator's loop and
    # its tile give no fact, and the window is still rejected
    text = kernel(body(OWN_ACCUMULATOR, window((32, 32), (16, 32), (16, 0))))
    fn = parse_program(text, filename="kernel.py").functions[0]
    enc, found = win.violations(fn)
    assert {v.name for v in enc.vars.values()} == {"acc", "w", "w2"}
    assert [(v.rows, v.cols, v.col) for v in found] == [(16, 32, 0)]


def test_only_the_definitions_and_loop_variables_a_window_offset_uses_are_stated():
    # `unused` and the loop variable `i` reach no window offset: no fact about them is stated,
    # and the offsets that use `off` and `j` still get their known multiples (32 and 16)
    text = kernel(body(
        acc(16, 128), "unused = blk * 3 + 1", "off = blk * 32", "for i in pl.range(0, 4, 1):",
        "    w = pl.tile.slice(acc, [16, 32], [0, off])", "    w2 = pl.tile.matmul_acc(w, lhs, rhs)",
        "for j in pl.range(0, 96, 16):", "    w3 = pl.tile.slice(acc, [16, 32], [0, j])",
        "    w4 = pl.tile.matmul_acc(w3, lhs, rhs)", "return acc"), extra=", blk: pl.Scalar[pl.INDEX]")
    fn = parse_program(text, filename="kernel.py").functions[0]
    enc, found = win.violations(fn)
    assert found == []
    symbol = {n: uid for uid, n in enc.syms.items()}
    defined = {symbol[n] for n, _ in enc.rows["SymDefRow"]}
    looped = {symbol[n] for n, _, _ in enc.rows["LoopRow"]}
    names = {v.uid: v.name for v in (*(s.target for s in walk(fn.body) if isinstance(s, AssignStmt)),
                                     *(s.loop_var for s in walk(fn.body) if isinstance(s, ForStmt)))}
    assert {names[u] for u in defined} == {"off"}
    assert {names[u] for u in looped} == {"j"}
