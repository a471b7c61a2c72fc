"""What PyPTO's pipeline hands to CanonicalizeTileSlice is read as PyPTO types it at that point:
a store of a tile whose dtype differs from the tensor's, store offsets of another rank than the
tensor's, an annotation whose memory space our inference would not choose.  Each program is
read, verified, optimized, and printed back unchanged in meaning."""

from __future__ import annotations

import pytest

import egraph_tiles as et
from dslkit import call_ops, kernel


def through(params: str, body: str, ret: str) -> tuple[et.ir.Program, str]:
    prog = et.parse_program(kernel(params, body, ret), filename="pypto.py")
    et.verify_program(prog)
    out = et.optimize(prog)
    printed = et.print_program(out)
    et.assert_structural_equal(et.parse_program(printed), out)
    return out, printed


def test_an_fp32_tile_stored_into_an_fp16_tensor_is_accepted():
    # before = after: the conversion happens on the way out, as PyPTO lowers it later
    _, printed = through(
        "x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP16]]", """
        v: pl.Tile[[16, 16], pl.FP32] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        out1: pl.Tensor[[16, 16], pl.FP16] = pl.tile.store(v, [0, 0], out)
        return out1""", "pl.Tensor[[16, 16], pl.FP16]")
    assert "out1: pl.Tensor[[16, 16], pl.FP16] = pl.tile.store(v, [0, 0], out)" in printed


def test_store_offsets_of_another_rank_than_the_tensor_are_accepted():
    # a 2-D tile addressing a 3-D tensor (the tensor's leading axes flattened into rows)
    _, printed = through(
        "x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 8, 16], pl.FP32]]", """
        v: pl.Tile[[16, 16], pl.FP32] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        out1: pl.Tensor[[2, 8, 16], pl.FP32] = pl.tile.store(v, [0, 0], out)
        return out1""", "pl.Tensor[[2, 8, 16], pl.FP32]")
    assert "pl.tile.store(v, [0, 0], out)" in printed


def test_the_nd_partition_shape_of_a_store_is_its_fourth_operand():
    # before = after: FlattenTileNdTo2D's partition [1, 16, 16] of a [2, 16, 16] tensor
    _, printed = through(
        "x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]", """
        v: pl.Tile[[16, 16], pl.FP32] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        out1: pl.Tensor[[2, 16, 16], pl.FP32] = pl.tile.store(v, [1, 0, 0], out, [1, 16, 16])
        return out1""", "pl.Tensor[[2, 16, 16], pl.FP32]")
    assert "pl.tile.store(v, [1, 0, 0], out, [1, 16, 16])" in printed


def test_an_acc_annotation_is_the_type_the_program_holds():
    # an accumulator created without target_memory, annotated Acc: its window is an Acc window
    # (copied into Vec for the vector op), not a Vec view
    out, printed = through(
        "a: pl.Tensor[[16, 16], pl.BF16], b: pl.Tensor[[16, 64], pl.BF16], "
        "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]", """
        am: pl.Tile[[16, 16], pl.BF16] = pl.tile.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        bm: pl.Tile[[16, 64], pl.BF16] = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([16, 64], dtype=pl.FP32)
        acc_1: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, am, bm)
        w: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc_1, [16, 16], [0, 16])
        out1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(w, [0, 0], out)
        return out1""", "pl.Tensor[[16, 16], pl.FP32]")
    assert "acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create(" in printed
    assert call_ops(out)[:4] == ["tile.load", "tile.load", "tile.create", "tile.matmul_acc"]


def test_a_store_whose_partition_was_appended_twice_is_accepted():
    # before = after: FlattenTileNdTo2D appends the partition to a store that already had one
    _, printed = through(
        "x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]", """
        v: pl.Tile[[16, 16], pl.FP32] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        out1: pl.Tensor[[2, 16, 16], pl.FP32] = pl.tile.store(v, [1, 0, 0], out, [1, 16, 16], [1, 16, 16])
        return out1""", "pl.Tensor[[2, 16, 16], pl.FP32]")
    assert "pl.tile.store(v, [1, 0, 0], out, [1, 16, 16], [1, 16, 16])" in printed


@pytest.mark.parametrize("line, rule", [
    # what PyPTO rejects too keeps its rule in the message
    ("out1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(v, [0, 0], out, [16, 16], [16, 16], [1])",
     "at most 5 positional arguments"),
    ("out1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(v, [0, 0], v)", "writes into a tensor"),
])
def test_what_stays_rejected_names_the_rule(line, rule):
    text = kernel("x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]",
                  "v: pl.Tile[[16, 16], pl.FP32] = pl.tile.load(x, [0, 0], [16, 16], "
                  f"target_memory=pl.Mem.Vec)\n{line}\nreturn out1", "pl.Tensor[[16, 16], pl.FP32]")
    with pytest.raises(et.DslError, match=rule):
        et.parse_program(text)


def test_an_nd_load_annotated_with_its_nd_shape_is_accepted():
    # before = after: a 3-D Mat load FlattenTileNdTo2D leaves 3-D (the registry types a load
    # flattened to [32, 64]; the annotation keeps [2, 16, 64], and it is the type kept)
    out, printed = through(
        "x: pl.Tensor[[2, 16, 64], pl.BF16], out: pl.Out[pl.Tensor[[16, 64], pl.BF16]]", """
        m: pl.Tile[[2, 16, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(x, [0, 0, 0], [2, 16, 64], target_memory=pl.Mem.Mat)
        return out""", "pl.Tensor[[16, 64], pl.BF16]")
    assert "m: pl.Tile[[2, 16, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(" in printed


def test_an_if_joining_values_of_different_memory_spaces_is_accepted():
    # before = after: memory-space inference (later in PyPTO's pipeline) inserts the move
    _, printed = through(
        "a: pl.Tensor[[16, 16], pl.BF16], flag: pl.Scalar[pl.INDEX], "
        "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]", """
        am: pl.Tile[[16, 16], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        c: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(am, am)
        z: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)
        if flag < 1:
            r: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.yield_(c)
        else:
            r: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.yield_(z)
        out1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(r, [0, 0], out)
        return out1""", "pl.Tensor[[16, 16], pl.FP32]")
    assert "pl.yield_(z)" in printed


def test_rebind_prints_a_replaced_variable_under_its_name_as_pypto_does():
    # out = store(t, ..., out): the result replaces the parameter, never read after it
    text = kernel("x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]", """
        v: pl.Tile[[16, 16], pl.FP32] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        w: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(v, 2.0)
        v: pl.Tile[[16, 16], pl.FP32] = pl.tile.adds(v, 1.0)
        out = pl.tile.store(w, [0, 0], out)
        return out""", "pl.Tensor[[16, 16], pl.FP32]")
    prog = et.parse_program(text)
    printed = et.print_program(prog, rebind=True)
    assert "out: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(w, [0, 0], out)" in printed
    assert "v_1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(v, 1.0)" not in printed
    assert "v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(v, 1.0)" in printed
    et.assert_structural_equal(et.parse_program(printed), prog)
    assert "out_1" in et.print_program(prog)  # by default every variable has its own name


def test_rebind_keeps_a_fresh_name_while_the_replaced_variable_is_still_read():
    text = kernel("x: pl.Tensor[[16, 16], pl.FP32]", """
        v: pl.Tile[[16, 16], pl.FP32] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        w: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(v, 2.0)
        w: pl.Tile[[16, 16], pl.FP32] = pl.tile.add(w, v)
        z: pl.Tile[[16, 16], pl.FP32] = pl.tile.add(v, w)
        return x""", "pl.Tensor[[16, 16], pl.FP32]")
    prog = et.parse_program(text)
    printed = et.print_program(prog, rebind=True)
    assert "w: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(w, v)" in printed
    et.assert_structural_equal(et.parse_program(printed), prog)
