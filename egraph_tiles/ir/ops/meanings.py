"""Numpy meanings the simulators apply (``OpDef.numpy``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

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


def div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        b = np.asarray(b)
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, 0, np.floor_divide(a, safe))
    return np.divide(a, b)


def pad(a: np.ndarray, v: Operands) -> np.ndarray:
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


def tt(fn: Callable) -> Callable[[Operands], np.ndarray]:
    return lambda v: fn(v.tiles[0], v.tiles[1])


def ts(fn: Callable) -> Callable[[Operands], np.ndarray]:
    return lambda v: fn(v.tiles[0], v.scalars[0])


def t(fn: Callable) -> Callable[[Operands], np.ndarray]:
    return lambda v: fn(v.tiles[0])


def expand(fn: Callable | None, axis: int) -> Callable[[Operands], np.ndarray]:
    """``rhs``'s first column (``axis`` 0: row_expand) or first row (1: col_expand) broadcast
    over ``lhs``, combined with ``lhs`` (plain ``row_expand`` / ``col_expand`` just broadcast)."""
    first = (slice(None), slice(0, 1)) if axis == 0 else (slice(0, 1), slice(None))

    def meaning(v: Operands) -> np.ndarray:
        line = np.broadcast_to(v.tiles[1][first], v.tiles[0].shape)
        return line if fn is None else fn(v.tiles[0], line)
    return meaning


def reduce(fn: Callable, axis: int) -> Callable[[Operands], np.ndarray]:
    return lambda v: fn(v.tiles[0], axis=axis, keepdims=True)


def window_of(a: np.ndarray, offs: list[int], shape: list[int]) -> np.ndarray:
    return a[tuple(slice(o, o + n) for o, n in zip(offs, shape))]


def slice_meaning(a: np.ndarray, args: dict[str, Any]) -> np.ndarray:
    v = window_of(a, args["offset"], args["shape"])
    if "drop_dims" in args:
        v = v.squeeze(axis=tuple(args["drop_dims"]))
    return v


def transpose_meaning(a: np.ndarray, args: dict[str, Any]) -> np.ndarray:
    rank = a.ndim
    i, j = (args.get("axis1", rank - 2) % rank, args.get("axis2", rank - 1) % rank)
    return a.swapaxes(i, j)


def assemble_meaning(v: Operands) -> np.ndarray:
    """``target`` with ``source`` written at ``offset`` (an out-of-bounds window is an
    IndexError, never a silently clipped write)."""
    target, source = v.tiles[0], v.tiles[1]
    offs = list(v.attrs["offset"])
    if len(offs) != target.ndim or any(o < 0 or o + n > d for o, n, d in
                                       zip(offs, source.shape, target.shape)):
        raise IndexError(f"window at {offs} of shape {list(source.shape)} leaves the target "
                         f"{list(target.shape)}")
    out = np.array(target, copy=True)
    window_of(out, offs, list(source.shape))[...] = source
    return out


def read_meaning(ctx: Any, tile: Any, indices: list[int]) -> Any:
    """``tile.read``: the element at ``indices`` (``ctx`` is the simulator: ``value`` reads a
    tile's current contents)."""
    return ctx.value(tile)[tuple(int(i) for i in indices)].item()


def write_meaning(ctx: Any, tile: Any, indices: list[int], value: Any) -> Any:
    """``tile.write``: the element at ``indices`` set in place (seen through every view of the
    tile: ``ctx.overwrite``)."""
    vals = ctx.value(tile)
    vals[tuple(int(i) for i in indices)] = value
    ctx.overwrite(tile, vals)
    return tile


def store_meaning(tensor: np.ndarray, offs: list[int], values: np.ndarray) -> np.ndarray:
    window_of(tensor, offs, list(values.shape))[...] = values
    return tensor

