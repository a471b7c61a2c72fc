"""Decode the chosen terms back into statements, in the original order.

Placement respects memory effects: a view reads its source at use time, so a Vec copy may
replace the slice at its definition (one copy shared by every consumer) only when nothing writes
the source's storage between the definition and the use; otherwise — and always for the matmul
operand copies, as the seed specifies — the copy goes right before its consumer.  The writes are
those of ``ir.effects``, a call of one of the program's functions included: it writes what its
summary says, and a write through its result is a write into the arguments the result shares.  A copy already
available in an enclosing scope is reused (identical copies of one window are emitted once).
Slices left without uses are dropped, chains together.

A copy the extractor chose to hoist (``CopyOut w mem ctx L``, ``rules.hoist``) is made once right
before loop ``L`` and read by the uses inside it; identical hoisted copies are shared like any
other copy.

A use realized from the copy its parent slice got at its definition (``CopyBuf k`` in the chosen
term, round 2 of the driver) reads that copy: a view is emitted as a fresh
``tile.slice(p_ext, shape, [r, c])`` right after the child's slice; a copy extracts from
``p_ext``.  When no copy of the parent exists at its definition, one is created there (sound: the
driver only offers the form when nothing writes the source between the parent's definition and
the use).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Sequence

from ..ir.effects import Effects, function_effects
from ..ir.exprs import (BinOp, Call, Const, Expr, ListExpr, Symbol, Var, VarRef, free_vars,
                        substitute)
from ..ir.mutator import ReadCount, StmtMutator, body_fields
from ..ir.stmts import (AssignStmt, EvalStmt, ForStmt, Function, ReturnStmt, Span, Stmt,
                        WhileStmt, YieldStmt)
from ..ir.types import DType, MemorySpace, TileType
from ..rules.sorts import IDX_OPS
from .encoding import Encoding, ExtSite, UseSite, Window
from .extract import Term

_SUFFIX = {"Vec": "ext", "Left": "left", "Right": "right"}
_MEMORY = {m.value: m for m in MemorySpace}  # (faster than the enum's own lookup by value)
_MEMORY_SYMBOL = {m.value: Symbol(("Mem", m.value), m) for m in MemorySpace}
_IDX_SPELLING = {c: op for op, c in IDX_OPS.items()}  # an Idx constructor -> its operator
_ZERO = Const(0)  # (IR nodes are immutable: the new statements may share it)


@dataclass(slots=True)
class Decision:
    """What happened to one use / extract / slice (input to the report)."""

    kind: str  # "view" | "copy" | "fold" | "kept" | "peeled" | "dropped"
    site: object
    term: Term | None = None
    copy_var: Var | None = None
    placement: str | None = None  # "definition" | "consumer" | "before loop" | "shared"
    buf_var: Var | None = None  # the parent's copy a view / copy of a CopyBuf form reads
    anchor: Stmt | None = None  # the statement the copy was placed at / before


@dataclass
class Decoded:
    body: list[Stmt]
    #: what happened to each use / extract / slice (none when the decoder was told not to
    #: record them: only the report reads them)
    decisions: list[Decision] = field(default_factory=list)


class Decoder(StmtMutator):
    def __init__(self, fn: Function, enc: Encoding, results: list[Term], fx: Effects | None = None,
                 record: bool = True):
        self.fn = fn
        self.enc = enc
        self.results = results
        #: program points, storage classes and writes (``ir.effects``)
        self.fx = fx if fx is not None else function_effects(fn)
        self.names = {v.name for v in self.fx.defs}
        self.names.update(p.var.name for p in fn.params)
        self.decisions: list[Decision] = []
        #: whether :attr:`decisions` is filled (the report's input; the rebuilt body, the copies
        #: and ``buf_var`` / ``buf_sites`` of round 2 are the same either way)
        self.record = record
        #: statement -> operand slot -> the copy / view that replaces it
        self.repl_at: dict[Stmt, dict[tuple, Var]] = {}
        #: plain alias -> the copy it was rewritten to read (``a = head`` became ``a = head_ext``)
        self.alias_of_copy: dict[Var, Var] = {}
        #: plain aliases whose copy took their name (``a = tile.extract(...)``): dropped
        self.named_alias: set[Stmt] = set()
        self._tile_types: dict[tuple, tuple[ListExpr, TileType]] = {}
        #: one ``Const`` per literal offset (IR nodes are immutable: statements may share it)
        self._lits: dict[object, Const] = {}
        #: window -> whether anything in the function may write its source (:meth:`written`)
        self._written: dict[Window, bool] = {}

    def written(self, window: Window) -> bool:
        """Whether anything in the function may write the storage of ``window``'s source: when
        nothing does, nothing does between any two points either (most sources: no hazard to
        look up)."""
        got = self._written.get(window)
        if got is None:
            got = self._written[window] = self.fx.written_in(window.root.src, 0,
                                                             len(self.fx.stmts))
        return got

    def hazard(self, window: Window, consumer: Stmt) -> bool:
        """Whether something may write the storage of ``window``'s source between the slice and
        the use."""
        if not self.written(window):
            return False
        p = self.fx.point(window.stmt)
        return self.fx.written_before_use(window.root.src, p.pos, p.loops, consumer)

    # ------------------------------------------------------------------ terms -> IR
    def idx(self, t: Term, pos: int, path: tuple[int, ...]) -> Expr:
        op = t[0]
        if op == "Lit":
            c = self._lits.get(t[1])
            if c is None:
                c = self._lits[t[1]] = Const(int(t[1]))
            return c
        if op == "Sym":
            e = self.enc.syms[t[1]]
            return self._visible_expr(e, pos, path)
        return BinOp(_IDX_SPELLING[op], self.idx(t[1], pos, path), self.idx(t[2], pos, path))

    def _visible_expr(self, e: Expr, pos: int, path: tuple[int, ...]) -> Expr:
        """``e`` with every SSA scalar not visible at the placement point replaced by its
        definition (the e-graph may pick an equal name defined elsewhere)."""
        mapping = {}
        for v in free_vars(e):
            if not self.fx.visible(v, pos, path) and v in self.enc.scalar_defs:
                mapping[id(v)] = self._visible_expr(self.enc.scalar_defs[v], pos, path)
        return substitute(e, mapping) if mapping else e

    def window_parts(self, t: Term, pos: int, path: tuple[int, ...]) -> tuple[Var, Expr, Expr]:
        """Base var and accumulated offsets of a tile term (a peeled window, or a nested one
        when saturation stopped early)."""
        if t[0] != "Win":
            return self.base_var(t), _ZERO, _ZERO
        r, c = self.idx(t[2], pos, path), self.idx(t[3], pos, path)
        if t[1][0] != "Win":  # (the common case: a window of the base itself)
            return self.base_var(t[1]), r, c
        base, r0, c0 = self.window_parts(t[1], pos, path)
        return base, BinOp("+", r0, r), BinOp("+", c0, c)

    def base_var(self, t: Term) -> Var:
        """The variable a ``Leaf`` or ``CopyBuf`` term names."""
        if t[0] == "Leaf":
            return self.enc.leaves[t[1]]
        assert t[0] == "CopyBuf", t
        return self.buf_var[int(t[1])]

    def fresh_name(self, stem: str) -> str:
        name = stem
        k = 1
        while name in self.names:
            name = f"{stem}_{k}"
            k += 1
        self.names.add(name)
        return name

    # ------------------------------------------------------------------ rebuild
    def run(self) -> Decoded:
        self.use_of: dict[Stmt, list[tuple[UseSite, Term]]] = {}
        self.ext_of: dict[Stmt, Term] = {}
        self.ext_site: dict[Stmt, ExtSite] = {}  # the first extract site of each statement
        for x in reversed(self.enc.exts):
            self.ext_site[x.stmt] = x
        self.win_term: dict[Stmt, Term] = {}
        self.def_copies: dict[Stmt, list[tuple[UseSite, Term]]] = {}
        #: window key -> the copy it got at its definition (``CopyBuf`` forms read it)
        self.buf_var: dict[int, Var] = {}
        self.bufs_needed: set[int] = set()
        self.views: dict[Stmt, list[tuple[UseSite, Term]]] = {}  # child slice stmt -> views
        self.placed_view: dict[UseSite, Var] = {}  # use -> view of the parent's copy
        self.buf_sites: list[tuple[UseSite, int]] = []  # uses reading a parent's copy
        #: loop statement -> the copies hoisted right before it (``CopyOut`` terms)
        self.hoist_before: dict[Stmt, list[tuple[UseSite, Term]]] = {}
        #: the kept slices of slices, re-emitted on their non-slice base (:meth:`_peel`)
        self.peeled: set[Stmt] = set()
        record = self.record
        use_of, def_copies, win_term = self.use_of, self.def_copies, self.win_term
        leaves = self.enc.leaves
        #: the slices a kept view reads in place: never dead (:attr:`read_count`)
        read: set[Var] = set()
        for (_, site), term in zip(self.enc.roots, self.results):
            kind = type(site)  # (no subclasses)
            if kind is UseSite:
                if term[0] == "CopyOut":
                    term, loop = self.hoist_target(site, term)
                    if loop is not None:
                        use_of.setdefault(site.stmt, []).append((site, term))
                        self.hoist_before.setdefault(loop, []).append((site, term))
                        continue
                kp = copy_buf_of(term)
                if kp is not None:
                    self.bufs_needed.add(kp)
                    self.buf_sites.append((site, kp))
                    if term[0] == "Keep":
                        self.views.setdefault(site.window.stmt, []).append((site, term))
                elif term[0] != "Copy":
                    # a view: the operand stays the slice (:meth:`realize_uses` replaces none)
                    if term[0] == "Keep" and site.var is site.window.var:
                        read.add(site.var)
                    if not record:  # nothing to rebuild, nothing to record
                        continue
                use_of.setdefault(site.stmt, []).append((site, term))
                # a Vec copy goes to the slice's definition unless the source may be written
                # before the use
                if term[0] == "Copy" and term[2] == "Vec" and not self.hazard(site.window,
                                                                               site.stmt):
                    def_copies.setdefault(site.window.stmt, []).append((site, term))
            elif kind is Window:
                s = site.stmt
                win_term[s] = term
                # a kept slice of a slice is re-emitted on its non-slice base (:meth:`_peel`)
                base = term[1]
                if base[0] == "Leaf" and leaves[base[1]] is not s.value.args[0].var:
                    self.peeled.add(s)
            elif kind is ExtSite:
                self.ext_of[site.stmt] = term
        #: the statements something is decided at (any other simple statement stays as it is;
        #: a slice is re-emitted only when peeled or when a chosen form reads its copy)
        self.touched: set[Stmt] = {*use_of, *self.ext_of, *def_copies, *self.views,
                                   *self.hoist_before, *self.peeled}
        if self.bufs_needed:
            self.touched.update(w.stmt for w in self.enc.windows if w.key in self.bufs_needed)
        self.scopes: list[dict[Term, Var]] = [{}]
        self.placed: dict[UseSite, Var] = {}  # use -> copy var
        self.copy_at: dict[Var, tuple[int, tuple[int, ...]]] = {}  # copy var -> (pos, loops)
        #: reads of the slices that may end up unread, in the rebuilt body, and the rebuilt
        #: bodies that assign one.  A slice a view reads (``read``) is left out: its use is an
        #: operand left in place (only the uses in ``repl_at`` are replaced) of a statement that
        #: is never dropped (a use is never at a slice's own statement, and only the assignments
        #: of dead slices are dropped), so it is read in the rebuilt body whatever else is; its
        #: own reads then count as those of any kept statement, as they did when it was counted
        #: and found alive.  Every other slice's reads are still counted in every statement.
        self.read_count = ReadCount({w.var for w in self.enc.windows if w.var not in read})
        self.slice_bodies: list[list[Stmt]] = []
        body = self.mutate_body(self.fn.body)
        rounds = self.read_count.rounds()
        round_of = {v: i for i, dead in enumerate(rounds) for v in dead}
        if round_of:
            for b in self.slice_bodies:  # fresh lists of this rebuild: filtered in place
                b[:] = [s for s in b if type(s) is not AssignStmt or s.target not in round_of]
        if self.record:
            dropped: list[list[Decision]] = [[] for _ in rounds]  # round by round, program order
            for w in self.enc.windows:
                i = round_of.get(w.var)
                if i is not None:
                    dropped[i].append(Decision("dropped", w))
            for ds in dropped:
                self.decisions += ds
        return Decoded(body, self.decisions)

    def hoist_target(self, site: UseSite, term: Term) -> tuple[Term, Stmt | None]:
        """``(CopyOut w mem ctx L)``: the copy of ``w`` made once before loop ``L``
        (``rules.hoist`` proved it invariant there).  Returns the copy term and the loop to
        place it before — or no loop when this use is not inside ``L`` (a use sharing the
        e-class elsewhere), when the usual place at the slice's definition already lies outside
        ``L`` with nothing writing the source in between, or when an offset chosen by the
        extractor cannot be read before ``L``: then it is an ordinary copy."""
        copy = ("Copy", term[1], term[2], term[3])
        loop = self.fx.stmt_at(int(term[4]))
        lp = self.fx.point(loop)
        if lp.pos not in self.fx.point(site.stmt).loops:
            return copy, None
        w = site.window
        if term[2] == "Vec" and lp.pos not in self.fx.point(w.stmt).loops \
                and not self.hazard(w, site.stmt):
            return copy, None
        _base, r, c = self.window_parts(term[1], lp.pos, lp.path)
        if not all(self.fx.visible(v, lp.pos, lp.path) for e in (r, c) for v in free_vars(e)):
            return copy, None
        return copy, loop

    def make_copy(self, site: UseSite, term: Term, anchor: Stmt, placement: str,
                  out: list[Stmt]) -> Var:
        key = term[:3]  # one copy per (window, memory), whatever the context
        for sc in reversed(self.scopes):  # the copy of ``key`` in an enclosing scope, if any
            v = sc.get(key)
            if v is not None:
                if self._written_since(v, site, anchor, placement):
                    break  # (stale: make a new one)
                if self.record:
                    self.decisions.append(Decision("copy", site, term, v, "shared",
                                                   anchor=anchor))
                return v
        info = self.fx.points[anchor]
        pos = info.pos + (1 if placement == "definition" else 0)
        base, r, c = self.window_parts(term[1], pos, info.path)
        w = site.window
        v = self.emit_extract(f"{w.var.name}_{_SUFFIX.get(term[2]) or term[2].lower()}", base, r, c,
                              w.rows, w.cols, term[2], anchor.span, out,
                              self.alias_target(site, placement, info.path, term[2]))
        self.scopes[-1][key] = v
        # the copy holds the source as of just after the slice (definition) or just before the
        # consumer, whose own write comes after the read
        self.copy_at[v] = (info.pos if placement == "definition" else info.pos - 1, info.loops)
        if self.record:
            kp = copy_buf_of(term)
            self.decisions.append(Decision("copy", site, term, v, placement,
                                           self.buf_var.get(kp) if kp is not None else None,
                                           anchor))
        if placement == "definition" and anchor is w.stmt:
            self.buf_var.setdefault(w.key, v)
        return v

    def alias_target(self, site: UseSite, placement: str, path: tuple[int, ...],
                     mem: str) -> AssignStmt | None:
        """The plain alias ``a = head`` whose own copy this is, when the copy can take the
        alias's name: ``a = tile.extract(...)`` in place of ``head_ext = tile.extract(...)`` and
        ``a = head_ext`` (PyPTO's spelling; the same bytes, one statement fewer).  Only where
        nothing changes but the name: a copy made for this use (at the slice or right before
        the alias), in the alias's own block, of exactly the alias's declared type."""
        s = site.stmt
        if site.slot != ("alias",) or placement == "before loop" or type(s) is not AssignStmt \
                or self.fx.points[s].path != path or s in self.named_alias:
            return None
        t = s.target.type
        if not isinstance(t, TileType) or t != self.tile_type(site.window.rows, site.window.cols,
                                                              t.dtype, mem)[1]:
            return None
        return s

    def _written_since(self, v: Var, site: UseSite, anchor: Stmt, placement: str) -> bool:
        """Whether the source may be written between the creation of the identical copy ``v`` and
        the point where this use needs the source's value (then ``v`` is stale: make a new one)."""
        if not self.written(site.window):
            return False
        c_pos, c_loops = self.copy_at[v]
        return self.fx.written_before_use(site.window.root.src, c_pos, c_loops, anchor,
                                          including_use=placement == "definition")

    def make_buf(self, w: Window, out: list[Stmt]) -> None:
        """The copy of window ``w`` at its definition, when a chosen form reads it and no use of
        ``w`` created it."""
        info = self.fx.point(w.stmt)
        base, r, c = self.window_parts(self.win_term[w.stmt], info.pos + 1, info.path)
        v = self.emit_extract(f"{w.var.name}_ext", base, r, c, w.rows, w.cols, "Vec",
                              w.stmt.span, out)
        self.buf_var[w.key] = v

    def emit_extract(self, stem: str, base: Var, r: Expr, c: Expr, rows: int, cols: int,
                     mem: str, span: Span, out: list[Stmt], alias: AssignStmt | None = None) -> Var:
        """Append ``v = tile.extract(base, r, c, shape=[rows, cols], target_memory=mem)`` to
        ``out`` (``v`` a fresh name from ``stem``, or the target of ``alias``, a plain alias
        statement that is then dropped: :meth:`alias_target`; ``mem`` a memory space's name);
        returns ``v``."""
        t = base.type
        assert isinstance(t, TileType)
        shape, ty = self.tile_type(rows, cols, t.dtype, mem)
        if alias is not None:
            v = alias.target
            self.named_alias.add(alias)
        else:
            v = Var(self.fresh_name(stem), ty)
        call = Call("tile.extract", (VarRef(base), r, c),
                    (("shape", shape), ("target_memory", _MEMORY_SYMBOL[mem])))
        out.append(AssignStmt(v, call, span))
        return v

    def tile_type(self, rows: int, cols: int, dtype: DType, mem: str) -> tuple[ListExpr, TileType]:
        """The shape ``[rows, cols]`` and the tile type of a copy or view in memory space
        ``mem`` (its name; one object per distinct type: IR nodes are immutable, so the new
        statements may share them)."""
        key = (rows, cols, id(dtype), mem)  # (an enum member hashes in Python: its id is faster)
        got = self._tile_types.get(key)
        if got is None:
            shape = ListExpr((Const(rows), Const(cols)))
            got = self._tile_types[key] = (shape, TileType(shape.items, dtype, _MEMORY[mem]))
        return got

    def make_views(self, s: AssignStmt, out: list[Stmt]) -> None:
        """Views of the parent's copy for the uses of the child slice ``s``, right after it."""
        made: dict[Term, Var] = {}
        info = self.fx.point(s)
        for site, term in self.views[s]:
            v = made.get(term)
            win = term[1]
            kp = int(win[1][1])
            if v is None:
                buf = self.buf_var[kp]
                r, c = self.idx(win[2], info.pos + 1, info.path), self.idx(win[3], info.pos + 1, info.path)
                t = buf.type
                assert isinstance(t, TileType)
                shape, ty = self.tile_type(int(win[4]), int(win[5]), t.dtype, "Vec")
                v = Var(self.fresh_name(f"{site.window.var.name}_view"), ty)
                out.append(AssignStmt(v, Call("tile.slice", (VarRef(buf), shape, ListExpr((r, c)))),
                                      s.span))
                made[term] = v
            self.placed_view[site] = v

    def mutate_body(self, body: list[Stmt]) -> list[Stmt]:
        """``body`` rebuilt in one pass: a statement nothing is decided at and with no nested
        body is kept as it is; the reads of the result are counted for dead-slice removal."""
        out: list[Stmt] = []
        touched = self.touched
        for s in body:
            if s in touched:
                self.mutate(s, out)
            elif type(s) is AssignStmt or not body_fields(type(s)):
                out.append(s)
            else:
                out.append(self.recurse(s))  # nothing decided at it: only its bodies rebuilt
        if self.read_count.count_own(out):  # (nested bodies were counted when built)
            self.slice_bodies.append(out)
        elif len(out) == len(body) and all(map(operator.is_, out, body)):
            return body
        return out

    def mutate(self, s: Stmt, out: list[Stmt] | None = None) -> list[Stmt]:
        """``s`` with its operands rewritten, preceded by the copies its uses need and followed
        by the copies / views made at its definition (appended to ``out``, which is returned)."""
        if out is None:
            out = []
        if s in self.hoist_before:
            for site, term in self.hoist_before[s]:
                self.placed[site] = self.make_copy(site, term, s, "before loop", out)
        uses = self.use_of.get(s)
        if uses is not None:
            self.realize_uses(s, uses, out)
        if type(s) is not AssignStmt:
            out.append(super().mutate(s))  # type: ignore[arg-type]
            return out
        if s not in self.named_alias:  # (an alias whose copy took its name is that copy)
            out.append(self.visit_AssignStmt(s))  # type: ignore[arg-type]
        copies = self.def_copies.get(s)
        if copies is not None:
            for site, term in copies:
                self.placed[site] = self.make_copy(site, term, s, "definition", out)
        if self.bufs_needed and s in self.win_term:
            w = self.enc.window_of.get(s.target)  # type: ignore[attr-defined]
            if w is not None and w.stmt is s and w.key in self.bufs_needed \
                    and w.key not in self.buf_var:
                self.make_buf(w, out)
        if self.views and s in self.views:
            self.make_views(s, out)  # type: ignore[arg-type]
        return out

    def realize_uses(self, s: Stmt, uses: list[tuple[UseSite, Term]], out: list[Stmt]) -> None:
        """The copies the uses at ``s`` read (made before ``s`` unless placed already) and the
        operands of ``s`` they replace (``repl_at``)."""
        repl: dict[tuple, Var] = {}
        for site, term in uses:
            if term[0] == "Copy":
                v = self.placed.get(site)
                if v is None:
                    v = self.make_copy(site, term, s, "consumer", out)
                repl[site.slot] = v
            elif site in self.placed_view:
                v = self.placed_view[site]
                repl[site.slot] = v
                if self.record:
                    self.decisions.append(Decision("view", site, term, v, "definition",
                                                   self.buf_var[copy_buf_of(term)]))
            elif self.record:
                self.decisions.append(Decision("view", site, term))
        if repl:
            self.repl_at[s] = repl

    def nested(self, body: list[Stmt]) -> list[Stmt]:
        """A nested body is a scope of its own for shared copies."""
        self.scopes.append({})
        try:
            return super().nested(body)
        finally:
            self.scopes.pop()

    def operand(self, v: Var, e: Expr) -> Expr:
        """Operand ``e`` of a use realized by the copy / view ``v``: ``v``, unless ``e`` is a plain
        alias of it, which keeps its name (the consumer reads the alias)."""
        if isinstance(e, VarRef) and self.alias_of_copy.get(e.var) is v:
            return e
        return VarRef(v)

    def operands(self, repl: dict[tuple, Var], kind: str, values: Sequence[Expr]) -> list[Expr]:
        """``values`` with the operands of slots ``(kind, i)`` in ``repl`` replaced."""
        out = list(values)
        for slot, v in repl.items():
            if slot[0] == kind:
                out[slot[1]] = self.operand(v, out[slot[1]])
        return out

    def visit_AssignStmt(self, s: AssignStmt) -> Stmt:
        if s in self.ext_of:
            return self._fold_extract(s)
        if s in self.win_term:
            return self._peel(s)
        repl = self.repl_at.get(s)
        if repl is None:
            return s
        v = s.value
        if isinstance(v, Call):
            v = self._call(repl, v)
        elif isinstance(v, VarRef) and ("alias",) in repl:
            v = self.operand(repl[("alias",)], v)
            if v is not s.value:
                self.alias_of_copy[s.target] = v.var
        return s if v is s.value else AssignStmt(s.target, v, s.span)

    def visit_EvalStmt(self, s: EvalStmt) -> Stmt:
        repl = self.repl_at.get(s)
        c = s.call if repl is None else self._call(repl, s.call)
        return s if c is s.call else EvalStmt(c, s.span)

    def visit_YieldStmt(self, s: YieldStmt) -> Stmt:
        repl = self.repl_at.get(s)
        if repl is None:
            return s
        return YieldStmt(self.operands(repl, "yield", s.values), s.span)

    def visit_ReturnStmt(self, s: ReturnStmt) -> Stmt:
        repl = self.repl_at.get(s)
        if repl is None:
            return s
        return ReturnStmt(self.operands(repl, "return", s.values), s.span)

    def visit_ForStmt(self, s: ForStmt | WhileStmt) -> Stmt:
        repl = self.repl_at.get(s)
        if repl is None:
            return self.recurse(s)
        inits = self.operands(repl, "init", s.init_values)
        changed = any(map(operator.is_not, inits, s.init_values))
        return self.recurse(s, init_values=inits) if changed else self.recurse(s)

    visit_WhileStmt = visit_ForStmt

    def _call(self, repl: dict[tuple, Var], c: Call) -> Call:
        args = self.operands(repl, "arg", c.args)
        kwargs = c.kwargs
        if kwargs and any(slot[0] == "kwarg" for slot in repl):
            new = tuple((k, self.operand(repl[("kwarg", k)], e)) if ("kwarg", k) in repl
                        else (k, e) for k, e in kwargs)
            if not all(x[1] is y[1] for x, y in zip(new, kwargs)):
                kwargs = new
        if kwargs is c.kwargs and all(map(operator.is_, args, c.args)):
            return c
        return Call(c.op, tuple(args), kwargs)

    def _fold_extract(self, s: AssignStmt) -> Stmt:
        term = self.ext_of[s]
        site = self.ext_site[s]
        info = self.fx.point(s)
        if term[1][0] != "Leaf":  # not folded (saturation stopped early): keep it
            if self.record:
                self.decisions.append(Decision("kept", site, term))
            return s
        base = self.enc.leaves[term[1][1]]
        r, c = self.idx(term[2], info.pos, info.path), self.idx(term[3], info.pos, info.path)
        v = s.value
        assert isinstance(v, Call)
        if self.record:
            self.decisions.append(Decision("fold", site, term))
        return AssignStmt(s.target, Call(v.op, (VarRef(base), r, c, *v.args[3:]), v.kwargs), s.span)

    def _peel(self, s: AssignStmt) -> Stmt:
        """A kept slice of a slice is re-emitted on its non-slice base (offsets accumulated)."""
        if s not in self.peeled:
            return s
        term = self.win_term[s]
        v = s.value
        assert isinstance(v, Call)
        info = self.fx.point(s)
        base, r, c = self.window_parts(term, info.pos, info.path)
        return AssignStmt(s.target, Call(v.op, (VarRef(base), v.args[1], ListExpr((r, c))),
                                         v.kwargs), s.span)

def copy_buf_of(term: Term) -> int | None:
    """The window key ``k`` of the ``(CopyBuf k)`` a chosen use term reads, if any."""
    if term[0] not in ("Keep", "Copy"):
        return None
    t = term[1]
    while t[0] == "Win":
        t = t[1]
    return int(t[1]) if t[0] == "CopyBuf" else None
