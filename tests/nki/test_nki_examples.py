"""The three legacy kernels of examples/nki/: analyzed without a finding, every access verified
against numpy, migrated completely (no arange, mgrid or mask= left) and the migrated accesses as
the README shows them."""

import ast
from pathlib import Path

import pytest

from egraph_tiles.nki.kernels.analyze import analyze_kernel, verify_report
from egraph_tiles.nki.kernels.migrate import migrate_kernel

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "nki"

CASES = {
    "spmd_add.py": (dict(shapes={"a": (512, 1024), "b": (512, 1024), "out": (512, 1024)},
                         grid=(4, 2)),
                    ["a[128*row:128*row + 128, 512*col:512*col + 512]",
                     "b[128*row:128*row + 128, 512*col:512*col + 512]",
                     "out[128*row:128*row + 128, 512*col:512*col + 512]"]),
    "block_transpose.py": (dict(shapes={"x": (256, 128), "out": (256, 128)}),
                           ["x.ap([[128, 128], [16, 8], [1, 16]], offset=16384*t)",
                            "out.ap([[128, 128], [1, 8], [8, 16]], offset=16384*t)"]),
    "window_sum.py": (dict(shapes={"x": (300, 64), "out": (300, 61)}),
                      ["x.ap([[64, min(128, 300 - 128*t)], [1, 61], [1, 4]], offset=8192*t)",
                       "out[128*t:min(300, 128*t + 128), 0:61]"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_kernel_is_analyzed_verified_and_migrated(name):
    options, migrated = CASES[name]
    report = analyze_kernel((EXAMPLES / name).read_text(), filename=name, **options)
    assert report.findings == []
    assert verify_report(report) == (len(report.accesses), [])
    mig = migrate_kernel(report)
    assert mig.findings == []
    assert [mig.texts[id(r)] for r in report.accesses] == migrated
    tree = ast.parse(mig.source)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in ("arange", "mgrid")]
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.keyword) and n.arg == "mask"]


def test_an_example_with_a_tensor_too_small_reports_the_overrun():
    report = analyze_kernel((EXAMPLES / "spmd_add.py").read_text(),
                            shapes={"a": (500, 1024), "b": (512, 1024), "out": (512, 1024)},
                            grid=(4, 2))
    assert [(f.kind, "reaches index 511 along dimension 0" in f.message)
            for f in report.findings] == [("out-of-bounds", True)]
