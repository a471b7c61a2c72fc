"""Habits of a daily tool: defaults from `[tool.egraph-tiles]` in the nearest `pyproject.toml`,
a result cache beside it, and the pre-commit hooks."""

import json
from pathlib import Path

import pytest
from test_cli_optimize import KERNEL

from egraph_tiles.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path):
    """A kernel repository: pyproject.toml at its root, kernels two folders down."""
    (tmp_path / "kernels" / "gen").mkdir(parents=True)
    (tmp_path / "kernels" / "a.py").write_text(KERNEL)
    (tmp_path / "kernels" / "gen" / "b.py").write_text(KERNEL)
    (tmp_path / "pyproject.toml").write_text('[tool.egraph-tiles]\nexclude = ["gen"]\njobs = 1\n')
    return tmp_path


def checked(argv, capsys) -> list[dict]:
    main([*argv, "--json"])
    return json.loads(capsys.readouterr().out)["files"]


def test_settings_come_from_the_nearest_pyproject_above_the_input(project, capsys):
    files = checked(["check", str(project / "kernels")], capsys)
    assert [Path(f["path"]).name for f in files] == ["a.py"]  # exclude = ["gen"]


def test_the_command_line_adds_to_the_configured_excludes(project, capsys):
    (project / "kernels" / "c.py").write_text(KERNEL)
    files = checked(["check", str(project / "kernels"), "--exclude", "c.py"], capsys)
    assert [Path(f["path"]).name for f in files] == ["a.py"]


def test_canonical_can_be_the_configured_default(project, capsys):
    (project / "pyproject.toml").write_text("[tool.egraph-tiles]\ncanonical = true\n")
    assert main(["optimize", str(project / "kernels" / "a.py")]) == 0
    assert "head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = " in capsys.readouterr().out


@pytest.mark.parametrize("setting, says", [
    ("jobz = 2", "no setting 'jobz'"),
    ('jobs = "two"', "jobs = 'two' has the wrong type"),
])
def test_a_bad_setting_is_a_usage_error_naming_the_file(project, capsys, setting, says):
    (project / "pyproject.toml").write_text(f"[tool.egraph-tiles]\n{setting}\n")
    assert main(["check", str(project / "kernels")]) == 2
    err = capsys.readouterr().err
    assert says in err and str(project / "pyproject.toml") in err


def test_a_second_run_takes_unchanged_files_from_the_cache(project, capsys):
    first = checked(["check", str(project / "kernels")], capsys)
    second = checked(["check", str(project / "kernels")], capsys)
    assert [f["cached"] for f in first] == [False] and [f["cached"] for f in second] == [True]
    strip = [{k: v for k, v in f.items() if k != "cached"} for f in (first[0], second[0])]
    assert strip[0] == strip[1]
    cache = project / ".egraph_tiles_cache"
    assert cache.is_dir() and (cache / ".gitignore").read_text().endswith("*\n")


def test_a_changed_file_is_optimized_again(project, capsys):
    checked(["check", str(project / "kernels")], capsys)
    (project / "kernels" / "a.py").write_text(KERNEL.replace("0.5", "0.25"))
    (entry,) = checked(["check", str(project / "kernels")], capsys)
    assert entry["cached"] is False


def test_other_options_are_other_cache_entries(project, capsys):
    a = str(project / "kernels" / "a.py")
    checked(["optimize", a], capsys)
    (entry,) = checked(["optimize", a, "--explain"], capsys)
    assert entry["cached"] is False and "head as tile.muls" in entry["explain"]


def test_no_cache_neither_reads_nor_writes_it(project, capsys):
    checked(["check", str(project / "kernels"), "--no-cache"], capsys)
    assert not (project / ".egraph_tiles_cache").exists()


def test_without_a_pyproject_nothing_is_cached(tmp_path, capsys):
    (tmp_path / "k.py").write_text(KERNEL)
    for _ in range(2):
        (entry,) = checked(["check", str(tmp_path / "k.py")], capsys)
    assert entry["cached"] is False and not (tmp_path / ".egraph_tiles_cache").exists()


def test_kernels_only_skips_named_files_without_a_program(tmp_path, capsys):
    (tmp_path / "helper.py").write_text("def helper():\n    return 1\n")
    (tmp_path / "k.py").write_text(KERNEL)
    assert main(["check", str(tmp_path / "helper.py"), "--kernels-only"]) == 0
    assert main(["check", str(tmp_path / "helper.py"), str(tmp_path / "k.py"),
                 "--kernels-only", "--json"]) == 0
    assert [f["path"] for f in json.loads(capsys.readouterr().out)["files"]] == [
        str(tmp_path / "k.py")]
    assert main(["check", str(tmp_path / "helper.py")]) == 1  # named, not a kernel: an error


def test_the_pre_commit_hooks_run_commands_the_cli_accepts():
    from egraph_tiles.cli import build_parser

    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    entries = [line.split("entry:", 1)[1].split() for line in text.splitlines()
               if line.strip().startswith("entry:")]
    assert entries and all(e[0] == "egraph-tiles" for e in entries)
    for e in entries:
        build_parser().parse_args([*e[1:], "k.py"])
