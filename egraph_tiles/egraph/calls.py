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
from ..ir.effects import Share, call_of, call_operands, function_effects
from ..ir.exprs import VarRef
from ..ir.stmts import Program, ReturnStmt, walk

#: storage edges along which the callee's value *is* the parameter's tile (not a window of it)
_SAME = (Share.ALIAS, Share.VIEW, Share.WRITEBACK, Share.LOOP_INIT, Share.LOOP_BACK,
         Share.LOOP_RESULT, Share.IF_RESULT)

PREFIX = "self."


def callee_name(op: str) -> str | None:
    """The program function a call names (``self.f(...)``), if any."""
    return op[len(PREFIX):] if op.startswith(PREFIX) else None


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
    fx = function_effects(fn)
    same = _same_tile(fx, fn.params[index].var)
    uses: set[str] = set()
    if any(e.src in same and (e.kind is Share.SLICE or e.kind is Share.VIEW and _relayout(e.stmt))
           for e in fx.edges):
        uses.add("sliced")
    for s in walk(fn.body):
        call = call_of(s)
        if call is None:
            continue
        for k, a in call_operands(call):
            if not (isinstance(a, VarRef) and a.var in same):
                continue
            uses |= _operand_use(program, call.op, k, seen)
    return frozenset(uses)


def _relayout(s) -> bool:
    """Whether ``s`` is a view that reads its operand from its base as a dense tile of the
    result's shape (registry ``relayout``: reshape, reinterpret_view)."""
    call = call_of(s)
    op = ops.lookup(call.op) if call is not None else None
    return op is not None and op.relayout is not None


def _same_tile(fx, v) -> set:
    """``v`` and every value that is ``v``'s tile itself (aliases, views, carries, merges)."""
    same = {v}
    changed = True
    while changed:
        changed = False
        for e in fx.edges:
            if e.src in same and e.kind in _SAME and e.dst not in same:
                same.add(e.dst)
                changed = True
    return same


def returned_param(program: Program, op: str) -> int | None:
    """The parameter a program function returns as its single result (its tile itself), if any."""
    name = callee_name(op)
    try:
        fn = program.function(name) if name is not None else None
    except KeyError:
        return None
    rets = [s for s in walk(fn.body) if isinstance(s, ReturnStmt)] if fn is not None else []
    if len(rets) != 1 or len(rets[0].values) != 1 or not isinstance(rets[0].values[0], VarRef):
        return None
    fx = function_effects(fn)
    for k, p in enumerate(fn.params):
        if rets[0].values[0].var in _same_tile(fx, p.var):
            return k
    return None


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
