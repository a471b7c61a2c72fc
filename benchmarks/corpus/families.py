"""Kernel families: each is a block emitter ``(builder, rng) -> None`` that writes one
realistic region (its own loads, slices, consumers and a store) into a kernel.

Families marked ``extra_proof`` are where the e-graph can prove more than the seed:
loop-variable offsets stepping by a multiple of 8 FP32 columns, affine offsets such as
``(i*16 + 8) - 8`` that only normalise to an aligned multiple, and one window used by
several consumers (one shared copy instead of one per consumer).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from .builder import KernelBuilder, load, sl

Emit = Callable[[KernelBuilder, random.Random], None]

# Input parameters every kernel declares (tensors large enough for every tile loaded);
# the builder appends the ``out`` tensor, sized to the number of stores.
ROWS, COLS = 512, 1024
PARAMS = (
    f"xf: pl.Tensor[[{ROWS}, {COLS}], pl.FP32], xb: pl.Tensor[[{ROWS}, {COLS}], pl.BF16], "
    "row_off: pl.Scalar[pl.INDEX], blk: pl.Scalar[pl.INDEX], flag: pl.Scalar[pl.INDEX]"
)
#: scalar arguments that keep every generated offset in bounds (row_off < 4 rows)
SCALAR_ARGS = {"row_off": 3, "blk": 1, "flag": 1}


def _loop(b: KernelBuilder, var: str, start: int, stop: int, step: int, init: str,
          acc: str = "acc", res: str = "res") -> tuple[str, str]:
    """Open ``for var, (acc,) in pl.range(start, stop, step, init_values=(init,))`` (fresh
    names from the stems ``acc`` and ``res``); returns (iter-arg, result name).  Close with
    ``_end``."""
    acc, res = b.fresh(acc), b.fresh(res)
    b.emit(f"for {var}, ({acc},) in pl.range({start}, {stop}, {step}, init_values=({init},)):")
    b.indent()
    return acc, res


def _end(b: KernelBuilder, res: str, value: str) -> None:
    b.emit(f"{res} = pl.yield_({value})")
    b.dedent()


def _k_loop(b: KernelBuilder, init: str, lhs: str, rhs: str, m: int, k: int, n: int,
            rhs_col: object = 0) -> str:
    """A K-loop of ``matmul_acc`` into ``init`` over 256-deep blocks: Left extracts of the
    [m, k] Mat tile ``lhs``, Right extracts of the [k, n] window of ``rhs`` at column
    ``rhs_col``; returns the loop's result."""
    ko = b.fresh("ko")
    acc, res = _loop(b, ko, 0, k, 256, init, res="c")
    a = b.assign("a", f"pl.tile.extract({lhs}, 0, {ko}, shape=[{m}, 256], target_memory=pl.Mem.Left)")
    w = b.assign("w", f"pl.tile.extract({rhs}, {ko}, {rhs_col}, shape=[256, {n}], target_memory=pl.Mem.Right)")
    _end(b, res, b.assign("acc_n", f"pl.tile.matmul_acc({acc}, {a}, {w})"))
    return res


def batched_matmul(b: KernelBuilder, rng: random.Random) -> None:
    """FlattenTileNdTo2D pages: a [B*M, K] Mat tile sliced per batch page, each page
    feeding the K-loop extracts; sometimes an untiled matmul on page slices."""
    pages, m, k, n = rng.choice([1, 2, 4]), 16, rng.choice([256, 512]), rng.choice([16, 32, 64])
    x_mat = load(b, "x_mat", "xb", pages * m, k, "Mat")
    w_mat = load(b, "w_mat", "xb", k, n, "Mat")
    for i in range(pages):
        page = b.assign("lhs_slice", sl(x_mat, m, k, i * m, 0))
        if k == 256 and rng.random() < 0.5:
            rhs = b.assign("rhs_slice", sl(w_mat, k, n, 0, 0))
            c = b.assign("c", f"pl.tile.matmul({page}, {rhs})")
            b.store(c)
            continue
        acc0 = b.assign("acc0", f"pl.tile.create([{m}, {n}], pl.FP32, target_memory=pl.Mem.Acc)")
        b.store(_k_loop(b, acc0, page, w_mat, m, k, n))


def norm_rows(b: KernelBuilder, rng: random.Random) -> None:
    """RMSNorm / LayerNorm row tiles: rows of x and gamma / beta rows sliced at dynamic
    (``row_off``) and static offsets feed col_expand_mul / col_expand_add."""
    r, c = rng.choice([8, 16]), rng.choice([64, 128, 256])
    x_t = load(b, "x_t", "xf", r, c)
    gam = load(b, "gamma_tab", "xf", 4, c)
    dyn = rng.random() < 0.5
    row = b.assign("row", sl(x_t, 1, c, "row_off" if dyn else rng.randrange(r), 0))
    sq = b.assign("sq", f"pl.tile.mul({row}, {row})")
    g_off = "row_off" if rng.random() < 0.5 else rng.randrange(4)
    g_row = b.assign("g_row", sl(gam, 1, c, g_off, 0))
    y = b.assign("y", f"pl.tile.col_expand_mul({sq}, {g_row})")
    if rng.random() < 0.5:  # LayerNorm: beta row, whole-tile broadcast
        b_row = b.assign("b_row", sl(gam, 1, c, rng.randrange(4), 0))
        y = b.assign("y", f"pl.tile.col_expand_add({y}, {b_row})")
        full = b.assign("xn", f"pl.tile.col_expand_mul({x_t}, {g_row})")
        b.store(full)
    b.store(y)


def attention_cols(b: KernelBuilder, rng: random.Random) -> None:
    """Per-head column slices of a multi-row [S, H*D] tile: aligned heads feed ordinary
    vector ops (views), and the strided windows feed col_expand (copies)."""
    s, h, d = 16, rng.choice([2, 4]), rng.choice([8, 16, 32])
    q = load(b, "q", "xf", s, h * d)
    gam = load(b, "gamma_tab", "xf", 4, h * d)
    for hi in range(h):
        qh = b.assign("q_head", sl(q, s, d, 0, hi * d))
        sc = b.assign("scaled", f"pl.tile.muls({qh}, 0.125)")
        g = b.assign("g_head", sl(gam, 1, d, 0, hi * d))
        t = b.assign("t", f"pl.tile.col_expand_mul({qh}, {g})")
        b.store(b.assign("o", f"pl.tile.add({sc}, {t})"))


def head_unaligned(b: KernelBuilder, rng: random.Random) -> None:
    """Head slices at unaligned columns (copies) next to aligned ones (views), and a
    dynamic head at ``blk * 8`` columns that the seed's SSA multiples prove aligned."""
    w = rng.choice([16, 32, 64])
    t = load(b, "heads", "xf", 16, w)
    for _ in range(rng.choice([1, 2, 3])):
        width = rng.choice([1, 4, 8])
        col = rng.randrange(0, w - width + 1)
        hd = b.assign("head", sl(t, 16, width, 0, col))
        y = b.assign("y", f"pl.tile.{rng.choice(['muls', 'adds'])}({hd}, 0.5)")
        if width == 8:
            b.store(b.assign("e", f"pl.tile.exp({y})"))
    if rng.random() < 0.5:  # the seed's scalar-SSA proof: blk * 8 FP32 columns = 32 bytes
        hoff = b.assign("hoff", "blk * 8")
        hd = b.assign("head", sl(t, 16, 8, 0, hoff))
        b.store(b.assign("y", f"pl.tile.muls({hd}, 0.25)"))


def acc_windows(b: KernelBuilder, rng: random.Random) -> None:
    """Batched accumulators packed along columns: each [16, N] window of a [16, N*T]
    Acc tile is the carried destination of a K-loop of matmul_acc (accepted shape)."""
    t_cnt, n, k = rng.choice([2, 4]), rng.choice([16, 32]), rng.choice([256, 512])
    acc_all = b.assign("acc_all", f"pl.tile.create([16, {n * t_cnt}], pl.FP32, target_memory=pl.Mem.Acc)")
    x_mat = load(b, "x_mat", "xb", 16, k, "Mat")
    w_mat = load(b, "w_mat", "xb", k, n * t_cnt, "Mat")
    for ti in range(t_cnt):
        win = b.assign("acc_page", sl(acc_all, 16, n, 0, ti * n))
        _k_loop(b, win, x_mat, w_mat, 16, k, n, rhs_col=ti * n)
    b.store(acc_all)


def loop_carry(b: KernelBuilder, rng: random.Random) -> None:
    """Loops carrying slices: a slice as the loop initializer and a slice yielded."""
    t = load(b, "src", "xf", 16, 64)
    c0 = rng.choice([3, 8, 16, 5])
    s0 = b.assign("init_slice", sl(t, 16, 8, 0, c0))
    cur, res = _loop(b, b.fresh("j"), 0, 4, 1, s0, acc="cur")
    nxt = b.assign("nxt", f"pl.tile.adds({cur}, 1.0)")
    if rng.random() < 0.5:
        col = rng.choice([1, 8, 24, 40])
        yv = b.assign("carry_slice", sl(t, 16, 8, 0, col))
        nxt = b.assign("nxt", f"pl.tile.add({nxt}, {yv})")
    _end(b, res, nxt)
    b.store(res)
    yv0 = b.assign("src2", f"pl.tile.muls({t}, 2.0)")
    _, res2 = _loop(b, b.fresh("k"), 0, 2, 1, s0, acc="cur")
    _end(b, res2, b.assign("yield_slice", sl(yv0, 16, 8, 0, rng.choice([2, 16, 32]))))
    b.store(res2)


def branches(b: KernelBuilder, rng: random.Random) -> None:
    """if/else arms that slice, consume and yield windows."""
    t = load(b, "src", "xf", 16, 64)
    c1, c2 = rng.choice([1, 8, 12, 32]), rng.choice([3, 16, 40])
    res = b.fresh("chosen")
    b.emit("if flag > 0:")
    b.indent()
    a = b.assign("arm_a", sl(t, 16, 8, 0, c1))
    x = b.assign("x", f"pl.tile.muls({a}, 2.0)")
    b.emit(f"{res} = pl.yield_({x})")
    b.dedent()
    b.emit("else:", count=False)
    b.indent()
    y = b.assign("arm_b", sl(t, 16, 8, 0, c2))
    b.emit(f"{res} = pl.yield_({y})")
    b.dedent()
    b.store(res)


def loop_multiple(b: KernelBuilder, rng: random.Random) -> None:
    """[extra proof] a loop variable stepping by a multiple of 8 FP32 columns: every
    window is 32-byte aligned, but only a proof about the loop variable shows it."""
    d, h = rng.choice([8, 16, 32]), rng.choice([2, 4, 8])
    t = load(b, "panel", "xf", 16, d * h)
    z = b.assign("zero", f"pl.tile.create([16, {d}], pl.FP32, target_memory=pl.Mem.Vec)")
    j = b.fresh("j")
    acc, res = _loop(b, j, 0, d * h, d, z, res="sum")
    hj = b.assign("col_blk", sl(t, 16, d, 0, j))
    _end(b, res, b.assign("acc_n", f"pl.tile.add({acc}, {hj})"))
    b.store(res)


def affine_offsets(b: KernelBuilder, rng: random.Random) -> None:
    """[extra proof] affine offsets like ``(i*16 + 8) - 8`` over BF16 columns (and
    ``(i*8 + 4) - 4`` over FP32): the seed's multiple is 8 (resp. 4) elements — 128
    bits, unaligned — while the normal form ``i*16`` (``i*8``) is 256-bit aligned."""
    bf16 = rng.random() < 0.5
    tensor, dt, step, bump = ("xb", "BF16", 16, 8) if bf16 else ("xf", "FP32", 8, 4)
    h = rng.choice([2, 4])
    t = load(b, "panel", tensor, 16, step * h)
    z = b.assign("zero", f"pl.tile.create([16, {step}], pl.{dt}, target_memory=pl.Mem.Vec)")
    i = b.fresh("i")
    acc, res = _loop(b, i, 0, h, 1, z, res="sum")
    if rng.random() < 0.5:
        off = b.assign("off", f"({i} * {step} + {bump}) - {bump}")
    else:
        off = f"({i} * {step} + {bump}) - {bump}"
    blk = b.assign("blk_cols", sl(t, 16, step, 0, off))
    _end(b, res, b.assign("acc_n", f"pl.tile.add({acc}, {blk})"))
    if bf16:
        res = b.assign("sum_f", f"pl.tile.cast({res}, pl.FP32)")
    b.store(res)


def shared_window(b: KernelBuilder, rng: random.Random) -> None:
    """[extra proof] one window read by several consumers: an unaligned head read by
    2-4 vector ops, and a dynamic gamma row read by two col_expand ops. Nothing writes
    the source in between, so one copy can serve every consumer."""
    t = load(b, "src", "xf", 16, 64)
    hd = b.assign("head", sl(t, 16, 8, 0, rng.choice([1, 3, 5, 12])))
    ys = [b.assign("y", f"pl.tile.{op}({hd}, 0.5)")
          for op in rng.sample(["muls", "adds", "subs", "maxs"], rng.choice([2, 3, 4]))]
    acc = ys[0]
    for y in ys[1:]:
        acc = b.assign("s", f"pl.tile.add({acc}, {y})")
    b.store(acc)
    x_t = load(b, "x_t", "xf", 8, 64)
    gam = load(b, "gamma_tab", "xf", 4, 64)
    g_row = b.assign("g_row", sl(gam, 1, 64, "row_off", 0))
    y1 = b.assign("y", f"pl.tile.col_expand_mul({x_t}, {g_row})")
    y2 = b.assign("y", f"pl.tile.col_expand_add({y1}, {g_row})")
    b.store(y2)


# ------------------------------------------------------------------ loop-heavy
# Copies inside loops run every iteration: these families are scored by dynamic bytes (bytes ×
# trip counts, ``egraph_tiles.cost.metrics.program_dynamic_bytes``).


def loop_reduction(b: KernelBuilder, rng: random.Random) -> None:
    """[loop] a tiled row reduction over column blocks of a resident tile: the block moves
    with the loop variable (aligned: a view the loop-variable proof keeps), and a scale window
    of a resident parameter tile at an unaligned constant column is invariant."""
    blk, nblk = rng.choice([8, 16, 32]), rng.choice([4, 8, 16])
    t = load(b, "panel", "xf", 16, blk * nblk)
    par = load(b, "params", "xf", 16, 64)
    z = b.assign("zero", f"pl.tile.create([16, {blk}], pl.FP32, target_memory=pl.Mem.Vec)")
    kb = b.fresh("kb")
    acc, res = _loop(b, kb, 0, blk * nblk, blk, z)
    col = b.assign("col_blk", sl(t, 16, blk, 0, kb))
    scale = b.assign("scale_w", sl(par, 16, blk, 0, rng.choice([1, 3, 5, 12])))
    m = b.assign("scaled", f"pl.tile.mul({col}, {scale})")
    nxt = b.assign("acc_n", f"pl.tile.add({acc}, {m})")
    _end(b, res, nxt)
    b.store(res)


def loop_k_resident(b: KernelBuilder, rng: random.Random) -> None:
    """[loop] K loops over windows of resident Mat tiles: the K-th column block of A and row
    block of B move with ``ko`` (a Left / Right copy per trip under every strategy), and a
    second matmul reads a fixed bias block of A in every trip (invariant: one Left copy)."""
    k, kb, n = rng.choice([128, 256]), rng.choice([32, 64]), rng.choice([16, 32])
    a_mat = load(b, "a_mat", "xb", 16, k, "Mat")
    b_mat = load(b, "b_mat", "xb", k, n, "Mat")
    acc0 = b.assign("acc0", f"pl.tile.create([16, {n}], pl.FP32, target_memory=pl.Mem.Acc)")
    ko = b.fresh("ko")
    acc, res = _loop(b, ko, 0, k, kb, acc0)
    a_w = b.assign("a_blk", sl(a_mat, 16, kb, 0, ko))
    b_w = b.assign("b_blk", sl(b_mat, kb, n, ko, 0))
    nxt = b.assign("acc_n", f"pl.tile.matmul_acc({acc}, {a_w}, {b_w})")
    if rng.random() < 0.7:
        a_fix = b.assign("a_fix", sl(a_mat, 16, kb, 0, rng.choice([0, kb])))
        nxt = b.assign("acc_n", f"pl.tile.matmul_acc({nxt}, {a_fix}, {b_w})")
    _end(b, res, nxt)
    b.store(res)


def loop_attention(b: KernelBuilder, rng: random.Random) -> None:
    """[loop] attention column blocks: for each block j of K^T (a resident Mat tile) the
    scores Q · K_j accumulate; the Q block is the same window in every trip (invariant: one
    Left copy before the loop), the K_j window moves with j.  Then a loop nest over heads and
    row tiles reads a window of a resident Vec statistics tile at an unaligned column."""
    d, s = rng.choice([32, 64]), rng.choice([64, 128])
    heads = rng.choice([2, 4])
    q_mat = load(b, "q_mat", "xb", 16 * heads, d, "Mat")
    k_mat = load(b, "kt_mat", "xb", d, s, "Mat")
    stats = load(b, "stats", "xf", 16, 64)
    acc0 = b.assign("acc0", "pl.tile.create([16, 16], pl.FP32, target_memory=pl.Mem.Acc)")
    z = b.assign("zero", "pl.tile.create([16, 8], pl.FP32, target_memory=pl.Mem.Vec)")
    j = b.fresh("j")
    acc, res = _loop(b, j, 0, s, 16, acc0)
    q_w = b.assign("q_blk", sl(q_mat, 16, d, 16 * rng.randrange(heads), 0))
    k_w = b.assign("k_blk", sl(k_mat, d, 16, 0, j))
    nxt = b.assign("scores", f"pl.tile.matmul_acc({acc}, {q_w}, {k_w})")
    _end(b, res, nxt)
    b.store(res)
    h = b.fresh("h")
    hacc, hres = _loop(b, h, 0, heads, 1, z)
    r = b.fresh("r")
    racc, rres = _loop(b, r, 0, 4, 1, hacc)
    m_w = b.assign("m_blk", sl(stats, 16, 8, 0, rng.choice([1, 3, 9])))
    rn = b.assign("h_acc", f"pl.tile.add({racc}, {m_w})")
    _end(b, rres, rn)
    _end(b, hres, rres)
    b.store(hres)


def loop_invariant(b: KernelBuilder, rng: random.Random) -> None:
    """[loop, invariant] windows of resident Vec tiles that no statement of the loop writes,
    at unaligned constant or parameter (``row_off``) offsets, read in one or two nested loops
    (sometimes under an ``if``): the seed copies them in every trip, one copy before the loop
    serves them all."""
    t = load(b, "resident", "xf", 16, 64)
    z = b.assign("zero", "pl.tile.create([16, 8], pl.FP32, target_memory=pl.Mem.Vec)")
    i = b.fresh("i")
    acc, res = _loop(b, i, 0, rng.choice([4, 8, 16]), 1, z)
    inner = rng.random() < 0.5
    if inner:
        j = b.fresh("j")
        outer_res = res
        acc, res = _loop(b, j, 0, rng.choice([2, 4]), 1, acc)
    w = b.assign("win", sl(t, 16, 8, 0, rng.choice([1, 3, 5, 13, 21])))
    nxt = b.assign("acc_n", f"pl.tile.add({acc}, {w})")
    if rng.random() < 0.5:
        g = b.assign("gwin", sl(t, 1, 8, "row_off", rng.choice([2, 6, 10])))
        nxt = b.assign("acc_n", f"pl.tile.col_expand_add({nxt}, {g})")
    if rng.random() < 0.3:
        out = b.fresh("picked")
        b.emit("if flag > 0:")
        b.indent()
        w2 = b.assign("arm_win", sl(t, 16, 8, 0, rng.choice([7, 11])))
        x = b.assign("x", f"pl.tile.sub({nxt}, {w2})")
        b.emit(f"{out} = pl.yield_({x})")
        b.dedent()
        b.emit("else:", count=False)
        b.indent()
        b.emit(f"{out} = pl.yield_({nxt})")
        b.dedent()
        nxt = out
    _end(b, res, nxt)
    if inner:
        _end(b, outer_res, res)
        res = outer_res
    b.store(res)


@dataclass(frozen=True)
class Family:
    name: str
    emit: Emit
    extra_proof: bool = False
    #: loop-heavy (scored by dynamic bytes); ``invariant``: every loop copy can be hoisted
    loops: bool = False
    invariant: bool = False


FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family("batched_matmul", batched_matmul),
    Family("norm_rows", norm_rows),
    Family("attention_cols", attention_cols),
    Family("head_unaligned", head_unaligned),
    Family("acc_windows", acc_windows),
    Family("loop_carry", loop_carry),
    Family("branches", branches),
    Family("loop_multiple", loop_multiple, extra_proof=True),
    Family("affine_offsets", affine_offsets, extra_proof=True),
    Family("shared_window", shared_window, extra_proof=True),
    Family("loop_reduction", loop_reduction, loops=True),
    Family("loop_k_resident", loop_k_resident, loops=True),
    Family("loop_attention", loop_attention, loops=True),
    Family("loop_invariant", loop_invariant, loops=True, invariant=True),
]}
#: the loop-heavy families (``benchmarks/bench_loops.py``)
LOOP_FAMILIES = tuple(f.name for f in FAMILIES.values() if f.loops)
