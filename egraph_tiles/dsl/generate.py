"""A generator of random, well-formed DSL programs (text).

Used by the hypothesis strategy in ``tests/strategies.py`` and by
``benchmarks/bench_parse.py``. It is driven by any *chooser* with ``randint(lo, hi)``
and ``choice(seq)`` (``random.Random`` works; the strategy passes a hypothesis-backed
one so examples shrink).

Every generated program has one InCore function ``kernel`` with parameters::

    x: pl.Tensor[[R, C], pl.FP32]       g: pl.Tensor[[1, C], pl.FP32]
    a_t: pl.Tensor[[M, K], pl.BF16]     b_t: pl.Tensor[[K, N], pl.BF16]
    row_off: pl.Scalar[pl.INDEX]        flag: pl.Scalar[pl.INDEX]
    out: pl.Out[pl.Tensor[[R, C], pl.FP32]]

``row_off`` must be given a value in ``[0, ROW_OFF_MAX]`` (it only offsets 1-row
slices of tiles with at least ``ROW_OFF_MAX + 1`` rows); ``flag`` may be any integer.
Every other offset is a constant, a scalar SSA definition of known value, or an
affine function of a loop variable whose whole range keeps the window in bounds, so
every slice, extract and store is in bounds for every trip.

At top level it also emits the shapes ``rules/checks.py`` judges (valid_shape slices feeding
col_expand, windows written by ``fillpad_inplace``), each followed by a store of ``x_vec``;
``ProgramGenerator.shapes`` records which were emitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence, TypeVar

T = TypeVar("T")

ROW_OFF_MAX = 15
R = 16  # rows of x / out
M = 16  # rows of the matmul lhs


class Chooser(Protocol):
    def randint(self, lo: int, hi: int) -> int: ...

    def choice(self, seq: Sequence[T]) -> T: ...


@dataclass
class _Tile:
    name: str
    rows: int
    cols: int


@dataclass
class _Off:
    """A scalar offset expression with the range of values it takes."""

    text: str
    lo: int
    hi: int
    mult: int = 1  # a known divisor of every value


@dataclass
class _Env:
    vec: list[_Tile] = field(default_factory=list)
    row1: list[_Tile] = field(default_factory=list)  # 1-row Vec tiles (col_expand operands)
    scalars: list[_Off] = field(default_factory=list)

    def copy(self) -> "_Env":
        return _Env(list(self.vec), list(self.row1), list(self.scalars))


class ProgramGenerator:
    """``ProgramGenerator(rng, max_stmts, max_depth).generate()`` → DSL text."""

    def __init__(self, rng: Chooser, max_stmts: int = 12, max_depth: int = 2):
        self.rng = rng
        self.max_stmts = max_stmts
        self.max_depth = max_depth
        self.count = 0
        self.uid = 0
        self.C = rng.choice([32, 64])
        self.K = rng.choice([64, 128])
        self.N = rng.choice([16, 32])
        self.out = "out"
        self.shapes: set[str] = set()  # tags of the rejection-check shapes generated (tests)

    # -- helpers

    def fresh(self, base: str) -> str:
        self.uid += 1
        return f"{base}{self.uid}"

    def pick(self, xs: Sequence[T]) -> T:
        return self.rng.choice(list(xs[-6:]))

    def emit(self, lines: list[str], ind: int, text: str) -> None:
        lines.append("    " * ind + text)
        self.count += 1

    # -- the program

    def generate(self) -> str:
        C, K, N = self.C, self.K, self.N
        lines: list[str] = []
        env = _Env()
        self.emit(lines, 2, f"x_vec: pl.Tile[[{R}, {C}], pl.FP32, pl.Mem.Vec] = pl.tile.load("
                  f"x, [0, 0], [{R}, {C}], target_memory=pl.Mem.Vec)")
        self.emit(lines, 2, f"g_vec = pl.tile.load(g, [0, 0], [1, {C}], target_memory=pl.Mem.Vec)")
        self.emit(lines, 2, f"a_mat = pl.tile.load(a_t, [0, 0], [{M}, {K}], target_memory=pl.Mem.Mat)")
        self.emit(lines, 2, f"b_mat = pl.tile.load(b_t, [0, 0], [{K}, {N}], target_memory=pl.Mem.Mat)")
        env.vec.append(_Tile("x_vec", R, C))
        env.row1.append(_Tile("g_vec", 1, C))
        self.block(lines, 2, env, 0, top=True)
        self.emit(lines, 2, f"return {self.out}")
        head = (
            "import pypto.language as pl\n\n\n@pl.program\nclass Generated:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            f"    def kernel(self, x: pl.Tensor[[{R}, {C}], pl.FP32], g: pl.Tensor[[1, {C}], pl.FP32],\n"
            f"               a_t: pl.Tensor[[{M}, {K}], pl.BF16], b_t: pl.Tensor[[{K}, {N}], pl.BF16],\n"
            "               row_off: pl.Scalar[pl.INDEX], flag: pl.Scalar[pl.INDEX],\n"
            f"               out: pl.Out[pl.Tensor[[{R}, {C}], pl.FP32]]) -> pl.Tensor[[{R}, {C}], pl.FP32]:\n"
        )
        return head + "\n".join(lines) + "\n"

    def block(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool = False,
              budget: int | None = None) -> None:
        actions = [self.vec_slice, self.vec_slice, self.vec_op, self.col_expand, self.store,
                   self.scalar_def, self.mat_extract, self.matmul, self.acc_loop]
        if depth < self.max_depth:
            actions += [self.if_, self.carry_loop, self.plain_loop, self.while_, self.split]
        if top:  # always executed, and x_vec is stored right after: a corruption is observable
            actions += [self.raw_col_expand, self.written_window]
        limit = self.max_stmts if budget is None else min(self.max_stmts, self.count + budget)
        n = 0
        while self.count < limit:
            action = self.rng.choice(actions)
            action(lines, ind, env, depth, top)
            n += 1
            if not top and n >= 3:
                break

    # -- straight-line statements

    def _offset(self, env: _Env, extent: int, full: int, align: int | None) -> _Off:
        """An offset expression keeping [off, off + extent) inside [0, full)."""
        room = full - extent
        opts = [s for s in env.scalars if s.lo >= 0 and s.hi <= room
                and (align is None or s.mult % align == 0)]
        if opts and self.rng.randint(0, 2) == 0:
            return self.pick(opts)
        if align:
            v = self.rng.randint(0, room // align) * align
        else:
            v = self.rng.randint(0, room)
        return _Off(str(v), v, v)

    def vec_slice(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        src = self.pick(env.vec + env.row1)
        kind = self.rng.randint(0, 3)
        if kind == 0 and src.rows > ROW_OFF_MAX:  # dynamic row: row_off param
            h, w, ro, co = 1, src.cols, _Off("row_off", 0, ROW_OFF_MAX), _Off("0", 0, 0)
        else:
            h = self.rng.choice(sorted({1, src.rows // 2 or 1, src.rows}))
            w = self.rng.choice(sorted({c for c in (1, 8, 16, src.cols) if c <= src.cols}))
            ro = self._offset(env, h, src.rows, None)
            co = self._offset(env, w, src.cols, 8 if kind == 1 else None)
        name = self.fresh("s")
        ann = f": pl.Tile[[{h}, {w}], pl.FP32, pl.Mem.Vec]" if self.rng.randint(0, 1) else ""
        self.emit(lines, ind, f"{name}{ann} = pl.tile.slice({src.name}, [{h}, {w}], [{ro.text}, {co.text}])")
        (env.row1 if h == 1 else env.vec).append(_Tile(name, h, w))

    def vec_op(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        src = self.pick(env.vec + env.row1)
        name = self.fresh("v")
        same = [t for t in env.vec + env.row1 if (t.rows, t.cols) == (src.rows, src.cols)]
        op = self.rng.randint(0, 3)
        if op == 0:
            call = f"pl.tile.muls({src.name}, 0.5)"
        elif op == 1:
            call = f"pl.tile.adds({src.name}, 1.0)"
        elif op == 2:
            call = f"pl.tile.exp({src.name})"
        else:
            call = f"pl.tile.add({src.name}, {self.pick(same).name})"
        self.emit(lines, ind, f"{name} = {call}")
        (env.row1 if src.rows == 1 else env.vec).append(_Tile(name, src.rows, src.cols))

    def col_expand(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        lhs = self.pick(env.vec + env.row1)
        rows = [t for t in env.row1 if t.cols == lhs.cols]
        if rows:
            rhs = self.pick(rows).name
        else:
            rhs = self.fresh("gs")
            co = self._offset(env, lhs.cols, self.C, None)
            self.emit(lines, ind, f"{rhs} = pl.tile.slice(g_vec, [1, {lhs.cols}], [0, {co.text}])")
            env.row1.append(_Tile(rhs, 1, lhs.cols))
        op = self.rng.choice(["col_expand_mul", "col_expand_add", "col_expand_sub", "col_expand"])
        name = self.fresh("ce")
        self.emit(lines, ind, f"{name} = pl.tile.{op}({lhs.name}, {rhs})")
        (env.row1 if lhs.rows == 1 else env.vec).append(_Tile(name, lhs.rows, lhs.cols))

    def store(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        t = self.pick(env.vec + env.row1)
        ro = self._offset(env, t.rows, R, None)
        co = self._offset(env, t.cols, self.C, None)
        call = f"pl.store({t.name}, [{ro.text}, {co.text}], {self.out})"
        if top:
            new = self.fresh("out") if self.rng.randint(0, 1) else "out"
            self.emit(lines, ind, f"{new} = {call}")
            self.out = new
        else:
            self.emit(lines, ind, call)

    def scalar_def(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        name = self.fresh("k")
        base = [s for s in env.scalars if s.hi <= 16]
        if base and self.rng.randint(0, 1):
            b = self.pick(base)
            m = self.rng.choice([1, 2, 8])
            self.emit(lines, ind, f"{name} = {b.text} * {m}")
            env.scalars.append(_Off(name, b.lo * m, b.hi * m, b.mult * m))
        else:
            v = self.rng.choice([0, 1, 4, 8, 16])
            self.emit(lines, ind, f"{name}: pl.Scalar[pl.INDEX] = {v}")
            env.scalars.append(_Off(name, v, v, v or 256))

    # -- the shapes rules/checks.py rejects (top level only: each runs exactly once, and the
    # -- source x_vec is stored right after, so a corrupted or lost write shows in ``out``)

    def _store_source(self, lines: list[str], ind: int) -> None:
        new = self.fresh("out")
        self.emit(lines, ind, f"{new} = pl.store(x_vec, [0, 0], {self.out})")
        self.out = new

    def raw_col_expand(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        """A valid_shape slice of x_vec feeding a col_expand op: a single row or full width at a
        constant offset (an identity copy: accepted), any other window at a constant offset
        (densely repacked over x_vec, #2010), or one row at a loop-variable offset that is never
        0 (copied to x_vec's base, #1640)."""
        C = self.C
        w, ce = self.fresh("vs"), self.fresh("ce")
        op = self.rng.choice(["col_expand_mul", "col_expand_add", "col_expand_sub", "col_expand"])
        if self.rng.randint(0, 2) == 0:
            self.shapes.add("colx-dynamic")
            i = self.fresh("i")
            self.emit(lines, ind, f"for {i} in pl.range(1, {self.rng.randint(2, 3)}):")
            self.emit(lines, ind + 1, f"{w}: pl.Tile[[1, {C}], pl.FP32, pl.Mem.Vec] = pl.tile.slice("
                      f"x_vec, [1, {C}], [{i}, 0], valid_shape=[1, {self.rng.choice([8, C])}])")
            self.emit(lines, ind + 1, f"{ce} = pl.tile.{op}({w}, g_vec)")
            self.emit(lines, ind + 1, f"pl.store({ce}, [{i}, 0], {self.out})")
        else:
            h = self.rng.choice([1, 2, 8])
            wd = self.rng.choice([8, 16, C])
            self.shapes.add("colx-const-identity" if h == 1 or wd == C else "colx-const-repack")
            r, c = self.rng.randint(0, R - h), self.rng.randint(0, C - wd)
            self.emit(lines, ind, f"{w}: pl.Tile[[{h}, {wd}], pl.FP32, pl.Mem.Vec] = pl.tile.slice("
                      f"x_vec, [{h}, {wd}], [{r}, {c}], valid_shape=[{h}, {self.rng.choice([1, wd])}])")
            rows = [t for t in env.row1 if t.cols == wd]
            if rows:
                rhs = self.pick(rows).name
            else:
                rhs = self.fresh("gs")
                self.emit(lines, ind, f"{rhs} = pl.tile.slice(g_vec, [1, {wd}], [0, {C - wd}])")
                env.row1.append(_Tile(rhs, 1, wd))
            self.emit(lines, ind, f"{ce} = pl.tile.{op}({w}, {rhs})")
            (env.row1 if h == 1 else env.vec).append(_Tile(ce, h, wd))
        self._store_source(lines, ind)

    def written_window(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        """A column window of x_vec written in place by fillpad_inplace, directly or through
        set_validshape to fewer rows (so the pad zeroes rows of x_vec), at a 32-byte-aligned
        column (a view: accepted) or an unaligned one (#1789: rejected); the slice itself may
        carry a valid_shape (not copied by the pass: accepted or rejected the same way)."""
        C = self.C
        wd = self.rng.choice([1, 8, 16])
        aligned = self.rng.randint(0, 1) == 1
        c = self.rng.randint(0, (C - wd) // 8) * 8 if aligned else \
            self.rng.choice([v for v in range(1, C - wd + 1) if v % 8])
        q = self.fresh("wq")
        if self.rng.randint(0, 2) == 0:  # a valid_shape slice: not copied, checked the same (#1789)
            self.shapes.add(f"fillpad-valid_shape-{'aligned' if aligned else 'unaligned'}")
            self.emit(lines, ind, f"{q}: pl.Tile[[{R}, {wd}], pl.FP32, pl.Mem.Vec] = pl.tile.slice("
                      f"x_vec, [{R}, {wd}], [0, {c}], valid_shape=[{self.rng.choice([4, 8, R])}, {wd}])")
        else:
            self.emit(lines, ind, f"{q} = pl.tile.slice(x_vec, [{R}, {wd}], [0, {c}])")
        target, route = q, "direct"
        if self.rng.randint(0, 1):
            target, route = self.fresh("wv"), "set_validshape"
            self.emit(lines, ind, f"{target} = pl.tile.set_validshape({q}, [{self.rng.choice([4, 8])}, {wd}])")
        self.shapes.add(f"fillpad-{route}-{'aligned' if aligned else 'unaligned'}")
        self.emit(lines, ind, f"pl.tile.fillpad_inplace({target}, pl.PadValue.zero)")
        self._store_source(lines, ind)

    # -- Mat / Acc

    def mat_extract(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        k = self.rng.choice([16, 32])
        k0 = self.rng.randint(0, (self.K - k) // 16) * 16
        sl = self.fresh("ms")
        self.emit(lines, ind, f"{sl}: pl.Tile[[{M}, {k}], pl.BF16, pl.Mem.Mat] = "
                  f"pl.tile.slice(a_mat, [{M}, {k}], [0, {k0}])")
        src = sl
        if self.rng.randint(0, 2) == 0:  # a chain: slice of the slice
            src = self.fresh("ms")
            self.emit(lines, ind, f"{src} = pl.tile.slice({sl}, [{M}, 16], [0, {k - 16}])")
            k = 16
        kk = self.rng.choice([c for c in (16, k) if c <= k])
        col = self.rng.randint(0, (k - kk) // 16) * 16
        name = self.fresh("e")
        self.emit(lines, ind, f"{name} = pl.tile.extract({src}, 0, {col}, shape=[{M}, {kk}], "
                  "target_memory=pl.Mem.Left)")

    def _operands(self, lines: list[str], ind: int, k: int, k0: str) -> tuple[str, str]:
        lhs, rhs = self.fresh("lm"), self.fresh("rm")
        self.emit(lines, ind, f"{lhs} = pl.tile.slice(a_mat, [{M}, {k}], [0, {k0}])")
        self.emit(lines, ind, f"{rhs} = pl.tile.slice(b_mat, [{k}, {self.N}], [{k0}, 0])")
        return lhs, rhs

    def matmul(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        k = self.rng.choice([16, 32])
        k0 = self.rng.randint(0, (self.K - k) // 16) * 16
        lhs, rhs = self._operands(lines, ind, k, str(k0))
        name = self.fresh("mm")
        self.emit(lines, ind, f"{name} = pl.tile.matmul({lhs}, {rhs})")
        if self.rng.randint(0, 1):
            self.emit(lines, ind, f"pl.store({name}, [0, 0], {self.out})")

    def acc_loop(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        N = self.N
        if self.rng.randint(0, 1):
            init = self.fresh("acc")
            self.emit(lines, ind, f"{init} = pl.tile.create([{M}, {N}], pl.FP32, target_memory=pl.Mem.Acc)")
        else:  # a column window of a wider accumulator (spans every row: writable)
            wide, init = self.fresh("accw"), self.fresh("page")
            self.emit(lines, ind, f"{wide} = pl.tile.create([{M}, {2 * N}], pl.FP32, "
                      "target_memory=pl.Mem.Acc)")
            self.emit(lines, ind, f"{init}: pl.Tile[[{M}, {N}], pl.FP32, pl.Mem.Acc] = "
                      f"pl.tile.slice({wide}, [{M}, {N}], [0, {self.rng.choice([0, N])}])")
        kb = self.rng.choice([16, 32])
        ko, it, cc, res = self.fresh("ko"), self.fresh("c_it"), self.fresh("cc"), self.fresh("c")
        kind = self.rng.choice(["range", "pipeline"])
        extra = ", stage=2" if kind == "pipeline" else ""
        self.emit(lines, ind, f"for {ko}, ({it},) in pl.{kind}(0, {self.K}, {kb}, "
                  f"init_values=({init},){extra}):")
        if self.rng.randint(0, 1):
            lhs, rhs = self._operands(lines, ind + 1, kb, ko)
        else:
            lhs, rhs = self.fresh("a"), self.fresh("b")
            self.emit(lines, ind + 1, f"{lhs} = pl.tile.extract(a_mat, 0, {ko}, shape=[{M}, {kb}], "
                      "target_memory=pl.Mem.Left)")
            self.emit(lines, ind + 1, f"{rhs} = pl.tile.extract(b_mat, {ko}, 0, shape=[{kb}, {N}], "
                      "target_memory=pl.Mem.Right)")
        self.emit(lines, ind + 1, f"{cc} = pl.tile.matmul_acc({it}, {lhs}, {rhs})")
        self.emit(lines, ind + 1, f"{res} = pl.yield_({cc})")
        if self.rng.randint(0, 1):
            self.emit(lines, ind, f"pl.store({res}, [0, 0], {self.out})")

    # -- control flow

    def if_(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        t = self.pick(env.vec + env.row1)
        res = self.fresh("r")
        self.emit(lines, ind, f"if flag > {self.rng.randint(0, 1)}:")
        self.block(lines, ind + 1, env.copy(), depth + 1, budget=4)
        a = self.fresh("ta")
        self.emit(lines, ind + 1, f"{a} = pl.tile.muls({t.name}, 2.0)")
        self.emit(lines, ind + 1, f"{res} = pl.yield_({a})")
        self.emit(lines, ind, "else:")
        self.block(lines, ind + 1, env.copy(), depth + 1, budget=4)
        self.emit(lines, ind + 1, f"{res} = pl.yield_({t.name})")
        (env.row1 if t.rows == 1 else env.vec).append(_Tile(res, t.rows, t.cols))

    def carry_loop(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        t = self.pick(env.vec + env.row1)
        i, c, res = self.fresh("i"), self.fresh("cv"), self.fresh("r")
        n = self.rng.randint(1, 3)
        self.emit(lines, ind, f"for {i}, ({c},) in pl.range({n}, init_values=({t.name},)):")
        inner = env.copy()
        inner.scalars.append(_Off(i, 0, n - 1))
        (inner.row1 if t.rows == 1 else inner.vec).append(_Tile(c, t.rows, t.cols))
        self.block(lines, ind + 1, inner, depth + 1, budget=4)
        nv = self.fresh("nv")
        self.emit(lines, ind + 1, f"{nv} = pl.tile.adds({c}, 1.0)")
        self.emit(lines, ind + 1, f"{res} = pl.yield_({nv})")
        (env.row1 if t.rows == 1 else env.vec).append(_Tile(res, t.rows, t.cols))

    def plain_loop(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        i = self.fresh("i")
        n = self.rng.randint(1, 4)
        step = self.rng.choice([1, 8])
        kind = self.rng.choice(["range", "parallel"])
        if step == 1:
            self.emit(lines, ind, f"for {i} in pl.{kind}({n}):")
            off = _Off(i, 0, n - 1)
        else:
            self.emit(lines, ind, f"for {i} in pl.{kind}(0, {n * step}, {step}):")
            off = _Off(i, 0, (n - 1) * step, step)
        inner = env.copy()
        inner.scalars.append(off)
        before = self.count
        self.block(lines, ind + 1, inner, depth + 1, budget=4)
        if self.count == before:
            self.emit(lines, ind + 1, f"pl.tile.muls({self.pick(env.vec).name}, 1.0)")

    def while_(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        z, w, w2, res = self.fresh("z"), self.fresh("w"), self.fresh("w"), self.fresh("wr")
        self.emit(lines, ind, f"{z}: pl.Scalar[pl.INDEX] = 0")
        self.emit(lines, ind, f"for ({w},) in pl.while_(init_values=({z},)):")
        self.emit(lines, ind + 1, f"pl.cond({w} < {self.rng.randint(1, 3)})")
        self.emit(lines, ind + 1, f"{w2} = {w} + 1")
        self.emit(lines, ind + 1, f"{res} = pl.yield_({w2})")

    def split(self, lines: list[str], ind: int, env: _Env, depth: int, top: bool) -> None:
        lane = self.fresh("lane")
        self.emit(lines, ind, f"for {lane} in pl.split_aiv(2, mode=pl.SplitMode.NONE):")
        before = self.count
        self.block(lines, ind + 1, env.copy(), depth + 1, budget=3)
        if self.count == before:
            self.emit(lines, ind + 1, f"pl.tile.muls({self.pick(env.vec).name}, 1.0)")


def generate_program_text(rng: Chooser, max_stmts: int = 12, max_depth: int = 2) -> str:
    """Random well-formed DSL text of roughly ``max_stmts`` statements."""
    return ProgramGenerator(rng, max_stmts, max_depth).generate()
