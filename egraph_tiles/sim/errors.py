"""Errors raised by the simulators.

``HardwareFault`` and its subclasses are what the *hardware model* raises where the real
device would fault or hang; the ideal semantics never raises them.  ``SimError`` covers
program errors both simulators detect (out-of-bounds windows, non-terminating loops) and
constructs the simulators deliberately do not model (``UnsupportedByModel``).
"""

from __future__ import annotations


class SimError(Exception):
    """Base of every simulator error."""


class HardwareFault(SimError):
    """The device would fault, hang or reject the instruction."""


class MisalignedAccess(HardwareFault):
    """A vector instruction got a tile operand whose base address is not 32-byte aligned
    (the device hangs — PyPTO issue #1789)."""


class UnsupportedTransfer(HardwareFault):
    """A copy along a data path the hardware does not have (e.g. Mat→Mat, the L1→L1
    ``pto.textract`` that lazy materialization of a Mat slice would emit)."""


class CapacityExceeded(HardwareFault):
    """The tiles live at once in one on-chip memory space exceed its capacity (the allocator
    would fail; checked only when ``run_hardware`` is asked to)."""


class OutOfBounds(SimError):
    """A window (load, store, slice, extract) reaches outside its source."""


class OutOfMemory(SimError):
    """The hardware model's memory for one space grew past its cap."""


class NonTermination(SimError):
    """A ``pl.while_`` loop exceeded the simulator's iteration limit."""


class UnsupportedByModel(SimError):
    """A construct the simulators do not give a semantics to (opaque calls, 4-bit / FP8
    dtypes, batch matmuls, ...).  Raised by both simulators alike."""
