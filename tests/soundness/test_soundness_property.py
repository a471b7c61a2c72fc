"""End-to-end soundness: for random programs, ``hardware(optimize(p)) == ideal(p)`` with no
fault.  The property test is slow (CI profile: 200 programs, nightly: 2000); a 10-example
smoke version runs by default.  Shrunk failures are printed as DSL text."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, note, settings
from hypothesis import strategies as st

import egraph_tiles as et
from egraph_tiles.baselines import view_everything
from egraph_tiles.sim.soundness import unsound_because
from simkit import inputs_for
from strategies import ROW_OFF_MAX, program_texts


@st.composite
def cases(draw):
    """(program text, inputs, scalars): a random program and exact random inputs."""
    text = draw(program_texts())
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    seed = draw(st.integers(0, 2**16))
    scalars = {"row_off": draw(st.integers(0, ROW_OFF_MAX)), "flag": draw(st.integers(-2, 2))}
    return p, inputs_for(p, seed), scalars


def _judge(p, ins, scalars) -> None:
    note("program:\n" + et.print_program(p))
    note(f"scalars: {scalars}")
    why = unsound_because(et.optimize, p, ins, scalars)
    if why is not None:
        note("optimized:\n" + et.print_program(et.optimize(p)))
    assert why is None, why


@pytest.mark.slow
@given(cases())
def test_optimized_random_programs_match_ideal_on_hardware(case) -> None:
    _judge(*case)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_optimized_random_programs_match_ideal_on_hardware_smoke(case) -> None:
    _judge(*case)


def test_the_property_catches_an_optimizer_that_keeps_every_slice_a_view() -> None:
    """The check can fail: leaving every slice as written (zero-copy everywhere) is unsound,
    and the property finds a random program showing it."""
    bad = find(cases(), lambda c: unsound_because(view_everything, *c) is not None,
               settings=settings(max_examples=500, deadline=None, database=None,
                                 suppress_health_check=list(HealthCheck)))
    p, ins, scalars = bad
    assert unsound_because(view_everything, p, ins, scalars) is not None
    assert unsound_because(et.optimize, p, ins, scalars) is None
