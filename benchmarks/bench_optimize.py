"""Scaling benchmark of ``et.optimize``: generated kernels of 100 / 1,000 / 10,000 statements
(chains of Mat slices folded into extracts, matmul operands, aligned and unaligned Vec slices,
all inside loops).  Each size runs in a fresh subprocess so peak RSS is per size.  Prints a
markdown table (wall time, time per statement, peak memory, e-graph size); never asserts."""

from __future__ import annotations

import json
import subprocess
import sys

HEADER = '''import pypto.language as pl


@pl.program
class Bench:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[64, 512], pl.BF16], w: pl.Tensor[[256, 64], pl.BF16], v: pl.Tensor[[16, 64], pl.FP32]):
        x_mat: pl.Tile[[64, 512], pl.BF16, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [64, 512], target_memory=pl.Mem.Mat)
        w_mat: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(w, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(v, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
'''

BLOCK = '''        for ko{k} in pl.range(0, 256, 128):
            p{k}: pl.Tile[[32, 512], pl.BF16, pl.Mem.Mat] = pl.tile.slice(x_mat, [32, 512], [32, 0])
            q{k}: pl.Tile[[32, 256], pl.BF16, pl.Mem.Mat] = pl.tile.slice(p{k}, [32, 256], [0, 256])
            a{k}: pl.Tile[[32, 128], pl.BF16, pl.Mem.Left] = pl.tile.extract(q{k}, 0, ko{k}, shape=[32, 128], target_memory=pl.Mem.Left)
            r{k}: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.slice(w_mat, [128, 64], [ko{k}, 0])
            c{k}: pl.Tile[[32, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a{k}, r{k})
            u{k}: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, {uo}])
            y{k}: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(u{k}, 0.5)
            g{k}: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, 8])
            z{k}: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(g{k}, 0.5)
'''
PER_BLOCK = 10  # the loop plus nine statements
#: ``--acc``: each block also accumulates into a full-row column window of a wider Acc tile
#: (accepted), so the Acc-window check builds and saturates its e-graph instead of skipping it
ACC = '''            e{k}: pl.Tile[[32, 128], pl.FP32, pl.Mem.Acc] = pl.tile.create([32, 128], pl.FP32, target_memory=pl.Mem.Acc)
            f{k}: pl.Tile[[32, 64], pl.FP32, pl.Mem.Acc] = pl.tile.slice(e{k}, [32, 64], [0, 64])
            h{k}: pl.Tile[[32, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(f{k}, a{k}, r{k})
'''
PER_BLOCK_ACC = 13


def kernel(statements: int, acc: bool = False) -> str:
    blocks = max(1, statements // (PER_BLOCK_ACC if acc else PER_BLOCK))
    block = BLOCK + ACC if acc else BLOCK
    return HEADER + "".join(block.format(k=k, uo=1 + k % 7) for k in range(blocks))


CHILD = r'''
import json, resource, sys, time
import egraph_tiles as et
from egraph_tiles.egraph.report import Report
sys.path.insert(0, {here!r})
from bench_optimize import kernel
import egraph_tiles.passes.canonicalize as canon
prog = et.parse_program(kernel({n}, {acc}))
rep = Report()
acc = [0.0]
_check = canon.check_acc_windows
def timed(fn, *args):
    t = time.perf_counter(); _check(fn, *args); acc[0] += time.perf_counter() - t
canon.check_acc_windows = timed
t0 = time.perf_counter()
et.optimize(prog, report=rep)
dt = time.perf_counter() - t0
f = rep.functions[0]
print(json.dumps(dict(n={n}, seconds=dt, windows=acc[0], enodes=f.enodes, iterations=f.iterations,
                      rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      bytes_after=f.bytes_after, decisions=len(f.decisions))))
'''


def run(n: int, acc: bool = False) -> dict:
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, "-c", CHILD.format(here=here, n=n, acc=acc)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(sizes: list[int], acc: bool = False) -> None:
    rows = [run(n, acc) for n in sizes]
    print("| statements | optimize wall (s) | of which Acc-window check (s) | slice canonicalization (s) "
          "| µs / statement (canon.) | peak RSS (MB) | e-nodes | iterations |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        canon = r["seconds"] - r["windows"]
        print(f"| {r['n']:,} | {r['seconds']:.2f} | {r['windows']:.2f} | {canon:.2f} | "
              f"{canon / r['n'] * 1e6:.0f} | {r['rss_mb']:.0f} | {r['enodes']:,} | {r['iterations']} |")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[100, 1000, 10000],
                    help="statement counts (default: 100 1000 10000)")
    ap.add_argument("--acc", action="store_true",
                    help="each block also accumulates into an Acc column window, so the "
                         "Acc-window check builds its e-graph instead of skipping it")
    a = ap.parse_args()
    main(a.sizes, acc=a.acc)
