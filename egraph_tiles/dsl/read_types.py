"""Reading types: annotations (``pl.Tile[...]``, ``pl.Tensor[...]``, ...) and the typing of values."""

from __future__ import annotations

import ast
import difflib
from dataclasses import replace

from ..ir.exprs import (static_type, BinOp, Call, Compare, Const, DictExpr, DynDim, Expr, ListExpr, Neg,
                        StrConst, Symbol, TupleItem, VarRef, const_int)
from ..ir.format import format_expr
from ..ir.ops import REGISTRY, OpTypeError, bind, dims_agree_flattened, infer_type
from ..ir.types import (DType, MemorySpace, MemRef, OpaqueType, ScalarType, TensorType, TileType,
                        TupleType, Type, UnknownType)
from .errors import DslError
from .forms import (INDEX_OPERANDS, OPAQUE_TYPES, SCALAR_FUNCTIONS, TYPE_CONSTRUCTORS, TYPO_CUTOFF,
                    UNARY_OPS)
from .read_common import describe, dotted

#: operators whose integer operands give an integer
_INT_OPS = {"+", "-", "*", "//", "%", "**", "&", "|", "^", "<<", ">>"}


def scalar_function_type(c: Call) -> ScalarType | None:
    """The type of a ``pl.min`` / ``pl.max`` / ``pl.cast`` / ``pl.const`` scalar expression."""
    how = SCALAR_FUNCTIONS.get(c.op[3:]) if c.op.startswith("pl.") else None
    if how == "first" and c.args:
        t = static_type(c.args[0])
        if isinstance(c.args[0], Call):
            t = scalar_function_type(c.args[0])
        return t if isinstance(t, ScalarType) else ScalarType(DType.INDEX)
    if how == "dtype" and len(c.args) == 2 and isinstance(c.args[1], Symbol) \
            and isinstance(c.args[1].value, DType):
        return ScalarType(c.args[1].value)
    return None


def index_problem(e: Expr, least: int | None = None) -> str | None:
    """Why ``e`` is not an integer (INDEX) scalar expression — or, with ``least``, a constant
    below it — as a phrase for an error message; None when it is one."""
    if isinstance(e, Const):
        v = e.value
        if isinstance(v, bool) or not isinstance(v, int):
            return f"the {type(v).__name__} {v!r}"
    elif isinstance(e, VarRef):
        t = e.var.type
        if t is not None and not isinstance(t, UnknownType) and not (
                isinstance(t, ScalarType) and t.dtype.is_int):
            what = t.dtype.name if isinstance(t, ScalarType) else type(t).__name__[:-4].lower()
            return f"{e.var.name!r} (a {what})"
    elif isinstance(e, BinOp):
        if e.op not in _INT_OPS:
            return f"a {e.op!r} expression (not an integer)"
        bad = index_problem(e.lhs) or index_problem(e.rhs)
        if bad is not None:
            return bad
    elif isinstance(e, Neg):
        bad = index_problem(e.operand)
        if bad is not None:
            return bad
    elif isinstance(e, Call):
        t = scalar_function_type(e)
        if t is not None and not t.dtype.is_int:
            return f"a {t.dtype.name} {e.op} expression"
        op = REGISTRY.get(e.op)
        if t is None and op is not None and op.family.value != "scalar":
            return f"a pl.{e.op} call (not a scalar)"
    elif isinstance(e, StrConst):
        return f"the string {e.value!r}"
    elif not isinstance(e, DynDim):
        return f"`{format_expr(e)}` (not a scalar)"
    c = const_int(e)
    if least is not None and c is not None and c < least:
        return f"the {'non-positive' if least > 0 else 'negative'} value {c}"
    return None


class TypeReader:
    """Annotations → types (a mixin of the expression reader: it reads the elements).
    Which head builds which type is the table ``forms.TYPE_CONSTRUCTORS``."""

    def type_(self, node: ast.AST, depth: int = 0) -> tuple[Type, str]:
        """An annotation → (type, direction): direction is "" for a plain type, "out" for
        ``pl.Out[...]`` and "inout" for ``pl.InOut[...]``."""
        if depth > 8:
            raise self.err(node, "type annotation nested too deeply")
        sub = isinstance(node, ast.Subscript)
        head = dotted(node.value if sub else node)
        if head in OPAQUE_TYPES:
            return OpaqueType(ast.unparse(node)), ""
        if not sub or head not in TYPE_CONSTRUCTORS:
            what = f"unknown type {head!r}" if sub else f"unexpected {describe(node)} as a type"
            raise self.err(node, f"{what}; expected " + ", ".join(
                f"{h}[...]" for h in TYPE_CONSTRUCTORS if h.startswith("pl.")))
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        kind = TYPE_CONSTRUCTORS[head]
        if kind in ("out", "inout"):
            if len(items) != 1:
                raise self.err(node, f"{head}[...] takes one type")
            return self.type_(items[0], depth + 1)[0], kind
        if kind == "tuple":
            if len(items) == 1 and isinstance(items[0], ast.Tuple) and not items[0].elts:
                return TupleType(()), ""  # pl.Tuple[()]
            return TupleType(tuple(self.type_(i, depth + 1)[0] for i in items)), ""
        if kind == "scalar":
            if len(items) != 1:
                raise self.err(node, "expected pl.Scalar[dtype], e.g. pl.Scalar[pl.INDEX]")
            return ScalarType(self.dtype(items[0])), ""
        if len(items) < 2:
            raise self.err(node, f"expected {head}[[dims...], dtype, ...]")
        shape, dtype = self.shape(items[0]), self.dtype(items[1])
        extras = self._type_extras(head, items[2:], len(shape), kind == "tile")
        if kind == "tile":
            return TileType(shape, dtype, extras.get("memory"), extras.get("valid_shape"),
                            extras.get("memref"), extras.get("view")), ""
        return TensorType(shape, dtype, distributed=head != "pl.Tensor", view=extras.get("view"),
                          memref=extras.get("memref")), ""

    def _type_extras(self, head: str | None, items: list[ast.AST], rank: int, tile: bool) -> dict:
        """The elements after shape and dtype, in any order, each at most once."""
        out: dict = {}
        view_head = "TileView" if tile else "TensorView"
        expected = ("a memory space (pl.Mem.Vec), " if tile else "") + \
            f"pl.MemRef(...) or pl.{view_head}(...), each at most once"
        for it in items:
            named = self._memref_name(it)
            e = self.expr(it) if named is None else None
            slot = None
            if named is not None:
                slot, value = "memref", named
            elif tile and isinstance(e, Symbol) and isinstance(e.value, MemorySpace):
                slot, value = "memory", e.value
            elif isinstance(e, Call) and e.op == "MemRef":
                slot, value = "memref", self._memref(it, e)
            elif isinstance(e, Call) and e.op == view_head:
                if e.args:
                    raise self.err(it, f"expected keyword arguments in pl.{view_head}(...)")
                slot, value = "view", e
                vs = e.kwarg("valid_shape")
                if tile and vs is not None:
                    if not isinstance(vs, ListExpr) or len(vs.items) != rank:
                        raise self.err(it, f"TileView valid_shape must be a list of {rank} dims")
                    self._check_dims(vs.items, [it], "a valid shape", 0)
                    out["valid_shape"] = vs.items
                    rest = tuple((k, v) for k, v in e.kwargs if k != "valid_shape")
                    value = e.with_args((), rest) if rest else None
            if slot is None or slot in out:
                raise self.err(it, f"unexpected {describe(it)} in {head}[...]; expected {expected}")
            out[slot] = value
        return out

    def _memref(self, node: ast.AST, e: Call) -> MemRef:
        """``pl.MemRef(off)`` (an int, -1 or a name), ``pl.MemRef(base, off, size)`` (PyPTO's
        planned allocation) or ``pl.MemRef("name")`` (an allocation pinned by name)."""
        def offset(off: Expr) -> int | Expr:
            c = const_int(off)
            if c is not None:
                return c
            if isinstance(off, (VarRef, BinOp, StrConst, DynDim)):
                return off
            raise self.err(node, "expected a MemRef byte offset: an int, -1 or a name")

        if e.kwargs:
            raise self.err(node, f"pl.MemRef takes no keyword {e.kwargs[0][0]}=; expected "
                           "pl.MemRef(byte_offset) or pl.MemRef(base, byte_offset, size)")
        if len(e.args) == 3:
            base, off, size = e.args
            if not isinstance(base, (StrConst, VarRef)):
                raise self.err(node, "expected the allocation of pl.MemRef(base, byte_offset, size) "
                               "as a quoted name or a variable")
            return MemRef(offset(off), base, offset(size))
        if len(e.args) == 1 and isinstance(e.args[0], StrConst):
            return MemRef(e.args[0], e.args[0])  # pinned by name: where it lands is unknown
        if len(e.args) == 1:
            return MemRef(offset(e.args[0]))
        raise self.err(node, "expected pl.MemRef(byte_offset) or pl.MemRef(base, byte_offset, size)")

    def _memref_name(self, it: ast.AST) -> MemRef | None:
        """``pl.MemRef(buf)`` with ``buf`` an undefined name: an unknown offset named buf."""
        if (isinstance(it, ast.Call) and dotted(it.func) == "pl.MemRef" and len(it.args) == 1
                and isinstance(it.args[0], ast.Name) and it.args[0].id not in self.env
                and it.args[0].id not in self.constants and not it.keywords):
            return MemRef(StrConst(it.args[0].id))
        return None

    def shape(self, node: ast.AST) -> tuple[Expr, ...]:
        e = self.expr(node)
        if not isinstance(e, ListExpr):
            raise self.err(node, f"unexpected {describe(node)}; expected a shape such as [16, 64]")
        self._check_dims(e.items, getattr(node, "elts", [node]), "a shape", 1)
        return e.items

    def _check_dims(self, items: tuple[Expr, ...], nodes: list, what: str, least: int) -> None:
        for i, item in enumerate(items):
            bad = index_problem(item, least)
            if bad is not None:
                raise self.err(nodes[i] if i < len(nodes) else nodes[-1],
                               f"unexpected {bad} in {what}; expected an int or a scalar name")

    def dtype(self, node: ast.AST) -> DType:
        e = self.expr(node)
        if isinstance(e, Symbol) and isinstance(e.value, DType):
            return e.value
        raise self.err(node, f"unexpected {describe(node)}; expected a dtype such as pl.FP32")


class ValueTyping:
    """The types of values a function body computes, and annotations checked against them."""

    def type_of(self, e: Expr) -> Type | None:
        if isinstance(e, (BinOp, Neg)):
            return self._scalar_type(e, None)  # checks the operands' types too
        if isinstance(e, Call):
            t = scalar_function_type(e)
            if t is None and e.op in REGISTRY and REGISTRY[e.op].family.value == "scalar":
                t = infer_type(e, self.type_of)
            return t
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
            elif isinstance(x, Call) and x.op in UNARY_OPS.values():
                stack += x.args
            elif isinstance(x, Call) and (x.op in REGISTRY or x.op.startswith("pl.")):
                t = self.type_of(x)
                if t is None and x.op in REGISTRY:
                    raise self.err(node, f"pl.{x.op} is not a scalar; expected a scalar expression")
                if isinstance(t, ScalarType) and dt is None:
                    dt = t.dtype
            elif isinstance(x, (ListExpr, Call, Symbol, StrConst, DictExpr)):
                raise self.err(node, "expected a scalar expression")
        return ScalarType(dt or DType.INDEX)

    def call_type(self, value: Call, node: ast.AST, annotation: Type | None,
                  at: ast.AST | None = None) -> Type:
        """The type of a call statement's value: registered ops are typed by the registry
        (after their index operands are checked), scalar forms by their table, program
        functions by their signature, anything else by its annotation."""
        if value.op in REGISTRY:
            self._check_index_operands(value, node)
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
        t = scalar_function_type(value)
        if t is not None:
            return t
        if annotation is None and value.op.startswith("pl."):
            name = value.op[3:]
            close = difflib.get_close_matches(name, list(REGISTRY), n=1, cutoff=TYPO_CUTOFF)
            space = name.split(".")[0] if "." in name else None
            spaces = {op.split(".")[0] for op in REGISTRY if "." in op}
            # an op of a registered namespace (``pl.tile.frobnicate``) or of a misspelled one
            # (``pl.tlie.muls``) is a mistake, not an op outside the registry
            if not close and space is not None and (
                    space in spaces or difflib.get_close_matches(space, spaces, 1, 0.7)):
                close = difflib.get_close_matches(name, list(REGISTRY), n=1, cutoff=0.7) or [""]
            if close:
                hint = f" (did you mean pl.{close[0]}?)" if close[0] else ""
                raise self.err(at or node, f"unknown op {value.op}{hint}; "
                               "expected a registered pl op, or an annotation giving the "
                               "result type of an op outside the registry")
        return annotation or UnknownType()

    def _check_index_operands(self, c: Call, node: ast.AST) -> None:
        """Offsets, indices and extents of a registered op must be integer scalar
        expressions (extents positive constants where constant), as PyPTO types them."""
        try:
            args = bind(c).args
        except OpTypeError as e:
            raise self.err(node, f"ill-typed pl.{c.op} call: {e}") from None
        for param, least in INDEX_OPERANDS.items():
            e = args.get(param)
            if e is None:
                continue
            items = e.items if isinstance(e, ListExpr) else (e,)
            if isinstance(e, ListExpr) == (param in ("row", "col")):
                raise self.err(node, f"ill-typed pl.{c.op} call: {param} must be "
                               + ("an integer scalar" if param in ("row", "col") else "a list"))
            for i, item in enumerate(items):
                bad = index_problem(item, least)
                if bad is not None:
                    where = f"{param}[{i}]" if isinstance(e, ListExpr) else param
                    raise self.err(node, f"ill-typed pl.{c.op} call: {where} is {bad}; expected "
                                   + ("a positive integer extent" if least else
                                      "an integer (INDEX) scalar expression"))

    def value_type(self, value: Expr, node: ast.AST, annotation: Type | None,
                   at: ast.AST | None = None) -> Type:
        if isinstance(value, Call):
            return self.call_type(value, node, annotation, at)
        if isinstance(value, VarRef):
            return value.var.type or UnknownType()
        if isinstance(value, Const):
            return self.type_of(value)  # type: ignore[return-value]
        if isinstance(value, Compare):
            self._scalar_type(value, node)
            return ScalarType(DType.BOOL)
        if isinstance(value, (BinOp, Neg)):
            return self._scalar_type(value, node)
        if isinstance(value, (DynDim, TupleItem)):
            return static_type(value) or UnknownType()
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
        if isinstance(ann, (TileType, TensorType)) and isinstance(inferred, (TileType, TensorType)):
            if ann.dtype != inferred.dtype:
                raise bad(f"annotated dtype {ann.dtype.name}, value has {inferred.dtype.name}")
            if not dims_agree_flattened(ann.shape, inferred.shape):
                raise bad(f"annotated shape {_dims(ann.shape)}, value has shape {_dims(inferred.shape)}")
        if isinstance(ann, TileType) and isinstance(inferred, TileType):
            # A memory space the annotation names is kept even where the registry would place
            # the value elsewhere (an accumulator created without target_memory, annotated
            # Acc): at the input of CanonicalizeTileSlice the annotation is the type PyPTO's IR
            # holds, and its own pass (and every later one) works from it.
            if ann.memory is None and inferred.memory is not None:
                ann = replace(ann, memory=inferred.memory)
            if ann.valid_shape is None and inferred.valid_shape is not None \
                    and len(inferred.valid_shape) == len(ann.shape):
                ann = replace(ann, valid_shape=inferred.valid_shape)
        return ann


def _dims(shape: tuple[Expr, ...]) -> str:
    return "[" + ", ".join(format_expr(d) for d in shape) + "]"

