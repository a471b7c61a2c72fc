"""What the optimizer assumes about the target, stated once.

* Vector instructions need their operands' base addresses aligned to :data:`ALIGN_BITS`
  (32 bytes, #1789): the legality rules prove views against it, the seed policy checks it, the
  report and the error messages quote it.
* A copy (``tile.extract``) moves ``rows * cols * storage bits / 8`` bytes: :func:`copy_bytes`
  is the one formula the report, the metrics and the explanations use (the extractor's cost
  table in ``rules.slices`` states the same product in egglog).
"""

from __future__ import annotations

from .types import DType

#: vector operand base-address alignment, in bits (32 bytes)
ALIGN_BITS = 256
ALIGN_BYTES = ALIGN_BITS // 8


def copy_bytes(dims: list[int] | tuple[int, ...], dtype: DType) -> int:
    """Bytes a copy of a tile of constant shape ``dims`` and ``dtype`` moves."""
    n = 1
    for d in dims:
        n *= d
    return n * dtype.storage_bits // 8


def aligned_step(bits: int) -> int:
    """How many elements of ``bits`` storage bits make one alignment unit (8 for FP32)."""
    return max(ALIGN_BITS // bits, 1) if bits else 8
