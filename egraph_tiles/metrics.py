"""Cost metrics of a canonicalized program relative to its input.

Convention (used by every benchmark strategy alike):

* A copy is a ``tile.extract`` statement; it moves ``rows * cols * storage_bits / 8``
  bytes (constant shape required; a symbolic extent raises ``ValueError``).
* Each statement *position* counts once — a copy inside a loop body is not multiplied
  by the trip count, and both arms of an ``if`` count. This is the static cost the
  extractor optimises (bytes per emitted copy), and it needs no trip-count knowledge.
* **bytes copied** of ``output`` relative to ``input`` is the difference of the two
  programs' totals over InCore functions: extracts the input already had (e.g. K-loop
  extracts a Mat slice is folded into) cancel out, so only copies a strategy
  *inserted* are charged — and a strategy that merges duplicate copies is credited.
"""

from __future__ import annotations

from .ir import AssignStmt, Call, EvalStmt, Program, TileType, Var, VarRef, walk
from .ir.exprs import ListExpr, const_int
from .ir.target import copy_bytes


def extract_bytes(target: Var | None, call: Call) -> int:
    """Bytes one ``tile.extract`` call moves (``ValueError`` when its shape or dtype is unknown)."""
    shape = call.kwarg("shape")
    if shape is None and len(call.args) >= 4:
        shape = call.args[3]
    dims: list[int | None]
    if isinstance(shape, ListExpr):
        dims = [const_int(d) for d in shape.items]
    elif target is not None and isinstance(target.type, TileType):
        dims = [const_int(d) for d in target.type.shape]
    else:
        dims = [None]
    if any(d is None for d in dims):
        raise ValueError(f"tile.extract with a symbolic shape {shape!r}: bytes are unknown")
    src = call.args[0] if call.args else None
    ty = src.var.type if isinstance(src, VarRef) else None
    if not isinstance(ty, TileType) and target is not None:
        ty = target.type
    if not isinstance(ty, TileType):
        raise ValueError("tile.extract of an untyped source: bytes are unknown")
    return copy_bytes(dims, ty.dtype)  # type: ignore[arg-type]


def _extracts(prog: Program):
    for fn in prog.functions:
        if not fn.func_type.is_incore:
            continue
        for s in walk(fn.body):
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == "tile.extract":
                yield s.target, s.value
            elif isinstance(s, EvalStmt) and s.call.op == "tile.extract":
                yield None, s.call


def extract_statements(prog: Program) -> int:
    """Number of ``tile.extract`` statement positions in InCore functions."""
    return sum(1 for _ in _extracts(prog))


def program_copy_bytes(prog: Program) -> int:
    """Bytes moved by all extract statement positions (each counted once)."""
    return sum(extract_bytes(t, c) for t, c in _extracts(prog))


def bytes_copied(input_prog: Program, output_prog: Program) -> int:
    """Bytes of copies ``output_prog`` has beyond ``input_prog`` (see module docstring)."""
    return program_copy_bytes(output_prog) - program_copy_bytes(input_prog)


def inserted_extracts(input_prog: Program, output_prog: Program) -> int:
    return extract_statements(output_prog) - extract_statements(input_prog)


def slice_statements(prog: Program) -> int:
    """Number of ``tile.slice`` statement positions left in InCore functions."""
    n = 0
    for fn in prog.functions:
        if fn.func_type.is_incore:
            n += sum(1 for s in walk(fn.body) if isinstance(s, AssignStmt)
                     and isinstance(s.value, Call) and s.value.op == "tile.slice")
    return n


__all__ = ["bytes_copied", "extract_bytes", "extract_statements", "inserted_extracts", "program_copy_bytes",
           "slice_statements"]
