"""Parameter frames: where the tile a program function receives really lies, read from its calls.

A function analysed on its own takes each tile parameter for a dense, 32-byte-aligned tile of
its own.  When the parameter is in fact a window of a caller's tile (another row pitch, another
start), every address the function judges of it is judged in the wrong frame, and the caller has
to copy the window to make the assumption true — or, when the callee writes through it or hands
part of it back to be written, reject the kernel.  A **frame** states the parameter's real
layout instead: the bits between its rows and columns (``strides``) and the byte its first
element sits at (``start``), as the storage analysis of every caller (``ir.storage``) finds the
argument.

A Vec tile parameter gets a frame when the function does nothing with the tile itself but take
windows of it (every statement naming it, or a plain alias of it, is a ``tile.slice`` of it, or
a scalar ``tile.read`` / ``tile.write`` of one element: each window is then judged by the
function, at its real address), or passes it on whole only to framed parameters of other
functions (where those lie is then where its own calls pass it), and every call of the function
in the program passes an argument whose layout is known (strides and a constant start) with the
same column stride.  Where the calls agree, the frame is exact; where they pass the tile at
different row pitches or starts, the frame keeps what all of them share: the greatest common
divisor of the row strides and of the starts (a pitch the calls disagree on proves no window
dense), and each call's own frame beside it (``Frame.calls``: a window at constant offsets is
aligned when it is so in every one of them, ``rules.layout``).  Its callers
pass the argument as it is (no use context: never copied for the call), and the function judges
its windows in the frame.  Any other parameter keeps the dense-and-aligned assumption, and its
callers make it true (``egraph.calls``).

Frames are computed top-down over the call graph (a caller's own frames first: an argument that
is a window of the caller's framed parameter lies where that frame says).  A function with no
call in the program, or called inside a recursive cycle, frames nothing.  A tile parameter can
only be bound by a call in the program: tiles live in on-chip memory, and a host launches a
kernel with tensors.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from . import ops
from .effects import Share, call_of, call_operands, callee_name, param_position
from .exprs import Call, VarRef, const_int, const_shape, free_vars
from .stmts import AssignStmt, Function, Program, ReturnStmt, stmt_exprs, walk
from .storage import Layout, Storage, slice_args, storage_of
from .summaries import call_summaries, reached, whole_tile
from .target import ALIGN_BYTES
from .types import MemorySpace, TileType


@dataclass(frozen=True, slots=True)
class Frame:
    """Where a parameter's elements lie: ``strides`` bits per step of each dimension, its first
    element at byte ``start`` of an aligned allocation.  ``row_exact`` / ``start_exact`` False:
    the calls disagree, and the row stride / start is only known to be a multiple of that; no
    ``strides``: the calls disagree on the column stride too, and nothing is known."""

    strides: tuple[int, ...]
    start: int
    row_exact: bool = True
    start_exact: bool = True
    #: the calls pass it at different starts that agree modulo the alignment: ``start`` is
    #: that residue (all an address proof reads of it)
    residue: bool = False
    #: where the calls disagree: each call's own frame, ``(row stride, column stride, start)``
    #: (bits, bits, bytes; a start known modulo the alignment is that residue), so that a
    #: window at a constant offset is judged in every one of them (``rules.layout``)
    calls: tuple[tuple[int, int, int], ...] = ()

    @property
    def exact(self) -> bool:
        return self.row_exact and self.start_exact

    def describe(self, bits: int) -> str:
        """Where the frame puts a parameter of ``bits``-bit elements, in words."""
        if not self.strides:
            return "its calls pass tiles laid out differently: nothing is known of where it lies"
        if self.strides[-1] != bits:
            return "its columns are not one element apart (a transposed tile): nothing is known"
        rows = self.strides[0] // bits
        start = (f"byte {self.start} modulo {ALIGN_BYTES}" if self.residue else
                 f"byte {self.start}" if self.start_exact else f"a multiple of {self.start} bytes")
        return (f"rows {rows if self.row_exact else f'a multiple of {rows}'} elements apart, "
                f"its first element at {start} of an aligned buffer")


def joined(frames: list[Frame]) -> Frame | None:
    """The frame every one of ``frames`` is an instance of (see the module docstring): with no
    strides (nothing known) when they disagree on a column stride; None for no frames."""
    if not frames:
        return None
    if any(f.strides[1:] != frames[0].strides[1:] for f in frames):
        return Frame((), 0, False, False)
    rows = {f.strides[0] for f in frames}
    row = (gcd(*rows), *frames[0].strides[1:])
    # (only a start's residue modulo the alignment is ever read: calls that agree on it agree)
    starts = {f.start for f in frames}
    residues = {x % ALIGN_BYTES for x in starts}
    calls = tuple(sorted({(f.strides[0], f.strides[-1], f.start % ALIGN_BYTES) for f in frames})) \
        if len(rows) > 1 or len(residues) > 1 else ()
    if len(starts) == 1 and not any(f.residue for f in frames):
        return Frame(row, starts.pop(), len(rows) == 1, calls=calls)
    if len(residues) == 1:
        return Frame(row, residues.pop(), len(rows) == 1, residue=True, calls=calls)
    # (a residue r is known only modulo the alignment: a multiple of gcd(r, alignment))
    return Frame(row, gcd(*(gcd(f.start, ALIGN_BYTES) if f.residue else f.start for f in frames)),
                 len(rows) == 1, False, calls=calls)


def param_frames(program: Program | None) -> dict[tuple[str, int], Frame]:
    """The frame of every framed tile parameter of ``program``, by (function name, position)
    (see the module docstring); computed once per program."""
    sums = call_summaries(program)
    if sums is None:
        return {}
    got = sums.memo.get(("frames",))
    if got is None:
        got = sums.memo[("frames",)] = _Frames(program).all()  # type: ignore[arg-type]
    return got  # type: ignore[return-value]


def frames_of(program: Program | None, fn: Function) -> dict:
    """The frames of ``fn``'s parameters, by parameter variable."""
    frames = param_frames(program)
    return {p.var: frames[fn.name, k] for k, p in enumerate(fn.params) if (fn.name, k) in frames}


def framed_operand(program: Program | None, op: str, index: int | str) -> bool:
    """Whether operand ``index`` of a call of ``op`` binds a framed parameter of one of the
    program's own functions: the caller passes it as it is."""
    name = callee_name(op)
    if program is None or name is None:
        return False
    try:
        fn = program.function(name)
    except KeyError:
        return False
    k = param_position([p.var.name for p in fn.params], index)
    return isinstance(k, int) and (name, k) in param_frames(program)


class _Frames:
    def __init__(self, program: Program) -> None:
        self.program = program
        self.sums = call_summaries(program)
        self.done: dict[tuple[str, int], Frame | None] = {}
        self.active: set[str] = set()
        #: whether an answer being computed read a frame still being computed (a cycle)
        self.cut = False
        self.storages: dict[tuple, Storage] = {}

    def all(self) -> dict[tuple[str, int], Frame]:
        out = {}
        for fn in self.program.functions:
            for k in range(len(fn.params)):
                f = self.frame(fn, k)
                if f is not None:
                    out[fn.name, k] = f
        return out

    def frame(self, fn: Function, k: int) -> Frame | None:
        key = (fn.name, k)
        if key in self.done:
            return self.done[key]
        if fn.name in self.active:  # (a cycle: no frame here, and none kept of what read this)
            self.cut = True
            return None
        self.active.add(fn.name)
        outer, self.cut = self.cut, False
        try:
            got = self._frame(fn, k)
        finally:
            self.active.discard(fn.name)
        if not self.cut or not self.active:  # (the outermost answer stands: its cycles closed)
            self.done[key] = got
        self.cut = self.cut or outer
        return got

    def _frame(self, fn: Function, k: int) -> Frame | None:
        p = fn.params[k].var
        t = p.type
        if not isinstance(t, TileType) or t.memory is not MemorySpace.Vec or t.rank != 2 \
                or const_shape(t) is None or self.sums.get(fn.name) is None:  # type: ignore[union-attr]
            return None
        if not _only_windowed(self.sums.effects(fn), fn, p) and not self.only_passed(fn, p, None):  # type: ignore[union-attr]
            return None
        names = [q.var.name for q in fn.params]
        frames: list[Frame] = []
        handed_only = _only_handed_back(self.sums.effects(fn), fn, p)  # type: ignore[union-attr]
        for caller, call in self.sums.sites(fn.name):  # type: ignore[union-attr]
            if handed_only and self.unused(caller, call):
                continue  # (the call touches no byte of the tile: nothing reads what it hands back)
            args = [a for i, a in call_operands(call) if param_position(names, i) == k]
            if len(args) != 1 or type(args[0]) is not VarRef:
                return None
            got = self.passed(caller, args[0].var, t, (fn.name, k), frozenset())  # type: ignore[attr-defined]
            if got is None:
                return None
            frames += got
        return joined(frames)

    def passed(self, caller: Function, v, param_type: TileType, framing: tuple[str, int],
               seen: frozenset) -> list[Frame] | None:
        """Where argument ``v`` of a call in ``caller`` lies, for each way it gets there: its own
        place, or — when ``v`` is a parameter of ``caller`` that ``caller`` does nothing with
        but pass it on whole to parameters its calls frame (``framing``, the one being framed,
        among them: ``caller``'s own callers then pass it as it is) — where every call of
        ``caller`` passes it.  None: unknown."""
        j = next((i for i, q in enumerate(caller.params) if q.var is v), None)
        if j is None or self.frame(caller, j) is not None:
            f = self.argument(caller, v, param_type)
            return None if f is None else [f]
        if caller.name in seen or not self.only_passed(caller, v, framing):
            return None
        names = [q.var.name for q in caller.params]
        out: list[Frame] = []
        for outer, call in self.sums.sites(caller.name):  # type: ignore[union-attr]
            args = [a for i, a in call_operands(call) if param_position(names, i) == j]
            if len(args) != 1 or type(args[0]) is not VarRef:
                return None
            got = self.passed(outer, args[0].var, param_type, framing, seen | {caller.name})  # type: ignore[attr-defined]
            if got is None:
                return None
            out += got
        return out or None

    def only_passed(self, fn: Function, p, framing: tuple[str, int]) -> bool:
        """Whether every statement of ``fn`` naming ``p`` passes it whole to parameters of
        program functions their calls frame (``framing`` taken for framed)."""
        for s in walk(fn.body):
            if not any(p in free_vars(e) for e in stmt_exprs(s)):
                continue
            call = call_of(s)
            name = callee_name(call.op) if call is not None else None
            if name is None:
                return False
            try:
                callee = self.program.function(name)
            except KeyError:
                return False
            names = [q.var.name for q in callee.params]
            for i, a in call_operands(call):  # type: ignore[union-attr]
                if p not in free_vars(a):
                    continue
                k = param_position(names, i)
                if type(a) is not VarRef or not isinstance(k, int) \
                        or (name, k) != framing and self.frame(callee, k) is None:
                    return False
        return True

    def argument(self, caller: Function, v, param_type: TileType) -> Frame | None:
        """Where argument ``v`` of a call in ``caller`` lies (None: unknown)."""
        vt = v.type
        if not isinstance(vt, TileType) or vt.memory is not MemorySpace.Vec \
                or vt.dtype.storage_bits != param_type.dtype.storage_bits:
            return None
        st = self.storage(caller)
        lay: Layout | None = st.layout(v)
        root = self.frame_of(caller, lay.root) if lay is not None else None
        if root is not None and not root.exact:
            return None  # (only a multiple is known of where the caller's own parameter lies)
        if root is None and lay is not None and any(q.var is lay.root for q in caller.params):
            # (the caller's own parameter, not framed: where it lies is what its callers make
            # it, and they make nothing of it for a function that only frames it further)
            return None
        if lay is None or len(lay.strides) != 2:
            return None
        off = lay.offset_bytes()
        off_c = const_int(off) if off is not None else None
        start = self.root_start(caller, lay.root)
        if off_c is None or start is None:
            return None
        return Frame(lay.strides, start + off_c, residue=root is not None and root.residue)

    def unused(self, caller: Function, call: Call) -> bool:
        """Whether nothing in ``caller`` reads the result of ``call``."""
        for s in walk(caller.body):
            if call_of(s) is call:
                if not isinstance(s, AssignStmt):
                    return True
                target = s.target
                return not any(target in free_vars(e) for t in walk(caller.body) if t is not s
                               for e in stmt_exprs(t))
        return False

    def frame_of(self, caller: Function, v) -> Frame | None:
        """The frame of ``v`` when it is a framed parameter of ``caller``."""
        for k, q in enumerate(caller.params):
            if q.var is v:
                return self.frame(caller, k)
        return None

    def root_start(self, caller: Function, root) -> int | None:
        """The byte a root's first element sits at (a fresh or planned buffer: 0, an aligned
        allocation; a MemRef byte offset; a framed parameter: its frame's start)."""
        f = self.frame_of(caller, root)
        if f is not None:
            return f.start
        t = root.type
        if not isinstance(t, TileType):
            return None
        m = t.memref
        if m is None or m.is_sentinel:
            return 0
        return m.byte_offset if isinstance(m.byte_offset, int) and m.byte_offset >= 0 else None

    def storage(self, fn: Function) -> Storage:
        """``fn``'s storage analysis with the frames of its parameters known so far (kept per
        set of frames: one read inside a cycle may know fewer)."""
        frames = {}
        for k, q in enumerate(fn.params):
            f = self.frame(fn, k)
            if f is not None:
                frames[q.var] = f
        key = (fn.name, tuple(frames.values()))
        st = self.storages.get(key)
        if st is None:
            st = self.storages[key] = storage_of(fn, self.sums.effects(fn), frames)  # type: ignore[union-attr]
        return st


def _only_handed_back(fx, fn: Function, p) -> bool:
    """Whether ``fn`` does nothing with ``p`` but take windows of it (windows of windows) and
    return some of them: no op or call reads or writes any byte of it."""
    part = reached(fx, {p}, lambda e: True)
    for s in walk(fn.body):
        if isinstance(s, ReturnStmt):
            continue
        call = call_of(s)
        if any(v in part for e in stmt_exprs(s) for v in free_vars(e)) \
                and (call is None or call.op != "tile.slice") \
                and not (isinstance(s, AssignStmt) and type(s.value) is VarRef):
            return False
    return True


def _only_windowed(fx, fn: Function, p) -> bool:
    """Whether every statement of ``fn`` that names ``p`` or a plain alias of it takes a window
    of it (``tile.slice`` with it as the source) and nothing else."""
    same = whole_tile(fx, p)
    aliases = {p} | {e.dst for e in fx.edges if e.kind is Share.ALIAS and e.src in same}
    if same - aliases:
        return False  # (carried, merged or viewed as a whole)
    for s in walk(fn.body):
        named = {v for e in stmt_exprs(s) for v in free_vars(e)} & aliases
        if not named:
            continue
        if isinstance(s, AssignStmt) and type(s.value) is VarRef and s.value.var in aliases:
            continue  # a plain alias
        call = call_of(s)
        op = ops.lookup(call.op) if call is not None else None
        if op is not None and op.family is ops.Family.SCALAR:
            continue  # (one element read or written where it lies: no address to judge)
        if call is None or call.op != "tile.slice" or not isinstance(s, AssignStmt):
            return False
        _shape, _off, got = slice_args(call)
        src = got.get("src")
        rest = [x for key, x in got.items() if key != "src"]
        if type(src) is not VarRef or src.var not in aliases \
                or any(v in aliases for x in rest for v in free_vars(x)):
            return False
    return True
