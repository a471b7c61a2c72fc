"""What the optimizer assumes about the target, stated once.

* Vector instructions need their operands' base addresses aligned to :data:`ALIGN_BITS`
  (32 bytes, #1789): the legality rules prove views against it, the seed policy checks it, the
  report and the error messages quote it.
* Known multiples are powers of two capped at :data:`CAP` (``rules.multiples``).
* A copy (``tile.extract``) moves ``rows * cols * storage bits / 8`` bytes: :func:`copy_bytes`
  is the one formula the report, the metrics and the explanations use (the extractor's cost
  table in ``rules.slices`` states the same product in egglog).
* An accumulator (Acc / L0C) tile is stored in 16x16 NZ blocks: :func:`acc_layout` is where each
  element sits.  The hardware model stores Acc tiles by it, and the registry reads it to decide
  which reshapes of an Acc tile keep its element order (``rules.windows`` states the same
  address function for windows in egglog, and the rule checker in z3).
* On-chip capacity per memory space is :data:`CAPACITY`: the hoisting cost model refuses a copy
  that would push a loop nest past it, and the hardware model faults a run that exceeds it.
"""

from __future__ import annotations

import numpy as np

from .types import DType, MemorySpace

#: the NZ block edge of an Acc tile, in elements (whatever the element width)
FRACTAL = 16

#: vector operand base-address alignment, in bits (32 bytes)
ALIGN_BITS = 256
ALIGN_BYTES = ALIGN_BITS // 8

#: on-chip bytes per memory space of an Ascend 910B-class AI Core: Unified Buffer (Vec) 192 KiB,
#: L1 (Mat) 512 KiB, L0A (Left) / L0B (Right) 64 KiB, L0C (Acc) 128 KiB, BiasTable 1 KiB
CAPACITY: dict[MemorySpace, int] = {
    MemorySpace.Vec: 192 * 1024, MemorySpace.Mat: 512 * 1024, MemorySpace.Left: 64 * 1024,
    MemorySpace.Right: 64 * 1024, MemorySpace.Acc: 128 * 1024, MemorySpace.Bias: 1024}

#: the top of the known-multiple lattice: a proven power-of-two divisor is capped here, so the
#: products the rules form (a multiple × a pitch × storage bits) stay inside egglog's i64; the
#: rules, the explanations and the rule checker read this one value
CAP = 1 << 30


def copy_bytes(dims: list[int] | tuple[int, ...], dtype: DType) -> int:
    """Bytes a copy of a tile of constant shape ``dims`` and ``dtype`` moves."""
    n = 1
    for d in dims:
        n *= d
    return n * dtype.storage_bits // 8


def aligned_step(bits: int) -> int:
    """How many elements of ``bits`` storage bits make one alignment unit (8 for FP32)."""
    return max(ALIGN_BITS // bits, 1) if bits else 8


def _ceil(x: int, m: int) -> int:
    return -(-x // m) * m


def nz_index(rows: int, cols: int) -> np.ndarray:
    """Element index (in elements from the tile base) of every ``(r, c)`` of an ``[rows, cols]``
    Acc tile: block ``(rb, cb)`` at ``(cb * ceil16(rows)/16 + rb) * 256``, row-major inside."""
    mp = _ceil(max(rows, 1), FRACTAL)
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    return ((c // FRACTAL) * (mp // FRACTAL) + r // FRACTAL) * FRACTAL * FRACTAL \
        + (r % FRACTAL) * FRACTAL + c % FRACTAL


def nz_index_batch(pages: int, rows: int, cols: int) -> np.ndarray:
    """Element index of every ``(b, r, c)`` of a ``[pages, rows, cols]`` (batch) Acc tile: page b
    is an NZ tile of its own at ``b * ceil16(rows) * ceil16(cols)`` elements."""
    page = _ceil(max(rows, 1), FRACTAL) * _ceil(max(cols, 1), FRACTAL)
    return np.arange(pages)[:, None, None] * page + nz_index(rows, cols)[None]


def acc_layout(shape: tuple[int, ...]) -> np.ndarray | None:
    """Element index of every element of an Acc tile of ``shape`` (rank 2, or rank 3 pages);
    None for another rank (no layout is known)."""
    if len(shape) == 2:
        return nz_index(*shape).astype(np.int64)
    if len(shape) == 3:
        return nz_index_batch(*shape).astype(np.int64)
    return None
