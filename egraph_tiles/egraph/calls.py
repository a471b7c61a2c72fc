"""Windows crossing function boundaries: a per-parameter summary of how a
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
``sliced``   the callee takes windows of it whose address depends on the tile's pitch (a row
             offset other than a constant 0, anywhere down a chain of windows: its offsets
             assume the tile's own pitch), or reshapes / reinterprets it (registry
             ``relayout``: read from its base as a dense tile of the new shape);
``opaque``   an unregistered op receives it (anything may happen).

A callee that returns its parameter (:func:`returned_param`, or a tuple element that is it:
:func:`whole_source`) hands the caller the argument's own storage back: the caller treats the
call's result as an alias of the argument, so the result's uses are the window's uses.  A callee
returning a window of its parameter hands back a part of the argument: what the callers do with
the result (:func:`result_uses`) is a use of the parameter too, and the use context of the
returned window in the callee (its ``return`` is an escape, :func:`role_of`); when a caller writes
through the result or may write the argument after the call (:func:`result_written`) the window
must stay the view itself.

Everything here reads the program's call summaries and each function's effects once per program
(``ir.summaries.Summaries``).

Every kind is read from the op registry (families and ``reuses_arg``) and the memory effects
(``ir.effects``); nothing names an op.
"""

from __future__ import annotations

from ..ir import ops
from ..ir.effects import PREFIX, Effects, Share, call_of, call_operands, callee_name, param_position
from ..ir.summaries import call_summaries, constant_window, reached, whole_tile
from ..ir.exprs import Call, TupleItem, Var, VarRef, free_vars
from ..ir.frames import framed_operand
from ..ir.storage import same_layout
from ..ir.stmts import AssignStmt, Function, Program, ReturnStmt, stmt_exprs, walk
from ..ir.types import TileType

__all__ = ["PREFIX", "call_result_returned_written", "call_result_written", "callee_name", "param_uses", "own_uses",
           "part_of_window", "passed_window", "result_uses", "result_windowed", "result_written", "returned_param",
           "returned_whole", "framed_result",
           "role_of", "whole_source"]


def param_uses(program: Program, op: str, index: int | str) -> frozenset[str]:
    """How the program function called as ``op`` uses its parameter ``index`` (a position, or
    the parameter's name for a keyword argument; see the module docstring); ``{"opaque"}``
    when the function or the parameter is unknown."""
    return _memo(program, ("param", op, index), lambda: _uses(program, op, index, frozenset()))


def _memo(program: Program, key: tuple, compute):
    """``compute()``, once per program and ``key``."""
    memo = call_summaries(program).memo  # type: ignore[union-attr]
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def _uses(program: Program, op: str, index: int | str, seen: frozenset) -> frozenset[str]:
    name = callee_name(op)
    try:
        fn = program.function(name) if name is not None else None
    except KeyError:
        fn = None
    index = _param_index(fn, index)
    if fn is None or index >= len(fn.params):
        return frozenset({"opaque"})
    if (name, index) in seen:  # a recursive call: what the other frames do is collected there
        return frozenset()
    seen = seen | {(name, index)}
    return _value_uses(program, fn, call_summaries(program).effects(fn),  # type: ignore[union-attr]
                       fn.params[index].var, seen)


def _param_index(fn: Function | None, index: int | str) -> int:
    """The position of parameter ``index`` of ``fn``: a keyword argument's by its name (past
    the last when ``fn`` has none of that name)."""
    names = [p.var.name for p in fn.params] if fn is not None else []
    k = param_position(names, index)
    return k if isinstance(k, int) else len(names)


def own_uses(program: Program, op: str, index: int | str) -> frozenset[str]:
    """What the program function called as ``op`` itself does with its parameter ``index``
    (:func:`param_uses` without what its callers do with a value it returns), and
    ``colx-part`` when it col_expands a window of it (not only the tile itself)."""
    def compute() -> frozenset[str]:
        name = callee_name(op)
        sums = call_summaries(program)
        try:
            fn = program.function(name) if name is not None else None
        except KeyError:
            fn = None
        k = _param_index(fn, index)
        if fn is None or k >= len(fn.params):
            return frozenset({"opaque"})
        return _value_uses(program, fn, sums.effects(fn),  # type: ignore[union-attr]
                           fn.params[k].var, frozenset({(name, k)}), returns=False)
    return _memo(program, ("own", op, index), compute)


def _value_uses(program: Program, fn: Function, fx: Effects, param: Var | set[Var],
                seen: frozenset, returns: bool = True, whole: bool = False) -> frozenset[str]:
    """How ``fn`` (its effects ``fx``) uses the tile ``param`` (see the module docstring): what
    the ops and calls it reaches do with it, the windows taken of it, and, when ``fn`` returns
    it or a window of it, what its callers do with the result (a window at row 0 starts at the
    tile's own base: a vector use of it needs the tile aligned).  ``whole``: only what reads
    or writes the tile itself (its aliases, views, carries), not the windows taken of it."""
    starts = param if isinstance(param, set) else {param}  # (several: their uses together)
    same = whole_tile(fx, *starts)
    uses: set[str] = set()
    # (the values in the tile's storage made from it — not through what a function its calls
    # frame hands back: that function judged it where it lies, ir.frames)
    part = _derived(fx, starts, program=program)
    # (those that may still be the tile or a window of it as laid out: a col_expand op
    # materializes lazily only such a value, not a transpose_view or a reshape of it)
    kept = _derived(fx, starts, kept=True, program=program)
    if whole:
        part = kept = set(same)
    elif any(_pitch_bound(e) for e in fx.edges if e.src in part and not framed_result(program, e)):
        uses.add("sliced")
    for s in walk(fn.body):
        call = call_of(s)
        if call is None:
            continue
        for k, a in call_operands(call):
            if not isinstance(a, VarRef):
                continue
            if a.var in same:
                got = _operand_use(program, call.op, k, seen, own=not returns)
                uses |= got if a.var in kept else got - {"colx"}
            elif a.var in part:
                # a window (or a view of one) of the tile: the callee judged it assuming the
                # tile is its own dense, aligned tile, so what it does with the window (a write
                # into it, a col_expand of it, a vector read of it, ...) needs the argument so
                # too; a window at another row than 0 needs it dense (``sliced``)
                got = _operand_use(program, call.op, k, seen, own=not returns)
                uses |= got if a.var in kept else got - {"colx"}
                if not returns and "colx" in got and a.var in kept:
                    uses.add("colx-part")  # (a window of it col_expanded: :func:`own_uses`)
    for s in walk(fn.body) if returns else ():
        if isinstance(s, ReturnStmt):
            for i, e in enumerate(s.values):
                if isinstance(e, VarRef) and e.var in part:
                    # returned: the callers' uses of the result are uses of this tile (but
                    # their writes and accumulation into it reach the argument through the
                    # call result's storage edge, naming the caller's own statement)
                    got = _result_uses(program, fn.name, i if len(s.values) > 1 else None,
                                       seen, whole) - {"acc", "write"}
                    uses |= got if e.var in kept else got - {"colx"}
    return frozenset(uses)


def passed_window(program: Program, op: str, index: int | str
                  ) -> tuple[tuple[int, int], tuple[int, int], str] | None:
    """The one window the program function called as ``op`` hands back of its tile parameter
    ``index``, when it does nothing else with the tile: no op or call reads or writes anything
    made from it but constant plain slices of it, one of which (a chain of such slices and
    aliases, at constant offsets) it returns, once (its result or one element of its returned
    tuple), to callers that only read the result in vector ops, write it in place or
    col_expand it.  The window's shape, its offsets in the parameter and what the callers' uses
    need of it where it lies: ``"align"`` (vector reads, writes: an aligned address),
    ``"identity"`` (col_expand: its lazy materialization an identity copy) or ``"both"``; None
    otherwise.

    The callee then judges nothing about the tile itself: where the caller passes a window,
    the one thing that needs an address is the window handed back, and the caller judges it at
    its real address, the argument's offset plus the callee's offsets at the argument's own
    pitch (``rules.calls``), not at the address the callee assumed (its parameter dense and
    aligned)."""
    return _memo(program, ("passed", op, index), lambda: _passed(program, op, index))


def _passed(program: Program, op: str, index: int | str
            ) -> tuple[tuple[int, int], tuple[int, int], str] | None:
    name = callee_name(op)
    sums = call_summaries(program)
    summary = sums.get(name) if name is not None else None  # type: ignore[union-attr]
    if summary is None:
        return None
    fn = program.function(name)  # type: ignore[arg-type]
    index = _param_index(fn, index)
    if index >= len(fn.params):
        return None
    t = fn.params[index].var
    if not isinstance(t.type, TileType):
        return None
    part = _derived(sums.effects(fn), {t})  # type: ignore[union-attr]
    for s in walk(fn.body):
        call = call_of(s)
        if call is None:
            continue
        if any(isinstance(a, VarRef) and a.var in part for _, a in call_operands(call)):
            w = constant_window(call)
            if w is None or None in w[2]:
                return None
    found = [(i, r) for i, res in enumerate(summary.results) for r in res if r.param == index]
    if len(found) != 1:
        return None
    element, r = found[0]
    if r.whole or r.window is None or None in r.window[1]:
        return None
    uses = result_uses(program, name, element if len(summary.results) > 1 else None)  # type: ignore[arg-type]
    if not uses or not uses <= {"vector", "write", "colx"}:
        return None
    align, ident = bool(uses & {"vector", "write"}), "colx" in uses
    return (*r.window, "both" if align and ident else "align" if align else "identity")  # type: ignore[return-value]


#: storage edges along which a window reaches a value whose use where it escapes is checked
#: for what the value's consumers need (``egraph.encode`` ``escape_context``: carries, merges,
#: write-backs, same-layout views), or which a reshape's own operand use makes dense and aligned
_ESCAPE_KINDS = frozenset((Share.ALIAS, Share.LOOP_INIT, Share.LOOP_BACK, Share.LOOP_RESULT,
                           Share.IF_RESULT, Share.WRITEBACK))


def part_of_window(fx: Effects) -> set[Var]:
    """The values of the function (effects ``fx``) that may name part of a window (the result
    of a ``tile.slice``) along a route with at least one storage edge the window's escape uses
    do not check: a view that lays the elements out anew without reading them as a dense tile
    (``transpose_view``), a program function's result, an edge of a kind the analysis does
    not model.  A program function given such a value as a tile of its own needs it checked
    at the call (``rules.calls`` ``call-value-violation``)."""
    windows = [e.dst for e in fx.edges if e.kind is Share.SLICE]
    if not windows:
        return set()
    by_src: dict[Var, list] = {}
    for e in fx.edges:
        if e.kind is not Share.SLICE:
            by_src.setdefault(e.src, []).append(e)
    seen = {(w, False) for w in windows}
    todo = list(seen)
    out: set[Var] = set()
    while todo:
        v, flagged = todo.pop()
        for e in by_src.get(v, ()):
            handled = e.kind in _ESCAPE_KINDS or e.kind is Share.VIEW and (
                same_layout(e) or _relayout(e.stmt))
            state = (e.dst, flagged or not handled)
            if state not in seen:
                seen.add(state)
                todo.append(state)
                if state[1]:
                    out.add(e.dst)
    return out


def _derived(fx: Effects, starts: set[Var], kept: bool = False,
             program: Program | None = None) -> set[Var]:
    """``starts`` and every value made from them along storage edges (aliases, views, windows,
    carries, merges, call results): the values through which something reaches their storage
    — not the tiles they are windows of.  ``kept``: not through a view that lays the elements
    out anew (``transpose_view``, a reshape; ``ir.storage.Storage.kept_origins``).  With
    ``program``: not through the result of a call whose operand binds a framed parameter."""
    return reached(fx, starts, lambda e: not (kept and e.kind is Share.VIEW and not same_layout(e))
                   and not (program is not None and framed_result(program, e)))


def framed_result(program: Program, e) -> bool:
    """Whether storage edge ``e`` is a program function call's result sharing an operand that
    binds a framed parameter (``ir.frames``)."""
    if e.kind is not Share.CALL:
        return False
    call = call_of(e.stmt)
    return call is not None and any(type(a) is VarRef and a.var is e.src
                                    and framed_operand(program, call.op, k)
                                    for k, a in call_operands(call))


def result_uses(program: Program, name: str, element: int | None,
                whole: bool = False) -> frozenset[str]:
    """How the callers of program function ``name`` use its result (``element`` of a returned
    tuple, read as ``pair[element]``; None: a single result), in the words of
    :func:`param_uses`: a window the function returns is then used that way.  ``whole``: only
    what reads or writes the result itself, not the windows the callers take of it."""
    return _memo(program, ("result", name, element, whole),
                 lambda: _result_uses(program, name, element, frozenset(), whole))


def result_windowed(program: Program, name: str) -> bool:
    """Whether a caller of program function ``name`` relies on where the window it returns lies
    as written: it takes a window of the result (or of a value made from it), judged from the
    argument's layout (``ir.storage``, the call's ``at``), or passes it on to a framed
    parameter (``ir.frames``) — directly or through its own result.  A copy returned in its
    place would move what those windows name: the function must return the window itself."""
    return _memo(program, ("windowed", name), lambda: _result_windowed(program, name, frozenset()))


def _result_windowed(program: Program, name: str, seen: frozenset) -> bool:
    if name in seen:
        return False
    seen = seen | {name}
    op = PREFIX + name
    sums = call_summaries(program)
    for fn in program.functions:
        calls = [s for s in walk(fn.body) if isinstance(s, AssignStmt)
                 and isinstance(s.value, Call) and s.value.op == op]
        if not calls:
            continue
        fx = sums.effects(fn)  # type: ignore[union-attr]
        part = _derived(fx, {s.target for s in calls})
        if any(e.kind is Share.SLICE and e.src in part for e in fx.edges):
            return True
        for s in walk(fn.body):
            call = call_of(s)
            if call is not None and any(type(a) is VarRef and a.var in part
                                        and framed_operand(program, call.op, k)
                                        for k, a in call_operands(call)):
                return True
        if _returns_any(fx, part) and _result_windowed(program, fn.name, seen):  # type: ignore[arg-type]
            return True
    return False


def _result_uses(program: Program, name: str, element: int | None,
                 seen: frozenset, whole: bool = False) -> frozenset[str]:
    if ("return", name, element) in seen:
        return frozenset()
    seen = seen | {("return", name, element)}
    op = PREFIX + name
    sums = call_summaries(program)
    uses: set[str] = set()
    for fn in program.functions:
        fx = None
        calls = [s for s in walk(fn.body) if isinstance(s, AssignStmt)
                 and isinstance(s.value, Call) and s.value.op == op]
        if not calls:
            continue
        fx = sums.effects(fn)  # type: ignore[union-attr]
        results = {s.target for s in calls}
        if element is not None:  # the statements reading ``pair[element]``
            results = {s.target for s in walk(fn.body) if isinstance(s, AssignStmt)
                       and isinstance(s.value, TupleItem) and s.value.index == element
                       and isinstance(s.value.value, VarRef) and s.value.value.var in results}
        if results:
            uses |= _value_uses(program, fn, fx, results, seen, whole=whole)
    return frozenset(uses)


def role_of(uses: frozenset[str]) -> ops.Role:
    """The use context a window gets where the tile is used as ``uses`` says: a matmul operand
    ``CUBE_CALL``; windows taken of it, an opaque use, or a col_expand use together with a
    vector use or write ``CALL`` (dense and aligned); a col_expand use ``COLX``; anything else
    ``ORD``."""
    if "cube" in uses:
        return ops.Role.CUBE_CALL
    if uses & {"sliced", "opaque"} or "colx" in uses and uses & {"vector", "write"}:
        return ops.Role.CALL
    return ops.Role.COLX if "colx" in uses else ops.Role.ORD


def _pitch_bound(e) -> bool:
    """Whether the value storage edge ``e`` makes depends on its source's row pitch: a window
    not at a constant row offset 0 (a window's columns start at the same byte whatever the
    pitch), a view reading its source as a dense tile (``relayout``), a part of it a further
    call returns (unless a constant window at row 0)."""
    if e.kind is Share.SLICE:
        w = constant_window(call_of(e.stmt))
        return w is None or w[2][0] != 0
    if e.kind is Share.VIEW:
        return _relayout(e.stmt)
    if e.kind is Share.CALL and not e.whole and isinstance(e.dst.type, TileType):
        # (a returned tuple's own edges name no window: its elements' edges do)
        return e.window is None or e.window[1][0] != 0
    return False


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


def returned_whole(program: Program, op: str, k: int | str) -> bool:
    """Whether the program function called as ``op`` returns its parameter ``k`` only as
    the tile itself, alone in its result or in each tuple element holding it: the caller's
    result (or ``pair[i]``) is then the argument (``whole_source``), and its uses are the
    argument's, checked there."""
    name = callee_name(op)
    summary = call_summaries(program).get(name) if name is not None else None  # type: ignore[union-attr]
    if summary is None:
        return False
    k = _param_index(program.function(name), k)  # type: ignore[arg-type]
    holding = [res for res in summary.results if any(r.param == k for r in res)]
    return bool(holding) and all(len(res) == 1 and res[0].whole for res in holding)


def _operand_use(program: Program, op_name: str, k: int | str, seen: frozenset,
                 own: bool = False) -> set[str]:
    op = ops.lookup(op_name)
    if op is None:
        if callee_name(op_name) is not None:
            # (``own``: what that function itself does, not its callers with its result)
            got = set(own_uses(program, op_name, k) if own else _uses(program, op_name, k, seen))
            # a framed parameter's windows are judged where the argument lies (ir.frames): only
            # its writes reach the argument
            return got & {"write", "acc"} if framed_operand(program, op_name, k) else got
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
    return _memo(program, ("written", name), lambda: _result_written(program, name, frozenset()))


def _result_written(program: Program, name: str, seen: frozenset) -> bool:
    if name in seen:  # (a recursive cycle: its other paths decide)
        return False
    seen = seen | {name}
    op = PREFIX + name
    sums = call_summaries(program)
    for fn in program.functions:
        fx = None
        items: dict[Var, list[Var]] | None = None
        for s in walk(fn.body):
            call = call_of(s)
            if call is None or call.op != op or not isinstance(s, AssignStmt):
                continue
            if fx is None:
                fx = sums.effects(fn)  # type: ignore[union-attr]
                items = {}
                for t in walk(fn.body):  # (``x = pair[k]``: the elements of a tuple result)
                    if isinstance(t, AssignStmt) and isinstance(t.value, TupleItem) \
                            and isinstance(t.value.value, VarRef):
                        items.setdefault(t.value.value.var, []).append(t.target)
            results = {s.target, *items.get(s.target, ())}  # type: ignore[union-attr]
            if _stale_or_written(fx, s, results):  # type: ignore[arg-type]
                return True
            # the caller returns the result (or a view of it) in turn: its own callers' writes
            # through it are writes through this result
            if _returns_any(fx, results) and _result_written(program, fn.name, seen):  # type: ignore[arg-type]
                return True
    return False


def _returns_any(fx: Effects, values: set[Var]) -> bool:
    """Whether the function returns one of ``values`` or a value made from them (a view, an
    alias, a window, a carry, ...)."""
    part = _derived(fx, values)
    return any(type(v) is VarRef and v.var in part  # type: ignore[attr-defined]
               for r in fx.stmts if type(r) is ReturnStmt for v in r.values)  # type: ignore[attr-defined]


def _stale_or_written(fx: Effects, s: AssignStmt, results: set[Var]) -> str | None:
    """Whether, after the call ``s`` (from the start of the outermost loop around it), the
    caller writes through its result, or writes the storage the result shares and reads the
    result after that write: a copy returned in place of the window would then miss the write.
    The write (or the stale read) in words, else None."""
    p = fx.point(s)
    lo = p.loops[0] if p.loops else p.pos
    part = _derived(fx, results)
    after = [w for w in fx.writes if w.point > lo and fx.same_storage(w.var, s.target)]
    if not after:
        return None
    through = next((w for w in after if w.var in part), None)
    if through is not None:
        return (f"{through.op} at line {through.stmt.span.line} writes through its result "
                f"({through.var.name!r}), which shares the window's storage")
    for q in range(lo + 1, fx.size + 1):
        t = fx.stmt_at(q)
        if t is s or not any(v in part for e in stmt_exprs(t) for v in free_vars(e)):
            continue
        # a read of the result: after a write (a write in a loop around the read but not
        # around the call precedes the read's next trip; a call inside a loop: any write in
        # it, whatever the order, as a carried result is read on the next trip)
        if p.loops or fx.written_before_use(s.target, p.pos, p.loops, t):
            return (f"line {t.span.line} reads its result (which shares the window's storage) "
                    "after the window is written")
    return None


def call_result_written(fx: Effects, s, var: Var, edges) -> str | None:
    """Whether the result of the program function call ``s`` (``edges``: the statement's
    storage edges) may share the storage of its operand ``var`` and the caller then writes
    through the result, or reads it after writing that storage (:func:`_stale_or_written`,
    over the result and the tuple elements read from it): a copy of ``var`` passed in its
    place would take the write, or miss it.  The write in words, else None."""
    if not isinstance(s, AssignStmt) or not any(
            e.kind is Share.CALL and e.src is var and e.dst is s.target for e in edges):
        return None
    results = {s.target}
    for t in fx.stmts:  # (``x = pair[k]``: the elements of a tuple result)
        if isinstance(t, AssignStmt) and isinstance(t.value, TupleItem) \
                and isinstance(t.value.value, VarRef) and t.value.value.var is s.target:
            results.add(t.target)
    return _stale_or_written(fx, s, results)


def call_result_returned_written(program: Program, name: str, fx: Effects, s, var: Var,
                                 edges) -> str | None:
    """Whether the result of the program function call ``s`` in function ``name`` may share
    the storage of its operand ``var`` and ``name`` returns it (or a value made from it) to
    callers that write through it (:func:`result_written`): a copy of ``var`` passed in its
    place would take their write.  The write in words, else None."""
    if not isinstance(s, AssignStmt) or not any(
            e.kind is Share.CALL and e.src is var and e.dst is s.target for e in edges):
        return None
    if _returns_any(fx, {s.target}) and result_written(program, name):
        return f"{name}'s callers write through the result it returns"
    return None


def whole_source(edges, target: Var) -> Var | None:
    """The argument a program function call's result (or ``pair[k]`` of it) is, from the
    statement's storage ``edges``: the one ``CALL`` edge into ``target``, when it is the
    argument's tile itself."""
    into = [e for e in edges if e.kind is Share.CALL and e.dst is target]
    if len(into) == 1 and into[0].whole and isinstance(into[0].src.type, TileType) \
            and isinstance(target.type, TileType):
        return into[0].src
    return None
