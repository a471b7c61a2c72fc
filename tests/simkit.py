"""Helpers for the simulator tests: parse a kernel, make exact inputs, run both simulators."""

from __future__ import annotations

import numpy as np

import egraph_tiles as et
import egraph_tiles.ir  # noqa: F401
from egraph_tiles.ir import TensorType
from egraph_tiles.sim import outputs_equal, run_hardware, run_ideal
from egraph_tiles.sim.semantics import np_dtype
from egraph_tiles.sim.soundness import unsound_because
from dslkit import kernel  # noqa: F401  (re-exported: the sim tests' kernel text)


def small_ints(shape: tuple[int, ...], dtype: np.dtype, seed: int = 0) -> np.ndarray:
    """Random small integers (exactly representable in every modeled dtype)."""
    rng = np.random.default_rng(seed)
    lo = 0 if np.issubdtype(dtype, np.unsignedinteger) else -8
    return rng.integers(lo, 9, size=shape).astype(dtype)


def inputs_for(program: et.ir.Program, seed: int = 0) -> dict[str, np.ndarray]:
    """Random small-integer arrays for every non-out tensor parameter of the first function."""
    fn = program.functions[0]
    out: dict[str, np.ndarray] = {}
    for i, p in enumerate(fn.params):
        t = p.var.type
        if isinstance(t, TensorType) and not p.is_out:
            shape = tuple(et.ir.const_int(d) for d in t.shape)
            out[p.var.name] = small_ints(shape, np_dtype(t.dtype), seed + i)  # type: ignore[arg-type]
    return out


def both(text: str, scalars: dict[str, int] | None = None, seed: int = 0):
    """(ideal outputs, hardware outputs) of a kernel on random small-integer inputs."""
    p = et.parse_program(text)
    ins = inputs_for(p, seed)
    return run_ideal(p, ins, scalars), run_hardware(p, ins, scalars)


def agree(text: str, scalars: dict[str, int] | None = None) -> dict[str, np.ndarray]:
    """Run both simulators, assert they agree, return the ideal outputs."""
    ideal, hw = both(text, scalars)
    assert outputs_equal(ideal, hw), (ideal, hw)
    return ideal


def assert_optimized_matches_ideal(p: et.ir.Program, ins: dict[str, np.ndarray],
                                   scalars: dict[str, int]) -> None:
    """The soundness property for one drawn case: ``hardware(optimize(p)) == ideal(p)`` with no
    fault; the program (and on failure the optimized one) is noted for hypothesis' report."""
    from hypothesis import note

    note("program:\n" + et.print_program(p))
    note(f"scalars: {scalars}")
    why = unsound_because(et.optimize, p, ins, scalars)
    if why is not None:
        note("optimized:\n" + et.print_program(et.optimize(p)))
    assert why is None, why
