"""Benchmark: the NKI kernel reader on a generated legacy kernel of N indexed accesses.

The kernel (our own, generated as text) mixes what legacy kernels do: arange tiles offset by a
loop variable and a program id, masked ragged tiles, mgrid windows with steps, summed aranges
(a transpose inside a row), ``nl.ds`` with loop-variable starts, and plain slices.  Timed from
the source text, cold (every memo cleared): read + inference + findings, then the same plus
migration (each rewritten access checked with numpy before it is printed).

    python benchmarks/bench_nki_frontend.py [--accesses 1000] [--repeat 3]

Prints a markdown table (never asserts timings).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import time

from egraph_tiles.nki.index.combine import cached_combine_index_tiles
from egraph_tiles.nki.kernels.analyze import analyze_kernel
from egraph_tiles.nki.kernels.migrate import migrate_kernel
from egraph_tiles.nki.index.solver import clear_cache

SHAPES = {"a": (1000, 1024), "b": (1000, 1024), "out": (1000, 1024)}


def kernel_source(n: int) -> str:
    """A legacy kernel with ``n`` indexed accesses (five kinds, in turn)."""
    lines = [
        "import neuronxcc.nki as nki",
        "import neuronxcc.nki.language as nl",
        "",
        "",
        "@nki.jit",
        "def big(a, b, out, n_rows=1000):",
        "    pid = nl.program_id(0)",
        "    i_p = nl.arange(128)[:, None]",
        "    i_f = nl.arange(64)[None, :]",
        "    w_p, w_f = nl.mgrid[0:64, 0:32:2]",
        "    r_p = nl.arange(32)[:, None, None]",
        "    r_i = nl.arange(4)[None, :, None]",
        "    r_j = nl.arange(8)[None, None, :]",
        "    for t in nl.affine_range(8):",
    ]
    for k in range(n):
        kind = k % 5
        col = 64 * (k % 8)
        if kind == 0:
            lines.append(f"        x{k} = nl.load(a[t * 128 + i_p, pid * 512 + {col} + i_f],"
                         " mask=(t * 128 + i_p < n_rows))")
        elif kind == 1:
            lines.append(f"        nl.store(out[t * 120 + i_p, {col} + i_f], value=x{k - 1})")
        elif kind == 2:
            lines.append(f"        y{k} = nl.load(b[t * 64 + w_p, {col} + w_f + {k % 2}])")
        elif kind == 3:
            lines.append(f"        z{k} = nl.load(a[t * 32 + r_p, {col} + r_i * 8 + r_j])")
        else:
            lines.append(f"        v{k} = nl.load(b[nl.ds(t * 100, 100), {col}:{col + 64}])")
    return "\n".join(lines) + "\n"


def _time(n: int, migrate: bool, repeat: int) -> tuple[float, float, int, int]:
    """Median wall and CPU seconds (CPU: this process, all threads -- robust to a loaded
    machine), accesses, accesses rewritten."""
    source = kernel_source(n)
    wall, cpu = [], []
    for _ in range(repeat):
        clear_cache()
        cached_combine_index_tiles.cache_clear()
        t0, c0 = time.perf_counter(), time.process_time()
        report = analyze_kernel(source, shapes=SHAPES, grid=(2,))
        rewritten = len(migrate_kernel(report).texts) if migrate else 0
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    assert len(report.accesses) == n and not report.findings, report.findings[:3]
    return statistics.median(wall), statistics.median(cpu), len(report.accesses), rewritten


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--accesses", type=int, nargs="+", default=[1000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"NKI kernel reader — {platform.machine()}, {platform.python_implementation()} "
          f"{platform.python_version()}, {datetime.date.today()}, median of {args.repeat}")
    print()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print()
    print("| indexed accesses | analyze: CPU s | wall s | analyze + migrate: CPU s | wall s "
          "| accesses rewritten |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.accesses:
        w_a, c_a, count, _ = _time(n, False, args.repeat)
        w_m, c_m, _, rewritten = _time(n, True, args.repeat)
        print(f"| {count:,} | {c_a:.3f} | {w_a:.3f} | {c_m:.3f} | {w_m:.3f} | {rewritten:,} |")


if __name__ == "__main__":
    main()
