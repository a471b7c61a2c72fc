"""End-to-end soundness: for random programs, ``hardware(optimize(p)) == ideal(p)`` with no
fault.  The property test is slow (CI profile: 200 programs, nightly: 2000); a 10-example
smoke version runs by default.  Shrunk failures are printed as DSL text."""

from __future__ import annotations

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


class Rejected(Exception):
    """``et.optimize`` rejected an accumulator window (the Acc-window ValueError)."""


def _optimize_or_reject(p):
    try:
        return et.optimize(p)
    except ValueError as e:
        if "Acc (L0C) tile" in str(e):
            raise Rejected(str(e)) from e
        raise


def _judge(p, ins, scalars) -> None:
    note("program:\n" + et.print_program(p))
    note(f"scalars: {scalars}")
    try:
        why = unsound_because(_optimize_or_reject, p, ins, scalars)
    except Rejected as e:
        # a rejection claims the program itself miscomputes on the hardware: a false rejection
        # (a program the hardware runs right) fails the property
        note(f"rejected: {e}")
        assert unsound_because(lambda q: q, p, ins, scalars) is not None, f"false rejection: {e}"
        return
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


ACC_WINDOW = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[{m}, 16], pl.FP16], b: pl.Tensor[[16, {n}], pl.FP16],
               out: pl.Out[pl.Tensor[[{m}, {n}], pl.FP32]]) -> pl.Tensor[[{m}, {n}], pl.FP32]:
        a_mat = pl.tile.load(a, [0, 0], [{m}, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, {n}], target_memory=pl.Mem.Mat)
        a_all = pl.tile.extract(a_mat, 0, 0, shape=[{m}, 16], target_memory=pl.Mem.Left)
        b_all = pl.tile.extract(b_mat, 0, 0, shape=[16, {n}], target_memory=pl.Mem.Right)
        a_w = pl.tile.extract(a_mat, {r0}, 0, shape=[{r}, 16], target_memory=pl.Mem.Left)
        b_w = pl.tile.extract(b_mat, 0, {c0}, shape=[16, {c}], target_memory=pl.Mem.Right)
        acc = pl.tile.matmul(a_all, b_all)
        win: pl.Tile[[{r}, {c}], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc, [{r}, {c}], [{r0}, {c0}])
        win2 = pl.tile.matmul_acc(win, a_w, b_w)
        out = pl.store(acc, [0, 0], out)
        return out
"""


@st.composite
def acc_window_cases(draw):
    """A matmul_acc into a random in-scope window of an Acc tile (whole 16-row fractals, any
    column extent and offset) — about a third of them windows the hardware garbles."""
    m, n = draw(st.sampled_from([16, 32, 48])), draw(st.sampled_from([16, 32, 48]))
    r = 16 * draw(st.integers(1, m // 16))
    r0 = 16 * draw(st.integers(0, (m - r) // 16))
    c = draw(st.integers(1, n))
    c0 = draw(st.integers(0, n - c))
    text = ACC_WINDOW.format(m=m, n=n, r=r, c=c, r0=r0, c0=c0)
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    return p, inputs_for(p, draw(st.integers(0, 2**16))), {}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(acc_window_cases())
def test_acc_window_programs_are_rejected_exactly_when_the_hardware_garbles_them(case) -> None:
    _judge(*case)


@settings(max_examples=1, deadline=None, database=None)
@given(st.just(ACC_WINDOW.format(m=16, n=64, r=16, c=32, r0=0, c0=32)))
def test_a_false_acc_window_rejection_fails_the_property(text) -> None:
    # an optimizer rejecting a window the hardware writes right ([16,32] at [0,32] of [16,64])
    ok = et.verify_program(et.parse_program(text))

    def reject(p):
        raise ValueError("tile.matmul_acc: a 16x32 row window of a 16x64 Acc (L0C) tile ...")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(et, "optimize", reject)
        with pytest.raises(AssertionError, match="false rejection"):
            _judge(ok, inputs_for(ok, 0), {})


def test_the_property_catches_an_optimizer_that_keeps_every_slice_a_view() -> None:
    """The check can fail: leaving every slice as written (zero-copy everywhere) is unsound,
    and the property finds a random program showing it."""
    bad = find(cases(), lambda c: unsound_because(view_everything, *c) is not None,
               settings=settings(max_examples=500, deadline=None, database=None,
                                 suppress_health_check=list(HealthCheck)))
    p, ins, scalars = bad
    assert unsound_because(view_everything, p, ins, scalars) is not None
    assert unsound_because(et.optimize, p, ins, scalars) is None
