"""Runtime scalars (``scalar[int]``): values known only when the kernel runs.

A :class:`Scalar` is a named runtime value with a dtype and an optional inclusive range; its
``.value`` is the affine variable standing for it.  Integer arithmetic on scalars builds a
:class:`DynamicScalar` (an affine expression over runtime variables).  Adding either to a
``TileIndex`` builds a dynamic (runtime-offset) index; using one as a ``ds``/slice bound makes
the length dynamic, bounded by its supremum.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

from egraph_tiles.nki.index.expr import AffineExpr, scalar_var

__all__ = ["DynamicScalar", "Scalar", "nki_scalar_int_dtype", "scalar"]

#: The integer dtype a runtime scalar must have to be used in an index.
nki_scalar_int_dtype = "int32"
_INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


class _ScalarArith:
    value: AffineExpr
    dtype: str

    def _check_int(self) -> None:
        if self.dtype not in _INT_DTYPES:
            raise TypeError(f"arithmetic on a non-integer scalar (dtype {self.dtype}) is not affine")

    def __add__(self, other: object) -> DynamicScalar:
        self._check_int()
        return DynamicScalar(self.value + _scalar_value(other))

    __radd__ = __add__

    def __sub__(self, other: object) -> DynamicScalar:
        self._check_int()
        return DynamicScalar(self.value - _scalar_value(other))

    def __rsub__(self, other: object) -> DynamicScalar:
        self._check_int()
        return DynamicScalar(_scalar_value(other) - self.value)

    def __neg__(self) -> DynamicScalar:
        self._check_int()
        return DynamicScalar(-self.value)

    def __mul__(self, other: object) -> DynamicScalar:
        self._check_int()
        if not isinstance(other, Integral):
            raise TypeError("unexpected type %s" % type(other))
        return DynamicScalar(self.value * int(other))

    __rmul__ = __mul__


@dataclass(frozen=True, eq=False)
class Scalar(_ScalarArith):
    """A named runtime scalar; ``lo``/``hi`` bound it (needed for a runtime-length slice)."""

    name: str
    dtype: str = nki_scalar_int_dtype
    lo: int | None = None
    hi: int | None = None

    @property
    def value(self) -> AffineExpr:  # type: ignore[override]
        return AffineExpr.var(scalar_var(self.name, self.lo, self.hi))

    def __hash__(self) -> int:
        return hash(("Scalar", self.name, self.dtype, self.lo, self.hi))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scalar) and (self.name, self.dtype, self.lo, self.hi) == (
            other.name, other.dtype, other.lo, other.hi)


#: NKI spelling.
scalar = Scalar


@dataclass(frozen=True, eq=False)
class DynamicScalar(_ScalarArith):
    """A runtime integer value given by an affine expression over runtime scalars."""

    value: AffineExpr  # type: ignore[misc]
    dtype: str = nki_scalar_int_dtype

    def __hash__(self) -> int:
        return hash(("DynamicScalar", self.value, self.dtype))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DynamicScalar) and (self.value, self.dtype) == (other.value, other.dtype)


def _scalar_value(x: object) -> AffineExpr:
    if isinstance(x, Integral):
        return AffineExpr.const(int(x))
    if isinstance(x, (Scalar, DynamicScalar)):
        return x.value
    raise TypeError("unexpected type %s" % type(x))
