"""Acc accumulator-window check: encode one function's dataflow, run ``rules.windows``, report.

The encoder only states structure (which statement defines which value from what, the registry
properties of the ops that occur, constant dimensions, loop bounds); the rules in
``egraph_tiles.rules.windows`` decide which window each value names and which windows are
violations.  Only values sharing storage with an operand a registered op (or a program function,
egraph.calls) writes back into, in a storage class holding an Acc tile of rank 2 or 3 (the
parents ``w-acc-parent`` accepts) that a ``tile.slice`` takes a window of, are encoded (with
every scalar definition and the loop bounds that matter): no rule can reach a violation from
any other value (:func:`_relevant`), and with no such value the e-graph is not
built at all.  :func:`check_acc_windows` raises the first violation in program order as a
``ValueError`` whose text says what is wrong and how to spell the kernel instead.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..egraph.bindings import eb as bindings

from ..ir.effects import (Edge, Effects, Share, call_of, condition_key, function_effects, op_effect,
                          param_position, trailing_yield)
from ..ir.exprs import BinOp, Call, Const, Expr, ListExpr, Neg, TupleItem, Var, VarRef, const_int
from ..ir.ops import OpTypeError, Storage, bind, lookup
from ..ir.stmts import AssignStmt, EvalStmt, ForStmt, Function, IfStmt, Program, Span, Stmt, WhileStmt
from ..ir.types import MemorySpace, ScalarType, TileType
from ..rules import windows as rules
from ..egraph.calls import PREFIX, callee_name, param_uses, returned_param
from ..egraph.schedule import SPAN, core_schedule, egglog_errors, load_tables, new_egraph, release

_ARITH = {"+": "IdxAddRow", "-": "IdxSubRow", "*": "IdxMulRow"}
# enum members read once: reading one off its class costs ~0.15 us in Python 3.11, and these
# are read per storage edge or value
_ALIAS, _LOOP_INIT, _LOOP_BACK = Share.ALIAS, Share.LOOP_INIT, Share.LOOP_BACK
_LOOP_RESULT, _IF_RESULT, _SLICE = Share.LOOP_RESULT, Share.IF_RESULT, Share.SLICE
_CALL = Share.CALL
_ACC = MemorySpace.Acc
Rows = dict[str, list[tuple]]


@dataclass
class _Encoding:
    """The facts for one function (rows of the relations and ``LOAD`` tables of
    ``rules.windows``, offsets as the ``Idx`` rows of ``rules.sorts``) plus what the message
    needs to name things.  Statements are numbered by
    their program point and storage sharing is read from the function's memory effects
    (``ir.effects``); variables are spelled by ``Var.uid`` in the rows."""

    fx: Effects
    #: the program, for what a called program function does with a tile (egraph.calls)
    program: Program | None = None
    rows: Rows = field(default_factory=lambda: defaultdict(list))
    #: the variable each ``Var.uid`` in the rows spells
    vars: dict[int, Var] = field(default_factory=dict)
    #: the rows (``w_view`` / ``w_reuses`` / ``w_fresh`` and their columns after the statement)
    #: of a call of each op seen, by name
    ops: dict[str, list[tuple]] = field(default_factory=dict)
    opaque: int = 0
    nodes: int = 0  # ids of Idx nodes (``NI``)
    #: the ``NI`` id of each scalar variable's ``(Sym "u<uid>")``, by ``Var.uid``
    syms: dict[int, int] = field(default_factory=dict)
    #: the id of each all-constant extent stated, by (dtype name, dimensions)
    extents: dict[tuple[str, tuple[int, ...]], int] = field(default_factory=dict)
    #: id of each tile type read -> (the type, its dimensions (None where not constant), the
    #: key of its extent when all are constant): read once per type object (values of one
    #: shape share theirs)
    types: dict[int, tuple] = field(default_factory=dict)
    #: every variable given a symbol, in order (the worklist of ``statements``)
    new_syms: list[Var] = field(default_factory=list)
    #: the ``NI`` id of each ``Idx`` node stated, by its row (one id per distinct node)
    idx: dict[tuple, int] = field(default_factory=dict)
    #: the values sharing storage with an operand a registered op writes (``relevant``)
    written: set[Var] = field(default_factory=set)
    #: the relevant Acc tiles a ``tile.slice`` takes a window of: the only possible parents
    parents: set[Var] = field(default_factory=set)
    #: the storage edges between relevant values (``sharing``)
    edges: list[Edge] = field(default_factory=list)

    def row(self, table: str, *values: object) -> None:
        self.rows[table].append(values)

    def node(self) -> int:
        self.nodes += 1
        return self.nodes

    # ------------------------------------------------------------------ values and offsets

    def var(self, v: Var) -> int:
        if v.uid not in self.vars:
            self.vars[v.uid] = v
            self._type_facts(v)
        return v.uid

    def _type_facts(self, v: Var) -> None:
        t = v.type
        if not isinstance(t, TileType):
            return
        known = self.types.get(id(t))  # (the entry holds ``t``: its id is not reused)
        if known is None or known[0] is not t:
            dims = [const_int(d) for d in t.shape]
            known = self.types[id(t)] = (t, dims, None if None in dims else (t.dtype.name,
                                                                              tuple(dims)))
        dims, extent = known[1], known[2]
        if v in self.parents:
            # ``w_tile`` / ``w_dim`` are read only by ``w-acc-parent`` and ``w-acc-cols``, whose
            # facts every rule joins at a window's parent: the source of a slice (``w-names-slice`` / ``w-names-page-slice``), an Acc tile of rank 2 or 3
            mem = t.memory.value if t.memory is not None else "?"
            self.row("w_tile", v.uid, mem, t.dtype.storage_bits, t.rank)
            for i, d in enumerate(dims):
                if d is not None:
                    self.row("w_dim", v.uid, i, d)
        if extent is not None:
            self.row("w_ext", v.uid, self.extent(*extent))

    def extent(self, dtype: str, dims: tuple[int, ...]) -> int:
        """The id of the all-constant extent ``dtype`` x ``dims`` (one id per distinct extent,
        so the rules compare extents by id); a 2-D one's dimensions are stated with it."""
        key = (dtype, dims)
        if key not in self.extents:
            e = self.extents[key] = len(self.extents)
            if len(dims) == 2:
                self.row("w_extent2", e, *dims)
        return self.extents[key]

    def sym(self, v: Var) -> int:
        """The ``NI`` id of scalar variable ``v``'s symbol (one per variable)."""
        if v.uid not in self.syms:
            n = self.syms[v.uid] = self.node()
            self.row("IdxSymRow", n, f"u{v.uid}")
            self.new_syms.append(v)
        return self.syms[v.uid]

    def off(self, e: Expr) -> int:
        """A scalar offset as the ``NI`` id of an ``Idx`` term (anything not affine is a fresh
        opaque symbol)."""
        k = const_int(e)
        if k is not None:
            return self.idx_node("IdxLitRow", k)
        if isinstance(e, VarRef):
            return self.sym(e.var)
        if isinstance(e, BinOp) and e.op in _ARITH:
            return self.idx_node(_ARITH[e.op], self.off(e.lhs), self.off(e.rhs))
        if isinstance(e, Neg):
            return self.idx_node("IdxSubRow", self.idx_node("IdxLitRow", 0), self.off(e.operand))
        self.opaque += 1
        return self.idx_node("IdxSymRow", f"o{self.opaque}")

    def idx_node(self, table: str, *args: object) -> int:
        """The ``NI`` id of the ``Idx`` node ``table`` of ``args`` (one id per distinct node:
        the e-graph makes equal nodes one e-class anyway)."""
        key = (table, *args)
        if key not in self.idx:
            n = self.idx[key] = self.node()
            self.row(table, n, *args)
        return self.idx[key]

    def stmt(self, s: Stmt) -> int:
        return self.fx.point(s).pos

    def op(self, name: str) -> list[tuple]:
        """The rows stating the memory effect of a call of op ``name`` (``ir.effects.op_effect``),
        found once per op: ``(table, *columns after the statement)``."""
        facts = self.ops.get(name)
        if facts is not None:
            return facts
        facts = self.ops[name] = []
        eff = op_effect(name)
        if eff is None and self.program is not None and callee_name(name) is not None:
            # a program function accumulating into its parameter k: a write-back operand, as
            # if inlined (egraph.calls)
            for k in range(len(self.program.function(callee_name(name)).params)):
                if "acc" in param_uses(self.program, name, k):
                    facts.append(("w_reuses", k))
        if eff is None:
            return facts
        if eff.storage is Storage.VIEW and eff.of == 0:
            facts.append(("w_view",))
        elif eff.storage is Storage.WRITES:
            facts.append(("w_reuses", eff.of))
        elif eff.storage in (Storage.FRESH, Storage.VALUE):
            facts.append(("w_fresh",))
        return facts

    # ------------------------------------------------------------------ statements

    def relevant(self, v: Var) -> bool:
        """Whether ``v`` shares storage with an operand a registered op writes back into.  Every
        rule that can reach a violation starts from such an operand (``w-check-dest``) and follows
        only storage-sharing facts (slices, aliases, views, write-backs, loop carries, if
        results — the edges of ``ir.effects``), so tile facts about any other value can derive
        nothing that matters and are not stated."""
        return v in self.written

    def statements(self) -> None:
        """The calls defining a relevant value or writing into one (their facts about relevant
        values only), the bounds of the loops carrying one, and the definitions of the symbols
        these use — each statement found from its values (``fx.defs``, ``fx.writes``).

        Any other call's facts are its memory effect (``w_view`` / ``w_reuses`` / ``w_fresh``)
        and ``w_arg`` rows about an operand it only reads: the rules join those with the
        statement's ``w_result`` (a view, a write-back, a fresh result: not relevant here) or, in
        ``w-check-dest``, at the operand a registered op writes back into (or a program function
        accumulates into) — a write, in ``fx.writes``."""
        fx, written = self.fx, self.written
        writes = {w.stmt for w in fx.writes if w.var in written}
        at = {self.stmt(s) for s in writes}
        at.update(d[0] for d in map(fx.defs.get, written) if d is not None)
        for p in sorted(at):  # (in program order)
            s = fx.stmt_at(p)
            kind = type(s)  # (the statement kinds have no subclasses)
            if kind is AssignStmt and type(s.value) is Call and (s.target in written or
                                                                  s in writes):
                self.call(self.stmt(s), s.value, s.target)
            elif kind is AssignStmt and type(s.value) is TupleItem and s.target in written:
                self.call_result(p, s.target)  # (``pair[k]`` of a program function's result)
            elif kind is EvalStmt and s in writes:
                self.call(self.stmt(s), s.call, None)
            elif kind is ForStmt and any(ia in written for ia in s.iter_args):
                # trip counts (``w_ge1`` / ``w_le1``) are read only at a loop carrying a relevant
                # value (the branch rules at its carries)
                self.row("WBoundsRow", self.stmt(s), self.off(s.start), self.off(s.stop),
                         self.off(s.step))
        # the symbols the stated terms use, transitively (a worklist over the symbols in the
        # order given): a scalar's definition is unioned with its symbol, and a loop variable
        # gets its known multiple from the loop's start and step (``LoopVar``).  A definition
        # or loop variable no stated term reaches would only add terms of its own.
        done = 0
        while done < len(self.new_syms):
            v = self.new_syms[done]
            done += 1
            d = fx.defs.get(v)
            s = fx.stmt_at(d[0]) if d is not None else None
            if type(s) is AssignStmt and s.target is v and _scalar_definition(s):
                self.row("SymDefRow", self.syms[v.uid], self.off(s.value))
            elif type(s) is ForStmt and s.loop_var is v:
                self.row("LoopRow", self.syms[v.uid], self.off(s.start), self.off(s.step))

    def sharing(self) -> None:
        """Aliases, loop carries and if merges, from the storage edges of the effects."""
        arms: dict[tuple[int, int], list[Edge]] = defaultdict(list)
        for e in self.edges:
            kind = e.kind
            if kind is _ALIAS and isinstance(e.dst.type, TileType):
                self.row("w_alias", self.var(e.dst), self.var(e.src))
            elif kind is _LOOP_INIT:
                self.row("w_iter", self.stmt(e.stmt), e.index, self.var(e.dst), self.var(e.src))
            elif kind is _LOOP_BACK:
                self.row("w_yield", self.stmt(e.stmt), e.index, self.var(e.src))
            elif kind is _LOOP_RESULT:
                self.row("w_loop_ret", self.stmt(e.stmt), e.index, self.var(e.dst))
            elif kind is _IF_RESULT:
                arms[(self.stmt(e.stmt), e.index)].append(e)
        for (i, k), (t, el) in ((key, es) for key, es in arms.items() if len(es) == 2):
            self.row("w_if", i, k, self.var(t.src), self.var(el.src), self.var(t.dst))

    def branch_points(self) -> None:
        """``(w_arm b cond arm)`` for every branch point code ``b`` (rules.windows): an if's two
        arms take arms 0 / 1 of its condition, one id for every if testing the same expression
        of the function's parameters only (``ir.effects.condition_key``); any other condition,
        and each branch point of a loop, has an id of its own."""
        conds: dict[str, int] = {}
        for s in self.fx.stmts:
            i = self.stmt(s) if s is not None else None
            if isinstance(s, IfStmt):
                own = len(conds) + 4 * i + 1_000_000  # (an id no shared condition takes)
                key = condition_key(self.fx, s)
                cid = conds.setdefault(key, len(conds)) if key is not None else own
                self.row("w_arm", 4 * i, cid, 0)
                self.row("w_arm", 4 * i + 1, cid, 1)
            elif isinstance(s, (ForStmt, WhileStmt)):
                for code in (4 * i + 2, 4 * i + 3):
                    self.row("w_arm", code, 1_000_000 + code, 0)

    def call_result(self, sid: int, target: Var) -> None:
        """A program function's result (or ``pair[k]`` of one) names what the callee returns
        (its ``CALL`` edges, ``ir.effects``): an argument's tile itself (an alias), a window of
        it (a slice at its offsets; one not constant, or an unknown part of the argument, is an
        opaque offset: checked as any dynamic window, never left unchecked)."""
        s = self.fx.stmt_at(sid)
        for e in self.edges:
            if e.stmt is not s or e.kind is not _CALL or e.dst is not target:
                continue
            if e.whole:
                self.row("w_alias", self.var(target), self.var(e.src))
                continue
            offsets = e.window[1] if e.window is not None else (None, None)
            r, col = (self.unknown() if k is None else self.idx_node("IdxLitRow", k)
                      for k in offsets)
            self.row("WSliceRow", self.var(target), self.var(e.src), r, col)

    def unknown(self) -> int:
        """A fresh opaque offset."""
        self.opaque += 1
        return self.idx_node("IdxSymRow", f"o{self.opaque}")

    def call(self, sid: int, c: Call, target: Var | None) -> None:
        d = lookup(c.op)
        try:
            args = bind(c).args if d is not None else program_args(self.program, c)
        except OpTypeError:
            args = dict(enumerate(c.args))
        if c.op == "tile.slice" and target is not None:
            src, offs = args.get("src"), args.get("offset")
            shape = args.get("shape")
            if isinstance(src, VarRef) and isinstance(offs, ListExpr) and len(offs.items) == 2:
                r, col = (self.off(x) for x in offs.items)
                self.row("WSliceRow", self.var(target), self.var(src.var), r, col)
            elif isinstance(src, VarRef) and isinstance(offs, ListExpr) and len(offs.items) == 3 \
                    and isinstance(shape, ListExpr) and const_int(shape.items[0]) == 1 \
                    and isinstance(target.type, TileType) and target.type.rank == 2:
                # a 2-D window of one page of a 3-D (batch) tile
                b, r, col = (self.off(x) for x in offs.items)
                self.row("WSlice3Row", self.var(target), self.var(src.var), b, r, col)
            else:
                self.var(target)
            return
        for table, *cols in self.op(c.op):
            self.row(table, sid, *cols)
        if target is not None and self.relevant(target):
            self.row("w_result", sid, self.var(target))
            self.call_result(sid, target)
        params = d.params if d is not None else ()
        for key, a in args.items():
            k = params.index(key) if isinstance(key, str) and key in params else key
            if isinstance(k, int) and isinstance(a, VarRef) and self.relevant(a.var):
                self.row("w_arg", sid, k, self.var(a.var))


def program_args(program: Program | None, c: Call) -> dict[int | str, Expr]:
    """The arguments of a call of a program function (or of an op the registry lacks) by
    parameter number, a keyword argument numbered by the callee's parameter of that name."""
    args: dict[int | str, Expr] = dict(enumerate(c.args))
    name = callee_name(c.op)
    try:
        fn = program.function(name) if program is not None and name is not None else None
    except KeyError:
        fn = None
    names = [p.var.name for p in fn.params] if fn is not None else []
    for key, a in c.kwargs:
        args[param_position(names, key)] = a
    return args


def _scalar_definition(s: AssignStmt) -> bool:
    """Whether ``s`` is a scalar SSA definition or plain scalar alias (unioned with what it
    names)."""
    t, v = s.target, s.value
    return not isinstance(v, Call) and (
        isinstance(t.type, ScalarType) or isinstance(v, (Const, BinOp, Neg))
        or isinstance(v, VarRef) and not isinstance(t.type, TileType))


def _acc_parent(v: Var) -> bool:
    """A value ``w-acc-parent`` can accept: an Acc tile of rank 2 or 3
    (any element width: the NZ blocks are 16 x 16 elements)."""
    t = v.type
    return isinstance(t, TileType) and t.memory is _ACC and t.rank in (2, 3)


def _relevant(fx: Effects, program: Program | None) -> tuple[set[Var], set[Var], list[Edge]]:
    """The values the check encodes (``_Encoding.relevant``), the possible parents among them
    and the storage edges between them: the storage classes of the written operands (and of the
    arguments a program function returning its parameter ties to them: egraph.calls) that hold
    an Acc tile ``w-acc-parent`` may accept, when the class — or a class a program function call
    ties to it — holds a possible parent: such a tile that a ``tile.slice`` takes a window of.

    A violation checks a window of its parent P (``w_check s v P ...``), and every window starts
    at a slice of P (``w-names-slice`` / ``w-names-page-slice``: the parent is the source of the
    slice); from there the window facts follow only the storage-sharing edges of ``ir.effects``
    and the ties of a program function call (its result is the argument it returns — a
    ``w_alias`` — and is written back into one it accumulates into — ``w-edge-reuses``).  So a
    class without such a parent, tied to none, can derive no violation: the classes of the
    accumulators a loop fills in a tile of their own are not stated at all."""
    acc = _accumulating_writes(fx, program)
    written = [w.var for w in fx.writes if not w.opaque] + [w.var for w in acc]
    members: dict[Var, list[Var]] = {r: [r] for r in map(fx.storage, written)}
    # a program function returning its parameter: the call's result and the argument are one tile
    links = []
    # (the program functions this one calls: ``fx.call_ops``, the ops of its statement-level
    # calls; none called — the usual case — and no statement is looked at)
    callees = ({PREFIX + f.name for f in program.functions} & fx.call_ops
               if program is not None else set())
    for st in fx.stmts[1:] if callees else ():
        call = st.value if type(st) is AssignStmt else None
        if type(call) is Call and call.op in callees:
            k = returned_param(program, call.op)
            a = program_args(program, call).get(k) if k is not None else None
            if isinstance(a, VarRef):
                links.append((st.target, a.var))
    for _ in links:  # (to a fixpoint)
        for x, y in links:
            for p, q in ((x, y), (y, x)):
                if fx.storage(p) in members and fx.storage(q) not in members:
                    members[fx.storage(q)] = [fx.storage(q)]
    sliced = set()  # (the Acc tiles a slice takes a window of)
    edges: dict[Var, list[Edge]] = {r: [] for r in members}
    for e in fx.edges:
        if (e.kind is _SLICE or e.kind is _CALL and not e.whole) and _acc_parent(e.src):
            sliced.add(e.src)  # (a program function returning a window of it: call_result)
        es = edges.get(fx.storage(e.dst))  # (an edge's two ends share one class)
        if es is not None:
            es.append(e)
    parents = {fx.storage(p) for p in sliced}  # the classes holding a possible parent
    ties = links + [(w.stmt.target, w.var) for w in acc if isinstance(w.stmt, AssignStmt)]
    for _ in ties:  # (to a fixpoint)
        for x, y in ties:
            if (fx.storage(x) in parents) != (fx.storage(y) in parents):
                parents |= {fx.storage(x), fx.storage(y)}
    members = {r: m + [x for e in edges[r] for x in (e.dst, e.src)]
               for r, m in members.items() if r in parents}
    for x, y in links:
        for v in (x, y):
            m = members.get(fx.storage(v))
            if m is not None:
                m.append(v)
    # a violation names a parent ``w-acc-parent`` accepts, in the written value's class
    kept = [r for r, m in members.items() if any(map(_acc_parent, m))]
    written = {x for r in kept for x in members[r]}
    return written, sliced & written, [e for r in kept for e in edges[r]]


def encode(function: Function, fx: Effects | None = None,
           program: Program | None = None) -> _Encoding:
    enc = _Encoding(fx if fx is not None else function_effects(function), program)
    enc.written, enc.parents, enc.edges = _relevant(enc.fx, program)
    if not enc.written:
        return enc  # nothing to check (``violations`` stops here)
    for p in function.params:
        if p.var in enc.written:  # (no fact about another value names a parameter)
            enc.var(p.var)
            if isinstance(p.var.type, TileType):
                enc.row("w_param", p.var.uid)
    enc.statements()
    enc.sharing()
    enc.branch_points()
    return enc


# ---------------------------------------------------------------------- running and reading


@dataclass(frozen=True)
class Violation:
    """One rejected accumulator destination, in the words the message needs."""

    stmt: int  # program point (ir.effects) of the writes-back statement
    operand: int  # uid of the operand that names the window
    parent: int  # uid of the Acc parent
    rows: int
    cols: int
    col: int | None  # the window's constant column offset in the parent (None: dynamic)
    mid_block: bool = False  # rejected because it starts mid-block (rule w-noncontiguous-mid-block)
    via: int = -1  # the first branch point on the path to the window (``w_may``), -1: every path
    mult: int | None = None  # a dynamic column offset's known multiple


#: the relations :func:`violations` reads back (``w_mid_block`` only for the message, so only
#: when a constant offset is rejected)
VERDICTS = ("w_viol_k", "w_viol_m")


def run_rules(rows: Rows, read: tuple[str, ...] = VERDICTS + ("w_mid_block", "w_noncontig",
                                                              "w_contig", "w_dyn_contig"),
              statements: int | None = None) -> tuple[bindings.EGraph, dict[str, list[list[int]]]]:
    """Run the windows rules over the fact ``rows`` (table name -> tuples of primitives: the
    input relations, the ``LOAD`` tables of ``rules.windows`` and the index tables of
    ``rules.sorts``) in an e-graph of the engine's holding the check's program
    (``schedule.new_egraph(acc_windows=True)``, where the index tables are the check's own
    copies: ``rules.windows.RENAMED``; ``statements``: the size of the function, see
    ``schedule.prepared``); that e-graph and the rows of the relations ``read`` (each a relation
    of ``i64`` columns), sorted."""
    eg = new_egraph(acc_windows=True, statements=statements)
    # bulk-loaded with egglog's ``input`` (one command per tagged relation of
    # ``rules.windows.TAGGED``, linear in the facts)
    load_tables(eg, {rules.RENAMED.get(t, t): r for t, r in rows.items() if r},
                ruleset=rules.LOAD_RULESET)
    eg.run_program(_SCHEDULE)
    return eg, read_relations(eg, read)


#: ``rules.windows.SCHEDULE`` as egglog's core command
_SCHEDULE = core_schedule(rules.SCHEDULE)


def read_relations(eg: bindings.EGraph, read: tuple[str, ...]) -> dict[str, list[list[int]]]:
    """The rows of the relations ``read`` (each of ``i64`` columns) of ``eg``, sorted."""
    if not read:
        return {}
    # printed relation by relation (freezing the whole e-graph to read them costs more)
    printed = eg.run_program(*[bindings.PrintFunction(SPAN, name, None, None,
                                                      bindings.DefaultPrintFunctionMode())
                               for name in read])
    out: dict[str, list[list[int]]] = {}
    for name, p in zip(read, printed):
        term = p.termdag.get
        out[name] = sorted([term(a).value.value for a in term(t).args] for t, _ in p.terms)
    return out


def _accumulating_writes(fx: Effects, program: Program | None) -> list:
    """The tile operands passed to a program function that accumulates into them."""
    if program is None:
        return []
    return [w for w in fx.writes if w.opaque and callee_name(w.op) is not None
            and isinstance(w.index, int) and isinstance(w.var.type, TileType)
            and "acc" in param_uses(program, w.op, w.index)]


def violations(function: Function, fx: Effects | None = None,
               program: Program | None = None) -> tuple[_Encoding | None,
                                                                       list[Violation]]:
    """Every violation the rules prove for ``function``, in program order (no encoding when
    there is nothing to check)."""
    enc, found, eg = _violations(function, fx, program)
    if eg is not None:
        release(eg)
    return enc, found


def _violations(function: Function, fx: Effects | None, program: Program | None
                ) -> tuple[_Encoding | None, list[Violation], bindings.EGraph | None]:
    """:func:`violations`, and the e-graph the rules ran in (None when they did not run)."""
    fx = fx if fx is not None else function_effects(function)
    if not fx.writes_into_tile() and not _accumulating_writes(fx, program):
        # Every violation rule needs a ``w_check`` (w-violation), which ``w-check-dest`` derives
        # only at a registry ``reuses_arg`` operand (``w_reuses``) with an extent.  No such tile
        # operand: nothing to derive.
        return None, [], None
    enc = encode(function, fx, program)
    if not enc.written:
        return enc, [], None  # no written value shares storage with an Acc parent
    with egglog_errors(f"accumulator-window check failed inside egglog for function "
                       f"{function.name!r}"):
        eg, _ = run_rules(enc.rows, (), fx.size)
        # both verdict relations are read from ``w_violation``: printed only when it holds a
        # tuple (its size costs a quarter of printing them), with why a constant window is
        # rejected (``w_mid_block``)
        held = eg.run_program(bindings.PrintSize(SPAN, "w_violation"))[0].size
        rows = read_relations(eg, (*VERDICTS, "w_mid_block")) if held else {}
    mid = set(map(tuple, rows.get("w_mid_block", ())))
    found = [Violation(s, v, p, r, c, c0, (p, r, c, c0) in mid, via)
             for s, v, p, r, c, c0, via in rows.get("w_viol_k", ())]
    constant = {(x.stmt, x.operand, x.parent, x.rows, x.cols, x.via) for x in found}
    found += [Violation(s, v, p, r, c, None, via=via, mult=m)
              for s, v, p, r, c, m, via in rows.get("w_viol_m", ())
              if (s, v, p, r, c, via) not in constant]
    # every path first, then constant offsets, then the narrowest branch point
    found.sort(key=lambda x: (x.stmt, x.via != -1, x.col is None, x.via, x.rows, x.cols))
    return enc, found, eg


def check_acc_windows(function: Function, fx: Effects | None = None,
                      program: Program | None = None, *,
                      keep: bool = False) -> bindings.EGraph | None:
    """Raise ``ValueError`` when an accumulator operand names an Acc window the MAD writes wrong.

    Every window the operand may name, on every path, must be proven contiguous (a dynamic
    column offset by its known multiple); values with no window fact (opaque calls, symbolic
    extents) name no window and are not checked here.

    The rules run in an e-graph of the engine's (``schedule.new_egraph(acc_windows=True)``;
    the check's facts in tables of its own, which no rule of the engine reads and no count of
    its e-graph includes).  With ``keep`` that e-graph is returned — None when nothing was
    checked — for the pass to load the function's own facts into next, instead of pushing and
    popping a second one; otherwise, and always before a violation is raised, it is released.
    """
    enc, found, eg = _violations(function, fx, program)
    if eg is not None and (found or not keep):
        release(eg)
        eg = None
    if found and enc is not None:
        raise ValueError(format_violation(function, enc, found[0]))
    return eg


# ---------------------------------------------------------------------- the message


def _where(span: Span) -> str:
    return f"{span.filename}:{span.line}" if span.line else "<unknown line>"


def _path(enc: _Encoding, via: int) -> str:
    """The branch point ``via`` (rules.windows ``w_may``) in words."""
    if via < 0:
        return ""
    s = enc.fx.stmt_at(via // 4)
    kind = via % 4
    if kind < 2:
        return f"when the `if` at line {s.span.line} takes its {('then', 'else')[kind]} arm"
    loop = f"the loop at line {s.span.line}"
    if kind == 3:
        return f"when {loop} runs no trip (its result is then its initializer)"
    y = trailing_yield(s.body) if isinstance(s, (ForStmt, WhileStmt)) else None
    at = f" at line {y.span.line}" if y is not None else ""
    return (f"through {loop}: the value its body yields{at} (the carry on every trip after the "
            f"first, and the loop's result)")


def format_violation(function: Function, enc: _Encoding, v: Violation) -> str:
    s = enc.fx.stmt_at(v.stmt)
    call = call_of(s)
    op = call.op if isinstance(call, Call) else "accumulating op"
    if callee_name(op) is not None:
        op += " (a function that accumulates into this argument: checked as if inlined)"
    parent = enc.vars[v.parent]
    ptype = parent.type
    assert isinstance(ptype, TileType)
    pr = const_int(ptype.shape[-2])
    pc = const_int(ptype.shape[-1])
    r, c = v.rows, v.cols
    pc_text = "?" if pc is None else str(pc)
    page = "" if ptype.rank == 2 else " page of a " + "x".join(
        str(const_int(d)) if const_int(d) is not None else "?" for d in ptype.shape) + " batch"
    operand = enc.vars[v.operand].name
    path = _path(enc, v.via)
    if path:
        subject = f"its accumulator `{operand}` may name — {path} — a"
    else:
        subject = f"its accumulator `{operand}` is a"
    where = f"{_where(s.span)}: in function {function.name!r}, {op} at line {s.span.line}: "
    window = f"{r}x{c} row window of a {pr}x{pc_text}{page} Acc (L0C) tile `{parent.name}`"
    layout = ("L0C stores an accumulator in 16x16 NZ blocks (block (rb, cb) of an [M, N] tile at "
              "(cb*M/16 + rb)*fractal), and the MAD writes its destination compactly with no "
              "destination stride, so ")
    rule = ("Rule: an accumulator window must span every row of its parent starting at a column "
            "offset that is a multiple of 16, or cover at most 16 columns inside one 16-column "
            "block.")
    every = (" Every window a path can bring to the accumulator is checked: make each branch "
             "(each arm, each yield) name a window that passes the rule." if path else "")
    if v.col is None:
        m = v.mult or 1
        return "\n".join([
            where + f"{subject} {window} at a dynamic column offset that is only known to be a "
            f"multiple of {m}, so for some value it can cross a 16-column block boundary (or start "
            f"a full-row window mid-block).",
            layout + "a window that crosses a block boundary would be written into the wrong "
            "rows (silently; pto-isa#253).",
            rule,
            f"Fix: make the column offset a provable multiple of 16 (e.g. j * 16, or a pl.range "
            f"loop variable whose start and step are multiples of 16) and the window span every "
            f"row of its parent or at most 16 columns; or use constant offsets.{every}",
            _NOTE])
    first = where + f"{subject} {window} that is not contiguous in L0C's block layout."
    if v.mid_block:
        lo, boundary = v.col % 16, (v.col // 16 + 1) * 16
        padded = -(-c // 16) * 16
        return "\n".join([
            first + f" It spans every row of its parent but starts at column {v.col}, mid-block "
            f"(not a multiple of 16), and crosses the block boundary at column {boundary}.",
            layout + f"it lays the window out as if it started on a block boundary: in each 16 "
            f"columns of the window only the first {16 - lo} would be correct, the other {lo} "
            "land in the next row of the block layout (silently; pto-isa#253).",
            rule,
            f"Fix: start the window on a 16-column block boundary — e.g. pad each packed window "
            f"to {padded} columns and take window i as tile.slice(acc, [{r}, {c}], "
            f"[0, i * {padded}]).{every}",
            _NOTE])
    lines = [
        first,
        layout + "only the first 16 columns of each row tile would be correct "
        "(silently; pto-isa#253).",
        rule,
    ]
    if pr is not None and r > 0 and pr % r == 0:
        lines.append(
            f"Fix: pack the accumulator along columns instead of rows — allocate it as "
            f"{r} x {(pr // r) * c} (R x ((PR/R)*C) = {r} x (({pr}/{r})*{c})) and take window i "
            f"as tile.slice(acc, [{r}, {c}], [0, i * {c}]).{every}")
    else:
        lines.append("Fix: pack the accumulator along columns ([rows, N * tiles]) and slice "
                     f"columns, so every window spans all of its parent's rows.{every}")
    lines.append(_NOTE)
    return "\n".join(lines)


_NOTE = ("Note: this window may not appear in the kernel source — a compiler pass (flattening a "
         "batch_matmul_acc whose batch pages are stacked along rows) can produce it.")
