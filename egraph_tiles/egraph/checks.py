"""The rejections of ``rules.checks``, each declared once: the violation relation its rule
derives, the encoding sites the relation is keyed by (in program order), and the message that
names the statement and says how to fix the kernel.  :func:`raise_violations` turns the first
violation found into a ``ValueError``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from egglog import bindings as eb

from ..ir.stmts import Function
from ..ir.target import ALIGN_BYTES, aligned_step
from ..ir.types import TileType
from .encode import Encoding, RawSliceUse, Window
from .schedule import has_fact


def _align_fix(bits: int) -> str:
    return (f"Align the window (start it at a multiple of {ALIGN_BYTES} bytes, e.g. a column "
            f"offset that is a multiple of {aligned_step(bits)} elements of this dtype; "
            f"{aligned_step(32)} for FP32)")


def _through(var, slice_var) -> str:
    return f" (through {var.name!r}, a view / alias of it)" if var is not slice_var else ""


def _colx(fn: Function, enc: Encoding, eg: eb.EGraph, site: RawSliceUse) -> str:
    return (f"{site.slice_stmt.span}: in function {fn.name!r}, slice {site.var.name!r} has "
            f"valid_shape / drop_dims and a dynamic offset or non-contiguous window, and feeds "
            f"{site.op}: its lazy materialization would corrupt its source. Slice without "
            f"valid_shape / drop_dims, or copy it first with tile.extract(..., "
            f"target_memory=pl.Mem.Vec).")


def _written(fn: Function, enc: Encoding, eg: eb.EGraph, w: Window) -> str:
    writers = [x for x in enc.writes if has_fact(eg, "WriteViolation", w.key, x.key)]
    by = "; ".join(f"{x.op} at line {x.stmt.span.line}" + _through(x.var, w.var)
                   for x in writers) or "an in-place write"
    t = w.var.type
    return (f"{w.stmt.span}: in function {fn.name!r}, slice {w.var.name!r} (tile.slice at line "
            f"{w.stmt.span.line}) is written in place by {by}, and its window is not provably "
            f"{ALIGN_BYTES}-byte aligned. A window written in place can be neither copied (the "
            f"write would land in the copy and be lost) nor used as an unaligned view (the "
            f"device can hang, #1789). "
            f"{_align_fix(t.dtype.storage_bits if isinstance(t, TileType) else 0)}, or write "
            f"into a separate tile and copy the result back explicitly.")


def _raw_vec(fn: Function, enc: Encoding, eg: eb.EGraph, site: RawSliceUse) -> str:
    s = site.slice_stmt
    t = s.target.type
    return (f"{s.span}: in function {fn.name!r}, slice {s.target.name!r} (tile.slice at line "
            f"{s.span.line}) has valid_shape / drop_dims and feeds {site.op} at line "
            f"{site.consumer.span.line}{_through(site.var, s.target)}. The pass does not copy a "
            f"slice with valid_shape / drop_dims, so it reaches the op as a view, and its "
            f"address is not provably {ALIGN_BYTES}-byte aligned: the device can hang (#1789). "
            f"{_align_fix(t.dtype.storage_bits if isinstance(t, TileType) else 0)}, or slice "
            f"without valid_shape / drop_dims and set the valid shape with tile.set_validshape "
            f"on an aligned copy.")


@dataclass(frozen=True)
class Check:
    relation: str  # the violation relation (rules.checks)
    rule: str  # the rule that derives it
    sites: Callable[[Encoding], list]  # the sites it is keyed by (``.key``), program order
    message: Callable[[Function, Encoding, eb.EGraph, object], str]


CHECKS = (
    Check("ColxViolation", "raw-slice-col-expand-violation", lambda enc: enc.raw_colx, _colx),
    Check("WindowWriteViolation", "written-window-violation", lambda enc: enc.windows, _written),
    Check("RawVecViolation", "raw-slice-vector-violation", lambda enc: enc.raw_vec, _raw_vec),
)


def raise_violations(fn: Function, enc: Encoding, eg: eb.EGraph) -> None:
    """Raise ``ValueError`` for the first violation fact, check by check, in program order."""
    for check in CHECKS:
        for site in check.sites(enc):
            if has_fact(eg, check.relation, site.key):
                raise ValueError(check.message(fn, enc, eg, site))
