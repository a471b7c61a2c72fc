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
from strategies import ROW_OFF_MAX, program_texts


@st.composite
def cases(draw):
    """(program text, inputs, scalars): a random program and exact random inputs."""
    text = draw(program_texts())
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    seed = draw(st.integers(0, 2**16))
    scalars = {"row_off": draw(st.integers(0, ROW_OFF_MAX)), "flag": draw(st.integers(-2, 2))}
    return p, inputs_for(p, seed), scalars


class Rejected(Exception):
    """``et.optimize`` rejected the program with one of its soundness ValueErrors: an Acc window
    the MAD garbles (rules.windows), a valid_shape / drop_dims slice whose col_expand
    materialization corrupts its source, or a window written in place that is not provably
    aligned (rules.checks)."""


REJECTIONS = ("Acc (L0C) tile", "has valid_shape / drop_dims", "is written in place")


def _optimize_or_reject(p):
    try:
        return et.optimize(p)
    except ValueError as e:
        if any(r in str(e) for r in REJECTIONS):
            raise Rejected(str(e)) from e
        raise


def _judge(p, ins, scalars) -> None:
    note("program:\n" + et.print_program(p))
    note(f"scalars: {scalars}")
    try:
        why = unsound_because(_optimize_or_reject, p, ins, scalars)
    except Rejected as e:
        # a rejection claims the program itself miscomputes on the hardware: a false rejection
        # (a program the hardware runs right) fails the property
        note(f"rejected: {e}")
        assert unsound_because(lambda q: q, p, ins, scalars) is not None, f"false rejection: {e}"
        return
    if why is not None:
        note("optimized:\n" + et.print_program(et.optimize(p)))
    assert why is None, why


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
               flag: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[{m}, {n}], pl.FP32]]) -> pl.Tensor[[{m}, {n}], pl.FP32]:
        a_mat = pl.tile.load(a, [0, 0], [{m}, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, {n}], target_memory=pl.Mem.Mat)
        a_all = pl.tile.extract(a_mat, 0, 0, shape=[{m}, 16], target_memory=pl.Mem.Left)
        b_all = pl.tile.extract(b_mat, 0, 0, shape=[16, {n}], target_memory=pl.Mem.Right)
        a_w = pl.tile.extract(a_mat, {r0}, 0, shape=[{r}, 16], target_memory=pl.Mem.Left)
        b_w = pl.tile.extract(b_mat, 0, {c0}, shape=[16, {c}], target_memory=pl.Mem.Right)
{route}
        out = pl.store(acc, [0, 0], out)
        return out
"""

STRAIGHT = "win2 = pl.tile.matmul_acc(win, a_w, b_w)"
TILE = "pl.Tile[[{r}, {c}], pl.FP32, pl.Mem.Acc]"

# the Acc parent ``acc`` (each provably names no window by a different rule: a fresh matmul, a
# matmul_acc into one, a loop carrying one, an if merging two) and the window ``win`` of it (a
# slice, or a slice of a row-band slice: the offsets are peeled)
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
}
WINDOWS = {
    "slice": ["win: " + TILE + " = pl.tile.slice(acc, [{r}, {c}], [{r0}, {c0}])"],
    "peel": ["band: pl.Tile[[{r}, {n}], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc, [{r}, {n}], [{r0}, 0])",
             "win: " + TILE + " = pl.tile.slice(band, [{r}, {c}], [0, {c0}])"],
}


def acc_window_text(m: int, n: int, r: int, c: int, r0: int, c0: int, lines: list[str],
                    r1: int = 0, c1: int = 0) -> str:
    """ACC_WINDOW with ``lines`` (parent, window, route) as its body."""
    body = "".join(" " * 8 + ln + "\n" for ln in lines)
    body = body.format(m=m, n=n, r=r, c=c, r0=r0, c0=c0, r1=r1, c1=c1)
    return ACC_WINDOW.format(m=m, n=n, r=r, c=c, r0=r0, c0=c0, route=body.rstrip("\n"))

# how the window reaches its accumulating matmul_acc (each line is indented into ACC_WINDOW);
# ``oth`` is a second window of ``acc`` with the same extent (the "different window" a loop
# yields), ``acc_use`` the matmul_acc after a loop into its result
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
}


def _loop_route(trips: int, yields: str, after: bool, via_alias: bool = False) -> list[str]:
    lines = [f"for i, (it,) in pl.range({trips}, init_values=(win,)):",
             "    cc = pl.tile.matmul_acc(it, a_w, b_w)"]
    if via_alias:  # the body accumulates into an alias of the carry
        lines[1:] = ["    ita = it", "    cc = pl.tile.matmul_acc(ita, a_w, b_w)"]
    if yields == "pass":  # the body does not accumulate: only the use after the loop writes
        lines[1:] = ["    res = pl.yield_(it)"]
    elif yields == "same":
        lines.append("    res = pl.yield_(cc)")
    else:  # the next trip accumulates into a different window of acc: the loop back edge
        lines += ["    oth: " + TILE + " = pl.tile.slice(acc, [{r}, {c}], [{r1}, {c1}])",
                  "    res = pl.yield_(oth)"]
    if after:  # the loop result names the window only when the yield names the initializer's
        lines.append("fin = pl.tile.matmul_acc(res, a_w, b_w)")
    return lines


LOOPS = {"loop-1-trip-same": ((1, 1), "same"), "loop-1-trip-other": ((1, 1), "other"),
         "loop-2+-trips-same": ((2, 3), "same"), "loop-2+-trips-other": ((2, 3), "other"),
         "loop-pass": ((1, 3), "pass")}


@st.composite
def acc_window_cases(draw, with_shape: bool = False):
    """A matmul_acc into a random in-scope window of an Acc tile (whole 16-row fractals, any
    column extent and offset) — about a third of them windows the hardware garbles — reached
    straight from its slice, through an alias, a same-shape reshape or set_validshape, a chain of
    matmul_acc, an ``if`` whose arms name the same window, or a ``pl.range`` carry (1 to 3 trips)
    whose yield names the same window or a different one (the back edge).  ``with_shape`` also
    returns the route's tag (for the coverage test)."""
    m, n = draw(st.sampled_from([16, 32, 48])), draw(st.sampled_from([16, 32, 48]))
    r = 16 * draw(st.integers(1, m // 16))
    r0 = 16 * draw(st.integers(0, (m - r) // 16))
    c = draw(st.integers(1, n))
    c0 = draw(st.integers(0, n - c))
    r1 = 16 * draw(st.integers(0, (m - r) // 16))
    # the other window (yielded by a loop): garbled or not, half and half when both exist
    garbles = [x for x in range(n - c + 1) if _garbled(m, r, c, x)]
    writes_right = [x for x in range(n - c + 1) if not _garbled(m, r, c, x)]
    c1 = draw(st.sampled_from(garbles if garbles and (not writes_right or draw(st.booleans()))
                              else writes_right))
    parent, wkind = draw(st.sampled_from(list(PARENTS))), draw(st.sampled_from(list(WINDOWS)))
    window = wkind
    route = draw(st.sampled_from([*ROUTES, *LOOPS, "loop-2+-trips-other"]))  # back edge: twice
    bad = _garbled(m, r, c, c0)
    if route in LOOPS:
        trips, yields = draw(st.integers(*LOOPS[route][0])), LOOPS[route][1]
        # after a loop yielding another window the result names no window (stays silent), so the
        # accumulating use after the loop is drawn only for loops yielding the same window
        after = yields == "pass" or (yields == "same" and draw(st.booleans()))
        back_edge = trips > 1 and yields == "other" and _garbled(m, r, c, c1)
        bad, tag_bad = bad or back_edge, "back-edge" if back_edge and not bad else bad
        via_alias = yields != "pass" and draw(st.booleans())
        lines, tag = _loop_route(trips, yields, after, via_alias), route + ("-after" if after else "")
        if via_alias:
            window += "+carry-alias"
    else:
        lines, tag, tag_bad = ROUTES[route], route, bad
    text = acc_window_text(m, n, r, c, r0, c0, PARENTS[parent] + WINDOWS[wkind] + lines, r1, c1)
    p = et.verify_program(et.parse_program(text, filename="<generated>"))
    case = (p, inputs_for(p, draw(st.integers(0, 2**16))), {"flag": draw(st.integers(-1, 2))})
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


ACC_SHAPES = {*ROUTES, *(f"loop-{t}-same{a}" for t in ("1-trip", "2+-trips") for a in ("", "-after")),
              "loop-1-trip-other", "loop-2+-trips-other", "loop-pass-after"}
CHECK_SHAPES = {"colx-const-identity", "colx-const-repack", "colx-dynamic",
                *(f"fillpad-{r}-{a}" for r in ("direct", "set_validshape", "valid_shape")
                  for a in ("aligned", "unaligned"))}


def test_the_strategies_generate_every_window_and_check_shape() -> None:
    """The claim that the properties above reach the window-propagation and rejection rules can
    fail: drawn as the properties draw them, every Acc-window route (good and bad windows) and
    every rules/checks shape (accepted and rejected) turns up."""
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
        if tag == "loop-2+-trips-other" and bad == "back-edge" and "+" in window:
            parts.add("back-edge-through-carry-alias")

    draw_acc()
    assert ACC_SHAPES <= set(seen), ACC_SHAPES - set(seen)
    for tag in ACC_SHAPES - {"loop-1-trip-other"}:
        assert {True, False} <= seen[tag], (tag, seen[tag])  # good and bad windows both
    # a good first window whose loop yields a bad one: only the back-edge check catches it
    assert "back-edge" in seen["loop-2+-trips-other"], seen["loop-2+-trips-other"]
    want = {*PARENTS, *WINDOWS, "carry-alias", "back-edge-through-carry-alias"}
    assert want <= parts, want - parts

    shapes: set[str] = set()
    rng = random.Random(0)
    for _ in range(200):
        g = ProgramGenerator(rng, max_stmts=rng.randint(1, 14))
        text = g.generate()
        et.verify_program(et.parse_program(text))
        shapes |= g.shapes
    assert CHECK_SHAPES <= shapes, CHECK_SHAPES - shapes


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
            _judge(ok, inputs_for(ok, 0), {"flag": 0})


def test_the_property_catches_an_optimizer_that_keeps_every_slice_a_view() -> None:
    """The check can fail: leaving every slice as written (zero-copy everywhere) is unsound,
    and the property finds a random program showing it."""
    bad = find(cases(), lambda c: unsound_because(view_everything, *c) is not None,
               settings=settings(max_examples=500, deadline=None, database=None,
                                 suppress_health_check=list(HealthCheck)))
    p, ins, scalars = bad
    assert unsound_because(view_everything, p, ins, scalars) is not None
    assert unsound_because(et.optimize, p, ins, scalars) is None
