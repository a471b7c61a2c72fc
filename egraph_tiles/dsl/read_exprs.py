"""Reading expressions: literals, names, scalar arithmetic, lists, ``pl.*`` constants and calls."""

from __future__ import annotations

import ast
import difflib

from ..ir.exprs import (BinOp, Call, Compare, Const, DictExpr, Expr, ListExpr, Neg, StrConst, Symbol,
                        Var, VarRef)
from ..ir.ops import REGISTRY
from ..ir.types import DType, MemorySpace, Type
from .errors import DslError
from .forms import (BINOPS, BOOLOPS, CMPOPS, UNARY_OPS, LOWERCASE_ENUMS, MAX_DEPTH, MORE_BINOPS, PL_ROOTS,
                    STATEMENT_CALLS, TYPE_CALLS)
from .read_common import describe, dotted, located_error
from .read_types import TypeReader


class ExprReader(TypeReader):
    def __init__(self, filename: str, env: dict[str, Var], constants: dict[str, Expr]):
        self.filename = filename
        self.env = env
        self.constants = constants
        #: names rebound inside a loop / if body that ended: name -> line of that rebinding.
        #: After the body the name still means its value *before* the body, unlike Python.
        self.stale: dict[str, int] = {}
        #: one instance per distinct integer literal / pl.* constant / op name read: a long
        #: kernel repeats the same few thousands times (IR nodes are immutable and compare by
        #: value, so sharing them changes nothing but the memory)
        self.shared: dict[object, object] = {}

    def shared_type(self, t: Type | None) -> Type | None:
        """The first type read equal to ``t`` (a long kernel declares a few dozen distinct tile
        types tens of thousands of times)."""
        try:
            return self.shared.setdefault(t, t)  # type: ignore[return-value]
        except TypeError:  # a field that is not hashable: kept as read
            return t

    def share(self, key: object, make):  # type: ignore[no-untyped-def]
        """The instance read first for ``key`` (made by ``make()`` the first time)."""
        x = self.shared.get(key)
        if x is None:
            x = self.shared[key] = make()
        return x

    def err(self, node: ast.AST | None, message: str) -> DslError:
        return located_error(self.filename, node, message)

    # -- expressions

    def expr(self, node: ast.AST, depth: int = 0) -> Expr:
        if depth > MAX_DEPTH:
            raise self.err(node, f"expression nested too deeply; expected at most {MAX_DEPTH} levels")
        d = depth + 1
        if isinstance(node, ast.Constant):
            v = node.value
            if type(v) is int:  # not bool / float: 1 == True == 1.0 and 0.0 == -0.0
                c = self.shared.get(v)  # the most frequent node: no closure
                if c is None:
                    c = self.shared[v] = Const(v)
                return c  # type: ignore[return-value]
            if isinstance(v, bool) or isinstance(v, (int, float)):
                return Const(v)
            if isinstance(v, str):
                return StrConst(v)
            raise self.err(node, f"unexpected {describe(node)}; expected a number, a name or a call")
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
            # ``not x`` / ``~x``: kept as written, like a call the optimizer does not interpret
            return Call(UNARY_OPS[type(node.op)], (self.expr(node.operand, d),))
        if isinstance(node, ast.BinOp):
            op = BINOPS.get(type(node.op)) or MORE_BINOPS.get(type(node.op))
            if op is None:
                raise self.err(node, f"unsupported operator {type(node.op).__name__}; expected "
                               "one of + - * // % / ** & | ^ << >>")
            return BinOp(op, self.expr(node.left, d), self.expr(node.right, d))
        if isinstance(node, ast.BoolOp):
            vals = [self.expr(v, d) for v in node.values]
            out = vals[0]
            for v in vals[1:]:
                out = BinOp(BOOLOPS[type(node.op)], out, v)
            return out
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise self.err(node, "**mapping in a dict is not supported; expected key: value pairs")
            return DictExpr(tuple((self.expr(k, d), self.expr(v, d))  # type: ignore[arg-type]
                                  for k, v in zip(node.keys, node.values)))
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise self.err(node, "chained comparison; expected a single comparison such as a < b")
            op = CMPOPS.get(type(node.ops[0]))
            if op is None:
                raise self.err(node, "unsupported comparison; expected one of < <= > >= == !=")
            return Compare(op, self.expr(node.left, d), self.expr(node.comparators[0], d))
        if isinstance(node, (ast.List, ast.Tuple)):
            items = tuple(self.expr(e, d) for e in node.elts)
            if all(type(x) is Const and type(x.value) is int for x in items):  # shapes, offsets
                return self.share(("list", *(x.value for x in items)), lambda: ListExpr(items))
            return ListExpr(items)
        if isinstance(node, ast.Attribute):
            return self.symbol(node)
        if isinstance(node, ast.Call):
            return self.call(node, d)
        if isinstance(node, ast.Subscript):
            raise self.err(node, "a tile subscript must be the whole right-hand side of an "
                           "assignment; expected e.g. row = t[i, :]")
        raise self.err(node, f"unexpected {describe(node)}; expected a number, a name, "
                       "scalar arithmetic, a list or a pl call")

    def symbol(self, node: ast.Attribute) -> Symbol:
        name = dotted(node)
        if name is None:
            raise self.err(node, f"unexpected {describe(node)}; expected a pl.* constant")
        parts = tuple(name.split("."))
        root = parts[0]
        if root in self.env:
            raise self.err(node, f"attribute access on variable {root!r} is not supported; "
                           "expected a pl op call")
        if root == "self" and len(parts) == 2 and parts[1] in getattr(self, "sigs", {}):
            return Symbol(parts)  # a program function passed by name: pl.submit(self.kernel, ...)
        if root not in PL_ROOTS:
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
        if path[0] in LOWERCASE_ENUMS and len(path) == 2:
            return Symbol(path)
        if path[0] in ("Mem", "MemorySpace"):
            if len(path) != 2 or path[1] not in MemorySpace.__members__:
                raise self.err(node, f"unknown memory space {name!r}; expected one of "
                               + ", ".join(f"pl.Mem.{m}" for m in MemorySpace.__members__))
            return self.share(("Mem", path[1]), lambda: Symbol(("Mem", path[1]),
                                                               MemorySpace[path[1]]))
        if not path[0][:1].isupper():
            raise self.err(node, f"unknown pl construct {name!r}; expected a pl.* constant "
                           "such as pl.Mem.Vec or pl.PadValue.zero")
        return Symbol(path)

    def call(self, node: ast.Call, depth: int = 0) -> Expr:
        name = dotted(node.func)
        if name is None:
            raise self.err(node, "expected a call of a named op such as pl.tile.add(...)")
        root = name.split(".")[0]
        if root == "pl":
            op = self.share(name, lambda: name[3:])
            if op in STATEMENT_CALLS:
                raise self.err(node, f"pl.{op} is a statement form; it cannot be used as a value here")
            if op not in REGISTRY and op not in TYPE_CALLS:
                op = name  # an op outside the registry keeps its full spelling
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
        if op == "pl.const" and len(args) == 2 and args[1] == Symbol(("INDEX",), DType.INDEX) \
                and isinstance(args[0], Const) and not isinstance(args[0].value, bool):
            return args[0]  # an INDEX constant is what a bare literal means
        return Call(op, tuple(args), tuple(kwargs))

    # -- types
