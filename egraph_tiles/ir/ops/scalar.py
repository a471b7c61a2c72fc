"""Scalar ops: block indices, ``min`` / ``max`` with their bounds."""

from __future__ import annotations

from typing import Callable


from .infer import (infer_index_scalar, infer_scalar_minmax)
from .model import (VALUE, Family, declare)

# -- scalars

for _n in ("get_block_idx", "tile.get_block_idx", "tensor.get_block_idx"):
    declare(_n, "", infer_index_scalar, Family.SCALAR, effect=VALUE, numpy=lambda ctx: ctx.block_idx)
for _n in ("tile.get_subblock_idx", "tile.get_block_num", "tensor.get_subblock_idx",
           "tensor.get_block_num"):
    declare(_n, "", infer_index_scalar, Family.SCALAR, effect=VALUE)


def _bound(fn: Callable[..., int], ends: list[int | None], either: bool) -> int | None:
    """``fn`` of the known ends; with ``either``, one known end bounds the result."""
    known = [x for x in ends if x is not None]
    return fn(known) if known and (either or len(known) == len(ends)) else None


declare("min", "lhs:x rhs:x", infer_scalar_minmax, Family.SCALAR, effect=VALUE,
    numpy=lambda ctx, a, b: min(a, b),
    interval=lambda ivs: (_bound(min, [lo for lo, _ in ivs], False),
                          _bound(min, [hi for _, hi in ivs], True)))
declare("max", "lhs:x rhs:x", infer_scalar_minmax, Family.SCALAR, effect=VALUE,
    numpy=lambda ctx, a, b: max(a, b),
    interval=lambda ivs: (_bound(max, [lo for lo, _ in ivs], True),
                          _bound(max, [hi for _, hi in ivs], False)))
