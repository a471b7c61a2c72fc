"""Lower an indexed tensor access to an access pattern ``[[step, count], ...]`` + offset.

``tensor[subscripts]`` where each subscript is an int, a Python slice, ``ds(start, size)``, a
runtime scalar, or a :class:`TileIndex` (e.g. from ``arange``).  Slice-like subscripts become
axes of their own (the j-th of r axis-owning subscripts -- slice-likes and TileIndexes -- gets shape ``(1,)*j + (n,) + (1,)*(r-j-1)``,
as ``arange(n)[None, :]`` would); all indices are broadcast onto one tile
(:func:`cached_combine_index_tiles`, so a recurring subscript pattern is folded once), the row-major element address ``sum(index_k * stride_k)`` is built,
and the e-graph's normal form of that address gives, per tile axis, its coefficient (the step)
and the constant / runtime remainder (the offset).

The result holds both styles: ``pattern`` is the newer NKI
``[[partition_step, partition_count], [step, count], ...]`` form (partition axis first, then
free axes outer to inner, size-1 axes dropped; ``[0, 1]`` if the partition is trivial) and
``tile`` + ``address`` is the classic index form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import math

import numpy as np

from egraph_tiles.nki.index.combine import cached_combine_index_tiles
from egraph_tiles.nki.index.expr import AffineExpr
from egraph_tiles.nki.index.normal_form import NormalForm, QuasiAtom
from egraph_tiles.nki.index.ranges import DynSlice, normalize_range_args, normalize_slice, range_count
from egraph_tiles.nki.index.scalar import DynamicScalar, Scalar
from egraph_tiles.nki.index.solver import Solution, solution_of
from egraph_tiles.nki.index.tile import NDTile, TileIndex

__all__ = ["AccessPattern", "access_address", "access_exprs", "lower_access", "pattern_from_solution",
           "row_major_address"]


@dataclass(frozen=True)
class AccessPattern:
    """A lowered access: ``pattern`` ([[step, count], ...]) and ``offset`` (int or runtime form)."""

    tensor_shape: tuple[int, ...]
    tile: NDTile | None
    address: AffineExpr
    pattern: tuple[tuple[int, int], ...]
    offset: int | NormalForm

    def element_offsets(self, env: Mapping[str, Any] | None = None) -> np.ndarray:
        """Flat element offsets, shape = the pattern's counts (partition first)."""
        base = self.offset if isinstance(self.offset, int) else self.offset.evaluate(env or {})
        counts = [c for _, c in self.pattern]
        grid = np.full(counts, int(base), dtype=np.int64)
        for k, (step, count) in enumerate(self.pattern):
            shape = [1] * len(counts)
            shape[k] = count
            grid = grid + step * np.arange(count, dtype=np.int64).reshape(shape)
        return grid

    def gather(self, tensor: np.ndarray, env: Mapping[str, Any] | None = None) -> np.ndarray:
        """Read ``tensor`` through the pattern (what the hardware access would read)."""
        if tuple(tensor.shape) != self.tensor_shape:
            raise ValueError(f"tensor shape {tensor.shape} != {self.tensor_shape}")
        return tensor.reshape(-1)[self.element_offsets(env)]


def _slice_axes(subs: Sequence[Any]) -> list[int]:
    """Subscripts that own an iteration axis: slice-likes and tile indices."""
    return [k for k, s in enumerate(subs) if isinstance(s, (slice, range, DynSlice, TileIndex))]


def access_exprs(tensor_shape: Sequence[int], index: Any
                 ) -> tuple[NDTile | None, tuple[AffineExpr, ...]]:
    """The tile and one index expression per tensor dimension of ``tensor[index]``."""
    shape = tuple(int(d) for d in tensor_shape)
    subs = list(index) if isinstance(index, tuple) else [index]
    if len(subs) > len(shape):
        raise IndexError(f"too many indices for a tensor of rank {len(shape)}: {len(subs)}")
    subs += [slice(None)] * (len(shape) - len(subs))
    slice_pos = _slice_axes(subs)
    r = len(slice_pos)
    items: list[Any] = []
    for k, s in enumerate(subs):
        if isinstance(s, slice):
            items.append(_axis_index(normalize_slice(s, shape[k]), slice_pos.index(k), r))
        elif isinstance(s, (range, DynSlice)):
            items.append(_axis_index(normalize_range_args(s, shape[k]), slice_pos.index(k), r))
        elif isinstance(s, (TileIndex, Integral, Scalar, DynamicScalar, AffineExpr)):
            items.append(s)
        else:
            raise TypeError("unexpected type %s" % type(s))
    tile, exprs = cached_combine_index_tiles(tuple(items))
    return tile, tuple(e if isinstance(e, AffineExpr) else AffineExpr.const(0) for e in exprs)


def row_major_address(tensor_shape: Sequence[int], exprs: Sequence[AffineExpr]) -> AffineExpr:
    """``sum(expr_k * stride_k)`` for a row-major tensor of shape ``tensor_shape``."""
    shape = tuple(int(d) for d in tensor_shape)
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    address = AffineExpr.const(0)
    for e, stride in zip(exprs, strides, strict=True):
        address = address + e * stride
    return address


def access_address(tensor_shape: Sequence[int], index: Any) -> tuple[NDTile | None, AffineExpr]:
    """The tile and the row-major element-address expression of ``tensor[index]``."""
    tile, exprs = access_exprs(tensor_shape, index)
    return tile, row_major_address(tensor_shape, exprs)


def _axis_index(norm: tuple[Any, int, int], j: int, r: int) -> TileIndex:
    start, length, step = norm
    count = range_count(length, step)
    if count < 1:
        raise IndexError(f"empty slice (start {start}, length {length}, step {step})")
    shape = (1,) * j + (count,) + (1,) * (r - j - 1)
    tile = NDTile(shape[:1], shape[1:], is_partial=True)
    axis = tile.source_axes()[j]
    return TileIndex(axis.e * step + start, tile)


def pattern_from_solution(tensor_shape: Sequence[int], tile: NDTile | None, address: AffineExpr,
                          sol: Solution, check_bounds: bool = True) -> AccessPattern:
    """Read steps / counts / offset off the address's normal form (and, unless
    ``check_bounds`` is false, check the address's interval bounds against the tensor)."""
    shape = tuple(int(d) for d in tensor_shape)
    nf = sol.normal_form
    if nf is None:
        raise ValueError(f"access address {address} has no affine normal form")
    axes = {idx.var: idx for idx in (tile.indices if tile is not None else [])}
    for atom in nf.atoms:
        if isinstance(atom, QuasiAtom) and any(v in axes for v in _atom_vars(atom)):
            raise ValueError(
                f"access address {nf} is not affine in the tile axes ({atom} is quasi-affine)"
            )
    par = [idx for idx in reversed(tile.canonical_par_indices)] if tile is not None else []
    free = [idx for idx in reversed(tile.canonical_free_indices)] if tile is not None else []
    pattern = [(nf.coefficient(i.var), i.tripcount) for i in par] or [(0, 1)]
    pattern += [(nf.coefficient(i.var), i.tripcount) for i in free]
    rest = NormalForm.build(nf.const, [(a, c) for a, c in nf.terms if a not in axes])
    offset: int | NormalForm = rest.const if rest.is_const else rest
    size = int(np.prod(shape, dtype=np.int64))
    if check_bounds and ((sol.lo is not None and sol.lo < 0) or (sol.hi is not None and sol.hi >= size)):
        raise IndexError(
            f"access out of bounds: address {nf} spans [{sol.lo}, {sol.hi}] "
            f"but the tensor {shape} has {size} elements"
        )
    return AccessPattern(shape, tile, address, tuple(pattern), offset)


def _atom_vars(atom: QuasiAtom) -> set[Any]:
    out = set()
    for a, _ in atom.operand.terms:
        out |= _atom_vars(a) if isinstance(a, QuasiAtom) else {a}
    return out


def lower_access(tensor_shape: Sequence[int], index: Any) -> AccessPattern:
    """Lower ``tensor[index]`` (one expression; use ``infer_kernel`` to batch many)."""
    tile, address = access_address(tensor_shape, index)
    return pattern_from_solution(tensor_shape, tile, address, solution_of(address))
