"""Parameter values as a user types them, and the kernel's own modules, both read with ``ast``.

* :func:`parse_value` reads a parameter value: Python literals (tuples, lists, dicts, ``None``,
  booleans, nested), ``true`` / ``false`` / ``null`` as JSON spells them, and configuration
  objects ``Name(field=value, ...)`` (a :class:`ConfigCall`, built later from the class ``Name``
  the kernel's file or its imports define).  Anything else is a :class:`ParamText`: a string
  only where the parameter is one.
* :class:`ModuleFinder` resolves ``from .utils import div_ceil``, ``from package.module import
  Cfg`` and ``import config as cfg`` to files next to the kernel (or under a ``--path`` root);
  the reader reads them with ``ast`` and evaluates their functions like the kernel file's own.
  Nothing is imported or executed.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from egraph_tiles.nki.kernels.values import ConfigCall, ParamText

__all__ = ["ModuleFinder", "ParameterError", "parse_value"]

#: libraries the reader knows by name (never looked up as files of the kernel's package)
LIBRARIES = ("neuronxcc", "nki", "numpy", "np", "math", "torch", "jax", "typing", "dataclasses",
             "functools", "enum", "os", "sys", "collections", "abc", "logging", "itertools")


class ParameterError(LookupError):
    """A parameter value the kernel cannot take (not a literal, an unknown class, ...)."""


_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.Div: operator.truediv}


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_literal(e) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literal(node.operand)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        a, b = _literal(node.left), _literal(node.right)
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
            return _ARITH[type(node.op)](a, b)
    if isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args):
        name = ast.unparse(node.func)
        if all(p.isidentifier() for p in name.split(".")) and all(k.arg for k in node.keywords):
            return ConfigCall(name.rsplit(".", 1)[-1], tuple(_literal(a) for a in node.args),
                              tuple((k.arg, _literal(k.value)) for k in node.keywords))
    raise ValueError(ast.unparse(node))


def parse_value(text: str) -> Any:
    """``text`` as a Python literal / JSON value / configuration call, else :class:`ParamText`."""
    try:
        return _literal(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, OverflowError):
        return ParamText(text)


def from_file_value(v: Any) -> Any:
    """A value read from a ``--params`` file: strings may still spell a literal or a config."""
    if isinstance(v, str):
        return ParamText(v)
    if isinstance(v, (list, tuple)):
        return type(v)(from_file_value(x) for x in v)
    return v


def is_str_param(arg: ast.arg, default: ast.expr | None) -> bool:
    """A parameter annotated ``str`` or whose default is a string."""
    ann = arg.annotation
    if isinstance(ann, ast.Name) and ann.id == "str":
        return True
    if isinstance(ann, ast.Constant) and ann.value == "str":
        return True
    return isinstance(default, ast.Constant) and isinstance(default.value, str)


class ModuleFinder:
    """Files of the kernel's package: next to the kernel file (relative imports climb from its
    folder), then under each ``--path`` root and the kernel folder's ancestors."""

    def __init__(self, filename: str, paths: Sequence[str | Path] = ()) -> None:
        path = Path(filename)
        self.home = path.parent if filename and not filename.startswith("<") else None
        roots = [Path(p) for p in paths]
        if self.home is not None:
            roots = [self.home, *roots, *list(self.home.resolve().parents)[:4]]
        self.roots = roots

    @staticmethod
    def _file(base: Path, parts: Sequence[str]) -> Path | None:
        target = base.joinpath(*parts) if parts else base
        for cand in (target.with_suffix(".py") if parts else None, target / "__init__.py"):
            if cand is not None and cand.is_file():
                return cand
        return None

    def find(self, module: str | None, level: int, home: Path | None) -> Path | None:
        """The file of ``module`` imported from a file in folder ``home`` (``level`` dots)."""
        parts = module.split(".") if module else []
        if level:
            base = home if home is not None else self.home
            if base is None:
                return None
            for _ in range(level - 1):
                base = base.parent
            return self._file(base, parts)
        if not parts or parts[0] in LIBRARIES:
            return None
        for root in ([home] if home is not None else []) + self.roots:
            found = self._file(root, parts)
            if found is not None:
                return found
        return None
