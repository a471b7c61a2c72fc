"""A mock of the NKI calls our kernels use, in numpy: run a legacy kernel and its migrated self
side by side and compare them statement by statement.

Unlike the reader, the mock **executes** the kernel's Python code (with ``nki`` / ``nl`` /
``nisa`` bound to the mock), so it is for kernels you trust -- our own test kernels.  Every load,
store and instruction records an :class:`Event`: its line, what it is, and for each operand the
elements it touches (the tensor -- a parameter by name, a tile by creation number -- and the
coordinates of the elements holding a defined value; masked-off elements dropped).  The calls
themselves are in :mod:`~egraph_tiles.nki.kernels.mock_ops`.  It also records what NKI would
reject: a value whose shape does not match its destination (``shape``), an index or ``.ap()``
element outside its tensor, a slice bound outside ``0 <= start <= stop <= dim`` (``bounds``).

:func:`compare` runs both kernels on the same random inputs and reports the first difference:
a different number of instructions, a statement touching other elements, a problem in either
run, or different output values.  Legacy indices (``nl.arange``, ``nl.mgrid``, ``mask=``) and
the NKI 0.2+ forms (basic slices, ``nl.ds``, ``.ap()``) both work.
"""

from __future__ import annotations

import builtins
import itertools
import sys
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from egraph_tiles.nki.kernels.values import ConfigCall

__all__ = ["Event", "Run", "compare", "run_kernel"]


@dataclass
class Event:
    """One executed instruction: its line, kind and the elements each operand touches."""

    line: int
    kind: str
    touched: list[tuple[str, bytes]]  # per operand: its tensor, the coordinates it touches


@dataclass
class Run:
    events: list[Event] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)


class _Anything(types.ModuleType):
    """A library the kernel file imports but the kernel does not use: any name is another
    placeholder, any call returns one (decorators included)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything(f"{self.__name__}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return _Anything(self.__name__)

    def __getitem__(self, key: Any) -> Any:  # `os.environ["X"]`, `Tuple[...]` annotations
        return _Anything(self.__name__)

    def __setitem__(self, key: Any, value: Any) -> None:  # `os.environ["X"] = ...`
        return None


#: numpy stand-ins for NKI dtypes without a numpy one (for their ``itemsize``)
_NP_DTYPES = {"bfloat16": "float16", "tfloat32": "float32", "float8_e4m3": "uint8",
              "float8_e5m2": "uint8", "fp8_exp4": "uint8", "fp8_exp5": "uint8",
              "float8e4": "uint8", "float8e5": "uint8"}


class _Numpy(types.ModuleType):
    """numpy as the kernel sees it: ``np.dtype(nl.bfloat16)`` knows NKI's dtype names."""

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    @staticmethod
    def dtype(d: Any, *args: Any, **kwargs: Any) -> np.dtype:
        return np.dtype(_NP_DTYPES.get(d, d) if isinstance(d, str) else d, *args, **kwargs)


_NUMPY = _Numpy("numpy")


class _State:
    run: Run
    tiles = 0
    file = ""

    def line(self) -> int:
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename != self.file:
            f = f.f_back
        return f.f_lineno if f is not None else 0

    def problem(self, what: str) -> None:
        self.run.problems.append(f"line {self.line()}: {what}")


_S = _State()


class Idx:
    """A legacy index value: integer array over tile axes (``arange`` placed with ``None``)."""

    def __init__(self, a: Any) -> None:
        self.a = np.asarray(a)

    def _op(self, other: Any, f: Any) -> Idx:
        return Idx(f(self.a, other.a if isinstance(other, Idx) else other))

    def __add__(self, o: Any) -> Idx: return self._op(o, np.add)
    def __radd__(self, o: Any) -> Idx: return self._op(o, np.add)
    def __sub__(self, o: Any) -> Idx: return self._op(o, np.subtract)
    def __rsub__(self, o: Any) -> Idx: return self._op(o, lambda a, b: b - a)
    def __mul__(self, o: Any) -> Idx: return self._op(o, np.multiply)
    def __rmul__(self, o: Any) -> Idx: return self._op(o, np.multiply)
    def __floordiv__(self, o: Any) -> Idx: return self._op(o, np.floor_divide)
    def __mod__(self, o: Any) -> Idx: return self._op(o, np.mod)
    def __lt__(self, o: Any) -> Mask: return Mask(self._op(o, np.less).a)
    def __le__(self, o: Any) -> Mask: return Mask(self._op(o, np.less_equal).a)
    def __gt__(self, o: Any) -> Mask: return Mask(self._op(o, np.greater).a)
    def __ge__(self, o: Any) -> Mask: return Mask(self._op(o, np.greater_equal).a)


class Arange:
    def __init__(self, start: int, stop: int | None = None) -> None:
        self.v = np.arange(start, stop) if stop is not None else np.arange(start)

    def __getitem__(self, key: Any) -> Idx:
        return Idx(self.v[key])


class Mask:
    def __init__(self, a: Any) -> None:
        self.a = np.asarray(a, dtype=bool)

    def __and__(self, o: Any) -> Mask:
        return Mask(self.a & (o.a if isinstance(o, Mask) else np.asarray(o, dtype=bool)))

    __rand__ = __and__


@dataclass
class DS:
    start: int
    size: int


class Tensor:
    """Storage (a flat array) seen through ``ids``: flat storage positions, shape = the view's."""

    def __init__(self, name: str, data: np.ndarray, ids: np.ndarray | None = None,
                 full: tuple[int, ...] | None = None, dtype: str = "float32") -> None:
        self.name, self.data, self.dtype = name, data, dtype
        self.full = full if full is not None else data.shape
        self.ids = ids if ids is not None else np.arange(data.size).reshape(data.shape)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.ids.shape)

    def coords(self, ids: np.ndarray) -> bytes:
        """The coordinates of flat ``ids`` in the whole tensor (a narrowed tile's element
        ``(r, c)`` is the legacy tile's ``(r, c)``), packed for comparison."""
        return np.stack(np.unravel_index(ids.ravel(), self.full), axis=-1).astype(
            np.int64).tobytes() if ids.size else b""

    def values(self) -> np.ndarray:
        return self.data.reshape(-1)[self.ids]

    def __getitem__(self, key: Any) -> Tensor:
        key = key if isinstance(key, tuple) else (key,)
        # an index read from a data tile (indirect): its values, over the tile's axes
        key = tuple(Idx(np.nan_to_num(k.values()).astype(np.int64)) if isinstance(k, Tensor)
                    else k for k in key)
        if any(isinstance(k, Idx) for k in key):
            arrs = [k.a if isinstance(k, Idx) else np.asarray(k) for k in key]
            arrs = [a for a in arrs]
            b = np.broadcast_arrays(*arrs)
            inside = np.ones(b[0].shape, bool)
            for a, n in zip(b, self.shape):
                inside &= (a >= 0) & (a < n)
            clipped = [np.clip(a, 0, n - 1) for a, n in zip(b, self.shape)]
            view = Tensor(self.name, self.data, self.ids[tuple(clipped)], self.full, self.dtype)
            view.outside = ~inside
            return view
        if any(k is Ellipsis for k in key):
            at = key.index(Ellipsis)
            key = key[:at] + (slice(None),) * (len(self.shape) - len(key) + 1) + key[at + 1:]
        np_key = []
        for k, n in zip(key, self.shape):
            if isinstance(k, DS):
                k = slice(k.start, k.start + k.size)
            if isinstance(k, slice):
                start = 0 if k.start is None else k.start
                stop = n if k.stop is None else k.stop
                if not 0 <= start <= stop <= n or (k.step or 1) < 1:
                    _S.problem(f"bounds: slice {start}:{stop} of a dimension of {n} in {self.name}")
                    start, stop = max(0, min(start, n)), max(0, min(max(stop, 0), n))
                np_key.append(slice(start, stop, k.step))
            else:
                if not 0 <= int(k) < n:
                    _S.problem(f"bounds: index {k} of a dimension of {n} in {self.name}")
                    k = min(max(int(k), 0), n - 1)
                np_key.append(int(k))
        return Tensor(self.name, self.data, self.ids[tuple(np_key)], self.full, self.dtype)

    def __setitem__(self, key: Any, value: Any) -> None:
        _store(self[key], value, None)

    def ap(self, pattern: Sequence[Sequence[int]], offset: int = 0, **_: Any) -> Tensor:
        counts = [max(int(n), 0) for _, n in pattern]
        flat = np.full(counts, int(offset), dtype=np.int64)
        for k, (s, n) in enumerate(zip([s for s, _ in pattern], counts)):
            sh = [1] * len(counts)
            sh[k] = n
            flat = flat + int(s) * np.arange(n).reshape(sh)
        size = self.ids.size
        if flat.size and (flat.min() < 0 or flat.max() >= size):
            _S.problem(f"bounds: .ap() of {self.name} addresses outside its {size} elements")
            flat = np.clip(flat, 0, size - 1)
        return Tensor(self.name, self.data, self.ids.reshape(-1)[flat], self.full, self.dtype)

    def reshape(self, *shape: Any, **kw: Any) -> Tensor:
        shape = kw.get("shape", shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list))
                       else shape)
        return Tensor(self.name, self.data, self.ids.reshape(shape), self.full, self.dtype)

    def broadcast_to(self, shape: Any) -> Tensor:
        ids = self.ids.reshape(_nki_shape(self.shape, len(shape)))
        return Tensor(self.name, self.data, np.broadcast_to(ids, tuple(shape)), self.full,
                      self.dtype)

    # Python arithmetic on tiles: elementwise instructions
    def __add__(self, o: Any) -> Tensor: return _compute("add", np.add, self, o)
    def __radd__(self, o: Any) -> Tensor: return _compute("add", np.add, o, self)
    def __sub__(self, o: Any) -> Tensor: return _compute("subtract", np.subtract, self, o)
    def __rsub__(self, o: Any) -> Tensor: return _compute("subtract", np.subtract, o, self)
    def __mul__(self, o: Any) -> Tensor: return _compute("multiply", np.multiply, self, o)
    def __rmul__(self, o: Any) -> Tensor: return _compute("multiply", np.multiply, o, self)
    def __truediv__(self, o: Any) -> Tensor: return _compute("divide", np.divide, self, o)
    def __rtruediv__(self, o: Any) -> Tensor: return _compute("divide", np.divide, o, self)
    def __pow__(self, o: Any) -> Tensor: return _compute("power", np.power, self, o)
    def __neg__(self) -> Tensor: return _compute("negative", np.negative, self)


def _operand(t: Any, mask: np.ndarray | None, shape: tuple[int, ...],
             written: np.ndarray | None = None
             ) -> tuple[np.ndarray, tuple[str, bytes] | None]:
    """An operand's values broadcast to the instruction's shape, and the elements it touches:
    only those holding a defined value (an element never written -- a masked-off row of a
    legacy tile -- may be skipped by the migrated kernel); for a destination, those that
    receive a defined value (``written``)."""
    if not isinstance(t, Tensor):
        return np.broadcast_to(np.asarray(t, dtype=np.float64), shape), None
    try:
        ids = np.broadcast_to(t.ids.reshape(_nki_shape(t.shape, len(shape))), shape)
    except ValueError:
        _S.problem(f"shape: operand {t.name} of shape {t.shape} does not fit {shape}")
        return np.zeros(shape), None
    outside = np.broadcast_to(getattr(t, "outside", np.zeros(t.shape, bool)).reshape(
        _nki_shape(t.shape, len(shape))), shape)
    on = np.ones(shape, bool) if mask is None else np.broadcast_to(mask, shape)
    if (outside & on).any():
        _S.problem(f"bounds: an index of {t.name} leaves the tensor")
    vals = t.data.reshape(-1)[ids]
    defined = on & ~np.isnan(vals if written is None else written)
    return vals, (t.name, t.coords(np.unique(ids[defined])))


def _nki_shape(shape: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """NKI broadcasts the partition axis (first) and the free axes (right-aligned) apart."""
    if not shape or len(shape) >= rank:
        return shape
    return shape[:1] + (1,) * (rank - len(shape)) + shape[1:]


def _instr_shape(*ts: Any) -> tuple[int, ...]:
    rank = max((len(t.shape) for t in ts if isinstance(t, Tensor)), default=0)
    shapes = [_nki_shape(t.shape, rank) for t in ts if isinstance(t, Tensor)]
    try:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        _S.problem(f"shape: operands of shapes {shapes} do not broadcast")
        return shapes[0]


def _mask(mask: Any, shape: tuple[int, ...]) -> np.ndarray | None:
    if mask is None:
        return None
    if not isinstance(mask, Mask):  # a condition on loop variables only
        mask = Mask(bool(mask))
    try:
        return np.broadcast_to(mask.a, shape)
    except ValueError:
        _S.problem(f"shape: a mask of shape {mask.a.shape} on an instruction of shape {shape}")
        return None


#: the result of an instruction whose mask is off everywhere
_OFF = "off"


def _new_tile(shape: tuple[int, ...], values: np.ndarray | None = None) -> Tensor:
    _S.tiles += 1
    data = np.full(shape, np.nan) if values is None else np.array(values, dtype=np.float64)
    return Tensor(f"tile{_S.tiles}", data)


def _compute(kind: str, f: Any, *ts: Any, mask: Any = None, **_: Any) -> Tensor:
    shape = _instr_shape(*ts)
    m = _mask(mask, shape)
    if m is not None and not m.any():  # switched off: the instruction does nothing
        return Tensor(_OFF, np.full(shape, np.nan))
    vals, touched = zip(*[_operand(t, m, shape) for t in ts]) if ts else ((), ())
    out = _new_tile(shape, f(*vals))
    if m is not None and out.shape == shape:
        out.data[~m] = np.nan  # masked-off elements are not computed
    _S.run.events.append(Event(_S.line(), kind, [t for t in touched if t is not None]))
    return out


def _store(dst: Tensor, value: Any, mask: Any) -> None:
    """A write (``nl.store``, ``nisa.tensor_copy(dst=...)``, ``t[...] = v``: one kind)."""
    if isinstance(value, Tensor) and value.name == _OFF:
        return  # the value of an instruction its mask switched off: nothing is written
    if isinstance(value, Tensor) and value.shape != dst.shape:
        if _squeezed(value.shape) == _squeezed(dst.shape) and value.shape[:1] == dst.shape[:1]:
            # size-1 free axes are no axes: a (64, 1) tile fills a (64,) destination
            value = Tensor(value.name, value.data, value.ids.reshape(dst.shape), value.full)
        else:
            try:
                np.broadcast_to(np.empty(_nki_shape(value.shape, len(dst.shape))), dst.shape)
            except ValueError:
                _S.problem(f"shape: a value of shape {value.shape} stored into {dst.name}"
                           f"{list(dst.shape)}")
                return
    m = _mask(mask, dst.shape)
    if m is not None and not m.any():
        return
    vals, src = _operand(value, m, dst.shape)
    _, dst_t = _operand(dst, m, dst.shape, written=vals)
    on = np.ones(dst.shape, bool) if m is None else m
    dst.data.reshape(-1)[dst.ids[on]] = vals[on]
    _S.run.events.append(Event(_S.line(), "write", [t for t in (dst_t, src) if t is not None]))


def _squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(n for n in shape if n != 1)


def _load(src: Tensor, mask: Any = None, **_: Any) -> Tensor:
    return _compute("load", lambda v: v, src, mask=mask)


def _nl_store(dst: Tensor, value: Any = None, mask: Any = None, **_: Any) -> None:
    _store(dst, value, mask)


def _tensor_copy(dst: Tensor | None = None, src: Any = None, mask: Any = None, **_: Any) -> Any:
    if dst is None:
        return _compute("copy", lambda v: v, src, mask=mask)
    _store(dst, src, mask)
    return None


def _alloc(shape: Any, dtype: Any = None, buffer: Any = None, **_: Any) -> Tensor:
    t = _new_tile(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))
    t.dtype = dtype if isinstance(dtype, str) else "float32"
    return t


class _Axes(tuple):
    """``nl.mgrid[...]``: unpacked, or by axis name (``.p``, ``.x``, ``.y``, ``.z``)."""

    def __getattr__(self, name: str) -> Idx:
        if name in ("p", "x", "y", "z") and "pxyz".index(name) < len(self):
            return self["pxyz".index(name)]
        raise AttributeError(name)


class _Grid:
    def __getitem__(self, key: Any) -> tuple[Idx, ...]:
        return _Axes(Idx(a) for a in np.mgrid[key])


def run_kernel(source: str, name: str, inputs: Mapping[str, np.ndarray],
               scalars: Mapping[str, Any] | None = None, grid: Sequence[int] = (),
               label: str = "<kernel>", dtypes: Mapping[str, str] | None = None) -> Run:
    """Execute kernel ``name`` of ``source`` on copies of ``inputs`` (every program id of
    ``grid`` in turn; ``dtypes``: the NKI dtype a parameter reports, float32 unless given);
    the :class:`Run` holds its events, problems and final tensors."""
    run = Run()
    _S.run, _S.tiles, _S.file = run, 0, label
    tensors = {k: Tensor(k, np.array(v, dtype=np.float64),
                         dtype=(dtypes or {}).get(k, "float32")) for k, v in inputs.items()}
    pids: list[int] = [0] * max(len(grid), 1)
    from egraph_tiles.nki.kernels.mock_ops import isa_module, language_module

    nl = language_module(pids, tuple(grid))
    isa = isa_module()
    nki = _Anything("nki")
    nki.jit = nki.trace = lambda f=None, **_: f if f is not None else (lambda g: g)
    nki.language, nki.isa = nl, isa
    typing = types.ModuleType("nki.typing")
    typing.tensor = Tensor
    nki.typing = typing
    mods = {"neuronxcc.nki": nki, "nki": nki, "neuronxcc.nki.language": nl, "nki.language": nl,
            "neuronxcc.nki.isa": isa, "nki.isa": isa, "neuronxcc.nki.typing": typing,
            "nki.typing": typing}

    def importer(mod: str, globals_: Any = None, locals_: Any = None, fromlist: Any = (),
                 level: int = 0) -> Any:
        if mod in mods:
            if fromlist or "." not in mod:
                return mods[mod]
            return types.SimpleNamespace(nki=nki)
        if mod == "neuronxcc":
            return types.SimpleNamespace(nki=nki)
        if mod == "numpy":
            return _NUMPY
        if mod.split(".")[0] in ("numpy", "math", "functools", "typing", "dataclasses", "enum",
                                 "operator", "itertools", "collections"):
            return __import__(mod, globals_, locals_, fromlist, level)
        return _Anything(mod)  # a library the kernel file imports but the kernel does not use

    env: dict[str, Any] = {"__builtins__": {**vars(builtins), "__import__": importer}}
    exec(compile(source, label, "exec"), env)  # noqa: S102 -- the mock runs trusted kernels
    fn = env[name]
    params = {k: _config(v, env) for k, v in (scalars or {}).items()}
    for combo in itertools.product(*[range(g) for g in grid]) if grid else [()]:
        pids[:len(combo)] = list(combo)
        result = fn(**tensors, **params)
        if isinstance(result, Tensor):  # a kernel that allocates and returns its output
            run.outputs.setdefault("<return>", result.data)
    run.outputs.update({k: t.data for k, t in tensors.items()})
    return run


def _config(value: Any, env: dict[str, Any]) -> Any:
    """A configuration object given as ``Name(field=value)``: built from the kernel file's class."""
    if isinstance(value, ConfigCall):
        return env[value.cls](*value.args, **{k: _config(v, env) for k, v in value.kwargs})
    return value


def compare(legacy: str, migrated: str, name: str, shapes: Mapping[str, Sequence[int]],
            scalars: Mapping[str, Any] | None = None, grid: Sequence[int] = (),
            seed: int = 0, dtypes: Mapping[str, str] | None = None) -> list[str]:
    """Run both kernels on the same random inputs; the differences (empty: the same program,
    statement by statement, with no shape mismatch and no out-of-bounds element)."""
    rng = np.random.default_rng(seed)
    inputs = {k: rng.standard_normal(tuple(s)) for k, s in shapes.items()}
    a = run_kernel(legacy, name, inputs, scalars, grid, "<legacy>", dtypes)
    b = run_kernel(migrated, name, inputs, scalars, grid, "<migrated>", dtypes)
    out = [f"legacy {p}" for p in a.problems] + [f"migrated {p}" for p in b.problems]
    if len(a.events) != len(b.events):
        out.append(f"{len(a.events)} instructions ran in the legacy kernel, "
                   f"{len(b.events)} in the migrated one")
    for x, y in zip(a.events, b.events):
        if (x.kind, x.touched) != (y.kind, y.touched):
            out.append(f"legacy line {x.line} ({x.kind}) and migrated line {y.line} "
                       f"({y.kind}) touch different elements")
            break
    for k in a.outputs.keys() | b.outputs.keys():
        if k not in a.outputs or k not in b.outputs or not np.array_equal(
                a.outputs[k], b.outputs[k], equal_nan=True):
            out.append(f"tensor {k} differs after the run")
    return out
