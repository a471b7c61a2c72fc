"""A Vec window an op writes back into (registry ``reuses_arg``), directly or through a view of
it, must stay a view: a copy would lose the write.  It stays only when proven aligned (#1789);
otherwise the pass raises (rules.checks ``written-window-violation``)."""

import pytest

import egraph_tiles as et
from dslkit import call_ops, rejection, vec_program
from simkit import inputs_for
from egraph_tiles.sim import run_hardware, run_ideal

prog = vec_program  # v = all of x in Vec, then the lines (from line 9), then v stored


def test_unaligned_slice_written_through_set_validshape_raises():
    p = prog("q = pl.tile.slice(v, [16, 1], [0, 1])",
             "qv = pl.tile.set_validshape(q, [8, 1])",
             "pl.tile.fillpad_inplace(qv, pl.PadValue.zero)")
    msg = rejection(p)
    for piece in ("slice 'q'", "line 9", "tile.fillpad_inplace at line 11", "'qv'",
                  "written in place", "copied", "lost", "unaligned view", "#1789",
                  "multiple of 32 bytes", "8 for FP32", "separate tile"):
        assert piece in msg, (piece, msg)


def test_unaligned_slice_written_directly_by_fillpad_inplace_raises():
    p = prog("q = pl.tile.slice(v, [16, 1], [0, 1])",
             "pl.tile.fillpad_inplace(q, pl.PadValue.zero)")
    with pytest.raises(ValueError, match=r"slice 'q'.*tile.fillpad_inplace at line 10"):
        et.optimize(p)


def test_aligned_written_window_stays_a_view_and_runs_right_on_hardware():
    p = et.verify_program(prog("q = pl.tile.slice(v, [16, 8], [0, 8])",
                               "qv = pl.tile.set_validshape(q, [8, 8])",
                               "pl.tile.fillpad_inplace(qv, pl.PadValue.zero)"))
    opt = et.optimize(p)
    assert "tile.extract" not in call_ops(opt) and "tile.slice" in call_ops(opt)
    ins = inputs_for(p)
    ideal, hw = run_ideal(p, ins), run_hardware(opt, ins)
    assert set(ideal) == set(hw)
    for k in ideal:
        assert (ideal[k] == hw[k]).all(), k


def test_read_only_use_of_unaligned_slice_is_still_copied():
    p = prog("q = pl.tile.slice(v, [16, 1], [0, 1])",
             "y = pl.tile.muls(q, 0.5)")
    assert "tile.extract" in call_ops(et.optimize(p))
