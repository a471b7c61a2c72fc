"""Bulk loading of table rows (``schedule.load_tables``): every row arrives, whichever way
egglog's ``input`` is fed (in-memory files on Linux, a temporary directory elsewhere)."""

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

