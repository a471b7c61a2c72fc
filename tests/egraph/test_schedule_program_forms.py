"""Rules programs are compiled form by form (egglog keeps each compiled rule's source
span, and a span holds the whole text it was parsed from)."""

import pytest

from egraph_tiles.egraph import schedule


def test_top_level_forms_split_a_program_and_drop_comments():
    text = '''; a comment (with a paren
(relation R (i64))  ; trailing comment )
(rule ((R x))
      ((R (+ x 1)))
      :name "a (name) ; not a comment")
'''
    assert schedule.top_level_forms(text) == [
        "(relation R (i64))",
        '(rule ((R x))\n      ((R (+ x 1)))\n      :name "a (name) ; not a comment")',
    ]


def test_unbalanced_program_text_is_refused():
    with pytest.raises(ValueError, match="unbalanced"):
        schedule.top_level_forms("(relation R (i64)")


def test_the_engine_program_compiles_form_by_form_to_the_same_commands():
    text = schedule.program_text()
    forms = schedule.top_level_forms(text)
    eg = schedule.new_egraph()
    try:
        assert len(forms) == len(eg.parse_program(text))
    finally:
        schedule.release(eg)
