"""Value semantics of the tile ops, shared by the ideal and the hardware simulator.

Both simulators compute every result with the functions here, on numpy arrays holding
exactly the values a tile holds, so any difference between them comes from *where* the
hardware model reads and writes bytes — never from arithmetic.

What an op computes is the registry's numpy meaning (``OpDef.numpy``); this module
applies it with the dtype rules (exact wide accumulation, rounding to the result dtype).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.ops import OpDef, Operands
from ..ir.types import DType
from .errors import OutOfBounds, UnsupportedByModel

_NP: dict[DType, type] = {
    DType.BOOL: np.bool_,
    DType.INT8: np.int8, DType.UINT8: np.uint8,
    DType.INT16: np.int16, DType.UINT16: np.uint16, DType.FP16: np.float16,
    DType.BF16: np.float32,  # values rounded to bfloat16, stored as 2 bytes by the hardware model
    DType.INT32: np.int32, DType.UINT32: np.uint32, DType.FP32: np.float32,
    DType.INT64: np.int64, DType.UINT64: np.uint64, DType.INDEX: np.int64,
}


def np_dtype(dt: DType) -> np.dtype:
    """The numpy dtype holding the values of ``dt``."""
    t = _NP.get(dt)
    if t is None:
        raise UnsupportedByModel(f"dtype {dt.name} ({dt.bits}-bit) is not modeled by the simulators")
    return np.dtype(t)


def element_bytes(dt: DType) -> int:
    np_dtype(dt)
    return dt.storage_bits // 8


def _round_bf16(a: np.ndarray) -> np.ndarray:
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32).reshape(a.shape)


def coerce(a: np.ndarray | float | int, dt: DType) -> np.ndarray:
    """``a`` as values of ``dt`` (a fresh array)."""
    with np.errstate(all="ignore"):
        out = np.array(a, dtype=np_dtype(dt), copy=True)
    return _round_bf16(out) if dt is DType.BF16 else out


def to_bytes(a: np.ndarray, dt: DType) -> np.ndarray:
    """The storage bytes of ``a`` (shape ``a.shape + (element_bytes,)``)."""
    v = coerce(a, dt)
    if dt is DType.BF16:
        v = (np.ascontiguousarray(v).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    v = np.ascontiguousarray(v)
    return v.view(np.uint8).reshape(*a.shape, element_bytes(dt))


def from_bytes(b: np.ndarray, dt: DType) -> np.ndarray:
    """Inverse of :func:`to_bytes`."""
    shape = b.shape[:-1]
    b = np.ascontiguousarray(b)
    if dt is DType.BF16:
        u16 = b.view(np.uint16).reshape(shape)
        return (u16.astype(np.uint32) << np.uint32(16)).view(np.float32)
    return b.view(np_dtype(dt)).reshape(shape).copy()


# ---------------------------------------------------------------- op meanings


def apply(opdef: OpDef, tiles: list[np.ndarray], scalars: list[Any], valid: tuple[int, ...] | None,
          attrs: dict[str, Any], dt: DType, out_dt: DType) -> np.ndarray:
    """A vector or col_expand op: the registry's numpy meaning on tile values ``tiles`` (scalars
    taken as values of ``dt``), rounded to ``out_dt``."""
    if opdef.numpy is None:
        raise UnsupportedByModel(f"no value semantics for {opdef.name}")
    with np.errstate(all="ignore"):
        try:
            r = opdef.numpy(Operands(tiles, [coerce(x, dt) for x in scalars], valid, attrs))
        except NotImplementedError as e:
            raise UnsupportedByModel(f"{opdef.name}: {e}") from None
        except IndexError as e:
            raise OutOfBounds(f"{opdef.name}: {e}") from None
    return coerce(r, out_dt)


def matmul(opdef: OpDef, lhs: np.ndarray, rhs: np.ndarray, out_dt: DType,
           acc: np.ndarray | None = None, bias: np.ndarray | None = None) -> np.ndarray:
    """``acc + lhs @ rhs (+ bias row)`` with the registry's product, accumulated exactly in
    64 bits then rounded."""
    if opdef.numpy is None:
        raise UnsupportedByModel(f"{opdef.name} is not modeled")
    wide = np.int64 if np.issubdtype(np_dtype(out_dt), np.integer) else np.float64
    with np.errstate(all="ignore"):
        r = opdef.numpy(lhs.astype(wide), rhs.astype(wide))
        if acc is not None:
            r = r + acc.astype(wide)
        if bias is not None:
            r = r + np.broadcast_to(bias.astype(wide)[:1, :], r.shape)
    return coerce(r, out_dt)


def outputs_equal(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Exact equality of two simulator results (NaNs equal, dtypes must match)."""
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            return False
    return True
