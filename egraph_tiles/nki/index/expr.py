"""``AffineExpr``: immutable quasi-affine integer expressions over loop axes and runtime scalars.

An ``AffineExpr`` is *syntax*: building one (``e + 1``, ``e * 16``, ``e // 4``,
``e.substitute({...})``) is cheap Python.  Its algebra -- the canonical normal form, constant
detection (``is_const`` / ``c``), substitution of loop axes and interval bounds
(``supremum`` / ``infimum``) -- is computed by the egglog rules in ``egraph_tiles.rules``
through :mod:`egraph_tiles.nki.index.solver`.  Those properties solve one expression at a time
(memoized); to solve a whole kernel in one e-graph use :func:`egraph_tiles.nki.index.solver.solve`
or :class:`~egraph_tiles.nki.index.solver.AffineSolver` first, which fills the same memo.

Only integer ``+ - *`` and ``//``, ``%`` by positive integer constants are representable:
the index layer stays (quasi-)affine by construction.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from numbers import Integral
from typing import TYPE_CHECKING, Any

import numpy as np

#: The solver's ``solution_of``, registered by ``egraph_tiles.nki.index.solver`` when it is
#: imported (the solver builds on AffineExpr; importing it here would be a cycle).
HOOKS: dict[str, Any] = {}

if TYPE_CHECKING:
    from egraph_tiles.nki.index.normal_form import NormalForm

__all__ = ["AffineExpr", "Var", "axis_var", "scalar_var", "wrap_expr"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


@dataclass(frozen=True, slots=True)
class Var:
    """A variable of an affine expression: a loop axis or a runtime ``scalar[int]``.

    ``lo`` / ``hi`` are the inclusive range (``None`` = unbounded); a loop axis of tripcount
    ``n`` has range ``[0, n - 1]``.  The range is part of the identity.
    """

    name: str
    lo: int | None = None
    hi: int | None = None
    kind: str = "scalar"

    def __post_init__(self) -> None:
        if self.lo is not None and self.hi is not None and self.lo > self.hi:
            raise ValueError(f"empty range [{self.lo}, {self.hi}] for variable {self.name!r}")
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"invalid variable name {self.name!r} (use letters, digits, _ and .)")

    def __str__(self) -> str:
        return self.name


def axis_var(name: str, tripcount: int) -> Var:
    """A loop axis iterating ``0 .. tripcount - 1``."""
    if tripcount < 1:
        raise ValueError(f"tripcount of axis {name!r} must be >= 1, got {tripcount}")
    return Var(name, 0, tripcount - 1, "axis")


def scalar_var(name: str, lo: int | None = None, hi: int | None = None) -> Var:
    """A runtime scalar with an optional inclusive range."""
    return Var(name, lo, hi, "scalar")


class AffineExpr:
    """A node of a quasi-affine expression tree (``op`` in const/var/add/mul/floordiv/mod/subst).

    Nodes are hash-consed (a pure, weak interning cache): structurally equal expressions are
    the same object, so equality and dictionary look-ups are O(1).
    """

    __slots__ = ("__dict__", "__weakref__", "_hash", "args", "op")

    op: str
    args: tuple[Any, ...]

    def __new__(cls, op: str, *args: Any) -> AffineExpr:
        key = (op, args)
        hit = _INTERN.get(key)
        if hit is not None:
            return hit
        self = object.__new__(cls)
        self.op = op
        self.args = args
        self._hash = hash(key)
        _INTERN[key] = self
        return self

    # ----- constructors ---------------------------------------------------------------------
    @staticmethod
    def const(value: int) -> AffineExpr:
        """The integer constant ``value``."""
        return AffineExpr("const", int(value))

    @staticmethod
    def var(v: Var) -> AffineExpr:
        """The variable ``v``."""
        return AffineExpr("var", v)

    # ----- identity -------------------------------------------------------------------------
    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        """Structural equality of syntax (interned: identity); :meth:`equiv` is mathematical."""
        if not isinstance(other, AffineExpr):
            return NotImplemented
        return self is other

    def __reduce__(self) -> tuple[Any, ...]:
        return (AffineExpr, (self.op, *self.args))

    def __repr__(self) -> str:
        return f"AffineExpr({self})"

    def __str__(self) -> str:
        op, a = self.op, self.args
        if op == "const":
            return str(a[0])
        if op == "var":
            return a[0].name
        if op == "add":
            return f"({a[0]} + {a[1]})"
        if op == "mul":
            return f"{a[0]} * {a[1]}"
        if op == "floordiv":
            return f"({a[0]} // {a[1]})"
        if op == "mod":
            return f"({a[0]} % {a[1]})"
        binds = ", ".join(f"{v.name}->{t}" for v, t in a[1])
        return f"{a[0]}[{binds}]"

    # ----- arithmetic (affine only) ---------------------------------------------------------
    def __add__(self, other: object) -> AffineExpr:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        return AffineExpr("add", self, o)

    def __radd__(self, other: object) -> AffineExpr:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        return AffineExpr("add", o, self)

    def __neg__(self) -> AffineExpr:
        return AffineExpr("mul", self, -1)

    def __sub__(self, other: object) -> AffineExpr:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        return AffineExpr("add", self, -o)

    def __rsub__(self, other: object) -> AffineExpr:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        return AffineExpr("add", o, -self)

    def __mul__(self, other: object) -> AffineExpr:
        if isinstance(other, Integral):
            return AffineExpr("mul", self, int(other))
        raise TypeError("unexpected type %s" % type(other))

    __rmul__ = __mul__

    def __floordiv__(self, other: object) -> AffineExpr:
        return AffineExpr("floordiv", self, _positive_divisor(other, "//"))

    def __mod__(self, other: object) -> AffineExpr:
        return AffineExpr("mod", self, _positive_divisor(other, "%"))

    def substitute(self, subst_map: Mapping[Var, object]) -> AffineExpr:
        """Replace loop axes / scalars simultaneously (``QuasiAffineExpr::substituteLoopAxes``).

        ``subst_map`` maps a :class:`Var` to an int or an ``AffineExpr``.  The result is lazy
        syntax; its normal form is computed by the ``affine_rules`` substitution rules.
        """
        if not subst_map:
            return self
        items = tuple(sorted(((v, wrap_expr(t)) for v, t in subst_map.items()),
                             key=lambda it: it[0].name))
        return AffineExpr("subst", self, items)

    # ----- structure ------------------------------------------------------------------------
    @cached_property
    def free_vars(self) -> frozenset[Var]:
        """Variables the expression may depend on (syntactic over-approximation)."""
        op, a = self.op, self.args
        if op == "const":
            return frozenset()
        if op == "var":
            return frozenset((a[0],))
        if op == "add":
            return a[0].free_vars | a[1].free_vars
        if op in ("mul", "floordiv", "mod"):
            return a[0].free_vars
        mapped = {v for v, _ in a[1]}
        out = a[0].free_vars - mapped
        for _, t in a[1]:
            out |= t.free_vars
        return out

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """Evaluate with numpy: ``env`` maps variable names to ints or integer arrays.

        ``//`` and ``%`` have floor semantics (Python / numpy); arrays broadcast.
        """
        op, a = self.op, self.args
        if op == "const":
            return a[0]
        if op == "var":
            try:
                return env[a[0].name]
            except KeyError:
                raise KeyError(f"no value for variable {a[0].name!r}") from None
        if op == "add":
            return a[0].evaluate(env) + a[1].evaluate(env)
        if op == "mul":
            return a[0].evaluate(env) * a[1]
        if op == "floordiv":
            return np.floor_divide(a[0].evaluate(env), a[1])
        if op == "mod":
            return np.mod(a[0].evaluate(env), a[1])
        inner_env = dict(env)
        for v, t in a[1]:
            inner_env[v.name] = t.evaluate(env)
        return a[0].evaluate(inner_env)

    # ----- algebra, solved by the e-graph ------------------------------------------------------
    def normal_form(self) -> NormalForm:
        """Canonical normal form (raises ``ValueError`` if the expression has none)."""
        sol = HOOKS["solution_of"](self)
        if sol.normal_form is None:
            raise ValueError(f"{self} has no affine normal form")
        return sol.normal_form

    @property
    def is_const(self) -> bool:
        """True when the normal form is a constant."""
        return self.normal_form().is_const

    @property
    def c(self) -> int:
        """The constant part of the normal form (the value when :attr:`is_const`)."""
        return self.normal_form().const

    @property
    def supremum(self) -> int | None:
        """Inclusive upper bound from the variable ranges (``None`` if unbounded)."""
        return HOOKS["solution_of"](self).hi

    @property
    def infimum(self) -> int | None:
        """Inclusive lower bound from the variable ranges (``None`` if unbounded)."""
        return HOOKS["solution_of"](self).lo

    def equiv(self, other: object) -> bool:
        """Mathematical equality: same normal form."""
        return self.normal_form() == wrap_expr(other).normal_form()


_INTERN: weakref.WeakValueDictionary[tuple[Any, ...], AffineExpr] = weakref.WeakValueDictionary()


def _coerce(x: object) -> AffineExpr | None:
    if isinstance(x, AffineExpr):
        return x
    if isinstance(x, Integral):
        return AffineExpr.const(int(x))
    return None


def _positive_divisor(other: object, op: str) -> int:
    if not isinstance(other, Integral):
        raise TypeError("unexpected type %s" % type(other))
    if int(other) <= 0:
        raise ValueError(f"'{op}' of an affine index by a non-positive integer ({other}) is not supported")
    return int(other)


def wrap_expr(x: object) -> AffineExpr:
    """Lift an int, an ``AffineExpr``, or anything with an affine ``.value`` / ``.e`` into an AffineExpr."""
    if isinstance(x, AffineExpr):
        return x
    if isinstance(x, Integral):
        return AffineExpr.const(int(x))
    inner = getattr(x, "e", None)
    if isinstance(inner, AffineExpr):
        return inner
    inner = getattr(x, "value", None)
    if isinstance(inner, AffineExpr):
        return inner
    raise TypeError("unexpected type %s" % type(x))
