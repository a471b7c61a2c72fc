"""The DSL: text → IR (parser), IR → text (printer), decorated classes (language)."""

from .errors import DslError
from .parser import parse_module, parse_program
from ..ir.format import format_expr, format_stmt, format_type, print_program

__all__ = ["DslError", "format_expr", "format_stmt", "format_type", "parse_module",
           "parse_program", "print_program"]
