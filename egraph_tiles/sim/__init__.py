"""Simulators: the ideal (numpy value) semantics and the hardware model.

``run_ideal`` is what a program means; ``run_hardware`` is what the device does with it,
hazards included.  A sound optimizer keeps ``run_hardware(optimize(p)) == run_ideal(p)``.
"""

from .errors import (CapacityExceeded, HardwareFault, MisalignedAccess, NonTermination, OutOfBounds, OutOfMemory,
                     SimError, UnsupportedByModel, UnsupportedTransfer)
from .hardware import run_hardware
from .ideal import run_ideal
from .semantics import outputs_equal

__all__ = [
    "CapacityExceeded", "HardwareFault", "MisalignedAccess", "NonTermination", "OutOfBounds", "OutOfMemory",
    "SimError", "UnsupportedByModel", "UnsupportedTransfer", "outputs_equal", "run_hardware",
    "run_ideal",
]
