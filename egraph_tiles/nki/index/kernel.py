"""Whole-kernel index inference: every expression of a kernel solved in ONE e-graph.

:func:`infer_kernel` takes a list of :class:`KernelInstruction` (a destination access, source
accesses, optional predicates) and runs the pipeline

    ranges (arange / ds / slices) -> TileIndex tuples -> combine -> canonicalize
          -> access patterns and masks

with one :class:`~egraph_tiles.nki.index.solver.AffineSolver`: all range lengths are solved in a
first batch, all addresses and mask expressions in a second batch on the same e-graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from egraph_tiles.nki.index.access import AccessPattern, access_address, pattern_from_solution
from egraph_tiles.nki.index.masks import Instruction, TileMask, TileMaskIntersection, inst_mask
from egraph_tiles.nki.index.ranges import range_diff
from egraph_tiles.nki.index.solver import AffineSolver, solve
from egraph_tiles.nki.index.tile import NDTile, TileIndex

__all__ = ["Access", "InferredInstruction", "KernelInstruction", "infer_kernel"]


@dataclass(frozen=True)
class Access:
    """``tensor[index]`` for a tensor of shape ``tensor_shape``."""

    tensor_shape: tuple[int, ...]
    index: Any


@dataclass(frozen=True)
class KernelInstruction:
    """One indexed instruction: where it writes, what it reads, and its predicates."""

    dst: Access
    srcs: tuple[Access, ...] = ()
    predicates: tuple[TileMask, ...] = ()


@dataclass(frozen=True)
class InferredInstruction:
    """Access patterns of an instruction's operands and its mask (``None`` if unpredicated)."""

    dst: AccessPattern
    srcs: tuple[AccessPattern, ...]
    mask: TileMaskIntersection | None


def _subscripts(acc: Access) -> list[tuple[Any, int]]:
    subs = list(acc.index) if isinstance(acc.index, tuple) else [acc.index]
    return [(s, acc.tensor_shape[k]) for k, s in enumerate(subs) if k < len(acc.tensor_shape)]


def infer_kernel(instrs: Sequence[KernelInstruction], solver: AffineSolver | None = None
                 ) -> list[InferredInstruction]:
    """Infer access patterns and masks for a whole kernel, batching the affine algebra."""
    solver = solver or AffineSolver()
    accesses = [acc for ins in instrs for acc in (ins.dst, *ins.srcs)]
    diffs = [d for acc in accesses for s, n in _subscripts(acc)
             if (d := range_diff(s, n)) is not None]
    solve(diffs, solver)  # batch 1: every range length of the kernel
    lowered = [access_address(acc.tensor_shape, acc.index) for acc in accesses]
    masks: list[TileMaskIntersection | None] = []
    pos = 0
    for ins in instrs:
        tile = lowered[pos][0] or NDTile((), ())
        pos += 1 + len(ins.srcs)
        dst_par = [TileIndex(i.e, tile) for i in tile.canonical_par_indices]
        dst_free = [TileIndex(i.e, tile) for i in tile.canonical_free_indices]
        masks.append(inst_mask(Instruction(tile, dst_par, dst_free, ins.predicates)))
    exprs = [addr for _, addr in lowered]
    exprs += [e for m in masks if m is not None for e in m.exprs()]
    sols = dict(zip(exprs, solve(exprs, solver), strict=True))  # batch 2: addresses + masks
    patterns = [pattern_from_solution(acc.tensor_shape, t, a, sols[a])
                for acc, (t, a) in zip(accesses, lowered, strict=True)]
    out = []
    pos = 0
    for ins, m in zip(instrs, masks, strict=True):
        n = 1 + len(ins.srcs)
        out.append(InferredInstruction(patterns[pos], tuple(patterns[pos + 1:pos + n]), m))
        pos += n
    return out
