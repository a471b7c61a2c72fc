"""The bridge to PyPTO: our CanonicalizeTileSlice as a pass of PyPTO's own pipeline.

Importing this module imports PyPTO (the optional extra ``egraph-tiles[pypto]``, or a local
build); ``import egraph_tiles`` never does.  Three entry points:

* :func:`optimize_program` — a PyPTO ``Program`` in, a PyPTO ``Program`` out: printed with
  PyPTO's printer, read and optimized by egraph_tiles, printed by us and parsed back with PyPTO's
  parser.  A program we reject raises our error (:class:`~egraph_tiles.DslError` for a form we
  cannot read, ``ValueError`` naming the statement and the rule otherwise);
* :func:`canonicalize_tile_slice` — that transform as a PyPTO pass object, usable wherever
  ``pypto.passes.canonicalize_tile_slice()`` is (same name and declared IR properties);
* :func:`run_pipeline` — PyPTO's default pass pipeline with ours in place of its
  CanonicalizeTileSlice.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pypto.language as pl
from pypto import passes
from pypto.ir import python_print
from pypto.ir.pass_manager import OptimizationStrategy, PassManager

from .. import optimize, parse_program, print_program
from ..ir.exprs import Call
from ..ir.mutator import Mutated, StmtMutator, replaced
from ..ir.stmts import AssignStmt, Program
from ..passes.canonicalize import Options

#: the name of the pass ours replaces in PyPTO's pipeline
PASS_NAME = "CanonicalizeTileSlice"
#: PyPTO's own factory, kept so that ours still finds it when a caller has put ours in its place
_THEIRS = passes.canonicalize_tile_slice


class PyptoParseError(ValueError):
    """PyPTO's parser rejected the program we printed (a bug of ours: please report it with the
    program)."""


class _OneStorePartition(StmtMutator):
    """A store whose ND partition was appended twice (the fifth operand PyPTO's IR holds after
    FlattenTileNdTo2D, equal to the fourth) with it once: PyPTO's parser takes at most four
    operands, and its code generator reads only the fourth."""

    def visit_AssignStmt(self, s: AssignStmt) -> Mutated:
        v = s.value
        if isinstance(v, Call) and v.op == "tile.store" and len(v.args) == 5 and v.args[3] == v.args[4]:
            return replaced(s, value=replace(v, args=v.args[:4]))
        return s


def pypto_text(program: Program) -> str:
    """Our ``program`` printed for PyPTO's parser: a variable that replaces another one never
    read after it keeps its name, as PyPTO names them, and a store carries its partition once."""
    fns = [replace(f, body=_OneStorePartition().mutate_body(f.body)) for f in program.functions]
    return print_program(replace(program, functions=fns), rebind=True)


def optimize_program(program: Any, *, options: Options | None = None,
                     filename: str = "<pypto program>") -> Any:
    """``program`` (a ``pypto.ir.Program``) optimized by egraph_tiles' CanonicalizeTileSlice."""
    text = python_print(program)
    ours = optimize(parse_program(text, filename=filename), options=options)
    printed = pypto_text(ours)
    try:
        return pl.parse(printed, filename=filename)
    except Exception as e:  # noqa: BLE001  (PyPTO raises several of its own kinds)
        raise PyptoParseError(f"PyPTO's parser rejected the optimized program: "
                              f"{type(e).__name__}: {e}") from e


def canonicalize_tile_slice(options: Options | None = None) -> Any:
    """Our pass as a PyPTO ``Pass`` named ``CanonicalizeTileSlice``, declaring the IR properties
    PyPTO's own pass declares (so the pipeline's property checks see no difference)."""
    theirs = _THEIRS()
    props = passes.PassProperties(theirs.get_required_properties(),
                                  theirs.get_produced_properties(),
                                  theirs.get_invalidated_properties())
    return passes.create_program_pass(lambda p: optimize_program(p, options=options),
                                      PASS_NAME, props)


def pipeline(options: Options | None = None,
             strategy: OptimizationStrategy = OptimizationStrategy.Default) -> Any:
    """PyPTO's pass pipeline for ``strategy`` (a ``passes.PassPipeline``) with our pass in place
    of its CanonicalizeTileSlice.  Build it inside the ``PassContext`` it runs in, as PyPTO's
    ``PassManager`` requires."""
    out = passes.PassPipeline()
    replaced = 0
    for p in PassManager.get_strategy(strategy).passes:
        if p.get_name() == PASS_NAME:
            p, replaced = canonicalize_tile_slice(options), replaced + 1
        out.add_pass(p)
    if replaced != 1:
        raise RuntimeError(f"PyPTO's pipeline has {replaced} passes named {PASS_NAME}; expected one")
    return out


def run_pipeline(program: Any, options: Options | None = None,
                 strategy: OptimizationStrategy = OptimizationStrategy.Default) -> Any:
    """``program`` through PyPTO's whole pass pipeline, with our CanonicalizeTileSlice."""
    return pipeline(options, strategy).run(program)


__all__ = ["PASS_NAME", "PyptoParseError", "canonicalize_tile_slice", "optimize_program",
           "pipeline", "pypto_text", "run_pipeline"]
