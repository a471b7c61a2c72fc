"""benchmarks/bench_nki.py (the 1,000-instruction benchmark) runs, reports both cache
settings, and the combine cache never changes what is inferred (timings are not asserted)."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import bench_nki  # noqa: E402
from egraph_tiles.nki import combine_cache, infer_kernel  # noqa: E402
from egraph_tiles.nki.index.combine import cached_combine_index_tiles  # noqa: E402
from egraph_tiles.nki.index.solver import clear_cache  # noqa: E402


def test_bench_nki_prints_one_row_with_and_one_without_the_combine_cache(capsys):
    bench_nki.main(["--instructions", "40", "--repeat", "1"])
    out = capsys.readouterr().out
    assert "40 indexed instructions" in out
    on = re.search(r"^\| on \| [\d.]+ \| [\d.]+ \| (\d+) \|$", out, re.M)
    off = re.search(r"^\| off \| [\d.]+ \| [\d.]+ \| - \|$", out, re.M)
    assert on and off
    assert int(on.group(1)) > 0  # the unrolled kernel's repeated patterns hit the cache


def _infer(n: int, cache: bool):
    clear_cache()
    cached_combine_index_tiles.cache_clear()
    with combine_cache(cache):
        return [(r.dst.pattern, str(r.dst.offset)) for r in infer_kernel(bench_nki.build_kernel(n))]


def test_bench_nki_kernel_infers_the_same_patterns_with_and_without_the_cache():
    assert _infer(48, True) == _infer(48, False)
