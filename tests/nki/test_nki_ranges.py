"""arange / ds / the slice normalization chain (seed: static vs dynamic length)."""

import numpy as np
import pytest

from egraph_tiles.nki import (
    AffineExpr,
    arange,
    ds,
    normalize_expr_range_args,
    normalize_range_args,
    normalize_slice,
    partial_tile_index,
    scalar,
)


def test_arange_tripcount():
    assert arange(3, 11).tripcount == 8
    assert arange(16).tripcount == 16


def test_arange_colon_is_the_partition_axis():
    i = arange(2, 10)[:]
    assert i.tile.par_shape == (8,) and i.tile.free_shape == ()
    np.testing.assert_array_equal(i.evaluate(), np.arange(2, 10))


def test_arange_none_inserts_a_size_one_broadcast_axis():
    j = arange(64)[None, :]
    assert j.shape == (1, 64) and j.tile.par_shape == (1,)
    i = arange(128)[:, None]
    assert i.shape == (128, 1)


def test_arange_subscript_errors():
    with pytest.raises(IndexError, match="^Only support `:` or `None` as subscript to arange!$"):
        arange(8)[3]
    with pytest.raises(IndexError, match="^Only support `:` or `None` as subscript to arange!$"):
        arange(8)[1:4]
    with pytest.raises(IndexError, match="^Need exact 1 `:` in the subscript to arange!$"):
        arange(8)[:, :]
    with pytest.raises(IndexError, match="^Need exact 1 `:` in the subscript to arange!$"):
        arange(8)[None, None]
    with pytest.raises(IndexError, match="^Only support multi-dimensional subscript to arange!$"):
        arange(8)[[0, 1]]


def test_partial_tile_index_gives_one_index_per_axis():
    idx = partial_tile_index((4, 3, 5))
    assert len(idx) == 3 and all(t.tile is idx[0].tile for t in idx)
    grid = np.indices((4, 3, 5))
    for k, t in enumerate(idx):
        np.testing.assert_array_equal(t.evaluate(), grid[k])


def test_normalize_slice_fills_defaults_from_the_length():
    assert normalize_slice(slice(None), 10) == (0, 10, 1)
    assert normalize_slice(slice(2, None, 3), 10) == (2, 8, 3)


def test_step_zero_is_rejected():
    with pytest.raises(ValueError, match="^step of `...` must be non-zero$"):
        normalize_range_args(slice(0, 8, 0))
    with pytest.raises(ValueError, match="^step of `...` must be non-zero$"):
        normalize_slice(slice(None, None, 0), 8)


def test_constant_difference_gives_its_length_even_with_runtime_bounds():
    off = scalar("off", lo=0, hi=100)
    start, length, step = normalize_range_args(ds(off, 64))
    assert length == 64 and step == 1
    assert isinstance(start, AffineExpr)
    # strided static slices are fine
    assert normalize_range_args(range(3, 19, 4)) == (3, 16, 4)


def test_runtime_length_takes_the_supremum():
    n = scalar("n", lo=1, hi=96)
    _, length, step = normalize_range_args(slice(0, n))
    assert (length, step) == (96, 1)
    m = scalar("m", lo=8, hi=40)
    _, length, _ = normalize_range_args(slice(m - 8, m + n))  # (m + n) - (m - 8) = n + 8
    assert length == 104


def test_runtime_length_must_not_be_strided():
    n = scalar("n", lo=1, hi=96)
    with pytest.raises(ValueError, match="^step of `...` must be 1 when `stop - start` is not compile "
                                         "time constant$"):
        normalize_range_args(slice(0, n, 2))


def test_runtime_length_without_a_range_cannot_be_bounded():
    with pytest.raises(ValueError, match="cannot bound"):
        normalize_range_args(slice(0, scalar("unbounded")))


def test_bad_bound_types_are_rejected():
    with pytest.raises(ValueError, match="^Unexpected type of stop/start in"):
        normalize_range_args(slice(0.5, 4))
    with pytest.raises(ValueError, match="^`start` must be int or scalar\\[int\\]$"):
        normalize_expr_range_args("x", 4, 1, None)
    with pytest.raises(ValueError, match="^`stop` must be int or scalar\\[int\\]$"):
        normalize_expr_range_args(0, 4.0, 1, None)


def test_ds_with_a_runtime_size_takes_the_supremum_as_its_extent():
    n = scalar("n", lo=1, hi=40)
    start, length, step = normalize_range_args(ds(3, n))
    assert (start, length, step) == (3, 40, 1)


def test_ds_with_constant_start_and_size_is_a_static_range():
    assert normalize_range_args(ds(5, 16)) == (5, 16, 1)


def test_unexpected_bound_type_message_names_the_range():
    with pytest.raises(ValueError, match=r"^Unexpected type of stop/start in slice\(0\.5, 4, None\)$"):
        normalize_range_args(slice(0.5, 4))
