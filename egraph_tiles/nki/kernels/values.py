"""The values the kernel reader tracks, and Python's operators on them.

* Python ints / floats / bools / strings / tuples (constants, shapes, parameter values);
* symbolic integers -- :class:`~egraph_tiles.nki.index.expr.AffineExpr` over loop variables and
  program ids, each a :class:`~egraph_tiles.nki.index.expr.Var` with its range;
* index values of the index library: ``arange`` / ``TileIndex`` / ``DynSlice`` / slices,
  ``mgrid`` grids (:class:`MGrid`) and ``TileMask`` predicates;
* :class:`Tensor` -- a parameter, an allocation or a tile returned by an instruction;
* functions and classes of the kernel's file or of a module it imports (:class:`Func`,
  :class:`Class`, :class:`PyModule`) and configuration objects (:class:`Object`);
* :class:`Opaque` -- anything else; using one in an index is reported, never guessed.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np

from egraph_tiles.nki.index.expr import AffineExpr, Var
from egraph_tiles.nki.index.masks import CmpTileMask, EQTileMask, TileMask
from egraph_tiles.nki.index.ranges import DynSlice
from egraph_tiles.nki.index.scalar import DynamicScalar
from egraph_tiles.nki.index.tile import TileIndex

__all__ = ["Class", "CallRecord", "ConfigCall", "Finding", "Func", "KernelRead", "MGrid", "Method", "Module",
           "Object", "Opaque", "ParamText", "PyModule", "RawAccess", "ReaderError", "Tensor"]

#: ``nl.tile_size`` constants (NKI's hardware tile limits).
TILE_SIZE = {"pmax": 128, "psum_fmax": 512, "gemm_stationary_fmax": 128,
             "gemm_moving_fmax": 512, "bn_stats_fmax": 512, "psum_min_dtype": "float32",
             "total_available_sbuf_size": 24 * 1024 * 1024}
BUFFERS = {"sbuf": "sbuf", "psum": "psum", "hbm": "hbm", "shared_hbm": "hbm",
            "private_hbm": "hbm"}
DTYPES = {"bfloat16", "float16", "float32", "float8_e4m3", "float8_e5m2", "tfloat32",
           "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool_",
           "float8e4", "float8e5", "fp8_exp4", "fp8_exp5"}
LOOPS = {"affine_range", "sequential_range", "static_range", "range"}
KERNEL_DECORATORS = {"jit", "trace", "baremetal", "benchmark", "profile", "simulate_kernel"}
MAX_CALL_DEPTH = 16
MAX_UNROLL = 32


class ReaderError(Exception):
    """A construct the reader cannot analyze (becomes a :class:`Finding`)."""

    def __init__(self, message: str, node: ast.AST | None = None, kind: str = "error") -> None:
        super().__init__(message)
        self.message = message
        self.line = getattr(node, "lineno", None)
        self.kind = kind


@dataclass(frozen=True)
class Finding:
    """An error or finding at a kernel line (``kind``: ``error``, ``out-of-bounds``,
    ``non-affine``, ``partition``, ``indirect``, ``mask``, ``migration``, ``verify``)."""

    line: int
    message: str
    kind: str = "error"


@dataclass(frozen=True, eq=False)
class Opaque:
    """A value the index layer cannot use (``why`` says what it is)."""

    why: str
    kind: str = "unknown"  # "unknown" | "nonaffine" | "data"


@dataclass(eq=False)
class Tensor:
    """A tensor or tile: ``shape`` (``None`` when unknown), dtype, buffer (hbm/sbuf/psum)."""

    name: str
    shape: tuple[int, ...] | None
    dtype: str | None = None
    buffer: str = "sbuf"
    from_access: int = 0  # id of the RawAccess whose value this is (0: not an access's value)
    producer: CallRecord | None = None  # the nl / nisa call whose result this tile is

    def with_shape(self, shape: tuple[int, ...] | None, name: str | None = None) -> Tensor:
        return Tensor(name or self.name, shape, self.dtype, self.buffer)

    def renamed(self, name: str) -> Tensor:
        """The same value bound to a name (still the same access's value / call's result)."""
        return Tensor(name, self.shape, self.dtype, self.buffer, self.from_access, self.producer)


@dataclass(frozen=True)
class MGrid:
    """The value of ``nl.mgrid[...]``: one index per axis, also as ``.p`` / ``.x`` / ``.y`` / ``.z``."""

    indices: tuple[TileIndex, ...]


@dataclass(eq=False)
class RawAccess:
    """One ``tensor[index]`` as read: where, which tensor, the evaluated subscripts."""

    line: int
    col: int
    node: ast.Subscript
    tensor_text: str
    tensor: Tensor
    role: str
    subs: tuple[Any, ...]
    legacy: bool  # uses arange / mgrid indices (or a mask): needs migration to 0.2+
    scope: tuple[Var, ...]  # loop variables and program ids in scope, outermost first
    mask: TileMask | None = None
    mask_node: ast.keyword | None = None
    call_node: ast.Call | None = None
    instruction: int = 0  # accesses of one statement share an instruction number
    stmt_line: int = 0  # first line of that statement
    in_helper: bool = False  # read inside a helper function (at one of its call sites)
    # inside a helper: symbol -> the helper's parameter bound to it (None: a closure, which
    # sees the caller's names)
    local_names: dict[str, str] | None = None
    operand: bool = True  # an operand of an nl / nisa instruction (not a view passed along)
    record: CallRecord | None = None  # the instruction evaluation it is an operand of
    unrolled: tuple[tuple[str, int], ...] = ()  # values of the unrolled loops it is read in


@dataclass(eq=False)
class CallRecord:
    """One evaluation of an ``nl.*`` / ``nisa.*`` instruction: its evaluated arguments, and the
    whole-tile operands among them (a tile passed as is, not an indexed access of the call),
    each with its argument's syntax node."""

    node: ast.Call | ast.BinOp  # a call, or Python arithmetic on tiles
    short: str
    instruction: int
    args: list[Any]
    kwargs: dict[str, Any]
    whole: list[tuple[ast.expr, Tensor]]
    result: Any = None
    # inside a helper: symbol -> the helper's parameter bound to it (as RawAccess.local_names)
    local_names: dict[str, str] | None = None
    in_helper: bool = False


@dataclass
class KernelRead:
    """Everything read from one kernel."""

    name: str
    source: str = ""
    accesses: list[RawAccess] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    symbols: dict[str, Var] = field(default_factory=dict)
    steps: dict[str, int] = field(default_factory=dict)  # loop variable -> step
    source_names: dict[str, str] = field(default_factory=dict)  # symbol -> Python text
    masked_calls: list[tuple[ast.Call, ast.keyword, tuple[str, ...]]] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)  # every nl / nisa instruction evaluated
    tree: ast.Module | None = None  # the kernel file's syntax tree
    #: the kernel parameters' values the kernel was read with, as Python literals (tensor
    #: parameters by their shapes): what a migration of it is specialised to
    given: dict[str, tuple[str, Any]] = field(default_factory=dict)
    escapes: set[int] = field(default_factory=set)  # id(CallRecord): result read outside nl calls
    # every call with a mask=: the call, its keyword, its whole-tile operands (not indexed)


# ----- module structure ---------------------------------------------------------------------------

def module_alias(qualname: str) -> str:
    """``neuronxcc.nki.language`` -> ``nki.language`` (the legacy and new spellings agree)."""
    for prefix in ("neuronxcc.", "nki_"):
        if qualname.startswith(prefix) and qualname.startswith("neuronxcc."):
            return qualname[len(prefix):]
    return qualname


@dataclass(frozen=True)
class Module:
    """An imported module or a name imported from one (``qual`` is its dotted path)."""

    qual: str




class Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


KNOWN = (bool, int, float, str, type(None), tuple, list)


def is_sym(v: Any) -> bool:
    return isinstance(v, AffineExpr)


def is_int(v: Any) -> bool:
    return isinstance(v, Integral) and not isinstance(v, bool) or isinstance(v, bool)


def as_index_operand(v: Any) -> Any:
    """Symbolic ints enter TileIndex arithmetic as runtime scalars."""
    return DynamicScalar(v) if isinstance(v, AffineExpr) else v


def const_value(v: Any) -> Any:
    """A symbolic int whose expression is a constant is that int (a numpy scalar of a known
    array, a Python number)."""
    if isinstance(v, AffineExpr) and v.op == "const":
        return v.args[0]
    if isinstance(v, np.generic):
        return v.item()
    return v


#: numpy functions evaluated on values known before the kernel runs (``np.arange(n) * h // n``:
#: the pooling windows of an adaptive pool)
NUMPY_FUNCS = {"arange", "array", "asarray", "zeros", "ones", "full", "minimum", "maximum",
               "ceil", "floor", "cumsum", "diff", "clip"}
#: methods and attributes of such an array
ARRAY_METHODS = {"max", "min", "sum", "tolist", "item", "astype"}
ARRAY_ATTRS = {"shape", "size", "ndim"}


def known_array(v: Any) -> bool:
    return isinstance(v, np.ndarray) and v.dtype.kind in "iufb"


@dataclass(eq=False)
class Object:
    """An instance of a class of the kernel's file or of a module it imports (a configuration
    object): its fields."""

    cls: str
    attrs: dict[str, Any]


@dataclass(frozen=True, eq=False)
class Method:
    tensor: Tensor
    name: str


@dataclass(eq=False)
class Func:
    """A function of the kernel's file, of an imported module, or defined inside the kernel:
    ``env`` is the scope it was defined in (read at call time, as a Python closure does)."""

    node: ast.FunctionDef
    env: dict[str, Any]


@dataclass(eq=False)
class Class:
    """A class (a configuration type) with the scope it was defined in."""

    node: ast.ClassDef
    env: dict[str, Any]


@dataclass(eq=False)
class PyModule:
    """A module of the kernel's package read with ``ast``: its top-level names."""

    name: str
    env: dict[str, Any]


@dataclass(frozen=True)
class ConfigCall:
    """A parameter value spelled ``Name(field=value, ...)`` (a configuration object), built from
    the class ``Name`` the kernel's file or its imports define."""

    cls: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class ParamText:
    """A parameter value that is not a Python literal: a string only where the parameter is one
    (its default or annotation is ``str``), rejected otherwise."""

    text: str


def view_shape(subs: Sequence[Any], tensor_shape: Sequence[int]) -> tuple[int, ...] | None:
    """Broadcast shape of an index (as ``access_exprs`` builds it), without solving anything;
    ``None`` when a slice's length depends on a loop variable."""
    from egraph_tiles.nki.index.combine import combine_tiles
    from egraph_tiles.nki.index.tile import NDTile

    owners = [k for k, s in enumerate(subs) if isinstance(s, (slice, DynSlice, TileIndex))]
    owners += list(range(len(subs), len(tensor_shape)))
    r = len(owners)
    tiles = []
    for j, k in enumerate(owners):
        s = subs[k] if k < len(subs) else slice(None)
        if isinstance(s, TileIndex):
            if s.tile is not None:
                tiles.append(s.tile)
            continue
        n = slice_count(s, tensor_shape[k])
        if n is None or n < 1:
            return None
        shape = (1,) * j + (n,) + (1,) * (r - j - 1)
        tiles.append(NDTile(shape[:1], shape[1:]))
    return combine_tiles(*tiles).shape if tiles else ()


def slice_count(s: Any, dim: int) -> int | None:
    if isinstance(s, DynSlice):
        return int(s.size)
    start = 0 if s.start is None else s.start
    stop = dim if s.stop is None else s.stop
    step = 1 if s.step is None else s.step
    diff = stop - start
    if isinstance(diff, AffineExpr):
        probes = [{v.name: (v.lo if v.lo is not None else 0) + k for v in diff.free_vars}
                  for k in range(3)]
        vals = {int(diff.evaluate(p)) for p in probes}
        if len(vals) != 1:
            return None
        diff = vals.pop()
    if not isinstance(step, int) or step <= 0:
        return None
    return len(range(0, int(diff), step))


def is_lang(qual: str) -> bool:
    return qual in ("nki.language", "nki.isa", "nki") or qual.startswith("nki.language") \
        or qual.startswith("nki.isa")


def buffer_of(v: Any, default: str) -> str:
    return v if isinstance(v, str) and v in ("sbuf", "psum", "hbm") else default


def broadcast(shapes: Sequence[tuple[int, ...] | None]) -> tuple[int, ...] | None:
    """NKI's broadcast of tile shapes: the partition dimensions (first) and the free dimensions
    broadcast separately (a (128,) tile meets a (128, 512) one as 128 x 512)."""
    if not shapes or any(s is None for s in shapes):
        return None
    shapes = [tuple(s) for s in shapes if len(s)]  # type: ignore[arg-type]
    if not shapes:
        return ()
    out = []
    for group in ([s[:1] for s in shapes], [s[1:] for s in shapes]):
        rank = max(len(s) for s in group)
        padded = [(1,) * (rank - len(s)) + s for s in group]
        for dims in zip(*padded):
            big = {d for d in dims if d != 1}
            if len(big) > 1:
                return None
            out.append(big.pop() if big else 1)
    return tuple(out)


def reduce_shape(shape: tuple[int, ...] | None, axis: Any, keepdims: Any
                  ) -> tuple[int, ...] | None:
    if shape is None:
        return None
    axes = axis if isinstance(axis, (tuple, list)) else (axis,) if isinstance(axis, int) else None
    if axes is None:
        return None
    axes = {a % len(shape) for a in axes if isinstance(a, int)}
    return tuple((1 if k in axes else d) for k, d in enumerate(shape)
                 if keepdims is True or k not in axes)


def expand_ellipsis(subs: list[Any], rank: int, node: ast.AST) -> list[Any]:
    n = sum(1 for s in subs if s is Ellipsis)
    if n > 1:
        raise ReaderError(f"`{ast.unparse(node)}`: at most one `...` in an index", node)
    if n == 1:
        k = subs.index(Ellipsis)
        fill = rank - (len(subs) - 1)
        subs = subs[:k] + [slice(None)] * max(fill, 0) + subs[k + 1:]
    if len(subs) > rank:
        raise ReaderError(f"`{ast.unparse(node)}`: {len(subs)} indices for a tensor of rank "
                          f"{rank}", node)
    return subs


def assigned_names(st: ast.stmt) -> list[str]:
    """Every name a statement (or a block nested in it) binds.  ``t[i] = v`` and ``o.a = v``
    bind no name: they write into ``t`` / ``o``, and ``i`` keeps its value."""
    out: list[str] = []

    def bound(t: ast.expr) -> None:
        if isinstance(t, ast.Name):
            out.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                bound(e)
        elif isinstance(t, ast.Starred):
            bound(t.value)

    for node in ast.walk(st):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                bound(t)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.NamedExpr)):
            bound(node.target)
    return out


PYOPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a ** b, ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
}
CMPOPS = {
    ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
    ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}



# ----- Python operators on tracked values ---------------------------------------------------

def unary(node: ast.UnaryOp, v: Any) -> Any:
    v = const_value(v)
    if isinstance(node.op, ast.Not):
        return (not v) if isinstance(v, (bool, int, float, str, type(None), tuple)) else Opaque("not")
    if isinstance(node.op, ast.USub):
        if isinstance(v, (int, float, AffineExpr)):
            return -v
        if isinstance(v, TileIndex):
            return -v
        if isinstance(v, Tensor):
            return v.with_shape(v.shape, "<tile>")
        return v if isinstance(v, Opaque) else Opaque(f"-{ast.unparse(node.operand)}")
    if isinstance(node.op, ast.UAdd):
        return v
    if isinstance(node.op, ast.Invert):
        return ~v if isinstance(v, int) else Opaque("~")
    return Opaque(ast.unparse(node))


def binop(op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
    a, b = const_value(a), const_value(b)

    def text() -> str:  # only an error message needs the source text
        return ast.unparse(node) if isinstance(node, ast.BinOp) else type(op).__name__

    py = (int, float, bool)
    if isinstance(a, (str, tuple, list)) or isinstance(b, (str, tuple, list)):
        try:
            return PYOPS[type(op)](a, b)
        except (TypeError, KeyError, ValueError):
            return Opaque(f"`{text()}` is not analyzed")
    if isinstance(a, py) and isinstance(b, py):
        try:
            return PYOPS[type(op)](a, b)
        except (KeyError, ZeroDivisionError, TypeError, ValueError, OverflowError):
            return Opaque(f"`{text()}` cannot be evaluated")
    if (known_array(a) or known_array(b)) and all(known_array(x) or isinstance(x, py)
                                                  for x in (a, b)):
        try:
            with np.errstate(all="raise"):
                return const_value(PYOPS[type(op)](a, b))
        except (KeyError, ArithmeticError, TypeError, ValueError, FloatingPointError):
            return Opaque(f"`{text()}` cannot be evaluated")
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        shapes = [x.shape for x in (a, b) if isinstance(x, Tensor)]
        t = a if isinstance(a, Tensor) else b
        return t.with_shape(broadcast(shapes), "<tile>")
    if isinstance(a, TileMask) and isinstance(b, TileMask) and isinstance(op, ast.BitAnd):
        return a & b
    if isinstance(op, ast.BitAnd) and (isinstance(a, TileMask) or isinstance(b, TileMask)):
        m, other = (a, b) if isinstance(a, TileMask) else (b, a)
        if other is True or other is None:  # a condition already known to hold
            return m
        if other is False:
            from egraph_tiles.nki.index.masks import CmpTileMask

            return CmpTileMask(AffineExpr.const(1), "<", None)  # never runs
    if isinstance(a, TileMask) or isinstance(b, TileMask):
        raise ReaderError(f"masks combine with `&` only (expected comparisons of index "
                          f"expressions joined with &), not `{text()}`", node)
    if isinstance(a, Opaque) or isinstance(b, Opaque):
        o = a if isinstance(a, Opaque) else b
        return o
    if isinstance(a, float) or isinstance(b, float):
        return Opaque(f"`{text()}` mixes a float with an index", "nonaffine")
    idx = isinstance(a, TileIndex) or isinstance(b, TileIndex)
    sym = isinstance(a, AffineExpr) or isinstance(b, AffineExpr)
    if not (idx or sym):
        return Opaque(f"`{text()}` is not analyzed")
    if isinstance(op, (ast.Add, ast.Sub)):
        if idx:
            x, y = as_index_operand(a), as_index_operand(b)
            if isinstance(op, ast.Add):
                return x + y if isinstance(x, TileIndex) else y + x
            return x - y if isinstance(x, TileIndex) else (-y) + x
        return a + b if isinstance(op, ast.Add) else a - b
    if isinstance(op, ast.Mult):
        if isinstance(a, Integral):
            a, b = b, a
        if isinstance(b, Integral):
            return a * int(b)
        return Opaque(f"`{text()}` multiplies two index values: the index is not affine",
                      "nonaffine")
    if isinstance(op, (ast.FloorDiv, ast.Mod)):
        if isinstance(b, Integral) and int(b) > 0 and not isinstance(a, Integral):
            return a // int(b) if isinstance(op, ast.FloorDiv) else a % int(b)
        return Opaque(f"`{text()}`: `//` and `%` of an index need a positive integer divisor; "
                      "the index is not affine", "nonaffine")
    if isinstance(op, ast.Div):
        return Opaque(f"`{text()}`: true division of an index is not affine", "nonaffine")
    return Opaque(f"`{text()}` is not affine", "nonaffine")


def compare1(op: ast.cmpop, a: Any, b: Any, node: ast.AST) -> Any:
    a, b = const_value(a), const_value(b)
    sym = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
           ast.NotEq: "!="}
    if isinstance(a, TileIndex) or isinstance(b, TileIndex):
        if type(op) not in sym:
            raise ReaderError(f"unsupported mask comparison `{ast.unparse(node)}`", node)
        s = sym[type(op)]
        if not isinstance(a, TileIndex):
            a, b = b, a
            s = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[s]
        if isinstance(b, Opaque):
            raise ReaderError(f"mask `{ast.unparse(node)}`: {b.why}", node)
        if isinstance(b, Tensor):
            raise ReaderError(f"mask `{ast.unparse(node)}` compares an index with a data tile "
                              "(expected an index expression or an integer)", node)
        b = as_index_operand(b)
        return {"<": a.__lt__, "<=": a.__le__, ">": a.__gt__, ">=": a.__ge__,
                "==": a.__eq__, "!=": a.__ne__}[s](b)
    if (isinstance(a, Tensor) or isinstance(b, Tensor)) and type(op) in sym:
        t = a if isinstance(a, Tensor) else b
        return t.with_shape(broadcast([x.shape for x in (a, b) if isinstance(x, Tensor)]),
                            "<tile>")
    if isinstance(a, Opaque) or isinstance(b, Opaque):
        return Opaque(f"`{ast.unparse(node)}` is not known before the kernel runs")
    if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) or not (
            isinstance(a, AffineExpr) or isinstance(b, AffineExpr)):
        try:
            return CMPOPS[type(op)](a, b)
        except (TypeError, KeyError):
            return Opaque(f"`{ast.unparse(node)}` is not analyzed")
    if type(op) in sym and isinstance(a, (int, AffineExpr)) and isinstance(b, (int, AffineExpr)):
        # a predicate on loop variables / program ids only: usable as (part of) a mask
        diff = (a - b) if isinstance(a, AffineExpr) else (-b + a)
        s_op = sym[type(op)]
        return EQTileMask(diff, None) if s_op == "==" else CmpTileMask(diff, s_op, None)
    return Opaque(f"`{ast.unparse(node)}` depends on a loop variable or program id")

