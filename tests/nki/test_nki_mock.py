"""The numpy mock of NKI: what each modelled call computes and which shapes it accepts, and
kernels of our own that use them run legacy beside migrated as the same program."""

import textwrap

import numpy as np
import pytest

from egraph_tiles.nki import analyze_kernel, migrate_kernel
from egraph_tiles.nki.kernels.mock import compare, run_kernel
from egraph_tiles.nki.kernels.modules import parse_value

HEADER = ("import numpy as np\nimport neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n"
          "import neuronxcc.nki.isa as nisa\n\n\n")


def _kernel(body: str, params: str = "a, out") -> str:
    return HEADER + f"@nki.jit\ndef k({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def _run(body: str, inputs: dict, **kw):
    run = run_kernel(_kernel(body, kw.pop("params", "a, out")), "k", inputs, **kw)
    assert run.problems == []
    return run


def _same_after_migration(src: str, shapes: dict, **kw) -> str:
    report = analyze_kernel(src, shapes=shapes, **kw)
    assert not [f for f in report.findings if f.kind == "error"], report.findings
    mig = migrate_kernel(report)
    assert mig.texts, "nothing was migrated"
    assert compare(src, mig.source, "k", shapes, **kw) == []
    return mig.source


A = np.arange(12.0).reshape(4, 3) - 5.0

# one modelled call per row: the kernel body, and the numpy value `out` must hold after it
CALLS = {
    "nc_matmul contracts the partition axis": (
        "nl.store(out[0:3, 0:3], value=nisa.nc_matmul(nl.load(a[0:4, 0:3]), nl.load(a[0:4, 0:3])))",
        A.T @ A, (3, 3)),
    "nc_transpose": ("nl.store(out[0:3, 0:4], value=nisa.nc_transpose(nl.load(a[0:4, 0:3])))",
                     A.T, (3, 4)),
    "activation with a bias column and a scale": (
        "x = nl.load(a[0:4, 0:3])\n"
        "nl.store(out[0:4, 0:3], value=nisa.activation(np.exp, data=x, bias=x[0:4, 0:1], scale=0.5))",
        np.exp(A * 0.5 + A[:, :1]), (4, 3)),
    "affine_select on an mgrid predicate": (
        "i, j = nl.mgrid[0:4, 0:3]\n"
        "nl.store(out[0:4, 0:3], value=nisa.affine_select(pred=(i >= j), "
        "on_true_tile=nl.load(a[0:4, 0:3]), on_false_value=-1.0))",
        np.where(np.arange(4)[:, None] >= np.arange(3)[None, :], A, -1.0), (4, 3)),
    "tensor_scalar with two operations, the second reversed": (
        "nl.store(out[0:4, 0:3], value=nisa.tensor_scalar(nl.load(a[0:4, 0:3]), np.multiply, 2.0,"
        " op1=np.subtract, operand1=1.0, reverse1=True))",
        1.0 - A * 2.0, (4, 3)),
    "tensor_reduce with nl.max keeps the axis": (
        "nl.store(out[0:4, 0:1], value=nisa.tensor_reduce(nl.max, nl.load(a[0:4, 0:3]), axis=[1],"
        " keepdims=True))",
        A.max(axis=1, keepdims=True), (4, 1)),
    "scalar_tensor_tensor": (
        "x = nl.load(a[0:4, 0:3])\n"
        "nl.store(out[0:4, 0:3], value=nisa.scalar_tensor_tensor(data=x, op0=np.subtract, "
        "operand0=x[0:4, 0:1], op1=np.multiply, operand1=x))",
        (A - A[:, :1]) * A, (4, 3)),
    "bn_stats then bn_aggr give each row's mean and variance": (
        "x = nl.load(a[0:4, 0:3])\n"
        "s = nl.ndarray((4, 12), dtype=nl.float32, buffer=nl.sbuf)\n"
        "s[0:4, 0:6] = nisa.bn_stats(x[0:4, 0:2])\n"
        "s[0:4, 6:12] = nisa.bn_stats(x[0:4, 2:3])\n"
        "nl.store(out[0:4, 0:2], value=nisa.bn_aggr(s))",
        np.stack([A.mean(axis=1), A.var(axis=1)], axis=1), (4, 2)),
    "a (P, 1) tile fills a (P,) destination": (
        "t = nl.ndarray((4, 2), dtype=nl.float32, buffer=nl.sbuf)\n"
        "t[:, 1] = nl.sum(nl.load(a[0:4, 0:3]), axis=1, keepdims=True)\n"
        "t[:, 0] = nl.max(nl.load(a[0:4, 0:3]), axis=1, keepdims=True)\n"
        "nl.store(out[0:4, 0:2], value=t)",
        np.stack([A.max(axis=1), A.sum(axis=1)], axis=1), (4, 2)),
    "an index read from a data tile (indirect)": (
        "idx = nisa.iota(nl.arange(4)[:, None] * 0 + 3 - nl.arange(4)[:, None], dtype=nl.int32)\n"
        "nl.store(out[0:4, 0:3], value=nl.load(a[idx, nl.arange(3)[None, :]]))",
        A[::-1], (4, 3)),
}


@pytest.mark.parametrize("name", CALLS)
def test_modelled_call_computes_its_nki_meaning(name):
    body, want, shape = CALLS[name]
    run = _run(body, {"a": A, "out": np.zeros(shape)})
    np.testing.assert_allclose(run.outputs["out"], want)


def test_double_row_matmul_contracts_the_partition_axis_and_the_row_pair():
    body = """\
    x = nl.load(a[0:4, 0:6])
    y = x.reshape((4, 2, 3))
    nl.store(out[0:3, 0:3], value=nisa.nc_matmul(y, y, perf_mode='double_row_gen3'))
    """
    a = np.arange(24.0).reshape(4, 6)
    run = _run(body, {"a": a, "out": np.zeros((3, 3))})
    rows = a.reshape(8, 3)
    np.testing.assert_allclose(run.outputs["out"], rows.T @ rows)


def test_a_value_that_does_not_fit_its_destination_is_a_problem():
    body = """\
    t = nl.ndarray((4, 2), dtype=nl.float32, buffer=nl.sbuf)
    t[:, 0] = nl.load(a[0:4, 0:3])
    """
    run = run_kernel(_kernel(body), "k", {"a": A, "out": np.zeros((1,))})
    assert any("shape: a value of shape (4, 3)" in p for p in run.problems)


def test_a_call_the_mock_does_not_model_is_named():
    with pytest.raises(AttributeError, match="does not model nki.isa.dma_transpose"):
        run_kernel(_kernel("nisa.dma_transpose(a)"), "k", {"a": A, "out": A})


def test_parameter_dtype_is_what_the_kernel_reads():
    body = """\
    assert a.dtype == nl.float8_e4m3
    nl.store(out[0:4, 0:3], value=nl.load(a[0:4, 0:3]))
    """
    run = _run(body, {"a": A, "out": np.zeros((4, 3))}, dtypes={"a": "float8_e4m3"})
    np.testing.assert_allclose(run.outputs["out"], A)


def test_configuration_object_is_built_from_the_kernels_class():
    src = HEADER + textwrap.dedent("""\
    from dataclasses import dataclass


    @dataclass
    class Cfg:
        rows: int = 2
        scale: float = 1.0


    @nki.jit
    def k(a, out, cfg=None):
        nl.store(out[0:cfg.rows, 0:3], value=nl.multiply(nl.load(a[0:cfg.rows, 0:3]), cfg.scale))
    """)
    run = run_kernel(src, "k", {"a": A, "out": np.zeros((4, 3))},
                     scalars={"cfg": parse_value("Cfg(rows=3, scale=2.0)")})
    np.testing.assert_allclose(run.outputs["out"][:3], A[:3] * 2.0)
    assert not run.outputs["out"][3:].any()


def test_kernel_file_that_sets_environment_variables_runs():
    src = "import os\n" + _kernel("nl.store(out[0:4, 0:3], value=nl.load(a[0:4, 0:3]))").replace(
        "@nki.jit", 'os.environ["NEURON_CC_FLAGS"] = "-O1"\n\n\n@nki.jit')
    run = run_kernel(src, "k", {"a": A, "out": np.zeros((4, 3))})
    np.testing.assert_allclose(run.outputs["out"], A)


# ----- kernels of our own, migrated and run beside their legacy selves -----------------------

# layernorm statistics over a free axis cut in chunks, the last one masked
BN_CHUNKS = """\
i_p = nl.arange(128)[:, None]
i_f = nl.arange(512)[None, :]
i_s = nl.arange(6)[None, :]
for t in nl.affine_range(3):
    x = nl.load(a[t * 128 + i_p, nl.arange(700)[None, :]], mask=(t * 128 + i_p < 300))
    stats = nl.ndarray((128, 12), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(2):
        stats[i_p, j * 6 + i_s] = nisa.bn_stats(x[i_p, j * 512 + i_f], mask=(j * 512 + i_f < 700))
    mv = nisa.bn_aggr(stats[i_p, nl.arange(12)[None, :]])
    nl.store(out[t * 128 + i_p, nl.arange(2)[None, :]], value=mv, mask=(t * 128 + i_p < 300))
"""

# attention-like: a matmul, a causal select, a row max kept as (P, 1), the last rows masked
MATMUL_SELECT = """\
i_k = nl.arange(64)[:, None]
i_q = nl.arange(128)[None, :]
for t in nl.affine_range(2):
    s = nisa.nc_matmul(nl.load(a[i_k, t * 128 + i_q]), nl.load(a[i_k, i_q]))
    r, c = nl.mgrid[0:128, 0:128]
    s2 = nisa.affine_select(pred=(t * 128 + r >= c), on_true_tile=s, on_false_value=-1e4)
    m = nisa.tensor_reduce(np.max, s2, axis=(1,), keepdims=True)
    nl.store(out[t * 128 + nl.arange(128)[:, None], nl.arange(1)[None, :]], value=m,
             mask=(t * 128 + nl.arange(128)[:, None] < 200))
"""


@pytest.mark.parametrize("body, shapes", [
    (BN_CHUNKS, {"a": (300, 700), "out": (300, 2)}),
    (MATMUL_SELECT, {"a": (64, 256), "out": (200, 1)}),
], ids=["bn_stats_chunks", "matmul_select"])
def test_kernel_using_modelled_calls_migrates_to_the_same_program(body, shapes):
    _same_after_migration(_kernel(body), shapes)


HELPER_BLOCK = """\
def block(a, out, bi, bj):
    below = bj <= bi
    i_p = nl.arange(64)[:, None]
    i_f = nl.arange(32)[None, :]
    t = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
    t[i_p, i_f] = nl.load(a[bi * 64 + i_p, bj * 32 + i_f], mask=below)
    y = nisa.activation(np.exp, data=READ, scale=1.0, mask=below)
    nl.store(out[bi * 64 + i_p, bj * 32 + i_f], value=y, mask=below)


@nki.jit
def k(a, out):
    for i in nl.affine_range(2):
        for j in nl.affine_range(2):
            block(a, out, i, j)
"""


def test_helper_with_a_caller_loop_condition_migrates_to_the_same_program():
    src = HEADER + HELPER_BLOCK.replace("READ", "t[i_p, i_f]")
    out = _same_after_migration(src, {"a": (128, 64), "out": (128, 64)})
    assert out.count("if -bi + bj <= 0:") == 3 or out.count("if bj - bi <= 0:") == 3, out
    assert "mask=" not in out


def test_tile_bound_under_an_if_and_read_by_an_unwrapped_instruction_keeps_its_mask():
    """`activation(data=y)` has no indexed operand to carry its mask, so it is not put under
    the `if`: the tile it reads must not be bound under one (it would be unbound there)."""
    src = HEADER + HELPER_BLOCK.replace(
        "t[i_p, i_f] = nl.load(", "y0 = nl.load(").replace("READ", "y0")
    shapes = {"a": (128, 64), "out": (128, 64)}
    report = analyze_kernel(src, shapes=shapes)
    mig = migrate_kernel(report)
    load = next(line for line in mig.source.splitlines() if "y0 = " in line)
    assert "mask=below" in load and not load.lstrip().startswith("if")
    assert any("does not run under the same `if`" in f.message for f in mig.findings)
    assert compare(src, mig.source, "k", shapes) == []


def test_kernel_with_numpy_windows_migrates_to_the_same_program():
    from test_nki_params import NUMPY_WINDOWS

    src = _kernel(NUMPY_WINDOWS, params="a, out, OUT")
    shapes = {"a": (64, 11), "out": (64, 3)}
    out = _same_after_migration(src, shapes, scalars={"OUT": 3})
    assert "mask=" not in out


def test_store_of_an_indirectly_loaded_tile_migrates_with_the_tile_sliced():
    """The gather itself stays as written (its elements are read at run time); its tile has
    the index tiles' shape, so the masked store of it can be bounded like any other."""
    body = """\
    for t in nl.affine_range(3):
        pos = t * 128 + nl.arange(128)[:, None]
        idx = nisa.iota(pos, dtype=nl.int32)
        src = nl.floor(nl.multiply(idx, 0.5))
        addr = a[src, nl.arange(8)[None, :]]
        x = nl.load(addr, mask=(pos < 300))
        nl.store(out[pos, nl.arange(8)[None, :]], value=x, mask=(pos < 300))
    """
    src = _kernel(body)
    out = _same_after_migration(src, {"a": (150, 8), "out": (300, 8)})
    assert "out[128*t:min(300, 128*t + 128), 0:8]" in out
    assert "value=x[0:min(128, 300 - 128*t), 0:8]" in out
    assert "nl.load(addr, mask=(pos < 300))" in out
