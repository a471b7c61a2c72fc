"""A ``tile.slice`` with valid_shape / drop_dims is not a window the pass copies, so an ordinary
vector op (registry family VECTOR) gets it as a view: it is accepted unchanged only when its
address is proven 32-byte aligned, otherwise the pass raises (#1789, rules.checks
``raw-slice-vector-violation``)."""

import pytest

import egraph_tiles as et
from egraph_tiles.sim import outputs_equal, run_hardware, run_ideal
from dslkit import call_ops, kernel, rejection
from simkit import inputs_for

PARAMS = "x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]"
RET = "pl.Tensor[[16, 32], pl.FP32]"


def prog(*lines: str) -> et.ir.Program:
    """``x_vec`` (all of x in Vec), then ``lines`` (from line 8), then x_vec stored."""
    return et.verify_program(et.parse_program(kernel(PARAMS, "\n".join((
        "x_vec = pl.tile.load(x, [0, 0], [16, 32], target_memory=pl.Mem.Vec)", *lines,
        "out = pl.store(x_vec, [0, 0], out)", "return out")), RET)))


def test_unaligned_valid_shape_slice_written_by_fillpad_inplace_raises():
    p = prog("q: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(x_vec, [16, 8], [0, 3], valid_shape=[8, 8])",
             "pl.tile.fillpad_inplace(q, pl.PadValue.zero)")
    msg = rejection(p)
    for piece in ("slice 'q'", "line 8", "has valid_shape / drop_dims",
                  "tile.fillpad_inplace at line 9", "does not copy", "32-byte aligned", "#1789",
                  "Align the window", "8 for FP32", "tile.set_validshape on an aligned copy"):
        assert piece in msg, (piece, msg)


def test_aligned_valid_shape_slice_written_by_fillpad_inplace_is_accepted_unchanged():
    p = prog("q: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(x_vec, [16, 8], [0, 8], valid_shape=[8, 8])",
             "pl.tile.fillpad_inplace(q, pl.PadValue.zero)")
    opt = et.optimize(p)
    assert et.print_program(opt) == et.print_program(p)
    ins = inputs_for(p)
    ideal, hw = run_ideal(p, ins), run_hardware(opt, ins)
    assert outputs_equal(ideal, hw), (ideal, hw)


def test_unaligned_valid_shape_slice_through_set_validshape_raises():
    p = prog("q: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(x_vec, [16, 8], [0, 3], valid_shape=[16, 8])",
             "qv = pl.tile.set_validshape(q, [8, 8])",
             "pl.tile.fillpad_inplace(qv, pl.PadValue.zero)")
    with pytest.raises(ValueError, match=r"slice 'q'.*tile.fillpad_inplace at line 10 \(through 'qv'"):
        et.optimize(p)


def test_unaligned_valid_shape_slice_feeding_muls_raises():
    p = prog("q: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(x_vec, [16, 8], [0, 3], valid_shape=[8, 8])",
             "y = pl.tile.muls(q, 0.5)")
    with pytest.raises(ValueError, match=r"slice 'q'.*has valid_shape / drop_dims and feeds tile.muls at line 9"):
        et.optimize(p)


def test_unaligned_valid_shape_slice_feeding_store_is_accepted_unchanged():
    p = prog("q: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(x_vec, [16, 8], [0, 3], valid_shape=[8, 8])",
             "out = pl.store(q, [0, 0], out)")
    opt = et.optimize(p)
    assert et.print_program(opt) == et.print_program(p)
    assert "tile.extract" not in call_ops(opt)
