"""One JSON document shape for `optimize`, `check` and `nki` (`"schema": 1`), one file or many,
failures included; every document validates against the schema the package ships."""

import json
from importlib.resources import files

import pytest
from test_cli_optimize import ACC_ROW_WINDOW, KERNEL

from egraph_tiles.cli import main

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = json.loads(files("egraph_tiles").joinpath("schema.json").read_text())

NKI_KERNEL = """import neuronxcc.nki.language as nl
import neuronxcc.nki as nki


@nki.jit
def add_rows(a, out):
    for t in nl.affine_range(4):
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(64)[None, :]
        x = nl.load(a[t * 128 + i_p, i_f])
        nl.store(out[t * 128 + i_p, i_f], value=x)
"""


@pytest.fixture
def lib(tmp_path):
    (tmp_path / "a.py").write_text(KERNEL)
    (tmp_path / "acc.py").write_text(ACC_ROW_WINDOW)
    (tmp_path / "broken.py").write_text(KERNEL.replace("pl.tile.muls(head, 0.5)",
                                                       "pl.tile.muls(head, 0.5"))
    (tmp_path / "nki_k.py").write_text(NKI_KERNEL)
    return tmp_path


RUNS = {
    "optimize one file": (["optimize", "a.py", "--json"], 0),
    "optimize one failing file": (["optimize", "broken.py", "--json"], 1),
    "optimize a rejected file": (["optimize", "acc.py", "--json"], 1),
    "optimize several": (["optimize", "a.py", "acc.py", "broken.py", "--json", "-j", "1"], 1),
    "optimize --check": (["optimize", "a.py", "--check", "--json"], 1),
    "optimize --explain": (["optimize", "a.py", "--explain", "--json"], 0),
    "check one file": (["check", "a.py", "--json"], 0),
    "check several": (["check", "a.py", "acc.py", "--json", "-j", "1"], 1),
    "check a missing file": (["check", "nope.py", "--json"], 1),
    "nki": (["nki", "nki_k.py", "--shape", "a=512x64", "out=512x64", "--json"], 0),
    "nki out of bounds": (["nki", "nki_k.py", "--shape", "a=300x64", "out=512x64", "--json"], 1),
    "nki missing file": (["nki", "nope.py", "--json"], 1),
}


def run(lib, argv, capsys) -> tuple[int, dict]:
    rc = main([str(lib / a) if a.endswith(".py") else a for a in argv])
    return rc, json.loads(capsys.readouterr().out)


def test_the_shipped_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", RUNS)
def test_every_json_output_validates_against_the_shipped_schema(lib, capsys, name):
    argv, code = RUNS[name]
    rc, doc = run(lib, argv, capsys)
    assert rc == code
    jsonschema.validate(doc, SCHEMA)
    assert doc["schema"] == 1 and doc["command"] == argv[0]


def test_a_failing_file_is_an_entry_with_its_error_line_and_column(lib, capsys):
    _, doc = run(lib, ["optimize", "broken.py", "--json"], capsys)
    (entry,) = doc["files"]
    assert entry["status"] == "error" and entry["stage"] == "parse"
    (err,) = entry["errors"]
    assert (err["line"], err["col"]) == (9, 30) and "never closed" in err["message"]  # the (
    assert err["source"] == "        scaled = pl.tile.muls(head, 0.5"


def test_one_file_and_several_give_the_same_entry(lib, capsys):
    _, one = run(lib, ["optimize", "a.py", "--json"], capsys)
    _, two = run(lib, ["optimize", "a.py", "acc.py", "--json", "-j", "1"], capsys)
    strip = [{k: v for k, v in f.items() if k != "seconds"} for f in (one["files"][0],
                                                                     two["files"][0])]
    for f in strip:
        for fn in f["functions"]:
            fn.pop("seconds")
    assert strip[0] == strip[1]


def test_decisions_carry_line_and_column(lib, capsys):
    _, doc = run(lib, ["optimize", "a.py", "--json"], capsys)
    d = next(d for d in doc["files"][0]["functions"][0]["decisions"] if d["decision"] == "copy")
    assert (d["slice"], d["line"], d["col"]) == ("head", 9, 31)


def test_nki_report_is_the_nki_object_of_its_entry(lib, capsys):
    _, doc = run(lib, ["nki", "nki_k.py", "--shape", "a=300x64", "out=512x64", "--json"], capsys)
    (entry,) = doc["files"]
    assert entry["nki"]["kernel"] == "add_rows" and len(entry["nki"]["accesses"]) == 2
    assert entry["status"] == "error" and entry["errors"][0]["line"] == 10
