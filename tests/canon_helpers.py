"""Helpers for the canonicalization tests: wrap a kernel body in a program, run the pass."""

from __future__ import annotations

import textwrap

import egraph_tiles as et

HEADER = '''import pypto.language as pl


@pl.program
class K:
    @pl.function(type=pl.FunctionType.{ftype})
    def kernel(self, {params}):
'''


def kernel(params: str, body: str, ftype: str = "InCore") -> str:
    return HEADER.format(ftype=ftype, params=params) + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n"


def assert_canonicalizes(params: str, before: str, after: str, ftype: str = "InCore") -> None:
    prog = et.parse_program(kernel(params, before, ftype))
    out = et.canonicalize_tile_slice(prog)
    expected = et.parse_program(kernel(params, after, ftype))
    et.assert_structural_equal(out, expected)
    # idempotent: a second run changes nothing
    et.assert_structural_equal(et.canonicalize_tile_slice(out), out)
