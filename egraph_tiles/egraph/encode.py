"""Encode one function into egglog commands: tile values, index expressions, use sites, roots.

The encoder only *states* the program: terms, unions of scalar SSA definitions and aliases, and
leaf facts read from the types (memory, storage bits, pitch, memref).  Every decision is made by
the rules in ``egraph_tiles.rules`` and the extractor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import ops
from ..ir.exprs import BinOp, Call, Const, Expr, ListExpr, Var, VarRef, const_int
from ..ir.stmts import (AssignStmt, EvalStmt, ForStmt, Function, IfStmt, ScopeStmt, Stmt,
                        WhileStmt, YieldStmt)
from ..ir.types import MemRef, ScalarType, TileType

_IDX_OPS = {"+": "Add", "-": "Sub", "*": "Mul"}


@dataclass(eq=False)
class Window:
    """A canonical 3-argument ``tile.slice`` statement and its ``Win`` term."""

    key: str
    var: Var
    stmt: AssignStmt
    src: Var
    rows: int
    cols: int
    parent: "Window | None"


@dataclass(eq=False)
class UseSite:
    """One operand of one statement that resolves to a window, in a registry context."""

    key: str
    stmt: Stmt
    slot: tuple  # ("arg", i) | ("kwarg", name) | ("alias",) | ("init", i) | ("yield", i)
    var: Var
    window: Window
    ctx: str


@dataclass(eq=False)
class ExtSite:
    """A ``tile.extract`` statement whose source resolves to a window."""

    key: str
    stmt: AssignStmt
    window: Window


@dataclass
class Encoding:
    commands: list[str] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    uses: list[UseSite] = field(default_factory=list)
    exts: list[ExtSite] = field(default_factory=list)
    #: Sym / Leaf key -> what it names (a Var, or an opaque scalar expression)
    syms: dict[str, Expr] = field(default_factory=dict)
    leaves: dict[str, Var] = field(default_factory=dict)
    #: let name of the tile term of each tile var (by id)
    tile_of: dict[int, str] = field(default_factory=dict)
    window_of: dict[int, Window] = field(default_factory=dict)
    #: scalar var (by id) -> its SSA definition expression
    scalar_defs: dict[int, Expr] = field(default_factory=dict)
    #: (root term text, the Window / UseSite / ExtSite it belongs to), in program order
    roots: list[tuple[str, object]] = field(default_factory=list)


def is_canonical_slice(call: Call) -> bool:
    """A plain 3-argument ``tile.slice(src, shape, offset)`` (no valid_shape / drop_dims)."""
    if call.op != "tile.slice" or len(call.args) != 3 or call.kwargs:
        return False
    src, shape, off = call.args
    if not (isinstance(src, VarRef) and isinstance(src.var.type, TileType)):
        return False
    if not (isinstance(shape, ListExpr) and isinstance(off, ListExpr)):
        return False
    if len(shape.items) != 2 or len(off.items) != 2:
        return False
    return all(const_int(d) is not None for d in shape.items)


def has_canonical_slice(fn: Function) -> bool:
    from ..ir.stmts import walk

    return any(isinstance(s, AssignStmt) and isinstance(s.value, Call)
               and is_canonical_slice(s.value) for s in walk(fn.body))


def operand_context(op_name: str, index: int | None) -> str | None:
    """The use context of argument ``index`` of a call, read from the registry."""
    op = ops.lookup(op_name)
    if op is None:
        return "ord"  # opaque: may read and write every argument
    if op.family is ops.Family.MATMUL:
        if index is not None and index == op.left_arg:
            return "left"
        if index is not None and index == op.right_arg:
            return "right"
        return None  # accumulator, bias, scales: never rewritten
    if op.family is ops.Family.COL_EXPAND:
        return "colx"
    return "ord"


def _q(s: str) -> str:
    return '"' + s + '"'


class Encoder:
    def __init__(self) -> None:
        self.enc = Encoding()
        self._n = 0
        self._sym_of: dict[int, str] = {}

    def fresh(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def emit(self, cmd: str) -> None:
        self.enc.commands.append(cmd)

    # ------------------------------------------------------------------ scalars
    def scalar_sym(self, var: Var) -> str:
        name = self._sym_of.get(id(var))
        if name is None:
            key = "s" + self.fresh("")
            name = f"(Sym {_q(key)})"
            self._sym_of[id(var)] = name
            self.enc.syms[key] = VarRef(var)
        return name

    def idx(self, e: Expr) -> str:
        c = const_int(e) if not isinstance(e, BinOp) else None
        if isinstance(e, Const) and c is not None:
            return f"(Lit {c})"
        if isinstance(e, VarRef):
            return self.scalar_sym(e.var)
        if isinstance(e, BinOp) and e.op in _IDX_OPS:
            return f"({_IDX_OPS[e.op]} {self.idx(e.lhs)} {self.idx(e.rhs)})"
        # anything else (floor division, modulo, negation, calls) is an opaque symbol
        name = self.fresh("o")
        self.enc.syms[name] = e
        return f"(Sym {_q(name)})"

    # ------------------------------------------------------------------ tiles
    def tile(self, var: Var) -> str:
        name = self.enc.tile_of.get(id(var))
        if name is None:
            name = self.leaf(var)
        return name

    def leaf(self, var: Var) -> str:
        key = self.fresh("t")
        name = f"(NT {self._n})"
        self.enc.tile_of[id(var)] = name
        self.enc.leaves[key] = var
        self.emit(f"(union {name} (Leaf {_q(key)}))")
        t = var.type
        if isinstance(t, TileType):
            mem = t.memory.value if t.memory is not None else "?"
            self.emit(f"(MemOf {name} {_q(mem)})")
            self.emit(f"(set (Bits {name}) {t.dtype.storage_bits})")
            if t.rank == 2:
                cols = const_int(t.shape[1])
                if cols is not None:
                    self.emit(f"(set (Pitch {name}) {cols})")
                    self.emit(f"(PitchIdx {name} (Lit {cols}))")
                else:
                    self.emit(f"(PitchIdx {name} {self.idx(t.shape[1])})")
            self._memref_fact(name, t.memref)
        return name

    def _memref_fact(self, name: str, m: MemRef | None) -> None:
        if m is None or m.is_sentinel:
            self.emit(f"(FreshAlloc {name})")
        elif isinstance(m.byte_offset, int):
            if m.byte_offset >= 0:
                self.emit(f"(MemrefBytes {name} (Lit {m.byte_offset}))")
        else:
            self.emit(f"(MemrefBytes {name} {self.idx(m.byte_offset)})")

    def window(self, stmt: AssignStmt, call: Call) -> None:
        src_ref, shape, off = call.args
        assert isinstance(src_ref, VarRef) and isinstance(shape, ListExpr) and isinstance(off, ListExpr)
        rows, cols = (const_int(d) for d in shape.items)
        assert rows is not None and cols is not None
        base = self.tile(src_ref.var)
        self.fresh("w")
        name = f"(NT {self._n})"
        self.emit(f"(union {name} (Win {base} {self.idx(off.items[0])} {self.idx(off.items[1])} "
                  f"{rows} {cols}))")
        w = Window(name, stmt.target, stmt, src_ref.var, rows, cols,
                   self.enc.window_of.get(id(src_ref.var)))
        self.enc.windows.append(w)
        self.enc.tile_of[id(stmt.target)] = name
        self.enc.window_of[id(stmt.target)] = w
        self.enc.roots.append((f"(RT {name})", w))

    # ------------------------------------------------------------------ uses
    def use(self, stmt: Stmt, slot: tuple, e: Expr, ctx: str | None) -> None:
        if ctx is None or not isinstance(e, VarRef):
            return
        w = self.enc.window_of.get(id(e.var))
        if w is None:
            return
        self.fresh("u")
        name = f"(NR {self._n})"
        self.emit(f"(union {name} (Use {self.enc.tile_of[id(e.var)]} {_q(ctx)}))")
        site = UseSite(name, stmt, slot, e.var, w, ctx)
        self.enc.uses.append(site)
        self.enc.roots.append((f"(R {name})", site))

    def call_uses(self, stmt: Stmt, call: Call) -> None:
        op = ops.lookup(call.op)
        for i, a in enumerate(call.args):
            self.use(stmt, ("arg", i), a, operand_context(call.op, i))
        for k, v in call.kwargs:
            idx = op.params.index(k) if op is not None and k in op.params else None
            self.use(stmt, ("kwarg", k), v, operand_context(call.op, idx))

    # ------------------------------------------------------------------ statements
    def body(self, stmts: list[Stmt]) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, AssignStmt):
            self.assign(s)
        elif isinstance(s, EvalStmt):
            self.call_uses(s, s.call)
        elif isinstance(s, ForStmt):
            for i, v in enumerate(s.init_values):
                self.use(s, ("init", i), v, "ord")
            sym = self.scalar_sym(s.loop_var)
            self.emit(f"(LoopVar {sym} {self.idx(s.start)} {self.idx(s.step)})")
            self.body(s.body)
        elif isinstance(s, WhileStmt):
            for i, v in enumerate(s.init_values):
                self.use(s, ("init", i), v, "ord")
            self.body(s.body)
        elif isinstance(s, IfStmt):
            self.body(s.then_body)
            self.body(s.else_body)
        elif isinstance(s, ScopeStmt):
            self.body(s.body)
        elif isinstance(s, YieldStmt):
            for i, v in enumerate(s.values):
                self.use(s, ("yield", i), v, "ord")

    def assign(self, s: AssignStmt) -> None:
        v = s.value
        t = s.target.type
        if isinstance(v, Call):
            if is_canonical_slice(v):
                self.window(s, v)
                return
            if v.op == "tile.extract" and v.args and isinstance(v.args[0], VarRef):
                w = self.enc.window_of.get(id(v.args[0].var))
                if w is not None and len(v.args) >= 3:
                    self.fresh("e")
                    name = f"(NR {self._n})"
                    self.emit(f"(union {name} (Ext {self.enc.tile_of[id(v.args[0].var)]} "
                              f"{self.idx(v.args[1])} {self.idx(v.args[2])}))")
                    site = ExtSite(name, s, w)
                    self.enc.exts.append(site)
                    self.enc.roots.append((f"(R {name})", site))
                return
            if v.op != "tile.slice":
                self.call_uses(s, v)
            return
        if isinstance(v, VarRef) and isinstance(v.var.type, TileType):
            # a plain alias names the same tile; it is also an escape of a window
            self.use(s, ("alias",), v, "ord")
            self.enc.tile_of[id(s.target)] = self.tile(v.var)
            w = self.enc.window_of.get(id(v.var))
            if w is not None:
                self.enc.window_of[id(s.target)] = w
            return
        if isinstance(t, ScalarType) or isinstance(v, (Const, BinOp, VarRef)):
            # a scalar SSA definition or alias: unioned with what it names
            self.enc.scalar_defs[id(s.target)] = v
            sym = self.scalar_sym(s.target)
            self.emit(f"(union {sym} {self.idx(v)})")


def encode_function(fn: Function) -> Encoding:
    enc = Encoder()
    enc.body(fn.body)
    return enc.enc
