"""Value semantics of the tile ops, shared by the ideal and the hardware simulator.

Both simulators compute every result with the functions here, on numpy arrays holding
exactly the values a tile holds, so any difference between them comes from *where* the
hardware model reads and writes bytes — never from arithmetic.

Dispatch is by the op registry's :class:`~egraph_tiles.ir.ops.Family` plus the op's
name suffix inside its family (``tile.muls`` → ``mul`` with a scalar operand), so a new
elementwise op with an existing suffix needs no change here.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..ir.types import DType
from .errors import UnsupportedByModel

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


# ---------------------------------------------------------------- elementwise


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, 0, np.floor_divide(a, safe))
    return np.divide(a, b)


BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _div,
    "max": np.maximum, "min": np.minimum,
}

UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp": np.exp, "sqrt": np.sqrt, "rsqrt": lambda a: 1 / np.sqrt(a), "neg": np.negative,
    "abs": np.abs, "recip": lambda a: 1 / a, "relu": lambda a: np.maximum(a, 0),
}

REDUCE: dict[str, Callable[..., np.ndarray]] = {"sum": np.sum, "max": np.max, "min": np.min}


def _suffix(op: str) -> str:
    return op.rsplit(".", 1)[-1]


def vector(op: str, tiles: list[np.ndarray], scalars: list[float | int], dt: DType,
           out_dt: DType | None = None) -> np.ndarray:
    """An ordinary vector op (``Family.VECTOR``) on tile values ``tiles``."""
    name = _suffix(op)
    with np.errstate(all="ignore"):
        if name in BINARY and len(tiles) == 2:
            r = BINARY[name](tiles[0], tiles[1])
        elif name.endswith("s") and name[:-1] in BINARY and len(tiles) == 1:
            s = coerce(scalars[0], dt)
            r = BINARY[name[:-1]](tiles[0], s)
        elif name in UNARY:
            r = UNARY[name](tiles[0])
        elif name.startswith("row_") and name[4:] in REDUCE:
            r = REDUCE[name[4:]](tiles[0], axis=-1, keepdims=True)
        elif name == "cast":
            assert out_dt is not None
            return coerce(tiles[0], out_dt)
        else:
            raise UnsupportedByModel(f"no value semantics for vector op {op}")
    return coerce(r, dt)


def col_expand(op: str, lhs: np.ndarray, rhs: np.ndarray, dt: DType) -> np.ndarray:
    """``tile.col_expand[_OP](lhs, rhs)``: ``rhs``'s first row broadcast over ``lhs``'s
    rows, then combined elementwise with ``lhs`` (plain ``col_expand`` just broadcasts)."""
    name = _suffix(op)
    row = np.broadcast_to(rhs[:1, :], lhs.shape)
    if name == "col_expand":
        return coerce(row, dt)
    fn = BINARY.get(name.removeprefix("col_expand_"))
    if fn is None:
        raise UnsupportedByModel(f"no value semantics for {op}")
    with np.errstate(all="ignore"):
        return coerce(fn(lhs, row), dt)


def matmul(lhs: np.ndarray, rhs: np.ndarray, out_dt: DType, acc: np.ndarray | None = None,
           bias: np.ndarray | None = None) -> np.ndarray:
    """``acc + lhs @ rhs (+ bias row)``, accumulated exactly in 64 bits then rounded."""
    wide = np.int64 if np.issubdtype(np_dtype(out_dt), np.integer) else np.float64
    with np.errstate(all="ignore"):
        r = lhs.astype(wide) @ rhs.astype(wide)
        if acc is not None:
            r = r + acc.astype(wide)
        if bias is not None:
            r = r + np.broadcast_to(bias.astype(wide)[:1, :], r.shape)
    return coerce(r, out_dt)


def fillpad(a: np.ndarray, valid: tuple[int, ...] | None, pad: str, dt: DType) -> np.ndarray:
    """``tile.fillpad_inplace``: every element outside the valid region set to the pad value."""
    out = coerce(a, dt)
    if valid is None:
        return out
    npd = np_dtype(dt)
    if pad in ("zero", "null"):
        v: float | int = 0
    elif pad == "max":
        v = np.inf if npd.kind == "f" else np.iinfo(npd).max
    elif pad == "min":
        v = -np.inf if npd.kind == "f" else np.iinfo(npd).min
    else:
        raise UnsupportedByModel(f"pad value {pad!r}")
    mask = np.ones(a.shape, dtype=bool)
    mask[tuple(slice(0, n) for n in valid)] = False
    out[mask] = v
    return out


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
