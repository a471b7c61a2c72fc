"""The rejections of ``rules.checks``: each violation relation, the rule deriving it and its
message are declared beside the rule (``rules.checks.VIOLATIONS``); this module says which
encoding sites each relation is keyed by (in program order) and fills the message's fields.
:func:`raise_violations` turns the first violation found into a ``ValueError``."""

from __future__ import annotations

from typing import Callable

from .bindings import eb

from egraph_tiles.rules import calls as call_rules
from egraph_tiles.rules.checks import VIOLATIONS as CHECKS

from ..ir import ops
from ..ir.effects import call_of
from ..ir.exprs import Var
from ..ir.ops import Role
from ..ir.stmts import AssignStmt, Function
from ..ir.target import ALIGN_BYTES, aligned_step
from ..ir.types import TileType
from .calls import callee_name
from .encoding import Encoding, RawSliceUse, UseSite, Window, WriteSite
from .schedule import SPAN, has_fact


def _fields(fn: Function, enc: Encoding, slice_stmt: AssignStmt, operand: Var
            ) -> dict[str, object]:
    t = slice_stmt.target.type
    bits = t.dtype.storage_bits if isinstance(t, TileType) else 0
    return dict(
        where=slice_stmt.span, fn=fn.name, slice=slice_stmt.target.name, operand=operand.name,
        line=slice_stmt.span.line, align_bytes=ALIGN_BYTES,
        through=_through(enc, operand, slice_stmt.target),
        align=(f"Align the window (start it at a multiple of {ALIGN_BYTES} bytes, e.g. a column "
               f"offset that is a multiple of {aligned_step(bits)} elements of this dtype; "
               f"{aligned_step(32)} for FP32)"))


def _through(enc: Encoding, var: Var, slice_var: Var) -> str:
    """The route by which ``var`` names the slice's storage (``ir.storage``), in words."""
    if var is slice_var:
        return ""
    route = enc.storage.route(slice_var, var) if enc.storage is not None else None
    return f" (through {var.name!r}: {route or 'a value sharing its storage'})"


def _raw_use(fn: Function, enc: Encoding, eg: eb.EGraph, site: RawSliceUse) -> dict[str, object]:
    how = " (an opaque call: it may materialize its operand as a col_expand op does)" \
        if not ops.classified(site.op) and callee_name(site.op) is None else ""
    return {**_fields(fn, enc, site.slice_stmt, site.var), "op": site.op,
            "op_line": site.consumer.span.line, "how": how}


def _cube_call(fn: Function, enc: Encoding, eg: eb.EGraph, site: UseSite) -> dict[str, object]:
    fields = _fields(fn, enc, site.window.stmt, site.var)
    escape = enc.escapes.get(site.key)
    if escape is not None:  # a carry, an if result or a view the window flows into
        value, consumer, operand = escape
        call = call_of(consumer)
        route = (f"flows into {value.name!r} ({_route(site)} at line {site.stmt.span.line})"
                 + (f" and on through {operand.name!r}" if operand is not value else "")
                 + f", which {call.op if call is not None else 'a call'} at line "
                 f"{consumer.span.line} uses as a matmul operand")
        return {**fields, "route": route,
                "nocopy": "the pass cannot fold the window into a Left / Right extract there "
                          "(the operand is a value that may name it, not the slice itself), nor "
                          "copy it within Mat (no Mat->Mat path)",
                "fix": "extract the window to Left / Right where the matmul reads it "
                       "(tile.extract(src, row, col, shape=..., target_memory=pl.Mem.Left)) "
                       "rather than carrying, merging or viewing the Mat window."}
    call = call_of(site.stmt)
    if call is None and site.slot[0] == "return":
        route = (f"is returned at line {site.stmt.span.line}{fields['through']} to callers that "
                 "use it as a matmul operand (checked as if inlined)")
    else:
        route = (f"is passed to {call.op if call is not None else 'a function'} at line "
                 f"{site.stmt.span.line}{fields['through']}, which uses it as a matmul operand "
                 "(checked as if inlined)")
    return {**fields, "route": route,
            "nocopy": "the caller cannot copy it for the callee either (no Mat->Mat path)",
            "fix": "extract the window to Left / Right in the caller (tile.extract(..., "
                   "target_memory=pl.Mem.Left)) and pass that, or pass the whole Mat tile and "
                   "slice it inside the function."}


def _escape_write(fn: Function, enc: Encoding, eg: eb.EGraph, site: UseSite) -> dict[str, object]:
    value, consumer, _operand = enc.escapes[site.key]
    call = call_of(consumer)
    dense = site.ctx is Role.DENSE
    return {**_fields(fn, enc, site.window.stmt, site.var), "value": value.name,
            "route": _route(site), "at": site.stmt.span.line,
            "op": call.op if call is not None else "a call", "op_line": consumer.span.line,
            "need": "dense tile (from its first element)" if dense else
                    "lazily materialized operand (an in-place textract)",
            "what": "dense (one row or the full width)" if dense else
                    "an identity copy (a constant offset, one row or the full width)"}


def _stale_escape(fn: Function, enc: Encoding, eg: eb.EGraph, site: UseSite) -> dict[str, object]:
    value, consumer, _operand = enc.escapes[site.key]
    call = call_of(consumer)
    return {**_fields(fn, enc, site.window.stmt, site.var), "value": value.name,
            "route": _route(site), "at": site.stmt.span.line,
            "op": call.op if call is not None else "a return", "op_line": consumer.span.line}


def _escape_view(fn: Function, enc: Encoding, eg: eb.EGraph, site: UseSite) -> dict[str, object]:
    value = enc.view_only[site.key]
    reached, todo = {value}, [value]  # (through storage edges of any kind: ir.storage)
    while todo and enc.storage is not None:
        for e in enc.storage.out_edges.get(todo.pop(), ()):
            if e.dst not in reached:
                reached.add(e.dst)
                todo.append(e.dst)
    lines = sorted(w.stmt.span.line for w in enc.windows if w.src in reached)
    call = call_of(site.stmt)
    op = call.op if call is not None else "the program"
    why = (f"{op} reads it as a dense tile, and it is not provably dense (one row or the full "
           f"width) at a {ALIGN_BYTES}-byte aligned address" if site.ctx is Role.DENSE else
           f"{op} reads it as a dense tile, and it is not provably dense (one row or the full "
           "width)" if site.ctx is Role.DENSE_PASS else
           f"it is also read or written as a whole, and it is not provably {ALIGN_BYTES}-byte "
           "aligned" if site.ctx is Role.ORD else
           f"it is also read as a whole ({site.ctx.label}), and no view is proven for that")
    if site.slot[0] == "return":  # (its callers take the windows: rules.calls result_windowed)
        return {**_fields(fn, enc, site.window.stmt, site.var), "value": f"{fn.name}'s result",
                "route": "returned", "at": site.stmt.span.line,
                "win_where": "by a caller, or by a function its calls frame", "why": why}
    return {**_fields(fn, enc, site.window.stmt, site.var), "value": repr(value.name),
            "route": _route(site), "at": site.stmt.span.line,
            "win_where": f"at line {lines[0]}" if lines else "further on", "why": why}


def _route(site: UseSite) -> str:
    """How an escape use hands its window on: a loop initializer, a yield, a view."""
    kind = site.slot[0]
    if kind == "init":
        return "a loop carry's initializer"
    if kind == "yield":
        return "a yield"
    call = call_of(site.stmt)
    op = ops.lookup(call.op) if call is not None else None
    if op is not None and op.same_layout:
        return f"the view {call.op}"  # type: ignore[union-attr]
    return f"the result of {call.op}" if call is not None else "a value sharing its storage"


def _written(fn: Function, enc: Encoding, eg: eb.EGraph, w: Window) -> dict[str, object]:
    writers = [x for x in enc.writes if has_fact(eg, "WriteViolation", w.key, x.key)]
    by = "; ".join(f"{x.op} at line {x.stmt.span.line}" + _through(enc, x.var, w.var)
                   for x in writers) or "an in-place write"
    return {**_fields(fn, enc, w.stmt, w.var), "by": by}


def _unclassified(fn: Function, enc: Encoding, eg: eb.EGraph, w: Window) -> dict[str, object]:
    x = next(x for x in enc.unclassified if has_fact(eg, "UnclassifiedViolation", w.key, x.key))
    return {**_fields(fn, enc, w.stmt, x.var), "slice": w.var.name, "op": x.op,
            "op_line": x.stmt.span.line}


def _call_value(fn: Function, enc: Encoding, eg: eb.EGraph, site: WriteSite) -> dict[str, object]:
    st = enc.storage
    froms = sorted((w for w in enc.windows if st is not None and st.route(w.var, site.var)),
                   key=lambda w: w.stmt.span.line)
    route = (f"slice {froms[0].var.name!r} at line {froms[0].stmt.span.line}, then "
             f"{st.route(froms[0].var, site.var)}" if froms and st is not None
             else "a window")
    defs = st.fx.defs.get(site.var) if st is not None else None
    made = call_of(st.fx.stmt_at(defs[0])) if defs else None  # type: ignore[union-attr]
    if made is not None and made.op == "tile.slice":
        route = (f"a valid_shape / drop_dims slice at line {st.fx.stmt_at(defs[0]).span.line}, which the pass "
                 "never copies")
    handed = " and hands back a window of it" if site.key in enc.call_handed else ""
    return dict(where=site.stmt.span, fn=fn.name, operand=site.var.name, op=site.op,
                op_line=site.stmt.span.line, align_bytes=ALIGN_BYTES, route=route, handed=handed)


def _call_write(fn: Function, enc: Encoding, eg: eb.EGraph, site: UseSite) -> dict[str, object]:
    call = call_of(site.stmt)
    return {**_fields(fn, enc, site.window.stmt, site.var),
            "op": call.op if call is not None else "a function", "op_line": site.stmt.span.line,
            "how": enc.call_keep[site.key], **_CALL_NEEDS.get(site.ctx, _CALL_NEEDS[None])}


#: what a program function's use of a tile asks of a window kept as a view (its use context,
#: ``egraph.calls.role_of``), and the matching advice
_CALL_NEEDS = {
    Role.CALL: dict(need=f"it is dense (one row or the full width) at a {ALIGN_BYTES}-byte aligned address "
                         "(the function reads the tile as one of its own: windows of it at its "
                         "own pitch, a reshape, an opaque op)", fix=", make it dense"),
    Role.COLX: dict(need="its lazy col_expand materialization is an identity copy (a constant "
                         "offset, one row or the full width)", fix=", make it one row or the "
                                                                    "full width"),
    Role.HAND_BACK: dict(need=f"the window the function hands back of it is {ALIGN_BYTES}-byte "
                         "aligned where it lies (the window's offset plus the function's, at the "
                         f"window's pitch), or the window is dense at a {ALIGN_BYTES}-byte "
                         "aligned address", fix=""),
    None: dict(need=f"its address is {ALIGN_BYTES}-byte aligned", fix=""),
}


Fields = Callable[[Function, Encoding, eb.EGraph, object], dict[str, object]]

#: violation relation -> (the sites it is keyed by, in program order; their message fields)
SITES: dict[str, tuple[Callable[[Encoding], list], Fields]] = {
    "ColxViolation": (lambda enc: enc.raw_colx, _raw_use),
    "WindowWriteViolation": (lambda enc: enc.windows, _written),
    "WindowUnclassifiedViolation": (lambda enc: enc.windows, _unclassified),
    "RawVecViolation": (lambda enc: enc.raw_vec, _raw_use),
    "CubeCallViolation": (lambda enc: [u for u in enc.uses if u.ctx is Role.CUBE_CALL], _cube_call),
    "EscapeWriteViolation": (lambda enc: [u for u in enc.uses if u.key in enc.keep_only],
                             _escape_write),
    "StaleEscapeViolation": (lambda enc: [u for u in enc.uses if u.key in enc.stale],
                             _stale_escape),
    "EscapeViewViolation": (lambda enc: [u for u in enc.uses if u.key in enc.view_only],
                            _escape_view),
    "CallWriteViolation": (lambda enc: [u for u in enc.uses if u.key in enc.call_keep],
                           _call_write),
    "CallValueViolation": (lambda enc: enc.call_values, _call_value),
}


#: every violation relation -> (its rule, its message), in the order they are reported
VIOLATIONS = {**CHECKS, **call_rules.VIOLATIONS}


def raise_violations(fn: Function, enc: Encoding, eg: eb.EGraph) -> None:
    """Raise ``ValueError`` for the first violation fact, relation by relation, in program
    order."""
    held = _held(eg, list(VIOLATIONS))
    for relation, (_rule, message) in VIOLATIONS.items():
        if relation not in held:
            continue
        sites, fields = SITES[relation]
        for site in sites(enc):
            if has_fact(eg, relation, site.key):
                raise ValueError(message.format(**fields(fn, enc, eg, site)) + _frame_note(enc, site))


def _frame_note(enc: Encoding, site) -> str:
    """Where the parameter the violating window is taken of lies, when its calls frame it
    (``ir.frames``): its windows were judged there, not as a tile of its own."""
    st = enc.storage
    if st is None or not st.frames:
        return ""
    w = site.window if isinstance(site, UseSite) else enc.window_of.get(getattr(site, "var", None))
    base = w.root.src if w is not None else None
    lay = st.layout(base) if base is not None and base not in st.frames else None
    param = lay.root if lay is not None else base
    frame = st.frames.get(param)
    if frame is None:
        return ""
    return (f" (Parameter {param.name!r} is where every call passes it: "
            f"{frame.describe(param.type.dtype.storage_bits)}; its windows are judged there.)")


def _held(eg: eb.EGraph, relations: list[str]) -> set[str]:
    """The ``relations`` that may hold a row (a relation with none needs no site lookup: a
    kernel with thousands of windows and no violation costs one size query per relation, all
    in one egglog call)."""
    out = eg.run_program(*[eb.PrintSize(SPAN, r) for r in relations])
    if len(out) != len(relations):  # (not one size per relation: look every one up)
        return set(relations)
    return {r for r, o in zip(relations, out) if getattr(o, "size", 1) != 0}
