"""Masks: comparison predicates, intersections, inst_mask, numpy evaluation."""

import numpy as np
import pytest

from egraph_tiles.nki import (
    CmpTileMask,
    EQTileMask,
    Instruction,
    NDTile,
    TileIndex,
    TileMaskIntersection,
    arange,
    inst_mask,
    pred_ge,
    pred_lt,
    scalar,
)

P, F = np.indices((8, 16))


def test_comparison_masks_evaluate_over_the_combined_tile():
    i, j = arange(8)[:, None], arange(16)[None, :]
    np.testing.assert_array_equal((i < j).evaluate(), P < F)
    np.testing.assert_array_equal((i * 2 >= j + 1).evaluate(), P * 2 >= F + 1)
    np.testing.assert_array_equal((i == j).evaluate(), P == F)
    np.testing.assert_array_equal((i != 3).evaluate(), np.broadcast_to(np.arange(8)[:, None] != 3, (8, 1)))


def test_runtime_scalar_predicates_take_values_at_evaluation():
    i = arange(8)[:, None]
    n = scalar("n", lo=0, hi=8)
    m = i < n
    np.testing.assert_array_equal(m.evaluate({"n": 5})[:, 0], np.arange(8) < 5)


def test_intersection_flattens_and_conjoins():
    i, j = arange(8)[:, None], arange(16)[None, :]
    m = (i < 5) & (j >= 2) & (i <= j)
    assert isinstance(m, TileMaskIntersection) and len(m.masks) == 3
    np.testing.assert_array_equal(m.evaluate(), (P < 5) & (F >= 2) & (P <= F))
    assert TileMaskIntersection(tile=NDTile((2,), (3,))).evaluate().all()


def test_index_promoted_to_mask_is_an_equality_mask():
    i = arange(8)[:, None]
    m = (i - 3)._promote_to_mask()
    assert isinstance(m, EQTileMask)
    np.testing.assert_array_equal(m.evaluate()[:, 0], np.arange(8) == 3)


def test_inst_mask_is_none_when_not_predicated():
    t = NDTile((8,), (16,))
    assert inst_mask(Instruction(t, [], [], ())) is None


def test_inst_mask_substitutes_predicates_onto_the_destination_indices():
    dst = NDTile((4,), (8,))
    p, f = dst.canonical_par_indices[0], dst.canonical_free_indices[0]
    # predicates written over the destination tile's own axes
    preds = [pred_lt(p.e, 3, dst), pred_ge(f.e, p.e, dst)]
    # the instruction writes rows 2*r+1 and columns c of a (4, 8) iteration space
    it = arange(4)[:, None] * 2 + 1
    jt = arange(8)[None, :]
    m = inst_mask(Instruction(dst, [it], [jt], preds))
    r, c = np.indices((4, 8))
    np.testing.assert_array_equal(m.evaluate(), ((2 * r + 1) < 3) & (c >= 2 * r + 1))
    # the substituted predicates are solved by the e-graph like any expression
    assert m.masks[0].expr.normal_form().coefficient(it.tile.par_indices[0].var) == 2


def test_mask_has_no_truth_value():
    with pytest.raises(TypeError):
        bool(arange(4)[:, None] < 2)


def test_unknown_comparison_is_rejected():
    with pytest.raises(ValueError, match="unknown comparison"):
        CmpTileMask(TileIndex(1).e, "<>")
