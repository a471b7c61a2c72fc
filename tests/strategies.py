"""Hypothesis strategies of random well-formed tile programs.

API (reused by the simulator and optimizer soundness tests)::

    from strategies import programs, program_texts, ROW_OFF_MAX

    @given(programs())                 # -> egraph_tiles Program (parsed, verifier-clean)
    @given(program_texts(max_stmts=20))  # -> the DSL text it came from

Each program has one InCore function ``kernel(x, g, a_t, b_t, row_off, flag, out)``:
``x: [16, C] FP32``, ``g: [1, C] FP32``, ``a_t: [16, K] BF16``, ``b_t: [K, N] BF16``
(C in {32, 64}, K in {64, 128}, N in {16, 32}), scalars ``row_off`` (give it a value in
``[0, ROW_OFF_MAX]``) and ``flag`` (any int), and ``out: pl.Out[[16, C] FP32]``, which
it returns. Bodies mix: Vec slices at aligned / unaligned / dynamic (row_off, loop
variable, scalar SSA definition) offsets and slice chains feeding vector ops,
col_expand ops and stores; Mat slices (and slices of slices) feeding extract and
matmul; matmul_acc K loops (range / pipeline) carrying an accumulator that is a fresh
Acc tile or a full-row column window of a wider one; loops with carries, plain and
parallel loops, while loops, if/else with yields, split_aiv scopes, scalar SSA
definitions; and, at top level, the shapes rules/checks.py rejects or accepts — a
valid_shape slice feeding a col_expand op (constant offset, single row / full width or not;
a loop-variable row offset that is never 0) and a column window of ``x_vec`` written by
``fillpad_inplace`` directly or through ``set_validshape`` (aligned or not), each followed by
a store of ``x_vec`` so a corrupted or lost write is observable. Every window is in bounds for
every trip. The generator itself is
:mod:`egraph_tiles.dsl.generate` (also used by the parse benchmark).

The boundary shapes have strategies of their own: :func:`acc_reshape_cases` (a reshape of
an Acc tile, to its own shape or another, accumulated into, read or unused) and
:func:`mat_call_cases` (a Mat window passed to a program function that uses it as a matmul
operand, and the accepted neighbours); each returns ``(program, inputs, scalars, domain)`` for
the soundness judge.

The routes have :func:`route_cases`: one window reaching its consumer through a call
result, a tuple element, a callee's write, a view of a view, a loop carry, an if-merge, the keyword
spelling, past an early exit or a zero-trip loop, or in a loop whose body's temporaries fill Vec
(:data:`ROUTES`, consumers in :data:`ROUTE_KINDS`); it returns ``(program, inputs, scalars,
domain, capacity)``.
"""

from __future__ import annotations

import ast
import re
import textwrap
from typing import Sequence, TypeVar

from hypothesis import strategies as st

import egraph_tiles as et
from egraph_tiles.dsl.generate import ROW_OFF_MAX, generate_program_text
from egraph_tiles.ir.stmts import Program

__all__ = ["ROUTES", "ROUTE_KINDS", "ROW_OFF_MAX", "acc_reshape_cases", "mat_call_cases",
           "program_texts", "programs", "route_cases", "window_reshape_cases"]

T = TypeVar("T")


class _DrawChooser:
    """A generator chooser backed by hypothesis draws, so examples shrink."""

    def __init__(self, draw):
        self._draw = draw

    def randint(self, lo: int, hi: int) -> int:
        return self._draw(st.integers(lo, hi))

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self._draw(st.integers(0, len(seq) - 1))]


@st.composite
def program_texts(draw, max_stmts: int = 14, max_depth: int = 2) -> str:
    """DSL text of a random well-formed program of at most about ``max_stmts`` statements."""
    n = draw(st.integers(1, max_stmts))
    return generate_program_text(_DrawChooser(draw), max_stmts=n, max_depth=max_depth)


@st.composite
def programs(draw, max_stmts: int = 14, max_depth: int = 2) -> Program:
    """A random well-formed, verifier-clean :class:`Program`."""
    text = draw(program_texts(max_stmts=max_stmts, max_depth=max_depth))
    return et.verify_program(et.parse_program(text, filename="<generated>"))


# ------------------------------------------------------------------ loop-aware placement (#16)

#: the loop-placement kernel: a resident Vec tile ``local`` and a carried accumulator
LOOP_KERNEL = """import pypto.language as pl


@pl.program
class Loops:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32], c0: pl.Scalar[pl.INDEX],
               flag: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        z = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
{body}
        out = pl.store(res, [0, 0], out)
        return out
"""

#: window column offsets: loop-invariant (constants, aligned or not; a parameter; a value
#: defined inside the loop from invariants) and loop-variant (the loop variables)
LOOP_OFFSETS = {"const": None, "param": "c0", "def-inside": "k", "outer-var": "i * 8",
                "inner-var": "j * 8"}
#: writes into ``local``'s storage inside the innermost loop, after (or before) the use:
#: directly (through a set_validshape view made there), through a view made before the loop, or
#: through an alias of ``local``
LOOP_WRITES = ("none", "direct", "view", "alias", "before-use")


@st.composite
def loop_window_texts(draw, with_shape: bool = False):
    """A kernel reading a window of the resident tile ``local`` inside one or two ``pl.range``
    loops (1 to 3 trips each), sometimes under an ``if``, sometimes sliced before the loops; the
    window is loop-invariant or not, and ``local`` may be written in the loop (``fillpad_inplace``
    on a ``set_validshape`` view zeroes its lower rows, so a stale copy is observable).  Give
    ``c0`` a value in [0, 56].  ``with_shape`` also returns the shape tags (coverage test)."""
    nested = draw(st.booleans())
    off_kind = draw(st.sampled_from([k for k in LOOP_OFFSETS if nested or k != "inner-var"]))
    write = draw(st.sampled_from(LOOP_WRITES))
    guarded = draw(st.booleans())
    outside = off_kind in ("const", "param") and draw(st.booleans())
    col = draw(st.integers(0, 56))
    off = str(col) if off_kind == "const" else LOOP_OFFSETS[off_kind]
    vrows = draw(st.integers(1, 15))
    body: list[str] = []
    if write == "view":
        body.append(f"lv = pl.tile.set_validshape(local, [{vrows}, 64])")
    if write == "alias":
        body.append("al = local")
    slice_line = f"w = pl.tile.slice(local, [16, 8], [0, {off}])"
    if outside:
        body.append(slice_line)
    loops = [(f"for i, (acc,) in pl.range({draw(st.integers(1, 3))}, init_values=(z,)):", "acc")]
    if nested:
        loops.append((f"for j, (acc2,) in pl.range({draw(st.integers(1, 3))}, init_values=(acc,)):",
                      "acc2"))
    inner: list[str] = []
    if off_kind == "def-inside":
        inner.append("k = c0 + 0")
    if not outside:
        inner.append(slice_line)
    carry = loops[-1][1]
    writes = {"none": [], "direct": [f"lw = pl.tile.set_validshape(local, [{vrows}, 64])",
                                     "pl.tile.fillpad_inplace(lw, pl.PadValue.zero)"],
              "view": ["pl.tile.fillpad_inplace(lv, pl.PadValue.zero)"],
              "alias": [f"la = pl.tile.set_validshape(al, [{vrows}, 64])",
                        "pl.tile.fillpad_inplace(la, pl.PadValue.zero)"],
              "before-use": [f"lw = pl.tile.set_validshape(local, [{vrows}, 64])",
                             "pl.tile.fillpad_inplace(lw, pl.PadValue.zero)"]}[write]
    use = [f"nxt = pl.tile.add({carry}, w)"]
    if guarded:
        use = ["if flag > 0:", *("    " + ln for ln in use), "    g = pl.yield_(nxt)",
               "else:", f"    g = pl.yield_({carry})"]
        result = "g"
    else:
        result = "nxt"
    if write == "before-use":
        inner = writes + inner + use
    else:
        inner = inner + use + writes
    depth = len(loops)
    text_lines = list(body)
    for d, (head, _) in enumerate(loops):
        text_lines.append("    " * d + head)
    for ln in inner:
        text_lines.append("    " * depth + ln)
    if nested:
        text_lines.append("    " * 2 + f"r2 = pl.yield_({result})")
        text_lines.append("    " + "res = pl.yield_(r2)")
    else:
        text_lines.append("    " + f"res = pl.yield_({result})")
    text = LOOP_KERNEL.format(body="\n".join(" " * 8 + ln for ln in text_lines))
    tags = {off_kind, f"write-{write}", "nested" if nested else "single",
            "if" if guarded else "no-if", "sliced-outside" if outside else "sliced-inside"}
    return (text, tags) if with_shape else text


# ------------------------------------------------------------------ Acc reshapes, Mat callees

#: a kernel with a ``[m, n]`` accumulator ``acc`` (a matmul, or a matmul_acc into one) and Left /
#: Right operands ``lw`` / ``rw`` whose product is ``[R, C]`` (the reshape's shape)
ACC_RESHAPE_KERNEL = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[64, 16], pl.FP16], b: pl.Tensor[[16, 64], pl.FP16],
               flag: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[{o}], pl.FP32]]) -> pl.Tensor[[{o}], pl.FP32]:
        a_mat = pl.tile.load(a, [0, 0], [64, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        lm = pl.tile.extract(a_mat, 0, 0, shape=[{m}, 16], target_memory=pl.Mem.Left)
        rn = pl.tile.extract(b_mat, 0, 0, shape=[16, {n}], target_memory=pl.Mem.Right)
        lw = pl.tile.extract(a_mat, 0, 0, shape=[{R}, 16], target_memory=pl.Mem.Left)
        rw = pl.tile.extract(b_mat, 0, 0, shape=[16, {C}], target_memory=pl.Mem.Right)
{body}
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def accum(self, w: pl.Tile[[{R}, {C}], pl.FP32, pl.Mem.Acc], lt: pl.Tile[[{R}, 16], pl.FP16, pl.Mem.Left],
              rt: pl.Tile[[16, {C}], pl.FP16, pl.Mem.Right]) -> pl.Tile[[{R}, {C}], pl.FP32, pl.Mem.Acc]:
        w2 = pl.tile.matmul_acc(w, lt, rt)
        return w2
"""
ACC_RESHAPE_PARENTS = {
    "matmul": ["acc = pl.tile.matmul(lm, rn)"],
    "accumulated": ["acc0 = pl.tile.matmul(lm, rn)", "acc = pl.tile.matmul_acc(acc0, lm, rn)"],
}
RESHAPE = "r = pl.tile.reshape(acc, [{R}, {C}])"
#: what happens to the reshaped accumulator ``r``, and which tile is stored (``src``: the
#: parent, whose elements a write through ``r`` garbles; ``view``: the reshaped one)
ACC_RESHAPE_ROUTES = {
    "matmul_acc-then-source": ([RESHAPE, "r2 = pl.tile.matmul_acc(r, lw, rw)",
                                "out = pl.store(acc, [0, 0], out)"], "src"),
    "matmul_acc-then-view": ([RESHAPE, "r2 = pl.tile.matmul_acc(r, lw, rw)",
                              "out = pl.store(r2, [0, 0], out)"], "view"),
    "read": ([RESHAPE, "out = pl.store(r, [0, 0], out)"], "view"),
    "alias": ([RESHAPE, "q = r", "pl.tile.matmul_acc(q, lw, rw)",
               "out = pl.store(acc, [0, 0], out)"], "src"),
    "if": (["if flag > 0:", "    " + RESHAPE, "    y = pl.yield_(r)", "else:",
            "    z = pl.tile.matmul(lw, rw)", "    y = pl.yield_(z)",
            "y2 = pl.tile.matmul_acc(y, lw, rw)", "out = pl.store(y2, [0, 0], out)"], "view"),
    "loop": ([RESHAPE, "for i, (it,) in pl.range({trips}, init_values=(r,)):",
              "    c = pl.tile.matmul_acc(it, lw, rw)", "    res = pl.yield_(c)",
              "out = pl.store(acc, [0, 0], out)"], "src"),
    "call": ([RESHAPE, "r2 = self.accum(r, lw, rw)", "out = pl.store(acc, [0, 0], out)"], "src"),
    # accepted whatever the shape: nothing uses the reshape, or it reshapes a Vec tile
    "unused": ([RESHAPE, "out = pl.store(acc, [0, 0], out)"], "src"),
    "moved-to-vec": (["v = pl.tile.move(acc, target_memory=pl.Mem.Vec)",
                      "r = pl.tile.reshape(v, [{R}, {C}])", "out = pl.store(r, [0, 0], out)"],
                     "view"),
}
#: routes whose program computes right whatever the shape
ACC_RESHAPE_SAFE = {"unused", "moved-to-vec"}


def _reshape_shapes(m: int, n: int) -> list[tuple[int, int]]:
    """2-D shapes of whole 16 x 16 blocks with ``m * n`` elements (the same shape included)."""
    return [(r, m * n // r) for r in range(16, 65, 16)
            if (m * n) % r == 0 and (m * n // r) % 16 == 0 and m * n // r <= 64]


@st.composite
def acc_reshape_cases(draw, with_shape: bool = False):
    """A ``tile.reshape`` of a ``[m, n]`` Acc tile (m, n in 16..48) to a 2-D shape of the same
    size — the same shape, or another one — whose result is accumulated into (the parent or the
    reshape read back; through an alias, an ``if`` arm, a loop carry or a program function),
    read, or not used at all; or a reshape of the tile moved to Vec.  Returns (program, inputs,
    scalars, domain); ``with_shape`` also returns (route, shape changed, parent)."""
    from simkit import inputs_for

    m, n = draw(st.sampled_from([16, 32, 48])), draw(st.sampled_from([16, 32]))
    shapes = _reshape_shapes(m, n)
    changed = [s for s in shapes if s != (m, n)]
    same = not changed or draw(st.booleans())
    R, C = (m, n) if same else draw(st.sampled_from(changed))
    parent = draw(st.sampled_from(list(ACC_RESHAPE_PARENTS)))
    route = draw(st.sampled_from(list(ACC_RESHAPE_ROUTES)))
    lines, stored = ACC_RESHAPE_ROUTES[route]
    body = [ln.format(R=R, C=C, trips=draw(st.integers(1, 2)))
            for ln in ACC_RESHAPE_PARENTS[parent] + lines]
    o = f"{m}, {n}" if stored == "src" else f"{R}, {C}"
    text = ACC_RESHAPE_KERNEL.format(m=m, n=n, R=R, C=C, o=o,
                                     body="\n".join(" " * 8 + ln for ln in body))
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    case = (p, inputs_for(p, draw(st.integers(0, 2**16))), {"flag": draw(st.integers(-1, 2))},
            {"flag": [-1, 0, 1, 2]})
    return (*case, (route, not same, parent)) if with_shape else case


#: a kernel passing a Mat tile or a window of one to a program function that uses it as a
#: matmul operand (``mm_r`` right, ``mm_l`` left, ``mm_nest`` through another function), copies it
#: to Right first (``mm_x``), or using the window as a matmul operand itself
MAT_CALL_KERNEL = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 16], pl.FP16], b: pl.Tensor[[16, 64], pl.FP16],
               out: pl.Out[pl.Tensor[[16, {C}], pl.FP32]]) -> pl.Tensor[[16, {C}], pl.FP32]:
        a_mat = pl.tile.load(a, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        lt = pl.tile.extract(a_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
        rt = pl.tile.extract(b_mat, 0, 0, shape=[16, {C}], target_memory=pl.Mem.Right)
{body}
        out = pl.store(o, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def mm_r(self, l: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left],
             r: pl.Tile[[16, {C}], pl.FP16, pl.Mem.Mat]) -> pl.Tile[[16, {C}], pl.FP32, pl.Mem.Acc]:
        y = pl.tile.matmul(l, r)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def mm_l(self, l: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat],
             r: pl.Tile[[16, {C}], pl.FP16, pl.Mem.Right]) -> pl.Tile[[16, {C}], pl.FP32, pl.Mem.Acc]:
        y = pl.tile.matmul(l, r)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def mm_nest(self, l: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left],
                r: pl.Tile[[16, {C}], pl.FP16, pl.Mem.Mat]) -> pl.Tile[[16, {C}], pl.FP32, pl.Mem.Acc]:
        y = self.mm_r(l, r)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def mm_x(self, l: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left],
             r: pl.Tile[[16, {C}], pl.FP16, pl.Mem.Mat]) -> pl.Tile[[16, {C}], pl.FP32, pl.Mem.Acc]:
        rr = pl.tile.extract(r, 0, 0, shape=[16, {C}], target_memory=pl.Mem.Right)
        y = pl.tile.matmul(l, rr)
        return y
"""
MAT_WINDOW = "w = pl.tile.slice(b_mat, [16, {C}], [0, {c0}])"
#: route -> (body lines, whether the pass must reject it: a Mat window reaching a callee's
#: matmul operand has no data path to be materialized by)
MAT_CALL_ROUTES = {
    "window-right": ([MAT_WINDOW, "o = self.mm_r(lt, w)"], True),
    "window-left": (["w = pl.tile.slice(a_mat, [16, 16], [{r0}, 0])", "o = self.mm_l(w, rt)"], True),
    "window-alias": ([MAT_WINDOW, "wa = w", "o = self.mm_r(lt, wa)"], True),
    "window-nested": ([MAT_WINDOW, "o = self.mm_nest(lt, w)"], True),
    "window-copied-by-callee": ([MAT_WINDOW, "o = self.mm_x(lt, w)"], False),
    "window-in-kernel": ([MAT_WINDOW, "o = pl.tile.matmul(lt, w)"], False),
    "whole-tile": (["bm = pl.tile.load(b, [0, {c0}], [16, {C}], target_memory=pl.Mem.Mat)",
                    "o = self.mm_r(lt, bm)"], False),
}


@st.composite
def mat_call_cases(draw, with_shape: bool = False):
    """A Mat window (of ``b_mat`` at any 16-aligned or unaligned column, or of ``a_mat`` at a row
    offset) passed to a program function that uses it as a matmul operand — directly, through an
    alias, or through a nested function (rejected: ``mat-window-to-matmul-callee-violation``) —
    or one that copies it to Right first, the same window used as a matmul operand in the kernel,
    or a whole Mat tile passed to the function (accepted).  Returns (program, inputs, scalars,
    domain); ``with_shape`` also returns (route, must reject)."""
    from simkit import inputs_for

    C = draw(st.sampled_from([16, 32]))
    c0 = draw(st.integers(0, 64 - C))
    route = draw(st.sampled_from(list(MAT_CALL_ROUTES)))
    lines, reject = MAT_CALL_ROUTES[route]
    body = [ln.format(C=C, c0=c0, r0=draw(st.sampled_from([0, 8, 16]))) for ln in lines]
    text = MAT_CALL_KERNEL.format(C=C, body="\n".join(" " * 8 + ln for ln in body))
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    case = (p, inputs_for(p, draw(st.integers(0, 2**16))), {}, {})
    return (*case, (route, reject)) if with_shape else case


#: a kernel reshaping a Vec window ``q`` of ``xv`` and storing what it read (``read``) or zeroing
#: the lower rows of the reshape in place and storing ``xv`` (``write``)
WINDOW_RESHAPE_KERNEL = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32], r: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[{o}], pl.FP32]]) -> pl.Tensor[[{o}], pl.FP32]:
        xv = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        q = pl.tile.slice(xv, [{h}, {w}], [{r0}, {c0}])
        rs = pl.tile.reshape(q, [{R}, {C}])
{body}
        return out
"""
WINDOW_RESHAPE_ROUTES = {
    "read": ["y = pl.tile.muls(rs, 2.0)", "out = pl.store(y, [0, 0], out)"],
    "write": ["v = pl.tile.set_validshape(rs, [{vr}, {C}])",
              "pl.tile.fillpad_inplace(v, pad_value=pl.PadValue.zero)",
              "out = pl.store(xv, [0, 0], out)"],
}


@st.composite
def window_reshape_cases(draw, with_shape: bool = False):
    """A ``[h, w]`` Vec window of a ``[16, 64]`` tile — dense (one row, or the full width) or
    not, aligned or not, at a constant or dynamic (``r``) row — reshaped to another 2-D shape of
    the same size, then read, or written in place through the reshape.  Returns (program, inputs,
    scalars, domain); ``with_shape`` also returns (route, dense, aligned)."""
    from simkit import inputs_for

    kind = draw(st.sampled_from(["single-row", "full-width", "block"]))
    h = 1 if kind == "single-row" else draw(st.sampled_from([2, 4, 16]))
    w = 64 if kind == "full-width" else draw(st.sampled_from([16, 32] if h == 1 else [8, 16, 32]))
    offsets = [x for x in (0, 8, 16, 32) if x + w <= 64] if kind == "full-width" or \
        draw(st.booleans()) else [x for x in (1, 4, 12) if x + w <= 64]
    c0 = draw(st.sampled_from(offsets))
    dynamic = h < 16 and draw(st.booleans())
    r0: int | str = "r" if dynamic else draw(st.integers(0, 16 - h))
    C = draw(st.sampled_from([c for c in (8, 16, 32, 64) if (h * w) % c == 0 and h * w // c > 1]
                             or [w]))
    R = h * w // C
    route = draw(st.sampled_from(list(WINDOW_RESHAPE_ROUTES)))
    lines = [ln.format(C=C, vr=draw(st.integers(1, R - 1)) if R > 1 else 1)
             for ln in WINDOW_RESHAPE_ROUTES[route]]
    if route == "write" and R == 1:
        lines = WINDOW_RESHAPE_ROUTES["read"]
        route = "read"
    o = f"{R}, {C}" if route == "read" else "16, 64"
    text = WINDOW_RESHAPE_KERNEL.format(h=h, w=w, r0=r0, c0=c0, R=R, C=C, o=o,
                                        body="\n".join(" " * 8 + ln for ln in lines))
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    case = (p, inputs_for(p, draw(st.integers(0, 2**16))), {"r": draw(st.integers(0, 16 - h))},
            {"r": list(range(17 - h))})
    # (a dynamic row keeps the alignment: the row pitch is 64 FP32 = 256 bytes)
    dense, aligned = h == 1 or w == 64, c0 % 8 == 0
    return (*case, (route, dense, aligned)) if with_shape else case


# ------------------------------------------------------------------ every route a window travels

#: the routes by which a window reaches its consumer (or a copy of it reaches past its source's
#: writes, exits and loops); the coverage test asserts each is drawn
ROUTES = ("call-result", "tuple-element", "callee-write", "view-of-view", "carry", "merge",
          "keyword", "early-exit", "zero-trip", "body-temporaries")

#: what consumes the window: a vector op (alignment, pitch), a col_expand op (identity layout),
#: an in-place write (the write must land in the source), a matmul (a Mat window has no Mat->Mat
#: path), a matmul_acc (Acc windows the MAD garbles), a read after a write to the source (copy
#: placement, hoisting over writes), a loop that may not read the window (hoisting speculation),
#: a loop whose body's temporaries fill Vec (hoisting capacity)
ROUTE_KINDS = {
    "vec": ("call-result", "tuple-element", "view-of-view", "carry", "merge", "keyword"),
    "colx": ("call-result", "tuple-element", "view-of-view", "carry", "merge", "keyword"),
    "write": ("call-result", "tuple-element", "callee-write", "view-of-view", "carry", "merge",
              "keyword"),
    "mat": ("call-result", "tuple-element", "view-of-view", "carry", "merge", "keyword"),
    "acc": ("call-result", "tuple-element", "callee-write", "view-of-view", "carry", "merge",
            "keyword"),
    "stale": ("call-result", "tuple-element", "callee-write", "view-of-view", "carry", "merge",
              "keyword"),
    "hoist": ("early-exit", "zero-trip", "keyword"),
    "capacity": ("body-temporaries",),
}
#: the value steps a chain draws from (besides the issue's routes): an alias, a set_validshape
#: or transpose_view view
_EXTRA_STEPS = {"vec": ("alias", "set_validshape", "transpose_view"),
                "colx": ("alias", "set_validshape", "transpose_view"),
                "write": ("alias", "set_validshape"), "mat": ("alias", "set_validshape"),
                "acc": ("alias", "set_validshape")}
_CHAIN_STEPS = ("call-result", "tuple-element", "view-of-view", "carry", "merge")

ROUTE_KERNEL = """import pypto.language as pl


@pl.program
class Routes:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Tensor[[16, 12], pl.FP32],
               o: pl.Tensor[[64, 64], pl.FP32], p: pl.Tensor[[64, 64], pl.FP32],
               g: pl.Tensor[[1, 64], pl.FP32], a: pl.Tensor[[64, 16], pl.FP16],
               b: pl.Tensor[[16, 64], pl.FP16], bo: pl.Tensor[[64, 64], pl.FP16],{extra}
               flag: pl.Scalar[pl.INDEX], c0: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
               src: pl.Out[pl.Tensor[[{src}], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
{body}
        return out
{callees}"""

_MEM_DT = {"Vec": "FP32", "Mat": "FP16", "Acc": "FP32", "Left": "FP16", "Right": "FP16"}


def _ty(mem: str, r: int, c: int) -> str:
    return f"pl.Tile[[{r}, {c}], pl.{_MEM_DT[mem]}, pl.Mem.{mem}]"


class _RouteBuilder:
    """Builds one route program: ``root`` -> window -> a chain of value steps -> consumer.
    Draws go through hypothesis (``draw``), so failing programs shrink."""

    def __init__(self, draw):
        self.draw = draw
        self.lines: list[str] = []
        self.ind = 0
        self.closers: list[tuple[int, str]] = []
        self.callees: dict[str, str] = {}
        self.tags: set[str] = set()
        self.uid = 0
        self.scalars: dict[str, int] = {"flag": 0, "c0": 0, "n": 0}
        self.domain: dict[str, list[int]] = {}
        self.src_shape = (16, 64)
        self.src_root = "local"  # (which root _vec_root loaded)
        self.pinned = 0  # (tiles :meth:`other` pinned at a MemRef byte offset)
        self.extra_params = ""
        self.capacity = False
        self.forced: str | None = None
        self.spelled = False  # a slice has been spelled by keyword

    # -- draws
    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def pick(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def flip(self) -> bool:
        return self.draw(st.booleans())

    # -- text
    def fresh(self, base: str) -> str:
        self.uid += 1
        return f"{base}{self.uid}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.ind + line)

    def callee(self, name: str, text: str) -> str:
        self.callees.setdefault(name, text)
        return name

    def slice_text(self, src: str, shape: tuple[int, int], off: tuple, valid: str = "") -> str:
        if self.forced is not None and self.forced != "keyword":
            spell = "positional"  # a forced route is the only issue route a program takes
        else:
            spell = self.pick(["positional", "positional", "keyword", "mixed"])
        if self.forced == "keyword" and not self.spelled:
            spell = "keyword"
        self.spelled |= spell != "positional"
        h, w = shape
        r0, c0 = off
        if spell == "positional":
            return f"pl.tile.slice({src}, [{h}, {w}], [{r0}, {c0}]{valid})"
        self.tags.add("keyword")
        if spell == "keyword":
            return f"pl.tile.slice({src}, shape=[{h}, {w}], offset=[{r0}, {c0}]{valid})"
        return f"pl.tile.slice({src}, [{h}, {w}], offset=[{r0}, {c0}]{valid})"

    def other(self, mem: str, r: int, c: int, pinned: bool = False) -> str:
        """A fresh tile of the given type (not a window); ``pinned``: a Vec one at MemRef byte 16."""
        name = self.fresh("fr")
        if mem == "Vec" and pinned:
            # (16 B past a 16 KiB boundary of its own: clear of the root and of each other)
            self.pinned += 1
            self.emit(f"{name}: pl.Tile[[{r}, {c}], pl.FP32, pl.Mem.Vec, pl.MemRef("
                      f"{16384 * self.pinned + 16})] = "
                      f"pl.tile.load(o, [0, 0], [{r}, {c}], target_memory=pl.Mem.Vec)")
        elif mem == "Vec":
            self.emit(f"{name} = pl.tile.load(o, [0, 0], [{r}, {c}], target_memory=pl.Mem.Vec)")
        elif mem == "Mat":
            self.emit(f"{name} = pl.tile.load(bo, [0, 0], [{r}, {c}], target_memory=pl.Mem.Mat)")
        else:
            self.emit(f"{name} = pl.tile.create([{r}, {c}], pl.FP32, target_memory=pl.Mem.Acc)")
        return name

    # -- value steps: (name, mem, r, c) -> (name, mem, r, c)
    def sub_shape(self, kind: str, r: int, c: int) -> tuple[int, int, int, int]:
        """A sub-window (rows, cols, row offset, col offset) of an [r, c] value that the
        consumer of ``kind`` accepts."""
        if kind == "mat":
            w = self.pick([x for x in (16, 32) if x <= c])
            return 16, w, 0, self.pick(range(0, c - w + 1, 8))
        if kind == "acc":
            h = self.pick([x for x in (16, 32) if x <= r])
            w = self.int(1, c)
            return h, w, self.pick(range(0, r - h + 1, 16)), self.int(0, c - w)
        h, w = self.int(1, r), self.int(1, c)
        return h, w, self.int(0, r - h), self.int(0, c - w)

    def step(self, kind: str, route: str, v: tuple, alt) -> tuple:
        name, mem, r, c = v
        T = _ty(mem, r, c)
        self.tags.add(route)
        if route == "alias":
            n = self.fresh("al")
            self.emit(f"{n} = {name}")
            return n, mem, r, c
        if route == "set_validshape":
            n = self.fresh("sv")
            self.emit(f"{n} = pl.tile.set_validshape({name}, [{r}, {c}])")
            return n, mem, r, c
        if route == "transpose_view":
            n = self.fresh("tv")
            self.emit(f"{n} = pl.tile.transpose_view({name})")
            return n, mem, c, r
        if route == "view-of-view":
            h, w, r0, c0 = self.sub_shape(kind, r, c)
            n = self.fresh("vv")
            self.emit(f"{n} = {self.slice_text(name, (h, w), (r0, c0))}")
            return n, mem, h, w
        if route == "call-result":
            form = self.pick(["ident", "nested", "slice", "nested-slice", "slice-shared",
                              "slice-in-return", "slice-handed-on"])
            self.tags.add(f"call-{form}")
            key = f"{mem.lower()}{r}x{c}"
            ident = self.callee(f"id_{key}", f"""
    @pl.function(type=pl.FunctionType.InCore)
    def id_{key}(self, t: {T}) -> {T}:
        return t
""")
            n = self.fresh("cr")
            if form == "ident":
                self.emit(f"{n} = self.{ident}({name})")
                return n, mem, r, c
            if form == "nested":
                nest = self.callee(f"nest_{key}", f"""
    @pl.function(type=pl.FunctionType.InCore)
    def nest_{key}(self, t: {T}) -> {T}:
        u = self.{ident}(t)
        return u
""")
                self.emit(f"{n} = self.{nest}({name})")
                return n, mem, r, c
            if form == "nested-slice":  # f takes a window, g a window of that; f returns g's
                self.tags.add("view-of-view")
                h1, w1, r1, c1 = self.sub_shape(kind, r, c)
                h2, w2, r2, c2 = self.sub_shape(kind, h1, w1)
                inner, outer = self.fresh(f"sub_{key}_"), self.fresh(f"outer_{key}_")
                self.callee(inner, f"""
    @pl.function(type=pl.FunctionType.InCore)
    def {inner}(self, t: {_ty(mem, h1, w1)}) -> {_ty(mem, h2, w2)}:
        s = {self.slice_text("t", (h2, w2), (r2, c2))}
        return s
""")
                self.callee(outer, f"""
    @pl.function(type=pl.FunctionType.InCore)
    def {outer}(self, t: {T}) -> {_ty(mem, h2, w2)}:
        w = {self.slice_text("t", (h1, w1), (r1, c1))}
        u = self.{inner}(w)
        return u
""")
                self.emit(f"{n} = self.{outer}({name})")
                return n, mem, h2, w2
            self.tags.add("view-of-view")
            h, w, r0, c0 = self.sub_shape(kind, r, c)
            fn = self.fresh(f"sub_{key}_")
            # (slice-handed-on: the window is handed back through a set_validshape view or a
            # loop carry of it, not as itself)
            hand = self.pick(["view", "carry"]) if form == "slice-handed-on" else None
            back = {None: "        return s",
                    "view": f"        sv = pl.tile.set_validshape(s, [{h}, {w}])\n        return sv",
                    "carry": "        for i, (c,) in pl.range(1, init_values=(s,)):\n"
                             "            cs = pl.yield_(c)\n        return cs"}[hand]
            self.callee(fn, f"""
    @pl.function(type=pl.FunctionType.InCore)
    def {fn}(self, t: {T}) -> {_ty(mem, h, w)}:
        s = {self.slice_text("t", (h, w), (r0, c0))}
{back}
""")
            if form == "slice-in-return":  # a function returning the call itself
                wrap = self.fresh(f"wrap_{key}_")
                fn = self.callee(wrap, f"""
    @pl.function(type=pl.FunctionType.InCore)
    def {wrap}(self, t: {T}) -> {_ty(mem, h, w)}:
        return self.{fn}(t)
""")
            if form == "slice-shared":
                # the function is called on a fresh tile too (one at a MemRef byte offset, or
                # not): its calls disagree on where its parameter lies (ir.frames)
                pinned = self.flip()
                if pinned:
                    self.tags.add("call-slice-pinned")
                cs = self.fresh("cs")
                self.emit(f"{cs} = self.{fn}({self.other(mem, r, c, pinned)})")
                if mem == "Vec" and self.flip():  # (its result read too, or not)
                    self.tags.add("call-slice-shared-read")
                    self.emit(f"{self.fresh('ys')} = pl.tile.muls({cs}, 2.0)")
            self.emit(f"{n} = self.{fn}({name})")
            return n, mem, h, w
        if route == "tuple-element":
            other = self.other(mem, r, c)
            first = self.flip()
            fn = self.fresh(f"pair_{mem.lower()}{r}x{c}_")
            self.callee(fn, f"""
    @pl.function(type=pl.FunctionType.InCore)
    def {fn}(self, t: {T}, u: {T}) -> tuple[{T}, {T}]:
        return {'t, u' if first else 'u, t'}
""")
            pr, n = self.fresh("pr"), self.fresh("te")
            self.emit(f"{pr} = self.{fn}({name}, {other})")
            self.emit(f"{n} = {pr}[{0 if first else 1}]")
            return n, mem, r, c
        if route == "carry":
            i, cv, res = self.fresh("i"), self.fresh("cv"), self.fresh("cres")
            trips = self.int(1, 2)
            back = alt is not None and (r, c) == alt[1] and self.flip()
            self.emit(f"for {i}, ({cv},) in pl.range({trips}, init_values=({name},)):")
            if self.flip():  # the rest of the chain and the consumer run in the body
                self.tags.add("carry-inside")
                self.ind += 1
                self.closers.append((self.ind, f"{res} = pl.yield_({cv})"))
                return cv, mem, r, c
            if back:  # the next trip's value is another window of the root (the back edge)
                self.tags.add("carry-back-edge")
                self.emit(f"    {res}w = {alt[0]()}")
                self.emit(f"    {res} = pl.yield_({res}w)")
            else:
                self.emit(f"    {res} = pl.yield_({cv})")
            return res, mem, r, c
        if route == "merge":
            m = self.fresh("mg")
            self.domain["flag"] = [0, 1]
            self.scalars["flag"] = self.int(0, 1)
            swap = self.flip()
            self.emit("if flag > 0:")
            self.ind += 1
            if swap:
                self._alt_arm(m, mem, r, c, alt)
            else:
                self.emit(f"{m} = pl.yield_({name})")
            self.ind -= 1
            self.emit("else:")
            self.ind += 1
            if swap:
                self.emit(f"{m} = pl.yield_({name})")
            else:
                self._alt_arm(m, mem, r, c, alt)
            self.ind -= 1
            return m, mem, r, c
        raise AssertionError(route)

    def _alt_arm(self, m: str, mem: str, r: int, c: int, alt) -> None:
        if alt is not None and (r, c) == alt[1] and self.flip():
            self.tags.add("merge-two-windows")
            w = self.fresh("aw")
            self.emit(f"{w} = {alt[0]()}")
            self.emit(f"{m} = pl.yield_({w})")
        else:
            self.emit(f"{m} = pl.yield_({self.other(mem, r, c)})")

    def close(self) -> None:
        while self.closers:
            ind, line = self.closers.pop()
            self.ind = ind
            self.emit(line)
            self.ind = ind - 1
        self.ind = 0

    def chain(self, kind: str, route: str | None, v: tuple, alt) -> tuple:
        pool = [s for s in _CHAIN_STEPS if s in ROUTE_KINDS[kind] and self.forced is None] + \
            list(_EXTRA_STEPS.get(kind, ()))
        steps = [self.pick(pool) for _ in range(self.int(0, 2))]
        if route in _CHAIN_STEPS:
            steps.insert(self.int(0, len(steps)), route)
        for s in steps:
            v = self.step(kind, s, v, alt)
        return v


def _vec_root(b: _RouteBuilder) -> tuple[str, int, int]:
    """The Vec tile windows are cut from: [16, 64] (256-byte rows), [16, 12] (48-byte rows),
    or [16, 64] pinned at MemRef byte 16."""
    which = b.src_root = b.pick(["local", "local", "t12", "pinned"])
    b.tags.add(f"root-{which}")
    if which == "t12":
        b.emit("root = pl.tile.load(y, [0, 0], [16, 12], target_memory=pl.Mem.Vec)")
        b.src_shape = (16, 12)
        return "root", 16, 12
    if which == "pinned":
        b.emit("root: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec, pl.MemRef(16)] = pl.tile.load("
               "x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)")
        return "root", 16, 64
    b.emit("root = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)")
    return "root", 16, 64


def _vec_window(b: _RouteBuilder, R: int, C: int, valid_ok: bool,
                whole_ok: bool = True) -> tuple[tuple, object]:
    if whole_ok and b.src_root != "pinned" and b.int(0, 7) == 0:
        # the root tile itself, no window of it: what a callee takes of it lies at the root's
        # own pitch (a pinned root would be read unaligned as a whole: no program to optimize)
        b.tags.add("whole-root")
        return ("root", "Vec", R, C), (lambda: b.slice_text("root", (R, C), (0, 0)), (R, C))
    h = b.pick([x for x in (1, 2, 4, 8, 16) if x <= R])
    w = b.pick([x for x in (1, 4, 8, 12, 16, 32) if x <= C])
    r0 = b.int(0, R - h)
    c0 = b.pick(range(0, C - w + 1, 8)) if b.flip() else b.int(0, C - w)
    valid = ""
    if valid_ok and b.int(0, 3) == 0:
        b.tags.add("valid_shape")
        valid = f", valid_shape=[{h}, {b.int(1, w)}]"
    name = b.fresh("win")
    b.emit(f"{name} = {b.slice_text('root', (h, w), (r0, c0), valid)}")

    def alt() -> str:
        return b.slice_text("root", (h, w), (b.int(0, R - h), b.int(0, C - w)))
    return (name, "Vec", h, w), (alt, (h, w))


def _consume_vec(b: _RouteBuilder, kind: str, v: tuple) -> None:
    name, mem, r, c = v
    # unforced, a third of the reads happen in a callee the value is passed to
    in_callee = kind in ("vec", "colx") and b.forced is None and b.int(0, 2) == 0
    if kind == "vec":
        y = b.fresh("y")
        if in_callee:
            _callee_use(b, "muls", "t, 2.0", "t: " + _ty("Vec", r, c), _ty("Vec", r, c), y, name)
        else:
            b.emit(f"{y} = pl.tile.muls({name}, 2.0)")
        b.emit(f"pl.store({y}, [0, 0], out)")
    elif kind == "colx":
        gv, ce = b.fresh("gv"), b.fresh("ce")
        b.emit(f"{gv} = pl.tile.load(g, [0, 0], [1, {c}], target_memory=pl.Mem.Vec)")
        op = b.pick(['col_expand_mul', 'col_expand_add', 'col_expand'])
        if in_callee:
            _callee_use(b, op, "t, gg", f"t: {_ty('Vec', r, c)}, gg: {_ty('Vec', 1, c)}",
                        _ty("Vec", r, c), ce, f"{name}, {gv}")
        else:
            b.emit(f"{ce} = pl.tile.{op}({name}, {gv})")
        b.emit(f"pl.store({ce}, [0, 0], out)")
    else:  # write: an in-place write through the value (in the kernel or in a callee)
        how = "callee" if b.forced == "callee-write" else b.pick(
            ["assemble", "fillpad"] + (["callee"] if b.forced is None else []))
        pt = b.fresh("pt")
        b.emit(f"{pt} = pl.tile.load(p, [0, 0], [{r}, {c}], target_memory=pl.Mem.Vec)")
        if how == "assemble":
            b.emit(f"pl.tile.assemble({name}, {pt}, [0, 0])")
        elif how == "fillpad":
            vs = b.fresh("wv")
            b.emit(f"{vs} = pl.tile.set_validshape({name}, [{max(1, r // 2)}, {c if r > 1 else max(1, c // 2)}])")
            b.emit(f"pl.tile.fillpad_inplace({vs}, pl.PadValue.zero)")
        else:
            b.tags.add("callee-write")
            T = _ty("Vec", r, c)
            full = b.flip()
            fn = b.fresh(f"wr_{r}x{c}_")
            inner = ("s = t" if full else
                     f"s = {b.slice_text('t', (r, c), (0, 0))}")
            b.callee(fn, f"""
    @pl.function(type=pl.FunctionType.InCore)
    def {fn}(self, t: {T}, u: {T}) -> {T}:
        {inner}
        pl.tile.assemble(s, u, [0, 0])
        return t
""")
            b.emit(f"{b.fresh('f')} = self.{fn}({name}, {pt})")


def _mat_case(b: _RouteBuilder, route: str | None) -> None:
    """A [16, w] window of the Mat tile ``root`` reaching a matmul as its right operand."""
    b.emit("a_mat = pl.tile.load(a, [0, 0], [64, 16], target_memory=pl.Mem.Mat)")
    b.emit("root = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat)")
    b.emit("lt = pl.tile.extract(a_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)")
    w = b.pick([16, 32])
    name = b.fresh("win")
    b.emit(f"{name} = {b.slice_text('root', (16, w), (0, b.pick(range(0, 64 - w + 1, 8))))}")

    def alt() -> str:
        return b.slice_text("root", (16, w), (0, b.pick(range(0, 64 - w + 1, 16))))
    v = b.chain("mat", route, (name, "Mat", 16, w), (alt, (16, w)))
    o = b.fresh("o")
    if route is None and b.int(0, 2) == 0:  # the matmul in a callee the window is passed to
        _callee_use(b, "matmul", "l, t", f"l: {_ty('Left', 16, 16)}, t: {_ty('Mat', 16, v[3])}",
                    f"pl.Tile[[16, {v[3]}], pl.FP32, pl.Mem.Acc]", o, f"lt, {v[0]}")
    else:
        b.emit(f"{o} = pl.tile.matmul(lt, {v[0]})")
    b.emit(f"pl.store({o}, [0, 0], out)")
    b.close()


def _acc_case(b: _RouteBuilder, route: str | None) -> None:
    """An [r, c] window of the [32, 64] Acc tile ``root`` accumulated into by matmul_acc, in the
    kernel or in a callee (into its parameter, or a full-extent slice of it); ``root`` is stored."""
    b.src_shape = (32, 64)
    b.emit("a_mat = pl.tile.load(a, [0, 0], [64, 16], target_memory=pl.Mem.Mat)")
    b.emit("b_mat = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat)")
    b.emit("a_all = pl.tile.extract(a_mat, 0, 0, shape=[32, 16], target_memory=pl.Mem.Left)")
    b.emit("b_all = pl.tile.extract(b_mat, 0, 0, shape=[16, 64], target_memory=pl.Mem.Right)")
    b.emit("root = pl.tile.matmul(a_all, b_all)")
    r = b.pick([16, 32])
    c = b.pick([8, 16, 24, 32, 48, 64])
    name = b.fresh("win")
    b.emit(f"{name} = {b.slice_text('root', (r, c), (b.pick(range(0, 32 - r + 1, 16)), b.int(0, 64 - c)))}")

    def alt() -> str:
        return b.slice_text("root", (r, c), (b.pick(range(0, 32 - r + 1, 16)), b.int(0, 64 - c)))
    v = b.chain("acc", route if route != "callee-write" else None, (name, "Acc", r, c), (alt, (r, c)))
    vn, _, vr, vc = v
    aw, bw = b.fresh("aw"), b.fresh("bw")
    b.emit(f"{aw} = pl.tile.extract(a_mat, 0, 0, shape=[{vr}, 16], target_memory=pl.Mem.Left)")
    b.emit(f"{bw} = pl.tile.extract(b_mat, 0, 0, shape=[16, {vc}], target_memory=pl.Mem.Right)")
    if route == "callee-write" or (route is None and b.int(0, 2) == 0):
        b.tags.add("callee-write")
        T = _ty("Acc", vr, vc)
        fn = b.fresh(f"accin_{vr}x{vc}_")
        inner = "s = t" if b.flip() else f"s = {b.slice_text('t', (vr, vc), (0, 0))}"
        b.callee(fn, f"""
    @pl.function(type=pl.FunctionType.InCore)
    def {fn}(self, t: {T}, lt: {_ty("Left", vr, 16)}, rt: {_ty("Right", 16, vc)}) -> {T}:
        {inner}
        s2 = pl.tile.matmul_acc(s, lt, rt)
        return s2
""")
        b.emit(f"{b.fresh('f')} = self.{fn}({vn}, {aw}, {bw})")
    else:
        b.emit(f"{b.fresh('w2')} = pl.tile.matmul_acc({vn}, {aw}, {bw})")
    b.close()
    b.emit("pl.store(root, [0, 0], src)")


_STALE_WRITES = ("direct", "call-result", "tuple-element", "callee-write", "carry", "merge",
                 "view-of-view", "callee-aliased")


def _stale_case(b: _RouteBuilder, route: str | None) -> None:
    """A window of ``root`` read after ``root`` is overwritten — directly, through a call
    result, a tuple element, a callee's write, a loop carry, an if-merge or a view of a view —
    in straight-line code or in a loop (the window sliced before it or in it; written before or
    after the read): a copy placed before the write, or hoisted over it, reads stale data."""
    b.emit("root = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)")
    b.emit("pfull = pl.tile.load(p, [0, 0], [16, 64], target_memory=pl.Mem.Vec)")
    h, w = b.pick([1, 4, 16]), b.pick([1, 8, 16])
    r0 = b.int(0, 16 - h)
    c0 = b.pick(range(0, 64 - w + 1, 8)) if b.flip() else b.int(0, 64 - w)
    z = b.fresh("z")
    b.emit(f"{z} = pl.tile.load(o, [0, 0], [{h}, {w}], target_memory=pl.Mem.Vec)")
    how = route if route in _STALE_WRITES else "direct" if route else b.pick(_STALE_WRITES)
    b.tags.add(how)
    write: list[str] = []
    V64 = _ty("Vec", 16, 64)
    if how == "direct":
        write = ["pl.tile.assemble(root, pfull, [0, 0])"]
    elif how == "call-result":
        form = b.pick(["ident", "nested"])
        b.tags.add(f"call-{form}")
        b.callee("id_vec16x64", f"""
    @pl.function(type=pl.FunctionType.InCore)
    def id_vec16x64(self, t: {V64}) -> {V64}:
        return t
""")
        fn = "id_vec16x64"
        if form == "nested":
            fn = b.callee("nest_vec16x64", f"""
    @pl.function(type=pl.FunctionType.InCore)
    def nest_vec16x64(self, t: {V64}) -> {V64}:
        u = self.id_vec16x64(t)
        return u
""")
        b.emit(f"wr = self.{fn}(root)")
        write = ["pl.tile.assemble(wr, pfull, [0, 0])"]
    elif how == "tuple-element":
        first = b.flip()
        b.callee("pair_vec16x64", f"""
    @pl.function(type=pl.FunctionType.InCore)
    def pair_vec16x64(self, t: {V64}, u: {V64}) -> tuple[{V64}, {V64}]:
        return t, u
""")
        b.emit(f"pr = self.pair_vec16x64({'root, pfull' if first else 'pfull, root'})")
        b.emit(f"wr = pr[{0 if first else 1}]")
        write = ["pl.tile.assemble(wr, pfull2, [0, 0])"]
        b.emit("pfull2 = pl.tile.load(p, [0, 0], [16, 64], target_memory=pl.Mem.Vec)")
    elif how == "callee-write":
        sub = b.flip()
        inner = "s = t" if not sub else f"s = {b.slice_text('t', (16, 32), (0, b.pick([0, 32])))}"
        b.callee("fill_vec16x64", f"""
    @pl.function(type=pl.FunctionType.InCore)
    def fill_vec16x64(self, t: {V64}, u: {V64}) -> {V64}:
        {inner}
        us = pl.tile.slice(u, [{16 if not sub else 16}, {64 if not sub else 32}], [0, 0])
        pl.tile.assemble(s, us, [0, 0])
        return t
""")
        write = ["fw = self.fill_vec16x64(root, pfull)"]
    elif how == "callee-aliased":
        # a function given root twice reads a window of one parameter after writing the other
        # (the read goes out too): its parameters share storage
        win_t = b.slice_text("t", (h, w), (r0, c0))
        b.callee("aliased_vec16x64", f"""
    @pl.function(type=pl.FunctionType.InCore)
    def aliased_vec16x64(self, t: {V64}, u: {V64}, pf: {V64}) -> {_ty("Vec", h, w)}:
        s = {win_t}
        pl.tile.assemble(u, pf, [0, 0])
        y = pl.tile.muls(s, 1.0)
        return y
""")
        write = ["ya = self.aliased_vec16x64(root, root, pfull)", "pl.store(ya, [32, 0], out)"]
    elif how == "carry":
        write = ["for j, (lc,) in pl.range(1, init_values=(root,)):",
                 "    pl.tile.assemble(lc, pfull, [0, 0])", "    lr = pl.yield_(lc)"]
    elif how == "merge":
        b.domain["flag"] = [0, 1]
        b.scalars["flag"] = b.int(0, 1)
        write = ["if flag > 0:", "    m = pl.yield_(root)", "else:",
                 "    fr = pl.tile.load(o, [0, 0], [16, 64], target_memory=pl.Mem.Vec)",
                 "    m = pl.yield_(fr)", "pl.tile.assemble(m, pfull, [0, 0])"]
    else:  # view-of-view: a window of a window of root covering the read window's columns
        b.tags.add("view-of-view")
        q0 = 0 if c0 + w <= 32 else 32
        write = [f"q1 = {b.slice_text('root', (16, 64), (0, 0))}",
                 f"q2 = {b.slice_text('q1', (16, 32), (0, q0))}",
                 "ps = pl.tile.load(p, [0, 0], [16, 32], target_memory=pl.Mem.Vec)",
                 "pl.tile.assemble(q2, ps, [0, 0])"]
    win = f"win = {b.slice_text('root', (h, w), (r0, c0))}"
    if not b.flip():  # straight line: the window sliced before the write, read after it
        b.tags.add("stale-straight")
        b.emit(win)
        val = _stale_handoff(b, route, h, w)
        for ln in write:
            b.emit(ln)
        b.emit(f"y = pl.tile.add({z}, {val})")
        b.emit("pl.store(y, [0, 0], out)")
    else:
        b.tags.add("stale-loop")
        outside, before = b.flip(), b.flip()
        if outside:
            b.emit(win)
        b.emit(f"for i, (acc,) in pl.range({b.int(1, 3)}, init_values=({z},)):")
        b.ind += 1
        if not outside:
            b.emit(win)
        if before:
            for ln in write:
                b.emit(ln)
        b.emit("nxt = pl.tile.add(acc, win)")
        if not before:
            for ln in write:
                b.emit(ln)
        b.emit("res = pl.yield_(nxt)")
        b.ind -= 1
        b.emit("pl.store(res, [0, 0], out)")
    b.emit("pl.store(root, [0, 0], src)")


def _stale_handoff(b: _RouteBuilder, route: str | None, h: int, w: int) -> str:
    """Hand the window ``win`` on as a value before the write — a one-trip loop's carry, an
    if-merge with a fresh tile, a call returning its parameter, a tuple element of a call's
    result, a ``set_validshape`` view — or not; the name the read
    after the write uses.  A copy made at the hand-off is a snapshot from before the write.
    Only the forced route's own kind of hand-off (any when unforced; a view, which is no route
    of its own, for the other routes)."""
    forms = {None: [None, "carry", "merge", "call", "tuple", "view"],
             "carry": [None, "carry"], "merge": [None, "merge"], "call-result": [None, "call"],
             "tuple-element": [None, "tuple"]}.get(route, [None, "view"])
    form = b.pick(forms)
    if form is None:
        return "win"
    b.tags.add(f"stale-handoff-{form}")
    if form == "view":
        b.emit(f"wsv = pl.tile.set_validshape(win, [{h}, {w}])")
        return "wsv"
    if form == "carry":
        b.emit("for k, (wc,) in pl.range(1, init_values=(win,)):")
        b.emit("    wv = pl.yield_(wc)")
        return "wv"
    if form == "merge":
        b.domain["flag"] = [0, 1]
        b.scalars.setdefault("flag", b.int(0, 1))
        for ln in ("if flag > 0:", "    wm = pl.yield_(win)", "else:",
                   f"    wf = pl.tile.load(o, [0, 0], [{h}, {w}], target_memory=pl.Mem.Vec)",
                   "    wm = pl.yield_(wf)"):
            b.emit(ln)
        return "wm"
    ty = _ty("Vec", h, w)
    if form == "tuple":
        fn = b.callee(f"pair_vec{h}x{w}", f"""
    @pl.function(type=pl.FunctionType.InCore)
    def pair_vec{h}x{w}(self, t: {ty}, u: {ty}) -> tuple[{ty}, {ty}]:
        return t, u
""")
        b.emit(f"wp = self.{fn}(win, win)")
        b.emit("wt = wp[0]")
        return "wt"
    fn = b.callee(f"id_vec{h}x{w}", f"""
    @pl.function(type=pl.FunctionType.InCore)
    def id_vec{h}x{w}(self, t: {ty}) -> {ty}:
        return t
""")
    b.emit(f"wi = self.{fn}(win)")
    return "wi"


def _hoist_case(b: _RouteBuilder, route: str | None) -> None:
    """A [16, 8] window of ``root`` at column ``c0`` (0..60: out of bounds past 56) read in a
    loop only when the program does read it: after an early return taken for c0 > 56 (before the
    loop or in its body), inside a loop that runs ``n`` times (0 whenever c0 > 56: an inner or
    outer ``pl.range`` or a ``pl.while_``), or under ``if c0 < 57``.  A copy hoisted above the exit,
    out of the zero-trip loop or above the guard reads outside the tile."""
    b.emit("root = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)")
    b.emit("z = pl.tile.load(o, [0, 0], [16, 8], target_memory=pl.Mem.Vec)")
    c0 = b.int(57, 60) if b.flip() else b.int(0, 56)  # half the programs never read the window
    b.scalars["c0"] = c0
    b.scalars["n"] = 0 if c0 > 56 else b.int(0, 2)
    form = route if route in ("early-exit", "zero-trip") else "guarded" if route else \
        b.pick(["early-exit", "zero-trip", "guarded"])
    b.tags.add(form)
    win = f"w = {b.slice_text('root', (16, 8), (0, 'c0'))}"
    trips = b.int(1, 3)
    if form == "early-exit":
        where = b.pick(["before-loop", "in-loop"])
        b.tags.add(f"early-exit-{where}")
        if where == "before-loop":
            b.emit("if c0 > 56:")
            b.emit("    o2 = pl.store(z, [0, 0], out)")
            b.emit("    return o2")
        b.emit(f"for i, (acc,) in pl.range({trips}, init_values=(z,)):")
        if where == "in-loop":
            b.emit("    if c0 > 56:")
            b.emit("        o2 = pl.store(acc, [0, 0], out)")
            b.emit("        return o2")
        b.emit("    " + win)
        b.emit("    nxt = pl.tile.add(acc, w)")
        b.emit("    res = pl.yield_(nxt)")
    elif form == "zero-trip":
        where = b.pick(["inner", "outer", "while"])
        b.tags.add(f"zero-trip-{where}")
        if where == "inner":
            b.emit(f"for i, (acc,) in pl.range({trips}, init_values=(z,)):")
            b.emit("    for j, (acc2,) in pl.range(n, init_values=(acc,)):")
            b.emit("        " + win)
            b.emit("        nxt = pl.tile.add(acc2, w)")
            b.emit("        r2 = pl.yield_(nxt)")
            b.emit("    res = pl.yield_(r2)")
        elif where == "outer":
            b.emit("for i, (acc,) in pl.range(n, init_values=(z,)):")
            b.emit("    " + win)
            b.emit("    nxt = pl.tile.add(acc, w)")
            b.emit("    res = pl.yield_(nxt)")
        else:
            b.emit("k0: pl.Scalar[pl.INDEX] = 0")
            b.emit("for (k1, acc) in pl.while_(init_values=(k0, z)):")
            b.emit("    pl.cond(k1 < n)")
            b.emit("    " + win)
            b.emit("    nxt = pl.tile.add(acc, w)")
            b.emit("    k2 = k1 + 1")
            b.emit("    k3, res = pl.yield_(k2, nxt)")
    else:
        b.emit(f"for i, (acc,) in pl.range({trips}, init_values=(z,)):")
        b.emit("    if c0 < 57:")
        b.emit("        " + win)
        b.emit("        nxt = pl.tile.add(acc, w)")
        b.emit("        gy = pl.yield_(nxt)")
        b.emit("    else:")
        b.emit("        gy = pl.yield_(acc)")
        b.emit("    res = pl.yield_(gy)")
    b.emit("pl.store(res, [0, 0], out)")


def _capacity_case(b: _RouteBuilder) -> None:
    """A loop reading a loop-invariant [16, 8] window of ``root`` whose body makes a
    [rows, 64] FP32 temporary: with ``root`` stored after the loop, the live Vec bytes peak at
    5120 + 2 * rows * 256 (exactly 192 KiB for rows = 374) — a copy hoisted out of the loop
    adds its 512 bytes to every trip.  The body is plain, or the temporary is made in an inner
    loop, an ``if`` arm or a function the body calls.  Judged with on-chip capacity."""
    b.capacity = True
    b.tags.add("body-temporaries")
    rows = 374 if b.flip() else b.int(368, 373)
    b.extra_params = f"\n               bigt: pl.Tensor[[{rows}, 64], pl.FP32],"
    b.emit("root = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)")
    b.emit("z = pl.tile.load(o, [0, 0], [16, 8], target_memory=pl.Mem.Vec)")
    b.emit(f"big = pl.tile.load(bigt, [0, 0], [{rows}, 64], target_memory=pl.Mem.Vec)")
    c0 = b.pick(range(0, 57, 8)) if b.int(0, 3) == 0 else b.int(0, 56)
    win = f"w = {b.slice_text('root', (16, 8), (0, c0))}"
    temp = ["tb = pl.tile.muls(big, 2.0)", "tbs = pl.tile.slice(tb, [16, 8], [0, 0])"]
    form = b.pick(["plain", "inner-loop", "if-arm", "callee"])
    b.tags.add(f"temporaries-{form}")
    b.emit(f"for i, (acc,) in pl.range({b.int(2, 4)}, init_values=(z,)):")
    b.emit("    " + win)
    b.emit("    nxt = pl.tile.add(acc, w)")
    if form == "plain":
        for ln in temp:
            b.emit("    " + ln)
        b.emit("    nxt2 = pl.tile.add(nxt, tbs)")
        b.emit("    res = pl.yield_(nxt2)")
    elif form == "callee":  # the temporary lives in a function the body calls
        big_ty, small_ty = _ty("Vec", rows, 64), _ty("Vec", 16, 8)
        b.callee(f"heavy{rows}", f"""
    @pl.function(type=pl.FunctionType.InCore)
    def heavy{rows}(self, t: {big_ty}, a: {small_ty}) -> {small_ty}:
        tb = pl.tile.muls(t, 2.0)
        tbs = pl.tile.slice(tb, [16, 8], [0, 0])
        nxt2 = pl.tile.add(a, tbs)
        return nxt2
""")
        b.emit(f"    nxt2 = self.heavy{rows}(big, nxt)")
        b.emit("    res = pl.yield_(nxt2)")
    elif form == "inner-loop":
        b.emit("    for j, (a2,) in pl.range(2, init_values=(nxt,)):")
        for ln in temp:
            b.emit("        " + ln)
        b.emit("        nxt2 = pl.tile.add(a2, tbs)")
        b.emit("        r2 = pl.yield_(nxt2)")
        b.emit("    res = pl.yield_(r2)")
    else:
        b.emit("    if i > 0:")
        for ln in temp:
            b.emit("        " + ln)
        b.emit("        nxt2 = pl.tile.add(nxt, tbs)")
        b.emit("        gy = pl.yield_(nxt2)")
        b.emit("    else:")
        b.emit("        gy = pl.yield_(nxt)")
        b.emit("    res = pl.yield_(gy)")
    b.emit("pl.store(res, [0, 0], out)")
    if b.int(0, 3):
        b.emit("pl.store(root, [0, 0], src)")


def _callee_use(b: _RouteBuilder, op: str, args: str, params: str, ret: str, result: str,
                actual: str) -> None:
    """``result = op(...)`` computed by a program function the value is passed to."""
    b.tags.add("callee-use")
    fn = b.fresh(f"use_{op}_")
    b.callee(fn, f"""
    @pl.function(type=pl.FunctionType.InCore)
    def {fn}(self, {params}) -> {ret}:
        r = pl.tile.{op}({args})
        return r
""")
    b.emit(f"{result} = self.{fn}({actual})")


def _keyword_calls(b: _RouteBuilder) -> None:
    """Spell some calls of the program's functions in the kernel with keyword arguments
    (``self.fill(u=p, t=w)``, in reverse order): each argument is the parameter of its name."""
    params: dict[str, list[str]] = {}
    for name, text in b.callees.items():
        fn = next(n for n in ast.walk(ast.parse(textwrap.dedent(text)))
                  if isinstance(n, ast.FunctionDef))
        params[name] = [a.arg for a in fn.args.args[1:]]

    def spell(m: re.Match) -> str:
        names, args = params.get(m.group(1)), [a.strip() for a in m.group(2).split(",")]
        if names is None or len(names) != len(args) or not b.flip():
            return m.group(0)
        b.tags.add("keyword-call")
        return f"self.{m.group(1)}({', '.join(f'{n}={a}' for n, a in reversed(list(zip(names, args))))})"

    b.lines = [re.sub(r"self\.(\w+)\(([\w, ]+)\)", spell, ln) for ln in b.lines]


@st.composite
def route_cases(draw, route: str | None = None, with_tags: bool = False, kind: str | None = None,
                with_text: bool = False):
    """A program routing one window to its consumer by ``route`` (any of :data:`ROUTES`; None:
    any), plus up to two more value steps (call results, tuple elements, views of views, carries
    — the chain continuing in the loop body or after it, the loop yielding the window or another
    window of the same tile — if-merges with a fresh tile or another window, aliases,
    set_validshape, transpose_view), the slices spelled positionally, by keyword or mixed.  With
    ``route`` given, that is the only one of :data:`ROUTES` the program takes (the other steps
    are aliases and views; slices are spelled positionally unless the route is ``keyword``), so
    a failure names the route.
    Returns ``(program, inputs, scalars, domain, capacity)``; ``domain`` lists other values of
    the scalars the program branches on, ``capacity`` whether on-chip capacity is judged;
    ``kind`` fixes the consumer (a key of :data:`ROUTE_KINDS`); ``with_tags`` also returns the
    set of route tags drawn (coverage test), ``with_text`` then the DSL text as written (the
    printer respells keyword slices positionally)."""
    from simkit import inputs_for

    b = _RouteBuilder(draw)
    kinds = [k for k, rs in ROUTE_KINDS.items() if route is None or route in rs]
    kind = kind or b.pick(kinds)
    b.forced = route
    b.tags.add(f"kind-{kind}")
    if route is not None:
        b.tags.add(route)
    if kind in ("vec", "colx", "write"):
        _, R, C = _vec_root(b)
        v, alt = _vec_window(b, R, C, valid_ok=kind != "write", whole_ok=route != "keyword")
        v = b.chain(kind, route if route != "callee-write" else None, v, alt)
        _consume_vec(b, kind, v)
        b.close()
        if kind != "vec":
            b.emit("pl.store(root, [0, 0], src)")
    elif kind == "mat":
        _mat_case(b, route)
    elif kind == "acc":
        _acc_case(b, route)
    elif kind == "stale":
        _stale_case(b, route)
    elif kind == "hoist":
        _hoist_case(b, route)
    else:
        _capacity_case(b)
    if route in (None, "keyword"):
        _keyword_calls(b)
    body = "\n".join(" " * 8 + ln for ln in b.lines)
    text = ROUTE_KERNEL.format(extra=b.extra_params, src=f"{b.src_shape[0]}, {b.src_shape[1]}",
                               body=body, callees="".join(b.callees.values()))
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    ins = {k: v + (v == 0) * 9 for k, v in inputs_for(p, draw(st.integers(0, 2**16))).items()}
    case = (p, ins, dict(b.scalars), dict(b.domain), b.capacity)
    if with_tags:
        case = (*case, frozenset(b.tags))
    return (*case, text) if with_text else case
