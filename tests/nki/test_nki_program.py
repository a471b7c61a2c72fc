"""The migrated kernel is the same program: kernels of our own migrated, then executed beside
their legacy selves by the numpy mock (same elements per statement, no shape mismatch, no
out-of-bounds element, same outputs)."""

import textwrap

import pytest

from egraph_tiles.nki import analyze_kernel, migrate_kernel
from egraph_tiles.nki.kernels.mock import compare

HEADER = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n"


def _kernel(body: str, params: str = "a, out") -> str:
    return HEADER + f"@nki.jit\ndef k({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def _migrate(src: str, shapes: dict, grid=()):
    report = analyze_kernel(src, shapes=shapes, grid=grid)
    assert not [f for f in report.findings if f.kind == "error"], report.findings
    return migrate_kernel(report)


# A whole-tile value stored into a destination its mask narrows: the value is narrowed too.
STORE_WHOLE = """\
i_p = nl.arange(128)[:, None]
i_f = nl.arange(446)[None, :]
for h in nl.affine_range(4):
    out_tile = nl.ndarray((128, 446), dtype=nl.float32, buffer=nl.sbuf)
    x = nl.load(a[h * 128 + i_p, i_f], mask=(h * 128 + i_p < 446))
    out_tile[i_p, i_f] = nl.multiply(x, 2.0, mask=(h * 128 + i_p < 446))
    nl.store(out[h * 128 + i_p, i_f], value=out_tile, mask=(h * 128 + i_p < 446))
"""

# The second instruction's mask narrows the loaded tile to other rows (64, not 62, in the
# last iteration): the load keeps its mask; the tile is sliced for the second instruction.
OTHER_BOX = """\
i_p = nl.arange(128)[:, None]
i_f = nl.arange(8)[None, :]
for h in nl.affine_range(4):
    t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
    x = nl.load(a[h * 128 + i_p, i_f], mask=(h * 128 + i_p < 446))
    t[i_p, i_f] = nl.exp(x, mask=(h * 128 + i_p < 448))
    nl.store(out[h * 128 + i_p, i_f], value=t, mask=(h * 128 + i_p < 446))
"""

# The destination is a transpose on chip (no strided partition access there): it stays as
# written, so the instruction keeps its mask and its other access keeps its legacy form too.
KEPT_MASK = """\
i_p = nl.arange(64)[:, None]
i_f = nl.arange(32)[None, :]
t = nl.ndarray((32, 64), dtype=nl.float32, buffer=nl.sbuf)
t[i_f, i_p] = nl.load(a[i_p, i_f], mask=(i_p < 50))
nl.store(out[i_p, i_f], value=nl.load(a[i_p, i_f]))
"""

# Every statement follows the narrowed tile (a reduction of it, then a masked store).
FOLLOWS = """\
i_p = nl.arange(128)[:, None, None]
i_w = nl.arange(6)[None, :, None]
i_k = nl.arange(3)[None, None, :]
o_p = nl.arange(128)[:, None]
o_w = nl.arange(6)[None, :]
for t in nl.affine_range(3):
    w = nl.load(a[t * 128 + i_p, i_w + i_k], mask=(t * 128 + i_p < 300))
    s = nl.sum(w, axis=2)
    nl.store(out[t * 128 + o_p, o_w], value=s, mask=(t * 128 + o_p < 300))
"""

CASES = {
    "store_whole": (STORE_WHOLE, {"a": (446, 446), "out": (446, 446)}),
    "other_box": (OTHER_BOX, {"a": (446, 8), "out": (446, 8)}),
    "kept_mask": (KEPT_MASK, {"a": (64, 32), "out": (64, 32)}),
    "follows": (FOLLOWS, {"a": (300, 8), "out": (300, 6)}),
}


@pytest.mark.parametrize("name", CASES)
def test_migrated_kernel_runs_as_the_same_program(name):
    body, shapes = CASES[name]
    src = _kernel(body)
    mig = _migrate(src, shapes)
    assert compare(src, mig.source, "k", shapes) == []


def test_whole_value_of_a_narrowed_store_gets_a_bounded_slice():
    mig = _migrate(_kernel(STORE_WHOLE), CASES["store_whole"][1])
    assert "value=out_tile[0:min(128, 446 - 128*h), 0:446]" in mig.source
    assert "mask=" not in mig.source


def test_tile_narrowed_to_other_rows_keeps_its_producers_mask():
    mig = _migrate(_kernel(OTHER_BOX), CASES["other_box"][1])
    load = next(line for line in mig.source.splitlines() if "nl.load" in line)
    assert "mask=" in load and "i_p" in load
    assert any("not migrated: a[h * 128 + i_p, i_f]" in f.message for f in mig.findings)
    assert "nl.exp(x[0:min(128, 448 - 128*h), 0:8])" in mig.source


def test_instruction_that_keeps_its_mask_keeps_all_its_accesses():
    mig = _migrate(_kernel(KEPT_MASK), CASES["kept_mask"][1])
    line = next(ln for ln in mig.source.splitlines() if "t[i_f, i_p]" in ln)
    assert "a[i_p, i_f]" in line and "mask=(i_p < 50)" in line


def test_narrowing_every_statement_follows_is_kept():
    mig = _migrate(_kernel(FOLLOWS), CASES["follows"][1])
    assert "mask=" not in mig.source and "arange" not in mig.source


def test_narrowed_tile_whose_shape_is_read_is_not_narrowed():
    body = """\
    i_p = nl.arange(128)[:, None]
    x = nl.load(a[i_p, 0:4], mask=(i_p < 100))
    n = x.shape[0]
    nl.store(out[0:128, 0:4], value=x)
    """
    mig = _migrate(_kernel(body), {"a": (128, 4), "out": (128, 4)})
    assert "mask=(i_p < 100)" in mig.source


def test_mock_detects_a_store_whose_value_was_not_narrowed():
    """The form an earlier migration wrote: the destination narrowed, the value left whole."""
    src = _kernel(STORE_WHOLE)
    shapes = CASES["store_whole"][1]
    mig = _migrate(src, shapes)
    broken = mig.source.replace("value=out_tile[0:min(128, 446 - 128*h), 0:446]",
                                "value=out_tile")
    assert broken != mig.source
    problems = compare(src, broken, "k", shapes)
    assert any("shape: a value of shape (128, 446)" in p for p in problems)


def test_mock_detects_an_ap_that_reads_other_elements():
    body = """\
    i_p = nl.arange(64)[:, None]
    i_f = nl.arange(32)[None, :]
    nl.store(out[i_p, i_f], value=nl.load(a[i_f, i_p]))
    """
    src = _kernel(body)
    shapes = {"a": (32, 64), "out": (64, 32)}
    mig = _migrate(src, shapes)
    assert "a.ap([[1, 64], [64, 32]])" in mig.source
    assert compare(src, mig.source, "k", shapes) == []
    broken = mig.source.replace("a.ap([[1, 64], [64, 32]])", "a.ap([[1, 64], [64, 32]], offset=1)")
    assert any("touch different elements" in p or "leaves" in p or "outside" in p
               for p in compare(src, broken, "k", shapes))


def test_mock_detects_a_kept_mask_on_a_rewritten_operand():
    """A (64, 32) mask left on an instruction whose operand became a (50, 32) slice."""
    src = _kernel(KEPT_MASK)
    shapes = CASES["kept_mask"][1]
    broken = src.replace("t[i_f, i_p] = nl.load(a[i_p, i_f], mask=(i_p < 50))",
                         "t[i_f, i_p] = nl.load(a[0:50, 0:32], mask=(i_p < 50))")
    assert any("shape" in p for p in compare(src, broken, "k", shapes))


# A causal-style mask: a predicate on the loop variables only (the tile runs or not).
GUARD = """\
i_p = nl.arange(128)[:, None]
i_f = nl.arange(128)[None, :]
for i in nl.affine_range(3):
    for j in nl.affine_range(3):
        below = j <= i
        x = nl.load(a[i * 128 + i_p, j * 128 + i_f], mask=below)
        nl.store(out[i * 128 + i_p, j * 128 + i_f], value=x, mask=below)
"""


def test_mask_on_loop_variables_only_becomes_an_if_around_the_statement():
    shapes = {"a": (384, 384), "out": (384, 384)}
    src = _kernel(GUARD)
    mig = _migrate(src, shapes)
    assert "if -i + j <= 0:" in mig.source or "if j - i <= 0:" in mig.source, mig.source
    assert "mask=" not in mig.source
    assert compare(src, mig.source, "k", shapes) == []
    assert any("touch different elements" in p or "instructions ran" in p
               for p in compare(src, mig.source.replace("<= 0:", "< 0:"), "k", shapes))


def test_ap_assignment_target_is_written_by_a_copy_instruction():
    body = """\
    i_p = nl.arange(64)[:, None]
    i_f = nl.arange(32)[None, :]
    out[i_f, i_p] = nl.load(a[i_p, i_f])
    """
    shapes = {"a": (64, 32), "out": (32, 64)}
    src = _kernel(body)
    mig = _migrate(src, shapes)
    assert "nl.store(out.ap([[1, 64], [64, 32]]), value=nl.load(a[0:64, 0:32]))" in mig.source
    assert compare(src, mig.source, "k", shapes) == []


def test_access_read_differently_per_unrolled_iteration_gets_one_branch_each():
    """`max(0, ...)` of the loop variable makes the reader unroll the loop: each iteration's
    slice is written under `if h == k`."""
    body = """\
    i_p = nl.arange(4)[:, None]
    i_f = nl.arange(8)[None, :]
    for h in nl.static_range(3):
        lo = max(0, h * 5 - 2)
        nl.store(out[h * 4 + i_p, i_f], value=nl.load(a[lo + i_p, i_f]))
    """
    shapes = {"a": (16, 8), "out": (12, 8)}
    src = _kernel(body)
    mig = _migrate(src, shapes)
    assert "if h == 0:" in mig.source and "elif h == 2:" in mig.source
    assert "a[8:12, 0:8]" in mig.source
    assert compare(src, mig.source, "k", shapes) == []
    broken = mig.source.replace("a[8:12, 0:8]", "a[7:11, 0:8]")
    assert compare(src, broken, "k", shapes)


def test_access_in_a_helper_is_written_with_the_helpers_parameter_names():
    src = HEADER + textwrap.dedent("""\
    def copy_row(a, out, r):
        i_f = nl.arange(8)[None, :]
        nl.store(out[r, i_f], value=nl.load(a[r, i_f]))


    @nki.jit
    def k(a, out):
        for t in nl.affine_range(4):
            copy_row(a, out, t)
    """)
    shapes = {"a": (4, 8), "out": (4, 8)}
    mig = _migrate(src, shapes)
    assert "out[r:r + 1, 0:8]" in mig.source and "a[r:r + 1, 0:8]" in mig.source
    assert compare(src, mig.source, "k", shapes) == []


def test_helper_parameter_used_in_a_subscript_target_keeps_its_name():
    """`t[r, ...] = v` writes into `t`; it does not rebind `r`, which still names the caller's
    loop variable."""
    src = HEADER + textwrap.dedent("""\
    def scale_row(a, t, r):
        i_f = nl.arange(8)[None, :]
        t[r, i_f] = nl.multiply(nl.load(a[r, i_f]), 2.0)


    @nki.jit
    def k(a, out):
        t = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(4):
            scale_row(a, t, j)
        nl.store(out[0:4, 0:8], value=t)
    """)
    shapes = {"a": (4, 8), "out": (4, 8)}
    mig = _migrate(src, shapes)
    assert "t[r:r + 1, 0:8] = nl.multiply(nl.load(a[r:r + 1, 0:8]), 2.0)" in mig.source
    assert compare(src, mig.source, "k", shapes) == []


# A helper whose mask is a predicate on its caller's loop variables (through its parameters).
HELPER_GUARD = """\
def lower_block(a, out, bi, bj):
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(128)[None, :]
    below = bj <= bi
    x = nl.load(a[bi * 128 + i_p, bj * 128 + i_f], mask=below)
    nl.store(out[bi * 128 + i_p, bj * 128 + i_f], value=x, mask=below)


@nki.jit
def k(a, out):
    for i in nl.affine_range(3):
        for j in nl.affine_range(3):
            lower_block(a, out, i, j)
"""


def test_condition_of_a_helpers_mask_is_written_with_its_parameter_names():
    src = HEADER + HELPER_GUARD
    shapes = {"a": (384, 384), "out": (384, 384)}
    mig = _migrate(src, shapes)
    assert "if -bi + bj <= 0:" in mig.source or "if bj - bi <= 0:" in mig.source, mig.source
    assert " i + " not in mig.source and "mask=" not in mig.source
    assert compare(src, mig.source, "k", shapes) == []


def test_helper_condition_on_a_caller_variable_it_cannot_name_is_not_rewritten():
    """`bj` is bound to `j + 1`, not to a loop variable: the helper has no name for `j`."""
    src = HEADER + textwrap.dedent("""\
    def copy_if_below(a, out, bi, bj):
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(128)[None, :]
        below = bj <= bi
        nl.store(out[bi * 128 + i_p, i_f], value=nl.load(a[bi * 128 + i_p, i_f]), mask=below)


    @nki.jit
    def k(a, out):
        for i in nl.affine_range(3):
            for j in nl.affine_range(2):
                copy_if_below(a, out, i, j + 1)
    """)
    shapes = {"a": (384, 128), "out": (384, 128)}
    mig = _migrate(src, shapes)
    assert "mask=below" in mig.source and "if " not in mig.source
    assert any("loop variables of its caller that are not its parameters" in f.message
               for f in mig.findings), mig.findings
    assert compare(src, mig.source, "k", shapes) == []


NARROWED_INTO_WHOLE = """\
i_p = nl.arange(128)[:, None]
i_f = nl.arange(8)[None, :]
for h in nl.affine_range(2):
    t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
    x = nl.load(a[h * 128 + i_p, i_f], mask=(h * 128 + i_p < 200))
    t[:, :] VALUE
    nl.store(out[h * 128 + i_p, i_f], value=t, mask=(h * 128 + i_p < 200))
"""


@pytest.mark.parametrize("value", ["= x * 2.0", "= nl.exp(x)", "= x", "+= x"])
def test_narrowed_tile_written_into_a_whole_destination_keeps_its_mask(value):
    """`t[:, :] = ...` keeps the legacy tile's 128 rows: a value narrowed to 72 rows in the
    last iteration would not fit it, so the load that would narrow it keeps its mask."""
    src = _kernel(NARROWED_INTO_WHOLE.replace("VALUE", value))
    shapes = {"a": (200, 8), "out": (200, 8)}
    mig = _migrate(src, shapes)
    load = next(line for line in mig.source.splitlines() if "nl.load" in line)
    assert "mask=" in load, mig.source
    assert compare(src, mig.source, "k", shapes) == []


def test_narrowed_tile_holding_a_smaller_box_is_sliced_to_it():
    """`y` is narrowed to 64 rows in the last iteration (its mask `< 448`); the store needs 62
    (`< 446`): a bounded slice of `y` is exactly those rows."""
    body = """\
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(8)[None, :]
    for h in nl.affine_range(4):
        x = nl.load(a[h * 128 + i_p, i_f])
        y = nl.exp(x[i_p, i_f], mask=(h * 128 + i_p < 448))
        nl.store(out[h * 128 + i_p, i_f], value=y, mask=(h * 128 + i_p < 446))
    """
    shapes = {"a": (512, 8), "out": (446, 8)}
    src = _kernel(body)
    mig = _migrate(src, shapes)
    assert "nl.exp(x[0:min(128, 448 - 128*h), 0:8])" in mig.source, mig.source
    assert "value=y[0:min(128, 446 - 128*h), 0:8]" in mig.source
    assert "mask=" not in mig.source
    assert compare(src, mig.source, "k", shapes) == []
