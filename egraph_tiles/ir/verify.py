"""The verifier: a well-formedness check of IR programs.

``verify_program(p)`` raises ``ValueError`` naming the statement and its source line on:
use of a variable before its definition, a window (slice, extract, load: the registry's
``window`` operands) outside its source on an axis whose offset has known bounds, a copy from a memory space into one it cannot reach, a call whose
argument types do not fit (shape / dtype / memory), an assigned variable whose type
differs from its value's, and a yield whose arity differs from the loop's or if's
carries. Scoping follows the DSL: names bound in a loop or if body are not visible after
it (values leave through ``pl.yield_``); a ``split_aiv`` scope is a region, so its
definitions stay visible.
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import cached_property
from typing import Callable, Iterator

from .exprs import (static_type, BinOp, Call, Compare, Expr, Neg, Var, VarRef, const_int,
                    free_vars)
from .format import Names, format_expr, format_stmt
from .ops import REGISTRY, dims_agree, dims_agree_flattened, OpTypeError, bind, infer_type
from .stmts import (AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ForStmt, Function, IfStmt, Program, ReturnStmt,
                    ScopeStmt, Stmt, WhileStmt, YieldStmt)
from .types import ScalarType, TensorType, TileType, TupleType, Type, UnknownType


def verify_program(prog: Program) -> Program:
    """Check ``prog``; return it unchanged, or raise ``ValueError``."""
    for f in prog.functions:
        _Verifier(f).run()
    return prog


def verify_function(f: Function) -> Function:
    _Verifier(f).run()
    return f


def windows_in_bounds(f: Function) -> set[Stmt]:
    """The statements of ``f`` whose every window operand lies inside its source for every
    value its offsets can take (each offset's bounds known on both sides: constants, bounded
    scalar definitions, constant-range loop variables), whether or not a condition guards it:
    reading such a window where the program would not is harmless (hoisting reads it early)."""
    v = _Verifier(f)
    v.run()
    return v.in_bounds


class _Verifier:
    def __init__(self, f: Function):
        self.f = f
        #: known bounds of scalar variables (by id): definitions and constant-range loop vars
        self.bounds: dict[int, Interval] = {}
        #: inside an if / while body: a condition may keep a window from running at its offsets'
        #: extremes, so only constant offsets are checked there
        self.guarded = 0
        #: statements whose windows are in bounds for every value of their offsets
        self.in_bounds: set[Stmt] = set()

    @cached_property
    def names(self) -> Names:
        """The printer's names for the function's variables (built only for a message)."""
        return Names.for_function(self.f)

    def fail(self, s: Stmt | None, message: str) -> ValueError:
        where = f"function {self.f.name}"
        if s is not None:
            text = format_stmt(s, self.names).strip()
            if len(text) > 160:
                text = text[:157] + "..."
            span = getattr(s, "span", None)
            loc = f"{span.filename}:{span.line}" if span and span.line else "(no source line)"
            return ValueError(f"{loc}: in {where}, statement `{text}`: {message}")
        return ValueError(f"in {where}: {message}")

    def run(self) -> None:
        #: ids of the variables in scope; a loop or if body's own definitions are taken back
        #: out when the body ends (:meth:`body_scope`), so no scope is ever copied
        self.scope: set[int] = {id(p.var) for p in self.f.params}
        #: the ids added to ``scope`` since the function began, in order (the undo log)
        self.added: list[int] = []
        self.block(self.f.body, carries=None, owner=None)

    @contextmanager
    def body_scope(self) -> Iterator[None]:
        """A loop or if body: the definitions made inside leave scope again at its end."""
        mark = len(self.added)
        try:
            yield
        finally:
            for k in self.added[mark:]:
                self.scope.discard(k)
            del self.added[mark:]

    # -- uses

    def uses(self, s: Stmt, exprs: list[Expr]) -> None:
        scope = self.scope
        for e in exprs:
            for v in free_vars(e):
                if id(v) not in scope:
                    raise self.fail(s, f"{self.names(v)!r} is used before its definition")

    def define(self, vs: list[Var]) -> None:
        scope = self.scope
        for v in vs:
            k = id(v)
            if k not in scope:
                scope.add(k)
                self.added.append(k)

    # -- blocks

    def block(self, body: list[Stmt], carries: int | None, owner: Stmt | None) -> YieldStmt | None:
        """Check a body; ``carries`` is the yield arity required at its end (None: no yield)."""
        last: YieldStmt | None = None
        for i, s in enumerate(body):
            if isinstance(s, YieldStmt):
                if i != len(body) - 1:
                    raise self.fail(s, "pl.yield_ must be the last statement of its body")
                self.uses(s, s.values)
                last = s
                continue
            self.stmt(s)
        if carries is None:
            if last is not None:
                raise self.fail(last, "this body has no carries, so it cannot yield")
            return None
        if carries and last is None:
            raise self.fail(owner, f"the body must end with pl.yield_ of {carries} value(s)")
        if last is not None and len(last.values) != carries:
            raise self.fail(last, f"yield arity {len(last.values)} differs from the "
                            f"{carries} carried value(s) of the enclosing statement")
        return last

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, AssignStmt):
            self.uses(s, [s.value])
            self.assign(s)
            self.define([s.target])
            self.bind_bounds(s)
        elif isinstance(s, EvalStmt):
            self.uses(s, [s.call])
            self.call_type(s, s.call)
        elif isinstance(s, ReturnStmt):
            self.uses(s, s.values)
        elif isinstance(s, ForStmt):
            self.uses(s, [s.start, s.stop, s.step, *s.init_values])
            self.bind_bounds(s)
            self.carries(s, s.iter_args, s.init_values, s.return_vars)
            with self.body_scope():
                self.define([s.loop_var, *s.iter_args])
                y = self.block(s.body, len(s.iter_args) if s.iter_args else None, s)
            self.yield_types(y, s.iter_args)
            self.define(s.return_vars)
        elif isinstance(s, WhileStmt):
            self.uses(s, s.init_values)
            self.carries(s, s.iter_args, s.init_values, s.return_vars)
            with self.body_scope():
                self.define(s.iter_args)
                self.uses(s, [s.cond])
                self.guarded += 1
                y = self.block(s.body, len(s.iter_args) if s.iter_args else None, s)
                self.guarded -= 1
            self.yield_types(y, s.iter_args)
            self.define(s.return_vars)
        elif isinstance(s, IfStmt):
            self.uses(s, [s.cond])
            n = len(s.return_vars) if s.return_vars else None
            self.guarded += 1
            with self.body_scope():
                yt = self.block(s.then_body, n, s)
            with self.body_scope():
                ye = self.block(s.else_body, n, s)
            self.guarded -= 1
            self.yield_types(yt, s.return_vars)
            self.yield_types(ye, s.return_vars)
            self.define(s.return_vars)
        elif isinstance(s, ScopeStmt):
            self.uses(s, [*s.args, *(v for _, v in s.kwargs)])
            self.define([s.var])
            self.block(s.body, None, s)
        elif isinstance(s, (BreakStmt, ContinueStmt)):
            pass
        else:
            raise self.fail(s, f"unknown statement kind {type(s).__name__}")

    def carries(self, s: Stmt, iter_args: list[Var], inits: list[Expr], rets: list[Var]) -> None:
        if len(iter_args) != len(inits):
            raise self.fail(s, f"{len(iter_args)} carried variable(s) but {len(inits)} init value(s)")
        if len(rets) != len(iter_args):
            raise self.fail(s, f"{len(iter_args)} carried variable(s) but {len(rets)} result(s)")
        # (memory spaces may differ at this pipeline point: see ``assign``)
        for v, e in zip(iter_args, inits):
            self.same(s, v.type, self.type_of(e),
                      lambda: f"carry {self.names(v)!r} vs its init value", memory=False)
        for v, r in zip(iter_args, rets):
            self.same(s, v.type, r.type,
                      lambda: f"carry {self.names(v)!r} vs result {self.names(r)!r}", memory=False)

    def yield_types(self, y: YieldStmt | None, targets: list[Var]) -> None:
        if y is None:
            return
        for v, e in zip(targets, y.values):
            self.same(y, v.type, self.type_of(e),
                      lambda: f"yielded value for {self.names(v)!r}", memory=False)

    # -- types

    def type_of(self, e: Expr) -> Type | None:
        return static_type(e)

    def same(self, s: Stmt | None, a: Type | None, b: Type | None, what: Callable[[], str],
             memory: bool = True, flattened: bool = False) -> None:
        """Check that ``a`` and ``b`` agree (their memory spaces too unless ``memory`` is
        false; with ``flattened``, one shape may be the other flattened to 2-D);
        ``what()`` names the pair in the message."""
        if a is None or b is None or isinstance(a, UnknownType) or isinstance(b, UnknownType):
            return
        if isinstance(a, ScalarType) and isinstance(b, ScalarType):
            if a.dtype != b.dtype and not (a.dtype.is_int and b.dtype.is_int):
                raise self.fail(s, f"{what()}: dtype {a.dtype.name} vs {b.dtype.name}")
            return
        if type(a) is not type(b):
            raise self.fail(s, f"{what()}: {type(a).__name__} vs {type(b).__name__}")
        if isinstance(a, (TileType, TensorType)):
            assert isinstance(b, (TileType, TensorType))
            if a.dtype != b.dtype:
                raise self.fail(s, f"{what()}: dtype {a.dtype.name} vs {b.dtype.name}")
            if not (dims_agree_flattened if flattened else dims_agree)(a.shape, b.shape):
                raise self.fail(s, f"{what()}: shape {_dims(a.shape)} vs {_dims(b.shape)}")
        if memory and isinstance(a, TileType) and isinstance(b, TileType):
            if a.memory and b.memory and a.memory != b.memory:
                raise self.fail(s, f"{what()}: memory {a.memory.value} vs {b.memory.value}")

    def call_type(self, s: Stmt, c: Call) -> Type | None:
        if c.op not in REGISTRY:
            return None
        try:
            t = infer_type(c, self.type_of)
        except OpTypeError as e:
            raise self.fail(s, str(e)) from None
        self.window(s, c)
        return t

    def window(self, s: Stmt, c: Call) -> None:
        """Every window operand (registry ``window``: slice, extract, load) lies inside its
        constant-shaped source on every axis whose offset has a known bound: a constant, a
        scalar definition, a ``pl.range`` loop variable with constant bounds, arithmetic on
        those, ``pl.min`` / ``pl.max``."""
        if REGISTRY[c.op].window is None:
            return
        b = bind(c)
        parts = b.window_parts()
        if parts is None:
            return
        src, offs, shape_e = parts
        st = self.type_of(src)
        if not isinstance(st, (TileType, TensorType)):
            return
        full_dims = [const_int(d) for d in st.shape]
        if len(offs) != len(full_dims) or len(shape_e.items) != len(full_dims):
            return
        inside = True  # (every axis proven inside for every value of its offset)
        for axis, (o, n, full) in enumerate(zip(offs, shape_e.items, full_dims)):
            nc = const_int(n)
            if full is None or nc is None:
                inside = False
                continue
            if nc <= 0 or nc > full:
                raise self.fail(s, f"window extent {nc} on axis {axis} does not fit the "
                                f"source extent {full}")
            lo, hi = self.interval(o)
            inside = inside and lo is not None and hi is not None and 0 <= lo and hi + nc <= full
            if self.guarded and lo != hi:
                continue
            if lo is not None and lo == hi and (lo < 0 or lo + nc > full):
                raise self.fail(s, f"window [{lo}, {lo + nc}) on axis {axis} lies outside its "
                                f"source of extent {full} (source shape {full_dims})")
            if lo is not None and lo < 0:
                raise self.fail(s, f"window offset on axis {axis} can be {lo}: the window "
                                f"[{lo}, {lo + nc}) starts before its source")
            if hi is not None and hi + nc > full:
                raise self.fail(s, f"window offset on axis {axis} can be {hi}: the window "
                                f"[{hi}, {hi + nc}) lies outside its source of extent {full} "
                                f"(source shape {full_dims})")
        if inside:
            self.in_bounds.add(s)

    def interval(self, e: Expr) -> Interval:
        """Known bounds ``(lo, hi)`` of an index expression (None: unbounded on that side)."""
        c = const_int(e)
        if c is not None:
            return c, c
        if isinstance(e, VarRef):
            return self.bounds.get(id(e.var), _NONE)
        if isinstance(e, Neg):
            lo, hi = self.interval(e.operand)
            return (None if hi is None else -hi), (None if lo is None else -lo)
        if isinstance(e, BinOp):
            return _combine(e.op, self.interval(e.lhs), self.interval(e.rhs))
        if isinstance(e, Call):
            op = REGISTRY.get(e.op)
            if op is not None and op.interval is not None:
                return op.interval([self.interval(a) for a in e.args])
        return _NONE

    def bind_bounds(self, s: Stmt) -> None:
        """Record the known bounds of a scalar definition or a constant-bound loop variable."""
        if isinstance(s, AssignStmt) and not isinstance(s.target.type, (TileType, TensorType)):
            iv = self.interval(s.value)
            if iv != _NONE:
                self.bounds[id(s.target)] = iv
        elif isinstance(s, ForStmt):
            start, stop, step = (self.interval(x) for x in (s.start, s.stop, s.step))
            if start[0] is None or start[0] != start[1] or stop[0] is None or stop[0] != stop[1] \
                    or step[0] is None or step[0] != step[1] or step[0] == 0:
                return
            trips = len(range(start[0], stop[0], step[0]))
            if trips:
                last = start[0] + (trips - 1) * step[0]
                self.bounds[id(s.loop_var)] = (min(start[0], last), max(start[0], last))

    def assign(self, s: AssignStmt) -> None:
        v = s.value
        t = s.target.type
        if isinstance(v, Call):
            inferred = self.call_type(s, v)
            if inferred is not None:
                # the declared memory space is the one PyPTO's IR holds at this pipeline point
                # (its memory-space inference runs later and inserts the moves), even where the
                # registry's default differs (an accumulator created without target_memory,
                # declared in Acc) or an if / loop joins values of different spaces
                self.same(s, t, inferred, lambda: self.declared(s), memory=False, flattened=True)
            return
        if isinstance(v, (BinOp, Neg, Compare)):
            for x in free_vars(v):
                if isinstance(x.type, (TileType, TensorType, TupleType)):
                    raise self.fail(s, f"scalar arithmetic on non-scalar {self.names(x)!r}")
            if isinstance(t, (TileType, TensorType)):
                raise self.fail(s, f"{self.names(s.target)!r} is declared a "
                                f"{type(t).__name__} but assigned a scalar expression")
            return
        self.same(s, t, self.type_of(v), lambda: self.declared(s))

    def declared(self, s: AssignStmt) -> str:
        return f"declared type of {self.names(s.target)!r} vs its value"


Interval = tuple[int | None, int | None]
_NONE: Interval = (None, None)


def _combine(op: str, a: Interval, b: Interval) -> Interval:
    """Interval arithmetic for ``+ - * // %`` (// and % by a positive constant)."""
    (al, ah), (bl, bh) = a, b
    if op == "+":
        return (None if al is None or bl is None else al + bl,
                None if ah is None or bh is None else ah + bh)
    if op == "-":
        return (None if al is None or bh is None else al - bh,
                None if ah is None or bl is None else ah - bl)
    if op == "*" and None not in (al, ah, bl, bh):
        corners = [x * y for x in (al, ah) for y in (bl, bh)]  # type: ignore[operator]
        return min(corners), max(corners)
    if op == "//" and bl is not None and bl == bh and bl > 0:
        return (None if al is None else al // bl, None if ah is None else ah // bl)
    if op == "%" and bl is not None and bl == bh and bl > 0:
        # a non-negative dividend below the modulus is its own remainder: (i*8) % 64 for
        # i in [0, 3] is i*8, in [0, 24]
        if al is not None and al >= 0 and ah is not None and ah < bl:
            return al, ah
        return 0, bl - 1
    return _NONE


def _dims(shape: tuple[Expr, ...]) -> str:
    return "[" + ", ".join(format_expr(d) for d in shape) + "]"
