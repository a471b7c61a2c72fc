"""Range constructors and slice normalization (seed: "Range Constructors", "Slice Normalisation").

``arange(start, end)[...]`` builds an iteration-axis index; ``ds(start, size)`` is a dynamic
slice.  Slices, ranges and ``ds`` reduce to ``(start, length, step)`` through
:func:`normalize_slice` -> :func:`normalize_range_args` -> :func:`normalize_expr_range_args`;
the last decides static vs dynamic length from the e-graph's constant detection
(``diff.is_const`` / ``diff.c``) or its interval supremum (``diff.supremum``).

``length`` is ``stop - start`` (the span, as in the seed); the number of elements of a
strided slice is :func:`range_count` ``(length, step)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any

from egraph_tiles.nki.index.expr import AffineExpr
from egraph_tiles.nki.index.scalar import DynamicScalar, Scalar
from egraph_tiles.nki.index.tile import NDTile, TileIndex

__all__ = [
    "DynSlice",
    "arange",
    "colon_slice",
    "ds",
    "normalize_expr_range_args",
    "normalize_range_args",
    "normalize_slice",
    "partial_tile_index",
    "range_count",
    "range_diff",
]

_ARANGE_SUBSCRIPT = "Only support `:` or `None` as subscript to arange!"


def colon_slice(i: slice) -> bool:
    """True for a bare ``:``."""
    return i.start is None and i.stop is None and i.step is None


def partial_tile_index(shape: tuple[int, ...]) -> tuple[TileIndex, ...]:
    """One TileIndex per axis of ``shape`` (first axis = partition, rest = free), source order."""
    shape = tuple(int(d) for d in shape)
    if not shape:
        raise ValueError("partial_tile_index needs at least one axis")
    tile = NDTile(shape[:1], shape[1:], is_partial=True)
    return tuple(TileIndex(idx.e, tile) for idx in tile.source_axes())


@dataclass(frozen=True)
class arange:  # noqa: N801 - NKI spelling
    """Compile-time iteration axis ``[start, end)``; subscript it with one ``:`` (and ``None``s)."""

    start: int
    end: int | None = None

    def __post_init__(self) -> None:
        if self.end is None:
            object.__setattr__(self, "end", self.start)
            object.__setattr__(self, "start", 0)
        if not isinstance(self.start, Integral) or not isinstance(self.end, Integral):
            raise TypeError("unexpected type %s" % type(self.end))
        if self.end <= self.start:
            raise ValueError(f"arange({self.start}, {self.end}) is empty")

    @property
    def tripcount(self) -> int:
        return int(self.end) - int(self.start)  # type: ignore[operator]

    def __getitem__(self, item: Any) -> TileIndex:
        def _check_index(i: Any) -> int:
            if isinstance(i, slice):
                if not colon_slice(i):
                    raise IndexError(_ARANGE_SUBSCRIPT)
                return self.tripcount
            if i is None:
                return 1
            raise IndexError(_ARANGE_SUBSCRIPT)

        if isinstance(item, (list, set, dict)) or hasattr(item, "__array__"):
            raise IndexError("Only support multi-dimensional subscript to arange!")
        if not isinstance(item, tuple):
            item = (item,)
        shape = tuple(_check_index(i) for i in item)
        colons = [k for k, i in enumerate(item) if isinstance(i, slice)]
        if len(colons) != 1:
            raise IndexError("Need exact 1 `:` in the subscript to arange!")
        idx = partial_tile_index(shape)[colons[0]]
        return idx + int(self.start) if self.start else idx


@dataclass(frozen=True)
class DynSlice:
    """``ds(start, size)``: ``size`` elements from ``start`` (either may be a runtime scalar)."""

    start: Any
    size: Any

    @property
    def stop(self) -> Any:
        return self.start + self.size


def ds(start: Any, size: Any) -> DynSlice:
    """Dynamic slice of ``size`` elements starting at ``start``."""
    return DynSlice(start, size)


def range_count(length: int, step: int) -> int:
    """Number of elements of ``range(0, length, step)``."""
    return len(range(0, length, step))


def normalize_slice(idx: slice, length: int) -> tuple[Any, int, int]:
    """Fill ``None`` defaults of a Python slice from the dimension length, then normalize."""
    step = idx.step if idx.step is not None else 1
    start = idx.start if idx.start is not None else 0
    stop = idx.stop if idx.stop is not None else length
    return normalize_range_args(slice(start, stop, step), length=length)


def _is_bound(v: Any) -> bool:
    return isinstance(v, (Integral, Scalar, DynamicScalar, AffineExpr))


def normalize_range_args(range_or_slice: Any, length: int | None = None) -> tuple[Any, int, int]:
    """Unpack a slice / range / ``ds``, reject step 0, and decide the length."""
    if isinstance(range_or_slice, DynSlice):
        start, stop, step = range_or_slice.start, range_or_slice.stop, 1
    elif isinstance(range_or_slice, (slice, range)):
        start, stop, step = range_or_slice.start, range_or_slice.stop, range_or_slice.step
        step = 1 if step is None else step
        start = 0 if start is None else start
        if stop is None:
            if length is None:
                raise ValueError(f"Unexpected type of stop/start in {range_or_slice!r}")
            stop = length
    else:
        raise TypeError("unexpected type %s" % type(range_or_slice))
    if not _is_bound(start) or not _is_bound(stop):
        raise ValueError(f"Unexpected type of stop/start in {range_or_slice!r}")
    if not isinstance(step, Integral):
        raise ValueError(f"step of {range_or_slice!r} must be an int")
    if step == 0:
        raise ValueError("step of `...` must be non-zero")
    return normalize_expr_range_args(start, stop, int(step), range_or_slice)


def _as_scalar_expr(v: Any, name: str) -> Any:
    if isinstance(v, (Scalar, DynamicScalar)):
        return v.value
    if isinstance(v, AffineExpr):
        return v
    if isinstance(v, Integral):
        return int(v)
    raise ValueError(f"`{name}` must be int or scalar[int]")


def _diff_expr(start: Any, stop: Any) -> AffineExpr:
    diff = stop - start
    return diff if isinstance(diff, AffineExpr) else AffineExpr.const(diff)


def range_diff(range_or_slice: Any, length: int | None = None) -> AffineExpr | None:
    """The ``stop - start`` expression :func:`normalize_expr_range_args` will ask about
    (``None`` when both bounds are ints) -- lets a kernel pre-solve all of them in one e-graph."""
    if isinstance(range_or_slice, DynSlice):
        start, stop = range_or_slice.start, range_or_slice.stop
    elif isinstance(range_or_slice, (slice, range)):
        start = 0 if range_or_slice.start is None else range_or_slice.start
        stop = length if range_or_slice.stop is None else range_or_slice.stop
    else:
        return None
    if isinstance(start, Integral) and isinstance(stop, Integral):
        return None
    try:
        return _diff_expr(_as_scalar_expr(start, "start"), _as_scalar_expr(stop, "stop"))
    except (ValueError, TypeError):
        return None  # reported by the normalization itself


def normalize_expr_range_args(start: Any, stop: Any, step: int, range_or_slice: Any) -> tuple[Any, int, int]:
    """``(start, length, step)``: constant ``stop - start`` gives ``diff.c``; otherwise step
    must be 1 and the static extent is ``diff.supremum``."""
    start = _as_scalar_expr(start, "start")
    stop = _as_scalar_expr(stop, "stop")
    diff = _diff_expr(start, stop)
    if diff.is_const:
        length = diff.c
    else:
        if step != 1:
            raise ValueError(
                "step of `...` must be 1 when `stop - start` is not compile time constant"
            )
        sup = diff.supremum
        if sup is None:
            raise ValueError(
                f"cannot bound `stop - start` = {diff.normal_form()} of {range_or_slice!r}: "
                "give its runtime scalars a range (lo/hi)"
            )
        length = sup
    return start, length, step
