"""Structural equality of programs with auto-mapped variable names.

Two programs are structurally equal when their functions match one to one (by position
and name) and every statement, expression and type matches, where variables are
compared by a bijection built as definitions are met (names are printing hints).
Calls of registered ops compare their *bound* arguments, so a shape passed
positionally equals the same shape passed as ``shape=``. Spans, the program class name
and whether a function spelled ``self`` are not compared.
"""

from __future__ import annotations

import difflib
from typing import Any, Callable

from .exprs import (BinOp, Call, Compare, Const, DictExpr, DynDim, Expr, ListExpr, Neg, StrConst,
                    Symbol, TupleItem, Var, VarRef)
from .format import format_expr, print_program
from .ops import REGISTRY, BoundCall, OpTypeError
from .stmts import (AssignStmt, EvalStmt, ForStmt, Function, IfStmt, Program, ReturnStmt,
                    ScopeStmt, Stmt, WhileStmt, YieldStmt)
from .types import (MemRef, OpaqueType, ScalarType, TensorType, TileType, TupleType, Type,
                    UnknownType)


class _Mismatch(Exception):
    def __init__(self, where: str, what: str):
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what


def _norm(e: Any) -> Any:
    if isinstance(e, Neg) and isinstance(e.operand, Const) and not isinstance(e.operand.value, bool):
        return Const(-e.operand.value)
    if isinstance(e, Var):
        return VarRef(e)
    if isinstance(e, (int, float)) and not isinstance(e, bool):
        return Const(e)
    return e


class _Comparer:
    def __init__(self) -> None:
        self.fwd: dict[int, Var] = {}
        self.bwd: dict[int, Var] = {}
        self.where = "program"

    def fail(self, what: str) -> None:
        raise _Mismatch(self.where, what)

    # -- variables

    def define(self, a: Var, b: Var) -> None:
        if id(a) in self.fwd or id(b) in self.bwd:
            if self.fwd.get(id(a)) is b:
                return
            self.fail(f"variable {a.name!r} / {b.name!r} is defined twice")
        self.fwd[id(a)] = b
        self.bwd[id(b)] = a
        self.type_(a.type, b.type, f"type of {a.name!r} / {b.name!r}")

    def use(self, a: Var, b: Var) -> None:
        m = self.fwd.get(id(a))
        if m is None and id(b) not in self.bwd:
            self.fwd[id(a)] = b
            self.bwd[id(b)] = a
            return
        if m is not b:
            self.fail(f"uses different variables: {a.name!r} vs {b.name!r}")

    def pairwise(self, xs: list, ys: list, what: str, compare: Callable[[Any, Any], None]) -> None:
        """``compare`` the items of ``xs`` and ``ys`` pair by pair; the lists must be as long."""
        if len(xs) != len(ys):
            self.fail(f"{what} lengths {len(xs)} vs {len(ys)}")
        for x, y in zip(xs, ys):
            compare(x, y)

    def vars_(self, xs: list[Var], ys: list[Var], what: str) -> None:
        self.pairwise(xs, ys, what, self.define)

    # -- expressions

    def expr(self, a: Any, b: Any) -> None:
        a, b = _norm(a), _norm(b)
        if a is None or b is None:
            if a is not b:
                self.fail(f"{_show(a)} vs {_show(b)}")
            return
        if type(a) is not type(b):
            self.fail(f"{_show(a)} vs {_show(b)}")
        if isinstance(a, VarRef):
            self.use(a.var, b.var)
        elif isinstance(a, Const):
            if type(a.value) is not type(b.value) or a.value != b.value:
                self.fail(f"constant {a.value!r} vs {b.value!r}")
        elif isinstance(a, (StrConst, Symbol, DynDim)):
            if a != b:
                self.fail(f"{_show(a)} vs {_show(b)}")
        elif isinstance(a, (BinOp, Compare)):
            if a.op != b.op:
                self.fail(f"operator {a.op} vs {b.op}")
            self.expr(a.lhs, b.lhs)
            self.expr(a.rhs, b.rhs)
        elif isinstance(a, Neg):
            self.expr(a.operand, b.operand)
        elif isinstance(a, ListExpr):
            self.exprs(list(a.items), list(b.items), "list")
        elif isinstance(a, Call):
            self.call(a, b)
        elif isinstance(a, TupleItem):
            if a.index != b.index:
                self.fail(f"{_show(a)} vs {_show(b)}")
            self.expr(a.value, b.value)
        elif isinstance(a, DictExpr):
            self.exprs([x for kv in a.items for x in kv], [y for kv in b.items for y in kv], "dict")
        else:
            self.fail(f"cannot compare {a!r}")

    def exprs(self, xs: list[Expr], ys: list[Expr], what: str) -> None:
        self.pairwise(xs, ys, what, self.expr)

    def call(self, a: Call, b: Call) -> None:
        if a.op != b.op:
            self.fail(f"op {a.op} vs {b.op}")
        da, db = _bound(a), _bound(b)
        if set(da) != set(db):
            self.fail(f"{a.op} arguments ({', '.join(da)}) vs ({', '.join(db)})")
        for k in da:
            self.expr(da[k], db[k])

    # -- types

    def type_(self, a: Type | None, b: Type | None, what: str) -> None:
        if isinstance(a, UnknownType) or a is None:
            if not (isinstance(b, UnknownType) or b is None):
                self.fail(f"{what}: unknown vs {type(b).__name__}")
            return
        if type(a) is not type(b):
            self.fail(f"{what}: {type(a).__name__} vs {type(b).__name__}")
        if isinstance(a, ScalarType):
            if a.dtype != b.dtype:
                self.fail(f"{what}: {a.dtype.name} vs {b.dtype.name}")
        elif isinstance(a, TensorType):
            if (a.dtype, a.distributed) != (b.dtype, b.distributed):
                self.fail(f"{what}: {a.dtype.name} vs {b.dtype.name}")
            self.exprs(list(a.shape), list(b.shape), f"{what} shape")
            self.memref(a.memref, b.memref, what)
            self.expr(a.view, b.view)
        elif isinstance(a, OpaqueType):
            if a.spelling != b.spelling:
                self.fail(f"{what}: {a.spelling} vs {b.spelling}")
        elif isinstance(a, TileType):
            if a.dtype != b.dtype:
                self.fail(f"{what}: dtype {a.dtype.name} vs {b.dtype.name}")
            if a.memory != b.memory:
                self.fail(f"{what}: memory {_mem(a.memory)} vs {_mem(b.memory)}")
            self.exprs(list(a.shape), list(b.shape), f"{what} shape")
            if (a.valid_shape is None) != (b.valid_shape is None):
                self.fail(f"{what}: valid_shape present on one side only")
            if a.valid_shape is not None:
                self.exprs(list(a.valid_shape), list(b.valid_shape), f"{what} valid_shape")
            self.memref(a.memref, b.memref, what)
            self.expr(a.view, b.view)
        elif isinstance(a, TupleType):
            if len(a.elements) != len(b.elements):
                self.fail(f"{what}: tuple lengths differ")
            for x, y in zip(a.elements, b.elements):
                self.type_(x, y, what)

    def memref(self, a: MemRef | None, b: MemRef | None, what: str) -> None:
        if a is None or b is None:
            if a is not b:
                self.fail(f"{what}: memref present on one side only")
            return
        self.expr(a.byte_offset, b.byte_offset)
        self.expr(a.base, b.base)
        self.expr(a.size, b.size)

    # -- statements

    def body(self, xs: list[Stmt], ys: list[Stmt], where: str) -> None:
        for i, (x, y) in enumerate(zip(xs, ys)):
            self.where = f"{where}, statement {i + 1}"
            self.stmt(x, y, self.where)
        if len(xs) != len(ys):
            self.where = where
            self.fail(f"{len(xs)} statements vs {len(ys)}")

    def stmt(self, a: Stmt, b: Stmt, where: str) -> None:
        if type(a) is not type(b):
            self.fail(f"{type(a).__name__} vs {type(b).__name__}")
        if isinstance(a, AssignStmt):
            self.expr(a.value, b.value)
            self.define(a.target, b.target)
        elif isinstance(a, EvalStmt):
            self.expr(a.call, b.call)
        elif isinstance(a, (YieldStmt, ReturnStmt)):
            self.exprs(a.values, b.values, "values")
        elif isinstance(a, ForStmt):
            if a.kind != b.kind:
                self.fail(f"loop kind {a.kind.value} vs {b.kind.value}")
            self.exprs([a.start, a.stop, a.step], [b.start, b.stop, b.step], "range")
            self.kwargs(a.kwargs, b.kwargs)
            self.exprs(a.init_values, b.init_values, "init_values")
            self.define(a.loop_var, b.loop_var)
            self.vars_(a.iter_args, b.iter_args, "carries")
            self.body(a.body, b.body, f"{where} > for body")
            self.where = where
            self.vars_(a.return_vars, b.return_vars, "loop results")
        elif isinstance(a, WhileStmt):
            self.exprs(a.init_values, b.init_values, "init_values")
            self.vars_(a.iter_args, b.iter_args, "carries")
            self.expr(a.cond, b.cond)
            self.body(a.body, b.body, f"{where} > while body")
            self.where = where
            self.vars_(a.return_vars, b.return_vars, "loop results")
        elif isinstance(a, IfStmt):
            self.expr(a.cond, b.cond)
            self.body(a.then_body, b.then_body, f"{where} > then")
            self.body(a.else_body, b.else_body, f"{where} > else")
            self.where = where
            self.vars_(a.return_vars, b.return_vars, "if results")
        elif isinstance(a, ScopeStmt):
            if a.kind != b.kind:
                self.fail(f"scope {a.kind} vs {b.kind}")
            self.exprs(list(a.args), list(b.args), "scope arguments")
            self.kwargs(a.kwargs, b.kwargs)
            self.define(a.var, b.var)
            self.body(a.body, b.body, f"{where} > scope body")

    def kwargs(self, a: tuple[tuple[str, Expr], ...], b: tuple[tuple[str, Expr], ...]) -> None:
        da, db = dict(a), dict(b)
        if set(da) != set(db):
            self.fail(f"keywords ({', '.join(sorted(da))}) vs ({', '.join(sorted(db))})")
        for k in da:
            self.expr(da[k], db[k])

    def function(self, a: Function, b: Function) -> None:
        self.fwd.clear()
        self.bwd.clear()
        self.where = f"function {a.name}"
        if a.name != b.name:
            self.fail(f"function name {a.name!r} vs {b.name!r}")
        if a.func_type != b.func_type:
            self.fail(f"function type {a.func_type.value} vs {b.func_type.value}")
        self.kwargs(a.decorator_kwargs, b.decorator_kwargs)
        if a.abstract != b.abstract:
            self.fail("an abstract (`...`) body on one side only")
        if len(a.params) != len(b.params):
            self.fail(f"{len(a.params)} parameters vs {len(b.params)}")
        for p, q in zip(a.params, b.params):
            if (p.is_out, p.inout) != (q.is_out, q.inout):
                self.fail(f"parameter {p.var.name!r}: pl.Out / pl.InOut on one side only")
            self.define(p.var, q.var)
        if len(a.return_types) != len(b.return_types):
            self.fail("different number of return types")
        for x, y in zip(a.return_types, b.return_types):
            self.type_(x, y, "return type")
        self.body(a.body, b.body, f"function {a.name}")

    def program(self, a: Program, b: Program) -> None:
        if len(a.functions) != len(b.functions):
            self.fail(f"{len(a.functions)} functions vs {len(b.functions)}")
        for f, g in zip(a.functions, b.functions):
            self.function(f, g)


def _bound(c: Call) -> dict[str, Expr]:
    op = REGISTRY.get(c.op)
    if op is not None:
        try:
            return dict(BoundCall(op, c, {}).args)
        except OpTypeError:
            pass
    d: dict[str, Expr] = {f"#{i}": a for i, a in enumerate(c.args)}
    d.update(dict(c.kwargs))
    return d


def _mem(m: object) -> str:
    return "unset" if m is None else m.value  # type: ignore[attr-defined]


def _show(e: Any) -> str:
    if e is None:
        return "nothing"
    try:
        return format_expr(e)
    except TypeError:
        return repr(e)


def _compare(a: Any, b: Any) -> _Mismatch | None:
    c = _Comparer()
    try:
        if isinstance(a, Program) and isinstance(b, Program):
            c.program(a, b)
        elif isinstance(a, Function) and isinstance(b, Function):
            c.function(a, b)
        elif isinstance(a, list) and isinstance(b, list):
            c.body(a, b, "body")
        elif isinstance(a, Stmt) and isinstance(b, Stmt):
            c.stmt(a, b, "statement")
        elif isinstance(a, Type) or isinstance(b, Type):
            c.type_(a, b, "type")
        else:
            c.expr(a, b)
    except _Mismatch as m:
        return m
    return None


def structural_equal(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` (programs, functions, bodies, statements, expressions
    or types) are equal up to a consistent renaming of variables."""
    return _compare(a, b) is None


def assert_structural_equal(a: Any, b: Any) -> None:
    """Raise ``AssertionError`` naming the first difference, with a text diff."""
    m = _compare(a, b)
    if m is None:
        return
    msg = f"not structurally equal — first difference at {m.where}: {m.what}"
    if isinstance(a, Program) and isinstance(b, Program):
        diff = difflib.unified_diff(print_program(a).splitlines(), print_program(b).splitlines(),
                                    "left", "right", lineterm="", n=2)
        msg += "\n" + "\n".join(diff)
    raise AssertionError(msg)
