"""Reading the module, the ``@pl.program`` class and each ``@pl.function`` header."""

from __future__ import annotations

import ast
from contextlib import contextmanager
from typing import Iterator

from ..ir.exprs import DynDim, Expr, Var
from ..ir.stmts import Function, FunctionType, Param, Program, Span
from ..ir.types import Type
from .errors import DslError
from .forms import RESERVED
from .read_common import dotted, fold_constant, located_error
from .read_exprs import ExprReader
from .read_stmts import StmtReader
from .read_types import ValueTyping


class ModuleReader:
    def __init__(self, filename: str, strict: bool):
        self.filename = filename
        self.strict = strict
        self.constants: dict[str, Expr] = {}

    def err(self, node: ast.AST | None, message: str) -> DslError:
        return located_error(self.filename, node, message)

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
            if dotted(target) == "pl.program":
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
        v = stmt.value
        if isinstance(v, ast.Call) and dotted(v.func) == "pl.dynamic":
            if len(v.args) != 1 or not isinstance(v.args[0], ast.Constant) \
                    or v.args[0].value != target.id or v.keywords:
                raise self.err(v, f'expected {target.id} = pl.dynamic("{target.id}")')
            self.constants[target.id] = DynDim(target.id)
            return True
        reader = ExprReader(self.filename, {}, self.constants)
        try:
            value = reader.expr(stmt.value)
        except DslError:
            if self.strict:
                raise
            self.constants.pop(target.id, None)
            return not self.strict
        self.constants[target.id] = fold_constant(value)
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
        funcs = [FunctionReader(self.filename, self.constants, sigs).read(f) for f in fdefs]
        return Program(cls.name, funcs)

    def _return_types(self, f: ast.FunctionDef) -> list[Type]:
        if f.returns is None:
            return []
        r = ExprReader(self.filename, {}, self.constants)
        node = f.returns
        if isinstance(node, ast.Constant) and node.value is None:
            return []
        if isinstance(node, ast.Subscript) and dotted(node.value) in ("tuple", "pl.Tuple"):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return [r.type_(i)[0] for i in items]
        return [r.type_(node)[0]]



#: "no entry" in the scope undo log
_GONE = object()


class FunctionReader(StmtReader, ValueTyping, ExprReader):
    def __init__(self, filename: str, constants: dict[str, Expr], sigs: dict[str, list[Type]]):
        super().__init__(filename, {}, constants)
        self.sigs = sigs
        self.lines: dict[int, int] = {}
        #: the open child scope's edits of ``env`` / ``stale`` (dict, name, old value)
        self.undo: list[tuple[dict, str, object]] | None = None

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
            t, direction = self.type_(arg.annotation)
            v = Var(arg.arg, t)
            self.env[arg.arg] = v
            params.append(Param(v, bool(direction), direction == "inout"))
        body = f.body
        last = body[-1]
        abstract = isinstance(last, ast.Expr) and isinstance(last.value, ast.Constant) \
            and last.value.value is Ellipsis
        block = self.block(body[:-1] if abstract else body, allow_yield=False)
        return Function(f.name, params, self.sigs[f.name], block.stmts, func_type, dkw, has_self,
                        self.span(f), abstract)

    def _decorator(self, f: ast.FunctionDef) -> tuple[FunctionType, tuple[tuple[str, Expr], ...]]:
        decs = [d for d in f.decorator_list
                if dotted(d.func if isinstance(d, ast.Call) else d) == "pl.function"]
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
                name = dotted(k.value) or ""
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
        if name in RESERVED:
            raise self.err(node, f"{name!r} is reserved; expected another variable name")

    def bind(self, node: ast.AST, name: str, t: Type | None) -> Var:
        self._check_name(node, name)
        v = Var(name, self.shared_type(t))
        self._put(self.env, name, v)
        if name in self.stale:
            self._put(self.stale, name, _GONE)
        self.lines[id(v)] = getattr(node, "lineno", 0)
        return v

    def _put(self, d: dict, name: str, value: object) -> None:
        """``d[name] = value`` (``_GONE`` deletes), logged so the enclosing scope can undo it."""
        if self.undo is not None:
            self.undo.append((d, name, d.get(name, _GONE)))
        if value is _GONE:
            d.pop(name, None)
        else:
            d[name] = value

    @contextmanager
    def child_scope(self) -> Iterator[None]:
        """A loop / if body: its bindings do not escape; names it rebinds go stale.  The scope
        edits ``env`` / ``stale`` in place and undoes its edits on exit (an undo log, so a scope
        costs what it binds, not the size of the environment)."""
        outer, self.undo = self.undo, []
        try:
            yield
        finally:
            log, self.undo = self.undo, outer
            inner = {name: self.env.get(name) for d, name, _ in log if d is self.env}
            for d, name, old in reversed(log):
                if old is _GONE:
                    d.pop(name, None)
                else:
                    d[name] = old
        for name, var in inner.items():
            if var is not None and self.env.get(name) is not var and name not in self.stale:
                self._put(self.stale, name, self.lines.get(id(var), 0))

    # -- typing helpers
