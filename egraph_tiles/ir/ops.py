"""The op registry: each op declared once, with everything the rest of the code needs.

An entry (:class:`OpDef`) states

* its **operands**: positional parameter names, each with a :class:`Kind` (tile, tensor,
  index list, scalar, dtype, ...), and keyword-only attributes;
* its **family** (:class:`Family`), from which the **role** of a window operand follows
  (:meth:`OpDef.role`, a :class:`Role` whose ``egg`` spelling the rules use as the use context);
* its **result-type rule** (``infer``; ``None``: the type comes from the annotation);
* its **memory effect** (:class:`Effect`): a fresh buffer, a view of operand ``k``, a write into
  operand ``k`` (the result names that operand's storage), or a scalar — or ``None`` when the
  op's writes are unknown (*unclassified*, like an op that is not registered at all);
* its **window operands** (:class:`Window`: which source it reads at which offsets and extent),
  checked in bounds by the verifier and the simulators;
* its **numpy meaning** (``numpy``), which the simulators apply; ``None``: not modelled (the
  simulators raise ``UnsupportedByModel``).

The properties the passes and rules read (``inherits_input_memory``, ``inplace_safe``,
``reuses_arg``, ``left_arg`` / ``right_arg`` / ``bias_arg``, ``family``) are derived from that
declaration.  Long op lists are data: the tables at the end generate one entry per line.
The op set follows PyPTO's tile and tensor op definitions (same names, operand order and
memory effects), written independently; nothing outside this module tests op names.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from functools import cached_property
from typing import Any, Callable

import numpy as np

from .exprs import Call, Const, Expr, ListExpr, Symbol, const_int
from .target import acc_layout
from .types import (DType, MemorySpace, ScalarType, TensorType, TileType, TupleType, Type,
                    UnknownType)


class Family(Enum):
    LOAD = "load"
    STORE = "store"
    CREATE = "create"  # fresh tiles from shapes / scalars (create, full, ci, ...)
    VIEW = "view"  # zero-copy views: slice, reshape, set_validshape, ...
    COPY = "copy"  # fresh buffers copied from one tile: extract, move, transpose
    MATMUL = "matmul"  # matmul-family (operands in Left / Right, result in Acc)
    COL_EXPAND = "col_expand"  # col_expand / col_expand_mul / _add / ... (lazy subview textract)
    VECTOR = "vector"  # ordinary vector ops
    SCALAR = "scalar"  # ops producing scalars (get_block_idx, min, max, ...)
    TENSOR = "tensor"  # ops on DDR tensors (pl.tensor.*): no tile operand to canonicalize
    SYSTEM = "system"  # cross-core transfers, allocation, gathers / scatters we do not rewrite


class Role(StrEnum):
    """How a window operand is used: the context of ``(Use w ctx)`` in the rules.  ``egg`` is
    its egglog spelling, which the rules interpolate; the encoder writes ``str(role)`` into its
    rows.  Nothing spells a context as a bare string."""

    ORD = "ord"  # an ordinary call operand, and the SSA escapes (alias, loop init, yield)
    COLX = "colx"  # an operand of a Family.COL_EXPAND op (lazily materialized, #1640 / #2010)
    LEFT = "left"  # a matmul-family left operand (copied into Left)
    RIGHT = "right"  # a matmul-family right operand (copied into Right)
    # a window passed to a program function (issue 15, egraph.calls): kept only when it is dense
    # (an identity copy) and aligned, else copied before the call
    CALL = "call"
    # ... that the function uses as a matmul operand: a Mat window is rejected (no Mat->Mat path)
    CUBE_CALL = "cube-call"
    # the operand of a view that lays its bytes out as a dense tile of the result's shape from
    # its base (``OpDef.relayout``: reshape, reinterpret_view): a Vec window is kept only when it
    # is dense (one row or the full width, any offset) and aligned, else copied first
    DENSE = "dense"

    @property
    def egg(self) -> str:
        return f'"{self.value}"'

    @property
    def copy_memory(self) -> MemorySpace:
        """Where the safe copy of a window used in this role goes."""
        return {Role.LEFT: MemorySpace.Left, Role.RIGHT: MemorySpace.Right}.get(self, MemorySpace.Vec)

    @property
    def label(self) -> str:
        return {Role.LEFT: "left operand", Role.RIGHT: "right operand",
                Role.COLX: "col_expand operand"}.get(self, "operand")


class Kind(Enum):
    """What a parameter holds."""

    TILE = "tile"
    TENSOR = "tensor"
    SHAPE = "shape"  # a list of extents
    INDICES = "indices"  # a list of offsets (INDEX scalars)
    INDEX = "index"  # one offset / extent
    SCALAR = "scalar"  # a scalar value (int / float / Scalar)
    DTYPE = "dtype"
    MEMORY = "memory"
    ATTR = "attr"  # anything else (enum, bool, string, dict)


class Storage(Enum):
    """Where an op's result lives, relative to its operands."""

    FRESH = "fresh"  # a new buffer
    VIEW = "view"  # a zero-copy view of operand ``of``
    WRITES = "writes"  # the op writes into operand ``of``; the result names that storage
    VALUE = "value"  # a scalar, or nothing


@dataclass(frozen=True)
class Effect:
    storage: Storage
    of: int | None = None


FRESH = Effect(Storage.FRESH)
VALUE = Effect(Storage.VALUE)


def view_of(k: int) -> Effect:
    return Effect(Storage.VIEW, k)


def writes(k: int) -> Effect:
    return Effect(Storage.WRITES, k)


@dataclass(frozen=True)
class Window:
    """A window operand: ``src`` read at ``offsets`` (one list parameter, or one parameter per
    axis) with extent ``shape``."""

    src: str
    offsets: str | tuple[str, ...]
    shape: str


class OpTypeError(ValueError):
    """A call whose argument types do not fit the op (shape/dtype/memory mismatch)."""


InferFn = Callable[["BoundCall"], Type]


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind


@dataclass(frozen=True)
class OpDef:
    name: str
    signature: tuple[Param, ...]  # positional parameters, in order
    infer: InferFn | None
    family: Family
    effect: Effect | None = FRESH
    #: memory spaces each tile parameter has after PyPTO's memory-space inference (absent:
    #: any).  Not checked at this pipeline point; the hardware model cannot run other spaces.
    input_memory: tuple[tuple[str, frozenset[MemorySpace]], ...] = ()
    #: memory of the output: a fixed space, "target_memory" (from the kwarg), or
    #: "inherit" (argument 0's memory)
    output_memory: MemorySpace | str | None = None
    default_target: MemorySpace | None = None
    inplace_safe: bool = True
    left_arg: int | None = None
    right_arg: int | None = None
    #: the argument index of a bias operand that must never be rewritten
    bias_arg: int | None = None
    window: Window | None = None
    #: keyword-only attributes PyPTO prints (target_memory, pad_value, atomic, ...)
    attrs: tuple[str, ...] = ()
    #: the numpy meaning the simulators apply (signature by family, see ``sim.interp``)
    numpy: Callable[..., Any] | None = None
    #: a view that reinterprets its operand's bytes as another dtype
    reinterprets: bool = False
    #: a view with its operand's exact layout (only metadata such as the valid shape changes)
    same_layout: bool = False
    #: a view that keeps its operand's bytes but, for some operands, lays them out afresh: given
    #: the operand's memory, its dims and the result's dims (ints; None where not constant),
    #: whether the result reads those bytes in another element order (see :meth:`relayouts`)
    relayout: Callable[[MemorySpace | None, tuple[int | None, ...], tuple[int | None, ...]],
                       bool] | None = None
    #: a scalar op's bounds from its arguments' ``(lo, hi)`` bounds (None: unknown side)
    interval: Callable[[list[tuple[int | None, int | None]]], tuple[int | None, int | None]] | None = None

    # -- derived properties (what passes and rules read)

    @cached_property
    def params(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.signature)

    @property
    def classified(self) -> bool:
        """Whether the op's writes are known (an unregistered op is unclassified too)."""
        return self.effect is not None

    @property
    def inherits_input_memory(self) -> bool:
        """The output is a view into argument 0's storage."""
        return self.effect is not None and self.effect.storage is Storage.VIEW

    @property
    def reuses_arg(self) -> int | None:
        """The argument the output is written back into."""
        e = self.effect
        return e.of if e is not None and e.storage is Storage.WRITES else None

    @property
    def writes_back(self) -> bool:
        return self.reuses_arg is not None

    @property
    def modeled(self) -> bool:
        return self.numpy is not None

    def relayouts(self, memory: MemorySpace | None, src: tuple[int | None, ...],
                  out: tuple[int | None, ...]) -> bool:
        """Whether this view of an operand in ``memory`` with dims ``src`` as a result with dims
        ``out`` names the operand's bytes in another element order: then it is *not* a zero-copy
        view of the operand's values (its numpy meaning does not hold on the device), and a value
        read or written through it is a different element of the operand."""
        return self.relayout is not None and self.relayout(memory, tuple(src), tuple(out))

    def role(self, index: int | None) -> Role | None:
        """The use context of argument ``index``; None: never rewritten (accumulator, bias,
        scales, an operand of a matmul-family op without Left / Right operands)."""
        if self.family is Family.MATMUL:
            if index is not None and index == self.left_arg:
                return Role.LEFT
            if index is not None and index == self.right_arg:
                return Role.RIGHT
            return None
        if self.family is Family.COL_EXPAND:
            return Role.COLX
        if self.family is Family.SCALAR:
            # one element read or written at the window's address: no vector alignment to
            # prove, and never copied (a copy would take a write and lose it)
            return None
        if self.relayout is not None and index == 0:
            return Role.DENSE
        return Role.ORD

    def accepted_memory(self, param: str) -> frozenset[MemorySpace] | None:
        for p, spaces in self.input_memory:
            if p == param:
                return spaces
        return None

    def kind(self, param: str) -> Kind | None:
        for p in self.signature:
            if p.name == param:
                return p.kind
        return None


class BoundCall:
    """A call with its arguments bound to parameter names, plus argument types."""

    def __init__(self, op: OpDef, call: Call, arg_types: dict[str, Type | None]):
        self.op = op
        self.call = call
        self.types = arg_types
        self.args: dict[str, Expr] = {}
        params = op.params
        for i, a in enumerate(call.args):
            if i >= len(params):
                raise OpTypeError(
                    f"{op.name} takes at most {len(params)} positional arguments "
                    f"({', '.join(params)}), got {len(call.args)}"
                )
            self.args[params[i]] = a
        for k, v in call.kwargs:
            if k in self.args:
                raise OpTypeError(f"{op.name}: argument {k!r} given twice")
            self.args[k] = v

    def arg(self, name: str) -> Expr | None:
        return self.args.get(name)

    def require(self, name: str) -> Expr:
        e = self.args.get(name)
        if e is None:
            raise OpTypeError(f"{self.op.name} needs argument {name!r}")
        return e

    def type_of(self, name: str) -> Type | None:
        return self.types.get(name)

    def tile(self, name: str) -> TileType:
        t = self.types.get(name)
        if not isinstance(t, TileType):
            raise OpTypeError(f"{self.op.name}: argument {name!r} must be a tile, got {_tname(t)}")
        return t

    def shape(self, name: str) -> tuple[Expr, ...]:
        return shape_of(self.require(name), f"{self.op.name} argument {name!r}")

    def memory(self, default: MemorySpace | None = None) -> MemorySpace | None:
        e = self.args.get("target_memory")
        if e is None:
            return default
        if isinstance(e, Symbol) and isinstance(e.value, MemorySpace):
            return e.value
        raise OpTypeError(f"{self.op.name}: target_memory must be a pl.Mem.* space")

    def dtype(self, name: str) -> DType:
        e = self.require(name)
        if isinstance(e, Symbol) and isinstance(e.value, DType):
            return e.value
        raise OpTypeError(f"{self.op.name}: {name} must be a pl.<dtype>")

    def window_parts(self) -> tuple[Expr, list[Expr], ListExpr] | None:
        """Source, offsets and shape of the op's window operand, when spelled as lists."""
        w = self.op.window
        if w is None:
            return None
        src, shape = self.args.get(w.src), self.args.get(w.shape)
        if isinstance(w.offsets, str):
            off = self.args.get(w.offsets)
            offs = list(off.items) if isinstance(off, ListExpr) else None
        else:
            got = [self.args.get(o) for o in w.offsets]
            offs = None if any(o is None for o in got) else got  # type: ignore[assignment]
        if src is None or offs is None or not isinstance(shape, ListExpr):
            return None
        return src, offs, shape


def _tname(t: Type | None) -> str:
    return "nothing" if t is None else type(t).__name__


def shape_of(e: Expr, what: str) -> tuple[Expr, ...]:
    if not isinstance(e, ListExpr):
        raise OpTypeError(f"{what} must be a list such as [16, 64]")
    return e.items


def dims_agree(a: tuple[Expr, ...], b: tuple[Expr, ...]) -> bool:
    """Same rank, and no two constant dimensions differ (symbolic ones may agree)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        cx, cy = const_int(x), const_int(y)
        if cx is not None and cy is not None and cx != cy:
            return False
    return True


def _prod(xs: tuple[int, ...]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


# ---------------------------------------------------------------- result-type rules


def _infer_load(b: BoundCall) -> Type:
    t = b.type_of("tensor")
    if not isinstance(t, TensorType):
        raise OpTypeError(f"tile.load reads a tensor, got {_tname(t)}")
    shape = b.shape("shape")
    offs = b.shape("offsets")
    if len(shape) != len(t.shape) or len(offs) != len(t.shape):
        raise OpTypeError(f"tile.load: offsets/shape rank must equal the tensor rank {len(t.shape)}")
    valid = shape_of(b.args["valid_shape"], "valid_shape") if "valid_shape" in b.args else None
    if len(shape) > 2:
        # PyPTO annotates an N-D load flattened to 2-D: the leading axes fold into the rows
        lead = [const_int(d) for d in shape[:-1]]
        if None in lead:
            return UnknownType()  # the annotation gives the type
        shape = (Const(_prod(tuple(lead))), shape[-1])  # type: ignore[arg-type]
        valid = None
    return TileType(shape, t.dtype, b.memory(MemorySpace.Vec), valid)


def _infer_store(b: BoundCall) -> Type:
    tile = b.tile("tile")
    out = b.type_of("output")
    if not isinstance(out, TensorType):
        raise OpTypeError(f"store writes into a tensor, got {_tname(out)}")
    if tile.dtype != out.dtype:
        raise OpTypeError(f"store: tile dtype {tile.dtype.name} differs from tensor dtype {out.dtype.name}")
    if len(b.shape("offsets")) != len(out.shape):
        raise OpTypeError("store: offsets rank must equal the tensor rank")
    return out


def _infer_create(b: BoundCall) -> Type:
    return TileType(b.shape("shape"), b.dtype("dtype"), b.memory(MemorySpace.Vec))


def _infer_full(b: BoundCall) -> Type:
    dt = b.dtype("dtype") if "dtype" in b.args else DType.INT32
    return TileType(b.shape("shape"), dt, MemorySpace.Vec)


def _infer_tensor_create(b: BoundCall) -> Type:
    return TensorType(b.shape("shape"), b.dtype("dtype"))


def _infer_slice(b: BoundCall) -> Type:
    src = b.tile("src")
    shape = b.shape("shape")
    offs = b.shape("offset")
    if len(shape) != src.rank or len(offs) != src.rank:
        raise OpTypeError(f"tile.slice: shape and offset must have rank {src.rank}")
    valid = shape_of(b.args["valid_shape"], "valid_shape") if "valid_shape" in b.args else None
    if "drop_dims" in b.args:
        drop = [const_int(d) for d in shape_of(b.args["drop_dims"], "drop_dims")]
        if any(d is None or not 0 <= d < len(shape) for d in drop):
            raise OpTypeError("tile.slice: drop_dims must be constant dimension indices")
        shape = tuple(s for i, s in enumerate(shape) if i not in drop)
        if valid is not None:
            valid = tuple(s for i, s in enumerate(valid) if i not in drop)
    return TileType(shape, src.dtype, src.memory, valid)


def _infer_extract(b: BoundCall) -> Type:
    src = b.tile("src")
    shape = b.shape("shape")
    if len(shape) != src.rank:
        raise OpTypeError(f"tile.extract: shape must have rank {src.rank}")
    return TileType(shape, src.dtype, b.memory(src.memory))


def _infer_move(b: BoundCall) -> Type:
    src = b.tile("src")
    return TileType(src.shape, src.dtype, b.memory(src.memory), src.valid_shape)


def _nz_relayout(memory: MemorySpace | None, src: tuple[int | None, ...],
                 out: tuple[int | None, ...]) -> bool:
    """A reshape keeps its operand's bytes (on the device it is an alias of the same buffer) and
    lays them out as a tile of the new shape.  In a row-major memory that is numpy's reshape.  An
    Acc (L0C) tile is stored in 16x16 NZ blocks placed by its own shape (``target.acc_layout``), so
    the reshaped tile reads the same bytes as the NZ blocks of the *new* shape: element (1, 0) of a
    [16, 32] tile reshaped to [32, 16] is the bytes of the source's element (1, 0), not (0, 16).
    ``reinterpret_view`` likewise lays the bytes out as a tile of its result's shape (the last
    dim scaled by the ratio of the element widths), so the same test decides it.
    An Acc reshape keeps the element order only when both layouts put every element (in
    row-major order) at the same address: the same shape, a leading batch dim of 1 added or
    dropped, [B, M, 16] pages stacked as [B*M, 16] (M a multiple of 16), ...; a symbolic dim or a
    rank without a layout is not proven to."""
    if memory is not MemorySpace.Acc or src == out and None not in src:
        return False
    if None in src or None in out:
        return True
    a, b = acc_layout(src), acc_layout(out)  # type: ignore[arg-type]
    return a is None or b is None or not np.array_equal(a.ravel(), b.ravel())


def _infer_reshape(b: BoundCall) -> Type:
    src = b.tile("src")
    shape = b.shape("shape")
    a, c = src.const_shape(), TileType(shape, src.dtype).const_shape()
    if a is not None and c is not None and _prod(a) != _prod(c):
        raise OpTypeError(f"tile.reshape: {list(a)} and {list(c)} have different element counts")
    return TileType(shape, src.dtype, src.memory)


def _infer_set_validshape(b: BoundCall) -> Type:
    src = b.tile("src")
    rows = b.require("valid_rows")
    if isinstance(rows, ListExpr):  # our list spelling: set_validshape(t, [rows, cols])
        valid = rows.items
    else:  # PyPTO's spelling: set_validshape(t, rows, cols)
        valid = (rows, b.require("valid_cols"))
    if len(valid) != src.rank:
        raise OpTypeError(f"tile.set_validshape: valid shape must have rank {src.rank}")
    # the same bytes in the same layout: its buffer (and the memref byte offset) is the source's
    return TileType(src.shape, src.dtype, src.memory, valid, src.memref)


def _infer_reinterpret(b: BoundCall) -> Type:
    src = b.tile("src")
    dt = b.dtype("dtype")
    last = const_int(src.shape[-1])
    if last is None:
        raise OpTypeError("tile.reinterpret_view needs a constant last dimension")
    bits = last * src.dtype.storage_bits
    if bits % dt.storage_bits:
        raise OpTypeError(f"tile.reinterpret_view: {bits} bits per row do not split into {dt.name}")
    return TileType((*src.shape[:-1], Const(bits // dt.storage_bits)), dt, src.memory)


def transpose_axes(b: BoundCall, rank: int) -> tuple[int, int]:
    """The two axes a transpose swaps: its ``axis1`` / ``axis2`` arguments (negative counts
    from the end), or the last two."""
    a1, a2 = b.arg("axis1"), b.arg("axis2")
    if a1 is None and a2 is None:
        return rank - 2, rank - 1
    axes = []
    for a in (a1, a2):
        v = const_int(a) if a is not None else None
        if v is None or not -rank <= v < rank:
            raise OpTypeError(f"{b.op.name}: axes must be constant integers in [-{rank}, {rank})")
        axes.append(v % rank)
    return axes[0], axes[1]


def _infer_transpose(b: BoundCall) -> Type:
    src = b.tile("src")
    if src.rank < 2:
        raise OpTypeError(f"{b.op.name} needs a tile of rank 2 or more")
    i, j = transpose_axes(b, src.rank)
    shape = list(src.shape)
    shape[i], shape[j] = shape[j], shape[i]
    mem = b.memory(src.memory) if b.op.output_memory == "target_memory" else src.memory
    return TileType(tuple(shape), src.dtype, mem)


def _acc_dtype(a: DType) -> DType:
    return DType.INT32 if a.is_int else DType.FP32


def _factors(b: BoundCall, rank: int) -> tuple[TileType, TileType]:
    """The ``lhs`` and ``rhs`` of a product of rank-``rank`` tiles (2: matmul, 3: batch matmul),
    checked: the last dimension of ``lhs`` is the next-to-last of ``rhs``."""
    a, c = b.tile("lhs"), b.tile("rhs")
    if a.rank != rank or c.rank != rank:
        raise OpTypeError(f"{b.op.name} needs {rank}-D operands")
    if not dims_agree((a.shape[-1],), (c.shape[-2],)):
        raise OpTypeError(f"{b.op.name}: inner dimensions differ ({a.shape[-1]} vs {c.shape[-2]})")
    return a, c


def _infer_matmul(b: BoundCall) -> Type:
    a, c = _factors(b, 2)
    if a.dtype != c.dtype:
        raise OpTypeError(f"{b.op.name}: operand dtypes differ ({a.dtype.name} vs {c.dtype.name})")
    return TileType((a.shape[0], c.shape[1]), _acc_dtype(a.dtype), MemorySpace.Acc)


def _infer_matmul_acc(b: BoundCall) -> Type:
    acc = b.tile("acc")
    res = _infer_matmul(b)
    assert isinstance(res, TileType)
    if not dims_agree(acc.shape, res.shape):
        raise OpTypeError(
            f"{b.op.name}: accumulator shape {list(acc.shape)} differs from the product shape {list(res.shape)}"
        )
    return _like(acc)


def _infer_batch_matmul(b: BoundCall) -> Type:
    a, c = _factors(b, 3)
    return TileType((a.shape[0], a.shape[1], c.shape[2]), _acc_dtype(a.dtype), MemorySpace.Acc)


def _infer_batch_matmul_acc(b: BoundCall) -> Type:
    acc = b.tile("acc")
    _infer_batch_matmul(b)
    return acc


def _like(t: TileType) -> TileType:
    """A result tile with ``t``'s shape, dtype, memory and valid shape (not its memref / view)."""
    return TileType(t.shape, t.dtype, t.memory, t.valid_shape)


def _infer_same_as_first(b: BoundCall) -> Type:
    return _like(b.tile(b.op.params[0]))


def _same_dtype(b: BoundCall, x: TileType, y: TileType) -> None:
    if x.dtype != y.dtype:
        raise OpTypeError(f"{b.op.name}: dtypes {x.dtype.name} and {y.dtype.name} differ")


def _infer_binary(b: BoundCall) -> Type:
    x, y = b.tile("lhs"), b.tile("rhs")
    if not dims_agree(x.shape, y.shape):
        raise OpTypeError(f"{b.op.name}: shapes {list(x.shape)} and {list(y.shape)} differ")
    _same_dtype(b, x, y)
    return _like(x)


def _infer_expand(axis: int) -> InferFn:
    """``rhs`` broadcast over the 2-D ``lhs``: the operands agree on dimension ``axis`` (0:
    row_expand, one value per row; 1: col_expand, one row of values, of ``lhs``'s dtype)."""
    what = ("row", "column")[axis]

    def infer(b: BoundCall) -> Type:
        x, v = b.tile("lhs"), b.tile("rhs")
        if x.rank != 2 or v.rank != 2:
            raise OpTypeError(f"{b.op.name} needs 2-D operands")
        if not dims_agree((x.shape[axis],), (v.shape[axis],)):
            raise OpTypeError(f"{b.op.name}: {what} counts {x.shape[axis]} and {v.shape[axis]} differ")
        if axis == 1:
            _same_dtype(b, x, v)
        return _like(x)
    return infer


def _infer_reduce(axis: int, dtype: DType | None = None) -> InferFn:
    """A 2-D reduction along ``axis`` (1: each row to one value, 0: each column); the result
    has the source's dtype, or ``dtype`` (an arg-reduction's INT32 indices)."""
    def infer(b: BoundCall) -> Type:
        x = b.tile("src")
        if x.rank != 2:
            raise OpTypeError(f"{b.op.name} needs a 2-D tile")
        shape = (x.shape[0], Const(1)) if axis == 1 else (Const(1), x.shape[1])
        return TileType(shape, dtype or x.dtype, x.memory)
    return infer


def _infer_cast(b: BoundCall) -> Type:
    x = b.tile("src")
    return TileType(x.shape, b.dtype("target_type"), x.memory, x.valid_shape)


def _infer_cmp(b: BoundCall) -> Type:
    x = b.tile("lhs")
    return TileType(x.shape, DType.BOOL, x.memory, x.valid_shape)


def _infer_index_scalar(b: BoundCall) -> Type:
    return ScalarType(DType.INDEX)


def _infer_scalar_minmax(b: BoundCall) -> Type:
    ts = [b.type_of("lhs"), b.type_of("rhs")]
    for t in ts:
        if isinstance(t, (TileType, TensorType, TupleType)):
            raise OpTypeError(f"{b.op.name} takes scalars, got a {type(t).__name__}")
    dts = [t.dtype for t in ts if isinstance(t, ScalarType)]
    if any(d.is_float for d in dts):
        return ScalarType(next(d for d in dts if d.is_float))
    return ScalarType(DType.INDEX)


def _infer_read(b: BoundCall) -> Type:
    t = b.type_of("src")
    if isinstance(t, (TileType, TensorType)):
        return ScalarType(t.dtype)
    raise OpTypeError(f"{b.op.name} reads a tile or tensor, got {_tname(t)}")


def _infer_first_tensor(b: BoundCall) -> Type:
    t = b.type_of(b.op.params[0])
    if isinstance(t, (TensorType, TileType)):
        return t
    return UnknownType()


# ---------------------------------------------------------------- numpy meanings
# VECTOR / COL_EXPAND ops: ``fn(v: Operands) -> ndarray`` (the result before rounding to the
# result dtype).  VIEW / COPY ops: ``fn(a, args) -> ndarray`` on the source array (values in the
# ideal model, byte addresses in the hardware model; a VIEW result is a numpy view).  MATMUL:
# ``fn(lhs, rhs)`` in wide arithmetic.  LOAD: ``fn(tensor, offsets, shape)``; STORE:
# ``fn(tensor, offsets, values)``; CREATE: ``fn(args) -> ndarray``; SCALAR: ``fn(ctx, *args)``.


@dataclass
class Operands:
    """The evaluated operands of a vector op: tile values and scalars in parameter order, the
    first operand's static valid shape, keyword attributes, and the operands' dtype."""

    tiles: list[np.ndarray]
    scalars: list[Any]
    valid: tuple[int, ...] | None
    attrs: dict[str, Any] = field(default_factory=dict)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        b = np.asarray(b)
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, 0, np.floor_divide(a, safe))
    return np.divide(a, b)


def _pad(a: np.ndarray, v: Operands) -> np.ndarray:
    """Every element outside the valid region set to the pad value (``pad_value`` attribute)."""
    out = np.array(a, copy=True)
    if v.valid is None:
        return out
    pad = v.attrs.get("pad_value", "zero")
    if isinstance(pad, (int, float)) and not isinstance(pad, bool):
        fill: float | int = pad
    elif (pad := str(pad)) in ("zero", "null"):
        fill = 0
    elif pad in ("max", "min") and out.dtype.kind == "f":
        fill = np.inf if pad == "max" else -np.inf
    elif pad in ("max", "min"):
        fill = np.iinfo(out.dtype).max if pad == "max" else np.iinfo(out.dtype).min
    else:
        raise NotImplementedError(f"pad value {pad!r}")
    mask = np.ones(a.shape, dtype=bool)
    mask[tuple(slice(0, n) for n in v.valid)] = False
    out[mask] = fill
    return out


def _tt(fn: Callable) -> Callable[[Operands], np.ndarray]:
    return lambda v: fn(v.tiles[0], v.tiles[1])


def _ts(fn: Callable) -> Callable[[Operands], np.ndarray]:
    return lambda v: fn(v.tiles[0], v.scalars[0])


def _t(fn: Callable) -> Callable[[Operands], np.ndarray]:
    return lambda v: fn(v.tiles[0])


def _expand(fn: Callable | None, axis: int) -> Callable[[Operands], np.ndarray]:
    """``rhs``'s first column (``axis`` 0: row_expand) or first row (1: col_expand) broadcast
    over ``lhs``, combined with ``lhs`` (plain ``row_expand`` / ``col_expand`` just broadcast)."""
    first = (slice(None), slice(0, 1)) if axis == 0 else (slice(0, 1), slice(None))

    def meaning(v: Operands) -> np.ndarray:
        line = np.broadcast_to(v.tiles[1][first], v.tiles[0].shape)
        return line if fn is None else fn(v.tiles[0], line)
    return meaning


def _reduce(fn: Callable, axis: int) -> Callable[[Operands], np.ndarray]:
    return lambda v: fn(v.tiles[0], axis=axis, keepdims=True)


def _window_of(a: np.ndarray, offs: list[int], shape: list[int]) -> np.ndarray:
    return a[tuple(slice(o, o + n) for o, n in zip(offs, shape))]


def _slice_meaning(a: np.ndarray, args: dict[str, Any]) -> np.ndarray:
    v = _window_of(a, args["offset"], args["shape"])
    if "drop_dims" in args:
        v = v.squeeze(axis=tuple(args["drop_dims"]))
    return v


def _transpose_meaning(a: np.ndarray, args: dict[str, Any]) -> np.ndarray:
    rank = a.ndim
    i, j = (args.get("axis1", rank - 2) % rank, args.get("axis2", rank - 1) % rank)
    return a.swapaxes(i, j)


def _assemble_meaning(v: Operands) -> np.ndarray:
    """``target`` with ``source`` written at ``offset`` (an out-of-bounds window is an
    IndexError, never a silently clipped write)."""
    target, source = v.tiles[0], v.tiles[1]
    offs = list(v.attrs["offset"])
    if len(offs) != target.ndim or any(o < 0 or o + n > d for o, n, d in
                                       zip(offs, source.shape, target.shape)):
        raise IndexError(f"window at {offs} of shape {list(source.shape)} leaves the target "
                         f"{list(target.shape)}")
    out = np.array(target, copy=True)
    _window_of(out, offs, list(source.shape))[...] = source
    return out


def _read_meaning(ctx: Any, tile: Any, indices: list[int]) -> Any:
    """``tile.read``: the element at ``indices`` (``ctx`` is the simulator: ``value`` reads a
    tile's current contents)."""
    return ctx.value(tile)[tuple(int(i) for i in indices)].item()


def _write_meaning(ctx: Any, tile: Any, indices: list[int], value: Any) -> Any:
    """``tile.write``: the element at ``indices`` set in place (seen through every view of the
    tile: ``ctx.overwrite``)."""
    vals = ctx.value(tile)
    vals[tuple(int(i) for i in indices)] = value
    ctx.overwrite(tile, vals)
    return tile


def _store_meaning(tensor: np.ndarray, offs: list[int], values: np.ndarray) -> np.ndarray:
    _window_of(tensor, offs, list(values.shape))[...] = values
    return tensor


# ---------------------------------------------------------------- the registry

_ONCHIP = frozenset({MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right,
                     MemorySpace.Acc, MemorySpace.Bias})
_VEC = frozenset({MemorySpace.Vec})
_LEFT = frozenset({MemorySpace.Left})
_RIGHT = frozenset({MemorySpace.Right})
_ACC = frozenset({MemorySpace.Acc})

#: the data paths a copy (extract / move / transpose) can take, by source space, as the
#: hardware model runs them.  Mat -> Mat is absent: the L1 -> L1 DMA path does not exist (the
#: seed's reason for folding Mat slices); Left / Right / Bias are read only by the cube unit.
TRANSFERS: dict[MemorySpace, frozenset[MemorySpace]] = {
    MemorySpace.DDR: frozenset({MemorySpace.Vec, MemorySpace.Mat}),
    MemorySpace.Vec: frozenset({MemorySpace.Vec, MemorySpace.Mat, MemorySpace.DDR}),
    MemorySpace.Mat: frozenset({MemorySpace.Left, MemorySpace.Right, MemorySpace.Bias,
                                MemorySpace.Vec, MemorySpace.DDR}),
    MemorySpace.Acc: frozenset({MemorySpace.Vec, MemorySpace.Mat, MemorySpace.DDR}),
}

#: copies PyPTO itself rejects at any pipeline point (its code generator has no Mat -> Mat
#: textract / tmov: "no L1->L1 DMA").  Every other path is accepted at the input of
#: CanonicalizeTileSlice, where memory spaces are not yet inferred (InferTileMemorySpace runs
#: later and inserts the moves); the hardware model runs only the paths in TRANSFERS.
NO_PATH: frozenset[tuple[MemorySpace, MemorySpace]] = frozenset({(MemorySpace.Mat, MemorySpace.Mat)})

REGISTRY: dict[str, OpDef] = {}

_KINDS = {"t": Kind.TILE, "n": Kind.TENSOR, "s": Kind.SHAPE, "o": Kind.INDICES, "i": Kind.INDEX,
          "x": Kind.SCALAR, "d": Kind.DTYPE, "m": Kind.MEMORY, "a": Kind.ATTR}


def _sig(spec: str) -> tuple[Param, ...]:
    """``"src:t shape:s offset:o"`` -> parameters (kinds: t tile, n tensor, s shape, o offsets,
    i index, x scalar, d dtype, m memory, a attribute)."""
    out = []
    for item in spec.split():
        name, k = item.split(":")
        out.append(Param(name, _KINDS[k]))
    return tuple(out)


def _op(name: str, spec: str, infer: InferFn | None, family: Family, **props: Any) -> None:
    if "attrs" in props and isinstance(props["attrs"], str):
        props["attrs"] = tuple(props["attrs"].split())
    REGISTRY[name] = OpDef(name, _sig(spec), infer, family, **props)


# -- memory: load, store, create, views, copies

_op("tile.load", "tensor:n offsets:o shape:s valid_shape:s", _infer_load, Family.LOAD,
    output_memory="target_memory", default_target=MemorySpace.Vec, inplace_safe=False,
    window=Window("tensor", "offsets", "shape"), attrs="target_memory clamp",
    numpy=lambda t, offs, shape: _window_of(t, offs, shape))
for _n in ("store", "tile.store"):
    _op(_n, "tile:t offsets:o output:n shapes:s", _infer_store, Family.STORE,
        effect=writes(2), output_memory=MemorySpace.DDR, attrs="atomic", numpy=_store_meaning)
_op("tile.create", "shape:s dtype:d", _infer_create, Family.CREATE,
    output_memory="target_memory", default_target=MemorySpace.Vec, inplace_safe=False,
    attrs="target_memory transpose flat_layout", numpy=lambda args: np.zeros(args["shape"]))
_op("tile.full", "shape:s dtype:d value:x", _infer_full, Family.CREATE,
    output_memory=MemorySpace.Vec, numpy=lambda args: np.full(args["shape"], args["value"]))
for _n, _spec in (("tile.ci", "start:x shape:s"), ("tile.tri", "diagonal:x shape:s valid_shape:s"),
                  ("tile.random", "key0:x key1:x counter0:x counter1:x counter2:x counter3:x "
                                  "shape:s valid_shape:s")):
    _op(_n, _spec, _infer_full, Family.CREATE, output_memory=MemorySpace.Vec,
        attrs="dtype descending upper rounds")
_op("tile.alloc", "memory_space:m size:i", None, Family.SYSTEM, effect=VALUE, attrs="pinned")

_op("tile.slice", "src:t shape:s offset:o valid_shape:s drop_dims:s", _infer_slice, Family.VIEW,
    effect=view_of(0), output_memory="inherit", window=Window("src", "offset", "shape"),
    attrs="pad_value", numpy=_slice_meaning)
_op("tile.reshape", "src:t shape:s", _infer_reshape, Family.VIEW, effect=view_of(0),
    output_memory="inherit", relayout=_nz_relayout, numpy=lambda a, args: a.reshape(args["shape"]))
_op("tile.set_validshape", "src:t valid_rows:i valid_cols:i", _infer_set_validshape, Family.VIEW,
    effect=view_of(0), output_memory="inherit", same_layout=True, numpy=lambda a, args: a.view())
_op("tile.reinterpret_view", "src:t dtype:d shape:s", _infer_reinterpret, Family.VIEW,
    effect=view_of(0), output_memory="inherit", reinterprets=True, relayout=_nz_relayout)
_op("tile.transpose_view", "src:t", _infer_transpose, Family.VIEW, effect=view_of(0),
    output_memory="inherit", numpy=lambda a, args: a.swapaxes(-1, -2))
_op("tile.extract", "src:t row:i col:i shape:s", _infer_extract, Family.COPY,
    output_memory="target_memory", inplace_safe=False, window=Window("src", ("row", "col"), "shape"),
    attrs="target_memory", numpy=lambda a, args: _window_of(a, [args["row"], args["col"]], args["shape"]))
_op("tile.move", "src:t", _infer_move, Family.COPY, output_memory="target_memory",
    inplace_safe=False, attrs="target_memory blayout slayout", numpy=lambda a, args: a)
_op("tile.transpose", "src:t axis1:i axis2:i tmp_tile:t", _infer_transpose, Family.COPY,
    output_memory="target_memory", inplace_safe=False, numpy=_transpose_meaning)
# tile.assemble(target, source, offset): writes source into target at offset, in place
_op("tile.assemble", "target:t source:t offset:o", _infer_same_as_first, Family.VECTOR,
    effect=writes(0), output_memory="inherit", numpy=_assemble_meaning)
_op("tile.concat", "src0:t src1:t", None, Family.VECTOR, output_memory=MemorySpace.Vec,
    inplace_safe=False)

# -- matmul family (PyPTO operand order; scales sit right after the operand they scale)

_MM = dict(output_memory=MemorySpace.Acc)
_op("tile.matmul", "lhs:t rhs:t", _infer_matmul, Family.MATMUL, **_MM,
    input_memory=(("lhs", _LEFT), ("rhs", _RIGHT)), inplace_safe=False, left_arg=0, right_arg=1,
    numpy=np.matmul)
_op("tile.gemv", "lhs:t rhs:t", _infer_matmul, Family.MATMUL, **_MM, attrs="acc_phase",
    input_memory=(("lhs", _LEFT), ("rhs", _RIGHT)), inplace_safe=False, left_arg=0, right_arg=1,
    numpy=np.matmul)
for _n in ("tile.matmul_bias", "tile.gemv_bias"):
    _op(_n, "lhs:t rhs:t bias:t", _infer_matmul, Family.MATMUL, **_MM, attrs="acc_phase",
        input_memory=(("lhs", _LEFT), ("rhs", _RIGHT)), inplace_safe=False,
        left_arg=0, right_arg=1, bias_arg=2, numpy=np.matmul)
_op("tile.matmul_acc", "acc:t lhs:t rhs:t init_cond:x", _infer_matmul_acc, Family.MATMUL, **_MM,
    input_memory=(("acc", _ACC), ("lhs", _LEFT), ("rhs", _RIGHT)), effect=writes(0),
    left_arg=1, right_arg=2, numpy=np.matmul)
_op("tile.gemv_acc", "acc:t lhs:t rhs:t", _infer_matmul_acc, Family.MATMUL, **_MM,
    attrs="acc_phase", input_memory=(("acc", _ACC), ("lhs", _LEFT), ("rhs", _RIGHT)),
    effect=writes(0), left_arg=1, right_arg=2, numpy=np.matmul)
_op("tile.matmul_mx", "lhs:t lhs_scale:t rhs:t rhs_scale:t", _infer_matmul, Family.MATMUL, **_MM,
    inplace_safe=False, left_arg=0, right_arg=2)
_op("tile.matmul_mx_acc", "acc:t lhs:t lhs_scale:t rhs:t rhs_scale:t", _infer_matmul_acc,
    Family.MATMUL, **_MM, input_memory=(("acc", _ACC), ("lhs", _LEFT), ("rhs", _RIGHT)),
    effect=writes(0), left_arg=1, right_arg=3)
_op("tile.matmul_mx_bias", "lhs:t lhs_scale:t rhs:t rhs_scale:t bias:t", _infer_matmul,
    Family.MATMUL, **_MM, inplace_safe=False, left_arg=0, right_arg=2, bias_arg=4)
# batch matmuls: 3-D operands the pass does not rewrite (no Left / Right roles)
_op("tile.batch_matmul", "lhs:t rhs:t", _infer_batch_matmul, Family.MATMUL, **_MM,
    inplace_safe=False)
_op("tile.batch_matmul_acc", "acc:t lhs:t rhs:t", _infer_batch_matmul_acc, Family.MATMUL, **_MM,
    effect=writes(0))
_op("tile.tget_scale_addr", "dst_scale:t src:t", None, Family.SYSTEM, effect=writes(0))

# -- broadcasts: col_expand family (lazily materialized subview operands, #1640 / #2010)

#: the combinations of a broadcast with ``lhs`` (suffix of the op name, numpy meaning)
_EXPANDS = (("", None), ("_mul", np.multiply), ("_add", np.add), ("_sub", np.subtract),
            ("_div", _div), ("_max", np.maximum), ("_min", np.minimum),
            ("_expdif", lambda a, b: np.exp(a - b)))
_COLX = dict(input_memory=(("lhs", _VEC), ("rhs", _VEC)), output_memory="inherit")
for _n, _spec, _family, _axis in (("col_expand", "lhs:t rhs:t", Family.COL_EXPAND, 1),
                                  ("row_expand", "lhs:t rhs:t tmp:t", Family.VECTOR, 0)):
    for _sfx, _fn in _EXPANDS:
        _op(f"tile.{_n}{_sfx}", _spec, _infer_expand(_axis), _family, **_COLX,
            numpy=_expand(_fn, _axis))
_op("tile.expands", "src:t scalar:x", _infer_same_as_first, Family.VECTOR,
    input_memory=(("src", _VEC),), output_memory="inherit",
    numpy=lambda v: np.full(v.tiles[0].shape, v.scalars[0]))

# -- elementwise vector ops: one line each (name, numpy meaning or None when not modelled)

_V = dict(output_memory="inherit")
for _n, _fn in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", _div),
                ("max", np.maximum), ("min", np.minimum), ("maximum", np.maximum),
                ("minimum", np.minimum), ("fmod", np.fmod), ("and", None), ("or", None),
                ("shl", None), ("shr", None), ("part_add", None), ("part_mul", None),
                ("part_max", None), ("part_min", None)):
    _op(f"tile.{_n}", "lhs:t rhs:t", _infer_binary, Family.VECTOR, **_V,
        input_memory=(("lhs", _VEC), ("rhs", _VEC)), numpy=_fn and _tt(_fn),
        attrs="high_precision")
for _n in ("rem", "xor"):  # with a scratch tile
    _op(f"tile.{_n}", "lhs:t rhs:t tmp:t", _infer_binary, Family.VECTOR, **_V,
        input_memory=(("lhs", _VEC), ("rhs", _VEC)))
for _n, _fn in (("muls", np.multiply), ("adds", np.add), ("subs", np.subtract), ("divs", _div),
                ("maxs", np.maximum), ("mins", np.minimum), ("maximums", np.maximum),
                ("minimums", np.minimum), ("fmods", np.fmod), ("ands", None), ("ors", None),
                ("shls", None), ("shrs", None), ("lrelu", None)):
    _op(f"tile.{_n}", "src:t scalar:x", _infer_same_as_first, Family.VECTOR, **_V,
        input_memory=(("src", _VEC),), numpy=_fn and _ts(_fn))
for _n in ("rems", "xors"):
    _op(f"tile.{_n}", "src:t scalar:x tmp:t", _infer_same_as_first, Family.VECTOR, **_V,
        input_memory=(("src", _VEC),))
for _n, _fn in (("exp", np.exp), ("sqrt", np.sqrt), ("rsqrt", lambda a: 1 / np.sqrt(a)),
                ("neg", np.negative), ("abs", np.abs), ("recip", lambda a: 1 / a),
                ("relu", lambda a: np.maximum(a, 0)), ("log", np.log), ("sin", np.sin),
                ("cos", np.cos), ("not", None)):
    _op(f"tile.{_n}", "src:t tmp:t", _infer_same_as_first, Family.VECTOR, **_V,
        input_memory=(("src", _VEC),), numpy=_fn and _t(_fn), attrs="high_precision")
for _n in ("addc", "subc"):
    _op(f"tile.{_n}", "lhs:t rhs:t rhs2:t", _infer_binary, Family.VECTOR, **_V)
for _n in ("addsc", "subsc"):
    _op(f"tile.{_n}", "lhs:t scalar:x rhs2:t", _infer_same_as_first, Family.VECTOR, **_V)
_op("tile.prelu", "src:t slope:t tmp:t", _infer_same_as_first, Family.VECTOR, **_V,
    inplace_safe=False)
_op("tile.cmp", "lhs:t rhs:t", _infer_cmp, Family.VECTOR, **_V, attrs="cmp_type")
_op("tile.cmps", "lhs:t scalar:x", _infer_cmp, Family.VECTOR, **_V, attrs="cmp_type")
_op("tile.sel", "mask:t lhs:t rhs:t tmp:t", None, Family.VECTOR, **_V)
_op("tile.sels", "mask:t src:t tmp:t scalar:x", None, Family.VECTOR, **_V)
_op("tile.cast", "src:t target_type:d mode:a", _infer_cast, Family.VECTOR, **_V,
    input_memory=(("src", _VEC),), numpy=_t(lambda a: a))
_op("tile.fillpad", "src:t pad_value:a", _infer_same_as_first, Family.VECTOR, **_V,
    input_memory=(("src", _VEC),), numpy=lambda v: _pad(v.tiles[0], v))
_op("tile.fillpad_inplace", "src:t pad_value:a", _infer_same_as_first, Family.VECTOR, **_V,
    input_memory=(("src", _VEC),), effect=writes(0), numpy=lambda v: _pad(v.tiles[0], v))
_op("tile.fillpad_expand", "src:t shape:s", None, Family.VECTOR, **_V, inplace_safe=False,
    attrs="pad_value")

# -- reductions (row_* take an optional scratch tile)

for _n, _fn in (("row_sum", np.sum), ("row_max", np.max), ("row_min", np.min),
                ("row_prod", np.prod)):
    _op(f"tile.{_n}", "src:t tmp_tile:t", _infer_reduce(1), Family.VECTOR, **_V,
        input_memory=(("src", _VEC),), inplace_safe=False, numpy=_reduce(_fn, -1))
for _n, _fn in (("col_sum", np.sum), ("col_max", np.max), ("col_min", np.min),
                ("col_prod", np.prod)):
    _op(f"tile.{_n}", "src:t tmp_tile:t", _infer_reduce(0), Family.VECTOR, **_V,
        input_memory=(("src", _VEC),), numpy=_reduce(_fn, 0))
for _n, _axis in (("row_argmax", 1), ("row_argmin", 1), ("col_argmax", 0), ("col_argmin", 0)):
    _op(f"tile.{_n}", "src:t tmp_tile:t", _infer_reduce(_axis, DType.INT32), Family.VECTOR, **_V,
        inplace_safe=False)

# -- sorting, gathers, scatters: results from annotations, memory effects declared

for _n, _spec in (("sort32", "src:t idx:t"), ("mrgsort_format1", "src:t block_len:x"),
                  ("mrgsort_format2", "src0:t src1:t tmp_or_src2:t tmp_or_src3:t tmp:t"),
                  ("gather", "src:t indices:t tmp:t"), ("gatherb", "src:t offset:t"),
                  ("gather_mask", "src:t mask_pattern:a"),
                  ("gather_compare", "src:t kvalue:x tmp:t")):
    _op(f"tile.{_n}", _spec, None, Family.VECTOR, output_memory=MemorySpace.Vec,
        inplace_safe=False, attrs="exhausted output_dtype cmp_mode offset out_cols count_dtype")
for _n, _spec in (("scatter", "dst:t src:t indexes:t"), ("scatter_mask", "dst:t src:t mask_pattern:a"),
                  ("scatter_update", "input:t index:t src:t")):
    _op(f"tile.{_n}", _spec, _infer_same_as_first, Family.VECTOR, effect=writes(0),
        output_memory="inherit", attrs="dim")
_op("tile.gather_row", "dst:t src:n dst_offset:o src_offset:o shapes:s", None, Family.SYSTEM,
    effect=writes(0), attrs="transpose valid_shape")
_op("tile.mscatter", "src:t idx:t output:n", None, Family.SYSTEM, effect=writes(2))
_op("tile.mgather", "mem:n idx:t", None, Family.SYSTEM, inplace_safe=False,
    attrs="coalesce gather_oob target_memory scratch valid_shape")
_op("tile.read", "src:t indices:o", _infer_read, Family.SCALAR, effect=VALUE, numpy=_read_meaning)
_op("tile.write", "src:t indices:o value:x", None, Family.SCALAR, effect=writes(0),
    numpy=_write_meaning)

# -- cross-core transfers: a pushed tile is read, a popped one is fresh

for _n in ("tile.tpush_to_aiv", "tile.tpush_to_aic"):
    _op(_n, "src:t", None, Family.SYSTEM, effect=VALUE, attrs="split id")
for _n in ("tile.tpop_from_aic", "tile.tpop_from_aiv"):
    _op(_n, "", None, Family.SYSTEM, attrs="split id")
for _ns in ("tile", "tensor"):
    for _n in ("aiv_shard", "aic_gather"):
        _op(f"{_ns}.{_n}", "x:t", None, Family.SYSTEM)

# -- scalars

for _n in ("get_block_idx", "tile.get_block_idx", "tensor.get_block_idx"):
    _op(_n, "", _infer_index_scalar, Family.SCALAR, effect=VALUE, numpy=lambda ctx: ctx.block_idx)
for _n in ("tile.get_subblock_idx", "tile.get_block_num", "tensor.get_subblock_idx",
           "tensor.get_block_num"):
    _op(_n, "", _infer_index_scalar, Family.SCALAR, effect=VALUE)


def _bound(fn: Callable[..., int], ends: list[int | None], either: bool) -> int | None:
    """``fn`` of the known ends; with ``either``, one known end bounds the result."""
    known = [x for x in ends if x is not None]
    return fn(known) if known and (either or len(known) == len(ends)) else None


_op("min", "lhs:x rhs:x", _infer_scalar_minmax, Family.SCALAR, effect=VALUE,
    numpy=lambda ctx, a, b: min(a, b),
    interval=lambda ivs: (_bound(min, [lo for lo, _ in ivs], False),
                          _bound(min, [hi for _, hi in ivs], True)))
_op("max", "lhs:x rhs:x", _infer_scalar_minmax, Family.SCALAR, effect=VALUE,
    numpy=lambda ctx, a, b: max(a, b),
    interval=lambda ivs: (_bound(max, [lo for lo, _ in ivs], True),
                          _bound(max, [hi for _, hi in ivs], False)))

# -- tensor ops (Orchestration level: DDR tensors, nothing for the tile pass to rewrite)

_T = dict(output_memory=MemorySpace.DDR)
_op("tensor.create", "shape:s", _infer_tensor_create, Family.TENSOR, **_T,
    attrs="dtype layout manual_dep init_value")
_op("tensor.full", "shape:s value:x", None, Family.TENSOR, **_T, attrs="dtype")
_op("tensor.ci", "start:x shape:s", None, Family.TENSOR, **_T, attrs="dtype descending")
_op("tensor.random", "key0:x key1:x counter0:x counter1:x counter2:x counter3:x shape:s", None,
    Family.TENSOR, **_T, attrs="dtype rounds")
_op("tensor.alloc", "memory_space:m size:i", None, Family.TENSOR, effect=VALUE)
_op("tensor.create_l1", "", None, Family.TENSOR)
_op("tensor.read", "src:n indices:o", _infer_read, Family.TENSOR, effect=VALUE)
_op("tensor.dim", "src:n axis:i", _infer_index_scalar, Family.TENSOR, effect=VALUE)
_op("tensor.write", "src:n indices:o value:x", None, Family.TENSOR, effect=writes(0))
_op("tensor.assemble", "target:n source:n offset:o", _infer_first_tensor, Family.TENSOR,
    effect=writes(0), attrs="atomic")
_op("tensor.slice", "src:n shape:s offset:o valid_shape:s", None, Family.TENSOR,
    effect=view_of(0))
for _n, _spec in (("view", "src:n shape:s valid_shape:s"), ("reshape", "src:n shape:s valid_shape:s"),
                  ("reinterpret_view", "src:n shape:s"),
                  ("set_validshape", "src:n valid_rows:i valid_cols:i")):
    _op(f"tensor.{_n}", _spec, None, Family.TENSOR, effect=view_of(0), attrs="layout")
for _n, _spec in (("transpose", "src:n axis1:i axis2:i valid_shape:s"), ("concat", "src0:n src1:n"),
                  ("fillpad", "src:n"), ("fillpad_expand", "src:n shape:s"),
                  ("expand_clone", "src:n target:n"), ("expands", "target:n scalar:x"),
                  ("cast", "src:n"), ("matmul", "lhs:n rhs:n"),
                  ("paged_gather", "src:n"), ("gather", ""), ("gather_mask", "src:n"),
                  ("gather_compare", "src:n"), ("scatter", ""), ("scatter_mask", ""),
                  ("sort32", "src:n idx:n"), ("mrgsort_format1", "src:n block_len:x"),
                  ("mrgsort_format2", "src0:n src1:n src2:n src3:n"),
                  ("gather_row", "acc:n src:n dst_offset:o src_offset:o shapes:s valid_shape:s")):
    _op(f"tensor.{_n}", _spec, None, Family.TENSOR, **_T,
        attrs="pad_value target_type mode out_dtype a_trans b_trans c_matrix_nz exhausted")
_op("tensor.matmul_acc", "acc:n lhs:n rhs:n init_cond:x", None, Family.TENSOR, **_T,
    effect=writes(0))
_op("tensor.scatter_update", "src:n index:n updates:n", None, Family.TENSOR, **_T,
    effect=writes(0), attrs="dim")
for _n in ("add", "sub", "mul", "div", "maximum", "minimum", "fmod", "cmp", "and", "or", "xor",
           "shl", "shr", "part_add", "part_mul", "part_max", "part_min",
           "adds", "subs", "muls", "divs", "fmods", "ands", "ors", "xors", "shls", "shrs",
           *(f"{_axis}_expand{_sfx}" for _axis in ("row", "col") for _sfx, _ in _EXPANDS)):
    _op(f"tensor.{_n}", "lhs:n rhs:x", _infer_first_tensor, Family.TENSOR, **_T,
        attrs="high_precision cmp_type")
for _n in ("neg", "abs", "not", "recip", "exp", "log", "sin", "cos", "sqrt", "rsqrt",
           "row_max", "row_sum", "row_min", "row_prod", "col_sum", "col_max", "col_min",
           "col_prod", "row_argmax", "row_argmin", "col_argmax", "col_argmin"):
    _op(f"tensor.{_n}", "src:n", None, Family.TENSOR, **_T, attrs="high_precision axis keep_dim")


# -- PyPTO's Python spellings that differ from its op names (``pl.tile.and_`` is ``tile.and``)

for _ns in ("tile", "tensor"):
    for _n in ("and", "or", "not"):
        REGISTRY[f"{_ns}.{_n}_"] = replace(REGISTRY[f"{_ns}.{_n}"], name=f"{_ns}.{_n}_")
_op("tile.mrgsort", "src0:t src1:t src2:t src3:t tmp:t", None, Family.VECTOR,
    output_memory=MemorySpace.Vec, inplace_safe=False, attrs="exhausted block_len")


def lookup(name: str) -> OpDef | None:
    """The registered op, or None for an opaque (unclassified) call."""
    return REGISTRY.get(name)


def classified(name: str) -> bool:
    """Whether the registry knows what op ``name`` writes."""
    op = REGISTRY.get(name)
    return op is not None and op.classified


def operand_role(op_name: str, index: int | None) -> Role | None:
    """The use context of argument ``index`` of a call: the registry's role, or ``Role.ORD``
    for an unclassified op (its operand may be read or written)."""
    op = REGISTRY.get(op_name)
    return Role.ORD if op is None else op.role(index)


def bind(call: Call, arg_types: dict[str, Type | None] | None = None) -> BoundCall:
    op = REGISTRY[call.op]
    return BoundCall(op, call, arg_types or {})


def transfer_error(op: OpDef, src: MemorySpace | None, dst: MemorySpace | None) -> str | None:
    """Why a copy from ``src`` into ``dst`` is wrong by PyPTO's own rules, or None."""
    if src is None or dst is None or (src, dst) not in NO_PATH:
        return None
    return (f"{op.name} cannot copy {src.value} into {dst.value}: there is no "
            f"{src.value}->{dst.value} data path (PyPTO's code generator rejects it)")


def infer_type(call: Call, type_of: Callable[[Expr], Type | None]) -> Type:
    """The result type of a registered call, or UnknownType for an opaque one (or a registered
    one whose type PyPTO's annotation gives).  Raises :class:`OpTypeError` when arguments do not
    fit.  Memory spaces of operands are not checked: at the input of CanonicalizeTileSlice
    PyPTO has not inferred them yet."""
    op = REGISTRY.get(call.op)
    if op is None:
        return UnknownType()
    b = BoundCall(op, call, {})
    b.types = {k: type_of(v) for k, v in b.args.items()}
    if op.family is Family.COPY and "src" in b.types:
        src = b.types.get("src")
        if isinstance(src, TileType):
            dst = b.memory(src.memory)
            if op.window is not None or dst != src.memory:
                why = transfer_error(op, src.memory, dst)
                if why is not None:
                    raise OpTypeError(why)
    if op.infer is None:
        return UnknownType()
    return op.infer(b)
