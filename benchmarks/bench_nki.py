"""Benchmark: NKI index inference for an unrolled kernel of N indexed instructions.

The kernel mixes arange tile indices, static ``ds`` slices, runtime-offset ``ds`` (scalar[int]
starts), a runtime-length slice (bounded by the supremum), strided slices and predicated
instructions, with the repeated patterns an unrolled loop body produces.  Every run starts
from a cold solution memo; "combine cache" toggles ``cached_combine_index_tiles``.

    /work/venv/bin/python benchmarks/bench_nki.py [--instructions 1000] [--repeat 3]

Prints a markdown table (never asserts timings).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

from egraph_tiles.nki import (
    Access,
    KernelInstruction,
    arange,
    combine_cache,
    ds,
    infer_kernel,
    scalar,
)
from egraph_tiles.nki.index.combine import cached_combine_index_tiles
from egraph_tiles.nki.index.solver import clear_cache


def build_kernel(n: int) -> list[KernelInstruction]:
    """An unrolled kernel body of ``n`` indexed instructions."""
    a, b, out = (512, 2048), (256, 4096), (512, 2048)
    offs = [scalar(f"off{j}", lo=0, hi=128) for j in range(16)]
    rows = scalar("rows", lo=1, hi=128)
    instrs = []
    for k in range(n):
        i_p = arange(128)[:, None]
        i_f = arange(512)[None, :]
        kind = k % 5
        if kind == 0:  # arange tile indices with unrolled constant offsets
            dst = Access(out, (i_p + 128 * (k % 4), i_f + 512 * (k % 3)))
            src = Access(a, (i_p + 128 * ((k + 1) % 4), i_f))
            instrs.append(KernelInstruction(dst, (src,)))
        elif kind == 1:  # static ds slices
            dst = Access(out, (ds(128 * (k % 4), 128), ds(64 * (k % 8), 64)))
            src = Access(b, (ds(32 * (k % 4), 128), slice(0, 512, 8)))
            instrs.append(KernelInstruction(dst, (src,)))
        elif kind == 2:  # runtime-offset ds
            off = offs[k % 16]
            dst = Access(out, (ds(off + 64 * (k % 3), 64), slice(None)))
            src = Access(a, (ds(off, 64), slice(None)))
            instrs.append(KernelInstruction(dst, (src,)))
        elif kind == 3:  # runtime-length slice: extent = supremum, predicated on the row count
            dst = Access(out, (slice(0, rows), i_f + 512 * (k % 4)))
            pred = i_p < rows
            instrs.append(KernelInstruction(dst, (Access(a, (i_p, i_f)),), (pred,)))
        else:  # quasi-affine tile indices that the rules prove affine + dynamic offset
            j = arange(64)[None, :]
            dst = Access(b, (i_p + offs[k % 16], j * 4 + 256 * (k % 8)))
            src = Access(a, ((i_p * 4 + 2) // 2, (j + 64) % 64 + 64 * (k % 4)))
            instrs.append(KernelInstruction(dst, (src,), (i_p >= 1,)))
    return instrs


def _time(n: int, cache: bool, repeat: int) -> tuple[float, int]:
    times = []
    hits = 0
    for _ in range(repeat):
        clear_cache()
        cached_combine_index_tiles.cache_clear()
        t0 = time.perf_counter()
        with combine_cache(cache):
            instrs = build_kernel(n)
            result = infer_kernel(instrs)
        times.append(time.perf_counter() - t0)
        assert len(result) == n
        hits = cached_combine_index_tiles.cache_info().hits
    return statistics.median(times), hits


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--instructions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rows = []
    for cache in (True, False):
        t, hits = _time(args.instructions, cache, args.repeat)
        rows.append((cache, t, hits))
    print(f"NKI index inference, {args.instructions} indexed instructions "
          f"({platform.machine()}, Python {platform.python_version()}), median of {args.repeat}\n")
    print("| combine cache | time (s) | per instruction (ms) | combine-cache hits |")
    print("|---|---:|---:|---:|")
    for cache, t, hits in rows:
        print(f"| {'on' if cache else 'off'} | {t:.3f} | {1000 * t / args.instructions:.3f} "
              f"| {hits if cache else '-'} |")


if __name__ == "__main__":
    main()
