"""Loop-aware placement is sound: for random loop kernels (``strategies.loop_window_texts``:
invariant and variant windows, writes to the source in the loop — directly, through a view made
before it, through an alias — nested loops, ``if`` inside loops), ``hardware(optimize(p)) ==
ideal(p)``.  And the property can fail: with the write check of hoisting disabled, a hoisted
copy reads stale data and the property finds a kernel showing it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

import egraph_tiles as et
from egraph_tiles.cost import loops
from egraph_tiles.sim.soundness import unsound_because
from simkit import assert_optimized_matches_ideal, inputs_for
from strategies import LOOP_OFFSETS, LOOP_WRITES, loop_window_texts


@st.composite
def loop_cases(draw):
    text = draw(loop_window_texts())
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    scalars = {"c0": draw(st.integers(0, 56)), "flag": draw(st.integers(-1, 1))}
    # inputs without zeros: a write zeroing the source always changes what a copy reads
    ins = {k: v + (v == 0) * 9 for k, v in inputs_for(p, draw(st.integers(0, 2**16))).items()}
    return p, ins, scalars



@pytest.mark.slow
@given(loop_cases())
def test_optimized_loop_kernels_match_ideal_on_hardware(case) -> None:
    assert_optimized_matches_ideal(*case)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop_cases())
def test_optimized_loop_kernels_match_ideal_on_hardware_smoke(case) -> None:
    assert_optimized_matches_ideal(*case)


def test_the_loop_strategy_draws_every_shape() -> None:
    seen: set[str] = set()

    @settings(max_examples=300, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(loop_window_texts(with_shape=True))
    def draw(case) -> None:
        seen.update(case[1])

    draw()
    want = {*LOOP_OFFSETS, *(f"write-{w}" for w in LOOP_WRITES), "nested", "single", "if",
            "no-if", "sliced-outside", "sliced-inside"}
    assert want <= seen, want - seen


def _hoisted(p) -> bool:
    """Whether the optimizer placed a copy before a loop."""
    rep = et.Report()
    et.optimize(p, report=rep)
    return any(d.placement == "before loop" for f in rep.functions for d in f.decisions)


def test_a_hoisted_copy_reading_stale_data_fails_the_property(monkeypatch) -> None:
    """Disable the write check (a source written in the loop counts as stable): some kernel then
    gets a copy hoisted over a write, and the hardware run differs from the ideal one."""
    monkeypatch.setattr(loops, "stable_in",
                        lambda fx, v, loop: fx.defs.get(v, (0,))[0] < fx.point(loop).pos)
    bad = find(loop_cases(), lambda c: unsound_because(et.optimize, *c) is not None,
               settings=settings(max_examples=500, deadline=None, database=None,
                                 suppress_health_check=list(HealthCheck)))
    p, ins, scalars = bad
    assert _hoisted(p)
    assert "outputs differ" in unsound_because(et.optimize, p, ins, scalars)
    monkeypatch.undo()
    assert unsound_because(et.optimize, p, ins, scalars) is None
