"""Reading a long function body a piece at a time, so a 50,000-statement kernel never holds
its whole Python AST (about 10 KB per statement) in memory at once.

``ast.parse`` of the whole text is the reference; this module only cuts the text where that
parse would put statement boundaries and parses the pieces lazily, in order, while the reader
consumes the body:

* the text is cut only when it has no triple-quoted string and no backslash continuation, so
  every line starts outside a string;
* a long function body (the lines after a ``def`` indented deeper than it) is replaced in a
  *skeleton* by ``pass`` and blank lines (line numbers unchanged), and the skeleton is parsed;
* the body is cut at lines indented exactly like its first statement that do not continue a
  compound statement (``else`` / ``elif`` / ``except`` / ``finally``); each piece is parsed on
  its own as the block of an ``if 1:`` placed on the line above it (blank lines before it keep
  line and column numbers); a piece that does not parse (the cut fell inside brackets) is
  joined with the next one.

A piece that parses on its own ends outside any bracket, string or continuation, so it ends on a
statement boundary of the whole text, and the pieces together read exactly as the whole body.
When any piece fails, or the reader raises anything, the caller reads the text again with one
``ast.parse`` (:class:`Fallback`), so errors are always those of the whole-text parse.
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import Iterator

#: bodies shorter than this many lines are parsed with the rest of the text
MIN_LINES = 4000
#: lines per piece (about 2 MB of AST while it is being read)
PIECE_LINES = 1500
#: a piece that does not parse on its own is joined with the next one at most this many times
MAX_JOINS = 3

_DEF = re.compile(r"[ \t]*(?:async[ \t]+)?def[ \t]")
_CONTINUES = ("else", "elif", "except", "finally")


class Fallback(Exception):
    """A piece did not parse on its own: read the text with one ``ast.parse``."""


def _indent(line: str) -> int | None:
    """Indentation of a code line; None for a blank or comment-only line."""
    body = line.lstrip(" \t")
    if not body or body[0] in "\r\n#":
        return None
    return len(line) - len(body)


def _parse(text: str, filename: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings of user text are not ours
        return ast.parse(text, filename=filename)


class LazyBody:
    """A function body read piece by piece; iterating parses each piece when it is reached
    and drops it once the reader moves on."""

    def __init__(self, lines: list[str], start: int, end: int, indent: str, filename: str):
        self.lines, self.start, self.end, self.indent, self.filename = lines, start, end, indent, filename

    def _cuts(self) -> list[int]:
        cuts = [self.start]
        width = len(self.indent)
        for i in range(self.start + PIECE_LINES, self.end, PIECE_LINES):
            j = i
            while j < self.end:
                line = self.lines[j]
                if _indent(line) == width and not line[width:].startswith(_CONTINUES):
                    break
                j += 1
            if j < self.end and j > cuts[-1]:
                cuts.append(j)
        return [*cuts, self.end]

    def __iter__(self) -> Iterator[ast.stmt]:
        cuts = self._cuts()
        a, tries = cuts[0], 0
        for b in cuts[1:]:
            text = "\n" * (a - 1) + "if 1:\n" + "".join(self.lines[a:b])
            try:
                piece = _parse(text, self.filename).body
            except Exception as e:
                # the cut fell inside a bracket: join the next piece (a few times at most)
                tries += 1
                if b == self.end or tries > MAX_JOINS:
                    raise Fallback from e
                continue
            if len(piece) != 1 or not isinstance(piece[0], ast.If):
                raise Fallback
            body = piece[0].body
            del piece
            a, tries = b, 0
            body.reverse()
            while body:  # hand each statement over and keep no reference to it
                yield body.pop()

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __getitem__(self, index: object) -> object:
        """``body[-1]`` (the last statement, from the last piece alone: when the pieces turn out
        not to read as the whole, iterating falls back anyway) and ``body[:-1]``."""
        if index == -1:
            a = self._cuts()[-2]
            try:
                piece = _parse("\n" * (a - 1) + "if 1:\n" + "".join(self.lines[a:self.end]),
                               self.filename).body
            except Exception as e:
                raise Fallback from e
            if len(piece) != 1 or not isinstance(piece[0], ast.If):
                raise Fallback
            return piece[0].body[-1]
        if index == slice(None, -1):
            return _AllButLast(self)
        raise Fallback


class _AllButLast:
    def __init__(self, body: LazyBody):
        self.body = body

    def __iter__(self) -> Iterator[ast.stmt]:
        it = iter(self.body)
        prev = next(it, None)
        for s in it:
            yield prev  # type: ignore[misc]
            prev = s

    def __len__(self) -> int:
        return len(self.body) - 1


def parse(text: str, filename: str) -> ast.Module | None:
    """The module with its long function bodies as :class:`LazyBody`; None when nothing is long
    enough to cut (or the text is not one the cutting is sure to read correctly)."""
    lines = text.splitlines(keepends=True)
    if len(lines) < MIN_LINES or '"""' in text or "'''" in text or "\\\n" in text or "\\\r" in text:
        return None
    regions: list[tuple[int, int, str]] = []
    i = 0
    while i < len(lines):
        if not _DEF.match(lines[i]):
            i += 1
            continue
        d = _indent(lines[i])
        j = i + 1
        while j < len(lines) and _indent(lines[j]) is None:
            j += 1
        width = _indent(lines[j]) if j < len(lines) else None
        if width is None or d is None or width <= d:
            i = j
            continue
        k = j + 1
        while k < len(lines) and (_indent(lines[k]) is None or _indent(lines[k]) >= width):
            k += 1
        if k - j >= MIN_LINES:
            regions.append((j, k, lines[j][:width]))
        i = k
    if not regions:
        return None
    skeleton = list(lines)
    for a, b, ind in regions:
        skeleton[a] = ind + "pass\n"
        skeleton[a + 1:b] = ["\n"] * (b - a - 1)
    try:
        module = _parse("".join(skeleton), filename)
    except Exception:
        return None  # the whole-text parse reports it
    by_line = {a + 1: (a, b, ind) for a, b, ind in regions}
    found = 0
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(node.body) == 1 \
                and isinstance(node.body[0], ast.Pass):
            r = by_line.get(node.body[0].lineno)
            if r is not None and node.body[0].col_offset == len(r[2]):
                node.body = LazyBody(lines, r[0], r[1], r[2], filename)  # type: ignore[assignment]
                found += 1
    return module if found == len(regions) else None
