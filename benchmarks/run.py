"""Compare slice-canonicalization strategies on the benchmark corpus, in one run.

    python benchmarks/run.py --quick      # < 1 minute; what CI runs
    python benchmarks/run.py              # the full run (progress bar), results/ updated

Strategies: copy-everything, view-everything, seed policy (plain Python), e-graph greedy
(``et.optimize``) and e-graph ILP (``ILPExtractor`` through the engine's ``Extractor``
interface). Metrics per kernel and strategy: bytes copied (inserted ``tile.extract``
bytes, each statement position once — see ``egraph_tiles.cost.metrics``), dynamic bytes (each
copy × the executions of its place), extract statements,
slices left, the hardware model's verdict and unsafe-view count, optimize wall time, peak
Python memory (tracemalloc, a second run), e-graph nodes / classes.

Outputs: markdown tables on stdout (and ``results.md``), ``results.csv``,
``bytes_by_family.png`` and ``optimize_time.png`` in the output directory.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import harness, report, safety  # noqa: E402
from benchmarks.corpus import FAMILIES, MIXED, SCALAR_ARGS, SIZES, generate  # noqa: E402


@dataclass
class Config:
    family_sizes: tuple[int, ...]
    scaling_sizes: tuple[int, ...]
    seed: int = 0
    ilp_time_limit: float = 10.0
    egraph_max: int | None = None
    ilp_max: int | None = None
    max_probe: int = 400  # windows probed one by one for the unsafe-view count
    sim_max: int = 3000  # kernels above this many statements skip the hardware model
    memory: bool = True
    out: Path = ROOT / "benchmarks" / "results"
    progress: bool = True


QUICK = Config(family_sizes=(30,), scaling_sizes=(10, 30, 100), ilp_time_limit=5.0,
               max_probe=100, out=ROOT / "benchmarks" / "results" / "quick", progress=False)
FULL = Config(family_sizes=(100, 1000), scaling_sizes=SIZES, ilp_time_limit=30.0)


def plan(cfg: Config) -> list[tuple[str, str, int]]:
    """(series, family, size) of every kernel of the run."""
    jobs = [("family", f, n) for n in cfg.family_sizes for f in (*FAMILIES, MIXED)]
    jobs += [("scaling", MIXED, n) for n in cfg.scaling_sizes]
    return jobs


def run(cfg: Config, log=print) -> list[harness.Row]:  # noqa: ANN001
    import egraph_tiles as et

    strategies = harness.strategies(cfg.ilp_time_limit, cfg.egraph_max, cfg.ilp_max)
    for s in strategies:
        if not s.available:
            log(f"note: {s.name} is n/a — {s.why_unavailable}")
    sim = safety.available()
    if not sim:
        log("note: egraph_tiles.sim not available — hardware-model verdicts are n/a")
    jobs = plan(cfg)
    rows: list[harness.Row] = []
    progress = None
    if cfg.progress:
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn)

        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), transient=False)
        progress.start()
        task = progress.add_task("benchmarks", total=len(jobs) * len(strategies))
    try:
        for series, fam, size in jobs:
            k = generate(fam, size, cfg.seed)
            prog = et.parse_program(k.text, filename=f"{k.name}.py")
            n = harness.count_statements(prog)
            oracle = safety.Oracle(prog, SCALAR_ARGS) if sim and n <= cfg.sim_max else None
            for s in strategies:
                if progress is not None:
                    progress.update(task, description=f"{fam:>15} {n:>6} {s.name:<16}")
                row = harness.measure(k.name, fam, prog, s, oracle, cfg.max_probe, cfg.memory)
                row.extra = {"series": series, "size": size}
                rows.append(row)
                if progress is not None:
                    progress.advance(task)
    finally:
        if progress is not None:
            progress.stop()
    return rows


def write(rows: list[harness.Row], cfg: Config, elapsed: float | None) -> str:
    cfg.out.mkdir(parents=True, exist_ok=True)
    machine = f"{platform.machine()}, Python {platform.python_version()}"
    took = "re-plotted from results.csv" if elapsed is None else f"{elapsed:.0f} s"
    parts = [f"# Benchmark results ({date.today().isoformat()}, {machine}, {took})", ""]
    for size in cfg.family_sizes:
        parts += [f"## Bytes copied per family ({size}-statement kernels)", "",
                  report.family_table(rows, size), "",
                  f"## Dynamic bytes per family ({size}-statement kernels: bytes × trip counts)", "",
                  report.family_table(rows, size, "dynamic_bytes"), ""]
    parts += ["## Optimize time vs size (mixed kernels)", "", report.scaling_table(rows), "",
              "## Bars", "", report.bars(rows), "",
              "## Every kernel and strategy", "", report.detail_table(rows), ""]
    text = "\n".join(parts)
    (cfg.out / "results.md").write_text(text)
    report.write_csv(rows, cfg.out / "results.csv")
    report.plot_bytes(rows, max(cfg.family_sizes), cfg.out / "bytes_by_family.png")
    report.plot_time(rows, cfg.out / "optimize_time.png")
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small kernels, under a minute")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="output directory (default benchmarks/results[/quick])")
    ap.add_argument("--ilp-time-limit", type=float)
    ap.add_argument("--ilp-max", type=int, help="skip the ILP above this many statements")
    ap.add_argument("--egraph-max", type=int, help="skip the e-graph above this many statements")
    ap.add_argument("--sizes", type=str, help="comma-separated scaling sizes (mixed family)")
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--replot", action="store_true",
                    help="rewrite results.md and the plots from the output directory's results.csv")
    a = ap.parse_args(argv)
    base = QUICK if a.quick else FULL
    cfg = Config(**{**base.__dict__})
    cfg.seed = a.seed
    if a.out:
        cfg.out = a.out
    if a.ilp_time_limit is not None:
        cfg.ilp_time_limit = a.ilp_time_limit
    if a.ilp_max is not None:
        cfg.ilp_max = a.ilp_max
    if a.egraph_max is not None:
        cfg.egraph_max = a.egraph_max
    if a.sizes:
        cfg.scaling_sizes = tuple(int(x) for x in a.sizes.split(","))
    if a.no_memory:
        cfg.memory = False
    if a.no_progress:
        cfg.progress = False
    if a.replot:
        rows = report.load_csv(cfg.out / "results.csv")
        cfg.family_sizes = tuple(sorted({r.extra["size"] for r in rows
                                         if r.extra["series"] == "family"}))
        print(write(rows, cfg, None))
        return 0
    t0 = time.perf_counter()
    rows = run(cfg, log=lambda m: print(m, file=sys.stderr))
    print(write(rows, cfg, time.perf_counter() - t0))
    print(f"\nwrote {cfg.out}/results.md, results.csv, bytes_by_family.png, optimize_time.png",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
