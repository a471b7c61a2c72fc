"""The op registry: one declaration per op.

Rules and passes read *properties* from here instead of matching op names:

* ``inherits_input_memory`` — the output is a view into argument 0's storage
  (slice, reshape, set_validshape, reinterpret_view, transpose_view);
* ``inplace_safe`` — the output may share its input's buffer (False for extract,
  move, transpose: they produce fresh buffers);
* ``reuses_arg`` — the output is written back into that argument's storage
  (matmul_acc / gemv_acc / matmul_mx_acc / fillpad_inplace: 0; store: 2);
* ``family`` — which canonicalization rules apply to slice operands;
* ``left_arg`` / ``right_arg`` — the matmul operand positions (Left / Right).

A new op is one :func:`_op` line plus, when its type is new, an inference function.
An op that is not registered is *opaque*: it may read and write every argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable

from .exprs import Call, Const, Expr, ListExpr, Symbol, const_int
from .types import DType, MemorySpace, ScalarType, TensorType, TileType, Type, UnknownType


class Family(Enum):
    LOAD = "load"
    STORE = "store"
    CREATE = "create"
    VIEW = "view"  # zero-copy views: slice, reshape, set_validshape, ...
    COPY = "copy"  # fresh buffers: extract, move, transpose
    MATMUL = "matmul"  # matmul-family (operands in Left / Right, result in Acc)
    COL_EXPAND = "col_expand"  # col_expand / col_expand_mul / _add / ...
    VECTOR = "vector"  # ordinary vector ops
    SCALAR = "scalar"  # ops producing scalars (get_block_idx, ...)


class OpTypeError(ValueError):
    """A call whose argument types do not fit the op (shape/dtype/memory mismatch)."""


InferFn = Callable[["BoundCall"], Type]


@dataclass(frozen=True)
class OpDef:
    name: str
    params: tuple[str, ...]  # positional parameter names, in order
    infer: InferFn
    family: Family
    #: memory spaces each tile parameter accepts (absent: any)
    input_memory: tuple[tuple[str, frozenset[MemorySpace]], ...] = ()
    #: memory of the output: a fixed space, "target_memory" (from the kwarg), or
    #: "inherit" (argument 0's memory)
    output_memory: MemorySpace | str | None = None
    default_target: MemorySpace | None = None
    inherits_input_memory: bool = False
    inplace_safe: bool = True
    reuses_arg: int | None = None
    left_arg: int | None = None
    right_arg: int | None = None
    #: the argument index of a bias operand that must never be rewritten
    bias_arg: int | None = None

    @property
    def writes_back(self) -> bool:
        return self.reuses_arg is not None

    def accepted_memory(self, param: str) -> frozenset[MemorySpace] | None:
        for p, spaces in self.input_memory:
            if p == param:
                return spaces
        return None


class BoundCall:
    """A call with its arguments bound to parameter names, plus argument types."""

    def __init__(self, op: OpDef, call: Call, arg_types: dict[str, Type | None]):
        self.op = op
        self.call = call
        self.types = arg_types
        self.args: dict[str, Expr] = {}
        for i, a in enumerate(call.args):
            if i >= len(op.params):
                raise OpTypeError(
                    f"{op.name} takes at most {len(op.params)} positional arguments "
                    f"({', '.join(op.params)}), got {len(call.args)}"
                )
            self.args[op.params[i]] = a
        for k, v in call.kwargs:
            if k in self.args:
                raise OpTypeError(f"{op.name}: argument {k!r} given twice")
            self.args[k] = v

    def arg(self, name: str) -> Expr | None:
        return self.args.get(name)

    def require(self, name: str) -> Expr:
        e = self.args.get(name)
        if e is None:
            raise OpTypeError(f"{self.op.name} needs argument {name!r}")
        return e

    def type_of(self, name: str) -> Type | None:
        return self.types.get(name)

    def tile(self, name: str) -> TileType:
        t = self.types.get(name)
        if not isinstance(t, TileType):
            raise OpTypeError(f"{self.op.name}: argument {name!r} must be a tile, got {_tname(t)}")
        return t

    def shape(self, name: str) -> tuple[Expr, ...]:
        return shape_of(self.require(name), f"{self.op.name} argument {name!r}")

    def memory(self, default: MemorySpace | None = None) -> MemorySpace | None:
        e = self.args.get("target_memory")
        if e is None:
            return default
        if isinstance(e, Symbol) and isinstance(e.value, MemorySpace):
            return e.value
        raise OpTypeError(f"{self.op.name}: target_memory must be a pl.Mem.* space")

    def dtype(self, name: str) -> DType:
        e = self.require(name)
        if isinstance(e, Symbol) and isinstance(e.value, DType):
            return e.value
        raise OpTypeError(f"{self.op.name}: {name} must be a pl.<dtype>")


def _tname(t: Type | None) -> str:
    return "nothing" if t is None else type(t).__name__


def shape_of(e: Expr, what: str) -> tuple[Expr, ...]:
    if not isinstance(e, ListExpr):
        raise OpTypeError(f"{what} must be a list such as [16, 64]")
    return e.items


def dims_agree(a: tuple[Expr, ...], b: tuple[Expr, ...]) -> bool:
    """Same rank, and no two constant dimensions differ (symbolic ones may agree)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        cx, cy = const_int(x), const_int(y)
        if cx is not None and cy is not None and cx != cy:
            return False
    return True


# ---------------------------------------------------------------- inference functions


def _infer_load(b: BoundCall) -> Type:
    t = b.type_of("tensor")
    if not isinstance(t, TensorType):
        raise OpTypeError(f"tile.load reads a tensor, got {_tname(t)}")
    shape = b.shape("shape")
    offs = b.shape("offsets")
    if len(shape) != len(t.shape) or len(offs) != len(t.shape):
        raise OpTypeError(f"tile.load: offsets/shape rank must equal the tensor rank {len(t.shape)}")
    valid = shape_of(b.args["valid_shape"], "valid_shape") if "valid_shape" in b.args else None
    return TileType(shape, t.dtype, b.memory(MemorySpace.Vec), valid)


def _infer_store(b: BoundCall) -> Type:
    tile = b.tile("tile")
    out = b.type_of("output")
    if not isinstance(out, TensorType):
        raise OpTypeError(f"store writes into a tensor, got {_tname(out)}")
    if tile.dtype != out.dtype:
        raise OpTypeError(f"store: tile dtype {tile.dtype.name} differs from tensor dtype {out.dtype.name}")
    if len(b.shape("offsets")) != len(out.shape):
        raise OpTypeError("store: offsets rank must equal the tensor rank")
    return out


def _infer_create(b: BoundCall) -> Type:
    return TileType(b.shape("shape"), b.dtype("dtype"), b.memory(MemorySpace.Vec))


def _infer_slice(b: BoundCall) -> Type:
    src = b.tile("src")
    shape = b.shape("shape")
    offs = b.shape("offset")
    if len(shape) != src.rank or len(offs) != src.rank:
        raise OpTypeError(f"tile.slice: shape and offset must have rank {src.rank}")
    valid = shape_of(b.args["valid_shape"], "valid_shape") if "valid_shape" in b.args else None
    if "drop_dims" in b.args:
        drop = [const_int(d) for d in shape_of(b.args["drop_dims"], "drop_dims")]
        if any(d is None or not 0 <= d < len(shape) for d in drop):
            raise OpTypeError("tile.slice: drop_dims must be constant dimension indices")
        shape = tuple(s for i, s in enumerate(shape) if i not in drop)
        if valid is not None:
            valid = tuple(s for i, s in enumerate(valid) if i not in drop)
    return TileType(shape, src.dtype, src.memory, valid)


def _infer_extract(b: BoundCall) -> Type:
    src = b.tile("src")
    shape = b.shape("shape")
    if len(shape) != src.rank:
        raise OpTypeError(f"tile.extract: shape must have rank {src.rank}")
    return TileType(shape, src.dtype, b.memory(src.memory))


def _infer_move(b: BoundCall) -> Type:
    src = b.tile("src")
    return TileType(src.shape, src.dtype, b.memory(src.memory), src.valid_shape)


def _infer_reshape(b: BoundCall) -> Type:
    src = b.tile("src")
    shape = b.shape("shape")
    a, c = src.const_shape(), TileType(shape, src.dtype).const_shape()
    if a is not None and c is not None and _prod(a) != _prod(c):
        raise OpTypeError(f"tile.reshape: {list(a)} and {list(c)} have different element counts")
    return TileType(shape, src.dtype, src.memory)


def _infer_set_validshape(b: BoundCall) -> Type:
    src = b.tile("src")
    return TileType(src.shape, src.dtype, src.memory, b.shape("valid_shape"))


def _infer_reinterpret(b: BoundCall) -> Type:
    src = b.tile("src")
    dt = b.dtype("dtype")
    last = const_int(src.shape[-1])
    if last is None:
        raise OpTypeError("tile.reinterpret_view needs a constant last dimension")
    bits = last * src.dtype.storage_bits
    if bits % dt.storage_bits:
        raise OpTypeError(f"tile.reinterpret_view: {bits} bits per row do not split into {dt.name}")
    return TileType((*src.shape[:-1], Const(bits // dt.storage_bits)), dt, src.memory)


def _infer_transpose(b: BoundCall) -> Type:
    src = b.tile("src")
    if src.rank != 2:
        raise OpTypeError(f"{b.op.name} needs a 2-D tile")
    mem = b.memory(src.memory) if b.op.output_memory == "target_memory" else src.memory
    return TileType((src.shape[1], src.shape[0]), src.dtype, mem)


def _acc_dtype(a: DType) -> DType:
    return DType.INT32 if a.is_int else DType.FP32


def _infer_matmul(b: BoundCall) -> Type:
    a, c = b.tile("lhs"), b.tile("rhs")
    if a.rank != 2 or c.rank != 2:
        raise OpTypeError(f"{b.op.name} needs 2-D operands")
    if not dims_agree((a.shape[1],), (c.shape[0],)):
        raise OpTypeError(f"{b.op.name}: inner dimensions differ ({a.shape[1]} vs {c.shape[0]})")
    if a.dtype != c.dtype:
        raise OpTypeError(f"{b.op.name}: operand dtypes differ ({a.dtype.name} vs {c.dtype.name})")
    return TileType((a.shape[0], c.shape[1]), _acc_dtype(a.dtype), MemorySpace.Acc)


def _infer_matmul_acc(b: BoundCall) -> Type:
    acc = b.tile("acc")
    res = _infer_matmul(b)
    assert isinstance(res, TileType)
    if not dims_agree(acc.shape, res.shape):
        raise OpTypeError(
            f"{b.op.name}: accumulator shape {list(acc.shape)} differs from the product shape {list(res.shape)}"
        )
    return TileType(acc.shape, acc.dtype, acc.memory, acc.valid_shape)


def _infer_batch_matmul(b: BoundCall) -> Type:
    a, c = b.tile("lhs"), b.tile("rhs")
    if a.rank != 3 or c.rank != 3:
        raise OpTypeError(f"{b.op.name} needs 3-D operands")
    if not dims_agree((a.shape[2],), (c.shape[1],)):
        raise OpTypeError(f"{b.op.name}: inner dimensions differ")
    return TileType((a.shape[0], a.shape[1], c.shape[2]), _acc_dtype(a.dtype), MemorySpace.Acc)


def _infer_batch_matmul_acc(b: BoundCall) -> Type:
    acc = b.tile("acc")
    _infer_batch_matmul(b)
    return acc


def _infer_same_as_first(b: BoundCall) -> Type:
    t = b.tile(b.op.params[0])
    return TileType(t.shape, t.dtype, t.memory, t.valid_shape)


def _infer_binary(b: BoundCall) -> Type:
    x, y = b.tile("lhs"), b.tile("rhs")
    if not dims_agree(x.shape, y.shape):
        raise OpTypeError(f"{b.op.name}: shapes {list(x.shape)} and {list(y.shape)} differ")
    if x.dtype != y.dtype:
        raise OpTypeError(f"{b.op.name}: dtypes {x.dtype.name} and {y.dtype.name} differ")
    return TileType(x.shape, x.dtype, x.memory, x.valid_shape)


def _infer_col_expand(b: BoundCall) -> Type:
    x, v = b.tile("lhs"), b.tile("rhs")
    if x.rank != 2 or v.rank != 2:
        raise OpTypeError(f"{b.op.name} needs 2-D operands")
    if not dims_agree((x.shape[1],), (v.shape[1],)):
        raise OpTypeError(f"{b.op.name}: column counts {x.shape[1]} and {v.shape[1]} differ")
    if x.dtype != v.dtype:
        raise OpTypeError(f"{b.op.name}: dtypes {x.dtype.name} and {v.dtype.name} differ")
    return TileType(x.shape, x.dtype, x.memory, x.valid_shape)


def _infer_row_reduce(b: BoundCall) -> Type:
    x = b.tile("src")
    if x.rank != 2:
        raise OpTypeError(f"{b.op.name} needs a 2-D tile")
    return TileType((x.shape[0], Const(1)), x.dtype, x.memory)


def _infer_cast(b: BoundCall) -> Type:
    x = b.tile("src")
    return TileType(x.shape, b.dtype("dtype"), x.memory, x.valid_shape)


def _infer_index_scalar(b: BoundCall) -> Type:
    return ScalarType(DType.INDEX)


def _prod(xs: tuple[int, ...]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


# ---------------------------------------------------------------- the registry

_ONCHIP = frozenset({MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right,
                     MemorySpace.Acc, MemorySpace.Bias})
_VEC = frozenset({MemorySpace.Vec})
_MM_IN = frozenset({MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right})
_ACC = frozenset({MemorySpace.Acc})

#: the data paths a copy (extract / move / transpose) can take, by source space.
#: Mat -> Mat is absent: the L1 -> L1 DMA path does not exist (the seed's reason for
#: folding Mat slices); Left / Right / Bias are read only by the cube unit.
TRANSFERS: dict[MemorySpace, frozenset[MemorySpace]] = {
    MemorySpace.DDR: frozenset({MemorySpace.Vec, MemorySpace.Mat}),
    MemorySpace.Vec: frozenset({MemorySpace.Vec, MemorySpace.Mat, MemorySpace.DDR}),
    MemorySpace.Mat: frozenset({MemorySpace.Left, MemorySpace.Right, MemorySpace.Bias,
                                MemorySpace.Vec, MemorySpace.DDR}),
    MemorySpace.Acc: frozenset({MemorySpace.Vec, MemorySpace.Mat, MemorySpace.DDR}),
}

REGISTRY: dict[str, OpDef] = {}


def _op(name: str, params: tuple[str, ...], infer: InferFn, family: Family, **props) -> None:
    REGISTRY[name] = OpDef(name, params, infer, family, **props)


_op("tile.load", ("tensor", "offsets", "shape", "valid_shape"), _infer_load, Family.LOAD,
    output_memory="target_memory", default_target=MemorySpace.Vec, inplace_safe=False)
for _n in ("store", "tile.store"):
    _op(_n, ("tile", "offsets", "output"), _infer_store, Family.STORE,
        output_memory=MemorySpace.DDR, reuses_arg=2)
_op("tile.create", ("shape", "dtype"), _infer_create, Family.CREATE,
    output_memory="target_memory", default_target=MemorySpace.Vec, inplace_safe=False)
_op("tile.slice", ("src", "shape", "offset", "valid_shape", "drop_dims"), _infer_slice,
    Family.VIEW, output_memory="inherit", inherits_input_memory=True)
_op("tile.extract", ("src", "row", "col", "shape"), _infer_extract, Family.COPY,
    input_memory=(("src", _ONCHIP),), output_memory="target_memory", inplace_safe=False)
_op("tile.move", ("src",), _infer_move, Family.COPY,
    input_memory=(("src", _ONCHIP),), output_memory="target_memory", inplace_safe=False)
_op("tile.reshape", ("src", "shape"), _infer_reshape, Family.VIEW,
    output_memory="inherit", inherits_input_memory=True)
_op("tile.set_validshape", ("src", "valid_shape"), _infer_set_validshape, Family.VIEW,
    output_memory="inherit", inherits_input_memory=True)
_op("tile.reinterpret_view", ("src", "dtype"), _infer_reinterpret, Family.VIEW,
    output_memory="inherit", inherits_input_memory=True)
_op("tile.transpose_view", ("src",), _infer_transpose, Family.VIEW,
    output_memory="inherit", inherits_input_memory=True)
_op("tile.transpose", ("src",), _infer_transpose, Family.COPY,
    output_memory="target_memory", inplace_safe=False)

_op("tile.matmul", ("lhs", "rhs"), _infer_matmul, Family.MATMUL,
    input_memory=(("lhs", _MM_IN), ("rhs", _MM_IN)), output_memory=MemorySpace.Acc,
    inplace_safe=False, left_arg=0, right_arg=1)
_op("tile.matmul_bias", ("lhs", "rhs", "bias"), _infer_matmul, Family.MATMUL,
    input_memory=(("lhs", _MM_IN), ("rhs", _MM_IN)), output_memory=MemorySpace.Acc,
    inplace_safe=False, left_arg=0, right_arg=1, bias_arg=2)
for _n in ("tile.matmul_acc", "tile.gemv_acc"):
    _op(_n, ("acc", "lhs", "rhs"), _infer_matmul_acc, Family.MATMUL,
        input_memory=(("acc", _ACC), ("lhs", _MM_IN), ("rhs", _MM_IN)),
        output_memory=MemorySpace.Acc, reuses_arg=0, left_arg=1, right_arg=2)
_op("tile.matmul_mx_acc", ("acc", "lhs", "rhs", "lhs_scale", "rhs_scale"), _infer_matmul_acc,
    Family.MATMUL, input_memory=(("acc", _ACC), ("lhs", _MM_IN), ("rhs", _MM_IN)),
    output_memory=MemorySpace.Acc, reuses_arg=0, left_arg=1, right_arg=2)
_op("tile.batch_matmul", ("lhs", "rhs"), _infer_batch_matmul, Family.MATMUL,
    output_memory=MemorySpace.Acc, inplace_safe=False)
_op("tile.batch_matmul_acc", ("acc", "lhs", "rhs"), _infer_batch_matmul_acc, Family.MATMUL,
    output_memory=MemorySpace.Acc, reuses_arg=0)

for _n in ("col_expand", "col_expand_mul", "col_expand_add", "col_expand_sub",
           "col_expand_div", "col_expand_max", "col_expand_min"):
    _op(f"tile.{_n}", ("lhs", "rhs"), _infer_col_expand, Family.COL_EXPAND,
        input_memory=(("lhs", _VEC), ("rhs", _VEC)), output_memory="inherit")

for _n in ("muls", "adds", "subs", "divs", "maxs", "mins"):
    _op(f"tile.{_n}", ("src", "scalar"), _infer_same_as_first, Family.VECTOR,
        input_memory=(("src", _VEC),), output_memory="inherit")
for _n in ("add", "sub", "mul", "div", "max", "min"):
    _op(f"tile.{_n}", ("lhs", "rhs"), _infer_binary, Family.VECTOR,
        input_memory=(("lhs", _VEC), ("rhs", _VEC)), output_memory="inherit")
for _n in ("exp", "sqrt", "rsqrt", "neg", "abs", "recip", "relu"):
    _op(f"tile.{_n}", ("src",), _infer_same_as_first, Family.VECTOR,
        input_memory=(("src", _VEC),), output_memory="inherit")
for _n in ("row_sum", "row_max", "row_min"):
    _op(f"tile.{_n}", ("src",), _infer_row_reduce, Family.VECTOR,
        input_memory=(("src", _VEC),), output_memory="inherit")
_op("tile.cast", ("src", "dtype"), _infer_cast, Family.VECTOR,
    input_memory=(("src", _VEC),), output_memory="inherit")
_op("tile.fillpad_inplace", ("src", "pad_value"), _infer_same_as_first, Family.VECTOR,
    input_memory=(("src", _VEC),), output_memory="inherit", reuses_arg=0)
_op("get_block_idx", (), _infer_index_scalar, Family.SCALAR)
_op("tile.get_block_idx", (), _infer_index_scalar, Family.SCALAR)


def lookup(name: str) -> OpDef | None:
    """The registered op, or None for an opaque call."""
    return REGISTRY.get(name)


def bind(call: Call, arg_types: dict[str, Type | None] | None = None) -> BoundCall:
    op = REGISTRY[call.op]
    return BoundCall(op, call, arg_types or {})


def infer_type(call: Call, type_of: Callable[[Expr], Type | None]) -> Type:
    """The result type of a registered call, or UnknownType for an opaque one.
    Raises :class:`OpTypeError` when arguments do not fit."""
    op = REGISTRY.get(call.op)
    if op is None:
        return UnknownType()
    b = BoundCall(op, call, {})
    b.types = {k: type_of(v) for k, v in b.args.items()}
    for param, spaces in op.input_memory:
        t = b.types.get(param)
        if isinstance(t, TileType) and t.memory is not None and t.memory not in spaces:
            raise OpTypeError(
                f"{op.name}: argument {param!r} is in {t.memory.value}, expected one of "
                f"{', '.join(sorted(s.value for s in spaces))}"
            )
    if op.family is Family.COPY and "src" in b.types:
        src, dst = b.types.get("src"), b.memory(None)
        if isinstance(src, TileType) and src.memory and dst and dst != src.memory:
            if dst not in TRANSFERS.get(src.memory, frozenset()):
                raise OpTypeError(f"{op.name} cannot move {src.memory.value} into {dst.value}")
        if op.name == "tile.extract" and isinstance(src, TileType) and dst == src.memory \
                and dst not in TRANSFERS.get(src.memory, frozenset()):
            raise OpTypeError(f"tile.extract cannot copy {dst.value} into {dst.value}")
    return op.infer(b)
