"""Helpers for the canonicalization tests: wrap a kernel body in a program, run the pass."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import kernel

__all__ = ["assert_canonicalizes", "kernel"]


def assert_canonicalizes(params: str, before: str, after: str, ftype: str = "InCore") -> None:
    prog = et.parse_program(kernel(params, before, ftype=ftype))
    out = et.canonicalize_tile_slice(prog)
    expected = et.parse_program(kernel(params, after, ftype=ftype))
    et.assert_structural_equal(out, expected)
    # idempotent: a second run changes nothing
    et.assert_structural_equal(et.canonicalize_tile_slice(out), out)
