"""Statements, functions and programs of the tile IR.

Control flow is structured. Loops and ifs produce values through a trailing
:class:`YieldStmt` in their bodies; the variables bound by that yield in the DSL
(``c = pl.yield_(cc)``) are the statement's ``return_vars``, visible after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Iterator

from .exprs import Call, Expr, Var
from .types import Type


@dataclass(frozen=True, slots=True)
class Span:
    """A source position (1-based line, 0-based column as Python's ``ast``)."""

    filename: str = "<input>"
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col}"


NO_SPAN = Span()


class Stmt:
    """Base of all statements."""

    #: statement nodes are slotted (``slots=True``): a long kernel holds ~10 IR nodes per
    #: statement, each ~40 bytes smaller without an instance dict
    __slots__ = ()

    span: Span


@dataclass(eq=False, slots=True)
class AssignStmt(Stmt):
    """``target = value`` where value is a call, a scalar expression or a plain alias."""

    target: Var
    value: Expr
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class EvalStmt(Stmt):
    """A bare call statement, e.g. ``pl.tile.matmul_acc(acc, a, b)``."""

    call: Call
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class _ValuesStmt(Stmt):
    """A statement that hands ``values`` out of its body."""

    values: list[Expr]
    span: Span = NO_SPAN


class YieldStmt(_ValuesStmt):
    """``pl.yield_(v1, ...)`` — the last statement of a loop or if body with carries."""

    __slots__ = ()


class ReturnStmt(_ValuesStmt):
    """``return v1, ...`` — a function's results."""

    __slots__ = ()


@dataclass(eq=False, slots=True)
class _BareStmt(Stmt):
    """A statement with no operands, kept as written."""

    span: Span = NO_SPAN


class BreakStmt(_BareStmt):
    """``break`` (PyPTO prints it in loops it has not unrolled)."""

    __slots__ = ()


class ContinueStmt(_BareStmt):
    """``continue``."""

    __slots__ = ()


class LoopKind(Enum):
    RANGE = "range"
    PIPELINE = "pipeline"
    PARALLEL = "parallel"
    UNROLL = "unroll"


@dataclass(eq=False, slots=True)
class ForStmt(Stmt):
    """``for i, (a, b) in pl.range(start, stop, step, init_values=(x, y)):``."""

    loop_var: Var
    kind: LoopKind
    start: Expr
    stop: Expr
    step: Expr
    iter_args: list[Var]
    init_values: list[Expr]
    body: list[Stmt]
    return_vars: list[Var]
    kwargs: tuple[tuple[str, Expr], ...] = ()
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class WhileStmt(Stmt):
    """``for (a,) in pl.while_(init_values=(x,)):`` with ``pl.cond(c)`` first in the body."""

    iter_args: list[Var]
    init_values: list[Expr]
    cond: Expr
    body: list[Stmt]
    return_vars: list[Var]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class IfStmt(Stmt):
    cond: Expr
    then_body: list[Stmt]
    else_body: list[Stmt]
    return_vars: list[Var]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class ScopeStmt(Stmt):
    """A region, not a loop; its names stay visible after it. ``form`` is how it is written:
    "for" — ``for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):``; "with_as" —
    ``with pl.at(level=pl.Level.CORE_GROUP) as tid:``; "with" — ``with pl.auto_scope():``
    (``var`` is then a placeholder nothing reads)."""

    kind: str  # the pl call naming the region: "split_aiv", "at", "auto_scope", ...
    var: Var
    args: tuple[Expr, ...]
    kwargs: tuple[tuple[str, Expr], ...]
    body: list[Stmt]
    span: Span = NO_SPAN
    form: str = "for"


class FunctionType(Enum):
    InCore = "InCore"
    AIC = "AIC"
    AIV = "AIV"
    Orchestration = "Orchestration"
    Opaque = "Opaque"
    Group = "Group"
    Spmd = "Spmd"
    Graph = "Graph"
    Inline = "Inline"

    @property
    def is_incore(self) -> bool:
        return self in (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)


@dataclass(eq=False)
class Param:
    """A parameter; ``is_out`` for ``pl.Out[...]`` and ``pl.InOut[...]`` (the function writes
    it), ``inout`` for the latter (it also reads it)."""

    var: Var
    is_out: bool = False
    inout: bool = False


@dataclass(eq=False)
class Function:
    name: str
    params: list[Param]
    return_types: list[Type]
    body: list[Stmt]
    func_type: FunctionType = FunctionType.Opaque
    #: extra decorator keywords kept verbatim (PyPTO's ``level=`` / ``role=``)
    decorator_kwargs: tuple[tuple[str, Expr], ...] = ()
    #: whether the source spelled a ``self`` parameter (PyPTO's printer omits it)
    has_self: bool = True
    span: Span = NO_SPAN
    #: a body written ``...``: a function bound at run time (PyPTO's abstract SubWorker)
    abstract: bool = False


@dataclass(eq=False)
class Program:
    name: str
    functions: list[Function] = field(default_factory=list)

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)


def child_bodies(s: Stmt) -> list[list[Stmt]]:
    """The nested statement lists of a compound statement."""
    if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
        return [s.body]
    if isinstance(s, IfStmt):
        return [s.then_body, s.else_body]
    return []


def walk(body: list[Stmt]) -> Iterator[Stmt]:
    """All statements in program order, depth first (a compound before its body)."""
    for s in body:
        yield s
        for b in child_bodies(s):
            yield from walk(b)


def defined_vars(s: Stmt) -> list[Var]:
    """Variables a statement binds (visible after it, or inside its body)."""
    if isinstance(s, AssignStmt):
        return [s.target]
    if isinstance(s, ForStmt):
        return [s.loop_var, *s.iter_args, *s.return_vars]
    if isinstance(s, WhileStmt):
        return [*s.iter_args, *s.return_vars]
    if isinstance(s, IfStmt):
        return list(s.return_vars)
    if isinstance(s, ScopeStmt):
        return [s.var]
    return []


def stmt_exprs(s: Stmt) -> list[Expr]:
    """The expressions a statement evaluates itself (not those of its nested bodies)."""
    if isinstance(s, AssignStmt):
        return [s.value]
    if isinstance(s, EvalStmt):
        return [s.call]
    if isinstance(s, (YieldStmt, ReturnStmt)):
        return list(s.values)
    if isinstance(s, ForStmt):
        return [s.start, s.stop, s.step, *s.init_values, *(v for _, v in s.kwargs)]
    if isinstance(s, WhileStmt):
        return [*s.init_values, s.cond]
    if isinstance(s, IfStmt):
        return [s.cond]
    if isinstance(s, ScopeStmt):
        return [*s.args, *(v for _, v in s.kwargs)]
    return []
