"""Every error of the NKI kernel reader: a clear message naming the line, and the rest of the
kernel still analyzed (each kernel below ends with a good access on its last line)."""

import textwrap

import pytest

from egraph_tiles.nki.kernels.analyze import analyze_kernel

HEADER = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n"

# (kernel body after `def k(a, b, i0):`, where a is 8x8, b has no shape; expected message part)
CASES = [
    ("while True:\n    pass", "a `while` loop cannot be analyzed"),
    ("async def f():\n    pass", "unsupported statement `AsyncFunctionDef`"),
    ("x, *y = (1, 2)", "starred assignment targets are not supported"),
    ("x, y = (1, 2, 3)", "cannot unpack 3 values into 2 names"),
    ("x, y = 5", "cannot unpack a int into 2 names"),
    ("for x in unknown_fn():\n    pass", "name 'unknown_fn' is not defined"),
    ("for x in a:\n    pass", "a for loop must iterate over nl.affine_range"),
    ("for x in nl.affine_range(i0):\n    pass", "loop bounds of `nl.affine_range(i0)` must be integers"),
    ("for x in range(0, 8, 0):\n    pass", "has a zero step"),
    ("for x, y in nl.affine_range(4):\n    pass", "a loop variable must be a single name"),
    ("for t in nl.affine_range(4):\n    x = nl.load(a[t, 0:8])", "--bind t=9 is outside the loop range 0..3"),
    ("x = (1, *5)", "cannot unpack `*5`"),
    ("x = {1, 2}", "unsupported expression `{1, 2}`"),
    ("x = nope", "name 'nope' is not defined"),
    ("g = nl.mgrid[0:4, 0:4]\nx = g.q", "an mgrid of rank 2 has no axis .q"),
    ("i = nl.arange(4)[:, None]\nm = (i < 2) | (i > 3)", "masks combine with `&` only"),
    ("i = nl.arange(4)[:, None]\nm = i is None", "unsupported mask comparison"),
    ("i = nl.arange(4)[:, None]\nm = i < b", "mask `i < b`: parameter 'b' has no value"),
    ("t = nl.load(a[0:4, 0:4])\ni = nl.arange(4)[:, None]\nm = i < t", "compares an index with a data tile"),
    ("i = nl.arange(4)[1:2]", "Only support `:` or `None` as subscript to arange"),
    ("x = a.shape[5]", "cannot evaluate `a.shape[5]`"),
    ("x = nl.load(b[0:4])", "parameter 'b' has no value (pass --shape b=D0xD1..."),
    ("i = nl.arange(4)[:, None]\nx = i[0]", "subscripts an index"),
    ("g = nl.mgrid[0:4, 5]", "nl.mgrid takes slices"),
    ("for t in nl.affine_range(64):\n    g = nl.mgrid[0:t]", "nl.mgrid bounds must be integers"),
    ("g = nl.mgrid[4:0]", "nl.mgrid axis `4:0:1` is empty"),
    ("g = nl.mgrid[0:4, 0:4]\nx = nl.load(a[g])", "index with the grid's axes"),
    ("for t in nl.affine_range(4):\n    x = nl.load(a[t * t, 0:8])", "non-affine index in `a[t * t, 0:8]`"),
    ("x = nl.load(a[i0, 0:8])", "index of `a[i0, 0:8]` cannot be analyzed: parameter 'i0' has no value"),
    ("x = nl.load(a[1.5, 0:8])", "a float index"),
    ("x = nl.load(a[None, 0:8])", "`None` (new axis) in a tensor index is not supported"),
    ("x = nl.load(a[nl.arange(4), 0:8])", "expected an index, got arange"),
    ("x = nl.load(a['r', 0:8])", "cannot be analyzed (str)"),
    ("t = nl.zeros_like(b)\nx = t[0:2, 0:2]", "the shape of 't' is not known"),
    ("i = nl.arange(4)[:, None]\nx = nl.load(a[i:4, 0:8])", "slice bounds of `a[i:4, 0:8]` must be integers"),
    ("for t in nl.affine_range(64):\n    i = nl.arange(t)", "nl.arange takes integers known before the kernel runs"),
    ("i = nl.arange(4, 2)", "arange(4, 2) is empty"),
    ("x = nl.load(a[nl.ds(1.5, 4), 0:8])", "nl.ds(start, size) takes an integer"),
    ("for t in nl.affine_range(64):\n    x = nl.load(a[nl.ds(0, t + 1), 0:8])", "the size of nl.ds must be an integer"),
    ("x = nl.load(a[0:4, 0:8], mask=b)", "mask= of `nl.load`: parameter 'b' has no value"),
    ("x = nl.load(a[0:4, 0:8], mask=3)", "mask= of `nl.load` must compare index expressions"),
    ("for t in nl.affine_range(64):\n    x = nl.ndarray((t, 4), dtype=nl.float32)", "the shape must be integers known"),
    ("p = nl.program_id(1.5)", "the axis must be an integer"),
    ("for t in nl.affine_range(64):\n    r = a.reshape((t, 8))", "reshape needs integer dimensions"),
    ("r = a.reshape((3, 3))", "cannot reshape (8, 8) into (3, 3)"),
    ("x = rec(1)", "helper 'rec' calls itself too deeply"),
    ("x = two(1)", "call of helper 'two' gives no value for parameter 'y'"),
    ("x = nl.load(a[..., 0, ...])", "at most one `...` in an index"),
    ("x = nl.load(a[0, 0, 0:1])", "3 indices for a tensor of rank 2"),
    ("x = nl.load(a[0:4, 3:3])", "empty slice"),
]

HELPERS = """
def rec(x):
    return rec(x)

def two(x, y):
    return x
"""


@pytest.mark.parametrize(("body", "message"), CASES, ids=[m[:40] for _, m in CASES])
def test_reader_error_names_the_line_and_what_was_expected(body, message):
    kernel = "@nki.jit\ndef k(a, b, i0):\n" + textwrap.indent(body + "\nok = nl.load(a[0:1, 0:1])", "    ")
    src = HEADER + HELPERS + kernel
    report = analyze_kernel(src, shapes={"a": (8, 8)}, binds={"t": 9} if "--bind" in message else None)
    errors = [f for f in report.findings if message in f.message]
    assert errors, [f.message for f in report.findings]
    first_body_line = (HEADER + HELPERS).count("\n") + 3
    n_lines = body.count("\n") + 1
    helper_lines = range(HEADER.count("\n") + 1, first_body_line)  # errors inside a helper
    assert all(first_body_line <= f.line < first_body_line + n_lines or
               ("helper" in message and f.line in helper_lines) for f in errors)
    ok_line = first_body_line + n_lines
    assert any(a.raw.line == ok_line for a in report.accesses)  # the rest is still analyzed


def test_shape_for_a_missing_parameter_is_reported():
    report = analyze_kernel(HEADER + "@nki.jit\ndef k(a):\n    pass\n", shapes={"a": (2,), "z": (3,)})
    assert [f.message for f in report.findings] == [
        "--shape z: the kernel has no parameter 'z'"]


def test_file_that_is_not_python_is_a_syntax_error():
    with pytest.raises(SyntaxError):
        analyze_kernel("def k(:\n", kernel="k")
