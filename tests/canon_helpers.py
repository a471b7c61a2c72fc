"""Helpers for the canonicalization tests: wrap a kernel body in a program, run the pass."""

from __future__ import annotations

from typing import Iterator

import egraph_tiles as et
from dslkit import kernel

__all__ = ["assert_canonicalizes", "engine_rows", "kernel"]


def assert_canonicalizes(params: str, before: str, after: str, ftype: str = "InCore") -> None:
    prog = et.parse_program(kernel(params, before, ftype=ftype))
    out = et.canonicalize_tile_slice(prog)
    expected = et.parse_program(kernel(params, after, ftype=ftype))
    et.assert_structural_equal(out, expected)
    # idempotent: a second run changes nothing
    et.assert_structural_equal(et.canonicalize_tile_slice(out), out)


def engine_rows(text: str) -> Iterator[tuple[object, dict[str, list[tuple]]]]:
    """For each in-core function of ``text`` with a window: its encoding and the rows the engine
    loads for it (the encoder's and the hoisting facts', without the extraction root tree)."""
    from egraph_tiles.egraph.encode import encode_function
    from egraph_tiles.cost.loops import CostModel, hoist_facts
    from egraph_tiles.ir.effects import function_effects

    program = et.parse_program(text)
    for fn in program.functions:
        fx = function_effects(fn)
        enc = encode_function(fn, fx, program) if fn.func_type.is_incore else None
        if enc is not None and enc.windows:
            yield enc, {**enc.rows, **hoist_facts(fn, fx, enc, CostModel()).rows}
