"""Every bundled tile-DSL example (a file with a @pl.program class) parses, verifies and round-trips."""

from pathlib import Path

import pytest

import egraph_tiles as et

EXAMPLES = sorted(p for p in (Path(__file__).parent.parent / "examples").glob("*.py")
                  if "@pl.program" in p.read_text())


def test_rmsnorm_heads_example_exists():
    assert any(p.name == "rmsnorm_heads.py" for p in EXAMPLES)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_parses_verifies_and_round_trips(path):
    prog = et.verify_program(et.parse_program(path.read_text(), filename=str(path)))
    text = et.print_program(prog)
    et.assert_structural_equal(et.parse_program(text), prog)
