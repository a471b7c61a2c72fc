"""The parse benchmark runs and prints its markdown table."""

import importlib.util
from pathlib import Path


def test_bench_parse_prints_a_markdown_row_per_size(capsys):
    path = Path(__file__).parent.parent / "benchmarks" / "bench_parse.py"
    spec = importlib.util.spec_from_file_location("bench_parse_smoke", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(["--sizes", "20", "50", "--repeat", "1"])
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| ") and ln[2].isdigit()]
    assert len(rows) == 2
