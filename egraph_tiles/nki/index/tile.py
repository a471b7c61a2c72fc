"""``NDTile`` (the partition x free iteration space) and ``TileIndex`` (an affine index on it).

Seed: "TileIndex -- the Affine Index Abstraction" and "NDTile -- the Two-Dimensional Tile".

* An :class:`NDTile` has a partition shape and a free shape.  Each axis gets an access-pattern
  index (:class:`APIndex`) built **innermost-first** (the shapes are walked ``reversed``), so
  axis numbering survives left-padding by broadcasting.  An axis variable is named after its
  class, position and extent (``p0_128``, ``f1_4``): tiles of one shape share one iteration
  space, which is exactly what elementwise composition needs.
* A :class:`TileIndex` is ``(e, tile)``.  Same-tile arithmetic folds into ``e``; cross-tile
  arithmetic goes through :func:`~egraph_tiles.nki.index.combine.cached_combine_index_tiles`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from numbers import Integral
from typing import TYPE_CHECKING, Any

import numpy as np

from egraph_tiles.nki.index.expr import AffineExpr, Var, axis_var, wrap_expr
from egraph_tiles.nki.index.scalar import DynamicScalar, Scalar, nki_scalar_int_dtype

#: Operations of modules built on TileIndex, registered by them when they are imported: re-basing
#: (``combine``) and the comparison operators (``masks``).  Importing them here would be a cycle.
HOOKS: dict[str, Any] = {}

if TYPE_CHECKING:
    from egraph_tiles.nki.index.masks import TileMask

__all__ = [
    "APIndex",
    "NDTile",
    "TileIndex",
    "ap_expr",
    "filter_indices",
    "generate_ap_index",
    "implicit_cast_idx",
]


@dataclass(frozen=True, slots=True)
class APIndex:
    """One access-pattern axis: class (``"p"``/``"f"``), innermost-first position, extent, stride."""

    kind: str
    position: int
    tripcount: int
    stride: int

    @property
    def var(self) -> Var:
        return _axis(self.kind, self.position, self.tripcount)[0]

    @property
    def e(self) -> AffineExpr:
        return _axis(self.kind, self.position, self.tripcount)[1]


@lru_cache(maxsize=4096)
def _axis(kind: str, position: int, tripcount: int) -> tuple[Var, AffineExpr]:
    v = axis_var(f"{kind}{position}_{tripcount}", tripcount)
    return v, AffineExpr.var(v)


def generate_ap_index(i: int, d: int, kind: str = "f", stride: int = 1) -> APIndex:
    """The AP index of innermost-first axis ``i`` with extent ``d``."""
    return APIndex(kind, i, int(d), stride)


def filter_indices(indices: Sequence[APIndex]) -> list[APIndex]:
    """Canonical index set: trivial (size-1) axes dropped."""
    return [idx for idx in indices if idx.tripcount != 1]


def ap_expr(indices: Sequence[APIndex]) -> AffineExpr:
    """Fold an index list into one address expression ``sum(axis * stride)``."""
    total = AffineExpr.const(0)
    for idx in indices:
        total = total + idx.e * idx.stride
    return total


def _ap_indices(shape: tuple[int, ...], kind: str) -> list[APIndex]:
    out, stride = [], 1
    for i, d in enumerate(reversed(shape)):
        out.append(generate_ap_index(i, d, kind, stride))
        stride *= d
    return out


class NDTile:
    """A Neuron instruction tile: ``par_shape`` x ``free_shape`` (``is_partial`` is carried)."""

    __slots__ = ("__dict__",)

    def __init__(self, par_shape: Sequence[int], free_shape: Sequence[int], is_partial: bool = False):
        par, free = tuple(int(d) for d in par_shape), tuple(int(d) for d in free_shape)
        if any(d < 1 for d in par + free):
            raise ValueError(f"tile extents must be >= 1, got par {par} free {free}")
        self.is_partial = bool(is_partial)
        self.par_shape = par
        self.free_shape = free
        self.par_indices = _ap_indices(par, "p")
        self.free_indices = _ap_indices(free, "f")
        self.canonical_par_indices = filter_indices(self.par_indices)
        self.canonical_free_indices = filter_indices(self.free_indices)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.par_shape + self.free_shape

    @property
    def indices(self) -> list[APIndex]:
        """Partition then free AP indices (each group innermost-first)."""
        return self.par_indices + self.free_indices

    @cached_property
    def par_addr(self) -> AffineExpr:
        """Linear position inside the partition block (one affine expression)."""
        return ap_expr(self.canonical_par_indices)

    @cached_property
    def free_addr(self) -> AffineExpr:
        """Linear position inside the free block (one affine expression)."""
        return ap_expr(self.canonical_free_indices)

    def source_axes(self) -> list[APIndex]:
        """AP indices in source-shape order (partition axes, then free axes, outer to inner)."""
        return list(reversed(self.par_indices)) + list(reversed(self.free_indices))

    def axis_grid(self) -> dict[str, np.ndarray]:
        """Numpy values of every axis variable, broadcastable to :attr:`shape`."""
        rank = len(self.shape)
        env = {}
        for pos, idx in enumerate(self.source_axes()):
            shape = [1] * rank
            shape[pos] = idx.tripcount
            env[idx.var.name] = np.arange(idx.tripcount, dtype=np.int64).reshape(shape)
        return env

    def _key(self) -> tuple[Any, ...]:
        return (self.par_shape, self.free_shape, self.is_partial)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NDTile) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"NDTile(par={self.par_shape}, free={self.free_shape}, partial={self.is_partial})"


def implicit_cast_idx(e: AffineExpr) -> AffineExpr:
    """Canonicalize to the index dtype: indices are Python-int affine expressions already."""
    return e


class TileIndex:
    """Index -- one affine expression ``e`` over loop axes, tagged with the tile it indexes."""

    __slots__ = ("e", "tile")

    def __init__(self, e: object, tile: NDTile | None = None) -> None:
        self.e = implicit_cast_idx(wrap_expr(e))
        self.tile = tile

    def _index_with_same_tile(self, e: AffineExpr) -> TileIndex:
        return TileIndex(e=e, tile=self.tile)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.tile.shape if self.tile is not None else ()

    def key(self) -> tuple[AffineExpr, NDTile | None]:
        """Hashable identity (``==`` on a TileIndex builds a mask, so caches use this)."""
        return (self.e, self.tile)

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return f"TileIndex({self.e}, {self.tile})"

    def __bool__(self) -> bool:
        raise TypeError("a TileIndex has no truth value; comparisons on it build tile masks")

    # ----- arithmetic ------------------------------------------------------------------------
    def _add_impl(self, other: object) -> TileIndex:
        if isinstance(other, Integral):
            return self._index_with_same_tile(self.e + int(other))
        if isinstance(other, (Scalar, DynamicScalar)):
            if other.dtype != nki_scalar_int_dtype:
                raise ValueError(
                    f"index + non-integer scalar is not supported (scalar dtype {other.dtype})"
                )
            return self._build_dynamic_index(other)
        if isinstance(other, TileIndex):
            tile, (a, b) = self.combine_tile_with(other)
            return TileIndex(a + b, tile)
        raise TypeError("unexpected type %s" % type(other))

    def _build_dynamic_index(self, other: Scalar | DynamicScalar) -> TileIndex:
        """A runtime (dynamic-slice) offset rides in the expression; the tile is unchanged."""
        return TileIndex(self.e + other.value, self.tile)

    def _mul_impl(self, other: object) -> TileIndex:
        if isinstance(other, Integral):
            return self._index_with_same_tile(self.e * int(other))
        raise TypeError("unexpected type %s" % type(other))

    def __add__(self, other: object) -> TileIndex:
        return self._add_impl(other)

    __radd__ = __add__

    def __neg__(self) -> TileIndex:
        return self._mul_impl(-1)

    def __sub__(self, other: object) -> TileIndex:
        if isinstance(other, (TileIndex, Scalar, DynamicScalar)):
            return self._add_impl(-other)
        if isinstance(other, Integral):
            return self._add_impl(-int(other))
        raise TypeError("unexpected type %s" % type(other))

    def __rsub__(self, other: object) -> TileIndex:
        return (-self)._add_impl(other)

    def __mul__(self, other: object) -> TileIndex:
        return self._mul_impl(other)

    __rmul__ = __mul__

    def __floordiv__(self, other: object) -> TileIndex:
        if not isinstance(other, Integral):
            raise ValueError("'//' between NKI index and non integer is not supported.")
        return self._index_with_same_tile(self.e // int(other))

    def __mod__(self, other: object) -> TileIndex:
        if not isinstance(other, Integral):
            raise ValueError("'%' between NKI index and non integer is not supported.")
        return self._index_with_same_tile(self.e % int(other))

    # ----- composition -------------------------------------------------------------------------
    def combine_tile_with(self, other: object) -> tuple[NDTile | None, tuple[AffineExpr, AffineExpr]]:
        """Re-base ``self`` and ``other`` onto one common tile: ``(tile, (e_self, e_other))``."""
        if isinstance(other, TileIndex):
            return HOOKS["cached_combine_index_tiles"]((self, other))
        if isinstance(other, (Scalar, DynamicScalar)):
            return self.tile, (self.e, other.value)
        if isinstance(other, Integral):
            return self.tile, (self.e, AffineExpr.const(int(other)))
        raise TypeError("unexpected type %s" % type(other))

    def broadcast_to(self, shape: Sequence[int]) -> TileIndex:
        """Re-base onto a tile of full shape ``shape`` (partition dims first, same split)."""
        src = self.tile if self.tile is not None else NDTile((), ())
        shape = tuple(int(d) for d in shape)
        if len(shape) != len(src.shape):
            raise ValueError(
                "Can only broadcast when the rank of src and dst shape match! "
                f"broadcast shape len: {len(shape)}, tile's rank: {len(src.shape)}"
            )
        if any(s != 1 and s != d for s, d in zip(src.shape, shape, strict=True)):
            raise ValueError(f"Not a broadcast! {src.shape} -> {shape}")
        n_par = len(src.par_shape)
        dst = NDTile(shape[:n_par], shape[n_par:], src.is_partial)
        return TileIndex(self.e.substitute(HOOKS["tile_subst_map"](src, dst)), dst)

    # ----- masks -------------------------------------------------------------------------------
    def _promote_to_mask(self) -> TileMask:
        """The index as an equality mask: true where ``e == 0``."""
        return HOOKS["EQTileMask"](self.e, self.tile)

    def _generate_predicate(self, other: object, pred_fn: Any) -> TileMask:
        tile, (a, b) = self.combine_tile_with(other)
        return HOOKS["TileMaskIntersection"](HOOKS[pred_fn](a, b, tile), tile=tile)

    def __lt__(self, other: object) -> TileMask:
        return self._generate_predicate(other, "pred_lt")

    def __le__(self, other: object) -> TileMask:
        return self._generate_predicate(other, "pred_le")

    def __gt__(self, other: object) -> TileMask:
        return self._generate_predicate(other, "pred_gt")

    def __ge__(self, other: object) -> TileMask:
        return self._generate_predicate(other, "pred_ge")

    def __eq__(self, other: object) -> TileMask:  # type: ignore[override]
        return self._generate_predicate(other, "pred_eq")

    def __ne__(self, other: object) -> TileMask:  # type: ignore[override]
        return self._generate_predicate(other, "pred_ne")

    def evaluate(self, env: dict[str, Any] | None = None) -> np.ndarray:
        """Numpy value of the index over its tile (``env`` supplies runtime scalars)."""
        tile = self.tile if self.tile is not None else NDTile((), ())
        full = {**tile.axis_grid(), **(env or {})}
        return np.broadcast_to(np.asarray(self.e.evaluate(full)), tile.shape)
