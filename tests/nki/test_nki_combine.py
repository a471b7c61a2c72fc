"""combine_tiles / generate_subst_map / canonicalize_expr / cached combine / broadcast_shapes."""

import numpy as np
import pytest

from egraph_tiles.nki import (
    DynamicScalar,
    NDTile,
    TileIndex,
    arange,
    broadcast_shapes,
    cached_combine_index_tiles,
    canonicalize_expr,
    combine_cache,
    combine_tiles,
    generate_subst_map,
    scalar,
    unique_sequence,
)
from egraph_tiles.nki.index.expr import AffineExpr


def test_unique_sequence_preserves_first_occurrence_order():
    assert unique_sequence([3, 1, 3, None, 2, 1]) == [3, 1, None, 2]
    assert unique_sequence([None, 1, None], exclude_none=True) == [1]


def test_combine_tiles_broadcasts_partition_and_free_separately():
    a = NDTile((128,), (1,))
    b = NDTile((1,), (4, 64))
    t = combine_tiles(a, b)
    assert (t.par_shape, t.free_shape) == ((128,), (4, 64))
    # flattening par+free into one shape and broadcasting once would give (1, 128, 64) here
    c = combine_tiles(NDTile((128,), ()), NDTile((1,), (64,)))
    assert (c.par_shape, c.free_shape) == ((128,), (64,))


def test_combine_tiles_rejects_incompatible_shapes():
    with pytest.raises(ValueError):
        combine_tiles(NDTile((128,), (3,)), NDTile((64,), (3,)))


def test_generate_subst_map_is_positional_and_skips_size_one_axes():
    src = NDTile((1,), (1, 8))
    dst = NDTile((4,), (3, 8))
    smap = generate_subst_map(src.free_indices, dst.free_indices)
    assert list(smap) == [src.free_indices[0].var]
    assert generate_subst_map(src.par_indices, dst.par_indices) == {}


def test_canonicalize_expr_ladder():
    i = arange(8)[:, None]
    v = i.tile.par_indices[0].var
    smap = {v: AffineExpr.var(v) * 2}
    assert canonicalize_expr(i, smap).equiv(i.e * 2)
    n = scalar("n", lo=0, hi=9)
    assert canonicalize_expr(DynamicScalar(n.value + 1), smap).equiv(n.value + 1)
    assert canonicalize_expr(None, smap) is None
    assert canonicalize_expr(5, smap).equiv(5)
    assert canonicalize_expr(i, {}) is i.e  # empty map = identity


def test_cached_combine_is_memoized_on_the_immutable_key():
    cached_combine_index_tiles.cache_clear()
    i, j = arange(16)[:, None], arange(32)[None, :]
    first = cached_combine_index_tiles((i, j))
    again = cached_combine_index_tiles((arange(16)[:, None], arange(32)[None, :]))
    assert again is first
    assert cached_combine_index_tiles.cache_info().hits == 1
    with combine_cache(False):
        uncached = cached_combine_index_tiles((i, j))
    assert uncached is not first and uncached[0] == first[0]
    assert cached_combine_index_tiles.cache_info().hits == 1


def test_broadcast_shapes_rebases_every_index_onto_one_tile():
    i, j = arange(16)[:, None], arange(32)[None, :]
    tile, (ei, ej) = broadcast_shapes([i, j])
    assert tile.shape == (16, 32)
    env = tile.axis_grid()
    np.testing.assert_array_equal(np.broadcast_to(ei.evaluate(env), tile.shape),
                                  np.indices((16, 32))[0])
    np.testing.assert_array_equal(np.broadcast_to(ej.evaluate(env), tile.shape),
                                  np.indices((16, 32))[1])


def test_broadcast_shapes_takes_exactly_one_argument():
    i = arange(4)[:, None]
    with pytest.raises(TypeError, match="takes exactly one argument"):
        broadcast_shapes(i, i)


def test_broadcast_shapes_without_tiles_keeps_plain_values():
    tile, exprs = broadcast_shapes([3, TileIndex(4)])
    assert tile is None and exprs[0].equiv(3) and exprs[1].equiv(4)
