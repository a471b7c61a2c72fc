"""Relayout check: a view that lays its operand's bytes out afresh must not be read or written.

The registry says which views do (``OpDef.relayouts``: a shape-changing ``tile.reshape`` or
``reinterpret_view`` of an Acc tile, whose NZ blocks are placed by the tile's own shape).  Such a
view of an Acc *window* that keeps the shape reads the window as a standalone NZ tile, right only
for a contiguous window, so reading it needs the proof a ``matmul_acc`` into it gets.  This module
only states one function's structure — which statement makes such a view, which values carry a
value on (``ir.effects`` edges: aliases, views, write-back results, loop carries, if results) and
which statements read or write a value (an operand of any call, or a returned value) — and runs
the rules of ``rules.checks.RELAYOUT`` in a small e-graph of their own, only when the function has
such a view.  :func:`check_relayouts` raises the first violation in program order as a
``ValueError``.
"""

from __future__ import annotations

from ..egraph.bindings import eb

from egraph_tiles.rules.checks import RELAYOUT, RELAYOUT_VIOLATION, WINDOW_VIEW_VIOLATION

from ..ir import ops
from ..ir.effects import (Edge, Effects, Share, call_of, call_operands, function_effects,
                          operand, yielded_var)
from ..ir.exprs import Call, Var, VarRef, const_int
from ..ir.stmts import AssignStmt, Function, IfStmt, ReturnStmt, Stmt
from ..ir.types import MemorySpace, TileType
from ..egraph.schedule import SPAN, egglog_errors, load_tables, prepared, release

Rows = dict[str, list[tuple]]
#: storage edges along which a value keeps its bytes and their order (a view's operand is not a
#: use: the view carries it on, and its own uses are checked); a program function's result that
#: may share an argument's storage (``CALL``) and a tuple element (``ITEM``) carry it on too (the
#: call is itself a use of its operand: this names the result's later uses as well)
_CARRIES = (Share.ALIAS, Share.SLICE, Share.VIEW, Share.WRITEBACK, Share.LOOP_INIT,
            Share.LOOP_BACK, Share.LOOP_RESULT, Share.IF_RESULT, Share.CALL, Share.ITEM,
            Share.OPAQUE)

#: the edges that define their value (a module constant: read per edge)
_DEFINING = (Share.ALIAS, Share.SLICE, Share.VIEW)


def _dims(t: TileType) -> tuple[int | None, ...]:
    return tuple(const_int(d) for d in t.shape)


def relayout_view(s: Stmt) -> tuple[Var, Var] | None:
    """``(result, operand)`` when ``s`` makes a view the registry says lays its operand's bytes out
    afresh (``OpDef.relayouts``)."""
    call = call_of(s)
    op = ops.lookup(call.op) if call is not None else None
    if op is None or op.relayout is None or not isinstance(s, AssignStmt) or not call.args:
        return None
    src = call.args[0]
    out = s.target.type
    if not (isinstance(src, VarRef) and isinstance(src.var.type, TileType)
            and isinstance(out, TileType)):
        return None
    t = src.var.type
    return (s.target, src.var) if op.relayouts(t.memory, _dims(t), _dims(out)) else None


def acc_window_view(back: dict[Var, Edge], s: Stmt) -> tuple[Var, Var] | None:
    """``(result, operand)`` when ``s`` is a reshape / reinterpret_view (registry ``relayout``)
    that keeps the element order of a whole tile (not a :func:`relayout_view`) of an Acc window:
    a value defined by ``tile.slice`` of an Acc tile, directly or through aliases and views
    (``back``: :func:`_defining_edges`)."""
    call = call_of(s)
    op = ops.lookup(call.op) if call is not None else None
    if op is None or op.relayout is None or not isinstance(s, AssignStmt) or not call.args \
            or not isinstance(call.args[0], VarRef) or relayout_view(s) is not None:
        return None
    v = src = call.args[0].var
    if not (isinstance(v.type, TileType) and v.type.memory is MemorySpace.Acc):
        return None
    seen: set[Var] = set()
    while v in back and v not in seen:
        seen.add(v)
        if back[v].kind is Share.SLICE:
            return s.target, src
        v = back[v].src
    return None


def _defining_edges(fx: Effects) -> dict[Var, Edge]:
    """The alias / slice / view edge defining each value that has one."""
    return {e.dst: e for e in fx.edges if e.kind in _DEFINING}


def _uses(s: Stmt) -> list[Var]:
    """The tile values statement ``s`` reads or writes: every tile operand of its call (not the
    operand of a view, which the view carries on), or the values it returns."""
    if isinstance(s, ReturnStmt):
        vals = s.values
    else:
        call = call_of(s)
        op = ops.lookup(call.op) if call is not None else None
        if call is None or op is not None and op.inherits_input_memory:
            return []
        vals = [a for _, a in call_operands(call)]
    return [a.var for a in vals if isinstance(a, VarRef) and isinstance(a.var.type, TileType)]


def encode(fx: Effects) -> Rows:
    """The fact rows of one function (empty when it makes no relayout view and no view of an Acc
    window)."""
    rows: Rows = {"RelayoutRow": [], "CarryRow": [], "OperandRow": [], "WindowViewRow": [],
                  "ReadCarryRow": [], "ReadRow": []}
    back: dict[Var, Edge] | None = None
    # only an assigned call of an op the registry gives a relayout makes a view
    # (:func:`relayout_view`, :func:`acc_window_view`): none in the function, no rows
    relayouts = {name for name in fx.call_ops
                 if (op := ops.lookup(name)) is not None and op.relayout is not None}
    if not relayouts:
        return {}
    for pos, s in enumerate(fx.stmts[1:], start=1):
        if type(s) is not AssignStmt or type(s.value) is not Call \
                or s.value.op not in relayouts:  # type: ignore[attr-defined]
            continue
        view = relayout_view(s)
        if view is not None:
            rows["RelayoutRow"].append((pos, view[0].uid))
        back = _defining_edges(fx) if back is None else back
        view = acc_window_view(back, s)
        if view is not None:
            rows["WindowViewRow"].append((pos, view[0].uid))
    if not rows["RelayoutRow"] and not rows["WindowViewRow"]:
        return {}
    for e in fx.edges:
        if e.kind in _CARRIES:
            rows["CarryRow"].append((e.dst.uid, e.src.uid))
            if e.kind is not Share.WRITEBACK:
                rows["ReadCarryRow"].append((e.dst.uid, e.src.uid))
    for pos, s in enumerate(fx.stmts[1:], start=1):
        uses = _uses(s)
        rows["OperandRow"] += [(pos, v.uid) for v in uses]
        dest = _dest(s)
        rows["ReadRow"] += [(pos, v.uid) for v in uses if v is not dest]
    return rows


def _dest(s: Stmt) -> Var | None:
    """The operand a registered op of ``s`` writes back into, if any."""
    call = call_of(s)
    op = ops.lookup(call.op) if call is not None else None
    k = op.reuses_arg if op is not None else None
    return operand(call, k) if k is not None else None


def violations(rows: Rows) -> dict[str, list[tuple[int, int, int]]]:
    """``(reshape point, use point, value uid)`` of every violation the rules prove, by relation
    (``RelayoutViolation``, ``WindowViewViolation``), in program order of the use."""
    eg = prepared(RELAYOUT)
    load_tables(eg, {t: r for t, r in rows.items() if r}, ruleset="relayout")
    eg.run_program(eb.RunSchedule(eb.Saturate(SPAN, eb.Run(SPAN, eb.RunConfig("relayout", None)))))
    frozen = eg.freeze().functions
    found: dict[str, list[tuple[int, int, int]]] = {}
    for name in ("RelayoutViolation", "WindowViewViolation"):
        fn = frozen.get(name)
        found[name] = sorted((tuple(eg.value_to_i64(v) for v in row.inputs)  # type: ignore[misc]
                              for row in (fn.rows if fn is not None else []) if not row.subsumed),
                             key=lambda x: (x[1], x[0]))
    release(eg)
    return found


def _use_text(s: Stmt, v: Var) -> str:
    if isinstance(s, ReturnStmt):
        return f"is returned at line {s.span.line} (the caller reads it)"
    call = call_of(s)
    assert isinstance(call, Call)
    if ops.lookup(call.op) is None:
        return f"reaches {call.op} at line {s.span.line}, which passes it on (it may read or write it)"
    how = "writes back into it" if _dest(s) is v else "reads it"
    return f"reaches {call.op} at line {s.span.line}, which {how}"


def check_relayouts(function: Function, fx: Effects | None = None) -> None:
    """Raise ``ValueError`` when a value a relayout view makes (a shape-changing reshape of an Acc
    tile) is read or written, or a view of an Acc window is read with no contiguity proof,
    directly or through aliases, views, loop carries or if results."""
    fx = fx if fx is not None else function_effects(function)
    rows = encode(fx)
    if not rows:
        return
    with egglog_errors(f"the relayout check failed inside egglog for function {function.name!r}"):
        found = violations(rows)
    for relation, which, (_rule, message) in (
            ("RelayoutViolation", relayout_view, RELAYOUT_VIOLATION),
            ("WindowViewViolation", lambda s: acc_window_view(_defining_edges(fx), s),
             WINDOW_VIEW_VIOLATION)):
        if found[relation]:
            n, m, uid = found[relation][0]
            reshape, use = fx.stmt_at(n), fx.stmt_at(m)
            view = which(reshape)
            assert view is not None
            raise ValueError(message.format(**_fields(function, fx, reshape, view, use, uid)))


def _fields(function: Function, fx: Effects, reshape: Stmt, view: tuple[Var, Var], use: Stmt,
            uid: int) -> dict[str, object]:
    value = next(v for v in [view[0], *_uses(use)] if v.uid == uid)
    src_t, out_t = view[1].type, view[0].type
    assert isinstance(src_t, TileType) and isinstance(out_t, TileType)
    call = call_of(reshape)
    return dict(where=reshape.span, fn=function.name, op=call.op if call is not None else "a view",
                line=reshape.span.line, src=view[1].name, src_shape=_shape(src_t),
                view=view[0].name, shape=_shape(out_t), operand=value.name,
                through=_path(fx, view[0], value), use=_use_text(use, value))


_HOP = {Share.ALIAS: "an alias at line {}", Share.SLICE: "a slice at line {}",
        Share.VIEW: "a view at line {}", Share.WRITEBACK: "the result of the write-back at line {}",
        Share.LOOP_INIT: "the carry of the loop at line {}",
        Share.LOOP_BACK: "the value the loop at line {} yields back to its next trip",
        Share.LOOP_RESULT: "the result of the loop at line {}",
        Share.IF_RESULT: "the result of the if at line {}",
        Share.CALL: "the result of the call at line {}",
        Share.ITEM: "a tuple element at line {}",
        Share.OPAQUE: "the result of the unclassified op at line {}"}


def _hop(e: Edge) -> str:
    text = _HOP[e.kind].format(e.stmt.span.line)
    if e.kind is Share.IF_RESULT and isinstance(e.stmt, IfStmt):
        arm = "then" if yielded_var(e.stmt.then_body, e.index) is e.src else "else"
        text += f" when it takes its {arm} arm"
    return text


def _path(fx: Effects, view: Var, value: Var) -> str:
    """How ``value`` holds the view's bytes (the shortest chain of carries), in words."""
    if value is view:
        return ""
    prev: dict[Var, tuple[Var, str]] = {}
    todo = [view]
    while todo and value not in prev:
        nxt = []
        for v in todo:
            for e in fx.edges:
                if e.src is v and e.kind in _CARRIES and e.dst not in prev and e.dst is not view:
                    prev[e.dst] = (v, _hop(e))
                    nxt.append(e.dst)
        todo = nxt
    hops = []
    v = value
    while v in prev:
        u, text = prev[v]
        hops.append(text + (f" ({v.name!r})" if v is not value else ""))
        v = u
    return " (it holds the view through " + ", then ".join(reversed(hops)) + ")" if hops else ""


def _shape(t: TileType) -> str:
    return "[" + ", ".join(str(d) if d is not None else "?" for d in _dims(t)) + "] " + t.dtype.name
