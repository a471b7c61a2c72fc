"""Offsets, indices and extents have the types PyPTO gives them: integer (INDEX) scalar
expressions, extents positive and never bools. Anything else is a DslError (a ValueError)
at the statement, naming the op and the operand."""

import pytest

import egraph_tiles as et
from egraph_tiles import DslError
import dslkit

PARAMS = ("x: pl.Tensor[[16, 16], pl.FP32], f: pl.Scalar[pl.FP32], flag: pl.Scalar[pl.BOOL],\n"
          "               n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]")
HEAD = dslkit.kernel(PARAMS, """
local = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
lhs_mat = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
""")


def kernel(*lines: str) -> str:
    return dslkit.extended(HEAD, *lines)


def rejected(line: str) -> DslError:
    with pytest.raises(DslError) as info:
        et.parse_program(kernel(line), filename="bad.py")
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.file, err.line) == ("bad.py", 10)  # the statement's own line
    return err


def test_float_offset_is_rejected():
    err = rejected("s = pl.tile.slice(local, [16, 8], [0, 3.5])")
    assert "pl.tile.slice" in err.message and "offset[1] is the float 3.5" in err.message


def test_string_offset_is_rejected():
    err = rejected("s = pl.tile.slice(local, [16, 8], [0, 'a'])")
    assert "offset[1] is the string 'a'" in err.message


def test_bool_offset_is_rejected():
    assert "offset[0] is the bool True" in rejected("s = pl.tile.slice(local, [16, 8], [True, 0])").message


def test_bool_extent_is_rejected_even_where_the_annotation_matches():
    err = rejected("s: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [True, 8], [0, 3])")
    assert "shape[0] is the bool True" in err.message


def test_zero_extent_is_rejected():
    assert "shape[1] is the non-positive value 0" in \
        rejected("s = pl.tile.slice(local, [16, 0], [0, 0])").message


def test_negative_extent_is_rejected():
    assert "non-positive value -8" in rejected("s = pl.tile.slice(local, [16, -8], [0, 0])").message


def test_float_scalar_offset_is_rejected():
    assert "offset[1] is 'f' (a FP32)" in rejected("s = pl.tile.slice(local, [16, 8], [0, f])").message


def test_bool_scalar_offset_is_rejected():
    assert "offset[0] is 'flag' (a BOOL)" in \
        rejected("s = pl.tile.slice(local, [16, 8], [flag, 0])").message


def test_tile_as_an_offset_is_rejected():
    assert "offset[0] is 'lhs_mat' (a tile)" in \
        rejected("s = pl.tile.slice(local, [16, 8], [lhs_mat, 0])").message


def test_true_division_offset_is_rejected():
    assert "a '/' expression" in rejected("s = pl.tile.slice(local, [16, 8], [n / 2, 0])").message


def test_arithmetic_hiding_a_float_is_rejected():
    assert "the float 0.5" in rejected("s = pl.tile.slice(local, [16, 8], [n * 0.5, 0])").message


def test_enum_offset_is_rejected():
    assert "`pl.FP32` (not a scalar)" in rejected("s = pl.tile.slice(local, [16, 8], [0, pl.FP32])").message


def test_float_extract_index_is_rejected():
    err = rejected("e = pl.tile.extract(lhs_mat, 0, 1.5, shape=[16, 1], target_memory=pl.Mem.Left)")
    assert "pl.tile.extract" in err.message and "col is the float 1.5" in err.message


def test_list_as_an_extract_index_is_rejected():
    assert "row must be an integer scalar" in \
        rejected("e = pl.tile.extract(lhs_mat, [0], 1, shape=[16, 1], target_memory=pl.Mem.Left)").message


def test_bool_extract_shape_is_rejected():
    assert "shape[0] is the bool True" in \
        rejected("e = pl.tile.extract(lhs_mat, 0, 0, shape=[True, 16], target_memory=pl.Mem.Left)").message


def test_float_load_offset_is_rejected():
    assert "offsets[0] is the float 0.0" in \
        rejected("t = pl.tile.load(x, [0.0, 0], [16, 16], target_memory=pl.Mem.Vec)").message


def test_float_store_offset_in_a_bare_statement_is_rejected():
    assert "pl.store" in rejected("pl.store(local, [0, 1.0], out)").message


def test_offset_not_a_list_is_rejected():
    assert "offset must be a list" in rejected("s = pl.tile.slice(local, [16, 8], 3)").message


def test_float_type_extent_is_rejected():
    with pytest.raises(DslError, match=r"unexpected the float 16\.0 in a shape"):
        et.parse_program(kernel("s: pl.Tile[[16.0, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 0])"))


def test_bool_valid_shape_in_a_tile_view_is_rejected():
    with pytest.raises(DslError, match=r"the bool True in a valid shape"):
        et.parse_program(kernel("s: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[True, 8])] "
                                "= pl.tile.slice(local, [16, 8], [0, 0])"))


@pytest.mark.parametrize("offset", ["[0, n]", "[n * 2 + 1, 0]", "[-n, 0]", "[n // 2, n % 3]",
                                    "[0, pl.min(n, 8)]", "[pl.cast(n, pl.INT32), 0]",
                                    "[pl.tile.get_block_idx(), 0]", "[n << 1, 0]"])
def test_integer_scalar_offsets_are_accepted(offset):
    prog = et.parse_program(kernel(f"s = pl.tile.slice(local, [16, 8], {offset})"))
    et.verify_program(prog)


def test_a_float_cast_offset_is_rejected():
    assert "a FP32 pl.cast expression" in \
        rejected("s = pl.tile.slice(local, [16, 8], [pl.cast(n, pl.FP32), 0])").message
