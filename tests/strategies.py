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
"""

from __future__ import annotations

from typing import Sequence, TypeVar

from hypothesis import strategies as st

import egraph_tiles as et
from egraph_tiles.dsl.generate import ROW_OFF_MAX, generate_program_text
from egraph_tiles.ir.stmts import Program

__all__ = ["ROW_OFF_MAX", "program_texts", "programs"]

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
