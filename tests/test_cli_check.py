"""`egraph-tiles check FILE`: parse, verify and optimize, write nothing; exit 1 on bad input."""

import subprocess
import sys

from egraph_tiles.cli import main

GOOD = """import pypto.language as pl

@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 8], pl.FP32]):
        t = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
        head = pl.tile.slice(t, [16, 1], [0, 1])
"""


def test_check_of_a_good_kernel_writes_nothing_and_exits_0(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(GOOD)
    assert main(["check", str(f)]) == 0
    assert capsys.readouterr() == ("", "") and f.read_text() == GOOD


def test_check_verbose_says_ok_and_prints_the_summary(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(GOOD)
    assert main(["check", str(f), "--verbose"]) == 0
    err = capsys.readouterr().err
    assert f"{f}: ok" in err and "summary" in err


def test_check_reports_a_syntax_error_with_its_location_and_exits_1(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(GOOD + "        u = pl.tile.muls(head,\n")
    assert main(["check", str(f)]) == 1
    err = capsys.readouterr().err
    assert f"{f}:9:" in err and "never closed" in err


def test_check_reports_a_verifier_error_and_exits_1(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(GOOD.replace("[0, 1])", "[0, 8])"))
    assert main(["check", str(f)]) == 1
    assert "lies outside its source" in capsys.readouterr().err


def test_check_of_a_missing_file_exits_1(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.py")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_console_module_runs_check_without_a_traceback(tmp_path):
    f = tmp_path / "k.py"
    f.write_text("@pl.program\nclass K:\n    x = (\n")
    r = subprocess.run([sys.executable, "-m", "egraph_tiles.cli", "check", str(f)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "k.py:3" in r.stderr
