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


@pytest.mark.parametrize("name", sorted(SEED_KERNELS))
def test_seed_example_passes_the_verifier(name):
    prog = et.parse_program(SEED_KERNELS[name], filename=f"{name}.py")
    assert et.verify_program(prog) is prog


@pytest.mark.parametrize("name", sorted(SEED_KERNELS))
def test_seed_example_reparsed_from_its_print_is_structurally_equal(name):
    prog = et.parse_program(SEED_KERNELS[name])
    et.assert_structural_equal(et.parse_program(et.print_program(prog)), prog)


def test_seed_after_form_keeps_the_documented_extract_text():
    text = et.print_program(et.parse_program(SEED_KERNELS["unaligned_column_after"]))
    assert ("head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, 1, "
            "shape=[16, 1], target_memory=pl.Mem.Vec)") in text
