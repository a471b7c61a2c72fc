"""egraph_tiles: an equality-saturation optimizer for NPU tile programs.

The public API (see README): parse / print the PyPTO-style tile DSL, compare programs
structurally, verify them, and optimize them (today: the CanonicalizeTileSlice pass).
"""

from . import passes
from .passes import optimize
from .batch import FileResult, optimize_files
from .dsl import DslError, parse_program, print_program
from .ir.equality import assert_structural_equal, structural_equal
from .ir.stmts import Program
from .ir.verify import verify_program
from .passes.canonicalize import Options, Report, canonicalize_tile_slice


__all__ = [
    "DslError", "FileResult", "Options", "Program", "Report", "assert_structural_equal",
    "canonicalize_tile_slice", "optimize", "optimize_files", "parse_program", "passes",
    "print_program", "structural_equal", "verify_program",
]
