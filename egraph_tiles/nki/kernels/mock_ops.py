"""The ``nki.language`` / ``nki.isa`` calls of the numpy mock (:mod:`~egraph_tiles.nki.kernels.mock`).

Each call is an instruction: it reads its operands (recording the elements each touches) and
returns a new tile.  What matters for comparing a legacy kernel with its migrated self is the
*shape* semantics (NKI broadcasts the partition axis and the right-aligned free axes apart, a
matmul contracts the partition axis, a reduction drops or keeps its axes) and that both runs
compute the same values; the arithmetic itself is plain numpy, with no attempt at the
hardware's precision.  A call the mock does not model raises ``AttributeError`` naming it.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from egraph_tiles.nki.kernels.mock import (
    _NP_DTYPES,
    _OFF,
    DS,
    Arange,
    Idx,
    Mask,
    Tensor,
    _alloc,
    _compute,
    _Grid,
    _load,
    _mask,
    _new_tile,
    _nl_store,
    _operand,
    _S,
    _store,
    _tensor_copy,
    Event,
)
from egraph_tiles.nki.kernels.values import DTYPES, TILE_SIZE

__all__ = ["isa_module", "language_module"]


def _np(op: Any) -> Callable[..., Any]:
    """The numpy function of an ``op=`` argument: a numpy ufunc, or a mock ``nl`` call."""
    return getattr(op, "_np", op)


def _fn(kind: str, f: Callable[..., Any], arity: int) -> Callable[..., Any]:
    def call(*args: Any, mask: Any = None, **_: Any) -> Tensor:
        return _compute(kind, f, *args[:arity], mask=mask)
    call._np = f  # type: ignore[attr-defined]
    return call


def _instr(kind: str, shape: tuple[int, ...], operands: list[Any], values: np.ndarray,
           mask: Any = None) -> Tensor:
    """An instruction whose result shape is not the broadcast of its operands (matmul,
    transpose, statistics): every defined element of every operand is read."""
    m = _mask(mask, shape)
    if m is not None and not m.any():
        return Tensor(_OFF, np.full(shape, np.nan))
    touched = []
    for t in operands:
        if isinstance(t, Tensor):
            _, tt = _operand(t, None, t.shape)
            if tt is not None:
                touched.append(tt)
    out = _new_tile(shape, np.broadcast_to(values, shape))
    if m is not None:
        out.data[~m] = np.nan
    _S.run.events.append(Event(_S.line(), kind, touched))
    return out


def _vals(t: Any) -> np.ndarray:
    return t.values() if isinstance(t, Tensor) else np.asarray(t, dtype=np.float64)


def _matrix(t: Tensor) -> np.ndarray:
    """A tile as a matrix: the partition axis, then its free axes flattened."""
    v = t.values()
    return v.reshape(v.shape[0], -1) if v.ndim else v.reshape(1, 1)


def _matmul(stationary: Tensor, moving: Tensor, mask: Any = None, **_: Any) -> Tensor:
    """``nisa.nc_matmul``: both operands hold the contraction on their partition axis;
    the result is ``stationary.T @ moving``."""
    a, b = _matrix(stationary), _matrix(moving)
    if len(stationary.shape) == len(moving.shape) == 3 and \
            stationary.shape[:2] == moving.shape[:2]:
        # double-row mode: the partition axis and the row pair are both contracted
        a = stationary.values().reshape(-1, stationary.shape[2])
        b = moving.values().reshape(-1, moving.shape[2])
    if a.shape[0] != b.shape[0]:
        _S.problem(f"shape: matmul of {stationary.shape} and {moving.shape}: the partition "
                   "axes differ")
        return Tensor(_OFF, np.full((a.shape[1], b.shape[1]), np.nan))
    return _instr("matmul", (a.shape[1], b.shape[1]), [stationary, moving], a.T @ b, mask)


def _nl_matmul(x: Tensor, y: Tensor, transpose_x: bool = False, mask: Any = None,
               **_: Any) -> Tensor:
    a = _matrix(x) if transpose_x else _matrix(x).T
    b = _matrix(y)
    if a.shape[0] != b.shape[0]:
        _S.problem(f"shape: matmul of {x.shape} and {y.shape} does not contract")
        return Tensor(_OFF, np.full((a.shape[1], b.shape[1]), np.nan))
    return _instr("matmul", (a.shape[1], b.shape[1]), [x, y], a.T @ b, mask)


def _transpose(x: Tensor, mask: Any = None, **_: Any) -> Tensor:
    v = _matrix(x)
    return _instr("transpose", (v.shape[1], v.shape[0]), [x], v.T, mask)


def _reduce_values(f: Any, v: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    ax = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    return f(v, axis=ax, keepdims=keepdims)


#: what a masked-off element counts as in a reduction
_IDENTITY = {np.sum: 0.0, np.max: -np.inf, np.min: np.inf, np.prod: 1.0}


def _reduction(f: Any) -> Callable[..., Tensor]:
    def red(x: Tensor, axis: Any, mask: Any = None, keepdims: bool = False, **_: Any) -> Tensor:
        m = _mask(mask, x.shape) if isinstance(x, Tensor) and mask is not None else None

        def g(v: np.ndarray) -> np.ndarray:
            if m is None:
                return _reduce_values(f, v, axis, keepdims)
            if f is np.mean:  # the mean of the elements the mask keeps
                return _reduce_values(np.sum, np.where(m, v, 0.0), axis, keepdims) / \
                    np.maximum(_reduce_values(np.sum, m.astype(float), axis, keepdims), 1)
            return _reduce_values(f, np.where(m, v, _IDENTITY[f]), axis, keepdims)
        return _compute("reduce", g, x, mask=mask)
    red._np = f  # type: ignore[attr-defined]
    return red


def _tensor_reduce(op: Any, data: Tensor, axis: Any, mask: Any = None, negate: bool = False,
                   keepdims: bool = False, **_: Any) -> Tensor:
    f = _np(op)
    red = getattr(f, "reduce", None)

    def g(v: np.ndarray) -> np.ndarray:
        ax = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
        out = red(v, axis=ax, keepdims=keepdims) if red is not None else f(v, axis=ax,
                                                                           keepdims=keepdims)
        return -out if negate else out
    return _compute("reduce", g, data, mask=mask)


def _partition_reduce(op: Any, data: Tensor, mask: Any = None, **_: Any) -> Tensor:
    v = data.values()
    out = _np(op).reduce(v, axis=0, keepdims=True)
    return _instr("reduce", out.shape, [data], out, mask)


def _activation(op: Any, data: Tensor, bias: Any = None, scale: Any = 1.0, mask: Any = None,
                reduce_op: Any = None, reduce_res: Any = None, **_: Any) -> Tensor:
    f = _np(op)
    operands = [data] + ([bias] if bias is not None else []) + (
        [scale] if isinstance(scale, Tensor) else [])

    def g(v: np.ndarray, *rest: np.ndarray) -> np.ndarray:
        s = rest[1] if isinstance(scale, Tensor) else scale
        b = rest[0] if bias is not None else 0.0
        return f(v * s + b)
    out = _compute("activation", g, *operands, mask=mask)
    if reduce_res is not None:  # nisa.activation_reduce: the free axes reduced into reduce_res
        red = _np(reduce_op or np.add)
        vals = out.data.reshape(out.shape[0], -1)
        _store(reduce_res, _new_tile((out.shape[0], 1), red.reduce(vals, axis=1,
                                                                   keepdims=True)), None)
    return out


def _tensor_scalar_reduce(data: Tensor, op0: Any, operand0: Any, reduce_op: Any,
                          reduce_res: Tensor, reverse0: bool = False, mask: Any = None,
                          **_: Any) -> Tensor:
    """``op0(data, operand0)``, its free axes reduced into ``reduce_res`` as well."""
    out = _tensor_scalar(data, op0, operand0, reverse0, mask=mask)
    red = _np(reduce_op)
    vals = out.data.reshape(out.shape[0], -1)
    f = red.reduce if hasattr(red, "reduce") else red
    _store(reduce_res, _new_tile((out.shape[0], 1), f(vals, axis=1, keepdims=True)), None)
    return out


def _affine_select(pred: Any, on_true_tile: Tensor, on_false_value: Any, mask: Any = None,
                   **_: Any) -> Tensor:
    cond = pred.a if isinstance(pred, Mask) else np.asarray(bool(pred))
    return _compute("select", lambda v: np.where(np.broadcast_to(cond, v.shape), v,
                                                  on_false_value), on_true_tile, mask=mask)


def _tensor_tensor(data1: Any, data2: Any, op: Any, mask: Any = None, **_: Any) -> Tensor:
    return _compute("tensor_tensor", _np(op), data1, data2, mask=mask)


def _apply(op: Any, a: Any, b: Any, reverse: bool) -> Any:
    return _np(op)(b, a) if reverse else _np(op)(a, b)


def _tensor_scalar(data: Tensor, op0: Any, operand0: Any, reverse0: bool = False,
                   op1: Any = None, operand1: Any = None, reverse1: bool = False,
                   mask: Any = None, **_: Any) -> Tensor:
    ops = [data] + [o for o in (operand0, operand1) if isinstance(o, Tensor)]

    def g(v: np.ndarray, *rest: np.ndarray) -> np.ndarray:
        it = iter(rest)
        x = _apply(op0, v, next(it) if isinstance(operand0, Tensor) else operand0, reverse0)
        if op1 is not None:
            x = _apply(op1, x, next(it) if isinstance(operand1, Tensor) else operand1, reverse1)
        return x
    return _compute("tensor_scalar", g, *ops, mask=mask)


def _scalar_tensor_tensor(data: Tensor, op0: Any, operand0: Any, op1: Any, operand1: Any,
                          reverse0: bool = False, reverse1: bool = False, mask: Any = None,
                          **_: Any) -> Tensor:
    ops = [data] + ([operand0] if isinstance(operand0, Tensor) else []) + [operand1]

    def g(v: np.ndarray, *rest: np.ndarray) -> np.ndarray:
        o0 = rest[0] if isinstance(operand0, Tensor) else operand0
        return _apply(op1, _apply(op0, v, o0, reverse0), rest[-1], reverse1)
    return _compute("scalar_tensor_tensor", g, *ops, mask=mask)


#: columns of one ``bn_stats`` group: count, mean, sum of squared deviations (then padding)
_BN = 6


def _bn_stats(data: Tensor, mask: Any = None, **_: Any) -> Tensor:
    """Per partition row: the count, mean and sum of squared deviations of the elements the
    mask keeps (the row's free axes), as one group of six columns."""
    v = data.values().reshape(data.shape[0], -1)
    m = _mask(mask, data.shape)
    on = np.ones(v.shape, bool) if m is None else m.reshape(v.shape)
    if not on.any():
        return Tensor(_OFF, np.full((data.shape[0], _BN), np.nan))
    _, touched = _operand(data, m, data.shape)
    rows = np.zeros((v.shape[0], _BN))
    for r in range(v.shape[0]):  # exactly rounded sums: a masked row equals a narrowed one
        x = v[r, on[r]]
        mean = math.fsum(x) / max(x.size, 1)
        rows[r, :3] = x.size, mean, math.fsum((x - mean) ** 2)
    out = _new_tile(rows.shape, rows)
    _S.run.events.append(Event(_S.line(), "bn_stats", [touched] if touched else []))
    return out


def _bn_aggr(data: Tensor, mask: Any = None, **_: Any) -> Tensor:
    """Groups of :func:`_bn_stats` combined: per row, ``[mean, variance]``."""
    v = data.values().reshape(data.shape[0], -1)
    if v.shape[1] % _BN:
        _S.problem(f"shape: bn_aggr of {data.shape}: not groups of {_BN} columns")
        return Tensor(_OFF, np.full((data.shape[0], 2), np.nan))
    g = v.reshape(v.shape[0], -1, _BN)
    n, mean, m2 = g[..., 0], g[..., 1], g[..., 2]
    total = n.sum(axis=1)
    mu = (n * mean).sum(axis=1) / np.maximum(total, 1)
    var = (m2 + n * (mean - mu[:, None]) ** 2).sum(axis=1) / np.maximum(total, 1)
    return _instr("bn_aggr", (v.shape[0], 2), [data], np.stack([mu, var], axis=1), mask)


def _full(shape: Any, fill_value: Any, dtype: Any = None, **_: Any) -> Tensor:
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return _new_tile(shape, np.full(shape, float(fill_value)))


def _shared_constant(value: Any, dtype: Any = None, **_: Any) -> Tensor:
    t = _new_tile(np.shape(value), np.asarray(value, dtype=np.float64))
    t.dtype = dtype if isinstance(dtype, str) else "float32"
    return t


def _zeros(shape: Any, dtype: Any = None, buffer: Any = None, **_: Any) -> Tensor:
    return _full(shape, 0.0)


def _memset(shape: Any, value: Any, dtype: Any = None, **_: Any) -> Tensor:
    return _full(shape, value)


def _iota(expr: Any, dtype: Any = None, **_: Any) -> Tensor:
    a = expr.a if isinstance(expr, Idx) else np.asarray(expr)
    return _new_tile(a.shape, a.astype(np.float64))


def _where(cond: Any, x: Any, y: Any, mask: Any = None, **_: Any) -> Tensor:
    ops = [t for t in (cond, x, y) if isinstance(t, Tensor)]

    def g(*vs: np.ndarray) -> np.ndarray:
        it = iter(vs)
        c, a, b = (next(it) if isinstance(t, Tensor) else t for t in (cond, x, y))
        return np.where(np.asarray(c, dtype=bool), a, b)
    return _compute("where", g, *ops, mask=mask)


def _loop_reduce(x: Tensor, op: Any = None, loop_indices: Any = (), mask: Any = None,
                 **_: Any) -> Tensor:
    """The value a loop accumulates (written into the destination each iteration)."""
    return _compute("copy", lambda v: v, x, mask=mask)


def _dropout(x: Tensor, rate: Any = 0.0, mask: Any = None, **_: Any) -> Tensor:
    """Deterministic in the mock (the same in both runs): keeps every element."""
    return _compute("dropout", lambda v, *r: v, x, *([rate] if isinstance(rate, Tensor) else []),
                    mask=mask)


def _load_transpose2d(src: Tensor, mask: Any = None, **_: Any) -> Tensor:
    return _transpose(_load(src, mask=mask))


class _DType(str):
    """An NKI dtype: its name, with the ``min`` / ``max`` of a numpy stand-in."""

    def _info(self) -> Any:
        d = np.dtype(_NP_DTYPES.get(self, self) if self in _NP_DTYPES or hasattr(np, self)
                     else "float32")
        return np.finfo(d) if d.kind == "f" else np.iinfo(d)

    @property
    def min(self) -> float:
        return float(self._info().min)

    @property
    def max(self) -> float:
        return float(self._info().max)


_ALIASES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


class _Module(types.ModuleType):
    """A mock module: dtypes by any of NKI's names; anything else not modelled is an error."""

    def __getattr__(self, name: str) -> Any:
        if name in DTYPES or name.startswith(("float", "int", "uint", "bfloat", "fp", "tfloat")):
            return _DType(_ALIASES.get(name, name))
        raise AttributeError(f"the NKI mock does not model {self.__name__}.{name}")


ELEMENTWISE = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
               "divide": np.divide, "maximum": np.maximum, "minimum": np.minimum,
               "power": np.power, "mod": np.mod,
               "equal": lambda a, b: np.equal(a, b).astype(np.float64),
               "not_equal": lambda a, b: np.not_equal(a, b).astype(np.float64),
               "greater": lambda a, b: np.greater(a, b).astype(np.float64),
               "less": lambda a, b: np.less(a, b).astype(np.float64)}
UNARY = {"exp": np.exp, "negative": np.negative, "copy": lambda v: v, "square": np.square,
         "rsqrt": lambda v: 1 / np.sqrt(np.abs(v)), "sqrt": lambda v: np.sqrt(np.abs(v)),
         "abs": np.abs, "log": lambda v: np.log(np.abs(v)), "floor": np.floor,
         "ceil": np.ceil, "tanh": np.tanh, "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
         "silu": lambda v: v / (1 + np.exp(-v)), "gelu": lambda v: v / (1 + np.exp(-1.702 * v)),
         "relu": lambda v: np.maximum(v, 0), "reciprocal": lambda v: 1 / v,
         "sin": np.sin, "cos": np.cos, "sign": np.sign, "invert": np.invert}


def language_module(program_ids: list[int], grid: tuple[int, ...]) -> types.ModuleType:
    nl = _Module("nki.language")
    for name, f in ELEMENTWISE.items():
        setattr(nl, name, _fn(name, f, 2))
    for name, f in UNARY.items():
        setattr(nl, name, _fn(name, f, 1))
    nl.sum, nl.max, nl.min = _reduction(np.sum), _reduction(np.max), _reduction(np.min)
    nl.mean, nl.prod = _reduction(np.mean), _reduction(np.prod)
    nl.matmul, nl.transpose = _nl_matmul, _transpose
    nl.where, nl.full, nl.dropout, nl.loop_reduce = _where, _full, _dropout, _loop_reduce
    nl.shared_constant = _shared_constant
    nl.finfo = lambda d: _DType(d)
    nl.random_seed = lambda *a, **k: None
    nl.par_dim = lambda n: n
    nl.load, nl.store, nl.load_transpose2d = _load, _nl_store, _load_transpose2d
    nl.ndarray = nl.empty = _alloc
    nl.zeros = _zeros
    nl.arange, nl.mgrid, nl.ds = Arange, _Grid(), DS
    nl.affine_range = nl.sequential_range = nl.static_range = range
    nl.program_id = lambda axis: program_ids[axis]
    nl.num_programs = lambda axis=0: grid[axis] if axis < len(grid) else 1
    nl.program_ndim = lambda: len(grid)
    nl.tile_size = types.SimpleNamespace(**TILE_SIZE)
    for name in ("sbuf", "psum", "hbm", "shared_hbm", "private_hbm"):
        setattr(nl, name, name)
    return nl


def isa_module() -> types.ModuleType:
    isa = _Module("nki.isa")
    isa.tensor_copy = isa.dma_copy = _tensor_copy
    isa.nc_matmul, isa.nc_transpose = _matmul, _transpose
    isa.activation = isa.activation_reduce = _activation
    isa.affine_select, isa.tensor_tensor, isa.tensor_scalar = (
        _affine_select, _tensor_tensor, _tensor_scalar)
    isa.scalar_tensor_tensor, isa.tensor_reduce = _scalar_tensor_tensor, _tensor_reduce
    isa.tensor_partition_reduce = _partition_reduce
    isa.bn_stats, isa.bn_aggr = _bn_stats, _bn_aggr
    isa.memset, isa.iota = _memset, _iota
    isa.tensor_scalar_reduce = _tensor_scalar_reduce
    for engine in ("vector_engine", "scalar_engine", "gpsimd_engine", "tensor_engine",
                   "unknown_engine"):
        setattr(isa, engine, engine)
    # the mock is one core generation; both runs take the same branch
    isa.nc_version = types.SimpleNamespace(gen2=2, gen3=3)
    isa.get_nc_version = lambda: 2
    return isa
