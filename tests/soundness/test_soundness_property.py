"""End-to-end soundness: for random programs, ``hardware(optimize(p)) == ideal(p)`` with no
fault.  The property test is slow (CI profile: 200 programs, nightly: 2000); a 10-example
smoke version runs by default.  Shrunk failures are printed as DSL text.

A rejection (``ValueError`` from the Acc-window or rules/checks rejection rules) is judged too: the
unoptimized program must then fault or differ from ideal on the hardware model, so a false
rejection fails the property.  The random programs include the rules/checks shapes
(:mod:`egraph_tiles.dsl.generate`); the Acc-window programs route the window through every
propagation edge of rules/windows.py.  ``test_the_strategies_generate_every_window_and_check_shape``
makes sure they are actually drawn."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, find, given, note, settings
from hypothesis import strategies as st

import egraph_tiles as et
from egraph_tiles.passes.baselines import view_everything
from egraph_tiles.sim.soundness import unsound_because
from simkit import inputs_for
from strategies import (ACC_RESHAPE_ROUTES, ACC_RESHAPE_SAFE, MAT_CALL_ROUTES, ROW_OFF_MAX,
                        acc_reshape_cases, mat_call_cases, program_texts, window_reshape_cases)


@st.composite
def cases(draw):
    """(program text, inputs, scalars): a random program and exact random inputs."""
    text = draw(program_texts())
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    seed = draw(st.integers(0, 2**16))
    scalars = {"row_off": draw(st.integers(0, ROW_OFF_MAX)), "flag": draw(st.integers(-2, 2))}
    return p, inputs_for(p, seed), scalars


class Rejected(Exception):
    """``et.optimize`` rejected the program (a ``ValueError``: an Acc window the MAD garbles, a
    valid_shape / drop_dims slice whose col_expand materialization corrupts its source, a window
    written in place that is not provably aligned, a value whose storage is unknown, ...).  Any
    rejection is judged the same way: it must be confirmed on the hardware model."""


def _optimize_or_reject(p):
    try:
        return et.optimize(p)
    except ValueError as e:
        raise Rejected(str(e)) from e


def _judge(p, ins, scalars, domain: dict[str, list[int]] | None = None) -> None:
    """``domain`` lists other values of the scalars: a rejection names a path, and it is confirmed
    when the unoptimized program miscomputes on the hardware model for the drawn scalars or for
    some other assignment from the domain (the one that takes the path)."""
    note("program:\n" + et.print_program(p))
    note(f"scalars: {scalars}")
    try:
        why = unsound_because(_optimize_or_reject, p, ins, scalars)
    except Rejected as e:
        # a rejection claims the program itself miscomputes on the hardware along some path: a
        # false rejection (a program the hardware runs right on every path) fails the property
        note(f"rejected: {e}")
        assert any(unsound_because(lambda q: q, p, ins, sc) is not None
                   for sc in _assignments(scalars, domain or {})), f"false rejection: {e}"
        return
    if why is not None:
        note("optimized:\n" + et.print_program(et.optimize(p)))
    assert why is None, why


def _assignments(scalars: dict, domain: dict[str, list[int]]):
    """The drawn scalars first, then every other assignment from ``domain``."""
    import itertools

    yield scalars
    names = list(domain)
    for values in itertools.product(*(domain[k] for k in names)):
        sc = {**scalars, **dict(zip(names, values))}
        if sc != scalars:
            yield sc


@pytest.mark.slow
@given(cases())
def test_optimized_random_programs_match_ideal_on_hardware(case) -> None:
    _judge(*case)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_optimized_random_programs_match_ideal_on_hardware_smoke(case) -> None:
    _judge(*case)


ACC_WINDOW = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[{m}, 16], pl.FP16], b: pl.Tensor[[16, {n}], pl.FP16],
               flag: pl.Scalar[pl.INDEX], nt: pl.Scalar[pl.INDEX], off: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[{m}, {n}], pl.{dt}]]) -> pl.Tensor[[{m}, {n}], pl.{dt}]:
        a_mat = pl.tile.load(a, [0, 0], [{m}, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, {n}], target_memory=pl.Mem.Mat)
        a_all = pl.tile.extract(a_mat, 0, 0, shape=[{m}, 16], target_memory=pl.Mem.Left)
        b_all = pl.tile.extract(b_mat, 0, 0, shape=[16, {n}], target_memory=pl.Mem.Right)
        a_w = pl.tile.extract(a_mat, {r0}, 0, shape=[{r}, 16], target_memory=pl.Mem.Left)
        b_w = pl.tile.extract(b_mat, 0, 0, shape=[16, {c}], target_memory=pl.Mem.Right)
{route}
        out = pl.store(acc, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def accum(self, w: pl.Tile[[{r}, {c}], pl.{dt}, pl.Mem.Acc], lt: pl.Tile[[{r}, 16], pl.FP16, pl.Mem.Left],
              rt: pl.Tile[[16, {c}], pl.FP16, pl.Mem.Right]) -> pl.Tile[[{r}, {c}], pl.{dt}, pl.Mem.Acc]:
        w2 = pl.tile.matmul_acc(w, lt, rt)
        return w2
"""

STRAIGHT = "win2 = pl.tile.matmul_acc(win, a_w, b_w)"
TILE = "pl.Tile[[{r}, {c}], pl.{dt}, pl.Mem.Acc]"

# the Acc parent ``acc`` (each provably names no window by a different rule: a fresh matmul, a
# matmul_acc into one, a loop carrying one, an if merging two; a page of a batch (3-D) tile; an
# FP16 accumulator) and the window ``win`` of it (a slice, or a slice of a row-band slice: the
# offsets are peeled)
PARENTS = {
    "matmul": ["acc = pl.tile.matmul(a_all, b_all)"],
    "accumulated": ["acc0 = pl.tile.matmul(a_all, b_all)",
                    "acc = pl.tile.matmul_acc(acc0, a_all, b_all)"],
    "loop": ["acc0 = pl.tile.matmul(a_all, b_all)",
             "for j, (pa,) in pl.range(2, init_values=(acc0,)):",
             "    pa2 = pl.tile.matmul_acc(pa, a_all, b_all)",
             "    acc = pl.yield_(pa2)"],
    "if": ["if flag > 1:",
           "    p1 = pl.tile.matmul(a_all, b_all)",
           "    acc = pl.yield_(p1)",
           "else:",
           "    p2 = pl.tile.matmul(a_all, b_all)",
           "    acc = pl.yield_(p2)"],
    "batch-page": ["acc3 = pl.tile.create([2, {m}, {n}], pl.FP32, target_memory=pl.Mem.Acc)",
                   "acc: pl.Tile[[{m}, {n}], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc3, [1, {m}, {n}], "
                   "[1, 0, 0], drop_dims=[0])"],
    "fp16": ["acc = pl.tile.create([{m}, {n}], pl.FP16, target_memory=pl.Mem.Acc)"],
}
WINDOWS = {
    "slice": ["win: " + TILE + " = pl.tile.slice(acc, [{r}, {c}], [{r0}, {c0}])"],
    "peel": ["band: pl.Tile[[{r}, {n}], pl.{dt}, pl.Mem.Acc] = pl.tile.slice(acc, [{r}, {n}], [{r0}, 0])",
             "win: " + TILE + " = pl.tile.slice(band, [{r}, {c}], [0, {c0}])"],
}


def acc_window_text(m: int, n: int, r: int, c: int, r0: int, c0: int | str, lines: list[str],
                    r1: int = 0, c1: int = 0, dt: str = "FP32", step: int = 1) -> str:
    """ACC_WINDOW with ``lines`` (parent, window, route) as its body."""
    body = "".join(" " * 8 + ln + "\n" for ln in lines)
    body = body.format(m=m, n=n, r=r, c=c, r0=r0, c0=c0, r1=r1, c1=c1, dt=dt, step=step,
                       hi=n - c + 1)
    return ACC_WINDOW.format(m=m, n=n, r=r, c=c, r0=r0, c0=c0, dt=dt, route=body.rstrip("\n"))

# how the window reaches its accumulating matmul_acc (each line is indented into ACC_WINDOW);
# ``oth`` is a second window of ``acc`` with the same extent (the "different window" a branch or a
# loop yields), ``acc_use`` the matmul_acc after a loop into its result
OTHER = "oth: " + TILE + " = pl.tile.slice(acc, [{r}, {c}], [{r1}, {c1}])"
ROUTES = {
    "straight": [STRAIGHT],
    "alias": ["wa = win", "win2 = pl.tile.matmul_acc(wa, a_w, b_w)"],
    "reshape": ["wa: " + TILE + " = pl.tile.reshape(win, [{r}, {c}])",
                "win2 = pl.tile.matmul_acc(wa, a_w, b_w)"],
    "set_validshape": ["wa: " + TILE + " = pl.tile.set_validshape(win, [{r}, {c}])",
                       "win2 = pl.tile.matmul_acc(wa, a_w, b_w)"],
    "chain": [STRAIGHT, "win3 = pl.tile.matmul_acc(win2, a_w, b_w)"],
    "if": ["if flag > 0:",
           "    t: " + TILE + " = pl.tile.slice(acc, [{r}, {c}], [{r0}, {c0}])",
           "    y = pl.yield_(t)",
           "else:",
           "    y = pl.yield_(win)",
           "win2 = pl.tile.matmul_acc(y, a_w, b_w)"],
    # a program function accumulates into the window (checked as if inlined)
    "call": ["win2 = self.accum(win, a_w, b_w)"],
    # the arms name different windows (may-name)
    "if-other": ["if flag > 0:",
                 "    " + OTHER,
                 "    y = pl.yield_(oth)",
                 "else:",
                 "    y = pl.yield_(win)",
                 "win2 = pl.tile.matmul_acc(y, a_w, b_w)"],
}
# routes that read the other window ``oth`` (its garbling counts)
USES_OTHER = {"if-other"}


def _loop_route(trips: int | str, yields: str, after: bool, via_alias: bool = False) -> list[str]:
    lines = [f"for i, (it,) in pl.range({trips}, init_values=(win,)):",
             "    cc = pl.tile.matmul_acc(it, a_w, b_w)"]
    if via_alias:  # the body accumulates into an alias of the carry
        lines[1:] = ["    ita = it", "    cc = pl.tile.matmul_acc(ita, a_w, b_w)"]
    if yields == "pass":  # the body does not accumulate: only the use after the loop writes
        lines[1:] = ["    res = pl.yield_(it)"]
    elif yields == "same":
        lines.append("    res = pl.yield_(cc)")
    elif yields == "if":  # an if inside the body yields the accumulated carry or another window
        lines += ["    if flag > i:", "        y = pl.yield_(cc)", "    else:",
                  "        " + OTHER, "        y = pl.yield_(oth)", "    res = pl.yield_(y)"]
    else:  # the next trip accumulates into a different window of acc: the loop back edge
        lines += ["    " + OTHER, "    res = pl.yield_(oth)"]
    if after:  # the loop result: the initializer (no trip) or what the body yields
        lines.append("fin = pl.tile.matmul_acc(res, a_w, b_w)")
    return lines


# tag -> (trip counts drawn, what the body yields); "sym" loops run ``nt`` trips (0 to 3)
LOOPS = {"loop-1-trip-same": ((1, 1), "same"), "loop-1-trip-other": ((1, 1), "other"),
         "loop-2+-trips-same": ((2, 3), "same"), "loop-2+-trips-other": ((2, 3), "other"),
         "loop-pass": ((1, 3), "pass"), "loop-sym-same": ("nt", "same"),
         "loop-sym-other": ("nt", "other"), "loop-if-in-body": ((2, 3), "if")}
DOMAIN_NT = [0, 1, 2, 3]


@st.composite
def acc_window_cases(draw, with_shape: bool = False):
    """A matmul_acc into a random in-scope window of an Acc tile (whole 16-row fractals, any
    column extent and offset; a constant offset, the scalar ``off`` or a ``pl.range`` variable) —
    about a third of them windows the hardware garbles — reached straight from its slice, through
    an alias, a same-shape reshape or set_validshape, a chain of matmul_acc, a program function
    accumulating into it (``self.accum``), an ``if`` whose arms
    name the same or different windows, or a ``pl.range`` carry (1 to 3 trips, or ``nt``) whose
    yield names the same window, a different one (the back edge), or either (an ``if`` in the
    body); the loop result is used after the loop.  Returns (program, inputs, scalars, domain):
    the rejection judge confirms over the domain of the scalars the program branches on.
    ``with_shape`` also returns the route's tag (for the coverage test)."""
    m, n = draw(st.sampled_from([16, 32, 48])), draw(st.sampled_from([16, 32, 48]))
    r = 16 * draw(st.integers(1, m // 16))
    r0 = 16 * draw(st.integers(0, (m - r) // 16))
    c = draw(st.integers(1, n))
    c0 = draw(st.integers(0, n - c))
    r1 = 16 * draw(st.integers(0, (m - r) // 16))
    # the other window: garbled or not, half and half when both exist
    garbles = [x for x in range(n - c + 1) if _garbled(m, r, c, x)]
    writes_right = [x for x in range(n - c + 1) if not _garbled(m, r, c, x)]
    c1 = draw(st.sampled_from(garbles if garbles and (not writes_right or draw(st.booleans()))
                              else writes_right))
    parent, wkind = draw(st.sampled_from(list(PARENTS))), draw(st.sampled_from(list(WINDOWS)))
    dt = "FP16" if parent == "fp16" else "FP32"
    window = wkind
    domain: dict[str, list[int]] = {"flag": [-1, 0, 1, 2]}
    # a dynamic column offset: the scalar ``off``, or every value of a loop variable
    offset = draw(st.sampled_from(["constant", "constant", "param", "loop-var"]))
    bad = _garbled(m, r, c, c0)
    c0_text: int | str = c0
    if offset == "param":
        c0_text, window = "off", window + "+dynamic-param"
        domain["off"] = list(range(n - c + 1))
        bad = any(_garbled(m, r, c, x) for x in range(n - c + 1))
    route = draw(st.sampled_from([*ROUTES, *LOOPS, "loop-2+-trips-other"]))  # back edge: twice
    if offset == "loop-var":
        step = draw(st.sampled_from([1, 2, 4, 8, 16]))
        lines = ["for j in pl.range(0, {hi}, {step}):",
                 "    winj: " + TILE + " = pl.tile.slice(acc, [{r}, {c}], [{r0}, j])",
                 "    wj = pl.tile.matmul_acc(winj, a_w, b_w)"]
        bad = any(_garbled(m, r, c, x) for x in range(0, n - c + 1, step))
        text = acc_window_text(m, n, r, c, r0, c0, PARENTS[parent] + lines, r1, c1, dt, step)
        tag, tag_bad, window = "dynamic-loop-var", bad, "loop-var"
    else:
        if route in LOOPS:
            trips_spec, yields = LOOPS[route]
            trips: int | str = "nt" if trips_spec == "nt" else draw(st.integers(*trips_spec))
            after = yields == "pass" or draw(st.booleans())
            other = _garbled(m, r, c, c1)
            if trips == "nt":
                domain["nt"] = DOMAIN_NT
                back = yields == "other" and other
            else:
                back = yields in ("other", "if") and other and (trips > 1 or after)
            bad, tag_bad = bad or back, "back-edge" if back and not bad else bad or back
            via_alias = yields not in ("pass", "if") and draw(st.booleans())
            lines = _loop_route(trips, yields, after, via_alias)
            tag = route + ("-after" if after else "")
            if via_alias:
                window += "+carry-alias"
        else:
            lines, tag = ROUTES[route], route
            if route in USES_OTHER:
                bad = bad or _garbled(m, r, c, c1)
            tag_bad = bad
        text = acc_window_text(m, n, r, c, r0, c0_text, PARENTS[parent] + WINDOWS[wkind] + lines,
                               r1, c1, dt)
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    scalars = {"flag": draw(st.integers(-1, 2)), "nt": draw(st.sampled_from(DOMAIN_NT)),
               "off": draw(st.integers(0, n - c))}
    case = (p, inputs_for(p, draw(st.integers(0, 2**16))), scalars, domain)
    return (*case, (tag, tag_bad, parent, window)) if with_shape else case


def _garbled(m: int, r: int, c: int, c0: int) -> bool:
    """Whether the MAD garbles an r x c window at column c0 of an m-row Acc tile (the NZ
    contiguity condition of rules/windows.py, restated for the coverage count)."""
    crosses = c0 // 16 != (c0 + c - 1) // 16
    return crosses if r < m else crosses and c0 % 16 != 0


@pytest.mark.slow
@given(acc_window_cases())
def test_acc_window_programs_are_rejected_exactly_when_the_hardware_garbles_them(case) -> None:
    _judge(*case)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(acc_window_cases())
def test_acc_window_programs_are_rejected_exactly_when_the_hardware_garbles_them_smoke(case) -> None:
    _judge(*case)


ACC_SHAPES = {*ROUTES, "dynamic-loop-var",
              *(f"loop-{t}-{y}{a}" for t in ("1-trip", "2+-trips", "sym") for y in ("same", "other")
                for a in ("", "-after")),
              "loop-pass-after", "loop-if-in-body", "loop-if-in-body-after"}
CHECK_SHAPES = {"colx-const-identity", "colx-const-repack", "colx-dynamic",
                *(f"fillpad-{r}-{a}" for r in ("direct", "set_validshape", "valid_shape")
                  for a in ("aligned", "unaligned"))}


def test_the_strategies_generate_every_window_and_check_shape() -> None:
    """The claim that the properties reach the window-propagation and rejection rules can fail:
    drawn as the properties draw them, every Acc-window route (good and bad windows), every
    rules/checks shape (accepted and rejected), and every route of the Acc-reshape,
    Mat-window-to-callee and Vec-window-reshape strategies (test_reshape_and_callee_property;
    shape-changing or not, dense or not, aligned or not) turns up with the verdict it must get."""
    import random

    from egraph_tiles.dsl.generate import ProgramGenerator

    seen: dict[str, set[bool | str]] = {}
    parts: set[str] = set()

    @settings(max_examples=1000, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(acc_window_cases(with_shape=True))
    def draw_acc(case) -> None:
        tag, bad, parent, window = case[-1]
        seen.setdefault(tag, set()).add(bad)
        parts.update([parent, *window.split("+")])
        if tag.startswith("loop-") and bad == "back-edge" and "carry-alias" in window:
            parts.add("back-edge-through-carry-alias")

    draw_acc()
    assert ACC_SHAPES <= set(seen), ACC_SHAPES - set(seen)
    # good and bad windows both, for every route (with or without a use after the loop)
    family: dict[str, set[bool | str]] = {}
    for tag, verdicts in seen.items():
        family.setdefault(tag.removesuffix("-after"), set()).update(
            True if v == "back-edge" else v for v in verdicts)
    for tag, verdicts in family.items():
        assert {True, False} <= verdicts, (tag, verdicts)
    # a good first window whose loop yields a bad one: only the may-name back edge catches it
    assert any("back-edge" in seen.get(t, ()) for t in ("loop-2+-trips-other", "loop-sym-other",
                                                         "loop-2+-trips-other-after")), seen
    want = {*PARENTS, *WINDOWS, "carry-alias", "back-edge-through-carry-alias", "dynamic-param",
            "loop-var"}
    assert want <= parts, want - parts

    shapes: set[str] = set()
    rng = random.Random(0)
    for _ in range(200):
        g = ProgramGenerator(rng, max_stmts=rng.randint(1, 14))
        text = g.generate()
        et.verify_program(et.parse_program(text))
        shapes |= g.shapes
    assert CHECK_SHAPES <= shapes, CHECK_SHAPES - shapes

    # the boundary strategies: every route, with the verdict each shape must get (an Acc
    # reshape is rejected exactly when it changes the shape and is used; a Mat window exactly
    # when a callee uses it as a matmul operand), each verdict checked on a few programs
    reshapes: dict[tuple[str, bool], int] = {}
    calls: dict[str, int] = {}

    def verdict(p) -> bool:
        try:
            et.optimize(p)
            return False
        except ValueError:
            return True

    @settings(max_examples=300, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(acc_reshape_cases(with_shape=True))
    def draw_reshape(case) -> None:
        route, changed, _parent = case[-1]
        n = reshapes[(route, changed)] = reshapes.get((route, changed), 0) + 1
        if n <= 2:
            assert verdict(case[0]) is (changed and route not in ACC_RESHAPE_SAFE), (route, changed)

    @settings(max_examples=100, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(mat_call_cases(with_shape=True))
    def draw_call(case) -> None:
        route, reject = case[-1]
        calls[route] = calls.get(route, 0) + 1
        if calls[route] <= 2:
            assert verdict(case[0]) is reject, route

    windows: dict[tuple[str, bool, bool], int] = {}

    @settings(max_examples=200, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(window_reshape_cases(with_shape=True))
    def draw_window(case) -> None:
        route, dense, aligned = case[-1]
        n = windows[(route, dense, aligned)] = windows.get((route, dense, aligned), 0) + 1
        if n <= 2:  # read: copied unless a view is proven; written: rejected unless it is one
            assert verdict(case[0]) is (route == "write" and not (dense and aligned)), case[-1]

    draw_reshape()
    draw_call()
    draw_window()
    assert {(r, d, a) for r in ("read", "write") for d in (True, False) for a in (True, False)} \
        <= set(windows), windows
    want = {(r, c) for r in ACC_RESHAPE_ROUTES for c in (True, False)}
    assert want <= set(reshapes), want - set(reshapes)
    assert set(MAT_CALL_ROUTES) <= set(calls), set(MAT_CALL_ROUTES) - set(calls)


@settings(max_examples=1, deadline=None, database=None)
@given(st.just(acc_window_text(16, 64, 16, 32, 0, 32, PARENTS["matmul"] + WINDOWS["slice"] + [STRAIGHT])))
def test_a_false_acc_window_rejection_fails_the_property(text) -> None:
    # an optimizer rejecting a window the hardware writes right ([16,32] at [0,32] of [16,64])
    ok = et.verify_program(et.parse_program(text))

    def reject(p):
        raise ValueError("tile.matmul_acc: a 16x32 row window of a 16x64 Acc (L0C) tile ...")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(et, "optimize", reject)
        with pytest.raises(AssertionError, match="false rejection"):
            _judge(ok, inputs_for(ok, 0), {"flag": 0, "nt": 0, "off": 0})


def test_the_property_catches_an_optimizer_that_keeps_every_slice_a_view() -> None:
    """The check can fail: leaving every slice as written (zero-copy everywhere) is unsound,
    and the property finds a random program showing it."""
    bad = find(cases(), lambda c: unsound_because(view_everything, *c) is not None,
               settings=settings(max_examples=500, deadline=None, database=None,
                                 suppress_health_check=list(HealthCheck)))
    p, ins, scalars = bad
    assert unsound_because(view_everything, p, ins, scalars) is not None
    assert unsound_because(et.optimize, p, ins, scalars) is None
