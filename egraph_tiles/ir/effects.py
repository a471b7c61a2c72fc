"""Memory effects of one function, computed once and read by every stage.

* **Program points**: every statement gets its pre-order number (a compound statement before its
  body), the last point inside it, its block path (for scoping) and its enclosing loops.
* **Storage sharing**: which values live in another value's storage, as :class:`Edge` s — a
  plain alias, a slice (a window of its source), a view (registry ``inherits_input_memory``), the
  result of a write-back op (``reuses_arg``), a loop carry (iter-arg <- initializer, iter-arg <-
  the trailing yield, result <- iter-arg) and an ``if`` result (<- each arm's yield).  Their
  union gives the storage classes.
* **Writes**: every operand written (registry ``reuses_arg`` and ``also_writes``, positional or
  keyword) and every tile operand of an opaque call (it may write any of them), at its program
  point.
* **Calls of the program's own functions** (``self.f(...)``) read the callee's
  :class:`CallSummary` (``ir.summaries``, computed once per program, bottom-up): the
  call's result (and each element of a returned tuple, through ``pair[k]``) gets a ``CALL``
  edge to every argument whose storage it may share, with the window when the callee returns a
  window of constant shape of that parameter; the call writes exactly the arguments the callee
  may write (directly, through a slice, a view, an alias or a further call).  A call of a
  function the program does not define or that has no body, or a call inside a recursive cycle,
  keeps the conservative effect: it may write every tile operand, and its result may share the
  storage of every tile operand.

An op's effect is the registry's declaration, read in one place (:func:`op_effect`).  Everything is keyed by
the ``Var`` / ``Stmt`` objects themselves (identity), never by ``id()`` or a counter.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, NamedTuple

from . import ops
from .exprs import Call, Expr, TupleItem, Var, VarRef, const_int, free_vars, sub_exprs
from .format import format_expr
from .stmts import (AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ForStmt, Function, IfStmt,
                    ScopeStmt, Stmt, WhileStmt, YieldStmt, child_bodies)
from .types import ScalarType, TileType

if TYPE_CHECKING:  # (ir.summaries computes the summaries from these effects)
    from .summaries import Summaries

#: how a call names one of the program's own functions: ``self.f(...)``
PREFIX = "self."


def callee_name(op: str) -> str | None:
    """The program function a call names (``self.f(...)``), if any."""
    return op[len(PREFIX):] if op.startswith(PREFIX) else None


def op_effect(name: str) -> ops.Effect | None:
    """The memory effect the registry declares for op ``name`` (a fresh buffer or value, a view
    of operand ``of``, a write into operand ``of``); None for an opaque (unregistered) or
    unclassified op, which may write every operand."""
    op = ops.lookup(name)
    return None if op is None else op.effect


def also_written(name: str) -> tuple[int, ...]:
    """The operands op ``name`` writes besides the one its result names (registry
    ``also_writes``)."""
    op = ops.lookup(name)
    return () if op is None else op.also_writes


def operand_index(call: Call, keyword: str) -> int | str:
    """The operand number of keyword argument ``keyword``: its parameter position for a
    registered op, else the name itself."""
    op = ops.lookup(call.op)
    return op.params.index(keyword) if op is not None and keyword in op.params else keyword


def param_position(params: Sequence[str], key: int | str) -> int | str:
    """The parameter number of operand ``key`` of a program function whose parameters are
    named ``params``: a position as it is, a keyword argument the position of the parameter
    of its name (the name itself when there is none)."""
    if isinstance(key, int) or key not in params:
        return key
    return list(params).index(key)


def call_operands(call: Call) -> list[tuple[int | str, Expr]]:
    """``(operand index, argument)`` for every argument, keywords numbered by
    :func:`operand_index`."""
    out: list[tuple[int | str, Expr]] = list(enumerate(call.args))
    return out + [(operand_index(call, k), v) for k, v in call.kwargs]


def operand(call: Call, index: int) -> Var | None:
    """The variable passed as operand ``index`` (positionally or by keyword), if any."""
    if index < len(call.args):
        a = call.args[index]
        return a.var if isinstance(a, VarRef) else None
    for k, a in call.kwargs:
        if operand_index(call, k) == index and isinstance(a, VarRef):
            return a.var
    return None


def call_of(s: Stmt) -> Call | None:
    """The call a statement evaluates at top level (an assigned call or a bare call)."""
    kind = type(s)
    if kind is AssignStmt:  # the common cases first, by exact type
        return s.value if isinstance(s.value, Call) else None  # type: ignore[attr-defined]
    if kind is EvalStmt:
        return s.call  # type: ignore[attr-defined]
    if isinstance(s, AssignStmt) and isinstance(s.value, Call):
        return s.value
    if isinstance(s, EvalStmt):
        return s.call
    return None


def _leaves_early(body: list[Stmt]) -> bool:
    """Whether a trip of the loop with this body may end before its trailing yield: a
    ``break`` or ``continue`` of this loop (not of a loop nested in it)."""
    for s in body:
        if isinstance(s, (BreakStmt, ContinueStmt)):
            return True
        if not isinstance(s, (ForStmt, WhileStmt)) and any(_leaves_early(b)
                                                          for b in child_bodies(s)):
            return True
    return False


def trailing_yield(body: list[Stmt]) -> YieldStmt | None:
    return body[-1] if body and isinstance(body[-1], YieldStmt) else None


def yielded_var(body: list[Stmt], k: int) -> Var | None:
    """The variable the trailing yield of ``body`` passes as value ``k``, if any."""
    y = trailing_yield(body)
    if y is None or k >= len(y.values) or not isinstance(y.values[k], VarRef):
        return None
    return y.values[k].var


def condition_key(fx: "Effects", s: Stmt) -> str | None:
    """The condition of ``if`` statement ``s`` as text, when it is arithmetic over the
    function's scalar parameters only: never reassigned, so two ifs testing it take the same arm
    in any run; None otherwise (a call in it may read memory written between the two: a
    ``tile.read`` of a parameter tile)."""
    if not isinstance(s, IfStmt) or any(v in fx.defs or not isinstance(v.type, ScalarType)
                                        for v in free_vars(s.cond)) \
            or any(type(e) is Call for e in sub_exprs(s.cond)):
        return None
    return format_expr(s.cond)


def branch_arm(fx: "Effects", s: Stmt, y: Var, k: int) -> tuple[str, int] | None:
    """The arm of ``if`` statement ``s`` whose trailing yield alone passes ``y`` as value ``k``,
    as ``(condition_key, 0 then / 1 else)``; None when both arms do or the condition has no
    key."""
    key = condition_key(fx, s)
    if key is None:
        return None
    then, other = yielded_var(s.then_body, k) is y, yielded_var(s.else_body, k) is y  # type: ignore[attr-defined]
    return None if then == other else (key, 0 if then else 1)


class Share(Enum):
    """Why ``Edge.dst`` lives in ``Edge.src``'s storage."""

    ALIAS = "alias"  # dst = src
    SLICE = "slice"  # dst = tile.slice(src, ...): a window of src
    VIEW = "view"  # an op whose result is a view of operand ``index`` (reshape, ...)
    WRITEBACK = "writeback"  # an op that writes its result back into operand ``index``
    LOOP_INIT = "loop_init"  # iter-arg ``index`` <- its initializer
    LOOP_BACK = "loop_back"  # iter-arg ``index`` <- the trailing yield's value ``index``
    #: result ``index`` <- iter-arg ``index``; the trailing yield's value ``index`` when the loop
    #: runs at least once (constant bounds), its initializer when it never runs
    LOOP_RESULT = "loop_result"
    IF_RESULT = "if_result"  # result ``index`` <- an arm's yield value ``index``
    #: a program function's result (or element k of a returned tuple, at the statement
    #: ``x = pair[k]``) <- argument ``index``, whose storage the callee may return (its tile:
    #: ``Edge.whole``; a part of it: ``Edge.window`` when it is exactly a window of it)
    CALL = "call"
    ITEM = "item"  # dst = tup[index] <- a tuple whose storage is not known element by element
    #: the result of an op the registry cannot classify <- its tile operand ``index``: it may be
    #: that operand or a view of it (its storage is unknown, never a fresh buffer's)
    OPAQUE = "opaque"


#: (module constants for the kinds the walk records per statement: an enum member looked up on
#: its class costs ~0.15 us)
_ALIAS, _WRITEBACK, _LOOP_INIT, _LOOP_BACK, _LOOP_RESULT, _IF_RESULT = (
    Share.ALIAS, Share.WRITEBACK, Share.LOOP_INIT, Share.LOOP_BACK, Share.LOOP_RESULT,
    Share.IF_RESULT)


#: (Edge and Write are not ``frozen``: a frozen dataclass's constructor costs three times as much,
#: one per statement or more; nothing assigns their fields after construction)
@dataclass(eq=False, slots=True)
class Edge:
    kind: Share
    dst: Var
    src: Var
    stmt: Stmt
    index: int = 0
    #: (``CALL`` only) the window of the argument the result is, when the callee returns exactly a
    #: window of constant shape: ``((rows, cols), (row offset, column offset))``, an offset that
    #: is not constant None
    window: tuple[tuple[int, int], tuple[int | None, int | None]] | None = None
    #: (``CALL`` only) whether the result is the argument's tile itself (an alias, a view or a
    #: carry of the parameter in the callee), not a part of it
    whole: bool = False
    #: (``CALL`` only) when the callee's storage analysis proves the result is exactly the
    #: argument's elements from this index on, with the argument's own strides (``Returned.at``)
    at: tuple[int, ...] | None = None


@dataclass(eq=False, slots=True)
class Write:
    """Operand ``index`` of ``stmt``'s call (``op``) may be written: ``var``'s storage."""

    stmt: Stmt
    point: int
    var: Var
    op: str
    index: int | str
    #: not a registry ``reuses_arg``: an unregistered op (assumed to write), or a call of a
    #: program function whose summary says it may write this argument
    opaque: bool


class Point(NamedTuple):
    """A statement's place: pre-order number, last number inside it, block path, enclosing
    loops (their numbers, outermost first)."""

    pos: int
    end: int
    path: tuple[int, ...]
    loops: tuple[int, ...]


@dataclass(eq=False)
class Effects:
    """The memory effects of one function (see the module docstring)."""

    points: dict[Stmt, Point] = field(default_factory=dict)
    #: statement at each program point (index 0 unused)
    stmts: list[Stmt | None] = field(default_factory=lambda: [None])
    #: where each variable is defined: (program point, block path it is visible in)
    defs: dict[Var, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    #: the op names of the statement-level calls (assigned or bare; not those nested in a value)
    call_ops: set[str] = field(default_factory=set)
    #: the compound statement whose nested body is each block of a ``Point.path`` (block 0, the
    #: function's body, has none)
    blocks: list[Stmt | None] = field(default_factory=lambda: [None])
    _parent: dict[Var, Var] = field(default_factory=dict)
    _write_points: dict[Var, list[int]] = field(default_factory=dict)

    # ------------------------------------------------------------------ program points
    def point(self, s: Stmt) -> Point:
        return self.points[s]

    @property
    def size(self) -> int:
        """The number of statements (program points)."""
        return len(self.stmts) - 1

    def stmt_at(self, pos: int) -> Stmt:
        s = self.stmts[pos]
        assert s is not None
        return s

    def loop_end(self, loop_pos: int) -> int:
        return self.points[self.stmt_at(loop_pos)].end

    def visible(self, v: Var, pos: int, path: tuple[int, ...]) -> bool:
        """Whether ``v`` may be read at point ``pos`` in block ``path`` (parameters always)."""
        d = self.defs.get(v)
        if d is None:
            return True
        return d[0] < pos and path[:len(d[1])] == d[1]

    def enclosing_loops(self, s: Stmt) -> list[ForStmt | WhileStmt]:
        """The loops around ``s``, outermost first."""
        return [self.stmt_at(p) for p in self.points[s].loops]  # type: ignore[misc]

    @staticmethod
    def trip_count(loop: Stmt) -> int | None:
        """Iterations of a ``for`` loop with constant bounds and a positive step; else None."""
        if not isinstance(loop, ForStmt):
            return None
        a, b, c = const_int(loop.start), const_int(loop.stop), const_int(loop.step)
        if a is None or b is None or c is None or c <= 0:
            return None
        return max(0, -(-(b - a) // c))

    def trips(self, s: Stmt) -> int | None:
        """How many times ``s`` runs per call of the function: the product of the trip counts
        of its enclosing loops (1 outside any loop); None when one of them is not constant."""
        n = 1
        for loop in self.enclosing_loops(s):
            t = self.trip_count(loop)
            if t is None:
                return None
            n *= t
        return n

    # ------------------------------------------------------------------ storage
    def storage(self, v: Var) -> Var:
        """The representative of ``v``'s storage class."""
        p = self._parent
        up = p.get(v)
        if up is None:
            return v
        if up not in p:  # (the usual case once compressed: one step to the root)
            return up
        root = v
        while p.get(root, root) is not root:
            root = p[root]
        while v is not root:  # path compression
            nxt = p.get(v, v)
            p[v] = root
            v = nxt
        return root

    def same_storage(self, a: Var, b: Var) -> bool:
        return self.storage(a) is self.storage(b)

    def share(self, vs: Sequence[Var]) -> None:
        """Take the values ``vs`` for one storage class (parameters some call binds to tiles
        that share storage: a write into one may change what another reads)."""
        root = self.storage(vs[0])
        for v in vs[1:]:
            r = self.storage(v)
            if r is root:
                continue
            self._parent[r] = root
            pts = self._write_points.pop(r, None)
            if pts:
                self._write_points[root] = sorted(self._write_points.get(root, []) + pts)

    def written_in(self, v: Var, lo: int, hi: int) -> bool:
        """Whether something may write ``v``'s storage at a point in ``(lo, hi]``."""
        pts = self._write_points.get(self.storage(v))
        if pts is None:  # (the usual case: nothing writes the class)
            return False
        i = bisect.bisect_right(pts, lo)
        return i < len(pts) and pts[i] <= hi

    def written_before_use(self, v: Var, after: int, after_loops: tuple[int, ...], use: Stmt,
                           including_use: bool = False) -> bool:
        """Whether ``v``'s storage may be written after point ``after`` (inside loops
        ``after_loops``) and before ``use`` reads it: up to ``use`` (or through it), and, when
        ``use`` sits in loops that do not enclose ``after``, through the end of the outermost
        such loop (a later iteration's write precedes the next read)."""
        q = self.points[use]
        end = q.pos if including_use else q.pos - 1
        if q.loops != after_loops:  # (the same loops: none is outer)
            outer = [lp for lp in q.loops if lp not in after_loops]
            if outer:
                end = max(end, self.loop_end(min(outer)))
        return self.written_in(v, after, end)

    def written_in_loop(self, v: Var, loop: Stmt) -> bool:
        """Whether anything in ``loop``'s body may write ``v``'s storage."""
        p = self.points[loop]
        return self.written_in(v, p.pos, p.end)

    def writes_into_tile(self) -> bool:
        """Whether a registered op writes back into a tile operand."""
        return any(not w.opaque and isinstance(w.var.type, TileType) for w in self.writes)


#: a Point without NamedTuple's keyword-argument constructor (one per statement)
_new_point = tuple.__new__
#: :meth:`_Builder.op_info` of an op that neither writes an operand nor views one
_INERT = (False, None, None)


class _Builder:
    def __init__(self, summaries: Summaries | None = None) -> None:
        self.fx = Effects()
        #: op name -> :meth:`op_info`, read once per op name rather than once per call
        self._ops: dict[str, tuple[bool, int | None, Share | None]] = {}
        #: the program's call summaries (None: a function read alone, every call opaque)
        self.summaries = summaries
        #: a tuple-valued result of a program function call -> (the call, the callee's summary,
        #: its operands by parameter number): ``pair[k]`` reads element ``k``'s sharing
        self._tuples: dict[Var, tuple[Call, CallSummary | None, dict[int, Var]]] = {}

    def body(self, stmts: list[Stmt], path: tuple[int, ...], loops: tuple[int, ...]) -> None:
        fx = self.fx
        order, points, defs, known = fx.stmts, fx.points, fx.defs, self._ops
        for s in stmts:
            kind = type(s)
            if kind is AssignStmt:  # the common case first, inline (no statement subclasses)
                p = len(order)  # (its point: the next index)
                order.append(s)
                points[s] = _new_point(Point, (p, p, path, loops))
                target = s.target  # type: ignore[attr-defined]
                defs[target] = (p, path)
                v = s.value  # type: ignore[attr-defined]
                if type(v) is Call:
                    info = known.get(v.op) or self.op_info(v.op)
                    if info is not _INERT:  # (most calls: a fresh result, no write)
                        self.call(s, p, v, target, info)
                elif type(v) is VarRef:
                    fx.edges.append(Edge(_ALIAS, target, v.var, s))  # type: ignore[attr-defined]
                elif type(v) is TupleItem:
                    self.item(s, target, v)
            elif kind is EvalStmt or kind is YieldStmt:
                p = len(order)
                order.append(s)
                points[s] = _new_point(Point, (p, p, path, loops))
                if kind is EvalStmt:  # (a yield: no body, nothing defined, no call)
                    self.call(s, p, s.call, None, self.op_info(s.call.op))  # type: ignore[attr-defined]
            else:
                self.compound(s, path, loops)

    def compound(self, s: Stmt, path: tuple[int, ...], loops: tuple[int, ...]) -> None:
        """A statement other than an assignment or a bare call: its point covers its body."""
        fx = self.fx
        p = len(fx.stmts)  # (its point: the next index)
        fx.stmts.append(s)
        bodies = child_bodies(s)
        if not bodies:  # a yield, a return, ...: no body, nothing defined, no call
            fx.points[s] = _new_point(Point, (p, p, path, loops))
            return
        edges, defs = fx.edges, fx.defs
        loop = isinstance(s, (ForStmt, WhileStmt))
        if loop:
            for i, (ia, init) in enumerate(zip(s.iter_args, s.init_values)):  # type: ignore[union-attr]
                if isinstance(init, VarRef):
                    edges.append(Edge(_LOOP_INIT, ia, init.var, s, i))
        inner = loops + (p,) if loop else loops
        paths = []
        blocks = fx.blocks
        for b in bodies:
            paths.append(path + (len(blocks),))
            blocks.append(s)
            self.body(b, paths[-1], inner)
        end = len(fx.stmts) - 1
        fx.points[s] = _new_point(Point, (p, end, path, loops))
        if loop:
            if isinstance(s, ForStmt):
                defs[s.loop_var] = (p, paths[0])
            # (a break or continue may end a trip before its trailing yield: either value)
            trips = None if _leaves_early(s.body) else Effects.trip_count(s)  # type: ignore[union-attr]
            for i, ia in enumerate(s.iter_args):  # type: ignore[union-attr]
                defs[ia] = (p, paths[0])
                y = yielded_var(s.body, i)  # type: ignore[union-attr]
                if y is not None:
                    edges.append(Edge(_LOOP_BACK, ia, y, s, i))
                if i < len(s.return_vars):  # type: ignore[union-attr]
                    # the result is what the last trip yields: the trailing yield's value when
                    # the loop is known to run, its initializer when known not to, else the
                    # iter-arg (either)
                    init = s.init_values[i] if i < len(s.init_values) else None  # type: ignore[union-attr]
                    src = y if trips and y is not None else \
                        init.var if trips == 0 and isinstance(init, VarRef) else ia
                    edges.append(Edge(_LOOP_RESULT, s.return_vars[i], src, s, i))  # type: ignore[union-attr]
        elif isinstance(s, IfStmt):
            for b in (s.then_body, s.else_body):
                for i, rv in enumerate(s.return_vars):
                    y = yielded_var(b, i)
                    if y is not None:
                        edges.append(Edge(_IF_RESULT, rv, y, s, i))
        elif isinstance(s, ScopeStmt):
            defs[s.var] = (p, paths[0])
        if loop or isinstance(s, IfStmt):
            for v in s.return_vars:  # type: ignore[union-attr]
                defs[v] = (end, path)

    def op_info(self, op: str) -> tuple[bool, int | None, Share | None]:
        """What a call of ``op`` does to memory, from :func:`op_effect`: whether it is opaque
        (may write every tile operand); else the operand ``of`` it writes into (share
        ``WRITEBACK``) or its result is a view of (``SLICE`` / ``VIEW``); :data:`_INERT` for an
        op with a fresh result (or a scalar) that writes nothing."""
        info = self._ops.get(op)
        if info is None:
            eff = op_effect(op)
            if eff is None:
                info = (True, None, None)
            elif eff.of is not None and eff.storage is ops.Storage.WRITES:
                info = (False, eff.of, _WRITEBACK)
            elif eff.of is not None and eff.storage is ops.Storage.VIEW:
                info = (False, eff.of, Share.SLICE if op == "tile.slice" else Share.VIEW)
            elif also_written(op):  # (writes operands, but its result names none of them)
                info = (False, None, None)
            else:
                info = _INERT
            self._ops[op] = info
        return info

    def call(self, s: Stmt, p: int, call: Call, target: Var | None,
             info: tuple[bool, int | None, Share | None]) -> None:
        """The writes and storage edge of ``call`` (``info``: :meth:`op_info`), evaluated by
        ``s`` (assigned to ``target``)."""
        opaque, of, share = info
        if opaque and self.summaries is not None and callee_name(call.op) is not None:
            self.program_call(s, p, call, target)
            return
        if opaque:
            for k, a in call_operands(call):
                if isinstance(a, VarRef) and isinstance(a.var.type, TileType):
                    self.fx.writes.append(Write(s, p, a.var, call.op, k, True))
                    if target is not None and isinstance(target.type, TileType):
                        self.fx.edges.append(Edge(Share.OPAQUE, target, a.var, s,
                                                  k if isinstance(k, int) else 0))
            return
        for k in also_written(call.op):  # (a collective's signal, a transfer's staging tiles)
            w = operand(call, k)
            if w is not None:
                self.fx.writes.append(Write(s, p, w, call.op, k, False))
        if of is None:
            return
        args = call.args
        if of < len(args):  # (the usual case: the operand passed positionally)
            a = args[of]
            v = a.var if type(a) is VarRef else None  # type: ignore[attr-defined]
        else:
            v = operand(call, of)
        if v is None:
            return
        if share is _WRITEBACK:
            self.fx.writes.append(Write(s, p, v, call.op, of, False))
        if target is not None:
            self.fx.edges.append(Edge(share, target, v, s, of))  # type: ignore[arg-type]

    def program_call(self, s: Stmt, p: int, call: Call, target: Var | None) -> None:
        """A call of the program's own function: the writes and the storage sharing its
        :class:`CallSummary` states (the conservative ones when it has none: every tile operand
        may be written and returned)."""
        summary = self.summaries.get(callee_name(call.op))  # type: ignore[union-attr,arg-type]
        fx = self.fx
        args = _tile_operands(call, summary)
        for k, a in args.items():
            if summary is None or k in summary.writes:
                fx.writes.append(Write(s, p, a, call.op, k, True))
        if target is None:
            return
        if not isinstance(target.type, TileType) and summary is not None \
                and len(summary.results) != 1:
            # a tuple: each element's sharing is read by ``target[k]`` (:meth:`item`); the tuple
            # itself shares the storage of everything any element may return
            self._tuples[target] = (call, summary, args)
        for r in _returned(summary, args, None):
            a = args[r.param]
            fx.edges.append(Edge(Share.CALL, target, a, s, r.param, r.window, r.whole, r.at))

    def item(self, s: Stmt, target: Var, v: TupleItem) -> None:
        """``target = tup[k]``: the storage edges of element ``k``."""
        if type(v.value) is not VarRef:
            return
        tup = v.value.var  # type: ignore[attr-defined]
        known = self._tuples.get(tup)
        if known is None:
            self.fx.edges.append(Edge(Share.ITEM, target, tup, s, v.index))
            return
        _call, summary, args = known
        for r in _returned(summary, args, v.index):
            self.fx.edges.append(Edge(Share.CALL, target, args[r.param], s, r.param, r.window,
                                      r.whole, r.at))

    def finish(self) -> Effects:
        fx = self.fx
        parent, find = fx._parent, fx.storage
        up_of = parent.get
        # (find called only on a variable at least two steps below its class's representative)
        for e in fx.edges:
            a, b = e.dst, e.src
            up = up_of(a)
            if up is not None:
                a = up if up not in parent else find(a)
            up = up_of(b)
            if up is not None:
                b = up if up not in parent else find(b)
            if a is not b:
                parent[a] = b
        at = fx._write_points
        for w in fx.writes:
            v = w.var
            up = up_of(v)
            if up is not None:
                v = up if up not in parent else find(v)
            at.setdefault(v, []).append(w.point)
        for pts in at.values():
            pts.sort()
        fx.call_ops = set(self._ops)  # (every statement-level call's op was read once)
        return fx


def function_effects(fn: Function, summaries: Summaries | None = None,
                     aliased: bool = True) -> Effects:
    """The memory effects of ``fn`` (one walk over its body).  With its program's call
    ``summaries`` (``ir.summaries.call_summaries``), a call of one of the program's functions has
    the effects its summary states, and tile parameters some call binds to tiles sharing storage
    are one storage class (``Summaries.aliased``; not with ``aliased`` False: a summary speaks of
    each parameter, the caller knows which share); without, every such call is opaque."""
    b = _Builder(summaries)
    b.body(fn.body, (0,), ())
    fx = b.finish()
    for group in summaries.aliased(fn) if summaries is not None and aliased else ():
        fx.share(group)
    return fx


# ---------------------------------------------------------------------- call summaries
# (what they hold; ``ir.summaries`` computes them, from these effects and ``ir.storage``)


@dataclass(frozen=True, slots=True)
class Returned:
    """A returned value may share the storage of parameter ``param``: its tile itself
    (``whole``: an alias, a view, a carry of it), or a part of it — exactly the ``window``
    ``((rows, cols), (row offset, column offset))`` of it when its shape is constant (an offset
    that is not constant None).  ``at``: when the function's storage analysis (``ir.storage``)
    proves the value is laid out exactly as the parameter's elements from index ``at`` on, with
    the parameter's own strides (an alias, ``set_validshape``, a constant-offset slice, carries
    and merges that agree): the caller's storage analysis then knows the result's layout from the
    argument's."""

    param: int
    whole: bool = False
    window: tuple[tuple[int, int], tuple[int | None, int | None]] | None = None
    at: tuple[int, ...] | None = None


@dataclass(frozen=True)
class CallSummary:
    """What a program function does to the storage of the tiles it receives, in terms of its
    parameters (numbered as in its signature).

    * ``results``: for each element of the returned value (one for a single value, one per
      element of a returned tuple), the parameters whose storage it may share
      (:class:`Returned`), over every ``return`` of the function;
    * ``writes``: the tile parameters whose storage the function may write: directly, through a
      slice, a view or an alias of the parameter, or through a further call (a write through a
      returned view is the caller's own write, through the result's ``CALL`` edge)."""

    name: str
    params: tuple[str, ...]
    results: tuple[tuple[Returned, ...], ...]
    writes: frozenset[int]


def _tile_operands(call: Call, summary: CallSummary | None) -> dict[int | str, Var]:
    """The tile operands of a program function call by parameter number (a keyword argument
    numbered by the callee's parameter of that name; by its name when unknown)."""
    out: dict[int | str, Var] = {}
    for k, a in enumerate(call.args):
        if type(a) is VarRef and isinstance(a.var.type, TileType):  # type: ignore[attr-defined]
            out[k] = a.var  # type: ignore[attr-defined]
    for name, a in call.kwargs:
        if type(a) is VarRef and isinstance(a.var.type, TileType):  # type: ignore[attr-defined]
            k = param_position(summary.params, name) if summary is not None else name
            out[k] = a.var  # type: ignore[attr-defined]
    return out


def _returned(summary: CallSummary | None, args: dict[int | str, Var],
              element: int | None) -> list[Returned]:
    """What the call's result (``element`` of it when given; else any element) may share, for
    the operands ``args`` passed: every operand when there is no summary."""
    if summary is None:
        return [Returned(k) for k in args]  # type: ignore[arg-type]
    if element is None:
        if len(summary.results) == 1:
            found = list(summary.results[0])
        else:  # (the tuple itself: any element's parameters, no window)
            found = sorted({Returned(r.param) for res in summary.results for r in res},
                           key=lambda r: r.param)
    elif element < len(summary.results):
        found = list(summary.results[element])
    else:
        found = [Returned(k) for k in args if isinstance(k, int)]  # type: ignore[misc]
    return [r for r in found if r.param in args]
