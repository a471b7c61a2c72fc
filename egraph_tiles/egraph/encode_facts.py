"""What the encoder reads off a function before and after stating it, none of it per encoder:
which calls are canonical windows or valid_shape / drop_dims slices, the storage edges and
writes it states, the values that may name a Mat or a valid_shape / drop_dims slice, and the
storage edges a write can travel (:func:`written_edges`).
"""

from __future__ import annotations

from collections import defaultdict

from ..ir import ops
from ..ir.effects import Edge, Effects, Share, Write, call_of, call_operands
from ..ir.exprs import Call, Const, Expr, ListExpr, Var, VarRef, const_int
from ..ir.frames import framed_operand, param_frames
from ..ir.storage import MAX_ARM_STATES, Storage
from ..ir.stmts import AssignStmt, EvalStmt, Function, Program, Stmt, child_bodies
from ..ir.types import MemorySpace, TileType

# enum members read once (per storage edge below)
_VIEW, _SLICE, _ALIAS = Share.VIEW, Share.SLICE, Share.ALIAS


def canonical_slice(call: Call) -> tuple[Var, int, int, Expr, Expr] | None:
    """Source, rows, columns, row offset and column offset of a plain 3-argument
    ``tile.slice(src, shape, offset)`` (no valid_shape / drop_dims; a ``pad_value`` alone pads
    nothing, every element being valid) with a constant 2-d shape and a 2-d offset; None for any
    other call."""
    if call.op != "tile.slice" or len(call.args) != 3 or not _plain_kwargs(call):
        return None
    src, shape, off = call.args
    # (exact types: no subclass of these expression nodes exists)
    if not (type(src) is VarRef and isinstance(src.var.type, TileType)):  # type: ignore[attr-defined]
        return None
    if type(shape) is not ListExpr or type(off) is not ListExpr:
        return None
    dims, offs = shape.items, off.items  # type: ignore[attr-defined]
    if len(dims) != 2 or len(offs) != 2:
        return None
    rows, cols = dims
    # (a plain integer constant read inline, :func:`const_int` for any other dim)
    rows = rows.value if type(rows) is Const and type(rows.value) is int else const_int(rows)
    cols = cols.value if type(cols) is Const and type(cols.value) is int else const_int(cols)
    if rows is None or cols is None:
        return None
    return src.var, rows, cols, offs[0], offs[1]  # type: ignore[attr-defined]


def _plain_kwargs(call: Call) -> bool:
    """Whether a slice's keywords leave it a plain window: none, or only ``pad_value`` (the
    value of elements outside a valid_shape, of which a slice without one has none)."""
    return all(k == "pad_value" for k, _ in call.kwargs)


def constant_idx(e: object) -> bool:
    """Whether :meth:`Encoder.idx` of ``e`` (None: not taken) is a literal's number, the same on
    every call once it was stated."""
    return e is None or type(e) is Const and type(e.value) is int  # type: ignore[attr-defined]


def has_slice(fn: Function) -> bool:
    """Whether the function has any ``tile.slice`` (canonical, or with valid_shape / drop_dims)."""
    return _has_slice(fn.body)


def _has_slice(body: list[Stmt]) -> bool:
    for s in body:  # (by exact type, without a generator step per statement)
        kind = type(s)
        if kind is AssignStmt:
            if type(s.value) is Call and s.value.op == "tile.slice":  # type: ignore[attr-defined]
                return True
        elif kind is not EvalStmt and any(_has_slice(b) for b in child_bodies(s)):
            return True
    return False


def raw_slice_parts(call: Call) -> tuple[Var, ListExpr, ListExpr] | None:
    """Source, shape and offset of a ``tile.slice`` with valid_shape / drop_dims (not a canonical
    window), when they are a tile variable and two lists; otherwise None (not checked)."""
    if call.op != "tile.slice" or not (len(call.args) > 3 or not _plain_kwargs(call)) \
            or len(call.args) < 3:
        return None
    src, shape, off = call.args[:3]
    if not (isinstance(src, VarRef) and isinstance(src.var.type, TileType)
            and isinstance(shape, ListExpr) and isinstance(off, ListExpr)):
        return None
    return src.var, shape, off


def operand_context(op_name: str, index: int | None) -> ops.Role | None:
    """The use context of argument ``index`` of a call, read from the registry."""
    return ops.operand_role(op_name, index)


def by_stmt(items: list) -> dict[Stmt, list]:
    """The storage edges (or writes) of each statement, in order."""
    out: dict[Stmt, list] = {}
    for x in items:
        at = out.get(x.stmt)
        if at is None:
            out[x.stmt] = [x]
        else:
            at.append(x)
    return out


def stated(fx: Effects) -> tuple[list[Edge], list[Write]]:
    """The storage edges and writes of ``fx`` :class:`Encoder` states anything about
    (a store's write and edge are into a tensor).  A slice is a window and an alias a use, never
    a storage edge here; an edge whose ends are not both tiles, or a write of a non-tile, is
    stated as nothing (:meth:`Encoder.edge`, :meth:`Encoder.effects`) — but a view edge still
    carries a valid_shape / drop_dims slice to its result (``Encoder._raw_view``)."""
    edges = [e for e in fx.edges if e.kind is _VIEW or e.kind is not _SLICE and e.kind is not _ALIAS
             and type(e.dst.type) is TileType and type(e.src.type) is TileType]
    return edges, [w for w in fx.writes if type(w.var.type) is TileType]


def written_edges(rows: dict[str, list[tuple]],
                  arm_edges: list[tuple[int, int, tuple[str, int]]] = ()) -> tuple[list[tuple], list[tuple]]:
    """The storage edges ``(ViewEdgeRow d s)`` of ``rows`` a write can travel — those leaving a
    tile some written tile (``WriteRow`` / ``MayWriteRow`` / ``ScalarWriteRow``) reaches
    through edges — and the crossings ``(ArmEdgeRow n d s)`` of the if merges ``arm_edges``
    (``d`` takes ``s`` only on arm ``(condition, 0 / 1)``) that write ``n`` makes on a route
    some run takes: two ifs testing the same condition of the scalar parameters take the same
    arm, so a route through opposite arms of them is followed no further (``Storage.flows_to``).
    The only rules reading an edge carry a write from ``d`` to ``s`` (``rules.checks``
    ``written-through-view`` and its twins), so no rule can fire on any other edge (two thirds
    of them at 1,000 statements).  The rules see e-classes, not numbers: a leaf's class holds
    no other tile, a window's may hold other windows (equal ``Win`` terms, also after peeling
    or equal offsets), all of its shape — so reaching a window reaches every window of its
    shape, by any route (its arms forgotten)."""
    sources = [(n, t) for table in ("WriteRow", "MayWriteRow", "ScalarWriteRow")
               for n, t in rows.get(table, ())]
    if not sources:
        return [], []
    edges = rows["ViewEdgeRow"]
    out: defaultdict[int, list[tuple[int, tuple[str, int] | None]]] = defaultdict(list)
    for d, s in (*edges, *rows.get("FramedEdgeRow", ())):  # (a framed call's result: rules.checks)
        out[d].append((s, None))
    for d, s, arm in arm_edges:
        out[d].append((s, arm))
    shape: dict[int, tuple[int, int]] = {}
    of_shape: defaultdict[tuple[int, int], list[int]] = defaultdict(list)
    for k, _, _, _, h, w in rows.get("WinRow", ()):
        shape[k] = hw = (h, w)
        of_shape[hw].append(k)

    def reach(starts: list[int], track: bool) -> tuple[set[int], set[tuple[int, int]]]:
        """The tiles reached from ``starts`` and the arm edges crossed (each route's arms
        told apart when ``track``, until there are too many of them)."""
        seen: set = set()
        todo: list[tuple[int, frozenset]] = [(t, frozenset()) for t in starts]
        tiles: set[int] = set()
        crossed: set[tuple[int, int]] = set()
        while todo:
            t, taken = todo.pop()
            if (t, taken) in seen:
                continue
            seen.add((t, taken))
            if track and len(seen) > MAX_ARM_STATES:
                return reach(starts, False)
            hw = shape.get(t)
            for u in (t,) if hw is None else of_shape[hw]:
                now = taken if u == t else frozenset()
                tiles.add(u)
                for s, arm in out.get(u, ()):
                    if arm is not None:
                        if track and (arm[0], 1 - arm[1]) in now:
                            continue
                        crossed.add((u, s))
                        todo.append((s, now | {arm} if track else now))
                    else:
                        todo.append((s, now))
        return tiles, crossed

    reached, crossed = reach([t for _, t in sources], False)
    if not crossed:  # (no route crosses an if merge of a known condition: one route is all)
        return [e for e in edges if e[0] in reached], []
    armed = []
    for n, t in sources:
        armed += [(n, d, s) for d, s in sorted(reach([t], True)[1])]
    return [e for e in edges if e[0] in reached], armed


def mat_named(fx: Effects, storage: Storage) -> set[Var]:
    """The values that may name a Mat slice but are not one (:meth:`Encoder.cube_fold`)."""
    mats = {e.dst for e in fx.edges if e.kind is _SLICE and isinstance(e.dst.type, TileType)
            and e.dst.type.memory is MemorySpace.Mat}
    if not mats:
        return set()
    return {v for v, names in storage.origins.items() if v not in mats and names & mats}


def raw_origins(fx: Effects, storage: Storage, kept: bool = False) -> dict[Var, list[Var]]:
    """Each value that may name a valid_shape / drop_dims slice: those slices (``kept``: each
    value that may still be one, ``Storage.kept_origins``)."""
    raw = set()
    for e in fx.edges:
        if e.kind is _SLICE:
            call = call_of(e.stmt)
            if call is not None and canonical_slice(call) is None and raw_slice_parts(call):
                raw.add(e.dst)
    if not raw:
        return {}
    out = {}
    for v, names in (storage.kept_origins if kept else storage.origins).items():
        got = [x for x in names if x in raw]
        if got:
            out[v] = sorted(got, key=lambda x: fx.defs[x][0])
    return out


def framed_arguments(fx: Effects, program: Program | None) -> set[Var]:
    """The values the function passes where a program function's parameter is framed by its
    calls (``ir.frames``): that function judges its windows of them where they lie as written."""
    if program is None or not param_frames(program):
        return set()
    return {a.var for s in fx.stmts if (call := call_of(s)) is not None
            for k, a in call_operands(call) if type(a) is VarRef and framed_operand(program, call.op, k)}


def reached_back(fx: Effects, values: set[Var], kind: Share) -> set[Var]:
    """``values`` and every value they are made from along storage edges of ``kind``."""
    into: dict[Var, list[Var]] = {}
    for e in fx.edges:
        if e.kind is kind:
            into.setdefault(e.dst, []).append(e.src)
    out, todo = set(values), list(values)
    while todo:
        for v in into.get(todo.pop(), ()):
            if v not in out:
                out.add(v)
                todo.append(v)
    return out


def judged_from_storage(fx: Effects, storage: Storage, framed: set[Var] = frozenset()) -> set[Var]:  # type: ignore[assignment]
    """The values whose storage, as written, some window is judged by: a value a slice is taken
    of (or that is passed where a parameter is ``framed``) whose own layout the storage analysis
    derives from another's (a view, a carry, a merge: not a root), and every value that reaches
    one through storage edges (a window's escape into a carry, a view, ...).  A copy where such
    a value is handed on would move what those windows name (``Encoder.use``: such an escape
    stays the window itself, or is rejected)."""
    layouts = storage.layouts

    def judged(v: Var) -> bool:  # (the facts ``Encoder.view_facts`` states: row-major ones)
        lay, t = layouts.get(v), v.type
        return lay is not None and isinstance(t, TileType) and len(lay.strides) == 2 \
            and lay.strides[1] == t.dtype.storage_bits

    todo = [e.src for e in fx.edges if e.kind is _SLICE and judged(e.src)] \
        + [v for v in framed if judged(v)]
    if not todo:
        return set()
    into: dict[Var, list[Var]] = {}
    for e in fx.edges:
        into.setdefault(e.dst, []).append(e.src)
    seen: set[Var] = set()
    while todo:
        v = todo.pop()
        if v not in seen:
            seen.add(v)
            todo += into.get(v, ())
    return seen

