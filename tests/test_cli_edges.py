"""The command line at its edges: closed pipes, Ctrl-C, guard-less scripts, exit codes, what is
read and what is written, messages (file:line:col, the user's own text), `--diff`, `--quiet`,
`--verbose`, colour, `python -m egraph_tiles`, `py.typed`, `str(program)`."""

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from importlib.resources import files

import pytest
from dslkit import kernel
from test_cli_optimize import KERNEL

import egraph_tiles as et
from egraph_tiles.cli import main

PY = [sys.executable, "-m", "egraph_tiles"]


@pytest.fixture
def kfile(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(KERNEL)
    return f


def sh(cmd: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=cwd)


# --------------------------------------------------------------------------- pipes, Ctrl-C


@pytest.mark.parametrize("flags", [["--json"], ["--explain"], [], ["--diff"]])
def test_a_closed_pipe_ends_the_run_without_a_traceback(kfile, tmp_path, flags):
    r = sh(" ".join([*PY, "optimize", str(kfile), *flags, "--no-cache"]) + " | head -1",
           tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr and "Error" not in r.stderr
    assert len(r.stdout.splitlines()) == 1


def test_ctrl_c_stops_the_workers_without_their_tracebacks(tmp_path):
    body = "".join(f"        h{i} = pl.tile.slice(local, [16, 1], [0, 1])\n"
                   f"        s{i} = pl.tile.muls(h{i}, 0.5)\n" for i in range(1500))
    for n in range(100):  # far more work than the 4 s below, however fast the machine
        (tmp_path / f"big{n}.py").write_text(KERNEL.split("        head =")[0] + body)
    p = subprocess.Popen([*PY, "check", str(tmp_path), "-j", "2", "--no-cache"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    time.sleep(4)  # the workers are running
    os.killpg(p.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "Traceback" not in err and "interrupted" in err


# --------------------------------------------------------------------------- optimize_files


def test_optimize_files_runs_from_a_script_without_a_main_guard(tmp_path):
    for n in range(3):
        (tmp_path / "lib" / f"k{n}.py").parent.mkdir(exist_ok=True)
        (tmp_path / "lib" / f"k{n}.py").write_text(KERNEL)
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""\
        import egraph_tiles as et
        print("start")
        results = et.optimize_files({str(tmp_path / "lib")!r}, jobs=2)
        print(len(results), all(r.ok for r in results))
        """))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["start", "3 True"]  # the script ran once, not per worker


def test_optimize_files_takes_one_path_as_a_string(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    (res,) = et.optimize_files(str(tmp_path), jobs=1)
    assert res.ok and res.path == str(tmp_path / "k.py")


# --------------------------------------------------------------------------- exit codes


def test_a_folder_without_kernels_is_an_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["optimize", str(tmp_path / "empty")]) == 1
    err = capsys.readouterr().err
    assert "no kernel found" in err and "several inputs" not in err
    assert main(["check", str(tmp_path / "empty")]) == 1


def test_a_mistyped_path_fails_check(tmp_path, capsys):
    assert main(["check", str(tmp_path / "kernals")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_nki_takes_options_and_the_kernel_path_in_any_order(tmp_path, capsys):
    from test_cli_json import NKI_KERNEL
    f = tmp_path / "n.py"
    f.write_text(NKI_KERNEL)
    assert main(["nki", "--shape", "a=512x64", "out=512x64", str(f)]) == 0
    assert "kernel add_rows" in capsys.readouterr().out


def test_nki_without_a_kernel_path_is_a_usage_error(capsys):
    assert main(["nki", "--shape", "a=512x64"]) == 2


# --------------------------------------------------------------------------- read and written


def test_exclude_skips_matching_files_in_folders(tmp_path, capsys):
    (tmp_path / "gen").mkdir()
    (tmp_path / "a.py").write_text(KERNEL)
    (tmp_path / "gen" / "b.py").write_text(KERNEL)
    (tmp_path / "c_test.py").write_text(KERNEL)
    assert main(["check", str(tmp_path), "--exclude", "gen", "--exclude", "*_test.py",
                 "--json"]) == 0
    import json
    paths = [f["path"] for f in json.loads(capsys.readouterr().out)["files"]]
    assert paths == [str(tmp_path / "a.py")]


def test_an_out_dir_inside_the_input_tree_is_never_read_back(tmp_path, capsys):
    (tmp_path / "a.py").write_text(KERNEL)
    for _ in range(2):
        assert main(["optimize", str(tmp_path), "--out-dir", str(tmp_path / "opt")]) == 0
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.py"))
    assert written == ["a.py", "opt/a.py"]


def test_o_naming_the_input_is_a_usage_error(kfile, capsys):
    assert main(["optimize", str(kfile), "-o", str(kfile)]) == 2
    assert "--in-place" in capsys.readouterr().err and kfile.read_text() == KERNEL


def test_out_dir_onto_the_input_folder_is_a_usage_error(kfile, capsys):
    assert main(["optimize", str(kfile.parent), "--out-dir", str(kfile.parent)]) == 2
    assert kfile.read_text() == KERNEL


# --------------------------------------------------------------------------- messages


def test_an_unknown_op_is_named_at_its_own_line_with_a_did_you_mean(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(kernel("x: pl.Tensor[[16, 8], pl.FP32]", """
        t = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
        u = pl.tlie.muls(t, 2.0)
        """))
    assert main(["check", str(f)]) == 1
    err = capsys.readouterr().err
    assert f"{f}:8:13: unknown op pl.tlie.muls (did you mean pl.tile.muls?)" in err


def test_an_unknown_op_whose_result_is_unused_still_fails(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(kernel("x: pl.Tensor[[16, 8], pl.FP32]", """
        t = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
        pl.tile.frobnicate(t, 2.0)
        """))
    assert main(["check", str(f)]) == 1
    assert f"{f}:8:9: unknown op pl.tile.frobnicate" in capsys.readouterr().err


def test_a_verify_error_has_a_column_and_quotes_the_users_text(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(kernel("x: pl.Tensor[[16, 8], pl.FP32]", """
        t = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
        head = pl.tile.slice(t, [16, 1], [0, 8])
        """))
    assert main(["check", str(f)]) == 1
    err = capsys.readouterr().err
    assert f"error: {f}:8:9: " in err and "verify: verify:" not in err
    assert "statement `head = pl.tile.slice(t, [16, 1], [0, 8])`" in err
    assert "pl.Tile[" not in err  # not our reprint


def test_explain_locates_each_decision_as_file_line_col(kfile, capsys):
    assert main(["optimize", str(kfile), "--explain"]) == 0
    err = capsys.readouterr().err
    assert f"{kfile}:9:31: head as tile.muls operand 0: copy" in err
    assert "[line" not in err


def test_nki_findings_carry_no_doubled_prefix(tmp_path, capsys):
    from test_cli_json import NKI_KERNEL
    f = tmp_path / "n.py"
    f.write_text(NKI_KERNEL)
    assert main(["nki", str(f), "--shape", "a=300x64", "out=512x64"]) == 1
    out = capsys.readouterr().out
    assert "out of bounds" in out and "out-of-bounds: out of bounds" not in out


# --------------------------------------------------------------------------- --diff


def test_diff_applies_with_patch(kfile, tmp_path, capsys):
    assert main(["optimize", str(kfile), "--diff"]) == 0
    diff = capsys.readouterr().out
    assert diff.startswith(f"--- {kfile}\n+++ {kfile}\n")
    expected = et.optimize_files(str(kfile), jobs=1)[0].output
    if shutil.which("patch"):
        r = subprocess.run(["patch", "-p0", "-s"], input=diff, text=True, cwd="/",
                           capture_output=True)
        assert r.returncode == 0, r.stderr
        assert kfile.read_text() == expected
    else:  # no patch program: apply the hunks as patch would
        assert apply_unified(KERNEL, diff) == expected


def apply_unified(text: str, diff: str) -> str:
    """``text`` with a unified diff's hunks applied (context checked)."""
    old, out, i = text.splitlines(keepends=True), [], 0
    lines = diff.splitlines(keepends=True)[2:]
    for line in lines:
        if line.startswith("@@"):
            start = int(re.match(r"@@ -(\d+)", line).group(1)) - 1
            out += old[i:start]
            i = start
        elif line.startswith((" ", "-")):
            assert old[i] == line[1:], (old[i], line)
            i += 1
            if line[0] == " ":
                out.append(line[1:])
        elif line.startswith("+"):
            out.append(line[1:])
    return "".join(out + old[i:])


def test_the_diff_hunks_rebuild_the_optimized_text(kfile, capsys):
    assert main(["optimize", str(kfile), "--diff"]) == 0
    diff = capsys.readouterr().out
    assert apply_unified(KERNEL, diff) == et.optimize_files(str(kfile), jobs=1)[0].output


def test_diff_of_a_file_that_needs_no_change_is_empty(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(kernel("x: pl.Tensor[[16, 16], pl.FP32]", """
        t = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        v = pl.tile.slice(t, [16, 8], [0, 8])
        y = pl.tile.muls(v, 2.0)
        """))
    assert main(["optimize", str(f), "--diff"]) == 0
    assert capsys.readouterr().out == ""


# --------------------------------------------------------------------------- quiet, verbose, colour


def test_quiet_prints_only_errors(tmp_path, capsys):
    (tmp_path / "a.py").write_text(KERNEL)
    (tmp_path / "b.py").write_text("@pl.program\nclass K:\n    x = (\n")
    assert main(["check", str(tmp_path), "-q", "-j", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'b.py'}:3:") and "summary" not in err
    assert ": ok" not in err


def test_verbose_reports_one_file_and_its_summary(kfile, capsys):
    assert main(["optimize", str(kfile), "--check", "-v"]) == 1
    err = capsys.readouterr().err
    assert f"{kfile}: would change" in err and "summary" in err


def test_no_colour_off_a_terminal(tmp_path, capsys):
    (tmp_path / "b.py").write_text("@pl.program\nclass K:\n    x = (\n")
    main(["check", str(tmp_path / "b.py")])
    assert "\x1b[" not in capsys.readouterr().err


def test_colour_on_a_terminal(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    (tmp_path / "b.py").write_text("@pl.program\nclass K:\n    x = (\n")
    main(["check", str(tmp_path / "b.py")])
    err = capsys.readouterr().err
    assert "\x1b[" in err and "error" in re.sub(r"\x1b\[[0-9;]*m", "", err)


def test_an_error_shows_the_users_line_and_a_caret(tmp_path, capsys):
    f = tmp_path / "b.py"
    f.write_text(KERNEL.replace("pl.tile.muls(head, 0.5)", "pl.tile.muls(head, 0.5"))
    main(["check", str(f)])
    err = capsys.readouterr().err
    assert "\n            scaled = pl.tile.muls(head, 0.5\n" in err
    assert "\n    " + " " * 29 + "^" in err


# --------------------------------------------------------------------------- the package


def test_python_m_egraph_tiles_runs_the_command_line(kfile):
    r = subprocess.run([*PY, "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("egraph-tiles ")


def test_the_package_ships_py_typed_and_the_schema():
    assert files("egraph_tiles").joinpath("py.typed").is_file()
    assert files("egraph_tiles").joinpath("schema.json").is_file()


def test_str_of_a_program_is_its_text():
    p = et.parse_program(KERNEL)
    assert str(p) == et.print_program(p) and str(p).startswith("import pypto.language as pl")
