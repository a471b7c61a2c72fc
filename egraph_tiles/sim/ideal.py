"""Ideal semantics: numpy values, no addresses, no hazards.

A tile is a numpy array.  Views (``tile.slice``, ``transpose_view``, ...) are numpy views
of their source, so a view reads its source *at use time* and a write-back op
(``matmul_acc`` into a window, ``fillpad_inplace``, ``store``) is visible through every
alias — the meaning the program's author intends.  Copies (extract / move / transpose)
are fresh arrays.  Memory spaces are recorded but never change a value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir.ops import OpDef
from ..ir.stmts import Program
from ..ir.types import DType, MemorySpace
from . import semantics as sem
from .errors import UnsupportedByModel
from .interp import Interpreter, check_window


@dataclass(eq=False)
class ITile:
    arr: np.ndarray
    dtype: DType
    mem: MemorySpace


def _window(offsets: list[int], shape: list[int]) -> tuple[slice, ...]:
    return tuple(slice(o, o + n) for o, n in zip(offsets, shape))


class IdealInterpreter(Interpreter):
    def is_tile(self, v: Any) -> bool:
        return isinstance(v, ITile)

    def tile_dtype(self, v: ITile) -> DType:
        return v.dtype

    def tile_memory(self, v: ITile) -> MemorySpace:
        return v.mem

    def value(self, tile: ITile) -> np.ndarray:
        return np.array(tile.arr, copy=True)

    def load(self, tensor: np.ndarray, dt: DType, offsets: list[int], shape: list[int],
             mem: MemorySpace) -> ITile:
        check_window("tile.load", offsets, shape, tensor.shape)
        return ITile(sem.coerce(tensor[_window(offsets, shape)], dt), dt, mem)

    def store(self, tile: ITile, offsets: list[int], tensor: np.ndarray) -> np.ndarray:
        check_window("store", offsets, list(tile.arr.shape), tensor.shape)
        tensor[_window(offsets, list(tile.arr.shape))] = tile.arr
        return tensor

    def create(self, shape: list[int], dt: DType, mem: MemorySpace) -> ITile:
        return ITile(sem.coerce(np.zeros(shape), dt), dt, mem)

    def view(self, op: str, src: ITile, args: dict[str, Any], static: bool) -> ITile:
        a = src.arr
        if op == "tile.slice":
            shape, offs = args["shape"], args["offset"]
            check_window("tile.slice", offs, shape, a.shape)
            v = a[_window(offs, shape)]
            if "drop_dims" in args:
                v = v.squeeze(axis=tuple(args["drop_dims"]))
            return ITile(v, src.dtype, src.mem)
        if op == "tile.reshape":
            return ITile(a.reshape(args["shape"]), src.dtype, src.mem)
        if op == "tile.set_validshape":
            return ITile(a.view(), src.dtype, src.mem)
        if op == "tile.transpose_view":
            return ITile(a.swapaxes(-1, -2), src.dtype, src.mem)
        if op == "tile.reinterpret_view":
            dt: DType = args["dtype"]
            if DType.BF16 in (dt, src.dtype) or DType.BOOL in (dt, src.dtype):
                raise UnsupportedByModel("reinterpret_view of BF16 / BOOL tiles")
            return ITile(a.view(sem.np_dtype(dt)), dt, src.mem)
        raise UnsupportedByModel(f"view op {op}")

    def copy(self, op: str, src: ITile, args: dict[str, Any], target: MemorySpace) -> ITile:
        a = src.arr
        if op == "tile.extract":
            shape = args["shape"]
            offs = [args["row"], args["col"]]
            check_window("tile.extract", offs, shape, a.shape)
            a = a[_window(offs, shape)]
        elif op == "tile.transpose":
            a = a.swapaxes(-1, -2)
        return ITile(np.array(a, copy=True), src.dtype, target)

    def matmul(self, opdef: OpDef, tiles: dict[str, Any], out_dt: DType) -> ITile:
        acc = tiles.get("acc")
        bias = tiles.get("bias")
        r = sem.matmul(tiles["lhs"].arr, tiles["rhs"].arr, out_dt,
                       acc=None if acc is None else acc.arr,
                       bias=None if bias is None else bias.arr)
        if acc is not None:
            acc.arr[...] = r
            return acc
        return ITile(r, out_dt, MemorySpace.Acc)

    def col_expand(self, op: str, lhs: ITile, rhs: ITile) -> ITile:
        return ITile(sem.col_expand(op, lhs.arr, rhs.arr, lhs.dtype), lhs.dtype, lhs.mem)

    def vector(self, opdef: OpDef, args: dict[str, Any], out_dt: DType,
               valid: tuple[int, ...] | None) -> ITile:
        first: ITile = args[opdef.params[0]]
        if opdef.name == "tile.fillpad_inplace":
            first.arr[...] = sem.fillpad(first.arr, valid, str(args.get("pad_value", "zero")),
                                         first.dtype)
            return first
        tiles = [args[p].arr for p in opdef.params if isinstance(args.get(p), ITile)]
        scalars = [args["scalar"]] if "scalar" in args else []
        r = sem.vector(opdef.name, tiles, scalars, first.dtype, out_dt)
        return ITile(r, out_dt, first.mem)


def run_ideal(program: Program, inputs: dict[str, np.ndarray],
              scalars: dict[str, int | float] | None = None, function: str | None = None,
              block_idx: int = 0) -> dict[str, np.ndarray]:
    """Run ``function`` (default: the program's first) under the ideal semantics.

    ``inputs`` maps tensor parameter names to arrays (``pl.Out`` tensors default to
    zeros), ``scalars`` maps scalar parameter names to values.  Returns every ``pl.Out``
    tensor by name, plus ``return<i>`` for returned values that are not an out tensor.
    """
    return IdealInterpreter(program, block_idx).run(function, inputs, scalars or {})
