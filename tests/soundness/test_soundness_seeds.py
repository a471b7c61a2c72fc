"""The optimizer repairs every seed hazard: the hardware model runs the optimized "before"
program exactly like the ideal semantics of the original, and rejects the Acc row window."""

from __future__ import annotations

import pytest

import egraph_tiles as et
from egraph_tiles.sim.soundness import unsound_because
from hazard_programs import ACC_COLUMN_WINDOW_AFTER, ACC_ROW_WINDOW_BEFORE, HAZARDS
from simkit import inputs_for


def _identity(p):
    return p


@pytest.mark.parametrize("name,before,after,scalars", HAZARDS, ids=[h[0] for h in HAZARDS])
def test_hazard_program_is_unsound_as_written(name, before, after, scalars) -> None:
    p = et.parse_program(before)
    assert unsound_because(_identity, p, inputs_for(p), scalars) is not None


@pytest.mark.parametrize("name,before,after,scalars", HAZARDS, ids=[h[0] for h in HAZARDS])
def test_optimized_hazard_program_matches_ideal_on_hardware(name, before, after, scalars) -> None:
    p = et.parse_program(before)
    assert unsound_because(et.optimize, p, inputs_for(p), scalars) is None


def test_optimizer_rejects_the_multi_block_column_acc_row_window() -> None:
    with pytest.raises(ValueError):
        et.optimize(et.parse_program(ACC_ROW_WINDOW_BEFORE))


def test_optimized_full_row_extent_acc_window_matches_ideal_on_hardware() -> None:
    p = et.parse_program(ACC_COLUMN_WINDOW_AFTER)
    assert unsound_because(et.optimize, p, inputs_for(p), {}) is None
