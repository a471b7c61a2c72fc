"""benchmarks/bench_batch.py (the files-per-second benchmark) runs on a tiny library and
prints one row per -j value (timings are not asserted)."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import bench_batch  # noqa: E402


def test_bench_batch_prints_a_row_per_jobs_value_with_every_file_optimized(capsys):
    bench_batch.main(["--files", "6", "--jobs", "1", "--sizes", "10"])
    out = capsys.readouterr().out
    assert "6 kernels" in out
    num = r"[\d.]+"
    row = rf"^\| 1 \| 6 \| 0 \| {num} \| {num} \| 1\.00× \| {num} \| {num} \| {num} \| [\d,]+ -> [\d,]+ \|$"
    assert re.search(row, out, re.M), out
