"""Acc accumulator-window check: encode one function's dataflow, run ``rules.windows``, report.

The encoder only states structure (which statement defines which value from what, the registry
properties of the ops that occur, constant dimensions, loop bounds); the rules in
``egraph_tiles.rules.windows`` decide which window each value names and which windows are
violations.  :func:`check_acc_windows` raises the first violation in program order as a
``ValueError`` whose text says what is wrong and how to spell the kernel instead.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from egglog import bindings

from ..ir.exprs import BinOp, Call, Const, Expr, ListExpr, Neg, Var, VarRef, const_int
from ..ir.ops import OpTypeError, bind, lookup
from ..ir.stmts import (AssignStmt, EvalStmt, ForStmt, Function, IfStmt, ScopeStmt, Span, Stmt,
                        WhileStmt, YieldStmt)
from ..ir.types import ScalarType, TileType
from ..rules import windows as rules
from .schedule import load_tables

_ARITH = {"+": "WAddRow", "-": "WSubRow", "*": "WMulRow"}
Rows = dict[str, list[tuple]]


@dataclass
class _Encoding:
    """The facts for one function (rows of the relations and ``LOAD`` tables of
    ``rules.windows``) plus what the message needs to name things."""

    rows: Rows = field(default_factory=lambda: defaultdict(list))
    vars: dict[int, Var] = field(default_factory=dict)
    stmts: list[Stmt] = field(default_factory=list)
    op_ids: dict[str, int] = field(default_factory=dict)
    opaque: int = 0
    nodes: int = 0  # ids of WOff / WDims nodes (``WN`` / ``WD``)
    dims: dict[tuple[int, ...], int] = field(default_factory=dict)
    #: some call writes back (registry ``reuses_arg``) into a tile operand: without one, no
    #: ``w_dest`` can name a tile, so no rule can derive a violation (see ``violations``)
    writes_back_into_tile: bool = False

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
        mem = t.memory.value if t.memory is not None else "?"
        self.row("w_tile", v.uid, mem, t.dtype.storage_bits, t.rank)
        dims = [const_int(d) for d in t.shape]
        for i, d in enumerate(dims):
            if d is not None:
                self.row("w_dim", v.uid, i, d)
        if all(d is not None for d in dims):
            self.row("WExtRow", v.uid, t.dtype.name, self.dims_node(tuple(dims)))

    def dims_node(self, dims: tuple[int, ...]) -> int:
        """The ``WD`` id of the ``WDims`` list ``dims`` (one id per distinct suffix)."""
        if dims not in self.dims:
            n = self.dims[dims] = self.node()
            if dims:
                self.row("WConsRow", n, dims[0], self.dims_node(dims[1:]))
            else:
                self.row("WNilRow", n)
        return self.dims[dims]

    def off(self, e: Expr) -> int:
        """A scalar offset as the ``WN`` id of a ``WOff`` term (anything not affine is a fresh
        opaque leaf)."""
        n = self.node()
        k = const_int(e)
        if k is not None:
            self.row("WKRow", n, k)
        elif isinstance(e, VarRef):
            self.row("WSymRow", n, e.var.uid)
        elif isinstance(e, BinOp) and e.op in _ARITH:
            self.row(_ARITH[e.op], n, self.off(e.lhs), self.off(e.rhs))
        elif isinstance(e, Neg):
            zero = self.node()
            self.row("WKRow", zero, 0)
            self.row("WSubRow", n, zero, self.off(e.operand))
        else:
            self.opaque += 1
            self.row("WOpaqueRow", n, self.opaque)
        return n

    def stmt(self, s: Stmt) -> int:
        self.stmts.append(s)
        return len(self.stmts) - 1

    def op(self, name: str) -> int:
        """The id of an op; its registry properties become facts the first time it is seen."""
        if name in self.op_ids:
            return self.op_ids[name]
        i = self.op_ids[name] = len(self.op_ids)
        d = lookup(name)
        if d is not None:
            if d.inherits_input_memory and d.inplace_safe:
                self.row("w_op_view", i)
            if d.reuses_arg is not None:
                self.row("w_op_reuses", i, d.reuses_arg)
            if not d.inherits_input_memory and d.reuses_arg is None:
                self.row("w_op_fresh", i)
        return i

    # ------------------------------------------------------------------ statements

    def body(self, stmts: list[Stmt]) -> None:
        for s in stmts:
            self.one(s)

    def one(self, s: Stmt) -> None:
        if isinstance(s, AssignStmt):
            self.assign(s)
        elif isinstance(s, EvalStmt):
            self.call(self.stmt(s), s.call, None)
        elif isinstance(s, ForStmt):
            loop = self.stmt(s)
            self.row("WBoundsRow", loop, self.off(s.start), self.off(s.stop), self.off(s.step))
            self.carries(loop, s.iter_args, s.init_values, s.body, s.return_vars)
        elif isinstance(s, WhileStmt):
            self.carries(self.stmt(s), s.iter_args, s.init_values, s.body, s.return_vars)
        elif isinstance(s, IfStmt):
            i = self.stmt(s)
            self.body(s.then_body)
            self.body(s.else_body)
            ty, ey = _trailing_yield(s.then_body), _trailing_yield(s.else_body)
            for k, ret in enumerate(s.return_vars):
                t, e = _var_at(ty, k), _var_at(ey, k)
                if t is not None and e is not None:
                    self.row("w_if", i, k, self.var(t), self.var(e), self.var(ret))
        elif isinstance(s, ScopeStmt):
            self.stmt(s)
            self.body(s.body)
        else:
            self.stmt(s)

    def assign(self, s: AssignStmt) -> None:
        sid = self.stmt(s)
        t, v = s.target, s.value
        if isinstance(v, VarRef) and isinstance(t.type, TileType):
            self.row("w_alias", self.var(t), self.var(v.var))
        elif isinstance(v, Call):
            self.call(sid, v, t)
        elif isinstance(t.type, ScalarType) or isinstance(v, (Const, BinOp, Neg, VarRef)):
            # scalar SSA definitions and plain aliases are unioned with what they name
            self.row("WDefRow", t.uid, self.off(v))

    def call(self, sid: int, c: Call, target: Var | None) -> None:
        d = lookup(c.op)
        try:
            args = bind(c).args if d is not None else dict(enumerate(c.args))
        except OpTypeError:
            args = dict(enumerate(c.args))
        if c.op == "tile.slice" and target is not None:
            src, offs = args.get("src"), args.get("offset")
            if isinstance(src, VarRef) and isinstance(offs, ListExpr) and len(offs.items) == 2:
                r, col = (self.off(x) for x in offs.items)
                self.row("WSliceRow", self.var(target), self.var(src.var), r, col)
            else:
                self.var(target)
            return
        self.row("w_call", sid, self.op(c.op))
        if target is not None:
            self.row("w_result", sid, self.var(target))
        params = d.params if d is not None else ()
        for key, a in args.items():
            k = params.index(key) if isinstance(key, str) and key in params else key
            if isinstance(k, int) and isinstance(a, VarRef):
                self.row("w_arg", sid, k, self.var(a.var))
                if d is not None and k == d.reuses_arg and isinstance(a.var.type, TileType):
                    self.writes_back_into_tile = True

    def carries(self, loop: int, iter_args: list[Var], inits: list[Expr], body: list[Stmt],
                rets: list[Var]) -> None:
        for k, (ia, init) in enumerate(zip(iter_args, inits)):
            self.var(ia)
            if isinstance(init, VarRef):
                self.row("w_iter", loop, k, ia.uid, self.var(init.var))
        self.body(body)
        y = _trailing_yield(body)
        for k, ret in enumerate(rets):
            yv = _var_at(y, k)
            if yv is not None:
                self.row("w_yield", loop, k, self.var(yv))
            self.row("w_loop_ret", loop, k, self.var(ret))


def _trailing_yield(body: list[Stmt]) -> YieldStmt | None:
    return body[-1] if body and isinstance(body[-1], YieldStmt) else None


def _var_at(y: YieldStmt | None, k: int) -> Var | None:
    if y is None or k >= len(y.values):
        return None
    e = y.values[k]
    return e.var if isinstance(e, VarRef) else None


def encode(function: Function) -> _Encoding:
    enc = _Encoding()
    for p in function.params:
        enc.var(p.var)
        if isinstance(p.var.type, TileType):
            enc.row("w_param", p.var.uid)
    enc.body(function.body)
    return enc


# ---------------------------------------------------------------------- running and reading


@dataclass(frozen=True)
class Violation:
    """One rejected accumulator destination, in the words the message needs."""

    stmt: int  # program-order index of the writes-back statement
    operand: int  # uid of the operand that names the window
    parent: int  # uid of the Acc parent
    rows: int
    cols: int
    col: int  # the window's constant column offset in the parent
    mid_block: bool = False  # rejected because it starts mid-block (rule w-noncontiguous-mid-block)
    loop: int | None = None  # the loop whose back edge carries the window
    yielded: int | None = None  # uid of the yielded value on that back edge


def run_rules(rows: Rows) -> tuple[bindings.EGraph, dict[str, list[list[int]]]]:
    """Run the windows rules over the fact ``rows`` (table name -> tuples of primitives: the
    input relations and the ``LOAD`` tables of ``rules.windows``); the rows of the violation
    relations (and of ``w_noncontig`` / ``w_mid_block``)."""
    eg = bindings.EGraph()
    eg.run_program(*eg.parse_program(rules.SCHEMA + rules.LOAD + rules.RULES))
    # bulk-loaded with egglog's ``input`` (one command per table, linear in the facts)
    load_tables(eg, {t: r for t, r in rows.items() if r}, ruleset="w_load")
    eg.run_program(*eg.parse_program(rules.SCHEDULE))
    frozen = eg.freeze().functions
    out: dict[str, list[list[int]]] = {}
    for name in ("w_violation", "w_backedge_violation", "w_noncontig", "w_mid_block"):
        fn = frozen.get(name)
        out[name] = [[eg.value_to_i64(v) for v in row.inputs]
                     for row in (fn.rows if fn is not None else []) if not row.subsumed]
    return eg, out


def violations(function: Function) -> tuple[_Encoding, list[Violation]]:
    """Every violation the rules prove for ``function``, in program order."""
    enc = encode(function)
    if not enc.writes_back_into_tile:
        # Every violation rule needs ``w_dest s v`` with an extent for ``v`` (w-probe-dest,
        # w-violation), or a ``w_carry_dest`` built from one (the back edge); ``w_dest`` comes
        # only from a registry ``reuses_arg`` operand.  No such tile operand: nothing to derive.
        return enc, []
    try:
        _, rows = run_rules(enc.rows)
    except BaseException as e:  # a Rust panic is a BaseException (pyo3 PanicException)
        if isinstance(e, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        raise ValueError(
            f"accumulator-window check failed inside egglog for function {function.name!r}: {e}"
        ) from e
    mid = {tuple(row) for row in rows["w_mid_block"]}
    found = [Violation(s, v, p, r, c, c0, (p, r, c, c0) in mid)
             for s, v, p, r, c, c0 in rows["w_violation"]]
    found += [Violation(s, y, p, r, c, c0, (p, r, c, c0) in mid, loop=L, yielded=y)
              for L, s, y, p, r, c, c0 in rows["w_backedge_violation"]]
    found.sort(key=lambda x: (x.stmt, x.loop is not None, x.rows, x.cols))
    return enc, found


def check_acc_windows(function: Function) -> None:
    """Raise ``ValueError`` when an accumulator operand names an Acc window the MAD writes wrong.

    Silent on anything unprovable (symbolic extents, dynamic column offsets, opaque values).
    """
    enc, found = violations(function)
    if found:
        raise ValueError(format_violation(function, enc, found[0]))


# ---------------------------------------------------------------------- the message


def _where(span: Span) -> str:
    return f"{span.filename}:{span.line}" if span.line else "<unknown line>"


def format_violation(function: Function, enc: _Encoding, v: Violation) -> str:
    s = enc.stmts[v.stmt]
    call = s.call if isinstance(s, EvalStmt) else s.value if isinstance(s, AssignStmt) else None
    op = call.op if isinstance(call, Call) else "accumulating op"
    parent = enc.vars[v.parent]
    ptype = parent.type
    assert isinstance(ptype, TileType)
    pr = const_int(ptype.shape[0])
    pc = const_int(ptype.shape[1])
    r, c = v.rows, v.cols
    pc_text = "?" if pc is None else str(pc)
    operand = enc.vars[v.operand].name
    if v.loop is not None:
        loop = enc.stmts[v.loop]
        y = _trailing_yield(loop.body) if isinstance(loop, (ForStmt, WhileStmt)) else None
        yline = f" (yielded at line {y.span.line})" if y is not None else ""
        subject = (f"the loop carry it accumulates into (loop at line {loop.span.line}) is, on "
                   f"every iteration after the first, `{operand}`{yline}: a")
    else:
        subject = f"its accumulator `{operand}` is a"
    first = (f"{_where(s.span)}: in function {function.name!r}, {op} at line {s.span.line}: "
             f"{subject} {r}x{c} row window of a {pr}x{pc_text} Acc (L0C) tile `{parent.name}` "
             f"that is not contiguous in L0C's block layout.")
    layout = ("L0C stores an accumulator in 16x16 NZ blocks (block (rb, cb) of an [M, N] tile at "
              "(cb*M/16 + rb)*fractal), and the MAD writes its destination compactly with no "
              "destination stride, so ")
    rule = ("Rule: an accumulator window must span every row of its parent starting at a column "
            "offset that is a multiple of 16, or cover at most 16 columns inside one 16-column "
            "block.")
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
            f"[0, i * {padded}]).",
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
            f"as tile.slice(acc, [{r}, {c}], [0, i * {c}]).")
    else:
        lines.append("Fix: pack the accumulator along columns ([rows, N * tiles]) and slice "
                     "columns, so every window spans all of its parent's rows.")
    lines.append(_NOTE)
    return "\n".join(lines)


_NOTE = ("Note: this window may not appear in the kernel source — a compiler pass (flattening a "
         "batch_matmul_acc whose batch pages are stacked along rows) can produce it.")
