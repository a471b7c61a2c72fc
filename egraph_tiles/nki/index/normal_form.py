"""Python view of an affine normal form read back from the e-graph (``Lin`` terms)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from egraph_tiles.nki.index.expr import AffineExpr, Var

__all__ = ["NFAtom", "NormalForm", "QuasiAtom"]


@dataclass(frozen=True, slots=True)
class QuasiAtom:
    """``operand // d`` (op ``"floordiv"``) or ``operand % d`` (op ``"mod"``), ``d > 0``."""

    op: str
    operand: NormalForm
    d: int

    def __str__(self) -> str:
        sym = "//" if self.op == "floordiv" else "%"
        inner = str(self.operand)
        if len(self.operand.terms) + bool(self.operand.const) > 1:
            inner = f"({inner})"
        return f"({inner} {sym} {self.d})"

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        v = self.operand.evaluate(env)
        return np.floor_divide(v, self.d) if self.op == "floordiv" else np.mod(v, self.d)

    def to_expr(self) -> AffineExpr:
        e = self.operand.to_expr()
        return e // self.d if self.op == "floordiv" else e % self.d


NFAtom = Union[Var, QuasiAtom]


def _atom_key(a: NFAtom) -> tuple[int, str]:
    return (0, a.name) if isinstance(a, Var) else (1, str(a))


@dataclass(frozen=True, slots=True)
class NormalForm:
    """``const + sum(coef * atom)``; terms sorted by atom, no zero coefficients, no duplicates."""

    const: int
    terms: tuple[tuple[NFAtom, int], ...] = ()

    @staticmethod
    def build(const: int, terms: Iterable[tuple[NFAtom, int]]) -> NormalForm:
        """Combine duplicate atoms, drop zero coefficients, sort."""
        acc: dict[NFAtom, int] = {}
        for atom, coef in terms:
            acc[atom] = acc.get(atom, 0) + coef
        kept = sorted(((a, c) for a, c in acc.items() if c != 0), key=lambda t: _atom_key(t[0]))
        return NormalForm(const, tuple(kept))

    @property
    def is_const(self) -> bool:
        return not self.terms

    @property
    def atoms(self) -> tuple[NFAtom, ...]:
        return tuple(a for a, _ in self.terms)

    def coefficient(self, atom: NFAtom) -> int:
        """Coefficient of ``atom`` (0 if absent)."""
        for a, c in self.terms:
            if a == atom:
                return c
        return 0

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        total: Any = self.const
        for atom, coef in self.terms:
            val = env[atom.name] if isinstance(atom, Var) else atom.evaluate(env)
            total = total + coef * val
        return total

    def to_expr(self) -> AffineExpr:
        """Rebuild as an ``AffineExpr`` (canonical shape: terms in order, then the constant)."""
        expr: AffineExpr | None = None
        for atom, coef in self.terms:
            base = AffineExpr.var(atom) if isinstance(atom, Var) else atom.to_expr()
            term = base if coef == 1 else base * coef
            expr = term if expr is None else expr + term
        if expr is None:
            return AffineExpr.const(self.const)
        return expr + self.const if self.const else expr

    def __str__(self) -> str:
        parts = [(str(a) if c == 1 else f"{c}*{a}") for a, c in self.terms]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts)
