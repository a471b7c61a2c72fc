"""Call summaries: what each of a program's own functions does to the storage of the tiles it
receives (:class:`~egraph_tiles.ir.effects.CallSummary`), computed once per program, bottom-up
over the call graph, from each function's memory effects (``ir.effects``) and storage facts
(``ir.storage``).  ``ir.effects`` reads a summary at each call (:func:`function_effects` given
the :class:`Summaries`); it never computes one, so it needs neither this module nor
``ir.storage``.
"""

from __future__ import annotations

from typing import Callable

from . import ops
from .effects import (CallSummary, Edge, Effects, Returned, Share, call_of, call_operands, callee_name,
                      function_effects, param_position)
from .exprs import Call, Expr, ListExpr, Var, VarRef, const_int, const_shape, free_vars
from .stmts import Function, Program, ReturnStmt, walk
from .storage import exact_index, same_layout, storage_of
from .types import TileType


class Summaries:
    """The call summaries of one program's functions, each computed once, on demand, from the
    function's effects (which read its own callees' summaries first: bottom-up over the call
    graph).  A function unknown to the program, abstract, or called inside a recursive cycle
    has none (:meth:`get` is None): its call keeps the conservative effect."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self._done: dict[str, CallSummary | None] = {}
        self._active: set[str] = set()
        #: id of a function -> (the function, its effects with these summaries)
        self._effects: dict[int, tuple[Function, Effects]] = {}
        #: what readers of the summaries derive from them once per program (egraph.calls)
        self.memo: dict[tuple, object] = {}
        self._aliased: dict[str, list[tuple[Var, ...]]] = {}
        self._aliasing: set[str] = set()
        self._plain: dict[int, tuple[Function, Effects]] = {}
        self._sites: dict[str, list[tuple[Function, Call]]] | None = None

    def effects(self, fn: Function) -> Effects:
        """The effects of ``fn`` (a function of the program) with these summaries, computed
        once."""
        got = self._effects.get(id(fn))
        if got is None or got[0] is not fn:
            got = self._effects[id(fn)] = (fn, function_effects(fn, self))
        return got[1]

    def aliased(self, fn: Function) -> list[tuple[Var, ...]]:
        """The groups of ``fn``'s tile parameters that some call in the program binds to tiles
        sharing storage (the same tile, windows of one tile, values the caller's effects cannot
        tell apart, parameters of the caller that are so themselves), computed once, top-down
        over the call graph; in a recursive cycle, all of them."""
        got = self._aliased.get(fn.name)
        if got is not None:
            return got
        tiles = tuple(p.var for p in fn.params if isinstance(p.var.type, TileType))
        if fn.name in self._aliasing:  # (a recursive cycle: any two may share)
            return [tiles] if len(tiles) > 1 else []
        self._aliasing.add(fn.name)
        try:
            got = self._aliased[fn.name] = _aliased_params(self, fn, tiles)
        finally:
            self._aliasing.discard(fn.name)
        return got

    def sites(self, name: str) -> list[tuple[Function, Call]]:
        """The calls of program function ``name`` in the program, with the function making each
        (statement-level calls: ``ir.lift`` names those in a return or yield first)."""
        if self._sites is None:
            self._sites = {}
            for caller in self.program.functions:
                for s in walk(caller.body):
                    call = call_of(s)
                    callee = callee_name(call.op) if call is not None else None
                    if callee is not None:
                        self._sites.setdefault(callee, []).append((caller, call))  # type: ignore[arg-type]
        return self._sites.get(name, [])

    def plain_effects(self, fn: Function) -> Effects:
        """The effects of ``fn`` with every program call opaque (its result may share every tile
        argument's storage), computed once: what :meth:`aliased` reads of a caller."""
        got = self._plain.get(id(fn))
        if got is None or got[0] is not fn:
            got = self._plain[id(fn)] = (fn, function_effects(fn))
        return got[1]

    def get(self, name: str) -> CallSummary | None:
        if name in self._done:
            return self._done[name]
        if name in self._active:  # recursion: the conservative effect for this call
            return None
        try:
            fn = self.program.function(name)
        except KeyError:
            fn = None
        if fn is None or getattr(fn, "abstract", False):
            self._done[name] = None
            return None
        self._active.add(name)
        try:
            # (not kept in ``effects``: a callee in a recursive cycle saw this call unsummarized)
            summary = summarize(fn, function_effects(fn, self, aliased=False))
        finally:
            self._active.discard(name)
        self._done[name] = summary
        return summary


def _aliased_params(sums: Summaries, fn: Function, tiles: tuple[Var, ...]) -> list[tuple[Var, ...]]:
    """:meth:`Summaries.aliased` of ``fn``, its tile parameters ``tiles``."""
    if len(tiles) < 2:
        return []
    names = [p.var.name for p in fn.params]
    group = {v: v for v in tiles}  # (a union-find over the parameters)

    def find(v: Var) -> Var:
        while group[v] is not v:
            v = group[v]
        return v

    for caller, call in sums.sites(fn.name):
        fx = sums.plain_effects(caller)
        # (the caller's own parameters that share storage: one class)
        rep = {fx.storage(p): fx.storage(g[0]) for g in sums.aliased(caller) for p in g}
        by_class: dict[Var, Var] = {}
        for k, a in call_operands(call):
            i = param_position(names, k)
            if type(a) is not VarRef or not isinstance(i, int) or i >= len(fn.params) \
                    or fn.params[i].var not in group:
                continue
            c = fx.storage(a.var)  # type: ignore[attr-defined]
            c = rep.get(c, c)
            p = fn.params[i].var
            if c in by_class:
                group[find(p)] = find(by_class[c])
            else:
                by_class[c] = p
    out: dict[Var, list[Var]] = {}
    for v in tiles:
        out.setdefault(find(v), []).append(v)
    return [tuple(g) for g in out.values() if len(g) > 1]


#: the last program's summaries (the pass reads them for each of its functions)
_LAST: list[Summaries] = []


def call_summaries(program: Program | None) -> Summaries | None:
    """The call summaries of ``program`` (one object per program: the last one is kept)."""
    if program is None:
        return None
    if _LAST and _LAST[0].program is program:
        return _LAST[0]
    sums = Summaries(program)
    _LAST[:] = [sums]
    return sums


#: storage edges along which a value is its source's tile itself (not a window of it)
_WHOLE = frozenset((Share.ALIAS, Share.VIEW, Share.WRITEBACK, Share.LOOP_INIT, Share.LOOP_BACK,
                    Share.LOOP_RESULT, Share.IF_RESULT))


def whole_tile(fx: Effects, v: Var, *more: Var) -> set[Var]:
    """``v`` (and ``more``) and every value that is such a tile itself: through aliases, views,
    write-backs, loop carries, ``if`` merges and program function results that are the
    argument's tile."""
    return reached(fx, {v, *more}, lambda e: e.kind in _WHOLE or e.kind is Share.CALL and e.whole)


def reached(fx: Effects, starts: set[Var], follow: Callable[[Edge], bool]) -> set[Var]:
    """``starts`` and every value made from them along the storage edges ``follow`` accepts
    (source to destination, transitively)."""
    by_src: dict[Var, list[Var]] = {}
    for e in fx.edges:
        if follow(e):
            by_src.setdefault(e.src, []).append(e.dst)
    out = set(starts)
    todo = list(out)
    while todo:
        for d in by_src.get(todo.pop(), ()):
            if d not in out:
                out.add(d)
                todo.append(d)
    return out


def constant_window(call: Call | None) -> tuple[Var, tuple[int, int], tuple[int, int]] | None:
    """Source, constant 2-d shape and 2-d offset of a plain ``tile.slice`` (any spelling, no
    valid_shape / drop_dims) with a constant shape; an offset that is not constant is None.
    None for anything else."""
    if call is None or call.op != "tile.slice":
        return None
    try:
        args = ops.bind(call).args
    except ops.OpTypeError:
        return None
    src, shape, off = args.get("src"), args.get("shape"), args.get("offset")
    if set(args) != {"src", "shape", "offset"} or type(src) is not VarRef \
            or not isinstance(shape, ListExpr) or not isinstance(off, ListExpr) \
            or len(shape.items) != 2 or len(off.items) != 2:
        return None
    h, w, r, c = (const_int(d) for d in (*shape.items, *off.items))
    if h is None or w is None:
        return None
    return src.var, (h, w), (r, c)  # type: ignore[return-value]


def _window_of(fx: Effects, into: dict[Var, list[Edge]], v: Var, whole: set[Var]
               ) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The window of constant shape of the tile ``whole`` names that ``v`` is (a chain of
    aliases, same-layout views, slices and calls returning such a window, offsets added; an offset not constant
    is None), if it is one."""
    shape = None
    r: int | None = 0
    c: int | None = 0
    seen = set()
    while v not in whole:
        es = into.get(v, ())
        if len(es) != 1 or v in seen:
            return None
        seen.add(v)
        e = es[0]
        if e.kind is Share.SLICE:
            got = constant_window(call_of(e.stmt))
            if got is None:
                return None
            _src, hw, (dr, dc) = got
        elif e.kind is Share.CALL and e.window is not None:
            hw, (dr, dc) = e.window
        elif e.kind is Share.ALIAS or e.kind is Share.VIEW and same_layout(e):
            v = e.src  # (the same elements: an alias, a set_validshape view)
            continue
        else:
            return None
        shape = shape or hw
        r = None if r is None or dr is None else r + dr
        c = None if c is None or dc is None else c + dc
        v = e.src
    return (shape, (r, c)) if shape is not None else None


def summarize(fn: Function, fx: Effects) -> CallSummary:
    """The :class:`CallSummary` of ``fn`` from its effects ``fx``."""
    params = [(k, p.var) for k, p in enumerate(fn.params) if isinstance(p.var.type, TileType)]
    written = {fx.storage(w.var) for w in fx.writes}
    writes = frozenset(k for k, v in params if fx.storage(v) in written)
    into: dict[Var, list[Edge]] = {}
    for e in fx.edges:
        into.setdefault(e.dst, []).append(e)
    wholes = {k: whole_tile(fx, v) for k, v in params}
    st = storage_of(fn, fx)

    def returned(e: Expr) -> set[Returned]:
        if type(e) is VarRef:
            v = e.var  # type: ignore[attr-defined]
            out = set()
            for k, pv in params:
                if fx.same_storage(v, pv):
                    whole = v in wholes[k]
                    at = exact_index(st, v, pv)
                    window = None if whole else _window_of(fx, into, v, wholes[k])
                    dims = const_shape(v.type) if isinstance(v.type, TileType) else None
                    if not whole and window is None and at is not None and dims is not None \
                            and len(at) == 2 and len(dims) == 2:
                        # (a carry or merge of one window: laid out as the parameter from ``at``)
                        window = (dims, at)
                    out.add(Returned(k, whole, window, at))
            return out
        vs = [v for v in free_vars(e) if isinstance(v.type, TileType)]
        return {Returned(k) for k, pv in params if any(fx.same_storage(v, pv) for v in vs)}

    rets = [s for s in walk(fn.body) if isinstance(s, ReturnStmt)]
    n = max((len(s.values) for s in rets), default=0)
    results: list[set[Returned]] = [set() for _ in range(n)]
    for s in rets:
        if len(s.values) != n:  # (not one shape of result: every element may be anything)
            for res in results:
                res.update(Returned(k) for k, _ in params)
        for i, e in enumerate(s.values):
            results[i] |= returned(e)
    return CallSummary(fn.name, tuple(p.var.name for p in fn.params),
                       tuple(tuple(sorted(_agreed(r), key=lambda x: (x.param, x.whole,
                                                                       x.window or ())))
                             for r in results), writes)


def _agreed(rs: set[Returned]) -> set[Returned]:
    """``rs`` with entries that differ only in ``at`` (returns that name the same part of a
    parameter laid out differently) merged into one with no ``at``."""
    by: dict[tuple, set] = {}
    for r in rs:
        by.setdefault((r.param, r.whole, r.window), set()).add(r.at)
    return {Returned(k[0], k[1], k[2], next(iter(ats)) if len(ats) == 1 else None)
            for k, ats in by.items()}
