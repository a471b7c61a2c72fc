"""Passes over tile programs (PyPTO spelling: ``passes.canonicalize_tile_slice()(program)``)."""

from __future__ import annotations

from ..ir.stmts import Program
from .canonicalize import Options
from .canonicalize import canonicalize_tile_slice as _canonicalize


def canonicalize_tile_slice(options: Options | None = None):
    """The CanonicalizeTileSlice pass as a callable ``Program -> Program``."""

    def run(program: Program) -> Program:
        return _canonicalize(program, options=options)

    return run


__all__ = ["Options", "canonicalize_tile_slice"]
