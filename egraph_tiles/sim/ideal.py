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
from .interp import Interpreter


@dataclass(eq=False)
class ITile:
    arr: np.ndarray
    dtype: DType
    space: MemorySpace


class IdealInterpreter(Interpreter):
    tile_type = ITile

    def value(self, tile: ITile) -> np.ndarray:
        return np.array(tile.arr, copy=True)

    def overwrite(self, tile: ITile, values: np.ndarray) -> None:
        tile.arr[...] = sem.coerce(values, tile.dtype)

    def tile_shape(self, v: ITile) -> tuple[int, ...]:
        return tuple(v.arr.shape)

    def load(self, values: np.ndarray, dt: DType, mem: MemorySpace) -> ITile:
        return ITile(sem.coerce(values, dt), dt, mem)

    def create(self, values: np.ndarray, dt: DType, mem: MemorySpace) -> ITile:
        return ITile(sem.coerce(values, dt), dt, mem)

    def view(self, opdef: OpDef, src: ITile, args: dict[str, Any], static: bool) -> ITile:
        if opdef.reinterprets:
            dt: DType = args["dtype"]
            if DType.BF16 in (dt, src.dtype) or DType.BOOL in (dt, src.dtype):
                raise UnsupportedByModel("reinterpret_view of BF16 / BOOL tiles")
            return ITile(src.arr.view(sem.np_dtype(dt)), dt, src.space)
        return ITile(opdef.numpy(src.arr, args), src.dtype, src.space)

    def copy(self, opdef: OpDef, src: ITile, args: dict[str, Any], target: MemorySpace) -> ITile:
        return ITile(np.array(opdef.numpy(src.arr, args), copy=True), src.dtype, target)

    def matmul(self, opdef: OpDef, tiles: dict[str, Any], out_dt: DType) -> ITile:
        acc = tiles.get("acc")
        bias = tiles.get("bias")
        r = sem.matmul(opdef, tiles["lhs"].arr, tiles["rhs"].arr, out_dt,
                       acc=None if acc is None else acc.arr,
                       bias=None if bias is None else bias.arr)
        if acc is not None:
            acc.arr[...] = r
            return acc
        return ITile(r, out_dt, MemorySpace.Acc)

    def vector(self, opdef: OpDef, args: dict[str, Any], out_dt: DType,
               valid: tuple[int, ...] | None) -> ITile:
        first: ITile = args[opdef.params[0]]
        tiles, scalars, attrs = self.operands(opdef, args, valid)
        r = sem.apply(opdef, [t.arr for t in tiles], scalars, valid, attrs, first.dtype, out_dt)
        if opdef.reuses_arg is not None:  # written in place: seen through every alias
            tgt: ITile = args[opdef.params[opdef.reuses_arg]]
            tgt.arr[...] = r
            return tgt
        return ITile(r, out_dt, first.space)


def run_ideal(program: Program, inputs: dict[str, np.ndarray],
              scalars: dict[str, int | float] | None = None, function: str | None = None,
              block_idx: int = 0) -> dict[str, np.ndarray]:
    """Run ``function`` (default: the program's first) under the ideal semantics.

    ``inputs`` maps tensor parameter names to arrays (``pl.Out`` tensors default to
    zeros), ``scalars`` maps scalar parameter names to values.  Returns every ``pl.Out``
    tensor by name, plus ``return<i>`` for returned values that are not an out tensor.
    """
    return IdealInterpreter(program, block_idx).run(function, inputs, scalars or {})
