"""Storage facts of every tile value of one function, computed once from its memory effects.

For each tile value the analysis says where its elements sit: the buffer it names (its *root*:
a value no storage edge defines — a load, a parameter, an op's fresh result), its bit offset
into that buffer (affine in the function's scalars) and the bits between consecutive elements
of each dimension (its strides).  A value a slice, a view, an alias, a write-back, a loop carry
or an ``if`` merge defines gets its fact by composing its source's (``ir.effects`` edges, read
by their :class:`~egraph_tiles.ir.effects.Share` kind):

* an alias, ``set_validshape`` (registry ``same_layout``) and a write-back result keep the
  fact; a slice (any spelling) adds its offset times the strides (``drop_dims`` drops strides);
  ``transpose_view`` swaps the last two strides; ``reshape`` / ``reinterpret_view`` lay the bytes
  out densely from the operand's first element (as the device does);
* a loop iter-arg has a fact only when its initializer and the trailing yield agree, an ``if``
  result only when both arms agree (otherwise unknown);
* a program function's result is the argument's fact offset by ``Edge.at`` when the callee's own
  analysis proves it is exactly the parameter's elements from that index on
  (:func:`exact_index`); an edge kind not listed (any other call result sharing an argument's
  storage, a tuple element, the result of an op the registry cannot classify) gives *unknown*.

Unknown is the conservative answer: a reader (``egraph.encode``) states no layout fact for such
a value, so no rule can prove a view of it.  The analysis also records which Mat-resident and
valid_shape / drop_dims slices a value may name (:attr:`Storage.origins`, through every edge but
a slice's own) and where a value flows (:meth:`Storage.flows_to`), for the guards that follow a
slice to its consumer.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from . import ops
from .effects import Edge, Effects, Share, branch_arm, call_of, trailing_yield
from .exprs import BinOp, Call, Const, Expr, ListExpr, Var, VarRef, const_int, const_shape
from .mutator import StmtMutator
from .stmts import AssignStmt, ForStmt, Function, IfStmt, Stmt, WhileStmt
from .types import MemorySpace, TileType

#: an affine bit offset: ``{atom: coefficient}``, the atom a scalar ``Var``, an opaque scalar
#: expression, or None for the constant term
Affine = dict


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a value's elements sit: ``root``'s buffer, ``offset`` bits in (affine: a frozenset
    of ``(atom, coefficient)``), ``strides`` bits per step of each dimension."""

    root: Var
    offset: frozenset
    strides: tuple[int, ...]

    def offset_bytes(self) -> Expr | None:
        """The offset in bytes as an index expression (None when a term is not whole bytes)."""
        const, terms = 0, []
        for atom, k in self.offset:
            if k % 8:
                return None
            if atom is None:
                const = k // 8
            else:
                e = VarRef(atom) if isinstance(atom, Var) else atom
                terms.append(e if k == 8 else BinOp("*", e, Const(k // 8)))
        out: Expr | None = None
        for t in terms:
            out = t if out is None else BinOp("+", out, t)
        if out is None:
            return Const(const)
        return out if const == 0 else BinOp("+", out, Const(const))

    @property
    def is_zero(self) -> bool:
        return not self.offset


#: not computed yet (the analysis' bottom: an iter-arg before its yield is seen)
_BOTTOM = object()
#: the (value, arms taken) states :meth:`Storage.flows_to` follows before it stops telling
#: routes apart by their arms (each condition of the scalar parameters doubles them)
MAX_ARM_STATES = 4096


def dense_strides(shape: tuple[Expr, ...], bits: int) -> tuple[int, ...] | None:
    """Row-major strides (bits) of a tile of ``shape``; None when a dimension is symbolic."""
    dims = [const_int(d) for d in shape]
    if any(d is None for d in dims):
        return None
    out, step = [], bits
    for d in reversed(dims):
        out.append(step)
        step *= d  # type: ignore[operator]
    return tuple(reversed(out))


def affine(e: Expr) -> Affine:
    """``e`` as ``{atom: coefficient}``: sums, differences and products by a constant are
    expanded; any other expression is one opaque atom."""
    c = const_int(e) if type(e) is Const else None
    if c is not None:
        return {None: c} if c else {}
    if type(e) is VarRef:
        return {e.var: 1}  # type: ignore[attr-defined]
    if type(e) is BinOp and e.op in ("+", "-"):  # type: ignore[attr-defined]
        a, b = affine(e.lhs), affine(e.rhs)  # type: ignore[attr-defined]
        return _add(a, b, 1 if e.op == "+" else -1)  # type: ignore[attr-defined]
    if type(e) is BinOp and e.op == "*":  # type: ignore[attr-defined]
        for x, y in ((e.lhs, e.rhs), (e.rhs, e.lhs)):  # type: ignore[attr-defined]
            k = const_int(y)
            if k is not None:
                return _scale(affine(x), k)
    return {e: 1}


def _add(a: Affine, b: Affine, sign: int = 1) -> Affine:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + sign * v
        if out[k] == 0:
            del out[k]
    return out


def _scale(a: Affine, k: int) -> Affine:
    return {x: v * k for x, v in a.items()} if k else {}


def _meet(a: object, b: object) -> object:
    """The fact two incoming values agree on: either when the other is not computed yet, the
    same fact, else unknown (None)."""
    if a is _BOTTOM:
        return b
    if b is _BOTTOM or a == b:
        return a
    return None


@dataclass(eq=False)
class Storage:
    """The storage facts of one function (see the module docstring)."""

    fx: Effects
    #: the layout of every tile value an edge defines (None: unknown); a root is absent
    layouts: dict[Var, Layout | None] = field(default_factory=dict)
    #: the Mat-resident and valid_shape / drop_dims slices each value may name through aliases,
    #: views, write-backs, carries, merges and unknown edges (:func:`_followed`); such a slice
    #: names itself
    origins: dict[Var, frozenset[Var]] = field(default_factory=dict)
    #: the subset of :attr:`origins` a value may still *be*: reached through aliases,
    #: same-layout views (``set_validshape``), write-backs, carries, merges and unknown edges,
    #: never through a view that lays the elements out anew (``transpose_view``, a reshape).
    #: A col_expand op lazily materializes only such a value (the slice's own subview, #1640 /
    #: #2010); any view of the window still shares its addresses (:attr:`origins`).
    kept_origins: dict[Var, frozenset[Var]] = field(default_factory=dict)
    #: the edges leaving each value (where it flows)
    out_edges: dict[Var, list[Edge]] = field(default_factory=dict)
    #: the parameters whose layout their calls give (``ir.frames``): parameter -> Frame
    frames: dict = field(default_factory=dict)
    _arms: dict = field(default_factory=dict)

    def layout(self, v: Var) -> Layout | None:
        """``v``'s layout: a root's is dense from its own start (a framed parameter's: its
        frame's strides)."""
        if v in self.layouts:
            return self.layouts[v]
        f = self.frames.get(v)
        if f is None:
            return root_layout(v)
        # (a row stride the calls disagree on: unknown here, ``egraph.encode`` states its multiple)
        return Layout(v, frozenset(), f.strides) if f.row_exact and f.strides else None

    def is_root(self, v: Var) -> bool:
        return v not in self.layouts

    def escapes(self, stmt: Stmt, slot: tuple, v: Var) -> list[Var]:
        """The values ``v`` flows into at its use ``slot`` of ``stmt`` (as ``egraph.encode``
        names slots): a loop initializer its iter-arg, a trailing yield the iter-arg or ``if``
        result it feeds, an operand the result of a same-layout view of it (``set_validshape``),
        of a write-back into it, or of an edge of a kind this analysis does not model (a call
        result sharing its argument's storage, the result of an op the registry cannot
        classify).  A slice of it is a window of its own, and a
        plain alias the same value: neither is listed."""
        fx = self.fx
        kind = slot[0]
        if kind == "init" and isinstance(stmt, (ForStmt, WhileStmt)):
            if slot[1] >= len(stmt.iter_args):
                return []
            return [stmt.iter_args[slot[1]], *self._result_of(stmt, slot[1], v)]
        if kind == "yield":
            block = fx.points[stmt].path[-1]
            owner = fx.blocks[block] if block < len(fx.blocks) else None
            if isinstance(owner, (ForStmt, WhileStmt)):
                ok = trailing_yield(owner.body) is stmt and slot[1] < len(owner.iter_args)
                return [owner.iter_args[slot[1]], *self._result_of(owner, slot[1], v)] if ok \
                    else []
            if isinstance(owner, IfStmt) and slot[1] < len(owner.return_vars):
                return [owner.return_vars[slot[1]]]
            return []
        if kind not in ("arg", "kwarg"):
            return []
        return [e.dst for e in self.out_edges.get(v, ()) if e.stmt is stmt
                and e.kind is not Share.SLICE and e.kind is not Share.ALIAS
                and (e.kind is not Share.VIEW or same_layout(e))]

    def _result_of(self, loop: Stmt, index: int, v: Var) -> list[Var]:
        """The loop's result ``index`` when ``v`` is what it names directly (the last trip's
        yield, or the initializer of a loop that never runs: ``Share.LOOP_RESULT``)."""
        return [e.dst for e in self.out_edges.get(v, ()) if e.stmt is loop
                and e.kind is Share.LOOP_RESULT and e.index == index]

    def flows_to(self, v: Var, same_layout_only: bool = True, skip=None,
                 arms: frozenset = frozenset()) -> list[Var]:
        """The values ``v`` reaches through aliases, write-backs, carries, merges and edges of
        unknown kind (and views: only those keeping the layout, ``set_validshape``, when
        ``same_layout_only``; not the edges ``skip`` accepts), ``v`` first.  ``arms``: the
        branches ``v`` was reached by (:meth:`arm`); a route through the other arm of an ``if``
        testing the same condition is run by no execution and not followed."""
        seen, todo, out, got = {(v, arms)}, [(v, arms)], [v], {v}
        track = True
        while todo:
            x, taken = todo.pop()
            if track and len(seen) > MAX_ARM_STATES:
                # (too many distinct routes: every route is followed, as if no two ifs agreed)
                track = False
            for e in self.out_edges.get(x, ()):
                if e.kind is Share.SLICE or skip is not None and skip(e):
                    continue
                if e.kind is Share.VIEW and same_layout_only and not same_layout(e):
                    continue
                now = taken if track else frozenset()
                if track and e.kind is Share.IF_RESULT:
                    arm = self.arm(e)
                    if arm is not None:
                        if (arm[0], 1 - arm[1]) in taken:
                            continue
                        now = taken | {arm}
                if (e.dst, now) in seen:
                    continue
                seen.add((e.dst, now))
                todo.append((e.dst, now))
                if e.dst not in got:
                    got.add(e.dst)
                    out.append(e.dst)
        return out

    def arm(self, e: Edge) -> tuple[str, int] | None:
        """The branch an ``if`` result edge takes (``ir.effects.branch_arm``), read once."""
        got = self._arms.get(e, _BOTTOM)
        if got is _BOTTOM:
            got = self._arms[e] = branch_arm(self.fx, e.stmt, e.src, e.index)
        return got  # type: ignore[return-value]

    def route(self, src: Var, dst: Var) -> str | None:
        """How ``dst`` comes to name ``src``'s storage, in words (``"a loop carry, then the
        result of a call to self.ident"``): the steps of the shortest edge path from ``src`` to
        ``dst``; None when no edge path leads there."""
        prev: dict[Var, Edge] = {}
        todo = deque([src])
        while todo and dst not in prev:
            x = todo.popleft()
            for e in self.out_edges.get(x, ()):
                if e.dst is not src and e.dst not in prev:
                    prev[e.dst] = e
                    todo.append(e.dst)
        if dst not in prev:
            return None
        steps: list[str] = []
        x = dst
        while x is not src:
            e = prev[x]
            step = _STEP.get(e.kind)
            if step is None:
                call = call_of(e.stmt)
                op = call.op if call is not None else "an op"
                step = (f"the view {op}" if e.kind is Share.VIEW else
                        f"the result of a call to {op}" if e.kind is Share.CALL else
                        f"the result of {op}" if e.kind is Share.OPAQUE else
                        f"a write-back by {op}" if e.kind is Share.WRITEBACK else
                        f"a window by {op}")
            if not steps or steps[-1] != step:
                steps.append(step)
            x = e.src
        return ", then ".join(reversed(steps))


#: how an edge of each kind hands on its source's storage, in words (:meth:`Storage.route`)
_STEP = {Share.ALIAS: "an alias", Share.LOOP_INIT: "a loop carry", Share.LOOP_BACK: "a loop carry",
         Share.LOOP_RESULT: "a loop carry", Share.IF_RESULT: "an if merge",
         Share.ITEM: "a tuple element"}


def exact_index(st: Storage, v: Var, param: Var) -> tuple[int, ...] | None:
    """The index of ``param``'s element ``v`` starts at, when ``v``'s layout is exactly
    ``param``'s elements from there on with ``param``'s own (dense) strides and a constant offset;
    None otherwise (``Returned.at``: a caller composes it with the argument's layout)."""
    lay, base = st.layout(v), root_layout(param)
    if lay is None or base is None or lay.root is not param or lay.strides != base.strides:
        return None
    off = 0
    for atom, k in lay.offset:
        if atom is not None:
            return None
        off = k
    idx = []
    for stride in base.strides:
        idx.append(off // stride)
        off %= stride
    return tuple(idx) if off == 0 else None


def root_layout(v: Var) -> Layout | None:
    t = v.type
    if not isinstance(t, TileType):
        return None
    s = dense_strides(t.shape, t.dtype.storage_bits)
    return None if s is None else Layout(v, frozenset(), s)


def same_layout(e: Edge) -> bool:
    """Whether the view edge ``e`` keeps its source's layout (registry ``same_layout``:
    ``set_validshape``)."""
    call = call_of(e.stmt)
    op = ops.lookup(call.op) if call is not None else None
    return op is not None and op.same_layout


def slice_args(call: Call) -> tuple[Expr | None, Expr | None, dict[str, Expr]]:
    """Shape and offset of a ``tile.slice`` call however spelled (positionally or by keyword),
    and its other keyword arguments."""
    names = ("src", "shape", "offset", "valid_shape", "drop_dims")
    got: dict[str, Expr] = dict(zip(names, call.args))
    got.update(call.kwargs)
    return got.get("shape"), got.get("offset"), got


def _transfer(e: Edge, src: object) -> object:
    """The layout of ``e.dst`` from its source's (``src``: a Layout, None or bottom)."""
    if src is _BOTTOM or src is None:
        return src
    assert isinstance(src, Layout)
    kind = e.kind
    if kind in (Share.ALIAS, Share.LOOP_INIT, Share.LOOP_BACK, Share.LOOP_RESULT, Share.IF_RESULT):
        return src
    dt, st = e.dst.type, e.src.type
    if not isinstance(dt, TileType) or not isinstance(st, TileType):
        return None
    if kind is Share.CALL and e.at is not None:
        # a program function's result (or ``pair[k]`` of one) the callee's own analysis proves
        # is the argument's elements from index ``at`` on, with the argument's strides: a slice
        # of it, in effect
        if len(e.at) != len(src.strides) or len(src.strides) != dt.rank \
                or dt.dtype.storage_bits != st.dtype.storage_bits:
            return None
        total = dict(src.offset)
        for i, stride in zip(e.at, src.strides):
            total = _add(total, _scale({None: i} if i else {}, stride))
        return Layout(src.root, frozenset(total.items()), src.strides)
    call = call_of(e.stmt)
    if call is None:
        return None
    if kind is Share.WRITEBACK:
        same = const_shape(st) is not None and const_shape(st) == const_shape(dt) \
            and st.dtype.storage_bits == dt.dtype.storage_bits
        return src if same else None
    if kind is Share.SLICE:
        shape, off, kw = slice_args(call)
        if not isinstance(off, ListExpr) or len(off.items) != len(src.strides):
            return None
        total = dict(src.offset)
        for x, stride in zip(off.items, src.strides):
            total = _add(total, _scale(affine(x), stride))
        strides = src.strides
        if "drop_dims" in kw:
            d = kw["drop_dims"]
            drop = {const_int(x) for x in d.items} if isinstance(d, ListExpr) else {None}
            if None in drop:
                return None
            strides = tuple(s for i, s in enumerate(strides) if i not in drop)
        if len(strides) != dt.rank:
            return None
        return Layout(src.root, frozenset(total.items()), strides)
    if kind is Share.VIEW:
        op = ops.lookup(call.op)
        if op is None:
            return None
        if op.same_layout:
            return src if len(src.strides) == dt.rank else None
        if call.op == "tile.transpose_view":
            if len(call.args) > 1 or call.kwargs or len(src.strides) < 2:
                return None  # explicit axes: not modelled
            s = list(src.strides)
            s[-1], s[-2] = s[-2], s[-1]
            return Layout(src.root, src.offset, tuple(s))
        if op.relayout is not None and dt.memory is not MemorySpace.Acc:
            # the device lays the bytes out densely from the operand's first element
            s = dense_strides(dt.shape, dt.dtype.storage_bits)
            return None if s is None else Layout(src.root, src.offset, s)
        return None
    return None  # an edge kind this analysis does not model: unknown


def storage_of(fn: Function, fx: Effects, frames: dict | None = None) -> Storage:
    """The storage facts of ``fn``: a fixpoint over the storage edges of ``fx`` (a worklist in
    program order; a value is revisited only when a value it is defined from changed, so only
    loop back edges cost a second visit).  ``frames``: the layouts its framed parameters' calls
    give them (``ir.frames``)."""
    st = Storage(fx, frames=frames or {})
    incoming: dict[Var, list[Edge]] = {}
    out_edges = st.out_edges
    for e in fx.edges:
        if type(e.dst.type) is TileType:
            incoming.setdefault(e.dst, []).append(e)
            out_edges.setdefault(e.src, []).append(e)
    if not incoming:
        return st
    layouts: dict[Var, object] = dict.fromkeys(incoming, _BOTTOM)
    roots: dict[Var, Layout | None] = {}

    def fact(v: Var) -> object:
        x = layouts.get(v, _BOTTOM)
        if x is not _BOTTOM or v in layouts:
            return x
        if v not in roots:
            roots[v] = st.layout(v)
        return roots[v]

    # a value with every incoming value it needs: an iter-arg its initializer and its yield, an
    # if result both arms, anything else exactly one definition
    carried = {ia for s in fx.stmts if isinstance(s, (ForStmt, WhileStmt)) for ia in s.iter_args}
    merged = {rv for s in fx.stmts if isinstance(s, IfStmt) for rv in s.return_vars}
    complete: dict[Var, bool] = {}
    for v, es in incoming.items():
        if v in carried:
            complete[v] = {Share.LOOP_INIT, Share.LOOP_BACK} <= {e.kind for e in es}
        elif v in merged:
            complete[v] = len(es) >= 2
        else:
            complete[v] = len(es) == 1
    memo: dict[Edge, tuple[object, object]] = {}
    queue, queued = deque(incoming), set(incoming)
    while queue:
        v = queue.popleft()
        queued.discard(v)
        new: object = None
        if complete[v]:
            new = _BOTTOM
            for e in incoming[v]:
                src = fact(e.src)
                m = memo.get(e)
                if m is not None and m[0] is src:
                    got = m[1]
                else:
                    got = _transfer(e, src)
                    memo[e] = (src, got)
                new = _meet(new, got)
                if new is None:
                    break
        if new != layouts[v]:
            layouts[v] = new
            for e in out_edges.get(v, ()):
                d = e.dst
                if d in incoming and d not in queued:
                    queue.append(d)
                    queued.add(d)
    st.layouts = {v: (x if isinstance(x, Layout) else None) for v, x in layouts.items()}
    st.origins = _origins(st)
    st.kept_origins = _origins(st, kept=True)
    return st


def _followed(e: Edge) -> bool:
    """Whether the slice ``e`` defines is one whose every route a guard follows by its origins:
    a Mat-resident slice (a matmul operand must not be it) or one with valid_shape / drop_dims /
    pad_value (the pass never copies it: each consumer it reaches is checked).  A plain Vec window is
    followed by its uses and escapes instead (``egraph.encode``); tracking every one would make
    long chains of carries quadratic."""
    t = e.dst.type
    if isinstance(t, TileType) and t.memory is MemorySpace.Mat:
        return True
    call = call_of(e.stmt)
    # (any argument past the source, shape and offset: valid_shape, drop_dims, pad_value; a
    # keyword shape / offset is spelled positionally first, ``positional_slices``)
    return call is not None and (len(call.args) > 3 or any(
        k not in ("src", "shape", "offset") for k, _ in call.kwargs))


def _origins(st: Storage, kept: bool = False) -> dict[Var, frozenset[Var]]:
    """The slices each value may name: a slice itself; anything else each followed slice
    (:func:`_followed`) reaches through every edge but a slice's own (``Storage.flows_to``: not
    through opposite arms of one condition).  ``kept``: only through edges that keep the value
    the slice itself (no view with a layout of its own)."""
    out: dict[Var, set[Var]] = {}
    for e in st.fx.edges:
        if e.kind is Share.SLICE and _followed(e):
            for v in st.flows_to(e.dst, same_layout_only=kept):
                out.setdefault(v, set()).add(e.dst)
    return {v: frozenset(s) for v, s in out.items() if s}


class _Positional(StmtMutator):
    """Keyword ``shape=`` / ``offset=`` of a ``tile.slice`` moved to their positions."""

    def visit_AssignStmt(self, s: AssignStmt):
        v = s.value
        if type(v) is not Call or v.op != "tile.slice" or not v.kwargs:
            return s
        kw = dict(v.kwargs)
        args = list(v.args)
        for i, name in enumerate(("src", "shape", "offset")):
            if len(args) == i and name in kw:
                args.append(kw.pop(name))
        if len(args) == len(v.args):
            return s
        rest = tuple((k, x) for k, x in v.kwargs if k in kw)
        return AssignStmt(s.target, Call(v.op, tuple(args), rest), s.span)


def positional_slices(fn: Function) -> Function:
    """``fn`` with every ``tile.slice(src, shape=..., offset=...)`` spelled positionally (the
    same call: the registry binds both spellings alike), so the pass sees a keyword slice as the
    window it is; ``fn`` itself when it has none."""
    body = _Positional().mutate_body(fn.body)
    if body is fn.body:
        return fn
    return Function(fn.name, fn.params, fn.return_types, body, fn.func_type,
                    fn.decorator_kwargs, fn.has_self, fn.span)
