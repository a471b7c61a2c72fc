"""Reading types: annotations (``pl.Tile[...]``, ``pl.Tensor[...]``, ...) and the typing of values."""

from __future__ import annotations

import ast
from dataclasses import replace

from ..ir.exprs import (static_type, BinOp, Call, Compare, Const, Expr, ListExpr, Neg, StrConst, Symbol,
                        VarRef, const_int)
from ..ir.ops import REGISTRY, OpTypeError, infer_type
from ..ir.types import (DType, MemorySpace, MemRef, ScalarType, TensorType, TileType, TupleType,
                        Type, UnknownType)
from .errors import DslError
from .read_common import describe, dotted


class TypeReader:
    """Annotations → types (a mixin of the expression reader: it reads the elements)."""

    def type_(self, node: ast.AST, depth: int = 0) -> tuple[Type, bool]:
        """An annotation → (type, is_out)."""
        if depth > 8:
            raise self.err(node, "type annotation nested too deeply")
        if not isinstance(node, ast.Subscript):
            raise self.err(node, f"unexpected {describe(node)} as a type; expected pl.Tile[...], "
                           "pl.Tensor[...], pl.Scalar[...] or pl.Out[...]")
        head = dotted(node.value)
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
                raise self.err(it, f"unexpected {describe(it)} in pl.Tile[...]; expected a memory "
                               "space (pl.Mem.Vec), pl.MemRef(...) or pl.TileView(...), each at most once")
        return TileType(shape, dtype, memory, valid, memref, view)

    def _memref_name(self, it: ast.AST) -> Call | None:
        """``pl.MemRef(buf)`` with ``buf`` an undefined name: an unknown offset named buf."""
        if (isinstance(it, ast.Call) and dotted(it.func) == "pl.MemRef" and len(it.args) == 1
                and isinstance(it.args[0], ast.Name) and it.args[0].id not in self.env
                and it.args[0].id not in self.constants and not it.keywords):
            return Call("MemRef", (StrConst(it.args[0].id),))
        return None

    def shape(self, node: ast.AST) -> tuple[Expr, ...]:
        e = self.expr(node)
        if not isinstance(e, ListExpr):
            raise self.err(node, f"unexpected {describe(node)}; expected a shape such as [16, 64]")
        for item, sub in zip(e.items, getattr(node, "elts", [node] * len(e.items))):
            if isinstance(item, (StrConst, ListExpr, Symbol, Call, Compare)) or (
                    isinstance(item, Const) and not isinstance(item.value, int)) or (
                    isinstance(item, Const) and isinstance(item.value, bool)):
                raise self.err(sub, f"unexpected {describe(sub)} in a shape; expected an int "
                               "or a scalar name")
        return e.items

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
        if isinstance(ann, (TileType, TensorType)) and isinstance(inferred, (TileType, TensorType)):
            if ann.dtype != inferred.dtype:
                raise bad(f"annotated dtype {ann.dtype.name}, value has {inferred.dtype.name}")
            if not _shapes_agree(ann.shape, inferred.shape):
                raise bad(f"annotated shape {_dims(ann.shape)}, value has shape {_dims(inferred.shape)}")
        if isinstance(ann, TileType) and isinstance(inferred, TileType):
            if ann.memory is not None and inferred.memory is not None and ann.memory != inferred.memory:
                raise bad(f"annotated memory {ann.memory.value}, value is in {inferred.memory.value}")
            if ann.memory is None and inferred.memory is not None:
                ann = replace(ann, memory=inferred.memory)
            if ann.valid_shape is None and inferred.valid_shape is not None \
                    and len(inferred.valid_shape) == len(ann.shape):
                ann = replace(ann, valid_shape=inferred.valid_shape)
        return ann

def _shapes_agree(ann: tuple[Expr, ...], inferred: tuple[Expr, ...]) -> bool:
    """Constant dims agree; an N-D value may be annotated flattened to 2-D (leading dims
    merged into rows, as PyPTO's FlattenTileNdTo2D prints it)."""
    if len(ann) == 2 and len(inferred) > 2:
        lead = [const_int(d) for d in inferred[:-1]]
        rows = const_int(ann[0])
        if rows is not None and all(d is not None for d in lead):
            prod = 1
            for d in lead:
                prod *= d  # type: ignore[operator]
            if prod != rows:
                return False
        return _shapes_agree(ann[1:], inferred[-1:])
    return len(ann) == len(inferred) and not any(
        const_int(a) is not None and const_int(b) is not None and const_int(a) != const_int(b)
        for a, b in zip(ann, inferred))


def _dims(shape: tuple[Expr, ...]) -> str:
    from .printer import format_expr

    return "[" + ", ".join(format_expr(d) for d in shape) + "]"

