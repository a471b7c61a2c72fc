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
