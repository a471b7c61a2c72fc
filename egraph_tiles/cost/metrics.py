"""Cost metrics of a canonicalized program relative to its input.

Convention (used by every benchmark strategy alike):

* A copy is a statement the registry declares a copy (``ir.copies``: ``tile.extract``,
  ``tile.move``, ``tile.transpose``); it moves its result's ``elements * storage_bits / 8``
  bytes (constant shape required; a symbolic extent raises ``ValueError``).
* **Static bytes**: each statement *position* counts once — a copy inside a loop body is
  not multiplied by the trip count, and both arms of an ``if`` count.
* **Dynamic bytes** (what the extractor optimises): each copy × the executions of its place
  — the trip counts of its enclosing loops (a default for symbolic bounds) and a default
  probability per ``if`` arm (``cost.loops.CostModel``).
* **bytes copied** of ``output`` relative to ``input`` is the difference of the two
  programs' totals over InCore functions: copies the input already had (e.g. K-loop
  extracts a Mat slice is folded into, a ``tile.move`` into Left) cancel out, so only copies a
  strategy *inserted* are charged — and a strategy that merges duplicate copies is credited.
"""

from __future__ import annotations

from .loops import CostModel, dynamic_copy_bytes
from ..ir import AssignStmt, Call, Function, Program, walk
from ..ir.copies import copies, static_copy_bytes


def _incore(prog: Program) -> list[Function]:
    return [fn for fn in prog.functions if fn.func_type.is_incore]


def extract_statements(prog: Program) -> int:
    """Number of copy statement positions in InCore functions."""
    return sum(1 for fn in _incore(prog) for _ in copies(fn))


def program_copy_bytes(prog: Program) -> int:
    """Bytes moved by all copy statement positions (each counted once)."""
    return sum(static_copy_bytes(fn, strict=True) for fn in _incore(prog))


def program_dynamic_bytes(prog: Program, model: CostModel | None = None) -> int:
    """Bytes moved per call by all copies, each × the executions of its place (trip counts
    of the enclosing loops, ``if`` arm probability; see ``cost.loops.CostModel``)."""
    m = model or CostModel()
    return sum(dynamic_copy_bytes(fn, m, strict=True) for fn in _incore(prog))


def dynamic_bytes_copied(input_prog: Program, output_prog: Program,
                         model: CostModel | None = None) -> int:
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
    for fn in _incore(prog):
        n += sum(1 for s in walk(fn.body) if isinstance(s, AssignStmt)
                 and isinstance(s.value, Call) and s.value.op == "tile.slice")
    return n


__all__ = ["bytes_copied", "dynamic_bytes_copied", "extract_statements", "inserted_extracts",
           "program_copy_bytes", "program_dynamic_bytes", "slice_statements"]
