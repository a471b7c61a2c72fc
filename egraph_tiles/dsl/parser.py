"""DSL text → IR :class:`Program`.

The text is read with Python's :mod:`ast` only; nothing of it is ever executed.
Every rejection is a :class:`DslError` carrying file, line and column, and saying
what was expected. See the README's DSL reference for the accepted syntax.
"""

from __future__ import annotations

import ast
import difflib
import gc
import warnings
from contextlib import contextmanager
from typing import Iterator
from dataclasses import dataclass, field

from ..ir.exprs import (static_type, BinOp, Call, Compare, Const, Expr, ListExpr, Neg, StrConst, Symbol, Var,
                        VarRef, const_int)
from ..ir.ops import REGISTRY, OpTypeError, infer_type
from ..ir.stmts import (AssignStmt, EvalStmt, ForStmt, Function, FunctionType, IfStmt, LoopKind,
                        Param, Program, ReturnStmt, ScopeStmt, Span, Stmt, WhileStmt, YieldStmt)
from ..ir.types import (DType, MemorySpace, MemRef, ScalarType, TensorType, TileType, TupleType,
                        Type, UnknownType)
from .errors import DslError

#: inputs larger than this are rejected before parsing (a kernel is a few KB)
MAX_INPUT_BYTES = 8_000_000
#: deepest expression / annotation nesting accepted
MAX_DEPTH = 100

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_LOOPS = {"range": LoopKind.RANGE, "pipeline": LoopKind.PIPELINE, "parallel": LoopKind.PARALLEL}
#: ``pl.`` calls that are statements, never values
_STATEMENT_CALLS = {"yield_", "cond", "range", "pipeline", "parallel", "while_", "split_aiv"}
#: ``pl.`` calls allowed only inside type annotations
_TYPE_CALLS = {"TileView", "MemRef"}
_PL_ROOTS = ("pl", "pld")
_RESERVED = {"pl", "pld", "self"}


def parse_program(text: str, filename: str = "<input>") -> Program:
    """Parse DSL text holding one ``@pl.program`` class into a :class:`Program`.

    Raises :class:`DslError` (file, line, col, message) on malformed or ill-typed text.
    """
    return _parse(text, filename, class_name=None, strict=True)


def parse_module(text: str, filename: str, class_name: str | None = None,
                 strict: bool = False) -> Program:
    """Parse a user's Python module: take the ``@pl.program`` class ``class_name`` (or the
    only one), resolving module-level constants from the module's AST. Non-strict mode
    ignores module statements that are not constants (the module is never executed)."""
    return _parse(text, filename, class_name=class_name, strict=strict)


# ---------------------------------------------------------------- driver


def _parse(text: object, filename: str, class_name: str | None, strict: bool) -> Program:
    # The reader allocates many short-lived objects and no cycles; pausing the cyclic
    # collector for the call roughly halves the time on large kernels.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse_unguarded(text, filename, class_name, strict)
    finally:
        if enabled:
            gc.enable()


def _parse_unguarded(text: object, filename: str, class_name: str | None, strict: bool) -> Program:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DslError(filename, 1, 1, f"input is not UTF-8 text ({e.reason})") from None
    if not isinstance(text, str):
        raise DslError(filename, 1, 1, f"expected DSL text (str), got {type(text).__name__}")
    if len(text) > MAX_INPUT_BYTES:
        raise DslError(filename, 1, 1, f"input is {len(text)} characters; expected a kernel "
                       f"of at most {MAX_INPUT_BYTES} characters")
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise DslError(filename, line, 1, "input contains a NUL byte; expected Python-syntax text")
    if not text.strip():
        raise DslError(filename, 1, 1, "empty input: expected a class decorated with @pl.program")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings of user text are not ours
            module = ast.parse(text, filename=filename)
    except SyntaxError as e:
        msg = e.msg or "invalid syntax"
        raise DslError(filename, e.lineno or 1, e.offset or 1,
                       f"{msg}; expected Python-syntax DSL text") from None
    except (RecursionError, MemoryError, ValueError, OverflowError):
        raise DslError(filename, 1, 1, "input is nested too deeply or is too large to "
                       "parse; expected a kernel of ordinary size") from None
    try:
        return _ModuleReader(filename, strict).read(module, class_name)
    except RecursionError:
        raise DslError(filename, 1, 1, f"input is nested too deeply; expected at most "
                       f"{MAX_DEPTH} levels") from None


def _err(filename: str, node: ast.AST | None, message: str) -> DslError:
    line = getattr(node, "lineno", 1) or 1
    col = (getattr(node, "col_offset", 0) or 0) + 1
    return DslError(filename, line, col, message)


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` → "a.b.c" for a chain of attributes over a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _describe(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return f"the string {node.value!r}"
        return f"the constant {node.value!r}"
    d = _dotted(node)
    if d is not None:
        return f"'{d}'"
    return f"a {type(node).__name__} expression"


# ---------------------------------------------------------------- module / class level


class _ModuleReader:
    def __init__(self, filename: str, strict: bool):
        self.filename = filename
        self.strict = strict
        self.constants: dict[str, Expr] = {}

    def err(self, node: ast.AST | None, message: str) -> DslError:
        return _err(self.filename, node, message)

    def read(self, module: ast.Module, class_name: str | None) -> Program:
        classes: list[ast.ClassDef] = []
        for stmt in module.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                    and isinstance(stmt.value.value, str):
                continue  # docstring
            if isinstance(stmt, ast.ClassDef) and self._is_program_class(stmt):
                classes.append(stmt)
                continue
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and self._constant(stmt):
                continue
            if self.strict:
                raise self.err(stmt, "expected an import, a module constant (NAME = 64) or a "
                               "class decorated with @pl.program")
        if class_name is not None:
            classes = [c for c in classes if c.name == class_name]
            if not classes:
                raise DslError(self.filename, 1, 1,
                               f"no class {class_name!r} decorated with @pl.program")
        if not classes:
            raise DslError(self.filename, 1, 1, "expected a class decorated with @pl.program")
        if len(classes) > 1:
            raise self.err(classes[1], "expected exactly one @pl.program class per file, "
                           f"found a second one ({classes[1].name!r})")
        return self._program(classes[0])

    def _is_program_class(self, cls: ast.ClassDef) -> bool:
        for d in cls.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            if _dotted(target) == "pl.program":
                return True
        return False

    def _constant(self, stmt: ast.Assign | ast.AnnAssign) -> bool:
        """Record ``NAME = <constant expression>``; False when it is not one."""
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1:
                return False
            target = stmt.targets[0]
        else:
            target = stmt.target
        if isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple) \
                and len(target.elts) == len(stmt.value.elts):
            pairs = list(zip(target.elts, stmt.value.elts))
            if all(isinstance(t, ast.Name) for t, _ in pairs):
                return all([self._constant(ast.Assign([t], v)) for t, v in pairs])
        if not isinstance(target, ast.Name) or stmt.value is None:
            return False
        reader = _ExprReader(self.filename, {}, self.constants)
        try:
            value = reader.expr(stmt.value)
        except DslError:
            if self.strict:
                raise
            self.constants.pop(target.id, None)
            return not self.strict
        self.constants[target.id] = _fold(value)
        return True

    def _program(self, cls: ast.ClassDef) -> Program:
        if cls.bases or cls.keywords:
            raise self.err(cls, "a @pl.program class takes no base classes")
        fdefs: list[ast.FunctionDef] = []
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef):
                fdefs.append(stmt)
            elif isinstance(stmt, ast.Pass):
                continue
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                    and isinstance(stmt.value.value, str):
                continue
            else:
                raise self.err(stmt, "expected a method decorated with @pl.function inside "
                               "the @pl.program class")
        seen: set[str] = set()
        sigs: dict[str, list[Type]] = {}
        for f in fdefs:
            if f.name in seen:
                raise self.err(f, f"function {f.name!r} is defined twice")
            seen.add(f.name)
            sigs[f.name] = self._return_types(f)
        funcs = [_FunctionReader(self.filename, self.constants, sigs).read(f) for f in fdefs]
        return Program(cls.name, funcs)

    def _return_types(self, f: ast.FunctionDef) -> list[Type]:
        if f.returns is None:
            return []
        r = _ExprReader(self.filename, {}, self.constants)
        node = f.returns
        if isinstance(node, ast.Constant) and node.value is None:
            return []
        if isinstance(node, ast.Subscript) and _dotted(node.value) in ("tuple", "pl.Tuple"):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return [r.type_(i)[0] for i in items]
        return [r.type_(node)[0]]


# ---------------------------------------------------------------- expressions and types


class _ExprReader:
    def __init__(self, filename: str, env: dict[str, Var], constants: dict[str, Expr]):
        self.filename = filename
        self.env = env
        self.constants = constants
        #: names rebound inside a loop / if body that ended: name -> line of that rebinding.
        #: After the body the name still means its value *before* the body, unlike Python.
        self.stale: dict[str, int] = {}

    def err(self, node: ast.AST | None, message: str) -> DslError:
        return _err(self.filename, node, message)

    # -- expressions

    def expr(self, node: ast.AST, depth: int = 0) -> Expr:
        if depth > MAX_DEPTH:
            raise self.err(node, f"expression nested too deeply; expected at most {MAX_DEPTH} levels")
        d = depth + 1
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or isinstance(v, (int, float)):
                return Const(v)
            if isinstance(v, str):
                return StrConst(v)
            raise self.err(node, f"unexpected {_describe(node)}; expected a number, a name or a call")
        if isinstance(node, ast.Name):
            if node.id in self.stale:
                raise self.err(node, f"{node.id!r} was bound inside a loop or if body at line "
                               f"{self.stale[node.id]}, which does not reach this point; expected "
                               "the value to leave the body through init_values=/pl.yield_, or a "
                               "new name")
            if node.id in self.env:
                return VarRef(self.env[node.id])
            if node.id in self.constants:
                return self.constants[node.id]
            if node.id in ("True", "False"):
                return Const(node.id == "True")
            raise self.err(node, f"name {node.id!r} is used before it is defined")
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                if isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
                    return Const(-node.operand.value)
                return Neg(self.expr(node.operand, d))
            if isinstance(node.op, ast.UAdd):
                return self.expr(node.operand, d)
            raise self.err(node, "unsupported unary operator; expected -x")
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise self.err(node, f"unsupported operator {type(node.op).__name__}; expected "
                               "one of + - * // %")
            return BinOp(op, self.expr(node.left, d), self.expr(node.right, d))
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise self.err(node, "chained comparison; expected a single comparison such as a < b")
            op = _CMPOPS.get(type(node.ops[0]))
            if op is None:
                raise self.err(node, "unsupported comparison; expected one of < <= > >= == !=")
            return Compare(op, self.expr(node.left, d), self.expr(node.comparators[0], d))
        if isinstance(node, (ast.List, ast.Tuple)):
            return ListExpr(tuple(self.expr(e, d) for e in node.elts))
        if isinstance(node, ast.Attribute):
            return self.symbol(node)
        if isinstance(node, ast.Call):
            return self.call(node, d)
        if isinstance(node, ast.Subscript):
            raise self.err(node, "a tile subscript must be the whole right-hand side of an "
                           "assignment; expected e.g. row = t[i, :]")
        raise self.err(node, f"unexpected {_describe(node)}; expected a number, a name, "
                       "scalar arithmetic, a list or a pl call")

    def symbol(self, node: ast.Attribute) -> Symbol:
        name = _dotted(node)
        if name is None:
            raise self.err(node, f"unexpected {_describe(node)}; expected a pl.* constant")
        parts = tuple(name.split("."))
        root = parts[0]
        if root in self.env:
            raise self.err(node, f"attribute access on variable {root!r} is not supported; "
                           "expected a pl op call")
        if root not in _PL_ROOTS:
            raise self.err(node, f"unknown name {name!r}; expected a pl.* constant such as pl.FP32")
        if root == "pld":
            return Symbol(parts)
        path = parts[1:]
        if len(path) == 1:
            if path[0] in DType.__members__:
                return Symbol(path, DType[path[0]])
            close = difflib.get_close_matches(path[0], list(DType.__members__), n=1)
            hint = f" (did you mean pl.{close[0]}?)" if close else ""
            raise self.err(node, f"unknown pl construct {name!r}{hint}; expected a dtype such as pl.FP32")
        if path[0] in ("Mem", "MemorySpace"):
            if len(path) != 2 or path[1] not in MemorySpace.__members__:
                raise self.err(node, f"unknown memory space {name!r}; expected one of "
                               + ", ".join(f"pl.Mem.{m}" for m in MemorySpace.__members__))
            return Symbol(("Mem", path[1]), MemorySpace[path[1]])
        if not path[0][:1].isupper():
            raise self.err(node, f"unknown pl construct {name!r}; expected a pl.* constant "
                           "such as pl.Mem.Vec or pl.PadValue.zero")
        return Symbol(path)

    def call(self, node: ast.Call, depth: int = 0) -> Call:
        name = _dotted(node.func)
        if name is None:
            raise self.err(node, "expected a call of a named op such as pl.tile.add(...)")
        root = name.split(".")[0]
        if root == "pl":
            op = name[3:]
            if op in _STATEMENT_CALLS:
                raise self.err(node, f"pl.{op} is a statement form; it cannot be used as a value here")
            if op not in REGISTRY and op not in _TYPE_CALLS:
                close = difflib.get_close_matches(op, list(REGISTRY), n=1)
                hint = f" (did you mean pl.{close[0]}?)" if close else ""
                raise self.err(node, f"unknown op pl.{op}{hint}; expected a registered pl op "
                               "(unregistered ops belong to another namespace, e.g. pld.*)")
        elif root == "self":
            op = name
        elif root in self.env:
            raise self.err(node, f"method call on variable {root!r} is not supported; "
                           "expected a pl op call")
        else:
            op = name
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.err(a, "*args is not supported; expected explicit arguments")
            args.append(self.expr(a, depth + 1))
        kwargs = []
        seen: set[str] = set()
        for k in node.keywords:
            if k.arg is None:
                raise self.err(k, "**kwargs is not supported; expected explicit keyword arguments")
            if k.arg in seen:
                raise self.err(k, f"keyword argument {k.arg!r} given twice")
            seen.add(k.arg)
            kwargs.append((k.arg, self.expr(k.value, depth + 1)))
        return Call(op, tuple(args), tuple(kwargs))

    # -- types

    def type_(self, node: ast.AST, depth: int = 0) -> tuple[Type, bool]:
        """An annotation → (type, is_out)."""
        if depth > 8:
            raise self.err(node, "type annotation nested too deeply")
        if not isinstance(node, ast.Subscript):
            raise self.err(node, f"unexpected {_describe(node)} as a type; expected pl.Tile[...], "
                           "pl.Tensor[...], pl.Scalar[...] or pl.Out[...]")
        head = _dotted(node.value)
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head in ("pl.Out", "pl.InOut"):
            if len(items) != 1:
                raise self.err(node, f"{head}[...] takes one type")
            return self.type_(items[0], depth + 1)[0], True
        if head == "pl.Scalar":
            if len(items) != 1:
                raise self.err(node, "expected pl.Scalar[dtype], e.g. pl.Scalar[pl.INDEX]")
            return ScalarType(self.dtype(items[0])), False
        if head in ("pl.Tensor", "pld.DistributedTensor", "pl.DistributedTensor"):
            if len(items) != 2:
                raise self.err(node, f"expected {head}[[rows, cols], dtype]")
            return TensorType(self.shape(items[0]), self.dtype(items[1]),
                              distributed=head != "pl.Tensor"), False
        if head == "pl.Tile":
            return self.tile_type(node, items), False
        if head in ("tuple", "pl.Tuple"):
            return TupleType(tuple(self.type_(i, depth + 1)[0] for i in items)), False
        raise self.err(node, f"unknown type {head!r}; expected pl.Tile, pl.Tensor, pl.Scalar, "
                       "pl.Out or pld.DistributedTensor")

    def tile_type(self, node: ast.AST, items: list[ast.AST]) -> TileType:
        if len(items) < 2:
            raise self.err(node, "expected pl.Tile[[rows, cols], dtype, memory, ...]")
        shape = self.shape(items[0])
        dtype = self.dtype(items[1])
        memory: MemorySpace | None = None
        memref: MemRef | None = None
        view: Expr | None = None
        valid: tuple[Expr, ...] | None = None
        for it in items[2:]:
            e = self._memref_name(it) or self.expr(it)
            if isinstance(e, Symbol) and isinstance(e.value, MemorySpace) and memory is None:
                memory = e.value
            elif isinstance(e, Call) and e.op == "MemRef" and memref is None:
                if len(e.args) != 1 or e.kwargs:
                    raise self.err(it, "expected pl.MemRef(byte_offset): an int, -1 or a name")
                off = e.args[0]
                c = const_int(off)
                if c is not None:
                    memref = MemRef(c)
                elif isinstance(off, (VarRef, BinOp, StrConst)):
                    memref = MemRef(off)
                else:
                    raise self.err(it, "expected pl.MemRef(byte_offset): an int, -1 or a name")
            elif isinstance(e, Call) and e.op == "TileView" and view is None and valid is None:
                if e.args:
                    raise self.err(it, "expected keyword arguments in pl.TileView(valid_shape=[...], ...)")
                vs = e.kwarg("valid_shape")
                if vs is not None:
                    if not isinstance(vs, ListExpr) or len(vs.items) != len(shape):
                        raise self.err(it, f"TileView valid_shape must be a list of {len(shape)} dims")
                    valid = vs.items
                if any(k != "valid_shape" for k, _ in e.kwargs):
                    view = e
            else:
                raise self.err(it, f"unexpected {_describe(it)} in pl.Tile[...]; expected a memory "
                               "space (pl.Mem.Vec), pl.MemRef(...) or pl.TileView(...), each at most once")
        return TileType(shape, dtype, memory, valid, memref, view)

    def _memref_name(self, it: ast.AST) -> Call | None:
        """``pl.MemRef(buf)`` with ``buf`` an undefined name: an unknown offset named buf."""
        if (isinstance(it, ast.Call) and _dotted(it.func) == "pl.MemRef" and len(it.args) == 1
                and isinstance(it.args[0], ast.Name) and it.args[0].id not in self.env
                and it.args[0].id not in self.constants and not it.keywords):
            return Call("MemRef", (StrConst(it.args[0].id),))
        return None

    def shape(self, node: ast.AST) -> tuple[Expr, ...]:
        e = self.expr(node)
        if not isinstance(e, ListExpr):
            raise self.err(node, f"unexpected {_describe(node)}; expected a shape such as [16, 64]")
        for item, sub in zip(e.items, getattr(node, "elts", [node] * len(e.items))):
            if isinstance(item, (StrConst, ListExpr, Symbol, Call, Compare)) or (
                    isinstance(item, Const) and not isinstance(item.value, int)) or (
                    isinstance(item, Const) and isinstance(item.value, bool)):
                raise self.err(sub, f"unexpected {_describe(sub)} in a shape; expected an int "
                               "or a scalar name")
        return e.items

    def dtype(self, node: ast.AST) -> DType:
        e = self.expr(node)
        if isinstance(e, Symbol) and isinstance(e.value, DType):
            return e.value
        raise self.err(node, f"unexpected {_describe(node)}; expected a dtype such as pl.FP32")


def _fold(e: Expr) -> Expr:
    c = const_int(e)
    if c is not None and not isinstance(e, Const):
        return Const(c)
    if isinstance(e, ListExpr):
        return ListExpr(tuple(_fold(i) for i in e.items))
    return e


# ---------------------------------------------------------------- function bodies


@dataclass
class _Yield:
    node: ast.AST
    targets: list[str]
    annotation: Type | None
    stmt: YieldStmt


@dataclass
class _Block:
    stmts: list[Stmt] = field(default_factory=list)
    yield_: _Yield | None = None


class _FunctionReader(_ExprReader):
    def __init__(self, filename: str, constants: dict[str, Expr], sigs: dict[str, list[Type]]):
        super().__init__(filename, {}, constants)
        self.sigs = sigs
        self.lines: dict[int, int] = {}

    def span(self, node: ast.AST) -> Span:
        return Span(self.filename, getattr(node, "lineno", 0), getattr(node, "col_offset", 0))

    def read(self, f: ast.FunctionDef) -> Function:
        func_type, dkw = self._decorator(f)
        a = f.args
        if a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or a.defaults or a.kw_defaults:
            raise self.err(f, "expected plain parameters (name: type), no defaults, *args or **kwargs")
        params: list[Param] = []
        has_self = False
        for i, arg in enumerate(a.args):
            if i == 0 and arg.arg == "self" and arg.annotation is None:
                has_self = True
                continue
            if arg.annotation is None:
                raise self.err(arg, f"parameter {arg.arg!r} needs a type annotation such as "
                               "pl.Tensor[[16, 64], pl.FP32]")
            self._check_name(arg, arg.arg)
            if arg.arg in self.env:
                raise self.err(arg, f"duplicate parameter {arg.arg!r}")
            t, is_out = self.type_(arg.annotation)
            v = Var(arg.arg, t)
            self.env[arg.arg] = v
            params.append(Param(v, is_out))
        block = self.block(f.body, allow_yield=False)
        return Function(f.name, params, self.sigs[f.name], block.stmts, func_type, dkw, has_self,
                        self.span(f))

    def _decorator(self, f: ast.FunctionDef) -> tuple[FunctionType, tuple[tuple[str, Expr], ...]]:
        decs = [d for d in f.decorator_list
                if _dotted(d.func if isinstance(d, ast.Call) else d) == "pl.function"]
        if len(f.decorator_list) != 1 or len(decs) != 1:
            raise self.err(f, f"function {f.name!r}: expected exactly one decorator, "
                           "@pl.function(type=pl.FunctionType.InCore)")
        d = decs[0]
        if not isinstance(d, ast.Call):
            return FunctionType.Opaque, ()
        if d.args:
            raise self.err(d, "@pl.function takes keyword arguments only (type=, level=, role=)")
        ftype = FunctionType.Opaque
        kws: list[tuple[str, Expr]] = []
        for k in d.keywords:
            if k.arg is None:
                raise self.err(k, "**kwargs is not supported in @pl.function")
            if k.arg == "type":
                name = _dotted(k.value) or ""
                parts = name.split(".")
                if len(parts) != 3 or parts[:2] != ["pl", "FunctionType"] \
                        or parts[2] not in FunctionType.__members__:
                    raise self.err(k.value, "expected type=pl.FunctionType.<" +
                                   "|".join(FunctionType.__members__) + ">")
                ftype = FunctionType[parts[2]]
            else:
                kws.append((k.arg, self.expr(k.value)))
        return ftype, tuple(kws)

    def _check_name(self, node: ast.AST, name: str) -> None:
        if name in _RESERVED:
            raise self.err(node, f"{name!r} is reserved; expected another variable name")

    def bind(self, node: ast.AST, name: str, t: Type | None) -> Var:
        self._check_name(node, name)
        v = Var(name, t)
        self.env[name] = v
        self.stale.pop(name, None)
        self.lines[id(v)] = getattr(node, "lineno", 0)
        return v

    @contextmanager
    def child_scope(self) -> Iterator[None]:
        """A loop / if body: its bindings do not escape; names it rebinds go stale."""
        saved_env, saved_stale = self.env, self.stale
        self.env, self.stale = dict(saved_env), dict(saved_stale)
        try:
            yield
        finally:
            inner = self.env
            self.env, self.stale = saved_env, saved_stale
        for name, var in inner.items():
            if saved_env.get(name) is not var:
                self.stale.setdefault(name, self.lines.get(id(var), 0))

    # -- typing helpers

    def type_of(self, e: Expr) -> Type | None:
        if isinstance(e, (BinOp, Neg)):
            return self._scalar_type(e, None)  # checks the operands' types too
        return static_type(e)

    def _scalar_type(self, e: Expr, node: ast.AST | None) -> ScalarType:
        dt: DType | None = None
        stack = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, VarRef):
                t = x.var.type
                if isinstance(t, (TileType, TensorType)):
                    raise self.err(node, f"arithmetic on the {type(t).__name__[:-4].lower()} "
                                   f"{x.var.name!r}; expected scalars (use pl.tile.* ops on tiles)")
                if isinstance(t, ScalarType) and dt is None:
                    dt = t.dtype
            elif isinstance(x, (BinOp, Compare)):
                stack += [x.lhs, x.rhs]
            elif isinstance(x, Neg):
                stack.append(x.operand)
            elif isinstance(x, Const) and isinstance(x.value, float) and dt is None:
                dt = DType.FP32
            elif isinstance(x, (ListExpr, Call, Symbol, StrConst)):
                raise self.err(node, "expected a scalar expression")
        return ScalarType(dt or DType.INDEX)

    def value_type(self, value: Expr, node: ast.AST, annotation: Type | None) -> Type:
        if isinstance(value, Call):
            if value.op in REGISTRY:
                try:
                    return infer_type(value, self.type_of)
                except OpTypeError as e:
                    raise self.err(node, f"ill-typed pl.{value.op} call: {e}") from None
            if value.op.startswith("self."):
                fn = value.op[5:]
                if fn not in self.sigs:
                    raise self.err(node, f"call of unknown program function {fn!r}")
                rt = self.sigs[fn]
                if annotation is not None:
                    return annotation
                if len(rt) == 1:
                    return rt[0]
                return TupleType(tuple(rt)) if rt else UnknownType()
            return annotation or UnknownType()
        if isinstance(value, VarRef):
            return value.var.type or UnknownType()
        if isinstance(value, Const):
            return self.type_of(value)  # type: ignore[return-value]
        if isinstance(value, Compare):
            self._scalar_type(value, node)
            return ScalarType(DType.BOOL)
        if isinstance(value, (BinOp, Neg)):
            return self._scalar_type(value, node)
        raise self.err(node, "expected a pl op call, a scalar expression or a variable on the "
                       "right-hand side")

    def agree(self, node: ast.AST, name: str, inferred: Type, ann: Type) -> Type:
        """Check an annotation against the inferred type; return the type to keep."""
        def bad(what: str) -> DslError:
            return self.err(node, f"annotation of {name!r} disagrees with the value: {what}")

        if isinstance(inferred, UnknownType):
            return ann
        if isinstance(ann, ScalarType) and isinstance(inferred, ScalarType):
            if ann.dtype != inferred.dtype and not (ann.dtype.is_int and inferred.dtype.is_int):
                raise bad(f"annotated {ann.dtype.name}, value is {inferred.dtype.name}")
            return ann
        if type(ann) is not type(inferred):
            raise bad(f"annotated {type(ann).__name__}, value is {type(inferred).__name__}")
        if isinstance(ann, TileType) and isinstance(inferred, TileType):
            if ann.dtype != inferred.dtype:
                raise bad(f"annotated dtype {ann.dtype.name}, value has {inferred.dtype.name}")
            if len(ann.shape) != len(inferred.shape) or any(
                    const_int(a) is not None and const_int(b) is not None and const_int(a) != const_int(b)
                    for a, b in zip(ann.shape, inferred.shape)):
                raise bad(f"annotated shape {_dims(ann.shape)}, value has shape {_dims(inferred.shape)}")
            if ann.memory is not None and inferred.memory is not None and ann.memory != inferred.memory:
                raise bad(f"annotated memory {ann.memory.value}, value is in {inferred.memory.value}")
            if ann.memory is None and inferred.memory is not None:
                ann = TileType(ann.shape, ann.dtype, inferred.memory, ann.valid_shape, ann.memref, ann.view)
            if ann.valid_shape is None and inferred.valid_shape is not None:
                ann = TileType(ann.shape, ann.dtype, ann.memory, inferred.valid_shape, ann.memref, ann.view)
            return ann
        if isinstance(ann, TensorType) and isinstance(inferred, TensorType):
            if ann.dtype != inferred.dtype:
                raise bad(f"annotated dtype {ann.dtype.name}, value has {inferred.dtype.name}")
            if len(ann.shape) != len(inferred.shape) or any(
                    const_int(a) is not None and const_int(b) is not None and const_int(a) != const_int(b)
                    for a, b in zip(ann.shape, inferred.shape)):
                raise bad(f"annotated shape {_dims(ann.shape)}, value has shape {_dims(inferred.shape)}")
            return ann
        return ann

    # -- statements

    def block(self, body: list[ast.stmt], allow_yield: bool) -> _Block:
        out = _Block()
        for i, s in enumerate(body):
            y = self._yield(s)
            if y is not None:
                if not allow_yield:
                    raise self.err(s, "pl.yield_ is only allowed as the last statement of a "
                                   "loop, while or if/else body")
                if i != len(body) - 1:
                    raise self.err(s, "pl.yield_ must be the last statement of its body")
                out.yield_ = y
                out.stmts.append(y.stmt)
                continue
            st = self.stmt(s)
            if st is not None:
                out.stmts.append(st)
        return out

    def _yield(self, s: ast.stmt) -> _Yield | None:
        value: ast.AST | None = None
        targets: list[str] = []
        ann: Type | None = None
        if isinstance(s, ast.Expr):
            value = s.value
        elif isinstance(s, ast.Assign):
            value = s.value
        elif isinstance(s, ast.AnnAssign):
            value = s.value
        if not (isinstance(value, ast.Call) and _dotted(value.func) == "pl.yield_"):
            return None
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise self.err(s, "expected one target list for pl.yield_ (a, b = pl.yield_(x, y))")
            t = s.targets[0]
            elts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
            for e in elts:
                if not isinstance(e, ast.Name):
                    raise self.err(e, "expected variable names as the targets of pl.yield_")
                targets.append(e.id)
        elif isinstance(s, ast.AnnAssign):
            if not isinstance(s.target, ast.Name):
                raise self.err(s, "expected a variable name as the target of pl.yield_")
            targets.append(s.target.id)
            ann = self.type_(s.annotation)[0]
        if value.keywords:
            raise self.err(value, "pl.yield_ takes positional values only")
        if len(set(targets)) != len(targets):
            raise self.err(s, "the targets of pl.yield_ must be distinct names")
        vals = [self.expr(a) for a in value.args]
        if targets and len(vals) != len(targets):
            raise self.err(s, f"pl.yield_ yields {len(vals)} value(s) into {len(targets)} target(s)")
        return _Yield(s, targets, ann, YieldStmt(vals, self.span(s)))

    def stmt(self, s: ast.stmt) -> Stmt | None:
        if isinstance(s, ast.Pass):
            return None
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                return None  # docstring
            if not isinstance(s.value, ast.Call):
                raise self.err(s, f"unexpected {_describe(s.value)} as a statement; expected an "
                               "assignment or an op call")
            if _dotted(s.value.func) == "pl.cond":
                raise self.err(s, "pl.cond(...) is only allowed as the first statement of a "
                               "pl.while_ body")
            return EvalStmt(self.call(s.value), self.span(s))
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            return self.assign(s)
        if isinstance(s, ast.For):
            return self.for_(s)
        if isinstance(s, ast.If):
            return self.if_(s)
        if isinstance(s, ast.Return):
            if s.value is None:
                vals: list[Expr] = []
            elif isinstance(s.value, ast.Tuple):
                vals = [self.expr(e) for e in s.value.elts]
            else:
                vals = [self.expr(s.value)]
            return ReturnStmt(vals, self.span(s))
        if isinstance(s, ast.While):
            raise self.err(s, "Python while loops are not supported; expected "
                           "for (a,) in pl.while_(init_values=(x,)): with pl.cond(...) first")
        raise self.err(s, f"unsupported statement ({type(s).__name__}); expected an assignment, "
                       "an op call, for over pl.range/pl.pipeline/pl.parallel/pl.while_/"
                       "pl.split_aiv, if/else or return")

    def assign(self, s: ast.Assign | ast.AnnAssign | ast.AugAssign) -> Stmt:
        ann: Type | None = None
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise self.err(s, "chained assignment; expected one target per statement")
            target = s.targets[0]
            value_node: ast.AST = s.value
        elif isinstance(s, ast.AnnAssign):
            target = s.target
            if s.value is None:
                raise self.err(s, "annotation without a value; expected name: type = value")
            value_node = s.value
            ann, is_out = self.type_(s.annotation)
            if is_out:
                raise self.err(s.annotation, "pl.Out[...] is only allowed on parameters")
        else:
            target = s.target
            op = _BINOPS.get(type(s.op))
            if op is None or not isinstance(target, ast.Name):
                raise self.err(s, "unsupported augmented assignment; expected x += / -= / *= ...")
            value_node = ast.BinOp(ast.Name(target.id, ast.Load()), s.op, s.value)
            ast.copy_location(value_node, s)
        if not isinstance(target, ast.Name):
            raise self.err(target, "expected a single variable name as the assignment target "
                           "(tuple unpacking and subscripts are not supported)")
        if isinstance(value_node, ast.Subscript):  # NKI-style t[i, :], t[ds(off, 64), :]
            from .subscripts import lower_subscript
            value: Expr = lower_subscript(self, value_node)
        else:
            value = self.expr(value_node)
        t = self.value_type(value, s, ann)
        if ann is not None:
            t = self.agree(s, target.id, t, ann)
        v = self.bind(target, target.id, t)
        return AssignStmt(v, value, self.span(s))

    def _names(self, node: ast.AST, what: str) -> list[ast.Name]:
        elts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else None
        if elts is None:
            raise self.err(node, f"expected a parenthesized tuple of {what}, e.g. (a,)")
        for e in elts:
            if not isinstance(e, ast.Name):
                raise self.err(e, f"expected a variable name in the {what}")
        return elts  # type: ignore[return-value]

    def _init_values(self, call: ast.Call) -> tuple[list[Expr], list[tuple[str, Expr]], ast.AST | None]:
        inits: list[Expr] = []
        kws: list[tuple[str, Expr]] = []
        init_node = None
        for k in call.keywords:
            if k.arg is None:
                raise self.err(k, "**kwargs is not supported in a loop header")
            if k.arg == "init_values":
                init_node = k.value
                if not isinstance(k.value, (ast.Tuple, ast.List)):
                    raise self.err(k.value, "expected init_values=(x, ...) as a tuple")
                inits = [self.expr(e) for e in k.value.elts]
            else:
                kws.append((k.arg, self.expr(k.value)))
        return inits, kws, init_node

    def _run_body(self, body: list[ast.stmt], binds: list[tuple[ast.AST, str, Type | None]]
                  ) -> tuple[_Block, list[Var]]:
        with self.child_scope():
            vs = [self.bind(n, name, t) for n, name, t in binds]
            blk = self.block(body, allow_yield=True)
        return blk, vs

    def _carried(self, s: ast.AST, blk: _Block, n: int, what: str,
                 carry_types: list[Type | None]) -> list[Var]:
        """Bind the return vars named by the body's trailing yield."""
        y = blk.yield_
        if n == 0:
            if y is not None:
                raise self.err(y.node, f"this {what} has no init_values, so its body cannot pl.yield_")
            return []
        if y is None:
            raise self.err(s, f"this {what} carries {n} value(s); expected its body to end with "
                           f"{_yield_example(n)}")
        if len(y.stmt.values) != n or len(y.targets) != n:
            raise self.err(y.node, f"mismatched carries: the {what} carries {n} value(s) but "
                           f"pl.yield_ yields {len(y.stmt.values)} into {len(y.targets)} target(s)")
        out = []
        for name, t in zip(y.targets, carry_types):
            if y.annotation is not None:
                t = y.annotation
            out.append(self.bind(y.node, name, t))
        return out

    def for_(self, s: ast.For) -> Stmt:
        if s.orelse:
            raise self.err(s.orelse[0], "for/else is not supported")
        it = s.iter
        name = _dotted(it.func) if isinstance(it, ast.Call) else None
        if name is None or not name.startswith("pl.") or name[3:] not in (*_LOOPS, "while_", "split_aiv"):
            raise self.err(it, "expected a loop over pl.range(...), pl.pipeline(...), "
                           "pl.parallel(...), pl.while_(init_values=...) or pl.split_aiv(...)")
        assert isinstance(it, ast.Call)
        kind = name[3:]
        if kind == "split_aiv":
            return self._scope(s, it)
        if kind == "while_":
            return self._while(s, it)
        args = [self.expr(a) for a in it.args]
        if not 1 <= len(args) <= 3:
            raise self.err(it, f"{name} takes 1 to 3 positional arguments (stop | start, stop "
                           f"[, step]), got {len(args)}")
        if len(args) == 1:
            start, stop, step = Const(0), args[0], Const(1)
        elif len(args) == 2:
            start, stop, step = args[0], args[1], Const(1)
        else:
            start, stop, step = args
        for a, n in zip((start, stop, step), it.args if len(args) == 3 else [None] * 3):
            if isinstance(a, (ListExpr, StrConst, Symbol, Call)):
                raise self.err(n or it, f"{name} bounds must be scalar expressions")
        inits, kws, init_node = self._init_values(it)
        tgt = s.target
        if isinstance(tgt, ast.Name):
            loop_name, carry_names = tgt, []
        elif isinstance(tgt, ast.Tuple) and len(tgt.elts) == 2 and isinstance(tgt.elts[0], ast.Name):
            loop_name = tgt.elts[0]
            carry_names = self._names(tgt.elts[1], "loop-carried names")
        else:
            raise self.err(tgt, "expected `for i in ...` or `for i, (a, b) in ...(init_values=(x, y))`")
        if len(carry_names) != len(inits):
            raise self.err(init_node or tgt, f"mismatched carries: {len(carry_names)} loop-carried "
                           f"name(s) but {len(inits)} init value(s)")
        ctypes = [self.type_of(e) for e in inits]
        binds = [(loop_name, loop_name.id, ScalarType(DType.INDEX))]
        binds += [(n, n.id, t) for n, t in zip(carry_names, ctypes)]
        blk, vs = self._run_body(s.body, binds)
        rets = self._carried(s, blk, len(inits), "loop", ctypes)
        return ForStmt(vs[0], _LOOPS[kind], start, stop, step, vs[1:], inits, blk.stmts, rets,
                       tuple(kws), self.span(s))

    def _while(self, s: ast.For, it: ast.Call) -> Stmt:
        if it.args:
            raise self.err(it, "pl.while_ takes only init_values=(...)")
        inits, kws, init_node = self._init_values(it)
        if kws:
            raise self.err(it, f"pl.while_ takes only init_values=(...), got {kws[0][0]}=")
        names = self._names(s.target, "while-carried names")
        if len(names) != len(inits):
            raise self.err(init_node or s.target, f"mismatched carries: {len(names)} carried "
                           f"name(s) but {len(inits)} init value(s)")
        first = s.body[0]
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Call)
                and _dotted(first.value.func) == "pl.cond"):
            raise self.err(first, "expected pl.cond(<condition>) as the first statement of a "
                           "pl.while_ body")
        cnode = first.value
        if len(cnode.args) != 1 or cnode.keywords:
            raise self.err(cnode, "pl.cond takes exactly one condition")
        ctypes = [self.type_of(e) for e in inits]
        with self.child_scope():
            vs = [self.bind(n, n.id, t) for n, t in zip(names, ctypes)]
            cond = self.expr(cnode.args[0])
            blk = self.block(s.body[1:], allow_yield=True)
        rets = self._carried(s, blk, len(inits), "while loop", ctypes)
        return WhileStmt(vs, inits, cond, blk.stmts, rets, self.span(s))

    def _scope(self, s: ast.For, it: ast.Call) -> Stmt:
        if not isinstance(s.target, ast.Name):
            raise self.err(s.target, "expected `for lane in pl.split_aiv(...)`")
        args = tuple(self.expr(a) for a in it.args)
        _, kws, _ = self._init_values(it)
        if any(k == "init_values" for k in (k.arg for k in it.keywords)):
            raise self.err(it, "pl.split_aiv takes no init_values")
        v = self.bind(s.target, s.target.id, ScalarType(DType.INDEX))
        blk = self.block(s.body, allow_yield=False)
        return ScopeStmt("split_aiv", v, args, tuple(kws), blk.stmts, self.span(s))

    def if_(self, s: ast.If) -> Stmt:
        cond = self.expr(s.test)
        if isinstance(cond, (ListExpr, StrConst, Symbol)):
            raise self.err(s.test, "expected a scalar condition such as flag > 0")
        then, _ = self._run_body(s.body, [])
        els, _ = self._run_body(s.orelse, []) if s.orelse else (_Block(), [])
        ty, ey = then.yield_, els.yield_
        if ty is not None and ey is None and len(s.orelse) == 1 and isinstance(s.orelse[0], ast.If) \
                and els.stmts and isinstance(els.stmts[-1], IfStmt):
            # `elif` arms that yield: the nested if's results flow out of the else arm
            inner = els.stmts[-1]
            if [v.name for v in inner.return_vars] == ty.targets:
                y = YieldStmt([VarRef(v) for v in inner.return_vars], self.span(s.orelse[0]))
                els.stmts.append(y)
                ey = _Yield(s.orelse[0], list(ty.targets), None, y)
        rets: list[Var] = []
        if ty is None and ey is None:
            pass
        elif ty is None or ey is None:
            node = (ty or ey).node  # type: ignore[union-attr]
            raise self.err(node, "only one arm of this if yields; expected both the if and the "
                           "else arm to end with pl.yield_ into the same names")
        else:
            if ty.targets != ey.targets:
                raise self.err(ey.node, f"the if arm yields into ({', '.join(ty.targets)}) but the "
                               f"else arm into ({', '.join(ey.targets)}); expected the same names")
            if not ty.targets:
                raise self.err(ty.node, "expected x = pl.yield_(...) with target names in an if arm")
            ctypes = [self.type_of(e) for e in ty.stmt.values]
            rets = self._carried(s, then, len(ty.targets), "if", ctypes)
        return IfStmt(cond, then.stmts, els.stmts, rets, self.span(s))


def _dims(shape: tuple[Expr, ...]) -> str:
    from .printer import format_expr

    return "[" + ", ".join(format_expr(d) for d in shape) + "]"


def _yield_example(n: int) -> str:
    names = ", ".join(f"r{i}" for i in range(n))
    vals = ", ".join(f"v{i}" for i in range(n))
    return f"`{names} = pl.yield_({vals})`"
