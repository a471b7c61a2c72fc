"""The hardware model's reshape of an Acc tile: as on the device (a bitwise reshape, an alias of
the same buffer), a shape-changing reshape reads its operand's bytes as the NZ blocks of the new
shape from the operand's base — not numpy's row-major relabelling; a same-shape reshape is the
tile itself."""

import numpy as np

from egraph_tiles.ir.ops import lookup
from egraph_tiles.ir.types import DType, MemorySpace
from egraph_tiles.ir.stmts import Program
from egraph_tiles.sim.hardware import HardwareInterpreter, nz_index

RESHAPE = lookup("tile.reshape")


def acc_tile(shape):
    hw = HardwareInterpreter(Program("p", []))
    return hw, hw.fresh(shape, DType.FP32, MemorySpace.Acc)


def test_a_shape_changing_acc_reshape_addresses_the_nz_blocks_of_the_new_shape():
    hw, acc = acc_tile((16, 32))
    r = hw.view(RESHAPE, acc, {"shape": [32, 16]}, True)
    assert np.array_equal(r.offs, acc.base + nz_index(32, 16) * 4)
    # so element (1, 0) of the view is element (0, 16)'s bytes in numpy's reshape, but the
    # device reads the bytes of element (1, 0) of the [16, 32] NZ tile's first block row
    assert r.offs[1, 0] != acc.offs.reshape(32, 16)[1, 0]


def test_a_same_shape_acc_reshape_is_the_tile_itself():
    hw, acc = acc_tile((32, 32))
    r = hw.view(RESHAPE, acc, {"shape": [32, 32]}, True)
    assert np.array_equal(r.offs, acc.offs)


def test_a_vec_reshape_relabels_the_row_major_addresses():
    hw = HardwareInterpreter(Program("p", []))
    v = hw.fresh((16, 32), DType.FP32, MemorySpace.Vec)
    r = hw.view(RESHAPE, v, {"shape": [32, 16]}, True)
    assert np.array_equal(r.offs, v.offs.reshape(32, 16))
