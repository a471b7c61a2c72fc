"""The forms PyPTO's printer emits, as tables the reader consults.

Extending the reader to a new spelling is usually one line here.
"""

from __future__ import annotations

import ast

from ..ir.stmts import LoopKind
from ..ir.types import TYPE_CALLS  # noqa: F401 (the reader consults it here with the others)

#: inputs larger than this are rejected before parsing (a kernel is a few KB)
MAX_INPUT_BYTES = 8_000_000
#: deepest expression / annotation nesting accepted
MAX_DEPTH = 100

BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
#: Python operators PyPTO prints between scalars, beyond the five above (kept, not folded)
MORE_BINOPS = {ast.Div: "/", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
               ast.LShift: "<<", ast.RShift: ">>"}
BOOLOPS = {ast.And: "and", ast.Or: "or"}
#: prefix operators beyond unary minus, read as calls of the operator and printed back as written
UNARY_OPS = {ast.Not: "not", ast.Invert: "~"}
LOOPS = {"range": LoopKind.RANGE, "pipeline": LoopKind.PIPELINE, "parallel": LoopKind.PARALLEL,
         "unroll": LoopKind.UNROLL}
#: regions written ``with pl.<name>(...) [as name]:`` (kept as written; their bodies are
#: optimized like any other statements)
SCOPES = {"at", "auto_scope", "manual_scope", "cluster", "spmd", "scope", "incore"}
#: ``pl.`` calls that are statements, never values
STATEMENT_CALLS = {"yield_", "cond", "while_", "split_aiv", *LOOPS, *SCOPES}

#: type heads: ``head[...]`` → what it builds (after ``[dims], dtype`` a tile takes a memory
#: space, a MemRef and a TileView; a tensor a TensorView and a MemRef — in any order)
TYPE_CONSTRUCTORS = {
    "pl.Tile": "tile",
    "pl.Tensor": "tensor",
    "pld.DistributedTensor": "tensor",
    "pl.DistributedTensor": "tensor",
    "pl.Scalar": "scalar",
    "pl.Tuple": "tuple",
    "tuple": "tuple",
    "pl.Out": "out",
    "pl.InOut": "inout",
}
#: types PyPTO prints that we keep by their spelling without interpreting them
OPAQUE_TYPES = {"pl.Ptr", "pl.MemRefType", "pl.UnknownType", "pl.Array", "pld.WindowBufferType",
                "pld.CommCtxType", "pl.PrefetchAsyncContext", "pl.AsyncEvent", "pl.AsyncSession"}

#: scalar expressions PyPTO prints as ``pl.<name>(...)`` calls → how their dtype is found:
#: "first" (the first argument's), or "dtype" (the ``pl.<DTYPE>`` second argument)
SCALAR_FUNCTIONS = {"min": "first", "max": "first", "cast": "dtype", "const": "dtype"}
#: enum namespaces spelled in lower case (``pl.adir.input``); capitalized ones are all enums
LOWERCASE_ENUMS = {"adir"}
#: registered-op parameters that hold integer (INDEX) scalars, and the least constant value
#: each accepts: None for offsets and indices (any integer), 1 for extents, 0 for valid extents
INDEX_OPERANDS = {"offsets": None, "offset": None, "row": None, "col": None,
                  "shape": 1, "valid_shape": 0}
PL_ROOTS = ("pl", "pld")
RESERVED = {"pl", "pld", "self"}
#: how close (difflib ratio) an unknown, unannotated ``pl.`` op must be to a registered one to be
#: reported as a typo: 0.9 still catches ``tile.mulss`` / ``tile.stor`` / ``tile.slcie`` while
#: leaving PyPTO's real ops outside the registry (``tile.sin``, ``tile.row_expand``) alone
TYPO_CUTOFF = 0.9
