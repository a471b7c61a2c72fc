"""Helpers every part of the reader shares: error locations and node descriptions."""

from __future__ import annotations

import ast

from ..ir.exprs import Expr, ListExpr, Const, const_int
from .errors import DslError


def located_error(filename: str, node: ast.AST | None, message: str) -> DslError:
    line = getattr(node, "lineno", 1) or 1
    col = (getattr(node, "col_offset", 0) or 0) + 1
    return DslError(filename, line, col, message)


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` → "a.b.c" for a chain of attributes over a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def describe(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return f"the string {node.value!r}"
        return f"the constant {node.value!r}"
    d = dotted(node)
    if d is not None:
        return f"'{d}'"
    return f"a {type(node).__name__} expression"


def fold_constant(e: Expr) -> Expr:
    c = const_int(e)
    if c is not None and not isinstance(e, Const):
        return Const(c)
    if isinstance(e, ListExpr):
        return ListExpr(tuple(fold_constant(i) for i in e.items))
    return e

