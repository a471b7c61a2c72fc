"""``egraph-tiles nki``: text table, ``--json`` shape, ``--verify``, exit status, bad flags."""

import json

import pytest

from egraph_tiles.cli import main

KERNEL = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add_rows(a, out, n_rows=446):
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    for t in nl.affine_range((n_rows + 127) // 128):
        x = nl.load(a[t * 128 + i_p, i_f], mask=(t * 128 + i_p < n_rows))
        nl.store(out[t * 128 + i_p, i_f], value=x, mask=(t * 128 + i_p < n_rows))
"""


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    return str(path)


def test_json_has_the_documented_shape(kernel, capsys):
    rc = main(["nki", kernel, "--shape", "a=446x64", "out=446x64", "--json"])
    doc = json.loads(capsys.readouterr().out)["files"][0]["nki"]  # the common document
    assert rc == 0
    assert doc == {
        "kernel": "add_rows",
        "accesses": [
            {"line": 10, "tensor": "a", "role": "src", "shape": [128, 64],
             "pattern": [[64, "min(128, 446 - 128*t)"], [1, 64]], "offset": "8192*t",
             "legacy": True, "migrated": None},
            {"line": 11, "tensor": "out", "role": "dst", "shape": [128, 64],
             "pattern": [[64, "min(128, 446 - 128*t)"], [1, 64]], "offset": "8192*t",
             "legacy": True, "migrated": None},
        ],
        "errors": [],
    }


def test_json_pattern_is_integers_once_every_symbol_is_bound(kernel, capsys):
    main(["nki", kernel, "--shape", "a=446x64", "--shape", "out=446x64", "--bind", "t=3",
          "--json"])
    doc = json.loads(capsys.readouterr().out)["files"][0]["nki"]  # the common document
    assert [(a["pattern"], a["offset"]) for a in doc["accesses"]] == [
        ([[64, 62], [1, 64]], 3 * 128 * 64)] * 2


def test_findings_are_errors_with_lines_and_exit_status_1(kernel, capsys):
    rc = main(["nki", kernel, "--shape", "a=300x64", "out=446x64", "--json"])
    doc = json.loads(capsys.readouterr().out)["files"][0]["nki"]  # the common document
    assert rc == 1
    assert [e["line"] for e in doc["errors"]] == [10]
    assert "reaches index 445 along dimension 0" in doc["errors"][0]["message"]


def test_json_carries_the_verify_verdict_per_access(kernel, capsys):
    main(["nki", kernel, "--shape", "a=446x64", "out=446x64", "--json", "--verify"])
    doc = json.loads(capsys.readouterr().out)["files"][0]["nki"]  # the common document
    assert [a["verified"] for a in doc["accesses"]] == [True, True]


def test_text_output_is_a_table_per_instruction(kernel, capsys):
    rc = main(["nki", kernel, "--shape", "a=446x64", "out=446x64", "--scalar", "n_rows=446",
               "--verify"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "line 10: x = nl.load(" in out and "line 11: nl.store(" in out
    assert "src   a[t * 128 + i_p, i_f]" in out
    assert "[[64, min(128, 446 - 128*t)], [1, 64]]" in out
    assert "verified: 2 of 2 access(es)" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--shape", "a=12xq"], "--shape: expected dimensions like 256x1024"),
    (["--shape", "a=0x4"], "--shape: dimensions must be positive"),
    (["--shape", "a"], "--shape: expected NAME=VALUE"),
    (["--bind", "t=x"], "--bind t=x: expected an integer"),
])
def test_bad_flags_exit_2_with_a_message(kernel, capsys, argv, message):
    assert main(["nki", kernel, *argv]) == 2  # a usage error, as for every command
    assert message in capsys.readouterr().err


def test_an_unknown_kernel_exits_1_with_a_message(kernel, capsys):
    assert main(["nki", kernel, "--kernel", "nope"]) == 1
    assert "no function named 'nope'" in capsys.readouterr().err


def test_missing_file_and_syntax_error(tmp_path, capsys):
    assert main(["nki", str(tmp_path / "none.py")]) == 1
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.py"
    bad.write_text("def k(:\n")
    assert main(["nki", str(bad)]) == 1
    assert "bad.py:1:" in capsys.readouterr().err


def test_migrate_writes_the_new_kernel_and_json_carries_each_new_access(kernel, tmp_path, capsys):
    out = tmp_path / "new.py"
    rc = main(["nki", kernel, "--shape", "a=446x64", "out=446x64", "--bind", "t=1", "--json",
               "--migrate", "-o", str(out)])
    doc = json.loads(capsys.readouterr().out)["files"][0]["nki"]  # the common document
    assert rc == 0
    assert [a["migrated"] for a in doc["accesses"]] == [
        "a[128*t:min(446, 128*t + 128), 0:64]", "out[128*t:min(446, 128*t + 128), 0:64]"]
    assert [a["pattern"][0][1] for a in doc["accesses"]] == [128, 128]  # bound: t = 1
    text = out.read_text()
    assert "x = nl.load(a[128*t:min(446, 128*t + 128), 0:64])" in text
    assert "arange" not in text and "mask=" not in text


def test_output_needs_migrate(kernel, capsys):
    assert main(["nki", kernel, "--shape", "a=446x64", "out=446x64", "-o", "x.py"]) == 2
    assert "-o/--output needs --migrate" in capsys.readouterr().err
