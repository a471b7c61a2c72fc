"""DType bit widths, memrefs, and the op registry's declared properties (what rules read)."""

import pytest

import egraph_tiles as et
from egraph_tiles.ir import DType
from egraph_tiles.ir.ops import REGISTRY, Family, lookup
from egraph_tiles.ir.types import MemRef


@pytest.mark.parametrize("dtype,bits,storage", [
    ("BOOL", 1, 8), ("INT4", 4, 4), ("UINT4", 4, 4), ("FP4", 4, 4), ("INT8", 8, 8),
    ("UINT8", 8, 8), ("FP8E4M3FN", 8, 8), ("FP8E5M2", 8, 8), ("INT16", 16, 16), ("UINT16", 16, 16),
    ("FP16", 16, 16), ("BF16", 16, 16), ("INT32", 32, 32), ("UINT32", 32, 32), ("FP32", 32, 32),
    ("INT64", 64, 64), ("UINT64", 64, 64), ("INDEX", 64, 64),
])
def test_dtype_bit_width_and_storage_width(dtype, bits, storage):
    assert (DType[dtype].bits, DType[dtype].storage_bits) == (bits, storage)


def test_memref_distinguishes_known_unknown_and_the_planning_sentinel():
    assert MemRef(64).is_known and not MemRef(64).is_sentinel
    assert MemRef(-1).is_sentinel and not MemRef(-1).is_known
    sym = et.parse_program("""
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32], off: pl.Scalar[pl.INDEX]):
        t: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec, pl.MemRef(off)] = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
""").functions[0].body[0].target.type.memref
    assert not sym.is_known and not sym.is_sentinel


REQUIRED_OPS = ["tile.load", "store", "tile.store", "tile.create", "tile.slice", "tile.extract",
                "tile.move", "tile.reshape", "tile.set_validshape", "tile.reinterpret_view",
                "tile.transpose_view", "tile.transpose", "tile.matmul", "tile.matmul_acc",
                "tile.matmul_bias", "tile.gemv_acc", "tile.matmul_mx_acc", "tile.batch_matmul",
                "tile.batch_matmul_acc", "tile.col_expand", "tile.col_expand_mul",
                "tile.col_expand_add", "tile.col_expand_sub", "tile.col_expand_div",
                "tile.col_expand_max", "tile.col_expand_min", "tile.muls", "tile.adds", "tile.add",
                "tile.sub", "tile.mul", "tile.div", "tile.fillpad_inplace"]


@pytest.mark.parametrize("op", REQUIRED_OPS)
def test_issue_op_is_registered(op):
    assert lookup(op) is not None


def test_unknown_op_is_not_registered_and_so_opaque():
    assert lookup("pld.tile.remote_scatter") is None


@pytest.mark.parametrize("op", ["tile.slice", "tile.reshape", "tile.set_validshape",
                                "tile.reinterpret_view", "tile.transpose_view"])
def test_view_ops_inherit_their_input_memory(op):
    assert REGISTRY[op].inherits_input_memory and REGISTRY[op].family is Family.VIEW


@pytest.mark.parametrize("op", ["tile.extract", "tile.move", "tile.transpose"])
def test_copy_ops_are_not_in_place_safe(op):
    assert not REGISTRY[op].inplace_safe and not REGISTRY[op].inherits_input_memory


@pytest.mark.parametrize("op,arg", [("tile.matmul_acc", 0), ("tile.gemv_acc", 0),
                                    ("tile.matmul_mx_acc", 0), ("tile.fillpad_inplace", 0),
                                    ("store", 2), ("tile.store", 2)])
def test_write_back_ops_declare_the_argument_they_reuse(op, arg):
    assert REGISTRY[op].reuses_arg == arg


@pytest.mark.parametrize("op,left,right", [("tile.matmul", 0, 1), ("tile.matmul_bias", 0, 1),
                                           ("tile.matmul_acc", 1, 2), ("tile.gemv_acc", 1, 2)])
def test_matmul_operand_positions(op, left, right):
    assert (REGISTRY[op].left_arg, REGISTRY[op].right_arg) == (left, right)


def test_matmul_bias_declares_its_bias_argument():
    assert REGISTRY["tile.matmul_bias"].bias_arg == 2


@pytest.mark.parametrize("op", ["tile.col_expand", "tile.col_expand_mul", "tile.col_expand_min"])
def test_col_expand_ops_are_their_own_family(op):
    assert REGISTRY[op].family is Family.COL_EXPAND


@pytest.mark.parametrize("op", ["tile.muls", "tile.adds", "tile.add", "tile.mul"])
def test_elementwise_ops_are_ordinary_vector_ops(op):
    assert REGISTRY[op].family is Family.VECTOR and REGISTRY[op].reuses_arg is None
