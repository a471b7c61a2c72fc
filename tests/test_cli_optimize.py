"""`egraph-tiles optimize KERNEL.py [-o OUT] [--explain] [--json] [--dot FILE]`."""

import json
import subprocess
import sys

import pytest

from egraph_tiles.cli import main
from dslkit import kernel

KERNEL = kernel("x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]", """
local = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
head = pl.tile.slice(local, [16, 1], [0, 1])
scaled = pl.tile.muls(head, 0.5)
aligned = pl.tile.slice(local, [16, 8], [0, 8])
doubled = pl.tile.muls(aligned, 2.0)
out = pl.store(doubled, [0, 0], out)
return out
""")

HEAD_EXT = ("head_ext = "
            "pl.tile.extract(local, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)")


@pytest.fixture
def kfile(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(KERNEL)
    return f


def test_optimize_prints_the_optimized_program_and_exits_0(kfile, capsys):
    assert main(["optimize", str(kfile)]) == 0
    out = capsys.readouterr().out
    assert HEAD_EXT in out and "pl.tile.slice(local, [16, 8], [0, 8])" in out


def test_optimize_with_output_writes_the_file_and_prints_nothing(kfile, tmp_path, capsys):
    dest = tmp_path / "opt.py"
    assert main(["optimize", str(kfile), "-o", str(dest)]) == 0
    assert HEAD_EXT in dest.read_text() and capsys.readouterr().out == ""


def test_optimize_output_file_passes_check(kfile, tmp_path, capsys):
    dest = tmp_path / "opt.py"
    main(["optimize", str(kfile), "-o", str(dest)])
    capsys.readouterr()
    assert main(["check", str(dest)]) == 0
    assert main(["optimize", str(dest), "--check"]) == 0


def test_explain_lists_every_slice_with_its_decision_and_reason(kfile, capsys):
    assert main(["optimize", str(kfile), "--explain"]) == 0
    err = capsys.readouterr().err
    assert "head as tile.muls operand 0: copy" in err and "not provably" in err
    assert "aligned as tile.muls operand 0: view" in err and "multiple of 256" in err
    assert "head as slice statement: dropped" in err


def test_json_report_has_decisions_bytes_egraph_size_and_time(kfile, capsys):
    assert main(["optimize", str(kfile), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == 1 and doc["command"] == "optimize"
    (entry,) = doc["files"]
    (fn,) = entry["functions"]
    assert fn["function"] == "kernel"
    assert (fn["bytes_before"], fn["bytes_after"]) == (0, 64)
    assert fn["enodes"] > 0 and fn["seconds"] >= 0 and fn["limit_hit"] is None
    decisions = {(d["slice"], d["decision"]) for d in fn["decisions"]}
    assert {("head", "copy"), ("aligned", "view"), ("head", "dropped")} <= decisions


def test_dot_writes_the_graphviz_file_it_names(kfile, tmp_path, capsys):
    assert main(["optimize", str(kfile), "--dot", str(tmp_path / "g.dot")]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dot", "k.py"]
    text = (tmp_path / "g.dot").read_text()
    assert text.lstrip().startswith(("digraph", "strict digraph")) and "->" in text


def test_dot_into_a_missing_directory_exits_1_with_a_clear_message(kfile, tmp_path, capsys):
    assert main(["optimize", str(kfile), "--dot", str(tmp_path / "nope" / "g.dot")]) == 1
    err = capsys.readouterr().err
    assert "does not exist" in err and "e-graph failed" not in err


def test_optimize_of_bad_input_exits_1_with_file_line_col(tmp_path, capsys):
    f = tmp_path / "bad.py"
    f.write_text(KERNEL.replace("pl.tile.muls(head, 0.5)", "pl.tile.muls(head, 0.5"))
    assert main(["optimize", str(f)]) == 1
    assert f"{f}:9:" in capsys.readouterr().err


ACC_ROW_WINDOW = kernel("a: pl.Tensor[[16, 16], pl.BF16], b: pl.Tensor[[16, 32], pl.BF16]", """
a_m = pl.tile.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
b_m = pl.tile.load(b, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
a_l = pl.tile.extract(a_m, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
b_r = pl.tile.extract(b_m, 0, 0, shape=[16, 32], target_memory=pl.Mem.Right)
big = pl.tile.create([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)
win = pl.tile.slice(big, [16, 32], [0, 0])
r = pl.tile.matmul_acc(win, a_l, b_r)
""")


def test_optimize_rejecting_an_acc_window_exits_1_naming_the_statement(tmp_path, capsys):
    f = tmp_path / "acc.py"
    f.write_text(ACC_ROW_WINDOW)
    assert main(["optimize", str(f)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:") and "Traceback" not in err and "line 13" in err


def test_console_module_optimize_runs_as_a_subprocess(kfile):
    r = subprocess.run([sys.executable, "-m", "egraph_tiles.cli", "optimize", str(kfile), "--explain"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and HEAD_EXT in r.stdout and "copy" in r.stderr


DYNAMIC_ROW = kernel("x: pl.Tensor[[16, 64], pl.FP32], row_off: pl.Scalar[pl.INDEX]", """
t = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
row = pl.tile.slice(t, [1, 64], [row_off, 0])
y = pl.tile.muls(row, 2.0)
""")


def explain(tmp_path, text: str) -> str:
    """What ``python -m egraph_tiles.cli optimize FILE --explain`` prints on stderr for a file
    holding ``text`` (the run must succeed)."""
    src = tmp_path / "k.py"
    src.write_text(text)
    r = subprocess.run([sys.executable, "-m", "egraph_tiles.cli", "optimize", str(src), "--explain"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_explain_shows_the_row_stride_proof_for_a_dynamic_row_offset(tmp_path):
    assert ("row offset row_off (multiple of 1) × 64 cols × 32 bits: multiple of 256 → view"
            in explain(tmp_path, DYNAMIC_ROW))


OPAQUE_USE = kernel("x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]", """
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
q = pl.tile.slice(v, [16, 8], [0, 8])
pld.tile.remote_scatter(q, out)
""")


def test_explain_says_an_opaque_operand_belongs_to_an_unclassified_op(tmp_path):
    assert ("q as pld.tile.remote_scatter operand 0 (unclassified op: it may write its operand): view"
            in explain(tmp_path, OPAQUE_USE))
