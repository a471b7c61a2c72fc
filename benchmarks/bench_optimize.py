"""Scaling benchmark of ``canonicalize_tile_slice`` against the seed policy, on the mixed-family
kernels of ``benchmarks/corpus`` (blocks drawn from every family, deterministic from the seed).

    python benchmarks/bench_optimize.py --sizes 1000,10000,50000 [--repeat 3] [--plot PATH]

Each size runs in fresh subprocesses: one times the seed policy (``egraph_tiles.passes.baselines``)
and the e-graph pass (``canonicalize_tile_slice``) alternately, ``--repeat`` times each, and keeps
the best of each, wall and CPU time (the machine is shared, so the ratio is taken within one
process and the best run is the least disturbed one); another parses the kernel, optimizes it
once with ``et.optimize`` (the pass plus input / output verification) and reports its peak RSS
(whole process, ``ru_maxrss``: the reader, the IR, egglog's Rust heap — everything a user sees).
Prints a markdown table (time, µs per statement, peak RSS, ratio to the seed policy) and, with
``--plot``, draws µs per statement against size. Timings are reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TIME = r'''
import gc, json, sys, time
sys.path.insert(0, {root!r})
import egraph_tiles as et
from egraph_tiles.passes import baselines
from egraph_tiles.report.report import Report
from benchmarks.corpus import MIXED, generate
from benchmarks.harness import count_statements
prog = et.parse_program(generate(MIXED, {n}, {seed}).text)
def timed(fn):
    # both timed with the cyclic collector paused, as the pass runs: the yardstick must not
    # pay collections over the long-lived program that the pass does not
    gc.collect(); gc.disable()
    try:
        w, c = time.perf_counter(), time.process_time(); fn()
        return time.perf_counter() - w, time.process_time() - c
    finally:
        gc.enable()
seed, opt = [], []
for _ in range({repeat}):
    seed.append(timed(lambda: baselines.seed_policy(prog)))
    opt.append(timed(lambda: et.canonicalize_tile_slice(prog)))
rep = Report()
et.canonicalize_tile_slice(prog, report=rep)
print(json.dumps(dict(statements=count_statements(prog), seed=min(w for w, _ in seed),
                      optimize=min(w for w, _ in opt), seed_cpu=min(c for _, c in seed),
                      optimize_cpu=min(c for _, c in opt), enodes=rep.functions[0].enodes)))
'''

RSS = r'''
import json, resource, sys
sys.path.insert(0, {root!r})
import egraph_tiles as et
from benchmarks.corpus import MIXED, generate
prog = et.parse_program(generate(MIXED, {n}, {seed}).text)
parsed = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
et.optimize(prog)
print(json.dumps(dict(rss_parse_mb=parsed, rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
'''


PROFILE = r'''
import cProfile, pstats, sys, time
sys.path.insert(0, {root!r})
import egraph_tiles as et
from benchmarks.corpus import MIXED, generate
prog = et.parse_program(generate(MIXED, {n}, {seed}).text)
et.canonicalize_tile_slice(prog)
pr = cProfile.Profile(time.process_time)
pr.enable()
et.canonicalize_tile_slice(prog)
pr.disable()
pstats.Stats(pr).sort_stats("tottime").print_stats({top})
'''


def _child(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(n: int, repeat: int = 3, seed: int = 0) -> dict:
    row = _child(TIME.format(root=ROOT, n=n, seed=seed, repeat=repeat))
    row.update(_child(RSS.format(root=ROOT, n=n, seed=seed)))
    row["size"] = n
    return row


def table(rows: list[dict]) -> str:
    lines = ["| statements | seed policy (s) | e-graph pass (s) | µs / statement (seed) "
             "| µs / statement (e-graph) | e-graph / seed (wall) | e-graph / seed (CPU) "
             "| peak RSS (MB) | of which parse (MB) | e-nodes |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        n = r["statements"]
        lines.append(f"| {n:,} | {r['seed']:.3f} | {r['optimize']:.3f} | {r['seed'] / n * 1e6:.0f} | "
                     f"{r['optimize'] / n * 1e6:.0f} | {r['optimize'] / r['seed']:.2f}× | "
                     f"{r['optimize_cpu'] / r['seed_cpu']:.2f}× | {r['rss_mb']:.0f} | "
                     f"{r['rss_parse_mb']:.0f} | {r['enodes']:,} |")
    return "\n".join(lines)


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["statements"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(xs, [r["optimize"] / r["statements"] * 1e6 for r in rows], "o-", label="e-graph pass")
    ax.plot(xs, [r["seed"] / r["statements"] * 1e6 for r in rows], "s-", label="seed policy")
    ax.set_xscale("log")
    ax.set_xlabel("statements (mixed-family kernel)")
    ax.set_ylabel("µs / statement (best run)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes_pos", nargs="*", type=int, metavar="SIZE",
                    help="statement counts (the same as --sizes)")
    ap.add_argument("--sizes", default="1000,10000,50000", help="comma-separated statement counts")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per size (best is kept)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", help="write µs / statement vs size to this PNG")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    ap.add_argument("--profile", type=int, metavar="N",
                    help="only print the pass's cProfile top entries (CPU time) at N statements")
    args = ap.parse_args(argv)
    if args.profile:
        print(subprocess.run([sys.executable, "-c", PROFILE.format(root=ROOT, n=args.profile,
                                                                    seed=args.seed, top=15)],
                             capture_output=True, text=True, check=True).stdout)
        return
    sizes = args.sizes_pos or [int(s) for s in args.sizes.split(",")]
    rows = [measure(n, args.repeat, args.seed) for n in sizes]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()}-core {platform.machine()}, "
          f"Python {platform.python_version()}, load average {load:.1f}, best of {args.repeat}\n")
    print(table(rows))
    if args.plot:
        plot(rows, args.plot)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
