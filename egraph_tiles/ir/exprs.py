"""Expressions of the tile IR.

Values are SSA variables (:class:`Var`, identity-compared objects) and expressions built
from them: constants, scalar arithmetic, comparisons, lists (shapes / offsets),
symbolic enum literals (``pl.Mem.Vec``, ``pl.FP32``, ``pl.PadValue.zero``) and calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from .types import DType, MemorySpace, ScalarType, TensorType, TileType, TupleType, Type

_var_counter = 0


class Var:
    """An SSA variable. Compared by identity; ``name`` is only a printing hint."""

    __slots__ = ("name", "type", "uid")

    def __init__(self, name: str, type: Type | None = None):
        global _var_counter
        _var_counter += 1
        self.name = name
        self.type = type
        self.uid = _var_counter

    def __repr__(self) -> str:
        return f"Var({self.name}#{self.uid})"


class Expr:
    """Base of all expressions."""

    #: expression nodes are slotted (``slots=True``): a long kernel holds ~10 IR nodes per
    #: statement, each ~40 bytes smaller without an instance dict
    __slots__ = ()


@dataclass(frozen=True, eq=True, slots=True)
class Const(Expr):
    """An int, float or bool literal."""

    value: int | float | bool

    def __repr__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, eq=False, slots=True)
class VarRef(Expr):
    """A use of a variable."""

    var: Var

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VarRef) and other.var is self.var

    def __hash__(self) -> int:
        return hash(("VarRef", id(self.var)))

    def __repr__(self) -> str:
        return self.var.name


#: binary scalar operators in the DSL and their Python spelling (only + - * // % are folded
#: or reasoned about; the others are kept as written)
BIN_OPS = ("+", "-", "*", "//", "%", "/", "**", "&", "|", "^", "<<", ">>", "and", "or")
CMP_OPS = ("<", "<=", ">", ">=", "==", "!=")


@dataclass(frozen=True, slots=True)
class _Binary(Expr):
    """``lhs op rhs``; the subclass says which operator set ``op`` is from."""

    op: str
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, slots=True)
class BinOp(_Binary):
    """Scalar arithmetic; ``op`` is one of BIN_OPS."""


@dataclass(frozen=True, slots=True)
class Neg(Expr):
    operand: Expr


@dataclass(frozen=True, slots=True)
class Compare(_Binary):
    """A comparison; ``op`` is one of CMP_OPS."""


@dataclass(frozen=True, slots=True)
class ListExpr(Expr):
    """A bracketed list or tuple of expressions: shapes, offsets, init values."""

    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Symbol(Expr):
    """A dotted enum-like literal: ``pl.Mem.Vec`` → Symbol(("Mem", "Vec")) with ``value``
    the decoded Python value when known (a MemorySpace, a DType) or None."""

    path: tuple[str, ...]
    value: MemorySpace | DType | None = None


@dataclass(frozen=True, slots=True)
class StrConst(Expr):
    value: str


@dataclass(frozen=True, slots=True)
class DictExpr(Expr):
    """A dict literal, as PyPTO prints attribute keywords: ``attrs={"some_flag": True}``,
    ``pl.func_attr({"split": pl.SplitMode.UP_DOWN})``."""

    items: tuple[tuple[Expr, Expr], ...]


@dataclass(frozen=True, slots=True)
class TupleItem(Expr):
    """Element ``index`` of a tuple value: ``ret[0]`` for ``ret`` returned by a call of a
    function with several results."""

    value: Expr
    index: int


@dataclass(frozen=True, slots=True)
class DynDim(Expr):
    """A dynamic dimension declared at module level, ``N = pl.dynamic("N")``: an INDEX
    value fixed per launch, named in shapes."""

    name: str


@dataclass(frozen=True, eq=False, slots=True)
class Call(Expr):
    """A call: ``op`` is the dotted op name without the ``pl.`` prefix for pl ops
    (``tile.slice``, ``store``), ``self.<fn>`` for calls of program functions, or the
    full dotted spelling of an unknown op (``pld.tile.remote_store``)."""

    op: str
    args: tuple[Expr, ...]
    kwargs: tuple[tuple[str, Expr], ...] = field(default_factory=tuple)

    def kwarg(self, name: str) -> Expr | None:
        for k, v in self.kwargs:
            if k == name:
                return v
        return None

    def with_args(self, args: tuple[Expr, ...], kwargs: tuple[tuple[str, Expr], ...] | None = None) -> Call:
        return Call(self.op, args, self.kwargs if kwargs is None else kwargs)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Call)
            and other.op == self.op
            and other.args == self.args
            and other.kwargs == self.kwargs
        )

    def __hash__(self) -> int:
        return hash((self.op, self.args, self.kwargs))


ExprLike = Union[Expr, int, float, bool, Var]


def as_expr(x: ExprLike) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, Var):
        return VarRef(x)
    if isinstance(x, (bool, int, float)):
        return Const(x)
    raise TypeError(f"cannot make an expression of {x!r}")


def const_int(e: Expr | int) -> int | None:
    """The value of ``e`` when it is an integer literal (or folds to one), else None."""
    t = type(e)
    if t is Const:  # the common case first (exact type checks: no bool, no subclass walk)
        v = e.value  # type: ignore[union-attr]
        if type(v) is int:
            return v
    elif t is int:
        return e  # type: ignore[return-value]
    if isinstance(e, int) and not isinstance(e, bool):
        return e
    if isinstance(e, Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    if isinstance(e, Neg):
        v = const_int(e.operand)
        return None if v is None else -v
    if isinstance(e, BinOp):
        a, b = const_int(e.lhs), const_int(e.rhs)
        if a is None or b is None:
            return None
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            return a * b
        if b == 0:
            return None
        if e.op == "//":
            return a // b
        if e.op == "%":
            return a % b
    return None


def const_shape(t: TileType | TensorType) -> tuple[int, ...] | None:
    """The shape of a tile or tensor type as ints when every dimension is a compile-time
    constant, else None."""
    dims = [const_int(d) for d in t.shape]
    if any(d is None for d in dims):
        return None
    return tuple(dims)  # type: ignore[arg-type]


def children(e: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``e``."""
    t = type(e)
    if t is BinOp or t is Compare:
        return (e.lhs, e.rhs)  # type: ignore[attr-defined]
    if t is Neg:
        return (e.operand,)  # type: ignore[attr-defined]
    if t is ListExpr:
        return e.items  # type: ignore[attr-defined]
    if t is Call:
        return e.args + tuple(v for _, v in e.kwargs)  # type: ignore[attr-defined]
    if t is DictExpr:
        return tuple(x for kv in e.items for x in kv)  # type: ignore[attr-defined]
    if t is TupleItem:
        return (e.value,)  # type: ignore[attr-defined]
    return ()


def sub_exprs(e: Expr):
    """``e`` and every expression inside it, depth first."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(children(x)))


#: expressions with no sub-expressions and no variable (what :func:`var_reads` need not open)
_LEAVES = frozenset({Const, Symbol, StrConst, DynDim})


def var_reads(e: Expr, out: list[Var] | None = None) -> list[Var]:
    """Every variable ``e`` reads, once per occurrence, in the depth-first order of
    :func:`sub_exprs` (the same walk, without a generator step per sub-expression)."""
    if out is None:
        out = []
    t = type(e)
    if t is VarRef:
        out.append(e.var)  # type: ignore[attr-defined]
    elif t is Call:  # (the common nodes by exact type: no children tuple built)
        _reads(e.args, out)  # type: ignore[attr-defined]
        if e.kwargs:  # type: ignore[attr-defined]
            _reads([v for _, v in e.kwargs], out)  # type: ignore[attr-defined]
    elif t is ListExpr:
        _reads(e.items, out)  # type: ignore[attr-defined]
    elif t not in _LEAVES:
        _reads(children(e), out)
    return out


def _reads(items: tuple[Expr, ...] | list[Expr], out: list[Var]) -> None:
    """:func:`var_reads` of each of ``items``, in order."""
    for c in items:
        tc = type(c)
        if tc is VarRef:
            out.append(c.var)  # type: ignore[attr-defined]
        elif tc not in _LEAVES:
            var_reads(c, out)


def free_vars(e: Expr) -> list[Var]:
    """Variables used by ``e``, in first-use order."""
    reads = var_reads(e)
    return reads if len(reads) < 2 else list(dict.fromkeys(reads))  # (a Var hashes by identity)


def substitute(e: Expr, mapping: dict[int, Expr]) -> Expr:
    """Replace uses of variables (keyed by ``id(var)``) by expressions."""
    if isinstance(e, VarRef):
        return mapping.get(id(e.var), e)
    if isinstance(e, BinOp):
        return BinOp(e.op, substitute(e.lhs, mapping), substitute(e.rhs, mapping))
    if isinstance(e, Compare):
        return Compare(e.op, substitute(e.lhs, mapping), substitute(e.rhs, mapping))
    if isinstance(e, Neg):
        return Neg(substitute(e.operand, mapping))
    if isinstance(e, ListExpr):
        return ListExpr(tuple(substitute(i, mapping) for i in e.items))
    if isinstance(e, Call):
        return Call(
            e.op,
            tuple(substitute(a, mapping) for a in e.args),
            tuple((k, substitute(v, mapping)) for k, v in e.kwargs),
        )
    if isinstance(e, DictExpr):
        return DictExpr(tuple((substitute(k, mapping), substitute(v, mapping)) for k, v in e.items))
    if isinstance(e, TupleItem):
        return TupleItem(substitute(e.value, mapping), e.index)
    return e


def static_type(e: Expr) -> Type | None:
    """The type of a variable use, a literal, a comparison or scalar arithmetic (INDEX);
    None for anything else (calls, lists, symbols)."""
    if isinstance(e, VarRef):
        return e.var.type
    if isinstance(e, Const):
        if isinstance(e.value, bool):
            return ScalarType(DType.BOOL)
        return ScalarType(DType.INDEX if isinstance(e.value, int) else DType.FP32)
    if isinstance(e, Compare):
        return ScalarType(DType.BOOL)
    if isinstance(e, (BinOp, Neg, DynDim)):
        return ScalarType(DType.INDEX)
    if isinstance(e, TupleItem):
        t = static_type(e.value)
        if isinstance(t, TupleType) and 0 <= e.index < len(t.elements):
            return t.elements[e.index]
    return None
