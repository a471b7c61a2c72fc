"""Windows crossing function boundaries (issue 15 item 5): a per-parameter summary of how a
program function uses a tile it receives, so a call site is checked as if the callee were inlined.

A callee analysed on its own takes every tile parameter for a fresh, dense, 32-byte-aligned tile
of its own (``rules.windows`` ``w-root-param``; the engine's leaf facts).  A window passed as the
argument breaks that assumption, so the caller states, for each argument, what the callee does
with the tile (transitively through aliases, views, loop carries, ``if`` merges and further calls):

``colx``     a col_expand op materializes it lazily (#1640 / #2010);
``vector``   a vector op reads it (#1789: its base must be aligned);
``write``    an op writes it in place (a copy would lose the write);
``acc``      a matmul-family op accumulates into it (the NZ contiguity of ``rules.windows``);
``cube``     it is a matmul left / right operand (a Mat window would be copied Mat→Mat);
``sliced``   the callee takes windows of it (its offsets assume the tile's own pitch and base),
             or reshapes / reinterprets it (registry ``relayout``: read from its base as a dense
             tile of the new shape);
``opaque``   an unregistered op receives it (anything may happen).

A callee that returns its parameter (:func:`returned_param`) hands the caller the argument's own
storage back: the caller treats the call's result as an alias of the argument, so the result's
uses are the window's uses.

Every kind is read from the op registry (families and ``reuses_arg``) and the memory effects
(``ir.effects``); nothing names an op.
"""

from __future__ import annotations

from ..ir import ops
from ..ir.effects import (PREFIX, Share, call_of, call_operands, call_summaries,
                          callee_name, function_effects, whole_tile)
from ..ir.exprs import VarRef
from ..ir.stmts import AssignStmt, Program, walk

__all__ = ["PREFIX", "callee_name", "param_uses", "result_written", "returned_param"]


def param_uses(program: Program, op: str, index: int) -> frozenset[str]:
    """How the program function called as ``op`` uses its parameter ``index`` (see the module
    docstring); ``{"opaque"}`` when the function or the parameter is unknown."""
    return _uses(program, op, index, frozenset())


def _uses(program: Program, op: str, index: int, seen: frozenset) -> frozenset[str]:
    name = callee_name(op)
    try:
        fn = program.function(name) if name is not None else None
    except KeyError:
        fn = None
    if fn is None or index >= len(fn.params):
        return frozenset({"opaque"})
    if (name, index) in seen:  # a recursive call: what the other frames do is collected there
        return frozenset()
    seen = seen | {(name, index)}
    fx = function_effects(fn, call_summaries(program))
    param = fn.params[index].var
    same = whole_tile(fx, param)
    uses: set[str] = set()
    if any(e.src in same and (e.kind is Share.SLICE or e.kind is Share.VIEW and _relayout(e.stmt)
                              or e.kind is Share.CALL and not e.whole)
           for e in fx.edges):
        uses.add("sliced")
    for s in walk(fn.body):
        call = call_of(s)
        if call is None:
            continue
        for k, a in call_operands(call):
            if not isinstance(a, VarRef):
                continue
            if a.var in same:
                uses |= _operand_use(program, call.op, k, seen)
            elif fx.same_storage(a.var, param):
                # a slice (or a view of one) of the tile: what it does to the tile's storage
                # (a write through the window is a write into the argument)
                uses |= _operand_use(program, call.op, k, seen) & {"write", "acc", "opaque"}
    return frozenset(uses)


def _relayout(s) -> bool:
    """Whether ``s`` is a view that reads its operand from its base as a dense tile of the
    result's shape (registry ``relayout``: reshape, reinterpret_view)."""
    call = call_of(s)
    op = ops.lookup(call.op) if call is not None else None
    return op is not None and op.relayout is not None


def returned_param(program: Program, op: str) -> int | None:
    """The parameter a program function returns as its single result (its tile itself, and no
    other parameter's storage), if any (its :class:`ir.effects.CallSummary`)."""
    name = callee_name(op)
    summary = call_summaries(program).get(name) if name is not None else None  # type: ignore[union-attr]
    if summary is None or len(summary.results) != 1 or len(summary.results[0]) != 1:
        return None
    r = summary.results[0][0]
    return r.param if r.whole else None


def _operand_use(program: Program, op_name: str, k: int | str, seen: frozenset) -> set[str]:
    op = ops.lookup(op_name)
    if op is None:
        if callee_name(op_name) is not None and isinstance(k, int):
            return set(_uses(program, op_name, k, seen))
        return {"opaque"}
    out: set[str] = set()
    if k == op.reuses_arg:
        out.add("acc" if op.family is ops.Family.MATMUL else "write")
    if op.family is ops.Family.COL_EXPAND:
        out.add("colx")
    elif op.family is ops.Family.VECTOR:
        out.add("vector")
    elif op.family is ops.Family.MATMUL and k in (op.left_arg, op.right_arg):
        out.add("cube")
    return out


def result_written(program: Program, name: str) -> bool:
    """Whether a caller of program function ``name`` may write the storage of the call's result
    after the call (from the start of the outermost loop around the call, when there is one): a
    window the function returns is then a view the caller writes through (or reads after
    writing the argument), so the function must return the window itself, never a copy."""
    op = PREFIX + name
    sums = call_summaries(program)
    for fn in program.functions:
        fx = None
        for s in walk(fn.body):
            call = call_of(s)
            if call is None or call.op != op or not isinstance(s, AssignStmt):
                continue
            fx = fx or function_effects(fn, sums)
            p = fx.point(s)
            lo = p.loops[0] if p.loops else p.pos
            if fx.written_in(s.target, lo, fx.size):
                return True
    return False
