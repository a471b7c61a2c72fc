"""Helpers for tests written as DSL text: the one-function program around a kernel body, the
ops a program calls, the message with which the optimizer rejects one."""

from __future__ import annotations

import textwrap

import pytest

import egraph_tiles as et
from egraph_tiles.ir.exprs import Call
from egraph_tiles.ir.stmts import AssignStmt, EvalStmt, walk


def kernel(params: str, body: str = "", ret: str | None = None, *, ftype: str = "InCore",
           imports: str = "", more: str = "", bare: bool = False) -> str:
    """DSL text of ``class K`` with one function ``kernel(self, params) -> ret`` of type
    ``ftype`` whose statements are ``body`` (dedented, then indented into the function).
    ``imports``: import lines after ``import pypto.language as pl``; ``more``: text after the
    function (another function of ``K``).  The body's first line is line 7 of the text, plus one
    per line of ``imports``; ``bare``: no import lines, the program starts at line 1 (the body
    at line 5)."""
    head = "" if bare else f"import pypto.language as pl\n{imports}\n"
    arrow = f" -> {ret}" if ret else ""
    return (head + "@pl.program\n"
            "class K:\n"
            f"    @pl.function(type=pl.FunctionType.{ftype})\n"
            f"    def kernel(self, {params}){arrow}:\n"
            + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n" + more)


def call_ops(program) -> list[str]:
    """The op of every call statement of the program's first function (assigned or bare), in
    order, nested bodies included."""
    return [s.value.op if isinstance(s, AssignStmt) else s.call.op
            for s in walk(program.functions[0].body)
            if (isinstance(s, AssignStmt) and isinstance(s.value, Call)) or isinstance(s, EvalStmt)]


def rejection(program) -> str:
    """The message of the ValueError with which ``egraph_tiles.optimize`` rejects ``program``."""
    with pytest.raises(ValueError) as info:
        et.optimize(program)
    return str(info.value)


def extended(text: str, *lines: str) -> str:
    """``text``, a kernel from :func:`kernel` (ending in its body), with ``lines`` appended as
    further statements of the function."""
    return text + "".join(" " * 8 + ln + "\n" for ln in lines)


#: the parameters of :func:`vec_program`'s kernel unless given
VEC_PARAMS = "x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]"


def vec_program(*lines: str, params: str = VEC_PARAMS) -> et.ir.Program:
    """The kernel the write-back tests share (``pld`` importable): ``v``, all of the 16 x 16
    FP32 tensor x in Vec, then ``lines`` (from line 9), then v stored to ``out``."""
    return et.parse_program(kernel(params, "\n".join((
        "v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)", *lines,
        "out = pl.store(v, [0, 0], out)", "return out")), "pl.Tensor[[16, 16], pl.FP32]",
        imports="import pypto.language.distributed as pld\n"))
