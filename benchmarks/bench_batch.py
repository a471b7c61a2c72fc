"""Whole-library throughput: files per second of ``egraph_tiles.optimize_files`` at ``-j 1``
and ``-j 2``.

Writes a generated library of ``--files`` kernels (default 500) to a temporary folder — one
sub-folder per corpus family (``benchmarks/corpus``, plus ``mixed``), kernel sizes drawn from
``--sizes`` with a fixed seed — then optimizes the whole folder once per ``--jobs`` value and
prints a markdown table. The wall time includes discovery, reading the files and starting the
worker processes (``-j 1`` runs in this process); CPU time is this process's plus its finished
workers', and the load average (1 minute, read after each run) says how much of the machine
the run had — wall-clock speed-up needs idle cores, files per CPU second does not. Timings are
reported, never asserted; the outputs of every run are compared with the first (they must be
identical).

    python benchmarks/bench_batch.py [--files 500] [--jobs 1 2] [--sizes 10 30 100] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import egraph_tiles as et  # noqa: E402
from benchmarks.corpus import FAMILIES, MIXED, generate  # noqa: E402
from egraph_tiles.batch import totals  # noqa: E402


def write_library(root: Path, files: int, sizes: list[int], seed: int) -> int:
    """``files`` generated kernels under ``root/<family>/``; returns their IR statement count."""
    rng = random.Random(seed)
    families = [*FAMILIES, MIXED]
    statements = 0
    for i in range(files):
        family = families[i % len(families)]
        k = generate(family, rng.choice(sizes), seed=seed + i)
        (root / family).mkdir(exist_ok=True)
        (root / family / f"k{i:04d}.py").write_text(k.text, encoding="utf-8")
        statements += k.statements
    return statements


def cpu_seconds() -> float:
    """User + system CPU time of this process and of its terminated, waited-for children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 30, 100])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_batch_") as tmp:
        root = Path(tmp)
        statements = write_library(root, args.files, args.sizes, args.seed)
        print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.machine()}, "
              f"{os.cpu_count()} cores, Python {platform.python_version()}, load average "
              f"{os.getloadavg()[0]:.1f}; {args.files} kernels, {statements:,} statements "
              f"(sizes {', '.join(map(str, args.sizes))})\n")
        print("| -j | files | errors | wall (s) | files / s | speed-up | CPU (s) | files / CPU s "
              "| load average | bytes copied before -> after |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        first, base = None, None
        for jobs in args.jobs:
            t0, c0 = time.perf_counter(), cpu_seconds()
            results = et.optimize_files([root], jobs=jobs)
            wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
            outputs = [(r.path, r.status, r.output) for r in results]
            first = first or outputs
            assert outputs == first, f"-j {jobs} produced different outputs"
            t = totals(results, wall)
            base = base or wall
            print(f"| {jobs} | {t['files']} | {t['errors']} | {wall:.1f} | {t['files'] / wall:.1f} | "
                  f"{base / wall:.2f}× | {cpu:.1f} | {t['files'] / cpu:.1f} | "
                  f"{os.getloadavg()[0]:.1f} | {t['bytes_before']:,} -> {t['bytes_after']:,} |",
                  flush=True)


if __name__ == "__main__":
    main()
