"""Prepared e-graphs (``schedule.prepared`` / ``release``: handed out bare, rebuilt after
``REBUILD_AFTER`` uses) and bulk loading of table rows (``schedule.load_tables``: every row
arrives, whichever way egglog's ``input`` is fed — in-memory files on Linux, a temporary
directory elsewhere)."""

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
        schedule.release(eg, PROGRAM)


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
    schedule.release(eg, PROGRAM)
    again = schedule.prepared(PROGRAM)
    try:
        assert again is eg
        assert again.run_program(eb.PrintSize(schedule.SPAN, "Pair"))[0].size == 0
    finally:
        schedule.release(again, PROGRAM)


def test_a_prepared_e_graph_is_rebuilt_after_rebuild_after_uses(monkeypatch):
    monkeypatch.setattr(schedule, "REBUILD_AFTER", 2)
    program = PROGRAM + "(relation Rebuilt (i64))\n"  # an e-graph of its own
    first = schedule.prepared(program)
    schedule.release(first, program)
    second = schedule.prepared(program)
    schedule.release(second, program)
    third = schedule.prepared(program)
    schedule.release(third, program)
    assert second is first and third is not first
