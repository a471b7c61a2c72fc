"""Whole kernel libraries: `egraph-tiles optimize|check PATH...`, `-j`, `--timeout`, `--out-dir`,
`--in-place`, `--check`, `-` for standard input, `--json`, `--version`, and
`egraph_tiles.optimize_files`."""

import io
import json
import os
import re
import time

import pytest
from test_cli_optimize import ACC_ROW_WINDOW, HEAD_EXT, KERNEL

import egraph_tiles as et
from egraph_tiles import batch
from egraph_tiles.cli import main

BROKEN = KERNEL.replace("pl.tile.muls(head, 0.5)", "pl.tile.muls(head, 0.5")  # line 9: never closed
NOT_A_KERNEL = "def helper():\n    return 1\n"


@pytest.fixture
def lib(tmp_path):
    """A kernel library: good kernels at two depths, a syntax error, a rejected Acc window, a
    helper module without @pl.program, and a kernel in a hidden folder."""
    root = tmp_path / "lib"
    (root / "attn").mkdir(parents=True)
    (root / ".cache").mkdir()
    (root / "a.py").write_text(KERNEL)
    (root / "attn" / "b.py").write_text(KERNEL.replace("0.5", "0.25"))
    (root / "attn" / "broken.py").write_text(BROKEN)
    (root / "acc.py").write_text(ACC_ROW_WINDOW)
    (root / "helpers.py").write_text(NOT_A_KERNEL)
    (root / ".cache" / "c.py").write_text(KERNEL)
    return root


def one_file_output(path, capsys) -> str:
    assert main(["optimize", str(path)]) == 0
    return capsys.readouterr().out


# --------------------------------------------------------------------------- discovery


def test_a_folder_yields_its_kernels_sorted_skipping_helpers_and_hidden_folders(lib):
    found = [s.rel.as_posix() for s in batch.discover([str(lib)])]
    assert found == ["a.py", "acc.py", "attn/b.py", "attn/broken.py"]


def test_a_path_given_twice_is_optimized_once(lib):
    sources = batch.discover([str(lib / "a.py"), str(lib), str(lib / "a.py")])
    assert [s.path for s in sources].count(str(lib / "a.py")) == 1


# --------------------------------------------------------------------------- optimize PATH...


def test_out_dir_writes_the_good_kernels_mirroring_the_tree_and_reports_the_bad(lib, tmp_path,
                                                                               capsys):
    out = tmp_path / "out"
    assert main(["optimize", str(lib), "--out-dir", str(out), "-j", "1"]) == 1
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.py"))
    assert written == ["a.py", "attn/b.py"]
    err = capsys.readouterr().err
    assert f"error: {lib / 'attn' / 'broken.py'}:9:" in err and "never closed" in err
    assert f"error: {lib / 'acc.py'}:13:9: " in err and "line 13" in err
    assert f"{lib / 'a.py'}: ok" in err


def test_out_dir_text_is_identical_to_a_one_file_run(lib, tmp_path, capsys):
    out = tmp_path / "out"
    main(["optimize", str(lib), "--out-dir", str(out), "-j", "1"])
    capsys.readouterr()
    assert (out / "attn" / "b.py").read_text() == one_file_output(lib / "attn" / "b.py", capsys)


def test_in_place_rewrites_each_changed_file_and_leaves_the_bad_ones(lib, capsys):
    assert main(["optimize", str(lib / "a.py"), str(lib / "attn"), "--in-place", "-j", "1"]) == 1
    assert HEAD_EXT in (lib / "a.py").read_text() and HEAD_EXT in (lib / "attn" / "b.py").read_text()
    assert (lib / "attn" / "broken.py").read_text() == BROKEN


def test_check_exits_1_when_optimizing_would_change_a_file_and_writes_nothing(lib, capsys):
    assert main(["optimize", str(lib / "a.py"), str(lib / "attn" / "b.py"), "--check", "-j", "1"]) == 1
    assert f"{lib / 'a.py'}: would change" in capsys.readouterr().err
    assert (lib / "a.py").read_text() == KERNEL


def test_check_exits_0_once_the_files_are_optimized(lib, capsys):
    files = [str(lib / "a.py"), str(lib / "attn" / "b.py")]
    main(["optimize", *files, "--in-place", "-j", "1"])
    assert main(["optimize", *files, "--check", "-j", "1"]) == 0


def test_check_on_one_file_exits_1_when_it_would_change(lib, capsys):
    assert main(["optimize", str(lib / "a.py"), "--check"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "would change" in captured.err


def test_standard_input_is_optimized_to_standard_output(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(KERNEL))
    assert main(["optimize", "-"]) == 0
    out = capsys.readouterr().out
    f = tmp_path / "k.py"
    f.write_text(KERNEL)
    assert out == one_file_output(f, capsys) and HEAD_EXT in out


def test_bad_standard_input_is_reported_as_stdin_line_col(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(BROKEN))
    assert main(["optimize", "-"]) == 1
    assert "error: <stdin>:9:" in capsys.readouterr().err


def test_standard_input_with_o_writes_the_file(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(KERNEL))
    assert main(["optimize", "-", "-o", str(tmp_path / "k_opt.py")]) == 0
    assert HEAD_EXT in (tmp_path / "k_opt.py").read_text() and capsys.readouterr().out == ""


def test_a_missing_file_among_several_is_reported_and_the_others_written(lib, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["optimize", str(lib / "nope.py"), str(lib / "a.py"), "--out-dir", str(out),
                 "-j", "1"]) == 1
    assert "nope.py: no such file" in capsys.readouterr().err and (out / "a.py").is_file()


def test_plain_lines_off_a_terminal_one_per_file_in_input_order(lib, capsys):
    main(["optimize", str(lib), "--check", "-j", "1"])
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith(("error:", str(lib)))]
    order = ["a.py", "acc.py", "b.py", "broken.py"]
    assert len(lines) == 4 and all(name in ln for name, ln in zip(order, lines))


def test_summary_table_counts_files_errors_functions_slices_and_bytes(lib, capsys):
    main(["optimize", str(lib), "--check", "-j", "1"])
    err = capsys.readouterr().err
    table = err[err.rindex("summary"):]
    for row in ("files          4", "errors         2", "functions      2",
                "slices         2 view, 2 copy, 0 folded, 1 rejected", "bytes copied   0 -> 128"):
        assert row in table, (row, table)


def test_json_is_one_document_per_file_and_totals(lib, capsys):
    assert main(["optimize", str(lib), "--json", "-j", "1"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["versions"]["egglog"] == "13.2.0"
    files = {os.path.basename(f["path"]): f for f in doc["files"]}
    assert files["a.py"]["status"] == "ok" and files["a.py"]["copy"] == 1
    assert files["broken.py"]["stage"] == "parse" and files["acc.py"]["stage"] == "reject"
    t = doc["totals"]
    assert (t["files"], t["errors"], t["rejected"]) == (4, 2, 1)
    assert t["bytes_after"] == sum(f["bytes_after"] for f in doc["files"]) == 128


def test_explain_with_several_files_heads_each_explanation_with_its_path(lib, capsys):
    main(["optimize", str(lib / "a.py"), str(lib / "attn" / "b.py"), "--explain", "-j", "1"])
    out = capsys.readouterr().out
    a, b = out.index(f"== {lib / 'a.py'} =="), out.index(f"== {lib / 'attn' / 'b.py'} ==")
    assert a < b and out.count("head as tile.muls operand 0: copy") == 2


# --------------------------------------------------------------------------- check PATH...


def test_check_of_a_folder_exits_1_naming_each_bad_file(lib, capsys):
    assert main(["check", str(lib), "-j", "1"]) == 1
    err = capsys.readouterr().err
    assert "broken.py:9:" in err and "acc.py" in err and f"{lib / 'a.py'}: ok" in err


def test_check_of_a_folder_of_good_kernels_exits_0_and_writes_nothing(lib, capsys):
    assert main(["check", str(lib / "attn" / "b.py"), str(lib / "a.py"), "-j", "1"]) == 0
    assert capsys.readouterr().out == "" and (lib / "a.py").read_text() == KERNEL


def test_check_fails_a_kernel_the_optimizer_rejects(lib, capsys):
    assert main(["check", str(lib / "acc.py")]) == 1
    assert "line 13" in capsys.readouterr().err


# --------------------------------------------------------------------------- usage: exit 2


@pytest.mark.parametrize("argv, says", [
    (["optimize", "LIB", "-o", "x.py"], "-o takes one input"),
    (["optimize", "LIB"], "several inputs"),
    (["optimize", "LIB", "--check", "--dot", "g.dot"], "--dot takes one input"),
    (["optimize", "LIB/a.py", "--check", "--in-place"], "--check writes nothing"),
    (["optimize", "-", "--in-place"], "standard input has no file"),
    (["optimize", "LIB/a.py", "LIB/attn/../a.py", "LIB/attn/b.py"], "several inputs"),
])
def test_usage_errors_exit_2_and_say_why(lib, capsys, argv, says):
    argv = [a.replace("LIB", str(lib)) for a in argv]
    assert main(argv) == 2
    assert says in capsys.readouterr().err


def test_two_inputs_written_to_the_same_out_dir_file_is_a_usage_error(lib, tmp_path, capsys):
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "a.py").write_text(KERNEL)
    argv = ["optimize", str(lib / "a.py"), str(tmp_path / "other" / "a.py"), "--out-dir",
            str(tmp_path / "out")]
    assert main(argv) == 2 and "would both be written" in capsys.readouterr().err


@pytest.mark.parametrize("flag", [["-j", "0"], ["--timeout", "-1"], ["--bogus"]])
def test_bad_flag_values_exit_2(lib, capsys, flag):
    assert main(["optimize", str(lib / "a.py"), *flag]) == 2


def test_version_names_the_package_and_egglog(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("egraph-tiles 0.") and "(egglog 13.2.0)" in out


# --------------------------------------------------------------------------- parallel, timeout


def test_parallel_results_equal_serial_results_in_input_order(lib):
    def view(results):
        return [(r.path, r.status, r.stage, r.error, r.output, r.counts()) for r in results]
    serial = et.optimize_files([lib], jobs=1)
    parallel = et.optimize_files([lib], jobs=2)
    assert view(parallel) == view(serial)
    assert [os.path.basename(r.path) for r in serial] == ["a.py", "acc.py", "b.py", "broken.py"]


def sleep_on_slow(path: str, text: str, **kw) -> et.FileResult:
    """A work function whose file named slow.py never finishes in time (the test's slow hook)."""
    if path.endswith("slow.py"):
        time.sleep(60)
    return batch.optimize_text(path, text, **kw)


def exit_on_crash(path: str, text: str, **kw) -> et.FileResult:
    """A work function whose file named crash.py kills its worker process."""
    if path.endswith("crash.py"):
        os._exit(3)
    return batch.optimize_text(path, text, **kw)


def test_a_slow_file_times_out_and_the_others_finish(tmp_path):
    for name in ("a.py", "slow.py", "z.py"):
        (tmp_path / name).write_text(KERNEL)
    t0 = time.monotonic()
    results = batch.run(batch.discover([str(tmp_path)]), jobs=2, timeout=5, work=sleep_on_slow)
    assert [r.status for r in results] == ["ok", "timeout", "ok"]
    assert "timed out after 5 s" in results[1].error and time.monotonic() - t0 < 30


def test_a_crashing_worker_fails_its_file_only(tmp_path):
    for name in ("a.py", "crash.py", "z.py"):
        (tmp_path / name).write_text(KERNEL)
    results = batch.run(batch.discover([str(tmp_path)]), jobs=1, timeout=30, work=exit_on_crash)
    assert [r.status for r in results] == ["ok", "error", "ok"]
    assert results[1].stage == "crash" and "exit code 3" in results[1].error


def test_timeout_flag_stops_a_large_kernel(tmp_path, capsys):
    body = "".join(f"        h{i} = pl.tile.slice(local, [16, 1], [0, 1])\n"
                   f"        s{i} = pl.tile.muls(h{i}, 0.5)\n" for i in range(3000))
    big = tmp_path / "big.py"
    big.write_text(KERNEL.split("        head =")[0] + body)
    assert main(["optimize", str(big), "--timeout", "0.05"]) == 1
    assert "timed out after 0.05 s" in capsys.readouterr().err


def test_explain_with_json_goes_into_the_document_per_file(lib, capsys):
    main(["optimize", str(lib / "a.py"), str(lib / "attn" / "b.py"), "--explain", "--json",
          "-j", "1"])
    doc = json.loads(capsys.readouterr().out)
    assert all("head as tile.muls operand 0: copy" in f["explain"] for f in doc["files"])


def test_on_a_terminal_a_progress_bar_replaces_the_ok_lines(lib, monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    main(["optimize", str(lib / "a.py"), str(lib / "attn"), "--check", "-j", "1"])
    err = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", capsys.readouterr().err)  # colours
    assert "3/3" in err and "━" in err
    assert f"{lib / 'a.py'}: would change" in err and f"{lib / 'a.py'}: ok" not in err


def test_out_dir_with_two_workers_writes_what_one_writes_and_reports_in_the_same_order(
        lib, tmp_path, capsys):
    def run(jobs):
        out = tmp_path / f"out{jobs}"
        assert main(["optimize", str(lib), "--out-dir", str(out), "-j", str(jobs)]) == 1
        lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith(("error", str(lib)))]
        return {p.relative_to(out): p.read_text() for p in out.rglob("*.py")}, lines
    assert run(2) == run(1)


def test_check_json_is_one_document_and_writes_no_program(lib, capsys):
    assert main(["check", str(lib / "a.py"), str(lib / "acc.py"), "--json", "-j", "1"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [f["status"] for f in doc["files"]] == ["ok", "error"] and doc["totals"]["rejected"] == 1
