"""Round-trip properties of the printer on random well-formed programs."""

import pytest
from hypothesis import given
from strategies import programs

import egraph_tiles as et


@given(programs())
def test_printing_a_reparsed_program_gives_the_same_text(prog):
    text = et.print_program(prog)
    assert et.print_program(et.parse_program(text)) == text


@given(programs())
def test_reparsed_program_is_structurally_equal_to_the_original(prog):
    et.assert_structural_equal(et.parse_program(et.print_program(prog)), prog)


@given(programs())
def test_printed_program_passes_the_verifier(prog):
    et.verify_program(et.parse_program(et.print_program(prog)))


@pytest.mark.slow
@given(programs(max_stmts=40, max_depth=3))
def test_round_trip_holds_for_larger_random_programs(prog):
    text = et.print_program(prog)
    again = et.parse_program(text)
    assert et.print_program(again) == text
    et.assert_structural_equal(again, prog)
