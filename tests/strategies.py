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

Issue 15's boundary shapes have strategies of their own: :func:`acc_reshape_cases` (a reshape of
an Acc tile, to its own shape or another, accumulated into, read or unused) and
:func:`mat_call_cases` (a Mat window passed to a program function that uses it as a matmul
operand, and the accepted neighbours); each returns ``(program, inputs, scalars, domain)`` for
the soundness judge.
"""

from __future__ import annotations

from typing import Sequence, TypeVar

from hypothesis import strategies as st

import egraph_tiles as et
from egraph_tiles.dsl.generate import ROW_OFF_MAX, generate_program_text
from egraph_tiles.ir.stmts import Program

__all__ = ["ROW_OFF_MAX", "acc_reshape_cases", "mat_call_cases", "program_texts", "programs",
           "window_reshape_cases"]

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


# ------------------------------------------------------------------ issue 15: Acc reshapes, Mat callees

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
