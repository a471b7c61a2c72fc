"""Unsafe views per the hardware model (``egraph_tiles.sim``).

A program is *safe* when ``run_hardware(output)`` neither faults nor differs from
``run_ideal(input)`` on the same inputs. When it is not, each slice left in the output
is tried alone: a variant keeps only that window as a view and copies every other slice
use (``copy_decision``); a window whose variant faults or differs is one unsafe view.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from egraph_tiles.passes.baselines import apply_policy, copy_decision, windows_of
from egraph_tiles.ir import Program, TensorType, const_int


def available() -> bool:
    try:
        from egraph_tiles.sim import run_hardware, run_ideal  # noqa: F401
    except ImportError:
        return False
    return True


def inputs_for(prog: Program, seed: int = 0) -> dict[str, np.ndarray]:
    """Small random integers (exact in every modelled dtype) for each input tensor."""
    from egraph_tiles.sim.semantics import np_dtype

    fn = prog.functions[0]
    out: dict[str, np.ndarray] = {}
    for i, p in enumerate(fn.params):
        t = p.var.type
        if isinstance(t, TensorType) and not p.is_out:
            shape = tuple(const_int(d) for d in t.shape)
            rng = np.random.default_rng(seed + i)
            out[p.var.name] = rng.integers(-8, 9, size=shape).astype(np_dtype(t.dtype))
    return out


class Oracle:
    """The ideal result of one input program, to judge strategies' outputs against."""

    def __init__(self, prog: Program, scalars: dict[str, int]):
        from egraph_tiles.sim import run_ideal

        self.inputs = inputs_for(prog)
        self.scalars = scalars
        self.ideal = run_ideal(prog, self.inputs, scalars)

    def verdict(self, prog: Program) -> str:
        """"ok", "fault:<Kind>" or "wrong"."""
        from egraph_tiles.sim import HardwareFault, outputs_equal, run_hardware

        try:
            hw = run_hardware(prog, self.inputs, self.scalars)
        except HardwareFault as e:
            return f"fault:{type(e).__name__}"
        return "ok" if outputs_equal(self.ideal, hw) else "wrong"


def unsafe_views(oracle: Oracle, out: Program, max_probe: int) -> tuple[str, Any]:
    """(whole-program verdict, number of unsafe views — None when more than
    ``max_probe`` windows would have to be probed one by one)."""
    verdict = oracle.verdict(out)
    if verdict == "ok":
        return verdict, 0
    wins = windows_of(out)
    if len(wins) > max_probe:
        return verdict, None
    count = 0
    for w in wins:
        def keep_only(a, win, use, _w=w):  # noqa: ANN001, ANN202
            return "view" if win.var is _w.var else copy_decision(a, win, use)

        if oracle.verdict(apply_policy(out, keep_only)) != "ok":
            count += 1
    return verdict, count
