"""``SymInt``: an integer known per loop iteration -- a normal form, or ``min`` / ``max`` /
sums of them.  Masked counts (``min(128, 446 - 128*t)``) and masked offsets are SymInts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from egraph_tiles.nki.index.expr import Var
from egraph_tiles.nki.index.normal_form import NormalForm, QuasiAtom

__all__ = ["SymInt", "format_nf", "sym_evaluate", "sym_text"]


@dataclass(frozen=True)
class SymInt:
    """``op`` in ``lin`` (args: one NormalForm), ``min`` / ``max`` / ``add`` (args: SymInts)."""

    op: str
    args: tuple[Any, ...]

    @staticmethod
    def lin(nf: NormalForm) -> Value:
        return nf.const if nf.is_const else SymInt("lin", (nf,))

    @staticmethod
    def combine(op: str, items: list[Value]) -> Value:
        """``min`` / ``max`` / ``add`` of ints and SymInts, constants folded."""
        consts = [i for i in items if isinstance(i, int)]
        syms = list(dict.fromkeys(i for i in items if not isinstance(i, int)))
        fold = {"min": min, "max": max, "add": sum}[op]
        if consts:
            c = fold(consts) if op != "add" else sum(consts)
            if not syms:
                return c
            if op != "add":
                syms.insert(0, c)
            elif c != 0:
                syms.append(c)
        if len(syms) == 1:
            return syms[0]
        return SymInt(op, tuple(syms))


Value = Union[int, SymInt]


def sym_evaluate(v: Value | NormalForm, env: Mapping[str, Any]) -> Any:
    """Value of ``v`` for the variable values ``env`` (numpy arrays broadcast)."""
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, NormalForm):
        return v.evaluate(env)
    if v.op == "lin":
        return v.args[0].evaluate(env)
    vals = [sym_evaluate(a, env) for a in v.args]
    if v.op == "add":
        return sum(vals)
    out = vals[0]
    for x in vals[1:]:
        out = np.minimum(out, x) if v.op == "min" else np.maximum(out, x)
    return out


def format_nf(nf: NormalForm, names: Mapping[str, str] | None = None) -> str:
    """Python text of a normal form (``names`` renames variables), e.g. ``128*t + 64``."""
    names = names or {}

    def atom(a: Var | QuasiAtom) -> str:
        if isinstance(a, Var):
            return names.get(a.name, a.name)
        inner = format_nf(a.operand, names)
        if len(a.operand.terms) + bool(a.operand.const) > 1:
            inner = f"({inner})"
        return f"({inner} {'//' if a.op == 'floordiv' else '%'} {a.d})"

    parts: list[str] = []
    for a, c in nf.terms:
        text = atom(a) if abs(c) == 1 else f"{abs(c)}*{atom(a)}"
        if not parts:
            parts.append(text if c > 0 else f"-{text}")
        else:
            parts.append(f"+ {text}" if c > 0 else f"- {text}")
    if not parts:
        return str(nf.const)
    if nf.const and parts[0].startswith("-"):  # 446 - 128*t reads better than -128*t + 446
        parts[0] = f"- {parts[0][1:]}"
        return " ".join([str(nf.const), *parts])
    if nf.const:
        parts.append(f"+ {nf.const}" if nf.const > 0 else f"- {-nf.const}")
    return " ".join(parts)


def sym_text(v: Value | NormalForm, names: Mapping[str, str] | None = None) -> str:
    """Python text of a value: ``min(128, 446 - 128*t)``."""
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, NormalForm):
        return format_nf(v, names)
    if v.op == "lin":
        return format_nf(v.args[0], names)
    if v.op == "add":
        out = sym_text(v.args[0], names)
        for a in v.args[1:]:
            t = sym_text(a, names)
            out += f" - {t[1:]}" if t.startswith("-") and isinstance(a, int) else f" + {t}"
        return out
    return f"{v.op}({', '.join(sym_text(a, names) for a in v.args)})"
