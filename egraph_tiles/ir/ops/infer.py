"""Result-type rules: the type of a call from its bound arguments (``OpDef.infer``)."""

from __future__ import annotations

import numpy as np

from ..exprs import Const, ListExpr, const_int, const_shape
from ..target import acc_layout
from ..types import DType, MemorySpace, ScalarType, TensorType, TileType, TupleType, Type, UnknownType
from .model import BoundCall, InferFn, OpTypeError, dims_agree, prod, shape_of, tname


def infer_load(b: BoundCall) -> Type:
    t = b.type_of("tensor")
    if not isinstance(t, TensorType):
        raise OpTypeError(f"tile.load reads a tensor, got {tname(t)}")
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
        shape = (Const(prod(tuple(lead))), shape[-1])  # type: ignore[arg-type]
        valid = None
    return TileType(shape, t.dtype, b.memory(MemorySpace.Vec), valid)


def infer_store(b: BoundCall) -> Type:
    b.tile("tile")
    out = b.type_of("output")
    if not isinstance(out, TensorType):
        raise OpTypeError(f"store writes into a tensor, got {tname(out)}")
    b.shape("offsets")
    # At the input of CanonicalizeTileSlice PyPTO's store accepts a tile whose dtype differs from
    # the tensor's (an FP32 accumulator stored into an FP16 output converts on the way out) and
    # offsets of another rank than the tensor's (a 2-D tile addressing an N-D tensor after
    # flattening): neither is checked until code generation, so neither is rejected here.
    return out


def infer_create(b: BoundCall) -> Type:
    return TileType(b.shape("shape"), b.dtype("dtype"), b.memory(MemorySpace.Vec))


def infer_full(b: BoundCall) -> Type:
    dt = b.dtype("dtype") if "dtype" in b.args else DType.INT32
    return TileType(b.shape("shape"), dt, MemorySpace.Vec)


def infer_tensor_create(b: BoundCall) -> Type:
    return TensorType(b.shape("shape"), b.dtype("dtype"))


def infer_slice(b: BoundCall) -> Type:
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


def infer_extract(b: BoundCall) -> Type:
    src = b.tile("src")
    shape = b.shape("shape")
    if len(shape) != src.rank:
        raise OpTypeError(f"tile.extract: shape must have rank {src.rank}")
    return TileType(shape, src.dtype, b.memory(src.memory))


def infer_move(b: BoundCall) -> Type:
    src = b.tile("src")
    return TileType(src.shape, src.dtype, b.memory(src.memory), src.valid_shape)


def nz_relayout(memory: MemorySpace | None, src: tuple[int | None, ...],
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


def infer_reshape(b: BoundCall) -> Type:
    src = b.tile("src")
    shape = b.shape("shape")
    a, c = const_shape(src), const_shape(TileType(shape, src.dtype))
    if a is not None and c is not None and prod(a) != prod(c):
        raise OpTypeError(f"tile.reshape: {list(a)} and {list(c)} have different element counts")
    return TileType(shape, src.dtype, src.memory)


def infer_set_validshape(b: BoundCall) -> Type:
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


def infer_reinterpret(b: BoundCall) -> Type:
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


def infer_transpose(b: BoundCall) -> Type:
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


def infer_matmul(b: BoundCall) -> Type:
    a, c = _factors(b, 2)
    if a.dtype != c.dtype:
        raise OpTypeError(f"{b.op.name}: operand dtypes differ ({a.dtype.name} vs {c.dtype.name})")
    return TileType((a.shape[0], c.shape[1]), _acc_dtype(a.dtype), MemorySpace.Acc)


def infer_matmul_acc(b: BoundCall) -> Type:
    acc = b.tile("acc")
    res = infer_matmul(b)
    assert isinstance(res, TileType)
    if not dims_agree(acc.shape, res.shape):
        raise OpTypeError(
            f"{b.op.name}: accumulator shape {list(acc.shape)} differs from the product shape {list(res.shape)}"
        )
    return like(acc)


def infer_batch_matmul(b: BoundCall) -> Type:
    a, c = _factors(b, 3)
    return TileType((a.shape[0], a.shape[1], c.shape[2]), _acc_dtype(a.dtype), MemorySpace.Acc)


def infer_batch_matmul_acc(b: BoundCall) -> Type:
    acc = b.tile("acc")
    infer_batch_matmul(b)
    return acc


def like(t: TileType) -> TileType:
    """A result tile with ``t``'s shape, dtype, memory and valid shape (not its memref / view)."""
    return TileType(t.shape, t.dtype, t.memory, t.valid_shape)


def infer_same_as_first(b: BoundCall) -> Type:
    return like(b.tile(b.op.params[0]))


def _same_dtype(b: BoundCall, x: TileType, y: TileType) -> None:
    if x.dtype != y.dtype:
        raise OpTypeError(f"{b.op.name}: dtypes {x.dtype.name} and {y.dtype.name} differ")


def infer_binary(b: BoundCall) -> Type:
    x, y = b.tile("lhs"), b.tile("rhs")
    if not dims_agree(x.shape, y.shape):
        raise OpTypeError(f"{b.op.name}: shapes {list(x.shape)} and {list(y.shape)} differ")
    _same_dtype(b, x, y)
    return like(x)


def infer_expand(axis: int) -> InferFn:
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
        return like(x)
    return infer


def infer_reduce(axis: int, dtype: DType | None = None) -> InferFn:
    """A 2-D reduction along ``axis`` (1: each row to one value, 0: each column); the result
    has the source's dtype, or ``dtype`` (an arg-reduction's INT32 indices)."""
    def infer(b: BoundCall) -> Type:
        x = b.tile("src")
        if x.rank != 2:
            raise OpTypeError(f"{b.op.name} needs a 2-D tile")
        shape = (x.shape[0], Const(1)) if axis == 1 else (Const(1), x.shape[1])
        return TileType(shape, dtype or x.dtype, x.memory)
    return infer


def infer_cast(b: BoundCall) -> Type:
    x = b.tile("src")
    return TileType(x.shape, b.dtype("target_type"), x.memory, x.valid_shape)


def infer_cmp(b: BoundCall) -> Type:
    x = b.tile("lhs")
    return TileType(x.shape, DType.BOOL, x.memory, x.valid_shape)


def infer_index_scalar(b: BoundCall) -> Type:
    return ScalarType(DType.INDEX)


def infer_scalar_minmax(b: BoundCall) -> Type:
    ts = [b.type_of("lhs"), b.type_of("rhs")]
    for t in ts:
        if isinstance(t, (TileType, TensorType, TupleType)):
            raise OpTypeError(f"{b.op.name} takes scalars, got a {type(t).__name__}")
    dts = [t.dtype for t in ts if isinstance(t, ScalarType)]
    if any(d.is_float for d in dts):
        return ScalarType(next(d for d in dts if d.is_float))
    return ScalarType(DType.INDEX)


def infer_read(b: BoundCall) -> Type:
    t = b.type_of("src")
    if isinstance(t, (TileType, TensorType)):
        return ScalarType(t.dtype)
    raise OpTypeError(f"{b.op.name} reads a tile or tensor, got {tname(t)}")


def infer_first_tensor(b: BoundCall) -> Type:
    t = b.type_of(b.op.params[0])
    if isinstance(t, (TensorType, TileType)):
        return t
    return UnknownType()

