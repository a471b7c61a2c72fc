"""benchmarks/run.py --quick runs end to end and writes well-formed results
(the numbers themselves are not asserted: benchmarks never assert timings)."""

import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import run  # noqa: E402
from benchmarks.harness import ORDER  # noqa: E402

STATUSES = {"ok", "n/a", "skipped", "error"}


def test_quick_run_writes_one_row_per_kernel_and_strategy_plus_tables_and_plots(tmp_path, capsys):
    assert run.main(["--quick", "--out", str(tmp_path), "--no-progress", "--no-memory",
                     "--ilp-time-limit", "2"]) == 0
    rows = list(csv.DictReader((tmp_path / "results.csv").open()))
    jobs = run.plan(run.QUICK)
    assert len(rows) == len(jobs) * len(ORDER)
    assert {r["strategy"] for r in rows} == set(ORDER)
    assert {r["status"] for r in rows} <= STATUSES
    for r in rows:
        if r["status"] == "ok":
            assert int(r["bytes_copied"]) >= 0 and float(r["seconds"]) >= 0
    for png in ("bytes_by_family.png", "optimize_time.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = capsys.readouterr().out
    assert "## Bytes copied per family" in out and "## Optimize time vs size" in out
    assert out == (tmp_path / "results.md").read_text() + "\n"
