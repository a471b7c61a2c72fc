"""The stratified saturation (``schedule.saturate``): the term-making rulesets under limits, then
each other ruleset saturated in dependency order.  It derives exactly what running every ruleset
together until nothing changes derives — the same tuples in every table."""

from pathlib import Path

import pytest

from benchmarks.corpus import MIXED, generate
from canon_helpers import engine_rows
from egraph_tiles.egraph import schedule
from egraph_tiles.egraph.bindings import eb

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _all_together(eg: eb.EGraph) -> None:
    """The reference schedule: the safe forms, then every ruleset at once until nothing changes."""
    run = lambda name: eb.Run(schedule.SPAN, eb.RunConfig(name, None))  # noqa: E731
    eg.run_program(eb.RunSchedule(eb.Saturate(schedule.SPAN, eb.Sequence(schedule.SPAN, [
        eb.Saturate(schedule.SPAN, run("layout")), run("safe")]))))
    eg.run_program(eb.RunSchedule(eb.Saturate(schedule.SPAN, run("all"))))


def _table_sizes(text: str, saturate) -> list[dict[str, int]]:
    out = []
    for _, rows in engine_rows(text):
        eg = schedule.new_egraph()
        try:
            schedule.load_tables(eg, rows)
            saturate(eg)
            out.append(schedule.table_sizes(eg))
        finally:
            schedule.release(eg)
    return out


@pytest.mark.parametrize("text", [
    *[(EXAMPLES / name).read_text() for name in ("unaligned_column.py", "rmsnorm_heads.py",
                                                 "matmul_k_loop.py")],
    generate(MIXED, 300, seed=2).text], ids=["unaligned_column", "rmsnorm_heads", "matmul_k_loop",
                                              "mixed-300"])
def test_stratified_saturation_derives_what_every_ruleset_run_together_derives(text):
    def stratified(eg):
        assert schedule.saturate(eg, schedule.Limits()).saturated

    sizes = _table_sizes(text, stratified)
    assert sizes and sizes == _table_sizes(text, _all_together)


def test_saturation_without_count_derives_the_same_and_reports_no_enode_count():
    """``count=False`` (the pass without a report) skips only the final size query."""
    text = (EXAMPLES / "matmul_k_loop.py").read_text()
    counted, uncounted = [], []

    def run(count, stats_out):
        def sat(eg):
            stats_out.append(schedule.saturate(eg, schedule.Limits(), count=count))
        return sat

    assert _table_sizes(text, run(True, counted)) == _table_sizes(text, run(False, uncounted))
    assert [s.iterations for s in counted] == [s.iterations for s in uncounted]
    assert all(s.enodes > 0 for s in counted) and all(s.enodes == 0 for s in uncounted)
