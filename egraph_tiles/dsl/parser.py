"""DSL text → IR :class:`Program`.

The text is read with Python's :mod:`ast` only; nothing of it is ever executed.
Every rejection is a :class:`DslError` carrying file, line and column, and saying
what was expected. See docs/dsl.md for the accepted syntax.
"""


from __future__ import annotations

import ast
import gc
import warnings

from ..ir.stmts import Program
from .errors import DslError
from . import chunked
from .forms import MAX_DEPTH, MAX_INPUT_BYTES
from .read_module import ModuleReader

def parse_program(text: str, filename: str = "<input>") -> Program:
    """Parse DSL text holding one ``@pl.program`` class into a :class:`Program`.

    Raises :class:`DslError` (file, line, col, message) on malformed or ill-typed text.
    """
    return _parse(text, filename, class_name=None, strict=True)


def parse_module(text: str, filename: str, class_name: str | None = None,
                 strict: bool = False) -> Program:
    """Parse a user's Python module: take the ``@pl.program`` class ``class_name`` (or the
    only one), resolving module-level constants from the module's AST. Non-strict mode
    ignores module statements that are not constants (the module is never executed)."""
    return _parse(text, filename, class_name=class_name, strict=strict)


# ---------------------------------------------------------------- driver


def _parse(text: object, filename: str, class_name: str | None, strict: bool) -> Program:
    # The reader allocates many short-lived objects and no cycles; pausing the cyclic
    # collector for the call roughly halves the time on large kernels.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse_unguarded(text, filename, class_name, strict)
    finally:
        if enabled:
            gc.enable()


def _parse_unguarded(text: object, filename: str, class_name: str | None, strict: bool) -> Program:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DslError(filename, 1, 1, f"input is not UTF-8 text ({e.reason})") from None
    if not isinstance(text, str):
        raise DslError(filename, 1, 1, f"expected DSL text (str), got {type(text).__name__}")
    if len(text) > MAX_INPUT_BYTES:
        raise DslError(filename, 1, 1, f"input is {len(text)} characters; expected a kernel "
                       f"of at most {MAX_INPUT_BYTES} characters")
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise DslError(filename, line, 1, "input contains a NUL byte; expected Python-syntax text")
    if not text.strip():
        raise DslError(filename, 1, 1, "empty input: expected a class decorated with @pl.program")
    module = chunked.parse(text, filename)
    if module is not None:  # long bodies read piece by piece; any failure: the whole-text parse
        try:
            return ModuleReader(filename, strict).read(module, class_name)
        except Exception:
            pass
        finally:
            del module
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings of user text are not ours
            module = ast.parse(text, filename=filename)
    except SyntaxError as e:
        msg = e.msg or "invalid syntax"
        raise DslError(filename, e.lineno or 1, e.offset or 1,
                       f"{msg}; expected Python-syntax DSL text") from None
    except (RecursionError, MemoryError, ValueError, OverflowError):
        raise DslError(filename, 1, 1, "input is nested too deeply or is too large to "
                       "parse; expected a kernel of ordinary size") from None
    try:
        return ModuleReader(filename, strict).read(module, class_name)
    except RecursionError:
        raise DslError(filename, 1, 1, f"input is nested too deeply; expected at most "
                       f"{MAX_DEPTH} levels") from None

