"""Decode the chosen terms back into statements, in the original order.

Placement respects memory effects: a view reads its source at use time, so a Vec copy may
replace the slice at its definition (one copy shared by every consumer) only when nothing writes
the source's storage between the definition and the use; otherwise — and always for the matmul
operand copies, as the seed specifies — the copy goes right before its consumer.  A copy already
available in an enclosing scope is reused (identical copies of one window are emitted once).
Slices left without uses are dropped, chains together.

A use realized from the copy its parent slice got at its definition (``CopyBuf k`` in the chosen
term, round 2 of the driver) reads that copy: a view is emitted as a fresh
``tile.slice(p_ext, shape, [r, c])`` right after the child's slice; a copy extracts from
``p_ext``.  When no copy of the parent exists at its definition, one is created there (sound: the
driver only offers the form when nothing writes the source between the parent's definition and
the use).
"""

from __future__ import annotations

import copy as _copy
from dataclasses import dataclass, field

from ..ir import ops
from ..ir.exprs import BinOp, Call, Const, Expr, ListExpr, Symbol, Var, VarRef, free_vars
from ..ir.stmts import (AssignStmt, EvalStmt, ForStmt, Function, IfStmt, ScopeStmt,
                        Stmt, WhileStmt, YieldStmt, stmt_exprs)
from ..ir.types import MemorySpace, TileType
from .encode import Encoding, ExtSite, UseSite, Window
from .extract import Term

_SUFFIX = {"Vec": "ext", "Left": "left", "Right": "right"}
_LOOPS = (ForStmt, WhileStmt)


@dataclass
class Decision:
    """What happened to one use / extract / slice (input to the report)."""

    kind: str  # "view" | "copy" | "fold" | "kept" | "peeled" | "dropped"
    site: object
    term: Term | None = None
    copy_var: Var | None = None
    placement: str | None = None  # "definition" | "consumer"
    buf_var: Var | None = None  # the parent's copy a view / copy of a CopyBuf form reads


@dataclass
class _Pos:
    pos: int
    end: int
    path: tuple[int, ...]
    loops: tuple[int, ...]  # positions of the enclosing loops


@dataclass
class Decoded:
    body: list[Stmt]
    decisions: list[Decision] = field(default_factory=list)


class Decoder:
    def __init__(self, fn: Function, enc: Encoding, results: list[Term]):
        self.fn = fn
        self.enc = enc
        self.results = results
        self.pos: dict[int, _Pos] = {}
        self.var_pos: dict[int, tuple[int, tuple[int, ...]]] = {}
        self.loop_end: dict[int, int] = {}
        self._n = 0
        self._blocks = 0
        self.names = {p.var.name for p in fn.params}
        self._index(fn.body, (0,), ())
        self.group: dict[int, int] = {}
        self.writers: list[tuple[int, Var]] = []
        self._storage(fn.body)
        self.decisions: list[Decision] = []

    # ------------------------------------------------------------------ indexing
    def _index(self, body: list[Stmt], path: tuple[int, ...], loops: tuple[int, ...]) -> None:
        for s in body:
            self._n += 1
            p = self._n
            kids = []
            if isinstance(s, IfStmt):
                kids = [s.then_body, s.else_body]
            elif isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
                kids = [s.body]
            inner_loops = loops + ((p,) if isinstance(s, _LOOPS) else ())
            bpaths = []
            for b in kids:
                self._blocks += 1
                bp = path + (self._blocks,)
                bpaths.append(bp)
                self._index(b, bp, inner_loops)
            info = _Pos(p, self._n, path, loops)
            self.pos[id(s)] = info
            if isinstance(s, _LOOPS):
                self.loop_end[p] = self._n
            if isinstance(s, AssignStmt):
                self._def(s.target, p, path)
            if isinstance(s, ForStmt):
                self._def(s.loop_var, p, bpaths[0])
            if isinstance(s, (ForStmt, WhileStmt)):
                for v in s.iter_args:
                    self._def(v, p, bpaths[0])
            if isinstance(s, ScopeStmt):
                self._def(s.var, p, bpaths[0])
            if isinstance(s, (ForStmt, WhileStmt, IfStmt)):
                for v in s.return_vars:
                    self._def(v, self._n, path)

    def _def(self, v: Var, p: int, path: tuple[int, ...]) -> None:
        self.var_pos[id(v)] = (p, path)
        self.names.add(v.name)

    def visible(self, v: Var, pos: int, path: tuple[int, ...]) -> bool:
        d = self.var_pos.get(id(v))
        if d is None:
            return True  # a parameter
        return d[0] < pos and path[:len(d[1])] == d[1]

    # ------------------------------------------------------------------ storage and writers
    def _find(self, k: int) -> int:
        while self.group.get(k, k) != k:
            k = self.group[k]
        return k

    def _union(self, a: Var, b: Var) -> None:
        ra, rb = self._find(id(a)), self._find(id(b))
        if ra != rb:
            self.group[ra] = rb

    def _storage(self, body: list[Stmt]) -> None:
        for s in body:
            p = self.pos[id(s)].pos
            call = s.value if isinstance(s, AssignStmt) and isinstance(s.value, Call) else \
                s.call if isinstance(s, EvalStmt) else None
            if isinstance(s, AssignStmt) and isinstance(s.value, VarRef):
                self._union(s.target, s.value.var)
            if call is not None:
                op = ops.lookup(call.op)
                tiles = [a.var for a in (*call.args, *(v for _, v in call.kwargs))
                         if isinstance(a, VarRef) and isinstance(a.var.type, TileType)]
                if op is None:
                    self.writers.extend((p, v) for v in tiles)
                else:
                    if op.inherits_input_memory and isinstance(s, AssignStmt) and call.args \
                            and isinstance(call.args[0], VarRef):
                        self._union(s.target, call.args[0].var)
                    if op.reuses_arg is not None and op.reuses_arg < len(call.args):
                        a = call.args[op.reuses_arg]
                        if isinstance(a, VarRef):
                            self.writers.append((p, a.var))
                            if isinstance(s, AssignStmt):
                                self._union(s.target, a.var)
            if isinstance(s, (ForStmt, WhileStmt)):
                for i, v in enumerate(s.iter_args):
                    init = s.init_values[i] if i < len(s.init_values) else None
                    if isinstance(init, VarRef):
                        self._union(v, init.var)
                    if i < len(s.return_vars):
                        self._union(s.return_vars[i], v)
                y = s.body[-1] if s.body and isinstance(s.body[-1], YieldStmt) else None
                if y is not None:
                    for i, e in enumerate(y.values):
                        if isinstance(e, VarRef) and i < len(s.iter_args):
                            self._union(s.iter_args[i], e.var)
            if isinstance(s, IfStmt):
                for b in (s.then_body, s.else_body):
                    if b and isinstance(b[-1], YieldStmt):
                        for i, e in enumerate(b[-1].values):
                            if isinstance(e, VarRef) and i < len(s.return_vars):
                                self._union(s.return_vars[i], e.var)
            for b in ([s.then_body, s.else_body] if isinstance(s, IfStmt) else
                      [s.body] if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)) else []):
                self._storage(b)

    def hazard(self, window: Window, consumer: Stmt, base: Var) -> bool:
        """Whether something may write ``base``'s storage between the slice and the use."""
        p = self.pos[id(window.stmt)]
        q = self.pos[id(consumer)]
        outer = [lp for lp in q.loops if lp not in p.loops]
        end = self.loop_end[min(outer)] if outer else q.pos - 1
        g = self._find(id(base))
        return any(p.pos < wp <= end and self._find(id(v)) == g for wp, v in self.writers)

    # ------------------------------------------------------------------ terms -> IR
    def idx(self, t: Term, pos: int, path: tuple[int, ...]) -> Expr:
        op = t[0]
        if op == "Lit":
            return Const(int(t[1]))
        if op == "Sym":
            e = self.enc.syms[t[1]]
            return self._visible_expr(e, pos, path)
        sym = {"Add": "+", "Sub": "-", "Mul": "*"}[op]
        return BinOp(sym, self.idx(t[1], pos, path), self.idx(t[2], pos, path))

    def _visible_expr(self, e: Expr, pos: int, path: tuple[int, ...]) -> Expr:
        """``e`` with every SSA scalar not visible at the placement point replaced by its
        definition (the e-graph may pick an equal name defined elsewhere)."""
        from ..ir.exprs import substitute

        mapping = {}
        for v in free_vars(e):
            if not self.visible(v, pos, path) and id(v) in self.enc.scalar_defs:
                mapping[id(v)] = self._visible_expr(self.enc.scalar_defs[id(v)], pos, path)
        return substitute(e, mapping) if mapping else e

    def window_parts(self, t: Term, pos: int, path: tuple[int, ...]) -> tuple[Var, Expr, Expr]:
        """Base var and accumulated offsets of a tile term (a peeled window, or a nested one
        when saturation stopped early)."""
        if t[0] == "Leaf":
            return self.enc.leaves[t[1]], Const(0), Const(0)
        if t[0] == "CopyBuf":
            return self.buf_var[int(t[1])], Const(0), Const(0)
        assert t[0] == "Win", t
        base, r0, c0 = self.window_parts(t[1], pos, path)
        r, c = self.idx(t[2], pos, path), self.idx(t[3], pos, path)
        if t[1][0] not in ("Leaf", "CopyBuf"):
            r, c = BinOp("+", r0, r), BinOp("+", c0, c)
        return base, r, c

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
        self.use_of: dict[int, list[tuple[UseSite, Term]]] = {}
        self.ext_of: dict[int, Term] = {}
        self.win_term: dict[int, Term] = {}
        self.def_copies: dict[int, list[tuple[UseSite, Term]]] = {}
        self.copy_var: dict[tuple[int, Term], Var] = {}  # (use key id, term) planned
        #: window key -> the copy it got at its definition (``CopyBuf`` forms read it)
        self.buf_var: dict[int, Var] = {}
        self.bufs_needed: set[int] = set()
        self.views: dict[int, list[tuple[UseSite, Term]]] = {}  # child slice stmt -> views
        self.placed_view: dict[int, Var] = {}  # id(UseSite) -> view of the parent's copy
        self.buf_sites: list[tuple[UseSite, int]] = []  # uses reading a parent's copy
        for (_, site), term in zip(self.enc.roots, self.results):
            if isinstance(site, UseSite):
                self.use_of.setdefault(id(site.stmt), []).append((site, term))
                kp = copy_buf_of(term)
                if kp is not None:
                    self.bufs_needed.add(kp)
                    self.buf_sites.append((site, kp))
                    if term[0] == "Keep":
                        self.views.setdefault(id(site.window.stmt), []).append((site, term))
                if term[0] == "Copy":
                    base = self._root_base(site.window)
                    at_def = term[2] == "Vec" and not self.hazard(site.window, site.stmt, base)
                    if at_def:
                        self.def_copies.setdefault(id(site.window.stmt), []).append((site, term))
            elif isinstance(site, ExtSite):
                self.ext_of[id(site.stmt)] = term
            elif isinstance(site, Window):
                self.win_term[id(site.stmt)] = term
        self.window_by_key = {w.key: w for w in self.enc.windows}
        self.scopes: list[dict[Term, Var]] = [{}]
        self.placed: dict[int, Var] = {}  # id(UseSite) -> copy var
        self.copy_at: dict[int, tuple[int, tuple[int, ...]]] = {}  # id(copy var) -> (pos, loops)
        body = self.block(self.fn.body)
        body = self.drop_dead(body)
        return Decoded(body, self.decisions)

    def _root_base(self, w: Window) -> Var:
        while w.parent is not None:
            w = w.parent
        return w.src

    def lookup_copy(self, term: Term) -> Var | None:
        term = term[:3]  # one copy per (window, memory), whatever the context
        for sc in reversed(self.scopes):
            if term in sc:
                return sc[term]
        return None

    def make_copy(self, site: UseSite, term: Term, anchor: Stmt, placement: str,
                  out: list[Stmt]) -> Var:
        v = self.lookup_copy(term)
        if v is not None and not self._written_since(v, site, anchor, placement):
            self.decisions.append(Decision("copy", site, term, v, "shared"))
            return v
        info = self.pos[id(anchor)]
        pos = info.pos + (1 if placement == "definition" else 0)
        base, r, c = self.window_parts(term[1], pos, info.path)
        mem = MemorySpace(term[2])
        t = base.type
        assert isinstance(t, TileType)
        w = site.window
        shape = ListExpr((Const(w.rows), Const(w.cols)))
        v = Var(self.fresh_name(f"{w.var.name}_{_SUFFIX.get(term[2], term[2].lower())}"),
                TileType(shape.items, t.dtype, mem))
        call = Call("tile.extract", (VarRef(base), r, c),
                    (("shape", shape), ("target_memory", Symbol(("Mem", mem.value), mem))))
        out.append(AssignStmt(v, call, anchor.span))
        self.scopes[-1][term[:3]] = v
        # the copy holds the source as of just after the slice (definition) or just before the
        # consumer, whose own write comes after the read
        self.copy_at[id(v)] = (info.pos if placement == "definition" else info.pos - 1, info.loops)
        kp = copy_buf_of(term)
        self.decisions.append(Decision("copy", site, term, v, placement,
                                       self.buf_var.get(kp) if kp is not None else None))
        if placement == "definition" and anchor is w.stmt:
            self.buf_var.setdefault(w.key, v)
        return v

    def _written_since(self, v: Var, site: UseSite, anchor: Stmt, placement: str) -> bool:
        """Whether the source may be written between the creation of the identical copy ``v`` and
        the point where this use needs the source's value (then ``v`` is stale: make a new one)."""
        c_pos, c_loops = self.copy_at[id(v)]
        q = self.pos[id(anchor)]
        end = q.pos if placement == "definition" else q.pos - 1
        outer = [lp for lp in q.loops if lp not in c_loops]
        if outer:
            end = max(end, self.loop_end[min(outer)])
        g = self._find(id(self._root_base(site.window)))
        return any(c_pos < wp <= end and self._find(id(x)) == g for wp, x in self.writers)

    def make_buf(self, w: Window, out: list[Stmt]) -> None:
        """The copy of window ``w`` at its definition, when a chosen form reads it and no use of
        ``w`` created it."""
        info = self.pos[id(w.stmt)]
        base, r, c = self.window_parts(self.win_term[id(w.stmt)], info.pos + 1, info.path)
        t = base.type
        assert isinstance(t, TileType)
        shape = ListExpr((Const(w.rows), Const(w.cols)))
        v = Var(self.fresh_name(f"{w.var.name}_ext"), TileType(shape.items, t.dtype, MemorySpace.Vec))
        call = Call("tile.extract", (VarRef(base), r, c),
                    (("shape", shape), ("target_memory", Symbol(("Mem", "Vec"), MemorySpace.Vec))))
        out.append(AssignStmt(v, call, w.stmt.span))
        self.buf_var[w.key] = v

    def make_views(self, s: AssignStmt, out: list[Stmt]) -> None:
        """Views of the parent's copy for the uses of the child slice ``s``, right after it."""
        made: dict[Term, Var] = {}
        info = self.pos[id(s)]
        for site, term in self.views[id(s)]:
            v = made.get(term)
            win = term[1]
            kp = int(win[1][1])
            if v is None:
                buf = self.buf_var[kp]
                r, c = self.idx(win[2], info.pos + 1, info.path), self.idx(win[3], info.pos + 1, info.path)
                t = buf.type
                assert isinstance(t, TileType)
                shape = ListExpr((Const(int(win[4])), Const(int(win[5]))))
                v = Var(self.fresh_name(f"{site.window.var.name}_view"),
                        TileType(shape.items, t.dtype, MemorySpace.Vec))
                out.append(AssignStmt(v, Call("tile.slice", (VarRef(buf), shape, ListExpr((r, c)))),
                                      s.span))
                made[term] = v
            self.placed_view[id(site)] = v

    def block(self, body: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in body:
            repl: dict[int, Var] = {}
            for site, term in self.use_of.get(id(s), []):
                if term[0] == "Copy":
                    v = self.placed.get(id(site))
                    if v is None:
                        v = self.make_copy(site, term, s, "consumer", out)
                    repl[id(site)] = v
                elif id(site) in self.placed_view:
                    v = self.placed_view[id(site)]
                    repl[id(site)] = v
                    kp = copy_buf_of(term)
                    self.decisions.append(Decision("view", site, term, v, "definition",
                                                   self.buf_var[kp]))
                else:
                    self.decisions.append(Decision("view", site, term))
            out.append(self.rewrite(s, repl))
            if isinstance(s, AssignStmt) and id(s) in self.def_copies:
                for site, term in self.def_copies[id(s)]:
                    self.placed[id(site)] = self.make_copy(site, term, s, "definition", out)
            if isinstance(s, AssignStmt) and id(s) in self.win_term:
                w = self.enc.window_of.get(id(s.target))
                if w is not None and w.stmt is s and w.key in self.bufs_needed \
                        and w.key not in self.buf_var:
                    self.make_buf(w, out)
            if isinstance(s, AssignStmt) and id(s) in self.views:
                self.make_views(s, out)
        return out

    def sub_block(self, body: list[Stmt]) -> list[Stmt]:
        self.scopes.append({})
        try:
            return self.block(body)
        finally:
            self.scopes.pop()

    def rewrite(self, s: Stmt, repl: dict[int, Var]) -> Stmt:
        sites = [site for site, _ in self.use_of.get(id(s), []) if id(site) in repl]

        def new(slot: tuple, e: Expr) -> Expr:
            for site in sites:
                if site.slot == slot:
                    return VarRef(repl[id(site)])
            return e

        if isinstance(s, AssignStmt):
            if id(s) in self.ext_of:
                return self._fold_extract(s)
            if id(s) in self.win_term:
                return self._peel(s)
            v = s.value
            if isinstance(v, Call):
                v = self._call(v, new)
            elif isinstance(v, VarRef):
                v = new(("alias",), v)
            if v is s.value:
                return s
            return AssignStmt(s.target, v, s.span)
        if isinstance(s, EvalStmt):
            c = self._call(s.call, new)
            return s if c is s.call else EvalStmt(c, s.span)
        if isinstance(s, YieldStmt):
            return YieldStmt([new(("yield", i), e) for i, e in enumerate(s.values)], s.span)
        if isinstance(s, (ForStmt, WhileStmt)):
            s2 = _copy.copy(s)
            s2.init_values = [new(("init", i), e) for i, e in enumerate(s.init_values)]
            s2.body = self.sub_block(s.body)
            return s2
        if isinstance(s, IfStmt):
            s2 = _copy.copy(s)
            s2.then_body = self.sub_block(s.then_body)
            s2.else_body = self.sub_block(s.else_body)
            return s2
        if isinstance(s, ScopeStmt):
            s2 = _copy.copy(s)
            s2.body = self.sub_block(s.body)
            return s2
        return s

    @staticmethod
    def _call(c: Call, new) -> Call:
        args = tuple(new(("arg", i), a) for i, a in enumerate(c.args))
        kwargs = tuple((k, new(("kwarg", k), v)) for k, v in c.kwargs)
        if all(x is y for x, y in zip(args, c.args)) and \
                all(x[1] is y[1] for x, y in zip(kwargs, c.kwargs)):
            return c
        return Call(c.op, args, kwargs)

    def _fold_extract(self, s: AssignStmt) -> Stmt:
        term = self.ext_of[id(s)]
        site = next(x for x in self.enc.exts if x.stmt is s)
        info = self.pos[id(s)]
        if term[1][0] != "Leaf":  # not folded (saturation stopped early): keep it
            self.decisions.append(Decision("kept", site, term))
            return s
        base = self.enc.leaves[term[1][1]]
        r, c = self.idx(term[2], info.pos, info.path), self.idx(term[3], info.pos, info.path)
        v = s.value
        assert isinstance(v, Call)
        self.decisions.append(Decision("fold", site, term))
        return AssignStmt(s.target, Call(v.op, (VarRef(base), r, c, *v.args[3:]), v.kwargs), s.span)

    def _peel(self, s: AssignStmt) -> Stmt:
        """A kept slice of a slice is re-emitted on its non-slice base (offsets accumulated)."""
        term = self.win_term[id(s)]
        v = s.value
        assert isinstance(v, Call) and isinstance(v.args[0], VarRef)
        if term[1][0] != "Leaf" or self.enc.leaves[term[1][1]] is v.args[0].var:
            return s
        info = self.pos[id(s)]
        base, r, c = self.window_parts(term, info.pos, info.path)
        return AssignStmt(s.target, Call(v.op, (VarRef(base), v.args[1], ListExpr((r, c))),
                                         v.kwargs), s.span)

    # ------------------------------------------------------------------ dead slices
    def drop_dead(self, body: list[Stmt]) -> list[Stmt]:
        candidates = {id(w.var) for w in self.enc.windows}
        while True:
            used: set[int] = set()
            _uses(body, used)
            dead = [c for c in candidates if c not in used]
            if not dead:
                return body
            dead_set = set(dead)
            candidates -= dead_set
            for w in self.enc.windows:
                if id(w.var) in dead_set:
                    self.decisions.append(Decision("dropped", w))
            body = _remove(body, dead_set)


def copy_buf_of(term: Term) -> int | None:
    """The window key ``k`` of the ``(CopyBuf k)`` a chosen use term reads, if any."""
    if term[0] not in ("Keep", "Copy"):
        return None
    t = term[1]
    while t[0] == "Win":
        t = t[1]
    return int(t[1]) if t[0] == "CopyBuf" else None


def _uses(body: list[Stmt], used: set[int]) -> None:
    for s in body:
        for e in stmt_exprs(s):
            used.update(id(v) for v in free_vars(e))
        for b in ([s.then_body, s.else_body] if isinstance(s, IfStmt) else
                  [s.body] if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)) else []):
            _uses(b, used)


def _remove(body: list[Stmt], dead: set[int]) -> list[Stmt]:
    out = []
    for s in body:
        if isinstance(s, AssignStmt) and id(s.target) in dead:
            continue
        if isinstance(s, IfStmt):
            s.then_body = _remove(s.then_body, dead)
            s.else_body = _remove(s.else_body, dead)
        elif isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            s.body = _remove(s.body, dead)
        out.append(s)
    return out
