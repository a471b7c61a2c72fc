"""Parse + verify + print throughput on generated programs.

Generates random well-formed kernels of 100, 1,000 and 10,000 statements
(egraph_tiles.dsl.generate, fixed seed), times parse_program, verify_program and
print_program (best of --repeat runs each, wall and CPU time) and prints a markdown table
with the process's peak RSS so far (sizes run in increasing order). Timings are reported,
never asserted. Target: 10,000 statements in under 2 s in total.

    python benchmarks/bench_parse.py [--sizes 100 1000 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import random
import resource
import time

import egraph_tiles as et
from egraph_tiles.dsl.generate import generate_program_text
from egraph_tiles.ir.stmts import walk


def best_of(repeat: int, fn):
    """(best wall seconds, best CPU seconds, result) over ``repeat`` runs."""
    best, cpu, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return best, cpu, result


def _count(text: str) -> int:
    prog = et.parse_program(text)
    return sum(1 for f in prog.functions for _ in walk(f.body))


def _program_of_at_least(n: int, seed: int) -> str:
    """Generated text whose IR has at least ``n`` statements (nested ones included)."""
    target = n
    while True:
        text = generate_program_text(random.Random(seed), max_stmts=target, max_depth=2)
        got = _count(text)
        if got >= n:
            return text
        target += max(1, (n - got) + n // 50)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(f"machine: {platform.machine()}, Python {platform.python_version()}\n")
    print("| statements | source lines | KiB | parse (ms) | verify (ms) | print (ms) | total (ms) "
          "| total CPU (ms) | peak RSS so far (MB) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        text = _program_of_at_least(n, args.seed)
        t_parse, c_parse, prog = best_of(args.repeat, lambda: et.parse_program(text, "bench.py"))
        t_verify, c_verify, _ = best_of(args.repeat, lambda: et.verify_program(prog))
        t_print, c_print, _ = best_of(args.repeat, lambda: et.print_program(prog))
        stmts = sum(1 for f in prog.functions for _ in walk(f.body))
        total = t_parse + t_verify + t_print
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"| {stmts:,} | {len(text.splitlines()):,} | {len(text) / 1024:,.0f} | "
              f"{t_parse * 1e3:,.1f} | {t_verify * 1e3:,.1f} | {t_print * 1e3:,.1f} | "
              f"{total * 1e3:,.1f} | {(c_parse + c_verify + c_print) * 1e3:,.1f} | {rss:,.0f} |")


if __name__ == "__main__":
    main()
