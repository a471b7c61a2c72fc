"""Tile composition and canonicalization (seed: "Tile Composition", "Canonicalisation").

* :func:`combine_tiles` -- order-preserving dedup, then partition shapes and free shapes are
  broadcast **separately** (each left-padded with 1s), giving one fresh :class:`NDTile`.
* :func:`generate_subst_map` -- positional axis pairing, size-1 (broadcast) axes skipped.
* :func:`canonicalize_expr` -- re-base one index with ``AffineExpr.substitute`` (the
  substitution itself is solved by the ``affine_rules`` e-graph rules).
* :func:`cached_combine_index_tiles` -- the lru-cached fold of an index tuple onto its
  broadcast tile; :func:`combine_cache` switches the cache off (benchmarks).
* :func:`broadcast_shapes` -- combine + per-input canonicalization.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

import numpy as np

from egraph_tiles.nki.index.expr import AffineExpr, Var, wrap_expr
from egraph_tiles.nki.index.scalar import DynamicScalar
from egraph_tiles.nki.index.tile import HOOKS as tile_hooks
from egraph_tiles.nki.index.tile import APIndex, NDTile, TileIndex

__all__ = [
    "broadcast_shapes",
    "cached_combine_index_tiles",
    "canonicalize_expr",
    "combine_cache",
    "combine_index_tiles",
    "combine_tiles",
    "generate_subst_map",
    "tile_subst_map",
    "unique_sequence",
]

_USE_CACHE: ContextVar[bool] = ContextVar("nki_combine_cache", default=True)


def unique_sequence(seq: Iterable[Any], exclude_none: bool = False) -> list[Any]:
    """Order-preserving dedup (optionally dropping ``None``)."""
    seen: set[Any] = set()
    add = seen.add
    return [x for x in seq if (not exclude_none or x is not None) and not (x in seen or add(x))]


def _broadcast_shape_with_expand_dims(shapes: Iterable[tuple[int, ...]]) -> tuple[int, ...]:
    """Left-pad every shape with 1s to the maximum rank, then numpy-broadcast them."""
    shapes = [tuple(s) for s in shapes]
    if not shapes:
        return ()
    max_rank = max(len(s) for s in shapes)
    expanded = [(1,) * (max_rank - len(s)) + s for s in shapes]
    return tuple(int(d) for d in np.broadcast_shapes(*expanded))


def combine_tiles(*tiles: NDTile) -> NDTile:
    """Unify tiles into one: partition and free shapes broadcast independently."""
    uniq = unique_sequence(tiles, exclude_none=True)
    par_shape = _broadcast_shape_with_expand_dims(t.par_shape for t in uniq)
    free_shape = _broadcast_shape_with_expand_dims(t.free_shape for t in uniq)
    return NDTile(par_shape, free_shape, any(t.is_partial for t in uniq))


def generate_subst_map(from_indices: Sequence[Any], to_indices: Sequence[Any]) -> dict[Var, AffineExpr]:
    """Pair axes positionally; size-1 source axes are skipped (nothing iterates there)."""
    subst_map: dict[Var, AffineExpr] = {}
    for f, t in zip(from_indices, to_indices):
        if f.tripcount != 1:
            subst_map[f.var] = t.e if isinstance(t, (APIndex, TileIndex)) else wrap_expr(t)
    return subst_map


def tile_subst_map(src: NDTile, dst: NDTile) -> dict[Var, AffineExpr]:
    """Substitution re-basing ``src``'s axes onto ``dst`` (partition and free separately)."""
    out = generate_subst_map(src.par_indices, dst.par_indices)
    out.update(generate_subst_map(src.free_indices, dst.free_indices))
    return {v: t for v, t in out.items() if not (t.op == "var" and t.args[0] == v)}


def canonicalize_expr(i: object, subst_map: dict[Var, AffineExpr]) -> AffineExpr | None:
    """One index leaf as an AffineExpr re-based by ``subst_map`` (empty map = identity)."""

    def substitute(expr: AffineExpr) -> AffineExpr:
        if not subst_map:
            return expr
        return expr.substitute(subst_map)

    if isinstance(i, TileIndex):
        return substitute(i.e)
    if isinstance(i, DynamicScalar):
        return substitute(i.value)
    if i is None:
        return i
    return substitute(wrap_expr(i))


def combine_index_tiles(
    exprs: Sequence[object], extra_tiles: Sequence[NDTile] = ()
) -> tuple[NDTile | None, tuple[AffineExpr | None, ...]]:
    """Fold index expressions onto their broadcast tile: ``(tile, re-based exprs)`` (uncached)."""
    tiles = [e.tile for e in exprs if isinstance(e, TileIndex) and e.tile is not None]
    tiles.extend(extra_tiles)
    if not tiles:
        return None, tuple(canonicalize_expr(e, {}) for e in exprs)
    tile = combine_tiles(*tiles)
    out = []
    for e in exprs:
        smap = tile_subst_map(e.tile, tile) if isinstance(e, TileIndex) and e.tile else {}
        out.append(canonicalize_expr(e, smap))
    return tile, tuple(out)


@lru_cache(maxsize=65536)
def _cached_combine(key: tuple[Any, ...], extra_tiles: tuple[NDTile, ...]) -> Any:
    exprs = [TileIndex(e, t) if kind == "ti" else e for kind, e, t in key]
    return combine_index_tiles(exprs, extra_tiles)


def cached_combine_index_tiles(
    exprs: Sequence[object], extra_tiles: Sequence[NDTile] = ()
) -> tuple[NDTile | None, tuple[AffineExpr | None, ...]]:
    """:func:`combine_index_tiles`, lru-cached on the immutable ``(exprs, extra_tiles)`` key."""
    if not _USE_CACHE.get():
        return combine_index_tiles(exprs, extra_tiles)
    key = tuple(("ti", e.e, e.tile) if isinstance(e, TileIndex) else ("x", e, None) for e in exprs)
    return _cached_combine(key, tuple(extra_tiles))


cached_combine_index_tiles.cache_info = _cached_combine.cache_info  # type: ignore[attr-defined]
cached_combine_index_tiles.cache_clear = _cached_combine.cache_clear  # type: ignore[attr-defined]


@contextmanager
def combine_cache(enabled: bool) -> Iterator[None]:
    """Temporarily enable / disable the combine cache (context-local)."""
    token = _USE_CACHE.set(enabled)
    try:
        yield
    finally:
        _USE_CACHE.reset(token)


def broadcast_shapes(*args: Any) -> tuple[NDTile | None, list[AffineExpr | None]]:
    """Combine all ``indices`` onto one tile and re-base each: ``(tile, canonical exprs)``."""
    if len(args) != 1:
        raise TypeError(f"broadcast_shapes() takes exactly one argument ({len(args)} given)")
    indices = list(args[0])
    tiles = [i.tile for i in indices if isinstance(i, TileIndex) and i.tile is not None]
    if not tiles:
        return None, [canonicalize_expr(i, {}) for i in indices]
    tile = combine_tiles(*tiles)
    results = []
    for idx in indices:
        smap = tile_subst_map(idx.tile, tile) if isinstance(idx, TileIndex) and idx.tile else {}
        results.append(canonicalize_expr(idx, smap))
    return tile, results


tile_hooks.update(cached_combine_index_tiles=cached_combine_index_tiles, tile_subst_map=tile_subst_map)
