"""Cost metrics of a canonicalized program relative to its input.

Convention (used by every benchmark strategy alike):

* A copy is a ``tile.extract`` statement; it moves ``rows * cols * storage_bits / 8``
  bytes (constant shape required; a symbolic extent raises ``ValueError``).
* **Static bytes**: each statement *position* counts once — a copy inside a loop body is
  not multiplied by the trip count, and both arms of an ``if`` count.
* **Dynamic bytes** (what the extractor optimises): each copy × the executions of its place
  — the trip counts of its enclosing loops (a default for symbolic bounds) and a default
  probability per ``if`` arm (``egraph.loops.CostModel``).
* **bytes copied** of ``output`` relative to ``input`` is the difference of the two
  programs' totals over InCore functions: extracts the input already had (e.g. K-loop
  extracts a Mat slice is folded into) cancel out, so only copies a strategy
  *inserted* are charged — and a strategy that merges duplicate copies is credited.
"""

from __future__ import annotations

from .ir import AssignStmt, Call, EvalStmt, Function, Program, TileType, Var, VarRef, walk
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


def extract_calls(fn: Function):
    """``(statement, target, call)`` for every ``tile.extract`` of ``fn``."""
    for s in walk(fn.body):
        if isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == "tile.extract":
            yield s, s.target, s.value
        elif isinstance(s, EvalStmt) and s.call.op == "tile.extract":
            yield s, None, s.call


def _extracts(prog: Program):
    for fn in prog.functions:
        if fn.func_type.is_incore:
            for _s, t, c in extract_calls(fn):
                yield t, c


def extract_statements(prog: Program) -> int:
    """Number of ``tile.extract`` statement positions in InCore functions."""
    return sum(1 for _ in _extracts(prog))


def program_copy_bytes(prog: Program) -> int:
    """Bytes moved by all extract statement positions (each counted once)."""
    return sum(extract_bytes(t, c) for t, c in _extracts(prog))


def program_dynamic_bytes(prog: Program, model=None) -> int:
    """Bytes moved per call by all extracts, each × the executions of its place (trip counts
    of the enclosing loops, ``if`` arm probability; see ``egraph.loops.CostModel``)."""
    from .egraph.loops import CostModel, dynamic_copy_bytes

    m = model or CostModel()
    return sum(dynamic_copy_bytes(fn, m) for fn in prog.functions if fn.func_type.is_incore)


def dynamic_bytes_copied(input_prog: Program, output_prog: Program, model=None) -> int:
    """Dynamic bytes of copies ``output_prog`` has beyond ``input_prog``."""
    return program_dynamic_bytes(output_prog, model) - program_dynamic_bytes(input_prog, model)


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


__all__ = ["bytes_copied", "dynamic_bytes_copied", "extract_bytes", "extract_statements", "inserted_extracts", "program_copy_bytes", "program_dynamic_bytes",
           "slice_statements"]
