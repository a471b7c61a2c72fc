"""Property tests of the NKI kernel reader, inference and migration on random legacy indices.

Each example is a kernel of our own, generated as text: a tensor of random shape, one loop
(``affine_range``) and a launch grid, and one access whose index per tensor dimension is a sum
of scaled aranges on distinct tile axes (``nl.arange`` placed with ``None``s, or ``nl.mgrid`` with
steps), a scaled loop variable, a scaled program id and a constant -- or a basic index of
``nl.ds`` with a loop-variable start, slices and integers -- optionally masked on the partition
axis and on a free axis.  The test computes numpy's reading of the same index itself (it never
uses the reader's values) and checks, at every iteration:

* the access pattern enumerates exactly the numpy-indexed elements, in order (masked elements
  dropped);
* the migrated text (evaluated by a small evaluator of its own) reads them too;
* every out-of-bounds access is reported, and an access that stays inside is not.
"""

import ast
import itertools
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from egraph_tiles.nki.kernels.analyze import analyze_kernel, pattern_elements
from egraph_tiles.nki.kernels.migrate import migrate_kernel
from test_nki_reader_errors import CASES as ERROR_CASES

HEADER = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n"


@st.composite
def advanced_cases(draw):
    rank = draw(st.integers(2, 3))
    n_axes = draw(st.integers(1, 3))
    axes = []  # (start, stop, step) of each tile axis
    for k in range(n_axes):
        step = draw(st.integers(1, 3))
        start = draw(st.integers(0, 2))
        count = draw(st.integers(1, 6 if k else 8))
        axes.append((start, start + step * (count - 1) + 1, step))
    dim_of = [draw(st.integers(0, rank - 1)) for _ in range(n_axes)]
    coef = [draw(st.integers(1, 3)) for _ in range(n_axes)]
    trips = draw(st.integers(1, 3))
    grid = draw(st.integers(1, 2))
    loop_c = [draw(st.integers(0, 4)) for _ in range(rank)]
    pid_c = [draw(st.integers(0, 4)) for _ in range(rank)]
    const = [draw(st.integers(0, 3)) for _ in range(rank)]
    use_mgrid = draw(st.booleans())
    masks = []
    if draw(st.booleans()):  # on the partition axis, moving with the loop
        masks.append((0, draw(st.integers(0, 3)), draw(st.integers(1, 30))))
    if n_axes > 1 and draw(st.booleans()):  # on a free axis
        masks.append((draw(st.integers(1, n_axes - 1)), 0, draw(st.integers(1, 20))))
    # a tensor that the index fits -- or, sometimes, overruns
    need = []
    for d in range(rank):
        hi = const[d] + loop_c[d] * (trips - 1) + pid_c[d] * (grid - 1)
        hi += sum(c * (a[1] - 1) for a, c, dd in zip(axes, coef, dim_of) if dd == d)
        need.append(hi + 1)
    shape = tuple(n + draw(st.integers(-2, 3)) if draw(st.integers(0, 4)) == 0 else
                  n + draw(st.integers(0, 3)) for n in need)
    shape = tuple(max(1, n) for n in shape)
    return dict(kind="advanced", rank=rank, axes=axes, dim_of=dim_of, coef=coef, trips=trips,
                grid=grid, loop_c=loop_c, pid_c=pid_c, const=const, use_mgrid=use_mgrid,
                masks=masks, shape=shape)


@st.composite
def basic_cases(draw):
    rank = draw(st.integers(2, 3))
    trips = draw(st.integers(1, 3))
    subs = []
    for d in range(rank):
        kind = draw(st.sampled_from(["ds", "slice", "int"]))
        if kind == "ds":
            subs.append(("ds", draw(st.integers(0, 4)), draw(st.integers(0, 3)), draw(st.integers(1, 5))))
        elif kind == "slice":
            start, n, step = draw(st.integers(0, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 3))
            subs.append(("slice", start, start + step * (n - 1) + 1, step))
        else:
            subs.append(("int", draw(st.integers(0, 3)), draw(st.integers(0, 2))))
    need = []
    for s in subs:
        if s[0] == "ds":
            need.append(s[1] * (trips - 1) + s[2] + s[3])
        elif s[0] == "slice":
            need.append(s[2])
        else:
            need.append(s[1] + s[2] * (trips - 1) + 1)
    shape = tuple(max(1, n + (draw(st.integers(-2, 0)) if draw(st.integers(0, 5)) == 0
                              else draw(st.integers(0, 3)))) for n in need)
    return dict(kind="basic", rank=rank, subs=subs, trips=trips, grid=1, shape=shape, masks=[])


# ----- the kernel text and numpy's reading of it --------------------------------------------------

def _placement(k: int, n: int) -> str:
    return "[" + ", ".join(":" if j == k else "None" for j in range(n)) + "]"


def kernel_text(case) -> str:
    lines = ["@nki.jit", "def k(a):", "    pid = nl.program_id(0)"]
    if case["kind"] == "advanced":
        n = len(case["axes"])
        if case["use_mgrid"]:
            grid = ", ".join(f"{a}:{b}:{s}" for a, b, s in case["axes"])
            names = ", ".join(f"i{k}" for k in range(n))
            lines.append(f"    {names}{',' if n == 1 else ''} = nl.mgrid[{grid}]")
        else:
            for k, (a, b, s) in enumerate(case["axes"]):
                count = len(range(a, b, s))
                lines.append(f"    i{k} = nl.arange({count}){_placement(k, n)} * {s} + {a}")
    lines.append(f"    for t in nl.affine_range({case['trips']}):")
    if case["kind"] == "advanced":
        parts = []
        for d in range(case["rank"]):
            terms = [f"{c} * i{k}" for k, (c, dd) in enumerate(zip(case["coef"], case["dim_of"])) if dd == d]
            terms += [f"{case['loop_c'][d]} * t", f"{case['pid_c'][d]} * pid", str(case["const"][d])]
            parts.append(" + ".join(terms))
        mask = " & ".join(f"(i{k} + {m} * t < {b})" for k, m, b in case["masks"])
        call = f"nl.load(a[{', '.join(parts)}]" + (f", mask={mask})" if mask else ")")
    else:
        parts = []
        for s in case["subs"]:
            if s[0] == "ds":
                parts.append(f"nl.ds({s[1]} * t + {s[2]}, {s[3]})")
            elif s[0] == "slice":
                parts.append(f"{s[1]}:{s[2]}:{s[3]}")
            else:
                parts.append(f"{s[1]} + {s[2]} * t")
        call = f"nl.load(a[{', '.join(parts)}])"
    lines.append(f"        x = {call}")
    return HEADER + "\n".join(lines) + "\n"


def numpy_reading(case, t: int, pid: int):
    """(index arrays or None if outside the tensor, mask or None) of the access at (t, pid)."""
    shape = case["shape"]
    if case["kind"] == "basic":
        idx = []
        for s in case["subs"]:
            if s[0] == "ds":
                idx.append(slice(s[1] * t + s[2], s[1] * t + s[2] + s[3]))
            elif s[0] == "slice":
                idx.append(slice(s[1], s[2], s[3]))
            else:
                idx.append(s[1] + s[2] * t)
        inside = all((0 <= i < n) if isinstance(i, int) else (0 <= i.start and i.stop <= n)
                     for i, n in zip(idx, shape))
        return (tuple(idx) if inside else None), None
    n = len(case["axes"])
    ax = []
    for k, (a, b, s) in enumerate(case["axes"]):
        shp = [1] * n
        shp[k] = len(range(a, b, s))
        ax.append(np.arange(a, b, s).reshape(shp))
    tile = np.broadcast_shapes(*[x.shape for x in ax])
    idx = []
    for d in range(case["rank"]):
        e = case["const"][d] + case["loop_c"][d] * t + case["pid_c"][d] * pid
        for k in range(n):
            if case["dim_of"][k] == d:
                e = e + case["coef"][k] * ax[k]
        idx.append(np.broadcast_to(np.asarray(e), tile))
    mask = None
    for k, m, b in case["masks"]:
        mk = np.broadcast_to(ax[k] + m * t < b, tile)
        mask = mk if mask is None else mask & mk
    live = np.ones(tile, bool) if mask is None else mask
    inside = all(((i[live] >= 0) & (i[live] < dim)).all() for i, dim in zip(idx, shape))
    return (tuple(idx) if inside else None), mask


def evaluate_migrated(text: str, env: dict, data: np.ndarray) -> np.ndarray:
    """Read ``a[...]`` / ``a.ap([...], offset=...)`` text with numpy (a tiny evaluator)."""
    node = ast.parse(text, mode="eval").body

    def num(e):
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Name):
            return env[e.id]
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return -num(e.operand)
        if isinstance(e, ast.BinOp):
            a, b = num(e.left), num(e.right)
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b,
                    ast.FloorDiv: a // b if b else 0, ast.Mod: a % b if b else 0}[type(e.op)]
        if isinstance(e, ast.Call) and e.func.id in ("min", "max"):
            return (min if e.func.id == "min" else max)(num(a) for a in e.args)
        raise AssertionError(ast.dump(e))

    if isinstance(node, ast.Call):  # a.ap([[s, c], ...], offset=o)
        pattern = [(num(p.elts[0]), num(p.elts[1])) for p in node.args[0].elts]
        offset = num(node.keywords[0].value) if node.keywords else 0
        counts = [max(c, 0) for _, c in pattern]
        flat = np.full(counts, offset)
        for k, (s, c) in enumerate(zip([s for s, _ in pattern], counts)):
            shp = [1] * len(counts)
            shp[k] = c
            flat = flat + s * np.arange(c).reshape(shp)
        return data.reshape(-1)[flat]
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    idx = []
    for e in elts:
        if isinstance(e, ast.Slice):
            idx.append(slice(num(e.lower), num(e.upper), num(e.step) if e.step else None))
        else:
            idx.append(num(e))
    return data[tuple(idx)]


def check_case(case):
    src = kernel_text(case)
    report = analyze_kernel(src, shapes={"a": case["shape"]}, grid=(case["grid"],))
    errors = [f for f in report.findings if f.kind not in ("out-of-bounds",)]
    assert errors == [], (src, errors)
    (rep,) = report.accesses
    data = np.arange(int(np.prod(case["shape"]))).reshape(case["shape"])
    readings = {(t, p): numpy_reading(case, t, p)
                for t, p in itertools.product(range(case["trips"]), range(case["grid"]))}
    overrun = any(idx is None for idx, _ in readings.values())
    reported = [f for f in report.findings if f.kind == "out-of-bounds"]
    assert bool(reported) == overrun, (src, case["shape"], reported)
    mig = migrate_kernel(report)
    text = mig.texts.get(id(rep))
    if not overrun and case["kind"] == "advanced" and not case["masks"]:
        assert text is not None, (src, mig.findings)
    if text is None and case["kind"] == "advanced" and not overrun:
        # e.g. a mask on a size-1 axis is a predicate on the loop only, or an access that a
        # mask empties still names an index outside the tensor: said, not guessed
        assert any(f.message.startswith("not migrated") for f in mig.findings), (src, mig.findings)
    for (t, p), (idx, mask) in readings.items():
        if idx is None:
            continue
        if mask is not None and not mask.any() and rep.guards:
            continue  # a predicate on the loop only: the instruction does not run here
        if mask is not None:  # masked-off positions may lie outside: never read them
            idx = tuple(np.clip(i, 0, n - 1) for i, n in zip(idx, case["shape"]))
        want = data[idx]
        if mask is not None:
            want = want[mask]
        env = {"t": t, "program_id_0": p, "pid": p}
        got = pattern_elements(rep, env)
        assert np.array_equal(got.reshape(-1), want.reshape(-1)), (src, env, got, want)
        if mask is None:  # same shape, up to size-1 axes
            assert [d for d in got.shape if d != 1] == [d for d in want.shape if d != 1]
        if text is not None:
            new = evaluate_migrated(text, env, data)
            assert np.array_equal(new.reshape(-1), want.reshape(-1)), (src, text, env)


@given(advanced_cases())
def test_random_legacy_index_pattern_migration_and_bounds(case):
    check_case(case)


@given(basic_cases())
def test_random_basic_index_with_ds_pattern_and_bounds(case):
    check_case(case)


@pytest.mark.slow
@given(st.one_of(advanced_cases(), basic_cases()))
def test_random_indices_long_run(case):
    check_case(case)


GOOD_LINES = [
    "i_p = nl.arange(8)[:, None]",
    "i_f = nl.arange(4)[None, :]",
    "x = nl.load(a[i_p, i_f])",
    "for t in nl.affine_range(2):\n    y = nl.load(a[t * 4 + i_p, i_f], mask=(t * 4 + i_p < 6))",
    "g = nl.mgrid[0:4, 0:2]",
    "nl.store(a[g.p, g.x], value=x)",
    "z = nl.exp(x)",
    "w = nl.load(a[nl.ds(1, 4), 0:4])",
]


@given(st.lists(st.sampled_from(GOOD_LINES + [body for body, _ in ERROR_CASES]),
                min_size=1, max_size=8))
def test_reader_never_crashes_on_any_mix_of_statements(lines):
    body = textwrap.indent("\n".join(lines), "    ")
    src = HEADER + "def rec(x):\n    return rec(x)\n\ndef two(x, y):\n    return x\n\n" \
        "@nki.jit\ndef k(a, b, i0):\n" + body + "\n"
    report = analyze_kernel(src, shapes={"a": (8, 8)})
    assert all(f.line >= 1 for f in report.findings)
    migrate_kernel(report)  # never raises, never prints a file that does not parse
