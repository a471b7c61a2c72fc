"""egglog program text as s-expressions: symbols as ``str``, integers as ``int``, string
literals as :class:`Q`, forms as lists (comments dropped).  Read by the rule checks
(``rulecheck``) and by the schedule (``schedule.core_schedule``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Sexp = Any  # int | str (symbol) | Q (string literal) | list


@dataclass(frozen=True)
class Q:
    """A quoted string literal."""

    s: str


def parse_sexps(text: str) -> list[Sexp]:
    toks: list[Any] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == ";":
            while i < n and text[i] != "\n":
                i += 1
        elif ch in "()":
            toks.append(ch)
            i += 1
        elif ch.isspace():
            i += 1
        elif ch == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            toks.append(Q(text[i + 1:j]))
            i = j + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '()";':
                j += 1
            tok = text[i:j]
            try:
                toks.append(int(tok))
            except ValueError:
                toks.append(tok)
            i = j
    out: list[Sexp] = []
    stack: list[list] = [out]
    for t in toks:
        if t == "(":
            stack.append([])
        elif t == ")":
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(t)
    return out


def show(s: Sexp) -> str:
    if isinstance(s, list):
        return "(" + " ".join(show(x) for x in s) + ")"
    if isinstance(s, Q):
        return f'"{s.s}"'
    return str(s)
