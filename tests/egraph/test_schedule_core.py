"""``schedule.core_schedule``: a ``(run-schedule ...)`` text of ``run`` / ``seq`` / ``saturate``
as egglog's core command (``parse_program`` makes it egglog-experimental's user-defined
``run-schedule``), running the same rules to the same facts."""

import pytest

from egraph_tiles.egraph import schedule
from egraph_tiles.egraph.bindings import eb

#: a chain two rulesets extend in turns: ``step`` one link per run, ``mark`` the links' ends
PROGRAM = """
(relation Edge (i64 i64))
(relation Path (i64 i64))
(relation Mark (i64))
(ruleset step)
(ruleset mark)
(rule ((Edge a b)) ((Path a b)) :ruleset step)
(rule ((Path a b) (Edge b c)) ((Path a c)) :ruleset step)
(rule ((Path a b)) ((Mark b)) :ruleset mark)
"""
EDGES = "(Edge 1 2) (Edge 2 3) (Edge 3 4) (Edge 4 5)"


def _sizes(run) -> dict[str, int]:
    eg = schedule.prepared(PROGRAM)
    try:
        eg.run_program(*eg.parse_program(EDGES))
        run(eg)
        return {t: eg.run_program(eb.PrintSize(schedule.SPAN, t))[0].size
                for t in ("Path", "Mark")}
    finally:
        schedule.release(eg)


@pytest.mark.parametrize("text", [
    "(run-schedule (run step))",
    "(run-schedule (seq (run step) (run step)) (run mark))",
    "(run-schedule (saturate (run step)) (run mark))",
    "(run-schedule (saturate (seq (run step) (run mark))))",
    "(run-schedule (saturate (run step) (run mark)))",
])
def test_a_core_schedule_derives_what_the_parsed_text_derives(text):
    parsed = _sizes(lambda eg: eg.run_program(*eg.parse_program(text)))
    assert _sizes(lambda eg: eg.run_program(schedule.core_schedule(text))) == parsed


def test_a_core_schedule_runs_each_form_as_written():
    once = _sizes(lambda eg: eg.run_program(schedule.core_schedule("(run-schedule (run step))")))
    full = _sizes(lambda eg: eg.run_program(
        schedule.core_schedule("(run-schedule (saturate (run step)) (run mark))")))
    assert once == {"Path": 4, "Mark": 0} and full == {"Path": 10, "Mark": 4}


@pytest.mark.parametrize("text", ["(run step)", "(run-schedule (repeat 2 (run step)))"])
def test_a_schedule_the_core_command_cannot_state_is_refused(text):
    with pytest.raises(ValueError):
        schedule.core_schedule(text)
