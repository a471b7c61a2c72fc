"""Soundness of the second round: a slice of a slice whose parent was copied at
its definition may read the copy (``CopyBuf``) instead of the source.  For random parent / child
windows, offsets (literal or a dynamic row) and an optional ``fillpad_inplace`` of the source
before or after the child's use, ``hardware(optimize(p)) == ideal(p)`` with no fault.  (The
general random-program strategy rarely builds this shape, so it gets a generator of its own.)"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import egraph_tiles as et
from dslkit import kernel
from simkit import assert_optimized_matches_ideal, inputs_for

PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], r: pl.Scalar[pl.INDEX], "
          "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
RET = "pl.Tensor[[16, 64], pl.FP32]"


@st.composite
def copy_view_cases(draw):
    ph, pw = draw(st.sampled_from([4, 8, 16])), draw(st.sampled_from([8, 16, 24, 32]))
    pr, pc = draw(st.integers(0, 16 - ph)), draw(st.integers(0, 64 - pw))
    ch, cw = draw(st.integers(1, ph)), draw(st.integers(1, pw))
    cr, cc = draw(st.integers(0, ph - ch)), draw(st.integers(0, pw - cw))
    dynamic = draw(st.booleans())
    fill = draw(st.sampled_from(["none", "before-child-use", "after-child-use"]))
    lines = [
        "v: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec, pl.TileView()] = "
        "pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)",
        "w: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.set_validshape(v, [8, 64])",
        f"p: pl.Tile[[{ph}, {pw}], pl.FP32, pl.Mem.Vec] = pl.tile.slice(v, [{ph}, {pw}], [{pr}, {pc}])",
        f"y: pl.Tile[[{ph}, {pw}], pl.FP32, pl.Mem.Vec] = pl.tile.muls(p, 2.0)",
        f"c: pl.Tile[[{ch}, {cw}], pl.FP32, pl.Mem.Vec] = "
        f"pl.tile.slice(p, [{ch}, {cw}], [{'r' if dynamic else cr}, {cc}])",
    ]
    fillpad = "f: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad_inplace(w, pl.PadValue.zero)"
    if fill == "before-child-use":
        lines.append(fillpad)
    lines.append(f"z: pl.Tile[[{ch}, {cw}], pl.FP32, pl.Mem.Vec] = pl.tile.muls(c, 3.0)")
    if fill == "after-child-use":
        lines.append(fillpad)
    lines += ["out = pl.store(y, [0, 0], out)", "out2 = pl.store(z, [0, 32], out)", "return out2"]
    text = kernel(PARAMS, "\n".join(lines), RET)
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    return p, inputs_for(p, draw(st.integers(0, 2**16))), {"r": cr}



@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(copy_view_cases())
def test_reading_the_parent_copy_matches_ideal_on_hardware(case) -> None:
    assert_optimized_matches_ideal(*case)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(copy_view_cases())
def test_reading_the_parent_copy_matches_ideal_on_hardware_smoke(case) -> None:
    assert_optimized_matches_ideal(*case)
