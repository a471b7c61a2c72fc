"""Prepared e-graphs (``schedule.prepared`` / ``release``: handed out bare, rebuilt after
``REBUILD_AFTER`` uses) and bulk loading of table rows (``schedule.load_tables``: every row
arrives, whichever way egglog's ``input`` is fed — in-memory files on Linux, a temporary
directory elsewhere)."""

import pytest

from benchmarks.corpus import MIXED, generate
from egraph_tiles import Report, canonicalize_tile_slice, parse_program, print_program
from egraph_tiles.egraph import schedule
from egraph_tiles.egraph.bindings import eb

PROGRAM = """
(relation Pair (i64 String))
(relation One (i64))
(relation Empty (i64))
(relation Seen (i64))
(ruleset load)
(rule ((Pair n s)) ((Seen n)) :ruleset load)
"""


def _loaded(rows: dict[str, list[tuple]]) -> dict[str, int]:
    eg = schedule.prepared(PROGRAM)
    try:
        schedule.load_tables(eg, rows)
        return {t: eg.run_program(eb.PrintSize(schedule.SPAN, t))[0].size
                for t in ("Pair", "One", "Empty", "Seen")}
    finally:
        schedule.release(eg)


ROWS = {"Pair": [(1, "a"), (-2, "b c"), (3, "Vec")], "One": [(7,)], "Empty": []}


def test_load_tables_loads_every_row_and_runs_the_load_ruleset():
    assert _loaded(ROWS) == {"Pair": 3, "One": 1, "Empty": 0, "Seen": 3}


def test_load_tables_without_in_memory_files_loads_the_same_rows(monkeypatch):
    monkeypatch.delattr(schedule.os, "memfd_create", raising=False)
    assert _loaded(ROWS) == {"Pair": 3, "One": 1, "Empty": 0, "Seen": 3}


def test_load_tables_with_no_rows_only_runs_the_ruleset():
    assert _loaded({"Empty": []}) == {"Pair": 0, "One": 0, "Empty": 0, "Seen": 0}



def test_a_released_e_graph_is_handed_out_again_bare():
    eg = schedule.prepared(PROGRAM)
    schedule.load_tables(eg, ROWS)
    schedule.release(eg)
    again = schedule.prepared(PROGRAM)
    try:
        assert again is eg
        assert again.run_program(eb.PrintSize(schedule.SPAN, "Pair"))[0].size == 0
    finally:
        schedule.release(again)


def test_a_prepared_e_graph_is_rebuilt_after_rebuild_after_uses(monkeypatch):
    monkeypatch.setattr(schedule, "REBUILD_AFTER", 2)
    program = PROGRAM + "(relation Rebuilt (i64))\n"  # an e-graph of its own
    first = schedule.prepared(program)
    schedule.release(first)
    second = schedule.prepared(program)
    schedule.release(second)
    third = schedule.prepared(program)
    schedule.release(third)
    assert second is first and third is not first


# A function smaller than ``CLEAR_BELOW`` statements takes the e-graph unpushed and ``release``
# empties its tables with the ``clear`` rules; a larger one (or a user naming no size) pushes and
# pops.  ``Marked`` holds a fact of the program itself, which ``mark`` adds to: a pop restores it,
# emptying leaves it changed, so such an e-graph is dropped rather than handed out again.
FACTS = PROGRAM + """
(relation Marked (i64))
(Marked 0)
(rule ((Pair n s)) ((Marked n)) :ruleset load :name "mark")
"""


def _sizes(eg):
    return {t: n for t, n in schedule.table_sizes(eg).items() if n}


def test_a_small_function_s_e_graph_is_emptied_and_handed_out_again():
    eg = schedule.prepared(PROGRAM, statements=10)
    schedule.load_tables(eg, ROWS)
    assert _sizes(eg) == {"Pair": 3, "One": 1, "Seen": 3}
    schedule.release(eg)
    again = schedule.prepared(PROGRAM, statements=10)
    try:
        assert again is eg
        assert _sizes(again) == {}
    finally:
        schedule.release(again)


def test_an_emptied_e_graph_not_back_to_its_program_s_facts_is_dropped():
    eg = schedule.prepared(FACTS, statements=10)
    schedule.load_tables(eg, ROWS)
    assert _sizes(eg)["Marked"] == 4
    schedule.release(eg)  # Marked keeps the 3 rows the rule added: not the bare program's
    again = schedule.prepared(FACTS, statements=10)
    try:
        assert again is not eg
        assert _sizes(again) == {"Marked": 1}
    finally:
        schedule.release(again)


def test_a_large_function_s_e_graph_is_restored_by_a_pop():
    eg = schedule.prepared(FACTS, statements=schedule.CLEAR_BELOW)
    schedule.load_tables(eg, ROWS)
    schedule.release(eg)
    again = schedule.prepared(FACTS)
    try:
        assert again is eg
        assert _sizes(again) == {"Marked": 1}
    finally:
        schedule.release(again)


def test_an_e_graph_is_rebuilt_after_serving_clear_limit_statements_unpushed(monkeypatch):
    monkeypatch.setattr(schedule, "CLEAR_LIMIT", 15)
    program = PROGRAM + "(relation Cleared (i64))\n"  # an e-graph of its own
    first = schedule.prepared(program, statements=10)
    schedule.release(first)
    second = schedule.prepared(program, statements=10)
    schedule.release(second)
    third = schedule.prepared(program, statements=10)
    schedule.release(third)
    assert second is first and third is not first


def test_clear_rules_delete_every_tuple_of_each_declared_table():
    program = """(datatype T (N i64 :cost 2) (Pair T T))
(function cost (T) i64 :merge (max old new))
(relation Edge (T T))"""
    assert schedule.clear_rules(program, ["Pair", "cost", "Edge"]).splitlines() == [
        "(ruleset clear)",
        '(rule ((= v (Pair k0 k1))) ((delete (Pair k0 k1))) :ruleset clear :name "clear-Pair")',
        '(rule ((= v (cost k0))) ((delete (cost k0))) :ruleset clear :name "clear-cost")',
        '(rule ((Edge k0 k1)) ((delete (Edge k0 k1))) :ruleset clear :name "clear-Edge")']


def test_clear_rules_refuse_a_table_the_program_does_not_declare():
    with pytest.raises(ValueError, match="'Missing'"):
        schedule.clear_rules("(relation Edge (i64 i64))", ["Edge", "Missing"])


def test_the_pass_decides_the_same_in_an_emptied_e_graph_as_in_a_pushed_one(monkeypatch):
    program = parse_program(generate(MIXED, 300, seed=1).text)
    runs = []
    for clear_below in (10**9, 10**9, 10**9, 0):  # emptied and reused twice, then pushed
        monkeypatch.setattr(schedule, "CLEAR_BELOW", clear_below)
        report = Report()
        out = print_program(canonicalize_tile_slice(program, report=report))
        for f in report.functions:
            f.seconds = 0.0
        runs.append((out, report.to_json()))
    assert runs[0][0] != print_program(program)
    assert runs[1:] == runs[:1] * 3
