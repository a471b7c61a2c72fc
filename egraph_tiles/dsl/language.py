"""Decorated classes: write a kernel in your own ``.py`` file and get a ``Program``.

Usage, in your module::

    from egraph_tiles import language as pl

    ROWS, COLS = 16, 64          # module constants are fine: they are read from the AST

    @pl.program
    class Kernel:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[ROWS, COLS], pl.FP32]): ...

    # Kernel is now an egraph_tiles Program

``@pl.program`` never runs your functions: it locates the class in its module's source,
parses the module with :mod:`ast` (resolving constant assignments such as ``ROWS = 16``
or ``SHAPE = [ROWS, COLS]`` from the tree) and returns the parsed :class:`Program`.
Every other ``pl.*`` name is an inert placeholder, so annotations and decorators
evaluate harmlessly when Python defines the class. :func:`load_program` reads a file
without importing it at all.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from ..ir.stmts import Program
from .errors import DslError
from .parser import parse_module


class _Placeholder:
    """An inert stand-in for ``pl.<anything>``: attribute access, subscripts and calls
    return placeholders, so annotations evaluate without meaning anything."""

    def __init__(self, path: str):
        self._path = path

    def __getattr__(self, name: str) -> "_Placeholder":
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self._path}.{name}")

    def __getitem__(self, item: Any) -> "_Placeholder":
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> "_Placeholder":
        return self

    def __repr__(self) -> str:
        return f"<placeholder {self._path}>"


def function(fn: Any = None, **kwargs: Any) -> Any:
    """``@pl.function(type=...)``: marks a method; the real reading happens in
    :func:`program`, from source."""
    if fn is not None and callable(fn):
        return fn
    return lambda f: f


def program(cls: Any = None, **kwargs: Any) -> Any:
    """``@pl.program``: return the decorated class, read from its module source, as a
    :class:`Program`. Raises :class:`DslError` with the module's file and line."""
    if cls is None:
        return lambda c: program(c)
    try:
        filename = inspect.getsourcefile(cls)
    except TypeError:
        filename = None
    if not filename or not Path(filename).exists():
        raise DslError("<unknown>", 1, 1, f"cannot find the source file of class {cls.__name__!r}; "
                       "define @pl.program classes in a .py file")
    return load_program(filename, cls.__name__)


def load_program(path: str | Path, class_name: str | None = None) -> Program:
    """Read the ``@pl.program`` class ``class_name`` (or the only one) of a Python file,
    without importing or executing the file."""
    text = Path(path).read_text(encoding="utf-8")
    return parse_module(text, str(path), class_name=class_name, strict=False)


def __getattr__(name: str) -> _Placeholder:
    if name.startswith("__"):
        raise AttributeError(name)
    return _Placeholder(f"pl.{name}")
