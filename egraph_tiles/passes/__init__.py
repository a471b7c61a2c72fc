"""Passes over tile programs (PyPTO spelling: ``passes.canonicalize_tile_slice()(program)``)."""

from __future__ import annotations

from ..ir.stmts import Program
from ..ir.verify import verify_program
from .canonicalize import Options, Report
from .canonicalize import canonicalize_tile_slice as _canonicalize


def canonicalize_tile_slice(options: Options | None = None):
    """The CanonicalizeTileSlice pass as a callable ``Program -> Program``."""

    def run(program: Program) -> Program:
        return _canonicalize(program, options=options)

    return run


def optimize(program: Program, *, options: Options | None = None,
             report: Report | None = None) -> Program:
    """All optimization passes (today: CanonicalizeTileSlice); returns a new Program.  The input
    and the output are verified (``ValueError`` naming the statement): a window out of bounds
    is rejected before the pass folds it and, as a guard, after."""
    out = _canonicalize(verify_program(program), options=options, report=report)
    return verify_program(out)


__all__ = ["Options", "canonicalize_tile_slice", "optimize"]
