"""The loop-heavy benchmark family: static and dynamic bytes of every strategy.

    python benchmarks/bench_loops.py            # sizes 30, 100, 300; writes results/loops.md
    python benchmarks/bench_loops.py --quick    # size 30 only, nothing written

Dynamic bytes are each inserted copy × the executions of its place (constant trip counts exact,
symbolic ones and ``if`` arms by ``egraph_tiles.cost.loops.CostModel``'s defaults).  The run
checks the issue's bar and says so at the end: the e-graph (greedy and ILP) moves no more
dynamic bytes than the seed policy on every kernel, and strictly fewer on the loop-invariant
family.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import harness, safety  # noqa: E402
from benchmarks.corpus import FAMILIES, LOOP_FAMILIES, SCALAR_ARGS, generate  # noqa: E402
from benchmarks.harness import GREEDY, ILP, ORDER, SEED  # noqa: E402


def run(sizes: tuple[int, ...], seed: int = 0) -> list[harness.Row]:
    import egraph_tiles as et

    strategies = harness.strategies(ilp_time_limit=30.0)
    rows = []
    for fam in LOOP_FAMILIES:
        for n in sizes:
            k = generate(fam, n, seed)
            prog = et.parse_program(k.text, filename=f"{k.name}.py")
            oracle = safety.Oracle(prog, SCALAR_ARGS) if safety.available() else None
            for s in strategies:
                row = harness.measure(k.name, fam, prog, s, oracle, 100, False)
                row.extra = {"size": n}
                rows.append(row)
    return rows


def table(rows: list[harness.Row]) -> str:
    idx = {(r.kernel, r.strategy): r for r in rows}
    kernels = [(r.kernel, r.family, r.statements) for r in rows if r.strategy == SEED]
    head = "| kernel | stmts | " + " | ".join(f"{s} static / dynamic B" for s in ORDER) + \
        " | hw verdict (greedy) |"
    lines = [head, "|" + "---|" * (len(ORDER) + 3)]
    for k, fam, n in kernels:
        cells = []
        for s in ORDER:
            r = idx.get((k, s))
            cells.append(r.status if r is None or r.status != "ok"
                         else f"{r.bytes_copied:,} / {r.dynamic_bytes:,}")
        g = idx.get((k, GREEDY))
        lines.append(f"| {fam} | {n} | " + " | ".join(cells) + f" | {g.verdict if g else 'n/a'} |")
    return "\n".join(lines)


def bar(rows: list[harness.Row]) -> list[str]:
    """Where the e-graph misses the issue's bar (empty: met)."""
    idx = {(r.kernel, r.strategy): r for r in rows}
    misses = []
    for r in rows:
        if r.strategy not in (GREEDY, ILP) or r.status != "ok":
            continue
        seed = idx[(r.kernel, SEED)]
        if r.dynamic_bytes > seed.dynamic_bytes:
            misses.append(f"{r.kernel} {r.strategy}: {r.dynamic_bytes} > seed {seed.dynamic_bytes}")
        if FAMILIES[r.family].invariant and not r.dynamic_bytes < seed.dynamic_bytes:
            misses.append(f"{r.kernel} {r.strategy}: not below the seed on the invariant family")
        if r.verdict not in (None, "ok"):
            misses.append(f"{r.kernel} {r.strategy}: hardware model {r.verdict}")
    return misses


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "loops.md")
    a = ap.parse_args(argv)
    sizes = (30,) if a.quick else (30, 100, 300)
    t0 = time.perf_counter()
    rows = run(sizes)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}"
    misses = bar(rows)
    text = "\n".join([
        f"# Loop-heavy kernels: static / dynamic bytes ({when}, {machine}, "
        f"{time.perf_counter() - t0:.0f} s)", "", table(rows), "",
        "Bar (e-graph ≤ seed in dynamic bytes on every kernel, < on loop_invariant, hardware "
        "model ok): " + ("met" if not misses else "MISSED — " + "; ".join(misses)), ""])
    print(text)
    if not a.quick:
        a.out.write_text(text)
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
