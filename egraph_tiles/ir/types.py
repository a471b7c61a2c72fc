"""Types of the tile IR: dtypes, memory spaces, tile / tensor / scalar types."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from .exprs import Expr


#: ``pl.`` calls allowed only inside type annotations (stored, like registered ops, without
#: their ``pl.`` prefix)
TYPE_CALLS = frozenset({"TileView", "TensorView", "MemRef"})


class DType(Enum):
    """Element types. ``bits`` is the logical width, ``storage_bits`` what one element
    occupies in a tile buffer (4-bit types pack as 4, BOOL is stored as a byte)."""

    BOOL = ("BOOL", 1)
    INT4 = ("INT4", 4)
    UINT4 = ("UINT4", 4)
    FP4 = ("FP4", 4)
    INT8 = ("INT8", 8)
    UINT8 = ("UINT8", 8)
    FP8 = ("FP8", 8)
    FP8E4M3FN = ("FP8E4M3FN", 8)
    FP8E5M2 = ("FP8E5M2", 8)
    HF8 = ("HF8", 8)
    INT16 = ("INT16", 16)
    UINT16 = ("UINT16", 16)
    FP16 = ("FP16", 16)
    BF16 = ("BF16", 16)
    INT32 = ("INT32", 32)
    UINT32 = ("UINT32", 32)
    FP32 = ("FP32", 32)
    INT64 = ("INT64", 64)
    UINT64 = ("UINT64", 64)
    INDEX = ("INDEX", 64)

    @property
    def bits(self) -> int:
        return self.value[1]

    @property
    def storage_bits(self) -> int:
        if self is DType.BOOL:
            return 8
        return self.value[1]

    @property
    def is_float(self) -> bool:
        return self.name.startswith(("FP", "BF", "HF"))

    @property
    def is_int(self) -> bool:
        return not self.is_float and self is not DType.BOOL

    def __repr__(self) -> str:
        return f"pl.{self.name}"


class MemorySpace(Enum):
    DDR = "DDR"
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"
    Bias = "Bias"

    def __repr__(self) -> str:
        return f"pl.Mem.{self.value}"


#: the allocation-planning sentinel byte offset: "not planned yet", treated as aligned
MEMREF_PLANNING_SENTINEL = -1


@dataclass(frozen=True, slots=True)
class MemRef:
    """Where a tile's buffer starts. ``byte_offset`` is a known int, ``-1`` (the
    allocation-planning sentinel, an aligned root) or a scalar expression (unknown).

    PyPTO's printed forms also name the allocation the offset is relative to: ``base`` is a
    quoted name (``StrConst``) or the variable an alloc statement bound, and ``size`` its byte
    size (``pl.MemRef("mem_ddr_0", 0, 512)``); a base with no size is an author-pinned
    allocation whose address is not planned yet (``pl.MemRef("ping")``, offset unknown).
    Allocations start aligned, so the analysis reads only ``byte_offset``."""

    byte_offset: Union[int, "Expr"]
    base: "Expr | None" = None
    size: Union[int, "Expr", None] = None

    @property
    def is_known(self) -> bool:
        return isinstance(self.byte_offset, int) and self.byte_offset >= 0

    @property
    def is_sentinel(self) -> bool:
        return isinstance(self.byte_offset, int) and self.byte_offset == MEMREF_PLANNING_SENTINEL


class Type:
    """Base of all IR types."""

    #: type nodes are slotted (``slots=True``): a long kernel holds ~10 IR nodes per
    #: statement, each ~40 bytes smaller without an instance dict
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class ScalarType(Type):
    dtype: DType


@dataclass(frozen=True, slots=True)
class TensorType(Type):
    """A DDR tensor. ``distributed`` marks ``pld.DistributedTensor``; ``view`` keeps PyPTO's
    optional ``pl.TensorView(...)`` element verbatim (strides, layout, valid_shape, pad) and
    ``memref`` its address annotation."""

    shape: tuple["Expr", ...]
    dtype: DType
    distributed: bool = False
    view: "Expr | None" = None
    memref: MemRef | None = None


@dataclass(frozen=True, slots=True)
class TileType(Type):
    """An on-chip tile. ``memory`` may be None when not yet inferred.
    ``view`` keeps PyPTO's optional ``pl.TileView(...)`` element verbatim (printed back)."""

    shape: tuple["Expr", ...]
    dtype: DType
    memory: MemorySpace | None = None
    valid_shape: tuple["Expr", ...] | None = None
    memref: MemRef | None = None
    view: "Expr | None" = None

    @property
    def rank(self) -> int:
        return len(self.shape)



@dataclass(frozen=True, slots=True)
class TupleType(Type):
    """The result type of a call returning several values (rare; opaque ops)."""

    elements: tuple[Type, ...]


@dataclass(frozen=True, slots=True)
class UnknownType(Type):
    """Result of an opaque (unregistered) call whose type was not annotated."""


@dataclass(frozen=True, slots=True)
class OpaqueType(Type):
    """A type the reader keeps by its spelling without interpreting it (``pl.Ptr``,
    ``pl.Array[8, pl.INT32]``, ...): printed back exactly as read."""

    spelling: str
