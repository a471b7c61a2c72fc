"""benchmarks/run.py --quick runs end to end and writes well-formed results
(the numbers themselves are not asserted: benchmarks never assert timings).

The quick run is done once per module; each test checks one property of its output."""

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import harness, run  # noqa: E402
from benchmarks.corpus import MIXED, generate  # noqa: E402
from benchmarks.harness import ORDER  # noqa: E402

STATUSES = {"ok", "n/a", "skipped", "error"}


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("quick")
    capture = pytest.MonkeyPatch()
    lines: list[str] = []
    real_print = print

    def to_stdout(*a, **k):  # keep what goes to stdout; stderr notes pass through
        if k.get("file") is None:
            lines.append(" ".join(map(str, a)))
        else:
            real_print(*a, **k)

    capture.setattr("builtins.print", to_stdout)
    try:
        code = run.main(["--quick", "--out", str(out), "--no-progress", "--no-memory",
                         "--ilp-time-limit", "2"])
    finally:
        capture.undo()
    rows = list(csv.DictReader((out / "results.csv").open()))
    return code, out, rows, "\n".join(lines)


def test_quick_run_writes_one_row_per_kernel_and_strategy_plus_tables_and_plots(quick):
    code, out, rows, stdout = quick
    assert code == 0
    jobs = run.plan(run.QUICK)
    assert len(rows) == len(jobs) * len(ORDER)
    assert {r["status"] for r in rows} <= STATUSES
    for r in rows:
        if r["status"] == "ok":
            assert int(r["bytes_copied"]) >= 0 and float(r["seconds"]) >= 0
    for png in ("bytes_by_family.png", "optimize_time.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "## Bytes copied per family" in stdout and "## Optimize time vs size" in stdout
    assert stdout + "\n" == (out / "results.md").read_text() + "\n"


def test_the_five_strategies_run_on_every_kernel_of_one_run(quick):
    _, _, rows, _ = quick
    assert ORDER == ("copy-everything", "view-everything", "seed-policy", "egraph-greedy",
                     "egraph-ilp")
    by_kernel: dict[str, set[str]] = {}
    for r in rows:
        if r["status"] == "ok":
            by_kernel.setdefault(r["kernel"], set()).add(r["strategy"])
    assert by_kernel and all(s == set(ORDER) for s in by_kernel.values())


def test_csv_carries_every_metric_the_issue_asks_for(quick):
    _, _, rows, _ = quick
    for col in ("bytes_copied", "extracts", "unsafe_views", "seconds", "peak_kib", "enodes",
                "eclasses"):
        assert col in rows[0], col


def test_egraph_rows_report_egraph_nodes_and_the_ilp_rows_classes(quick):
    _, _, rows, _ = quick
    for r in rows:
        if r["status"] == "ok" and r["strategy"] in ("egraph-greedy", "egraph-ilp"):
            assert int(r["enodes"]) > 0
        if r["status"] == "ok" and r["strategy"] == "egraph-ilp":
            assert int(r["eclasses"]) > 0


def test_scaling_table_reports_the_egraph_to_seed_time_ratio_side_by_side(quick):
    _, _, _, stdout = quick
    header = next(line for line in stdout.splitlines() if line.startswith("| statements |"))
    assert "seed (s)" in header and "greedy (s)" in header and "greedy / seed" in header
    assert "ILP / seed" in header


def test_results_name_the_machine_and_the_date(quick):
    _, out, _, _ = quick
    first = (out / "results.md").read_text().splitlines()[0]
    assert first.startswith("# Benchmark results (20") and "Python" in first


def test_peak_memory_is_measured_when_memory_is_on():
    import egraph_tiles as et

    prog = et.parse_program(generate(MIXED, 10, seed=0).text)
    seed = next(s for s in harness.strategies() if s.name == "seed-policy")
    row = harness.measure("k", MIXED, prog, seed, None, 0, memory=True)
    assert row.peak_kib is not None and row.peak_kib > 0
