"""Every example of the canonicalize_tile_slice seed parses, prints and round-trips."""

import pytest
from seed_kernels import SEED_KERNELS

import egraph_tiles as et


@pytest.mark.parametrize("name", sorted(SEED_KERNELS))
def test_seed_example_parses_into_one_incore_function(name):
    prog = et.parse_program(SEED_KERNELS[name], filename=f"{name}.py")
    assert [f.name for f in prog.functions] == ["kernel"]
    assert prog.functions[0].func_type.is_incore


@pytest.mark.parametrize("name", sorted(SEED_KERNELS))
def test_seed_example_printing_is_a_fixpoint(name):
    text = et.print_program(et.parse_program(SEED_KERNELS[name]))
    assert et.print_program(et.parse_program(text)) == text
