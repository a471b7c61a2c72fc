"""The soundness judge: does an optimizer keep ``hardware(opt(p)) == ideal(p)``?"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..ir.stmts import Program
from .errors import HardwareFault, OutOfBounds
from .hardware import run_hardware
from .ideal import run_ideal
from .semantics import outputs_equal


def unsound_because(optimize: Callable[[Program], Program], program: Program,
                    inputs: dict[str, np.ndarray], scalars: dict[str, int | float],
                    function: str | None = None, capacity: bool = False) -> str | None:
    """None when the optimized program runs on the hardware model without a fault and
    produces exactly the ideal outputs of ``program``; otherwise why not.

    A window the optimized program reads outside its source (a copy hoisted above the exit or
    the zero-trip loop that kept the program from reading it) is unsound too.  ``capacity``:
    judge on-chip capacity as well (``run_hardware(..., capacity=...)``).

    Errors of the ideal run (a program without meaning) and of ``optimize`` propagate."""
    ideal = run_ideal(program, inputs, scalars, function)
    opt = optimize(program)
    try:
        hw = run_hardware(opt, inputs, scalars, function, capacity=capacity)
    except HardwareFault as e:
        return f"hardware fault {type(e).__name__}: {e}"
    except OutOfBounds as e:
        return f"reads outside its source: {e}"
    if not outputs_equal(ideal, hw):
        diffs = [k for k in ideal if k not in hw or not np.array_equal(
            ideal[k], hw[k], equal_nan=np.asarray(ideal[k]).dtype.kind == "f")]
        return f"outputs differ from the ideal semantics: {', '.join(diffs)}"
    return None
