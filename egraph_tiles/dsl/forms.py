"""The forms PyPTO's printer emits, as tables the reader consults.

Extending the reader to a new spelling is usually one line here.
"""

from __future__ import annotations

import ast

from ..ir.stmts import LoopKind

#: inputs larger than this are rejected before parsing (a kernel is a few KB)
MAX_INPUT_BYTES = 8_000_000
#: deepest expression / annotation nesting accepted
MAX_DEPTH = 100

BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
LOOPS = {"range": LoopKind.RANGE, "pipeline": LoopKind.PIPELINE, "parallel": LoopKind.PARALLEL}
#: ``pl.`` calls that are statements, never values
STATEMENT_CALLS = {"yield_", "cond", "range", "pipeline", "parallel", "while_", "split_aiv"}
#: ``pl.`` calls allowed only inside type annotations
TYPE_CALLS = {"TileView", "MemRef"}
PL_ROOTS = ("pl", "pld")
RESERVED = {"pl", "pld", "self"}
