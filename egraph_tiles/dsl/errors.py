"""Errors of the DSL reader."""

from __future__ import annotations


class DslError(ValueError):
    """Malformed or ill-typed DSL text.

    ``line`` is 1-based, ``col`` is 1-based (as editors count); ``message`` says what was
    found and what was expected. ``str(err)`` is ``file:line:col: message``.
    A ``ValueError`` subclass, so callers catching ill-typed programs catch it too.
    """

    def __init__(self, file: str, line: int, col: int, message: str):
        self.file = file
        self.line = line
        self.col = col
        self.message = message
        super().__init__(f"{file}:{line}:{col}: {message}")
