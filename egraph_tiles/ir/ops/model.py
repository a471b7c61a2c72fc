"""The op model: what a registry entry states (:class:`OpDef`), binding a call to it, and the
registry itself (filled by the namespace modules of this package)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from functools import cached_property
from typing import Any, Callable

from ..exprs import Call, Expr, ListExpr, Symbol, const_int
from ..types import DType, MemorySpace, TileType, Type, UnknownType


class Family(Enum):
    LOAD = "load"
    STORE = "store"
    CREATE = "create"  # fresh tiles from shapes / scalars (create, full, ci, ...)
    VIEW = "view"  # zero-copy views: slice, reshape, set_validshape, ...
    COPY = "copy"  # fresh buffers copied from one tile: extract, move, transpose
    MATMUL = "matmul"  # matmul-family (operands in Left / Right, result in Acc)
    COL_EXPAND = "col_expand"  # col_expand / col_expand_mul / _add / ... (lazy subview textract)
    VECTOR = "vector"  # ordinary vector ops
    SCALAR = "scalar"  # ops producing scalars (get_block_idx, min, max, ...)
    TENSOR = "tensor"  # ops on DDR tensors (pl.tensor.*): no tile operand to canonicalize
    SYSTEM = "system"  # cross-core transfers, allocation, gathers / scatters we do not rewrite


class Role(StrEnum):
    """How a window operand is used: the context of ``(Use w ctx)`` in the rules.  ``egg`` is
    its egglog spelling, which the rules interpolate; the encoder writes ``str(role)`` into its
    rows.  Nothing spells a context as a bare string."""

    ORD = "ord"  # an ordinary call operand, and the SSA escapes (alias, loop init, yield)
    COLX = "colx"  # an operand of a Family.COL_EXPAND op (lazily materialized, #1640 / #2010)
    LEFT = "left"  # a matmul-family left operand (copied into Left)
    RIGHT = "right"  # a matmul-family right operand (copied into Right)
    # a window passed to a program function (egraph.calls): kept only when it is dense
    # (an identity copy) and aligned, else copied before the call
    CALL = "call"
    # ... that the function uses as a matmul operand: a Mat window is rejected (no Mat->Mat path)
    CUBE_CALL = "cube-call"
    # ... that does nothing with the tile but hand one window of it back (egraph.calls
    # ``passed_window``): kept when that window is aligned at its real address (the window's
    # offset plus the callee's, at the window's pitch), or dense and aligned; else copied
    HAND_BACK = "hand-back"
    # the operand of a view that lays its bytes out as a dense tile of the result's shape from
    # its base (``OpDef.relayout``: reshape, reinterpret_view): a Vec window is kept only when it
    # is dense (one row or the full width, any offset) and aligned, else copied first
    DENSE = "dense"
    # an SSA escape (loop initializer, yield) or the operand of a same-layout view
    # (set_validshape) whose value nothing reads or writes as a whole: only windows are taken of
    # it, each judged at its own address from the storage facts (ir.storage), which are the
    # window's as written.  Passed on as it is, never copied (a copy would move the bytes those
    # windows name, and take their writes)
    PASS = "pass"
    # the operand of a reshape / reinterpret_view whose result nothing reads or writes as a
    # whole, only windows of it (judged from the storage facts): a Vec window is kept when
    # dense (one row or the full width), at any address — the reshape touches no byte
    DENSE_PASS = "dense-pass"

    @property
    def egg(self) -> str:
        return f'"{self.value}"'

    @property
    def copy_memory(self) -> MemorySpace:
        """Where the safe copy of a window used in this role goes."""
        return {Role.LEFT: MemorySpace.Left, Role.RIGHT: MemorySpace.Right}.get(self, MemorySpace.Vec)

    @property
    def label(self) -> str:
        return {Role.LEFT: "left operand", Role.RIGHT: "right operand",
                Role.COLX: "col_expand operand"}.get(self, "operand")


class Kind(Enum):
    """What a parameter holds."""

    TILE = "tile"
    TENSOR = "tensor"
    SHAPE = "shape"  # a list of extents
    INDICES = "indices"  # a list of offsets (INDEX scalars)
    INDEX = "index"  # one offset / extent
    SCALAR = "scalar"  # a scalar value (int / float / Scalar)
    DTYPE = "dtype"
    MEMORY = "memory"
    ATTR = "attr"  # anything else (enum, bool, string, dict)
    #: a runtime object that is neither a tile nor a tensor: a communication context, a window
    #: buffer pointer, a prefetch context / event / session, a scalar array, a runtime future
    HANDLE = "handle"


class Access(Enum):
    """What an op does to one operand (PyPTO's per-argument effect)."""

    READ = "read"
    WRITE = "write"  # overwritten without being read first (a destination)
    READ_WRITE = "read-write"  # read and written (accumulated into, updated in place)


class Storage(Enum):
    """Where an op's result lives, relative to its operands."""

    FRESH = "fresh"  # a new buffer
    VIEW = "view"  # a zero-copy view of operand ``of``
    WRITES = "writes"  # the op writes into operand ``of``; the result names that storage
    VALUE = "value"  # a scalar, or nothing


@dataclass(frozen=True)
class Effect:
    storage: Storage
    of: int | None = None


FRESH = Effect(Storage.FRESH)
VALUE = Effect(Storage.VALUE)


def view_of(k: int) -> Effect:
    return Effect(Storage.VIEW, k)


def writes(k: int) -> Effect:
    return Effect(Storage.WRITES, k)


@dataclass(frozen=True)
class WindowOperand:
    """A window operand: ``src`` read at ``offsets`` (one list parameter, or one parameter per
    axis) with extent ``shape``."""

    src: str
    offsets: str | tuple[str, ...]
    shape: str


class OpTypeError(ValueError):
    """A call whose argument types do not fit the op (shape/dtype/memory mismatch)."""


InferFn = Callable[["BoundCall"], Type]


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind


@dataclass(frozen=True)
class OpDef:
    name: str
    signature: tuple[Param, ...]  # positional parameters, in order
    infer: InferFn | None
    family: Family
    effect: Effect | None = FRESH
    #: memory spaces each tile parameter has after PyPTO's memory-space inference (absent:
    #: any).  Not checked at this pipeline point; the hardware model cannot run other spaces.
    input_memory: tuple[tuple[str, frozenset[MemorySpace]], ...] = ()
    #: memory of the output: a fixed space, "target_memory" (from the kwarg), or
    #: "inherit" (argument 0's memory)
    output_memory: MemorySpace | str | None = None
    default_target: MemorySpace | None = None
    inplace_safe: bool = True
    left_arg: int | None = None
    right_arg: int | None = None
    #: the argument index of a bias operand that must never be rewritten
    bias_arg: int | None = None
    window: WindowOperand | None = None
    #: keyword-only attributes PyPTO prints (target_memory, pad_value, atomic, ...)
    attrs: tuple[str, ...] = ()
    #: the numpy meaning the simulators apply (signature by family, see ``sim.interp``)
    numpy: Callable[..., Any] | None = None
    #: a view that reinterprets its operand's bytes as another dtype
    reinterprets: bool = False
    #: a view with its operand's exact layout (only metadata such as the valid shape changes)
    same_layout: bool = False
    #: a view that keeps its operand's bytes but, for some operands, lays them out afresh: given
    #: the operand's memory, its dims and the result's dims (ints; None where not constant),
    #: whether the result reads those bytes in another element order (see :meth:`relayouts`)
    relayout: Callable[[MemorySpace | None, tuple[int | None, ...], tuple[int | None, ...]],
                       bool] | None = None
    #: a scalar op's bounds from its arguments' ``(lo, hi)`` bounds (None: unknown side)
    interval: Callable[[list[tuple[int | None, int | None]]], tuple[int | None, int | None]] | None = None
    #: operands written besides the one ``effect`` names (a collective's signal matrix, the
    #: staging tiles a cross-rank transfer passes every chunk through)
    also_writes: tuple[int, ...] = ()
    #: written operands that are overwritten without being read first (a store's destination);
    #: a call that accumulates (``atomic=`` other than none, a notify with ``op=`` AtomicAdd)
    #: reads its destination (the operand its result names) too.  Every other written operand
    #: is read and written.
    overwrites: tuple[int, ...] = ()

    # -- derived properties (what passes and rules read)

    @cached_property
    def params(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.signature)

    @property
    def classified(self) -> bool:
        """Whether the op's writes are known (an unregistered op is unclassified too)."""
        return self.effect is not None

    @property
    def inherits_input_memory(self) -> bool:
        """The output is a view into argument 0's storage."""
        return self.effect is not None and self.effect.storage is Storage.VIEW

    @property
    def reuses_arg(self) -> int | None:
        """The argument the output is written back into."""
        e = self.effect
        return e.of if e is not None and e.storage is Storage.WRITES else None

    @property
    def writes_back(self) -> bool:
        return self.reuses_arg is not None

    @cached_property
    def written(self) -> tuple[int, ...]:
        """Every operand the op writes: the one its result names, then ``also_writes``."""
        k = self.reuses_arg
        return ((k,) if k is not None else ()) + tuple(i for i in self.also_writes if i != k)

    def access(self, index: int, kwargs: tuple[tuple[str, Expr], ...] = ()) -> Access | None:
        """What a call with keyword arguments ``kwargs`` does to operand ``index``; None for an
        unclassified op (it may read or write any operand)."""
        if not self.classified:
            return None
        if index not in self.written:
            return Access.READ
        if index in self.overwrites and not (index == self.reuses_arg and accumulates(kwargs)):
            return Access.WRITE
        return Access.READ_WRITE

    @property
    def modeled(self) -> bool:
        return self.numpy is not None

    def relayouts(self, memory: MemorySpace | None, src: tuple[int | None, ...],
                  out: tuple[int | None, ...]) -> bool:
        """Whether this view of an operand in ``memory`` with dims ``src`` as a result with dims
        ``out`` names the operand's bytes in another element order: then it is *not* a zero-copy
        view of the operand's values (its numpy meaning does not hold on the device), and a value
        read or written through it is a different element of the operand."""
        return self.relayout is not None and self.relayout(memory, tuple(src), tuple(out))

    def role(self, index: int | None) -> Role | None:
        """The use context of argument ``index``; None: never rewritten (accumulator, bias,
        scales, an operand of a matmul-family op without Left / Right operands)."""
        if self.family is Family.MATMUL:
            if index is not None and index == self.left_arg:
                return Role.LEFT
            if index is not None and index == self.right_arg:
                return Role.RIGHT
            return None
        if self.family is Family.COL_EXPAND:
            return Role.COLX
        if self.family is Family.SCALAR:
            # one element read or written at the window's address: no vector alignment to
            # prove, and never copied (a copy would take a write and lose it)
            return None
        if self.relayout is not None and index == 0:
            return Role.DENSE
        return Role.ORD

    def accepted_memory(self, param: str) -> frozenset[MemorySpace] | None:
        for p, spaces in self.input_memory:
            if p == param:
                return spaces
        return None

    def kind(self, param: str) -> Kind | None:
        for p in self.signature:
            if p.name == param:
                return p.kind
        return None


class BoundCall:
    """A call with its arguments bound to parameter names, plus argument types."""

    def __init__(self, op: OpDef, call: Call, arg_types: dict[str, Type | None]):
        self.op = op
        self.call = call
        self.types = arg_types
        self.args: dict[str, Expr] = {}
        params = op.params
        for i, a in enumerate(call.args):
            if i >= len(params):
                raise OpTypeError(
                    f"{op.name} takes at most {len(params)} positional arguments "
                    f"({', '.join(params)}), got {len(call.args)}"
                )
            self.args[params[i]] = a
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
            raise OpTypeError(f"{self.op.name}: argument {name!r} must be a tile, got {tname(t)}")
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

    def window_parts(self) -> tuple[Expr, list[Expr], ListExpr] | None:
        """Source, offsets and shape of the op's window operand, when spelled as lists."""
        w = self.op.window
        if w is None:
            return None
        src, shape = self.args.get(w.src), self.args.get(w.shape)
        if isinstance(w.offsets, str):
            off = self.args.get(w.offsets)
            offs = list(off.items) if isinstance(off, ListExpr) else None
        else:
            got = [self.args.get(o) for o in w.offsets]
            offs = None if any(o is None for o in got) else got  # type: ignore[assignment]
        if src is None or offs is None or not isinstance(shape, ListExpr):
            return None
        return src, offs, shape


def tname(t: Type | None) -> str:
    return "nothing" if t is None else type(t).__name__


def accumulates(kwargs: tuple[tuple[str, Expr], ...]) -> bool:
    """Whether a call's keywords make a destination write accumulate into what it holds: an
    ``atomic=`` mode other than none (``pl.AtomicType.None_`` or 0), or a notify's ``op=``
    naming an atomic add."""
    for k, v in kwargs:
        name = ".".join(v.path) if isinstance(v, Symbol) else None
        if k == "atomic" and not (const_int(v) == 0 or (name is not None and name.endswith("None_"))):
            return True
        if k == "op" and name is not None and "Atomic" in name:
            return True
    return False


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


def dims_agree_flattened(a: tuple[Expr, ...], b: tuple[Expr, ...]) -> bool:
    """:func:`dims_agree`, or one side the other flattened to 2-D (leading dims merged into
    rows): PyPTO's FlattenTileNdTo2D annotates an N-D value flattened, and leaves some N-D (a
    batch matmul's Mat operand) annotated N-D where the registry types the load flattened."""
    if dims_agree(a, b):
        return True
    if len(b) == 2 and len(a) > 2:
        a, b = b, a
    if len(a) != 2 or len(b) <= 2 or not dims_agree(a[1:], b[-1:]):
        return False
    lead = [const_int(d) for d in b[:-1]]
    rows = const_int(a[0])
    return rows is None or None in lead or rows == prod(tuple(lead))  # type: ignore[arg-type]


def prod(xs: tuple[int, ...]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


# ---------------------------------------------------------------- the registry

ONCHIP = frozenset({MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right,
                     MemorySpace.Acc, MemorySpace.Bias})
VEC = frozenset({MemorySpace.Vec})
LEFT = frozenset({MemorySpace.Left})
RIGHT = frozenset({MemorySpace.Right})
ACC = frozenset({MemorySpace.Acc})

#: the data paths a copy (extract / move / transpose) can take, by source space, as the
#: hardware model runs them.  Mat -> Mat is absent: the L1 -> L1 DMA path does not exist (the
#: seed's reason for folding Mat slices); Left / Right / Bias are read only by the cube unit.
TRANSFERS: dict[MemorySpace, frozenset[MemorySpace]] = {
    MemorySpace.DDR: frozenset({MemorySpace.Vec, MemorySpace.Mat}),
    MemorySpace.Vec: frozenset({MemorySpace.Vec, MemorySpace.Mat, MemorySpace.DDR}),
    MemorySpace.Mat: frozenset({MemorySpace.Left, MemorySpace.Right, MemorySpace.Bias,
                                MemorySpace.Vec, MemorySpace.DDR}),
    MemorySpace.Acc: frozenset({MemorySpace.Vec, MemorySpace.Mat, MemorySpace.DDR}),
}

#: copies PyPTO itself rejects at any pipeline point (its code generator has no Mat -> Mat
#: textract / tmov: "no L1->L1 DMA").  Every other path is accepted at the input of
#: CanonicalizeTileSlice, where memory spaces are not yet inferred (InferTileMemorySpace runs
#: later and inserts the moves); the hardware model runs only the paths in TRANSFERS.
NO_PATH: frozenset[tuple[MemorySpace, MemorySpace]] = frozenset({(MemorySpace.Mat, MemorySpace.Mat)})

REGISTRY: dict[str, OpDef] = {}

_KINDS = {"t": Kind.TILE, "n": Kind.TENSOR, "s": Kind.SHAPE, "o": Kind.INDICES, "i": Kind.INDEX,
          "x": Kind.SCALAR, "d": Kind.DTYPE, "m": Kind.MEMORY, "a": Kind.ATTR, "h": Kind.HANDLE}


def _sig(spec: str) -> tuple[Param, ...]:
    """``"src:t shape:s offset:o"`` -> parameters (kinds: t tile, n tensor, s shape, o offsets,
    i index, x scalar, d dtype, m memory, a attribute)."""
    out = []
    for item in spec.split():
        name, k = item.split(":")
        out.append(Param(name, _KINDS[k]))
    return tuple(out)


def declare(name: str, spec: str, infer: InferFn | None, family: Family, **props: Any) -> None:
    if "attrs" in props and isinstance(props["attrs"], str):
        props["attrs"] = tuple(props["attrs"].split())
    REGISTRY[name] = OpDef(name, _sig(spec), infer, family, **props)



def lookup(name: str) -> OpDef | None:
    """The registered op, or None for an opaque (unclassified) call."""
    return REGISTRY.get(name)


def classified(name: str) -> bool:
    """Whether the registry knows what op ``name`` writes."""
    op = REGISTRY.get(name)
    return op is not None and op.classified


def operand_role(op_name: str, index: int | None) -> Role | None:
    """The use context of argument ``index`` of a call: the registry's role, or ``Role.ORD``
    for an unclassified op (its operand may be read or written)."""
    op = REGISTRY.get(op_name)
    return Role.ORD if op is None else op.role(index)


def bind(call: Call, arg_types: dict[str, Type | None] | None = None) -> BoundCall:
    op = REGISTRY[call.op]
    return BoundCall(op, call, arg_types or {})


def transfer_error(op: OpDef, src: MemorySpace | None, dst: MemorySpace | None) -> str | None:
    """Why a copy from ``src`` into ``dst`` is wrong by PyPTO's own rules, or None."""
    if src is None or dst is None or (src, dst) not in NO_PATH:
        return None
    return (f"{op.name} cannot copy {src.value} into {dst.value}: there is no "
            f"{src.value}->{dst.value} data path (PyPTO's code generator rejects it)")


def infer_type(call: Call, type_of: Callable[[Expr], Type | None]) -> Type:
    """The result type of a registered call, or UnknownType for an opaque one (or a registered
    one whose type PyPTO's annotation gives).  Raises :class:`OpTypeError` when arguments do not
    fit.  Memory spaces of operands are not checked: at the input of CanonicalizeTileSlice
    PyPTO has not inferred them yet."""
    op = REGISTRY.get(call.op)
    if op is None:
        return UnknownType()
    b = BoundCall(op, call, {})
    b.types = {k: type_of(v) for k, v in b.args.items()}
    if op.family is Family.COPY and "src" in b.types:
        src = b.types.get("src")
        if isinstance(src, TileType):
            dst = b.memory(src.memory)
            if op.window is not None or dst != src.memory:
                why = transfer_error(op, src.memory, dst)
                if why is not None:
                    raise OpTypeError(why)
    if op.infer is None:
        return UnknownType()
    return op.infer(b)
