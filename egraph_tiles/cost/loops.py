"""Loop-aware extraction: the dynamic cost model and the hoisting facts.

* **Dynamic cost.**  A statement runs once per execution of its enclosing blocks: the product of
  the trip counts of its enclosing loops (a ``for`` with constant bounds: exact; any other loop:
  :attr:`CostModel.symbolic_trips`) and of :attr:`CostModel.if_probability` per enclosing ``if``
  arm.  A copy costs its bytes × the executions of the point where it is placed.
* **Hoisting facts** (``rules.hoist`` decides): for each use of a window inside a loop, the
  loops it may be hoisted out of, the weights of the candidate places, the tiles nothing in the
  loop writes (``ir.effects``: any alias, view, write-back or carry counts), the scalars defined
  before the loop, whether a copy before the loop reads only what the program reads (no early
  exit, ``if`` or possibly-empty loop before the use), and whether the copy fits in its memory
  space next to the nest's peak live bytes (:attr:`CostModel.capacity`).

Everything here is read from the program and its memory effects; nothing is decided here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from itertools import accumulate, islice, repeat

from ..rules.hoist import MILLI
from ..ir.copies import copies as copy_statements, known_bytes
from ..ir.effects import (Effects, Point, call_of, callee_name, function_effects, op_effect,
                          operand_index)
from ..ir.exprs import Call, Var, VarRef, const_int, const_shape, free_vars
from ..ir.stmts import (AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ForStmt, Function, IfStmt,
                        Program, ReturnStmt, Stmt, WhileStmt, YieldStmt, stmt_exprs)
from ..ir.summaries import call_summaries
from ..ir.ops import Role, Storage
from ..ir.target import CAPACITY, copy_bytes
from ..ir.types import MemorySpace, TileType
from ..ir.verify import windows_in_bounds
from ..egraph.encoding import Encoding, UseSite, Window

#: the target's on-chip capacities (``ir.target.CAPACITY``) by memory-space name
DEFAULT_CAPACITY: dict[str, int] = {m.value: b for m, b in CAPACITY.items()}



@dataclass(frozen=True)
class CostModel:
    """How copies are priced and where they may go.  Override per kernel with
    ``Options(kernel_cost={"kernel": CostModel(symbolic_trips=4)})``."""

    #: executions assumed for a loop whose trip count is not a compile-time constant
    symbolic_trips: int = 16
    #: probability assumed for each arm of an ``if``
    if_probability: Fraction = Fraction(1, 2)
    #: bytes available per memory space for the tiles live across a loop and its hoisted copies
    capacity: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))
    #: offer hoisted placements at all
    hoist: bool = True


def trips(loop: Stmt, model: CostModel) -> int:
    """Iterations of ``loop``: exact for constant bounds, the model's default otherwise."""
    n = Effects.trip_count(loop)
    return model.symbolic_trips if n is None else n


def _inner_weight(s: Stmt, w: int | Fraction, model: CostModel, arm: Fraction) -> int | Fraction:
    """Executions of the nested bodies of compound statement ``s`` run ``w`` times: × its trip
    count for a loop, × ``arm`` for an ``if`` (an int when the product is whole)."""
    if isinstance(s, (ForStmt, WhileStmt)):
        w = w * trips(s, model)
    elif isinstance(s, IfStmt):
        w = w * arm
    return w.numerator if type(w) is Fraction and w.denominator == 1 else w


class Weights:
    """Executions per call of each statement of the function of ``fx`` (``weights[stmt]``):
    exact, an int unless an ``if`` arm's probability leaves a fraction (ints keep the arithmetic
    cheap).  Read from the statement's block path (``Point.path``: the weight of each block once,
    from the compound statement owning it, ``Effects.blocks``), not by a walk over every
    statement."""

    def __init__(self, fx: Effects, model: CostModel) -> None:
        self.fx, self.model, self.arm = fx, model, Fraction(model.if_probability)
        self._of_path: dict[tuple[int, ...], int | Fraction] = {(0,): 1}

    def __getitem__(self, s: Stmt) -> int | Fraction:
        return self.of(self.fx.points[s].path)

    def of(self, path: tuple[int, ...]) -> int | Fraction:
        """The executions of the statements of the block ``path`` leads to."""
        w = self._of_path.get(path)
        if w is None:
            w = self._of_path[path] = _inner_weight(self.fx.blocks[path[-1]], self.of(path[:-1]),
                                                    self.model, self.arm)
        return w


#: (module constants: an enum member looked up on its class is slow, and this runs per use)
_VEC_COPY, _CUBE_COPY = (Role.ORD, Role.COLX), (Role.LEFT, Role.RIGHT)
_VEC, _MAT = MemorySpace.Vec, MemorySpace.Mat
_ESCAPES = (Storage.VIEW, Storage.WRITES)
#: statements that leave the loop body early, and those around a use it may not reach
_EXITS = (BreakStmt, ContinueStmt, ReturnStmt)
_BRANCHES = (IfStmt, ForStmt, WhileStmt)


def milli(w: int | Fraction) -> int:
    """Executions in thousandths (the integer weights of the rows): ``round(w * MILLI)``, a
    fraction rounded half to even, in integers (a ``Fraction`` product and ``round`` cost a few
    microseconds each, once per use in an ``if`` arm)."""
    if type(w) is int:
        return w * MILLI
    q, r = divmod(w.numerator * MILLI, w.denominator)
    return q + (2 * r > w.denominator or (2 * r == w.denominator and q % 2 == 1))


def copy_memory(site: UseSite) -> str | None:
    """The memory space a copy of the use's window lands in (None: the use is never copied)."""
    t = site.window.root.src.type
    mem = t.memory if isinstance(t, TileType) else None
    if site.ctx in _VEC_COPY:
        return "Vec" if mem is _VEC else None
    if site.ctx in _CUBE_COPY:
        return site.ctx.capitalize() if mem is _MAT else None
    return None


def window_bytes(w: Window) -> int:
    t = w.var.type
    return copy_bytes((w.rows, w.cols), t.dtype) if isinstance(t, TileType) else 0


def _live_size(t: object) -> tuple[str, int] | None:
    """The memory space and bytes a storage class of type ``t`` occupies (None: not counted,
    not a tile in a memory space or a symbolic shape)."""
    if not isinstance(t, TileType) or t.memory is None:
        return None
    dims = const_shape(t)
    return None if dims is None else (t.memory.value, copy_bytes(dims, t.dtype))


def stable_in(fx: Effects, v: Var, loop: Stmt) -> bool:
    """Whether ``v``'s storage is defined before ``loop`` and nothing in it may write it — the
    write check of hoisting (one place: the soundness test disables it here)."""
    d = fx.defs.get(v)
    return (d is None or d[0] < fx.point(loop).pos) and not fx.written_in_loop(v, loop)


@dataclass
class HoistFacts:
    rows: dict[str, list[tuple]] = field(default_factory=dict)
    #: (window, loop) pairs refused for capacity, with the explanation
    refused: dict[tuple[Window, int], str] = field(default_factory=dict)


def callee_peak(program: Program, name: str, seen: frozenset = frozenset()) -> dict[str, int]:
    """Per memory space, the most bytes program function ``name`` holds at once of buffers it
    allocates itself, its own calls' peaks included; once per program.  Its temporaries
    count; the tiles it is passed and the result it returns are its caller's (the caller
    counts that buffer from the call on).  A recursive cycle adds nothing for the call that
    closes it."""
    try:
        fn = program.function(name)
    except KeyError:
        return {}
    sums = call_summaries(program)
    key = ("peak", name)
    if key in sums.memo:
        return sums.memo[key]  # type: ignore[return-value]
    fx = sums.effects(fn)
    if fx.size == 0:
        return {}
    returned = {fx.storage(e.var) for r in fx.stmts if type(r) is ReturnStmt  # type: ignore[attr-defined]
                for e in r.values if type(e) is VarRef}  # type: ignore[attr-defined]
    facts = _Facts(fn, fx, None, CostModel(), program,  # type: ignore[arg-type]
                   seen=seen | {name}, skip=returned)
    profile = facts.live_bytes(set(DEFAULT_CAPACITY), list(range(1, fx.size + 1)))
    peak = {mem: max(at.values()) for mem, at in profile.items() if at}
    if not seen:  # (a peak cut short by a cycle is not memoized)
        sums.memo[key] = peak
    return peak


class _Facts:
    def __init__(self, fn: Function, fx: Effects, enc: Encoding, model: CostModel,
                 program: Program | None = None, seen: frozenset = frozenset(),
                 skip: set[Var] | None = None):
        self.fn, self.fx, self.enc, self.model = fn, fx, enc, model
        #: the program, for the temporaries of the functions a loop body calls
        self.program = program
        #: the functions whose peak is being computed (a call of one closes a cycle)
        self._seen = seen
        #: storage classes whose buffers the profile leaves out (:func:`callee_peak`)
        self._skip: set[Var] = skip or set()
        self.weight = Weights(fx, model)
        self.out = HoistFacts()
        self._inside: dict[Window, bool] = {}
        self._in_bounds: set[Stmt] | None = None
        self._allocates: dict[str, bool] = {}

    def row(self, table: str, *values: object) -> None:
        self.out.rows.setdefault(table, []).append(values)

    def use_weight(self, site: UseSite, mem: str, at: Point) -> int | Fraction:
        """Executions of the copy at its usual place: the slice's definition for a Vec copy
        nothing writes the source before (the decoder's rule), else right before the consumer
        (``at``: the consumer's point)."""
        at_use = self.weight.of(at.path)
        if mem == "Vec":
            w = site.window
            p = self.fx.points[w.stmt]
            if p.path == at.path:  # (the usual case: one block, either place runs as often)
                return at_use
            at_def = self.weight.of(p.path)
            if at_def == at_use:  # (no need to ask)
                return at_use
            if not self.fx.written_before_use(w.root.src, p.pos, p.loops, site.stmt):
                return at_def
        return at_use

    @staticmethod
    def plain_read(site: UseSite) -> bool:
        """Whether the use only reads its operand: an argument of a registered op that neither
        writes it back nor returns a view of it.  A hoisted copy is one buffer for every
        iteration, so an escape (alias, loop carry, yield) or a view of it, which later code
        could write, must keep its fresh copy per iteration."""
        call = call_of(site.stmt)
        eff = op_effect(call.op) if call is not None else None
        if eff is None or site.slot[0] not in ("arg", "kwarg"):
            return False
        i = site.slot[1] if site.slot[0] == "arg" else operand_index(call, site.slot[1])
        return isinstance(i, int) and (eff.of != i or eff.storage not in _ESCAPES)

    def inside(self, w: Window) -> bool:
        """Whether every slice of ``w``'s chain lies inside its source for every value its
        offsets can take: constant offsets (the verifier checks them), or offsets whose bounds
        the verifier proves inside (``ir.verify.windows_in_bounds``, computed on first need)."""
        ok = self._inside.get(w)
        if ok is None:
            here = all(const_int(e) is not None for e in w.offsets)
            if not here:
                if self._in_bounds is None:
                    try:
                        self._in_bounds = windows_in_bounds(self.fn)
                    except ValueError:  # (an ill-typed function: nothing proven in bounds)
                        self._in_bounds = set()
                here = w.stmt in self._in_bounds
            ok = self._inside[w] = here and (w.parent is None or self.inside(w.parent))
        return ok

    def speculation_safe(self, site: UseSite, loop: Stmt) -> bool:
        """A copy before ``loop`` reads the window even when the use would not run.  Allowed when
        the window is inside its source for every value of its offsets, or the use runs in the
        first iteration of ``loop``, which provably runs: every path through the body from its
        start reaches the use — no ``if`` around it, no ``break`` / ``continue`` / ``return``
        before it (an early exit skips it), and every loop between ``loop`` and the use provably
        runs too (a ``while`` or a ``for`` that may run zero times skips it)."""
        if self.inside(site.window):
            return True
        n = Effects.trip_count(loop)
        if n is None or n < 1:
            return False
        lp = self.fx.point(loop)
        q = self.fx.point(site.stmt).pos
        for p in range(lp.pos + 1, q):
            s = self.fx.stmt_at(p)
            if isinstance(s, _EXITS):
                return False
            if isinstance(s, _BRANCHES) and self.fx.point(s).end >= q:
                if isinstance(s, IfStmt) or not Effects.trip_count(s):
                    return False
        return True

    def offset_vars(self, windows: set[Window]) -> set[Var]:
        """The scalars the offsets of ``windows`` (their whole slice chains) read, closed under
        scalar SSA definitions (the e-graph unions a name with its definition)."""
        todo = [v for w in windows for x in w.chain() for e in x.offsets for v in free_vars(e)]
        seen: set[Var] = set()
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            d = self.enc.scalar_defs.get(v)
            if d is not None:
                todo.extend(free_vars(d))
        return seen

    def allocates(self, v: Var, s: Stmt | None) -> bool:
        """Whether ``v``'s definition ``s`` allocates a buffer: a call whose registry effect is
        a fresh result, or an opaque call (its result's storage is unknown: counted)."""
        if type(s) is not AssignStmt or s.target is not v or type(s.value) is not Call:  # type: ignore[union-attr]
            return False
        op = s.value.op  # type: ignore[union-attr]
        got = self._allocates.get(op)
        if got is None:
            eff = op_effect(op)
            got = self._allocates[op] = eff is None or eff.storage is Storage.FRESH
        return got

    def live_bytes(self, mems: set[str], points: list[int]) -> dict[str, dict[int, int]]:
        """Per memory space, the bytes of storage live at each of ``points`` (program points):
        each buffer (:meth:`allocates`) is held from its definition (the statement writing it
        holds it next to its operands) through the last read of its storage class — to the end
        of the loop when that read is in a loop the definition is outside of, which reads it on
        every trip — or only at its definition when nothing reads it (sized by its type;
        symbolic shapes are not counted).
        A loop's entry point sees what is live across it (what its body defines starts later);
        a point of its body sees the body's own temporaries too.  A value carried around a loop
        is over-counted by at most its initializer (both are live through the body)."""
        fx = self.fx
        storage = fx.storage
        qs = sorted(points)
        read: dict[Var, int] = {}  # var -> its last read (increasing: the latest pos wins)
        stmts = fx.stmts
        pos = qs[0]  # (an earlier read ends no range reaching a point)
        for s in islice(stmts, pos, None):
            kind = type(s)
            if kind is AssignStmt:
                e = s.value  # type: ignore[attr-defined]
                if type(e) is Call:  # (the common case first, inline)
                    for a in e.args:
                        if type(a) is VarRef:
                            read[a.var] = pos  # type: ignore[attr-defined]
                    if e.kwargs:
                        for _, a in e.kwargs:
                            if type(a) is VarRef:
                                read[a.var] = pos  # type: ignore[attr-defined]
                    pos += 1
                    continue
                exprs: tuple | list = (e,)
            elif kind is YieldStmt:  # (the next most common kind: its values)
                exprs = s.values  # type: ignore[attr-defined]
            else:
                exprs = (s.call,) if kind is EvalStmt else stmt_exprs(s)  # type: ignore[attr-defined]
            for e in exprs:
                # a tile is always a direct operand (of a call, alias, yield or initializer)
                if type(e) is VarRef:
                    read[e.var] = pos  # type: ignore[attr-defined]
                elif type(e) is Call:
                    for a in e.args:  # type: ignore[attr-defined]
                        if type(a) is VarRef:
                            read[a.var] = pos  # type: ignore[attr-defined]
                    for _, a in e.kwargs:  # type: ignore[attr-defined]
                        if type(a) is VarRef:
                            read[a.var] = pos  # type: ignore[attr-defined]
            pos += 1
        # positions as segments: ``seg[p]``, the number of points at or before program point p
        # (a range [lo, hi] holds the points numbered seg[lo - 1] to seg[hi] - 1: none unless
        # seg[lo - 1] < seg[hi]; a never-read variable holds the point of its definition)
        seg: list[int] = []
        for k, q in enumerate(qs):
            seg += repeat(k, q - len(seg))
        seg += repeat(len(qs), len(stmts) - len(seg))
        # per storage class: the last read of any of its members
        class_read: dict[Var, int] = {}
        for v, q in read.items():
            r = storage(v)
            if q > class_read.get(r, 0):
                class_read[r] = q
        # per buffer (a variable whose definition allocates one): from its definition through
        # the last read of anything that may name it (its storage class).  Views, aliases,
        # write-back results, carries and if results name a buffer, they allocate none; two
        # buffers of one class (an initializer and the value a loop yields) count twice
        span: list[tuple[Var, int, int]] = []
        points = fx.points
        for v, (pos, _path) in fx.defs.items():
            s = stmts[pos]
            if not self.allocates(v, s) or (self._skip and storage(v) in self._skip):
                continue
            last = class_read.get(storage(v), 0)
            if last > pos:  # read in a loop its definition is outside of: every trip reads it
                outer = points[stmts[last]].loops  # type: ignore[index]
                if outer:
                    inner = points[s].loops  # type: ignore[index]
                    for lp in outer:
                        if lp not in inner:
                            last = fx.loop_end(lp)
                            break
            lo, hi = seg[pos - 1], seg[max(last, pos)]
            if lo < hi:
                span.append((v, lo, hi))
        # per memory space, the change of the live bytes at each point (by index in ``qs``)
        diff: dict[str, list[int]] = {}
        # by type object (few, shared; each held by its variables, so its id is not reused)
        sizes: dict[int, tuple[str, int] | None] = {}
        for r, i, j in span:
            t = r.type
            if id(t) not in sizes:
                sizes[id(t)] = _live_size(t)
            size = sizes[id(t)]
            if size is None or size[0] not in mems:
                continue
            mem, nbytes = size
            d = diff.get(mem)
            if d is None:
                d = diff[mem] = [0] * (len(qs) + 1)
            d[i] += nbytes
            d[j] -= nbytes
        # a call of a program function holds the callee's own buffers while it runs: its peak
        # at the call's point (the caller's buffers there are live beside them)
        if self.program is not None:
            for k, q in enumerate(qs):
                call = call_of(stmts[q])  # type: ignore[arg-type]
                name = callee_name(call.op) if call is not None else None
                if name is None or name in self._seen:
                    continue
                for mem, nbytes in callee_peak(self.program, name, self._seen).items():
                    if mem in mems and nbytes:
                        d = diff.setdefault(mem, [0] * (len(qs) + 1))
                        d[k] += nbytes
                        d[k + 1] -= nbytes
        return {mem: dict(zip(qs, accumulate(d))) for mem, d in diff.items()}

    def run(self) -> HoistFacts:
        fx, enc, weight = self.fx, self.enc, self.weight
        points = fx.points
        hoist = self.model.hoist
        loops: dict[int, Stmt] = {}
        cands: dict[tuple[int, str], dict[Window, int | Fraction]] = {}  # (nest, mem) -> benefit
        in_loop: dict[Window, set[int]] = {}
        # the UseWeightRow rows: one per copyable use, but none for a copy run once per call
        # (weight 1000) of a window of 8 elements or more, so of 1 byte or more: its dynamic
        # cost (rules.hoist) would be its static bytes, the cost it has without the row
        use_weights: list[tuple] = []
        body = (0,)  # (the function body's block path)
        for site in enc.uses:
            at = points[site.stmt]
            w = site.window
            if at.path == body and w.rows * w.cols >= 8 and points[w.stmt].path == body:
                continue  # (in no loop; its copy runs once per call at either place: no row)
            mem = copy_memory(site)
            if mem is None:
                continue
            uw = self.use_weight(site, mem, at)
            k = uw * MILLI if type(uw) is int else milli(uw)  # (:func:`milli` inline)
            if k != MILLI or site.window.rows * site.window.cols < 8:
                use_weights.append((site.key, k))
            encl = at.loops
            if not hoist or not encl or not self.plain_read(site):
                continue
            safe = [lpos for lpos in encl if self.speculation_safe(site, fx.stmt_at(lpos))]
            for lpos in safe:
                loops[lpos] = fx.stmt_at(lpos)
                self.row("UseLoopRow", site.key, lpos)
                in_loop.setdefault(site.window, set()).add(lpos)
            if safe:
                nest = encl[0]
                gain = (uw - weight[fx.stmt_at(nest)]) * window_bytes(site.window)
                by = cands.setdefault((nest, mem), {})
                by[site.window] = max(by.get(site.window, 0), gain)
        if use_weights:
            self.out.rows["UseWeightRow"] = use_weights
        for lpos, loop in loops.items():
            self.row("LoopWeightRow", lpos, milli(weight[loop]))
        # per candidate loop: the stability of the root base of each window used in it, and
        # the invariance of each symbol its offsets may read (through scalar definitions too)
        windows_in: dict[int, set[Window]] = {}
        for w, lps in in_loop.items():
            for lpos in lps:
                windows_in.setdefault(lpos, set()).add(w)
        sym_vars = {k: free_vars(enc.syms[key]) for k, key in enc.rows.get("IdxSymRow", ())}
        syms: dict[Var, list[int]] = {}  # free var -> IdxSymRow numbers whose expression reads it
        for k, vs in sym_vars.items():
            for v in vs:
                syms.setdefault(v, []).append(k)
        for lpos, ws in windows_in.items():
            loop = loops[lpos]
            for b in {w.root.src for w in ws}:
                if b in enc.tile_of and stable_in(fx, b, loop):
                    self.row("StableRow", enc.tile_of[b], lpos)
            read = self.offset_vars(ws)
            for k in sorted({k for v in read for k in syms.get(v, ())}):
                if all(fx.defs.get(v, (0,))[0] < lpos for v in sym_vars[k]):
                    self.row("SymStableRow", k, lpos)
        # capacity: per loop nest and memory space, admit copies by benefit while they fit next
        # to the nest's peak: the most bytes live at any point of it, the tiles live across it
        # and the body's own temporaries alike (a hoisted copy holds its buffer at every point)
        nests = sorted({nest for nest, _ in cands})
        points = [p for nest in nests for p in range(nest, fx.loop_end(nest) + 1)]
        profile = self.live_bytes({mem for _, mem in cands}, points) if cands else {}
        for (nest, mem), by in cands.items():
            at = profile.get(mem, {})
            live = max(at.get(p, 0) for p in range(nest, fx.loop_end(nest) + 1))
            cap = self.model.capacity.get(mem)
            used = live
            for w in sorted(by, key=lambda x: (-by[x], x.key)):
                nbytes = window_bytes(w)
                if cap is None or used + nbytes <= cap:
                    used += nbytes
                    for lp in in_loop[w]:
                        self.row("HoistRoomRow", enc.tile_of[w.var], lp)
                    continue
                for lp in in_loop[w]:
                    self.out.refused[(w, lp)] = (
                        f"not hoisted out of the loop at line {fx.stmt_at(lp).span.line}: "
                        f"{mem} would hold {used} B live + {nbytes} B = {used + nbytes} B > "
                        f"capacity {cap} B")
        return self.out


def hoist_facts(fn: Function, fx: Effects, enc: Encoding, model: CostModel,
                program: Program | None = None) -> HoistFacts:
    """The rows ``rules.hoist`` reads (see the module docstring); ``program``: the functions
    ``fn`` calls, whose temporaries count in the loops that call them."""
    return _Facts(fn, fx, enc, model, program).run()


def dynamic_copy_bytes(fn: Function, model: CostModel, strict: bool = False) -> int:
    """Bytes the function's copies (``ir.copies``) move per call: bytes × the executions of
    each copy's place (an unknown size counts 0, or raises when ``strict``)."""
    copies = list(copy_statements(fn))
    if not copies:
        return 0
    weight = Weights(function_effects(fn), model)
    total: int | Fraction = sum(known_bytes(c, strict) * weight[c.stmt] for c in copies)
    return round(total)


def annotate_report(rows: list, decisions: list, facts: HoistFacts, fn: Function,
                    fx: Effects, model: CostModel) -> None:
    """Give each copy of the report (``rows``, parallel to the decoder's ``decisions``) its
    dynamic bytes, say where a hoisted copy went, and why a copy inside a loop was not hoisted
    when the capacity refused it."""
    weight = Weights(fx, model)
    for row, d in zip(rows, decisions):
        if d.kind != "copy" or not isinstance(d.site, UseSite) or d.placement == "shared":
            continue
        site = d.site
        nbytes = window_bytes(site.window)
        anchor = d.anchor if d.anchor is not None else site.stmt
        w = weight[anchor]
        row.dynamic_bytes = round(nbytes * w)
        if d.placement == "before loop":
            row.reason += (f"; hoisted before the loop at line {anchor.span.line} (invariant, "
                           f"source not written in the loop): {nbytes} B × {_show(w)} = "
                           f"{row.dynamic_bytes} B per call instead of {nbytes} B × "
                           f"{_show(weight[site.stmt])}")
            continue
        for lpos in fx.point(anchor).loops:
            why = facts.refused.get((site.window, lpos))
            if why is not None:
                row.reason += f"; {why}"
                break


def _show(w: int | Fraction) -> str:
    return str(w.numerator) if w.denominator == 1 else f"{float(w):g}"
