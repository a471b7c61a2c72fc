"""benchmarks/bench_idx_normal_form.py loads its offsets through the tile pass's index tables and
runs both normalizations on a few terms (timings are not asserted)."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import bench_idx_normal_form  # noqa: E402


def test_bench_idx_normal_form_prints_a_row_per_size(capsys):
    bench_idx_normal_form.main(["--terms", "20", "--repeat", "1"])
    out = capsys.readouterr().out
    assert re.search(r"^\| 20 \| [\d.]+ \| [\d.]+ \| [\d.]+× \|$", out, re.M), out
