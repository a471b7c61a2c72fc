"""The hardware model: byte-addressed memories and the hazards of the slice canonicalization.

Each on-chip memory space (Vec, Mat, Left, Right, Acc, Bias) is a byte array.  Fresh tiles
get 32-byte-aligned addresses from a bump allocator (which starts at :data:`ALLOC_BASE`),
or the byte address their ``memref`` annotation names.  Tiles are row-major, except Acc
tiles, which use the 16×16 NZ block layout: block ``(rb, cb)`` of an ``[M, N]`` tile sits
at ``(cb * M/16 + rb) * 256`` elements, row-major inside the block; a 3-D (batch) Acc tile
keeps each page as such an NZ tile, one after the other.

A tile value is a :class:`Ref`: its space, dtype and the byte address of every element.
A view (slice, transpose_view, set_validshape) is a Ref over its source's addresses, so it
reads and writes the source's bytes.  A reshape or reinterpret_view (a registry ``relayout``
view) is, as on the device, an alias of the operand's buffer from its base laid out as a dense
tile of the new shape (row-major; the NZ blocks of that shape in Acc): numpy's view for a dense
operand whose layout the reshape keeps, other elements for a window that is not dense or an Acc
tile reshaped to another layout (``OpDef.relayouts``).  Every op reads its operands completely before it
writes its result, so ordinary aliasing is harmless; only these hazards corrupt data:

* **#1640 / #2010** — a ``tile.slice`` operand of a ``Family.COL_EXPAND`` op is first
  materialized into the slice's *own* buffer, which inherits the source's memory: at
  ``source + constant offset`` (``source`` base when an offset is dynamic).  The copy
  repacks the window densely (row pitch = slice columns), row by row, in place — on top
  of the live source.
* **#1789** — a ``Family.VECTOR`` op on a tile operand whose base address is not 32-byte
  aligned raises :class:`MisalignedAccess`.
* **pto-isa#253** — an op whose output reuses an Acc operand (``matmul_acc`` & co.)
  reads and writes that accumulator *compactly from its base address*, as a standalone
  ``[m, n]`` NZ tile: a window that is not contiguous in its parent is garbled.
* **Mat→Mat** — a copy along a path missing from the registry's ``TRANSFERS`` table
  raises :class:`UnsupportedTransfer`; a Mat ``tile.slice`` operand of a matmul is lazily
  materialized with exactly such a Mat→Mat ``textract``.
* **Capacity** (``run_hardware(..., capacity=True)``) — every buffer lives from the statement
  that allocates it to the last statement that reads or writes it through any view (per
  execution: a loop body's buffers live within their trip, a buffer made before a loop and used
  in it lives across every trip); when the peak of the live bytes of a memory space exceeds
  :data:`CAPACITY`, the run raises :class:`CapacityExceeded`.  A copy hoisted out of a loop
  lives across the whole loop, on top of the body's own temporaries.

Copies read their source when they execute: a copy made before a write to its source keeps
the old values (the ideal semantics' views see the write), so a copy placed too early shows
as a difference in the outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir.ops import TRANSFERS, Family, OpDef, Role
from ..ir.stmts import Program
from ..ir.target import ALIGN_BYTES, CAPACITY, FRACTAL, acc_layout, nz_index, nz_index_batch  # noqa: F401 (re-exported)
from ..ir.types import DType, MemorySpace
from . import semantics as sem
from .errors import (CapacityExceeded, MisalignedAccess, OutOfMemory, UnsupportedByModel,
                     UnsupportedTransfer)
from .interp import Interpreter

# bytes: tile base alignment of vector instructions and of the allocator (the target's one
# definition, the same the rules prove views against)
ALIGN = ALIGN_BYTES
ALLOC_BASE = 1 << 20  # the allocator's first address; memref-pinned tiles live below
MAX_BYTES = 1 << 28  # per space
POISON = 0x7F  # fresh memory: reading it by mistake gives huge values, never small ints


def _ceil(x: int, m: int) -> int:
    return -(-x // m) * m


def layout_index(shape: tuple[int, ...], space: MemorySpace) -> np.ndarray:
    """Element index (from the tile base) of every element of a tile of ``shape`` stored in
    ``space``: NZ blocks in Acc (rank 2, or rank 3 pages), row-major elsewhere."""
    if space is MemorySpace.Acc:
        index = acc_layout(shape)
        if index is None:
            raise UnsupportedByModel("Acc tiles of rank other than 2 or 3")
        return index
    return np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)


class Memory:
    """One memory space: a growable byte array and a bump allocator."""

    def __init__(self, space: MemorySpace):
        self.space = space
        self.data = np.full(ALLOC_BASE + (1 << 16), POISON, dtype=np.uint8)
        self.top = ALLOC_BASE

    def _ensure(self, end: int) -> None:
        if end > MAX_BYTES:
            raise OutOfMemory(f"{self.space.value}: {end} bytes exceed the model's {MAX_BYTES}")
        if end > len(self.data):
            grown = np.full(max(end, 2 * len(self.data)), POISON, dtype=np.uint8)
            grown[: len(self.data)] = self.data
            self.data = grown

    def alloc(self, nbytes: int) -> int:
        addr = self.top
        self.top = _ceil(addr + max(nbytes, 1), ALIGN)
        self._ensure(self.top)
        return addr

    def _idx(self, offs: np.ndarray, eb: int) -> np.ndarray:
        idx = offs[..., None] + np.arange(eb)
        if idx.size:
            if idx.min() < 0:
                raise OutOfMemory(f"{self.space.value}: negative address {int(idx.min())}")
            self._ensure(int(idx.max()) + 1)
        return idx

    def read(self, offs: np.ndarray, dt: DType) -> np.ndarray:
        return sem.from_bytes(self.data[self._idx(offs, sem.element_bytes(dt))], dt)

    def write(self, offs: np.ndarray, values: np.ndarray, dt: DType) -> None:
        self.data[self._idx(offs, sem.element_bytes(dt))] = sem.to_bytes(
            np.broadcast_to(values, offs.shape), dt)


@dataclass(eq=False)
class SliceOrigin:
    """What a ``tile.slice`` result remembers for lazy materialization."""

    root: "Ref"  # the peeled non-slice source
    row: int  # total offsets in the root
    col: int
    static: bool  # every offset along the chain is a compile-time constant
    own_addr: int  # the slice's own buffer: root + const offset, or the root base


@dataclass(eq=False)
class Ref:
    space: MemorySpace
    dtype: DType
    offs: np.ndarray  # byte address of every element; shape = the tile's shape
    origin: SliceOrigin | None = None
    buf: int = -1  # the buffer it names (views share their source's; -1: none tracked)

    @property
    def base(self) -> int:
        return int(self.offs.flat[0]) if self.offs.size else 0

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.offs.shape)


class HardwareInterpreter(Interpreter):
    tile_type = Ref

    def __init__(self, program: Program, block_idx: int = 0):
        super().__init__(program, block_idx)
        self.mem = {s: Memory(s) for s in MemorySpace if s is not MemorySpace.DDR}
        #: per buffer: [space, bytes, statement that allocated it, last statement that used it]
        self.buffers: list[list] = []

    # ------------------------------------------------------------ liveness (capacity)

    def touch(self, v: Any) -> None:
        if isinstance(v, Ref):
            if v.buf >= 0:
                self.buffers[v.buf][3] = self.step
        elif isinstance(v, tuple):
            for x in v:
                self.touch(x)

    def peak_bytes(self) -> dict[MemorySpace, int]:
        """The largest number of live bytes each memory space held at once during the run."""
        events: dict[MemorySpace, list[tuple[int, int]]] = {}
        for space, nbytes, start, end in self.buffers:
            ev = events.setdefault(space, [])
            ev += [(start, nbytes), (end + 1, -nbytes)]
        peaks: dict[MemorySpace, int] = {}
        for space, ev in events.items():
            live = peak = 0
            for _, d in sorted(ev, key=lambda e: (e[0], e[1])):  # frees before allocations
                live += d
                peak = max(peak, live)
            peaks[space] = peak
        return peaks

    def check_capacity(self, capacity: dict[MemorySpace, int]) -> None:
        for space, peak in self.peak_bytes().items():
            cap = capacity.get(space)
            if cap is not None and peak > cap:
                raise CapacityExceeded(f"{space.value}: {peak} bytes live at once exceed the "
                                       f"{cap} bytes on chip")

    # ------------------------------------------------------------ helpers

    def _mem(self, space: MemorySpace) -> Memory:
        if space not in self.mem:
            raise UnsupportedByModel(f"tiles in {space.value}")
        return self.mem[space]

    def value(self, tile: Ref) -> np.ndarray:
        return self._mem(tile.space).read(tile.offs, tile.dtype)

    def overwrite(self, tile: Ref, values: np.ndarray) -> None:
        self._mem(tile.space).write(tile.offs, sem.coerce(values, tile.dtype), tile.dtype)

    def fresh(self, shape: list[int] | tuple[int, ...], dt: DType, space: MemorySpace) -> Ref:
        """A new tile: NZ in Acc, row-major elsewhere; at the memref address if pinned."""
        eb = sem.element_bytes(dt)
        shape = tuple(shape)
        index = layout_index(shape, space)
        if space is MemorySpace.Acc:
            pages = 1 if len(shape) == 2 else shape[0]
            nbytes = pages * _ceil(max(shape[-2], 1), FRACTAL) * _ceil(max(shape[-1], 1), FRACTAL) * eb
        else:
            nbytes = index.size * eb
        mem = self._mem(space)
        addr = self.placement if self.placement is not None else mem.alloc(nbytes)
        self.buffers.append([space, _ceil(nbytes, ALIGN), self.step, self.step])
        return Ref(space, dt, addr + index * eb, buf=len(self.buffers) - 1)

    def _new(self, values: np.ndarray, dt: DType, space: MemorySpace) -> Ref:
        r = self.fresh(values.shape, dt, space)
        self._mem(space).write(r.offs, values, dt)
        return r

    @staticmethod
    def _check_transfer(op: str, src: MemorySpace, dst: MemorySpace) -> None:
        if dst not in TRANSFERS.get(src, frozenset()):
            raise UnsupportedTransfer(f"{op}: no {src.value}→{dst.value} data path")

    # ------------------------------------------------------------ ops

    def tile_shape(self, v: Ref) -> tuple[int, ...]:
        return v.shape

    def load(self, values: np.ndarray, dt: DType, mem: MemorySpace) -> Ref:
        self._check_transfer("tile.load", MemorySpace.DDR, mem)
        return self._new(sem.coerce(values, dt), dt, mem)

    def create(self, values: np.ndarray, dt: DType, mem: MemorySpace) -> Ref:
        return self._new(sem.coerce(values, dt), dt, mem)

    def view(self, opdef: OpDef, src: Ref, args: dict[str, Any], static: bool) -> Ref:
        o = src.offs
        if opdef.relayout is not None:
            # reshape / reinterpret_view: the device keeps the bytes — an alias of the operand's
            # buffer from its base — and lays them out as a dense tile of the result's shape
            # (row-major; the NZ blocks of that shape in Acc).  For a dense operand in a memory
            # whose layout the reshape keeps, that is numpy's view; for a window that is not
            # dense, or an Acc tile reshaped to another layout, it names other elements.
            dt: DType = args["dtype"] if opdef.reinterprets else src.dtype
            eb, nb = sem.element_bytes(src.dtype), sem.element_bytes(dt)
            if (o.shape[-1] * eb) % nb:
                raise UnsupportedByModel(f"{opdef.name}: rows do not split into {dt.name}")
            shape = (*o.shape[:-1], o.shape[-1] * eb // nb) if opdef.reinterprets else \
                tuple(args["shape"])
            return Ref(src.space, dt, src.base + layout_index(shape, src.space) * nb, buf=src.buf)
        v = opdef.numpy(o, args)
        if opdef.window is None:
            # a view with the same layout (set_validshape) is still the slice it views, for lazy
            # materialization; reshapes and transposes are not
            return Ref(src.space, src.dtype, v, src.origin if opdef.same_layout else None,
                       buf=src.buf)
        origin = None
        if "drop_dims" not in args and v.ndim == 2:
            offs = args["offset"]
            up = src.origin
            root = up.root if up else src
            row, col = (up.row, up.col) if up else (0, 0)
            row, col = row + offs[0], col + offs[1]
            static = static and (up.static if up else True)
            if self.placement is not None:
                own = self.placement
            elif static:
                own = int(root.offs[row, col])
            else:
                own = root.base
            origin = SliceOrigin(root, row, col, static, own)
        return Ref(src.space, src.dtype, v, origin, buf=src.buf)

    def copy(self, opdef: OpDef, src: Ref, args: dict[str, Any], target: MemorySpace) -> Ref:
        self._check_transfer(opdef.name, src.space, target)
        vals = self._mem(src.space).read(opdef.numpy(src.offs, args), src.dtype)
        return self._new(vals, src.dtype, target)

    def _check_spaces(self, opdef: OpDef, tiles: dict[str, Any]) -> None:
        """Operands in the memory PyPTO's memory-space inference would give them (a Mat matmul
        operand is materialized into Left / Right by the code generator); anything else is
        accepted before inference but not modelled."""
        for i, p in enumerate(opdef.params):
            spaces, t = opdef.accepted_memory(p), tiles.get(p)
            if spaces is None or not isinstance(t, Ref):
                continue
            if opdef.role(i) in (Role.LEFT, Role.RIGHT):
                spaces = spaces | {MemorySpace.Mat}
            if t.space not in spaces:
                raise UnsupportedByModel(
                    f"{opdef.name}: operand {p!r} in {t.space.value} (memory-space inference would "
                    f"move it into {', '.join(sorted(s.value for s in spaces))})")

    def _cube_operand(self, op: str, t: Ref) -> np.ndarray:
        if t.origin is not None and t.space is MemorySpace.Mat:
            # MaterializeSubviewOperandIfNeeded: textract loc=mat -> loc=mat
            self._check_transfer(f"{op} (lazy materialization of a Mat slice operand)",
                                 MemorySpace.Mat, MemorySpace.Mat)
        return self.value(t)

    def matmul(self, opdef: OpDef, tiles: dict[str, Any], out_dt: DType) -> Ref:
        self._check_spaces(opdef, tiles)
        lhs = self._cube_operand(opdef.name, tiles["lhs"])
        rhs = self._cube_operand(opdef.name, tiles["rhs"])
        bias = tiles.get("bias")
        bias_v = None if bias is None else self.value(bias)
        if opdef.reuses_arg is None:
            return self._new(sem.matmul(opdef, lhs, rhs, out_dt, bias=bias_v), out_dt,
                             MemorySpace.Acc)
        acc: Ref = tiles[opdef.params[opdef.reuses_arg]]
        if len(acc.shape) != 2:
            raise UnsupportedByModel(f"{opdef.name} with a rank-{len(acc.shape)} accumulator")
        # pto-isa#253: the MAD takes the bare destination pointer and m from the left
        # operand; it reads and writes an [m, n] NZ tile compactly from that base.
        eb = sem.element_bytes(acc.dtype)
        compact = acc.base + nz_index(*acc.shape).astype(np.int64) * eb
        mem = self._mem(acc.space)
        mem.write(compact, sem.matmul(opdef, lhs, rhs, out_dt, acc=mem.read(compact, acc.dtype),
                                      bias=bias_v), acc.dtype)
        return acc

    def _col_expand_operand(self, t: Ref) -> np.ndarray:
        o = t.origin
        if o is None:
            return self.value(t)
        # #1640 / #2010: textract into the slice's own (dense) buffer inside the source,
        # row by row, reading the source as the earlier rows have left it.
        rows, cols = t.shape
        eb = sem.element_bytes(t.dtype)
        dest = o.own_addr + np.arange(rows * cols, dtype=np.int64).reshape(rows, cols) * eb
        mem = self._mem(t.space)
        for i in range(rows):
            mem.write(dest[i], mem.read(t.offs[i], t.dtype), t.dtype)
        return mem.read(dest, t.dtype)

    def vector(self, opdef: OpDef, args: dict[str, Any], out_dt: DType,
               valid: tuple[int, ...] | None) -> Ref:
        self._check_spaces(opdef, args)
        first: Ref = args[opdef.params[0]]
        tiles, scalars, attrs = self.operands(opdef, args, valid)
        if opdef.family is Family.COL_EXPAND:
            values = [self._col_expand_operand(t) for t in tiles]
        else:
            for p in opdef.params:
                t = args.get(p)
                if isinstance(t, Ref) and t.base % ALIGN:
                    raise MisalignedAccess(
                        f"{opdef.name}: operand {p!r} at {t.space.value} byte {t.base} is not "
                        f"{ALIGN}-byte aligned")
            values = [self.value(t) for t in tiles]
        r = sem.apply(opdef, values, scalars, valid, attrs, first.dtype, out_dt)
        if opdef.reuses_arg is not None:
            tgt: Ref = args[opdef.params[opdef.reuses_arg]]
            self._mem(tgt.space).write(tgt.offs, r, tgt.dtype)
            return tgt
        return self._new(r, out_dt, first.space)


def run_hardware(program: Program, inputs: dict[str, np.ndarray],
                 scalars: dict[str, int | float] | None = None, function: str | None = None,
                 block_idx: int = 0,
                 capacity: bool | dict[MemorySpace, int] = False) -> dict[str, np.ndarray]:
    """Run ``function`` on the hardware model; same contract as :func:`run_ideal`, and
    raises a :class:`~egraph_tiles.sim.errors.HardwareFault` where the device would fault.
    ``capacity``: also raise :class:`CapacityExceeded` when the live bytes of a memory space
    exceed :data:`CAPACITY` (True) or the given bytes per space."""
    hw = HardwareInterpreter(program, block_idx)
    out = hw.run(function, inputs, scalars or {})
    if capacity:
        hw.check_capacity(CAPACITY if capacity is True else capacity)
    return out
