"""The Acc-window check runs in the e-graph the pass then loads the function's facts into
(``check_acc_windows(..., keep=True)``, ``schedule.new_egraph(acc_windows=True)``): its facts sit
in tables of their own, so the pass decides, prints and counts exactly what it would with the
check in an e-graph of its own, and the e-graph is given back bare whatever happens."""

from __future__ import annotations

import re

import pytest

import egraph_tiles as et
from egraph_tiles.egraph import schedule
from egraph_tiles.checks import windows as win
from egraph_tiles.egraph.bindings import eb
from egraph_tiles.egraph.encode import encode_function
from egraph_tiles.egraph.sexp import parse_sexps
from egraph_tiles.ir.effects import function_effects
from egraph_tiles.passes import canonicalize
from egraph_tiles.rules import windows as rules

#: a K loop accumulating into a full-row column window of a wider Acc tile (accepted), reading
#: its left operand through an offset-0 full-shape Mat slice (folded by the pass)
BOTH = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 128], pl.BF16], w: pl.Tensor[[128, 32], pl.BF16],
               out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        x_mat = pl.tile.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Mat)
        w_mat = pl.tile.load(w, [0, 0], [128, 32], target_memory=pl.Mem.Mat)
        xs: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.tile.slice(x_mat, [16, 128], [0, 0])
        acc = pl.tile.create([16, 64], pl.FP32, target_memory=pl.Mem.Acc)
        page: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc, [16, 32], [0, 32])
        for ko, (c_iter,) in pl.range(0, 128, 64, init_values=(page,)):
            a = pl.tile.extract(xs, 0, ko, shape=[16, 64], target_memory=pl.Mem.Left)
            b = pl.tile.extract(w_mat, ko, 0, shape=[64, 32], target_memory=pl.Mem.Right)
            cc = pl.tile.matmul_acc(c_iter, a, b)
            c = pl.yield_(cc)
        out = pl.store(c, [0, 0], out)
        return out
"""

#: the same accumulator as a 16-row window of a 32-row Acc tile: not contiguous, rejected
BAD = BOTH.replace("[16, 64], pl.FP32", "[32, 32], pl.FP32").replace("[0, 32])", "[16, 0])")

#: Vec slices only: nothing for the Acc-window check
VEC_ONLY = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        s = pl.tile.slice(t, [16, 32], [0, 32])
        y = pl.tile.add(s, s)
        out = pl.store(y, [0, 0], out)
        return out
"""


def _programs_taken(monkeypatch) -> list[str]:
    """The programs of the prepared e-graphs handed out from now on."""
    taken: list[str] = []
    prepared = schedule.prepared

    def recording(program: str, statements: int | None = None):
        taken.append(program)
        return prepared(program, statements)

    monkeypatch.setattr(schedule, "prepared", recording)
    return taken


def _run(text: str) -> tuple[str, list[tuple]]:
    report = et.Report()
    out = et.canonicalize_tile_slice(et.parse_program(text, filename="k.py"), report=report)
    return et.print_program(out), [(f.enodes, f.iterations, f.saturated, f.bytes_after,
                                     [d.__dict__ for d in f.decisions]) for f in report.functions]


def _window_rows(eg) -> dict[str, int]:
    """The tuples of each of the check's tables (``rules.windows.TABLES``)."""
    out = eg.run_program(eb.PrintSize(schedule.SPAN, None))
    return {name: n for o in out for name, n in getattr(o, "sizes", []) if name in rules.TABLES}


def test_the_check_has_something_to_check_in_the_kernel_with_both():
    prog = et.parse_program(BOTH)
    enc, found = win.violations(prog.functions[0], None, prog)
    assert enc is not None and enc.written and not found


def test_sharing_the_e_graph_prints_and_counts_what_an_e_graph_of_its_own_gives(monkeypatch):
    taken = _programs_taken(monkeypatch)
    shared = _run(BOTH)
    assert taken == [schedule.program_text(acc_windows=True)]  # one e-graph for the function

    check = canonicalize.check_acc_windows
    monkeypatch.setattr(canonicalize, "check_acc_windows",
                        lambda fn, fx, program, keep: check(fn, fx, program))
    taken.clear()
    own = _run(BOTH)
    assert taken == [schedule.program_text(acc_windows=True), schedule.program_text()]
    assert shared == own
    assert shared[1][0][0] > 0 and shared[1][0][4]  # counted, and a decision was made


def test_the_check_facts_are_inert_and_uncounted_through_the_pass():
    prog = et.parse_program(BOTH)
    fn = prog.functions[0]
    fx = function_effects(fn)
    eg = win.check_acc_windows(fn, fx, prog, keep=True)
    assert eg is not None
    left = _window_rows(eg)
    bare = schedule.new_egraph()
    try:
        assert sum(left.values()) > 0 and schedule.size(eg) == schedule.size(bare)
    finally:
        schedule.release(bare)

    def pass_facts(eg) -> tuple[int, int]:
        enc = encode_function(fn, fx, prog)
        schedule.load_tables(eg, enc.rows)
        stats = schedule.saturate(eg, schedule.Limits())
        schedule.run_checks(eg)
        return stats.enodes, stats.iterations

    try:
        counted = pass_facts(eg)
        assert _window_rows(eg) == left  # no rule of the pass touched the check's facts
    finally:
        schedule.release(eg)
    alone = schedule.new_egraph()
    try:
        assert pass_facts(alone) == counted
    finally:
        schedule.release(alone)


def test_the_check_on_its_own_gives_its_e_graph_back_bare(monkeypatch):
    taken = _programs_taken(monkeypatch)
    prog = et.parse_program(BOTH)
    assert win.check_acc_windows(prog.functions[0], None, prog) is None
    assert taken == [schedule.program_text(acc_windows=True)]
    eg = schedule.new_egraph(acc_windows=True)
    try:
        assert sum(_window_rows(eg).values()) == 0
    finally:
        schedule.release(eg)


def test_a_rejected_window_gives_the_e_graph_back_before_raising(monkeypatch):
    used = []
    new_egraph = win.new_egraph
    monkeypatch.setattr(win, "new_egraph", lambda **kw: used.append(new_egraph(**kw)) or used[-1])
    bad = et.parse_program(BAD)
    with pytest.raises(ValueError, match="not contiguous in L0C's block layout"):
        win.check_acc_windows(bad.functions[0], None, bad, keep=True)
    again = schedule.new_egraph(acc_windows=True)
    try:
        assert again is used[0]  # given back, not dropped
        assert sum(_window_rows(again).values()) == 0
    finally:
        schedule.release(again)
    good = et.parse_program(BOTH)
    eg = win.check_acc_windows(good.functions[0], None, good, keep=True)
    assert eg is not None
    schedule.release(eg)


def test_a_function_with_nothing_to_check_takes_the_engines_program_alone(monkeypatch):
    taken = _programs_taken(monkeypatch)
    _run(VEC_ONLY)
    assert taken == [schedule.program_text()]


def test_a_graphviz_dump_shows_the_engines_facts_alone(monkeypatch, tmp_path):
    taken = _programs_taken(monkeypatch)
    monkeypatch.setattr(schedule, "write_dot", lambda eg, path: None)
    opts = canonicalize.Options(dot_prefix=str(tmp_path / "k_"))
    et.canonicalize_tile_slice(et.parse_program(BOTH), options=opts)
    assert taken == [schedule.program_text(acc_windows=True), schedule.program_text()]


def test_the_checks_row_tables_of_one_column_signature_are_read_from_one_relation():
    # every integer table the encoder fills (its input relations, the slice / bounds rows, the
    # renamed index tables) is a tagged row of the relation of its column signature: one input
    # per signature, no table of its own
    assert rules.TAGGED["w_ext"] == ("w_in_ii", rules.TAGGED["w_ext"][1])
    assert rules.TAGGED["w_IdxLitRow"][0] == rules.TAGGED["w_result"][0] == "w_in_ii"
    assert rules.TAGGED["WSliceRow"][0] == rules.TAGGED["w_iter"][0] == "w_in_iiii"
    assert not set(rules.TAGGED) & rules.TABLES
    assert {"w_in_ii", "w_in_iii", "w_in_iiii", "w_in_iiiii"} <= rules.TABLES
    # a signature of one table keeps its table (nothing to share)
    alone = {"w_tile", rules.RENAMED["IdxSymRow"]}
    assert alone <= rules.TABLES and not alone & set(rules.TAGGED)


def test_two_row_tables_of_the_check_sharing_a_relation_state_only_their_own_facts():
    # w_alias and w_ext are both (tag, a, b) rows of w_in_ii: an alias of a parameter (a root)
    # with its extent is a root too (w-edge-alias, w-root-ident); the alias row is no extent
    # fact, nor the extent rows aliases
    same = {"w_param": [(2,)], "w_alias": [(1, 2)], "w_ext": [(1, 7), (2, 7)]}
    apart = {"w_param": [(2,)], "w_alias": [(1, 2)], "w_ext": [(1, 7), (2, 8)]}
    swapped = {"w_param": [(2,)], "w_alias": [(1, 7), (2, 7)], "w_ext": [(1, 2)]}
    for rows, roots in ((same, [[1], [2]]), (apart, [[2]]), (swapped, [[2]])):
        eg, read = win.run_rules(rows, ("w_root",))
        schedule.release(eg)
        assert read["w_root"] == roots


def test_the_relations_sharing_a_first_run_relation_are_derived_from_input_relations_alone():
    # (the premise of rules.windows.FIRST_RUN: each is complete after the check's first run)
    inputs = {name for name, _ in re.findall(r"\(relation\s+(\S+)\s+\(([^()]*)\)\)",
                                               rules.INPUTS)}
    writers = 0
    for rule in parse_sexps(rules.RULES):
        if rule[0] != "rule" or not {atom[0] for atom in rule[2]} & set(rules.FIRST_RUN):
            continue
        writers += 1
        assert rule[rule.index(":ruleset") + 1] == "windows"
        body = {atom[0] for atom in rule[1] if atom[0] not in ("=", "!=", "<", ">", "<=", ">=")}
        assert body <= inputs, (rule[-1], body - inputs)
    assert writers >= len(rules.FIRST_RUN)
