"""The ``nl.*`` / ``nisa.*`` calls the kernel reader knows, in one table.

Each entry says how the call's arguments are read and what it returns, as the op registry does
for tile ops:

* :data:`INDEX_CALLS` -- calls evaluated before the kernel runs that build index values or
  compile-time integers (``arange``, ``ds``, ``program_id``, ``num_programs``, loop ranges);
  their handler gets the reader, the call node and the environment;
* :data:`CALLS` -- instructions and allocations: which argument is a destination, the result's
  shape rule (from the operands' shapes and the keyword arguments) and its buffer.  A call not
  in the table is an elementwise instruction: its result has the operands' broadcast shape.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from egraph_tiles.nki.index.expr import AffineExpr, scalar_var
from egraph_tiles.nki.index.ranges import DynSlice, arange
from egraph_tiles.nki.index.tile import TileIndex
from egraph_tiles.nki.kernels.values import (
    LOOPS,
    Opaque,
    ReaderError,
    Tensor,
    broadcast,
    buffer_of,
    const_value,
    is_int,
    reduce_shape,
)

if TYPE_CHECKING:
    from egraph_tiles.nki.kernels.reader import Reader

__all__ = ["CALLS", "INDEX_CALLS", "Call", "call_result", "method_result"]

Shape = tuple[int, ...] | None


def _shape(v: Any) -> Shape:
    return v.shape if isinstance(v, Tensor) else None


def _known_dims(shape: Any) -> tuple[int, ...] | None:
    if isinstance(shape, int):
        shape = (shape,)
    if isinstance(shape, (tuple, list)) and all(is_int(const_value(d)) for d in shape):
        return tuple(int(const_value(d)) for d in shape)
    return None


# ----- shape rules: (args, kwargs, node) -> shape -----------------------------------------------

def _alloc(args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Shape:
    dims = _known_dims(args[0] if args else kwargs.get("shape"))
    if dims is None:
        raise ReaderError(f"`{ast.unparse(node)}`: the shape must be integers known before "
                          "the kernel runs", node)
    return dims


def _like(args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Shape:
    return _shape(args[0] if args else kwargs.get("x"))


def _load(args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Shape:
    return _shape(args[0] if args else kwargs.get("src"))


def _matmul(args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Shape:
    x, y = (_shape(args[0]), _shape(args[1])) if len(args) >= 2 else (None, None)
    if not (x and y and len(x) == 2 and len(y) == 2):
        return _elementwise(args, kwargs, node)
    return ((x[1] if kwargs.get("transpose_x") else x[0]), y[1])


def _nc_matmul(args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Shape:
    x, y = (_shape(args[0]), _shape(args[1])) if len(args) >= 2 else (None, None)
    if not (x and y and len(x) == 2 and len(y) == 2):
        return _elementwise(args, kwargs, node)
    return (x[1], y[1])


def _transpose(args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Shape:
    x = _shape(args[0]) if args else None
    return tuple(reversed(x)) if x else None


def _reduce(args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Shape:
    """``nl.sum(x, axis)``, and ``nisa.tensor_reduce(op, data, axis)`` whose tile comes after
    its operation (positionally or as ``data=``)."""
    at = next((k for k, a in enumerate(args) if isinstance(a, Tensor)), None)
    x = kwargs.get("data", kwargs.get("x", args[at] if at is not None else None))
    axis = kwargs.get("axis")
    if axis is None and at is not None and x is args[at] and at + 1 < len(args):
        axis = args[at + 1]
    return reduce_shape(_shape(x), axis, kwargs.get("keepdims", False))


def _iota(args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Shape:
    """``nisa.iota(expr)``: a tile of the index expression's shape."""
    expr = args[0] if args else kwargs.get("expr")
    return tuple(expr.shape) if isinstance(expr, (TileIndex, Tensor)) and expr.shape else None


def _elementwise(args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Shape:
    shapes = [a.shape for a in [*args, *kwargs.values()] if isinstance(a, Tensor)]
    return broadcast(shapes) if shapes else None


@dataclass(frozen=True)
class Call:
    """How one instruction or allocation is read.

    ``shape``: the result's shape from the evaluated arguments (``None`` result: the call returns
    nothing); ``buffer``: where the result lives (``"kwarg"``: the ``buffer=`` argument, SBUF by
    default; ``"operand"``: the first operand's buffer); ``dst_first``: the first positional
    argument is the destination (``nl.store(dst, value)``); ``dtype_of``: the positional argument
    whose dtype the result keeps (``None``: the ``dtype=`` argument)."""

    shape: Callable[[list[Any], dict[str, Any], ast.Call], Shape] | None
    buffer: str = "sbuf"
    dst_first: bool = False
    dtype_of: int | None = None


_ALLOC = Call(_alloc, "kwarg")
_ALLOC_LIKE = Call(_like, "kwarg", dtype_of=0)
_REDUCE = Call(_reduce)

#: ``nl.*`` / ``nisa.*`` instructions and allocations by their short name
CALLS: dict[str, Call] = {
    **dict.fromkeys(("ndarray", "zeros", "ones", "full", "empty", "rand", "random_seed"), _ALLOC),
    "shared_constant": Call(lambda a, k, n: None, "hbm"),
    **dict.fromkeys(("zeros_like", "ones_like", "empty_like", "full_like"), _ALLOC_LIKE),
    "load": Call(_load, dtype_of=0),
    "store": Call(None, dst_first=True),
    "matmul": Call(_matmul, "psum"),
    "nc_matmul": Call(_nc_matmul, "psum"),
    "transpose": Call(_transpose),
    "nc_transpose": Call(_transpose),
    "iota": Call(_iota),
    **dict.fromkeys(("sum", "max", "min", "mean", "prod", "all", "any", "var",
                     "tensor_reduce"), _REDUCE),
}
_DEFAULT = Call(_elementwise)


def call_result(short: str, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """The value an ``nl.*`` / ``nisa.*`` instruction returns, from :data:`CALLS`."""
    spec = CALLS.get(short, _DEFAULT)
    if spec.shape is None:
        return None
    if spec is _DEFAULT and not args and not any(isinstance(v, Tensor) for v in kwargs.values()):
        return Opaque(f"`{ast.unparse(node.func)}(...)` returns no tile")
    if spec.shape is CALLS["shared_constant"].shape:
        return Tensor("<tile>", None, None, "hbm")
    shape = spec.shape(args, kwargs, node)
    buf = buffer_of(kwargs.get("buffer"), "sbuf") if spec.buffer == "kwarg" else spec.buffer
    src = args[spec.dtype_of] if spec.dtype_of is not None and len(args) > spec.dtype_of else None
    dtype = kwargs.get("dtype", getattr(src, "dtype", None))
    return Tensor("<tile>", shape, dtype if isinstance(dtype, str) else None, buf)


# ----- methods of a tensor ------------------------------------------------------------------------

def method_result(t: Tensor, name: str, node: ast.Call, args: list[Any],
                  kwargs: dict[str, Any]) -> Tensor:
    """``t.reshape(...)``, ``t.broadcast_to(...)``, ``t.view(...)``, ``t.ap(...)``, ..."""
    if name == "reshape":
        shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
        dims = _known_dims(kwargs.get("shape", shape))
        if dims is None or t.shape is None:
            raise ReaderError(f"`{ast.unparse(node)}`: reshape needs integer dimensions and "
                              "a tensor of known shape", node)
        if math.prod(dims) != math.prod(t.shape):
            raise ReaderError(f"`{ast.unparse(node)}`: cannot reshape {t.shape} into {dims}", node)
        return Tensor(ast.unparse(node), dims, t.dtype, t.buffer)
    if name == "broadcast_to":
        dims = _known_dims(args[0] if args else kwargs.get("shape"))
        if dims is not None:
            return Tensor("<tile>", dims, t.dtype, t.buffer)
    if name in ("view", "astype", "bitcast"):
        return t.with_shape(t.shape, "<tile>")
    return Tensor("<tile>", None, t.dtype, t.buffer)


# ----- calls evaluated before the kernel runs ---------------------------------------------------

def _ints(reader: Reader, nodes: Sequence[ast.expr], env: dict[str, Any]) -> list[Any]:
    return [const_value(reader.expr(a, env)) for a in nodes]


def _arange(reader: Reader, node: ast.Call, env: dict[str, Any]) -> Any:
    args = _ints(reader, node.args, env)
    if not 1 <= len(args) <= 2 or not all(is_int(a) for a in args):
        raise ReaderError(f"`{ast.unparse(node)}`: nl.arange takes integers known "
                          "before the kernel runs (stop, or start and stop)", node)
    try:
        return arange(*[int(a) for a in args])
    except (ValueError, TypeError) as e:
        raise ReaderError(f"`{ast.unparse(node)}`: {e}", node) from None


def _ds(reader: Reader, node: ast.Call, env: dict[str, Any]) -> Any:
    args = _ints(reader, node.args, env)
    kw = {k.arg: const_value(reader.expr(k.value, env)) for k in node.keywords}
    args += [kw[k] for k in ("start", "size") if k in kw]
    if len(args) != 2 or not all(isinstance(a, (int, AffineExpr)) for a in args):
        raise ReaderError(f"`{ast.unparse(node)}`: nl.ds(start, size) takes an integer "
                          "or affine loop expression start and an integer size", node)
    if not is_int(args[1]):
        raise ReaderError(f"`{ast.unparse(node)}`: the size of nl.ds must be an integer "
                          "known before the kernel runs", node)
    return DynSlice(args[0], int(args[1]))


def _program_id(reader: Reader, node: ast.Call, env: dict[str, Any]) -> Any:
    args = _ints(reader, node.args, env)
    kw = {k.arg: const_value(reader.expr(k.value, env)) for k in node.keywords}
    axis = args[0] if args else kw.get("axis", 0)
    if not is_int(axis):
        raise ReaderError(f"`{ast.unparse(node)}`: the axis must be an integer", node)
    name = f"program_id_{int(axis)}"
    if name in reader.binds:
        return int(reader.binds[name])
    hi = reader.grid[int(axis)] - 1 if int(axis) < len(reader.grid) else None
    var = reader.out.symbols.get(name) or scalar_var(name, 0, hi)
    reader.out.symbols[name] = var
    reader.out.source_names.setdefault(name, f"nl.program_id({int(axis)})")
    if var not in reader.scope:
        reader.scope.insert(0, var)
    return AffineExpr.var(var)


def _num_programs(reader: Reader, node: ast.Call, env: dict[str, Any]) -> Any:
    k = (_ints(reader, node.args, env) or [0])[0]
    if isinstance(k, int) and k < len(reader.grid):
        return reader.grid[k]
    return Opaque("nl.num_programs: pass the launch grid with --grid")


def _program_ndim(reader: Reader, node: ast.Call, env: dict[str, Any]) -> Any:
    return len(reader.grid) if reader.grid else Opaque("pass the launch grid with --grid")


def _par_dim(reader: Reader, node: ast.Call, env: dict[str, Any]) -> Any:
    return const_value(reader.expr(node.args[0], env))


def _loop_range(reader: Reader, node: ast.Call, env: dict[str, Any]) -> Any:
    args = _ints(reader, node.args, env)
    if all(is_int(a) for a in args):
        return tuple(range(*args))
    return Opaque("a loop range outside a for statement")


#: calls that build an index value or a compile-time integer, by their short name
INDEX_CALLS: dict[str, Callable[[Reader, ast.Call, dict[str, Any]], Any]] = {
    "arange": _arange,
    "ds": _ds,
    "program_id": _program_id,
    "num_programs": _num_programs,
    "program_ndim": _program_ndim,
    "par_dim": _par_dim,
    **dict.fromkeys(LOOPS, _loop_range),
}
