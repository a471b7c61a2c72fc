"""Baseline strategies for slice canonicalization, written plainly — outside the e-graph.

* :func:`view_everything` — the program as written: every slice stays a zero-copy view.
* :func:`copy_everything` — every slice use that can be copied becomes a ``tile.extract``
  placed right before its consumer (maximal bytes, always safe).
* :func:`seed_policy` — a direct, single-pass transcription of the seed's decision
  procedure (``shared/seeds/canonicalize_tile_slice.txt``): collect and peel canonical
  3-argument slices, resolving ConstInt SSA definitions and plain aliases; prove
  alignment with the seed's modular arithmetic over scalar SSA multiples (aliases,
  ``+``, ``-``, ``*`` — nothing about loop variables, no affine normalisation); rewrite
  extract / matmul / col_expand / ordinary operands; materialise SSA escapes (aliases,
  loop initialisers, yields); drop dead slices. It is the speed baseline and an
  independent second opinion for the e-graph optimizer.

Conventions shared by the rewriting strategies: a fresh extract is inserted
immediately before the statement that consumes the slice (so it reads the source at
use time, exactly what the view would have read); one consumer statement that uses
the same window twice gets one extract. Only InCore functions are rewritten. The seed's
Acc-window rejection is not part of this baseline (see ``egraph_tiles.passes``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import Enum
from typing import Callable

from ..ir import (AssignStmt, BinOp, Call, Const, EvalStmt, Expr, Family, ForStmt, Function,
                 ListExpr, MemorySpace, Neg, Program, Stmt, Symbol, TileType,
                 Var, VarRef, WhileStmt, YieldStmt, const_int, defined_vars, lookup,
                 walk)
from ..ir.mutator import StmtMutator, drop_unused
from ..ir.ops import TRANSFERS
from ..ir.target import ALIGN_BITS



@dataclass(frozen=True)
class PeeledSlice:
    """A canonical slice peeled to a non-slice base: ``base[row:row+rows, col:col+cols]``."""

    var: Var
    base: Var
    row: Expr
    col: Expr
    shape: tuple[Expr, ...]
    type: TileType

    @property
    def memory(self) -> MemorySpace | None:
        return self.type.memory

    @property
    def is_dynamic(self) -> bool:
        return const_int(self.row) is None or const_int(self.col) is None


class Use(Enum):
    """The context a slice is used in — what the policies decide on."""

    EXTRACT_SRC = "extract source"
    SLICE_SRC = "slice source"
    MATMUL_LEFT = "matmul lhs"
    MATMUL_RIGHT = "matmul rhs"
    WRITEBACK = "written-back operand"
    COL_EXPAND = "col_expand operand"
    ORDINARY = "ordinary operand"
    ESCAPE = "SSA escape (alias, loop init, yield)"


#: a decision: "view" (keep), "fold" (into the consumer extract) or a memory to copy into
Decision = str | MemorySpace
Policy = Callable[["Analysis", PeeledSlice, Use], Decision]


# ------------------------------------------------------------------ analysis


def _add(a: Expr, b: Expr) -> Expr:
    ca, cb = const_int(a), const_int(b)
    if ca is not None and cb is not None:
        return Const(ca + cb)
    if ca == 0:
        return b
    if cb == 0:
        return a
    return BinOp("+", a, b)


class Analysis:
    """Phase 1 of the seed: ConstInt SSA resolution, scalar SSA definitions and the
    canonical slices of one function, peeled to their bases."""

    def __init__(self, fn: Function):
        self.consts: dict[int, int] = {}
        self.scalars: dict[int, Expr] = {}
        self.windows: dict[int, PeeledSlice] = {}
        for s in walk(fn.body):
            if isinstance(s, AssignStmt):
                self._record(s)

    def _record(self, s: AssignStmt) -> None:
        v = s.value
        if isinstance(v, Call):
            if v.op == "tile.slice" and len(v.args) == 3 and not v.kwargs:
                self._record_slice(s.target, v)
            return
        c = const_int(self.resolve(v))
        if c is not None:
            self.consts[id(s.target)] = c
        else:
            self.scalars[id(s.target)] = v

    def _record_slice(self, target: Var, call: Call) -> None:
        src, shape, off = call.args
        if not (isinstance(src, VarRef) and isinstance(shape, ListExpr)
                and isinstance(off, ListExpr) and len(off.items) == 2 and len(shape.items) == 2):
            return
        ty = target.type if isinstance(target.type, TileType) else None
        src_ty = src.var.type if isinstance(src.var.type, TileType) else None
        if ty is None:
            if src_ty is None:
                return
            ty = TileType(shape.items, src_ty.dtype, src_ty.memory)
        row, col = (self.resolve(x) for x in off.items)
        inner = self.windows.get(id(src.var))
        if inner is not None:
            w = PeeledSlice(target, inner.base, _add(inner.row, row), _add(inner.col, col),
                       shape.items, ty)
        else:
            w = PeeledSlice(target, src.var, row, col, shape.items, ty)
        self.windows[id(target)] = w

    def resolve(self, e: Expr) -> Expr:
        """Substitute ConstInt SSA values (through plain aliases) and fold constants."""
        if isinstance(e, VarRef):
            c = self.consts.get(id(e.var))
            return Const(c) if c is not None else e
        if isinstance(e, BinOp):
            a, b = self.resolve(e.lhs), self.resolve(e.rhs)
            folded = const_int(BinOp(e.op, a, b))
            return Const(folded) if folded is not None else BinOp(e.op, a, b)
        if isinstance(e, Neg):
            a = self.resolve(e.operand)
            c = const_int(a)
            return Const(-c) if c is not None else Neg(a)
        return e

    def multiple(self, e: Expr, depth: int = 0) -> int:
        """The seed's known multiple of a scalar: 0 for the value 0 (divisible by
        anything), ``|c|`` for a constant, followed through scalar SSA aliases,
        ``+``/``-`` (gcd) and ``*`` (product); 1 when nothing is known."""
        if depth > 64:
            return 1
        c = const_int(e)
        if c is not None:
            return abs(c)
        if isinstance(e, VarRef):
            k = self.consts.get(id(e.var))
            if k is not None:
                return abs(k)
            d = self.scalars.get(id(e.var))
            return 1 if d is None else self.multiple(d, depth + 1)
        if isinstance(e, Neg):
            return self.multiple(e.operand, depth + 1)
        if isinstance(e, BinOp):
            if e.op in ("+", "-"):
                return math.gcd(self.multiple(e.lhs, depth + 1), self.multiple(e.rhs, depth + 1))
            if e.op == "*":
                return self.multiple(e.lhs, depth + 1) * self.multiple(e.rhs, depth + 1)
        return 1

    def aligned(self, w: PeeledSlice) -> bool:
        """(base_bits + (row * base_cols + col) * storage_bits) ≡ 0 mod 256, proven."""
        base_ty = w.base.type
        if not isinstance(base_ty, TileType) or base_ty.rank != 2:
            return False
        bits = w.type.dtype.storage_bits
        base_bits = 0
        if base_ty.memref is not None and not base_ty.memref.is_sentinel:
            if not base_ty.memref.is_known:
                return False
            base_bits = int(base_ty.memref.byte_offset) * 8  # type: ignore[arg-type]
        m_row = self.multiple(w.row)
        if m_row != 0:
            cols = const_int(base_ty.shape[1])
            if cols is None:
                return False
            m_row *= cols * bits
        m = math.gcd(base_bits, m_row, self.multiple(w.col) * bits)
        return m % ALIGN_BITS == 0

    def contiguous(self, w: PeeledSlice) -> bool:
        """A single row, or a window spanning every column of its base."""
        rows = const_int(w.shape[0])
        cols = const_int(w.shape[1])
        base_ty = w.base.type
        base_cols = const_int(base_ty.shape[1]) if isinstance(base_ty, TileType) else None
        return rows == 1 or (cols is not None and cols == base_cols)


# ------------------------------------------------------------------ policies


def seed_decision(a: Analysis, w: PeeledSlice, use: Use) -> Decision:
    """The seed's decision for one use of a window."""
    if use is Use.EXTRACT_SRC:
        return "fold"
    if use in (Use.MATMUL_LEFT, Use.MATMUL_RIGHT):
        if w.memory is MemorySpace.Mat:
            return MemorySpace.Left if use is Use.MATMUL_LEFT else MemorySpace.Right
        return "view"
    if w.memory is not MemorySpace.Vec or use is Use.SLICE_SRC:
        return "view"
    if use is Use.COL_EXPAND:
        return MemorySpace.Vec if (w.is_dynamic or not a.contiguous(w)) else "view"
    if use is Use.WRITEBACK:  # an in-place op is an ordinary call to the seed
        use = Use.ORDINARY
    return "view" if a.aligned(w) else MemorySpace.Vec


def copy_decision(a: Analysis, w: PeeledSlice, use: Use) -> Decision:
    """Copy every use that has a legal copy path; fold into consumer extracts (the
    only copy a Mat window has into another Mat-sourced extract)."""
    if use is Use.EXTRACT_SRC:
        return "fold"
    if use in (Use.SLICE_SRC, Use.WRITEBACK):
        return "view"  # peeled / a write-back destination must stay the real storage
    if w.memory is None:
        return "view"
    if use in (Use.MATMUL_LEFT, Use.MATMUL_RIGHT):
        dst = MemorySpace.Left if use is Use.MATMUL_LEFT else MemorySpace.Right
        return dst if dst in TRANSFERS.get(w.memory, frozenset()) else "view"
    if w.memory is MemorySpace.Vec:
        return MemorySpace.Vec
    return "view"


# ------------------------------------------------------------------ rewriting


class _Rewriter(StmtMutator):
    def __init__(self, fn: Function, policy: Policy):
        self.fn = fn
        self.pre: list[Stmt] = []
        self.a = Analysis(fn)
        self.policy = policy
        self.names = {v.name for s in walk(fn.body) for v in defined_vars(s)} | {p.var.name for p in fn.params}

    def fresh(self, hint: str, ty: TileType) -> Var:
        name, i = hint, 1
        while name in self.names:
            i += 1
            name = f"{hint}{i}"
        self.names.add(name)
        return Var(name, ty)

    def extract_stmt(self, w: PeeledSlice, mem: MemorySpace) -> AssignStmt:
        suffix = {MemorySpace.Left: "left", MemorySpace.Right: "right"}.get(mem, "ext")
        stem = w.var.name.removesuffix("_slice") or w.var.name
        v = self.fresh(f"{stem}_{suffix}", TileType(w.shape, w.type.dtype, mem))
        call = Call("tile.extract", (VarRef(w.base), w.row, w.col),
                    (("shape", ListExpr(w.shape)),
                     ("target_memory", Symbol(("Mem", mem.value), mem))))
        return AssignStmt(v, call)

    def window(self, e: Expr) -> PeeledSlice | None:
        return self.a.windows.get(id(e.var)) if isinstance(e, VarRef) else None

    # -- calls
    def call(self, call: Call, pre: list[Stmt]) -> Call:
        if call.op == "tile.slice":
            return call
        if call.op == "tile.extract" and call.args:
            w = self.window(call.args[0])
            if w is not None and self.policy(self.a, w, Use.EXTRACT_SRC) == "fold" \
                    and len(call.args) >= 3:
                args = (VarRef(w.base), _add(call.args[1], w.row), _add(call.args[2], w.col),
                        *call.args[3:])
                return call.with_args(args)
            return call
        op = lookup(call.op)
        made: dict[tuple[int, MemorySpace], Var] = {}

        def operand(e: Expr, use: Use) -> Expr:
            w = self.window(e)
            if w is None:
                return e
            d = self.policy(self.a, w, use)
            if not isinstance(d, MemorySpace):
                return e
            key = (id(w.var), d)
            if key not in made:
                st = self.extract_stmt(w, d)
                pre.append(st)
                made[key] = st.target
            return VarRef(made[key])

        args = list(call.args)
        for i, e in enumerate(args):
            args[i] = operand(e, self.use_of(op, i))
        kwargs = tuple((k, operand(v, self.use_of_kw(op, k))) for k, v in call.kwargs)
        return call.with_args(tuple(args), kwargs)

    @staticmethod
    def use_of(op, i: int) -> Use:
        if op is None:
            return Use.ORDINARY
        if op.family is Family.MATMUL:
            if i == op.left_arg:
                return Use.MATMUL_LEFT
            if i == op.right_arg:
                return Use.MATMUL_RIGHT
            return Use.WRITEBACK if i == op.reuses_arg else Use.ORDINARY
        if i == op.reuses_arg:
            return Use.WRITEBACK
        if op.family is Family.COL_EXPAND:
            return Use.COL_EXPAND
        return Use.ORDINARY

    def use_of_kw(self, op, name: str) -> Use:
        if op is not None and name in op.params:
            return self.use_of(op, op.params.index(name))
        return Use.ORDINARY

    def escape(self, e: Expr, pre: list[Stmt]) -> Expr:
        w = self.window(e)
        if w is None:
            return e
        d = self.policy(self.a, w, Use.ESCAPE)
        if not isinstance(d, MemorySpace):
            return e
        st = self.extract_stmt(w, d)
        pre.append(st)
        return VarRef(st.target)

    # -- statements (default recursion: ir.mutator)
    def mutate(self, s: Stmt) -> list[Stmt]:
        """``s`` rewritten, preceded by the extracts its operands need."""
        outer, self.pre = self.pre, []
        try:
            new = super().mutate(s)
            return [*self.pre, *(new if isinstance(new, list) else [new])]
        finally:
            self.pre = outer

    def visit_AssignStmt(self, s: AssignStmt) -> Stmt:
        if isinstance(s.value, Call):
            return replace(s, value=self.call(s.value, self.pre))
        w = self.window(s.value)
        if w is not None:
            d = self.policy(self.a, w, Use.ESCAPE)
            if isinstance(d, MemorySpace):
                ext = self.extract_stmt(w, d)
                return replace(s, value=ext.value)
        return s

    def visit_EvalStmt(self, s: EvalStmt) -> Stmt:
        return replace(s, call=self.call(s.call, self.pre))

    def visit_YieldStmt(self, s: YieldStmt) -> Stmt:
        return replace(s, values=[self.escape(v, self.pre) for v in s.values])

    def visit_ForStmt(self, s: ForStmt | WhileStmt) -> Stmt:
        return self.recurse(s, init_values=[self.escape(v, self.pre) for v in s.init_values])

    visit_WhileStmt = visit_ForStmt

    def run(self) -> Function:
        if not self.a.windows:
            return self.fn
        body, _ = drop_unused(self.mutate_body(self.fn.body),
                              {w.var for w in self.a.windows.values()})
        return replace(self.fn, body=body)


def apply_policy(prog: Program, policy: Policy) -> Program:
    """Rewrite every InCore function's canonical slices by ``policy`` (one decision per
    use); dead slices are dropped. The three strategies below are policies."""
    fns = [_Rewriter(f, policy).run() if f.func_type.is_incore else f for f in prog.functions]
    return replace(prog, functions=fns)


def windows_of(prog: Program) -> list[PeeledSlice]:
    """The canonical slices left in the InCore functions of ``prog``, peeled."""
    return [w for f in prog.functions if f.func_type.is_incore
            for w in Analysis(f).windows.values()]


def seed_policy(prog: Program) -> Program:
    """The seed's CanonicalizeTileSlice, as a plain single pass (see module docstring)."""
    return apply_policy(prog, seed_decision)


def copy_everything(prog: Program) -> Program:
    """Every slice use with a legal copy path becomes an extract before its consumer;
    extract consumers fold the window (the safe, maximal-bytes strategy)."""
    return apply_policy(prog, copy_decision)


def view_everything(prog: Program) -> Program:
    """The input as written: every slice stays a zero-copy view."""
    return prog


STRATEGIES: dict[str, Callable[[Program], Program]] = {
    "copy-everything": copy_everything,
    "view-everything": view_everything,
    "seed-policy": seed_policy,
}
