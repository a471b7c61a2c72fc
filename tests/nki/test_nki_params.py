"""Parameters as a user types them, the kernel's own modules, and what is known before the
kernel runs (``isinstance``, ``is None``, ``assert``, closures over the kernel's names)."""

import json
import textwrap

import pytest

from egraph_tiles.cli import main
from egraph_tiles.nki import analyze_kernel
from egraph_tiles.nki.kernels.modules import parse_value
from egraph_tiles.nki.kernels.values import ConfigCall, ParamText

HEADER = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n"


@pytest.mark.parametrize(("text", "value"), [
    ("(3, 4)", (3, 4)),
    ("[1, 59, 38, 1280]", [1, 59, 38, 1280]),
    ("false", False),
    ("true", True),
    ("null", None),
    ("None", None),
    ("((1, 2), [3, None])", ((1, 2), [3, None])),
    ("-7", -7),
    ("'gelu'", "gelu"),
    ("FlashConfig(seq_tile_size=2048)", ConfigCall("FlashConfig", (), (("seq_tile_size", 2048),))),
    ("gelu", ParamText("gelu")),
    ("1 +", ParamText("1 +")),
])
def test_parameter_text_is_read_as_a_literal_json_word_or_configuration(text, value):
    assert parse_value(text) == value


def _run(tmp_path, body, *argv, params="(a, out, flag=True)", extra=None):
    (tmp_path / "k.py").write_text(HEADER + f"@nki.jit\ndef k{params}:\n"
                                   + textwrap.indent(textwrap.dedent(body), "    "))
    for name, text in (extra or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return main(["nki", str(tmp_path / "k.py"), *argv, "--json"])


STORE_IF_FLAG = """\
i_p = nl.arange(128)[:, None]
if flag:
    nl.store(out[i_p + 1, 0], value=nl.load(a[i_p, 0]))
else:
    nl.store(out[i_p, 0], value=nl.load(a[i_p, 0]))
"""


def test_false_on_the_command_line_is_false_not_the_truthy_string(tmp_path, capsys):
    """`--scalar flag=false` analyzes the else branch: the store stays inside `out`."""
    rc = _run(tmp_path, STORE_IF_FLAG, "--shape", "a=128x1", "out=128x1", "--scalar", "flag=false")
    doc = json.loads(capsys.readouterr().out)["files"][0]["nki"]  # the common document
    assert rc == 0, doc["errors"]
    assert [a["line"] for a in doc["accesses"]] == [10, 10]


def test_true_takes_the_branch_that_leaves_the_tensor(tmp_path, capsys):
    assert _run(tmp_path, STORE_IF_FLAG, "--shape", "a=128x1", "out=128x1",
                "--scalar", "flag=true") == 1
    assert "out of bounds" in capsys.readouterr().out


def test_text_that_is_not_a_literal_is_rejected_for_a_non_string_parameter(tmp_path, capsys):
    assert _run(tmp_path, STORE_IF_FLAG, "--shape", "a=128x1", "out=128x1",
                "--scalar", "flag=yes") != 0
    out = capsys.readouterr()
    assert "not a Python literal" in out.out + out.err  # (with --json: in the document's errors)


def test_text_is_a_string_for_a_string_parameter(tmp_path, capsys):
    body = """\
    i_p = nl.arange(128)[:, None]
    if mode == "wide":
        nl.store(out[i_p + 1, 0], value=nl.load(a[i_p, 0]))
    """
    assert _run(tmp_path, body, "--shape", "a=128x1", "out=128x1", "--scalar", "mode=wide",
                params="(a, out, mode='narrow')") == 1


def test_a_tuple_parameter_with_commas_and_options_after_the_kernel_path(tmp_path, capsys):
    body = """\
    rows, cols = shape2D
    i_p = nl.arange(rows)[:, None]
    i_f = nl.arange(cols)[None, :]
    nl.store(out[i_p, i_f], value=nl.load(a[i_p, i_f]))
    """
    (tmp_path / "k.py").write_text(HEADER + "@nki.jit\ndef k(a, out, shape2D):\n"
                                   + textwrap.indent(textwrap.dedent(body), "    "))
    rc = main(["nki", "--shape", "a=3x4", "out=3x4", str(tmp_path / "k.py"),
               "--scalar", "shape2D=(3, 4)", "--json"])
    doc = json.loads(capsys.readouterr().out)["files"][0]["nki"]  # the common document
    assert rc == 0, doc["errors"]
    assert doc["accesses"][0]["shape"] == [3, 4]


def test_params_file_gives_tensors_and_scalars(tmp_path, capsys):
    (tmp_path / "p.json").write_text(json.dumps(
        {"a": {"shape": [128, 1]}, "out": {"shape": [128, 1]}, "flag": False}))
    assert _run(tmp_path, STORE_IF_FLAG, "--params", str(tmp_path / "p.json")) == 0


CONFIG = """\
class Cfg:
    tile = 128
    wide = False
"""


def test_configuration_from_a_sibling_module_with_keyword_overrides(tmp_path, capsys):
    """`config=Cfg(tile=64)` builds Cfg of the imported module: class defaults plus overrides;
    the loop bound derived from it is known (2 iterations of 64 rows)."""
    body = """\
    i_p = nl.arange(config.tile)[:, None]
    for t in nl.affine_range(div_ceil(a.shape[0], config.tile)):
        nl.store(out[t * config.tile + i_p, 0], value=nl.load(a[t * config.tile + i_p, 0]))
    """
    src = "from .util import div_ceil\nfrom settings import Cfg\n"
    (tmp_path / "k.py").write_text(HEADER + src + "@nki.jit\ndef k(a, out, config):\n"
                                   + textwrap.indent(textwrap.dedent(body), "    "))
    (tmp_path / "util.py").write_text("def div_ceil(n, d):\n    return (n + d - 1) // d\n")
    (tmp_path / "settings.py").write_text(CONFIG)
    rc = main(["nki", str(tmp_path / "k.py"), "--shape", "a=128x1", "out=128x1",
               "--scalar", "config=Cfg(tile=64)", "--json"])
    doc = json.loads(capsys.readouterr().out)["files"][0]["nki"]  # the common document
    assert rc == 0, doc["errors"]
    assert doc["accesses"][0]["pattern"] == [[1, 64]]
    assert doc["accesses"][0]["offset"] == "64*t"


def test_unknown_configuration_class_is_an_error(tmp_path, capsys):
    assert _run(tmp_path, STORE_IF_FLAG, "--shape", "a=128x1", "out=128x1",
                "--scalar", "flag=Nope(x=1)") != 0
    out = capsys.readouterr()
    assert "no class 'Nope'" in out.out + out.err  # (with --json: in the document's errors)


def test_isinstance_picks_one_branch(tmp_path, capsys):
    body = """\
    if isinstance(size, int):
        OH = OW = size
    else:
        OH, OW = size
    i_p = nl.arange(OH)[:, None]
    i_f = nl.arange(OW)[None, :]
    nl.store(out[i_p, i_f], value=nl.load(a[i_p, i_f]))
    """
    assert _run(tmp_path, body, "--shape", "a=7x7", "out=7x7", "--scalar", "size=7",
                params="(a, out, size)") == 0


def test_failing_assert_is_a_finding_naming_the_parameter(tmp_path, capsys):
    body = "assert n % 128 == 0\nnl.store(out[nl.arange(1)[:, None], 0], value=nl.load(a[0:1, 0]))\n"
    assert _run(tmp_path, body, "--shape", "a=128x1", "out=128x1", "--scalar", "n=100",
                params="(a, out, n)") == 1
    doc = json.loads(capsys.readouterr().out)["files"][0]["nki"]  # the common document
    assert any("n % 128 == 0" in e["message"] and "parameter(s) n" in e["message"]
               for e in doc["errors"])


def test_helper_inside_the_loop_reads_the_kernels_names_and_gets_a_bounds_verdict():
    """`load_q` reads `batch_id` and `t` of the enclosing kernel: with `q` one row short of
    what the loop walks, its load leaves `q`, and the report says so."""
    src = HEADER + textwrap.dedent("""\
    @nki.jit
    def k(q, out):
        batch_id = nl.program_id(0)
        i_p = nl.arange(128)[:, None]
        for t in nl.affine_range(2):
            def load_q():
                return nl.load(q[batch_id, t * 128 + i_p, 0])
            nl.store(out[batch_id, t * 128 + i_p, 0], value=load_q())
    """)
    report = analyze_kernel(src, shapes={"q": (2, 255, 1), "out": (2, 256, 1)}, grid=(2,))
    assert not [f for f in report.findings if f.kind == "error"], report.findings
    oob = [f for f in report.findings if f.kind == "out-of-bounds"]
    assert [f.line for f in oob] == [10]


# adaptive pooling windows computed with numpy before the kernel runs
NUMPY_WINDOWS = """\
H = a.shape[1]
starts = (np.arange(OUT, dtype=np.int32) * H) // OUT
ends = (np.arange(1, OUT + 1, dtype=np.int32) * H + OUT - 1) // OUT
widest = int((ends - starts).max())
buf = nl.ndarray((64, widest), dtype=nl.float32, buffer=nl.sbuf)
for o in nl.static_range(OUT):
    lo, hi = starts[o], ends[o]
    i_f = nl.arange(widest)[None, :]
    buf[nl.arange(64)[:, None], i_f] = nl.load(a[nl.arange(64)[:, None], lo + i_f],
                                               mask=(i_f < hi - lo))
    s = nl.sum(buf[nl.arange(64)[:, None], i_f], axis=1, keepdims=True, mask=(i_f < hi - lo))
    nl.store(out[nl.arange(64)[:, None], o], value=s)
"""


def test_numpy_arrays_of_known_values_are_evaluated():
    """`np.arange(...) * H // OUT`, its `.max()` and its items at unrolled loop values are
    known before the kernel runs: every access is analyzed, with no finding."""
    src = "import numpy as np\n" + HEADER + "@nki.jit\ndef k(a, out, OUT):\n" + textwrap.indent(
        NUMPY_WINDOWS, "    ")
    report = analyze_kernel(src, shapes={"a": (64, 10), "out": (64, 3)}, scalars={"OUT": 3})
    assert report.findings == []
    loads = [r for r in report.accesses if r.raw.tensor_text == "a"]
    assert sorted(r.shape for r in loads) == [(64, 4), (64, 4), (64, 4)]
    assert sorted(str(r.offset) for r in loads) == ["0", "3", "6"]
