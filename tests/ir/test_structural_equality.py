"""Structural equality: variables auto-mapped, registered ops compared by bound args."""

import pytest

import egraph_tiles as et
import dslkit

PARAMS = "x: pl.Tensor[[16, 8], pl.FP32], n: pl.Scalar[pl.INDEX]"
HEAD = dslkit.kernel(PARAMS, """
t = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
""")


def prog(*lines: str):
    return et.parse_program(dslkit.extended(HEAD, *lines))


def test_programs_differing_only_in_variable_names_are_equal():
    a = prog("head = pl.tile.slice(t, [16, 1], [0, 1])", "y = pl.tile.muls(head, 0.5)")
    b = prog("h2 = pl.tile.slice(t, [16, 1], [0, 1])", "scaled = pl.tile.muls(h2, 0.5)")
    assert et.structural_equal(a, b)


def test_positional_and_keyword_shape_of_extract_are_equal():
    a = prog("e = pl.tile.extract(t, 0, 1, [16, 1], target_memory=pl.Mem.Vec)")
    b = prog("e = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)")
    assert et.structural_equal(a, b)


def test_different_offsets_are_not_equal():
    a = prog("e = pl.tile.slice(t, [16, 1], [0, 1])")
    b = prog("e = pl.tile.slice(t, [16, 1], [0, 2])")
    assert not et.structural_equal(a, b)


def test_swapped_uses_of_two_variables_are_not_equal():
    a = prog("u = pl.tile.muls(t, 0.5)", "w = pl.tile.add(u, t)")
    b = prog("u = pl.tile.muls(t, 0.5)", "w = pl.tile.add(t, u)")
    assert not et.structural_equal(a, b)


def test_a_missing_statement_makes_programs_unequal():
    a = prog("u = pl.tile.muls(t, 0.5)")
    b = prog("u = pl.tile.muls(t, 0.5)", "w = pl.tile.muls(u, 0.5)")
    assert not et.structural_equal(a, b)


def test_different_annotated_memref_makes_programs_unequal():
    a = prog("u: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec, pl.MemRef(0)] = pl.tile.muls(t, 0.5)")
    b = prog("u: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec, pl.MemRef(32)] = pl.tile.muls(t, 0.5)")
    assert not et.structural_equal(a, b)


def test_assert_form_names_the_first_difference_and_shows_a_diff():
    a = prog("e = pl.tile.slice(t, [16, 1], [0, 1])")
    b = prog("e = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)")
    with pytest.raises(AssertionError) as info:
        et.assert_structural_equal(a, b)
    msg = str(info.value)
    assert "function kernel, statement 2" in msg
    assert "op tile.slice vs tile.extract" in msg
    assert "-        e: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 1], [0, 1])" in msg


def test_assert_form_passes_silently_on_equal_programs():
    et.assert_structural_equal(prog("u = pl.tile.muls(t, 0.5)"), prog("v = pl.tile.muls(t, 0.5)"))
