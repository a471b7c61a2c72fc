"""TileIndex and NDTile (seed invariants: affine-only arithmetic, same-tile vs cross-tile)."""

import numpy as np
import pytest

from egraph_tiles.nki import (
    DynamicScalar,
    NDTile,
    TileIndex,
    TileMask,
    arange,
    scalar,
)
from egraph_tiles.nki.index.combine import cached_combine_index_tiles


def test_ndtile_builds_ap_indices_innermost_first():
    t = NDTile((128,), (4, 64))
    assert [(x.position, x.tripcount) for x in t.free_indices] == [(0, 64), (1, 4)]
    assert [x.stride for x in t.free_indices] == [1, 64]
    assert t.shape == (128, 4, 64)


def test_ndtile_canonical_indices_drop_size_one_axes():
    t = NDTile((1,), (1, 8, 1))
    assert t.canonical_par_indices == []
    assert [x.tripcount for x in t.canonical_free_indices] == [8]


def test_par_and_free_addr_linearize_the_tile():
    t = NDTile((4,), (3, 5))
    env = t.axis_grid()
    free = np.broadcast_to(t.free_addr.evaluate(env), t.shape)
    par = np.broadcast_to(t.par_addr.evaluate(env), t.shape)
    np.testing.assert_array_equal(free[0], np.arange(15).reshape(3, 5))
    np.testing.assert_array_equal(par[:, 0, 0], np.arange(4))
    assert t.free_addr.supremum == 14


def test_int_add_keeps_the_same_tile():
    i = arange(128)[:, None]
    j = i + 5
    assert j.tile is i.tile and (j.e - i.e).equiv(5)


def test_scalar_add_builds_a_dynamic_index_on_the_same_tile():
    i = arange(128)[:, None]
    off = scalar("off", lo=0, hi=64)
    j = i + off
    assert j.tile is i.tile
    assert j.e.normal_form().coefficient(off.value.args[0]) == 1
    j2 = i + DynamicScalar(off.value * 2)
    assert j2.e.normal_form().coefficient(off.value.args[0]) == 2


def test_non_integer_scalar_add_is_rejected():
    i = arange(8)[:, None]
    with pytest.raises(ValueError, match="non-integer scalar"):
        i + scalar("x", dtype="float32")  # noqa: B018


def test_tileindex_add_composes_across_tiles_through_the_cache():
    cached_combine_index_tiles.cache_clear()
    i = arange(128)[:, None]
    j = arange(64)[None, :]
    s = i + j
    assert s.tile.shape == (128, 64)
    np.testing.assert_array_equal(s.evaluate(), np.add.outer(np.arange(128), np.arange(64)))
    i + j  # noqa: B018 - same shapes again
    assert cached_combine_index_tiles.cache_info().hits >= 1


def test_mul_only_by_int():
    i = arange(8)[:, None]
    assert (i * 3).tile is i.tile
    with pytest.raises(TypeError, match="unexpected type"):
        i * i  # noqa: B018
    with pytest.raises(TypeError, match="unexpected type"):
        i * 0.5  # noqa: B018


def test_add_of_unknown_type_is_rejected():
    with pytest.raises(TypeError, match="unexpected type"):
        arange(8)[:, None] + 1.5  # noqa: B018


def test_floordiv_and_mod_by_non_int_raise_the_seed_messages():
    i = arange(8)[:, None]
    with pytest.raises(ValueError, match="^'//' between NKI index and non integer is not supported.$"):
        i // 2.0  # noqa: B018
    with pytest.raises(ValueError, match="^'%' between NKI index and non integer is not supported.$"):
        i % scalar("n")  # noqa: B018
    assert ((i * 4 + 1) // 2).e.equiv(i.e * 2)


def test_comparisons_produce_masks_not_booleans():
    i = arange(8)[:, None]
    for m in (i < 3, i <= 3, i > 3, i >= 3, i == 3, i != 3):
        assert isinstance(m, TileMask)
    np.testing.assert_array_equal((i < 3).evaluate()[:, 0], np.arange(8) < 3)
    with pytest.raises(TypeError):
        bool(i < 3)


def test_shape_is_the_tile_shape_or_empty():
    assert arange(8)[:, None].shape == (8, 1)
    assert TileIndex(3).shape == ()


def test_broadcast_to_rebases_onto_the_bigger_tile():
    j = arange(16)[None, :]
    b = j.broadcast_to((4, 16))
    assert b.shape == (4, 16)
    np.testing.assert_array_equal(b.evaluate(), np.broadcast_to(np.arange(16), (4, 16)))


def test_broadcast_to_errors():
    j = arange(16)[None, :]
    with pytest.raises(ValueError, match="Can only broadcast when the rank of src and dst shape match!"
                       " broadcast shape len: 3, tile's rank: 2"):
        j.broadcast_to((1, 4, 16))
    with pytest.raises(ValueError, match="Not a broadcast!"):
        j.broadcast_to((4, 8))


def test_a_tileindex_has_no_truth_value():
    with pytest.raises(TypeError):
        bool(arange(4)[:, None])


@pytest.mark.parametrize(
    "op, want",
    [
        (lambda i: i - 3, lambda r: r - 3),
        (lambda i: -i, lambda r: -r),
        (lambda i: 3 - i, lambda r: 3 - r),
        (lambda i: 3 + i, lambda r: 3 + r),
        (lambda i: 2 * i, lambda r: 2 * r),
        (lambda i: i // 2, lambda r: r // 2),
        (lambda i: i % 3, lambda r: r % 3),
    ],
    ids=["sub-int", "neg", "rsub-int", "radd-int", "rmul-int", "floordiv-int", "mod-int"],
)
def test_every_integer_operator_folds_into_e_on_the_same_tile(op, want):
    i = arange(8)[:, None]
    j = op(i)
    assert isinstance(j, TileIndex) and j.tile is i.tile
    np.testing.assert_array_equal(j.evaluate()[:, 0], want(np.arange(8)))


def test_mul_by_a_runtime_scalar_is_rejected_as_non_affine():
    with pytest.raises(TypeError, match="^unexpected type "):
        arange(8)[:, None] * scalar("n")  # noqa: B018


def test_floordiv_by_a_tileindex_raises_the_seed_message():
    i = arange(8)[:, None]
    with pytest.raises(ValueError, match="^'//' between NKI index and non integer is not supported.$"):
        i // i  # noqa: B018


def test_subtracting_a_scalar_builds_a_dynamic_index_on_the_same_tile():
    i = arange(8)[:, None]
    off = scalar("off", lo=0, hi=4)
    j = i - off
    assert j.tile is i.tile
    assert j.e.normal_form().coefficient(off.value.args[0]) == -1
