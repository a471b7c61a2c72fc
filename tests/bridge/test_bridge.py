"""egraph_tiles.pypto: our CanonicalizeTileSlice inside PyPTO's own pipeline.  These tests need
a PyPTO build and are skipped without one (CI does not build PyPTO); importing egraph_tiles
never imports PyPTO."""

from __future__ import annotations

import textwrap

import pytest


pytest.importorskip("pypto.language", reason="needs a PyPTO build")  # (not a folder named pypto)
pytestmark = pytest.mark.pypto

import pypto.language as pl  # noqa: E402
from pypto import ir, passes  # noqa: E402

import egraph_tiles as et  # noqa: E402
from egraph_tiles import pypto as bridge  # noqa: E402

#: an unaligned column window of a Vec tile feeding a vector op (copied by both passes)
UNALIGNED = textwrap.dedent("""\
    import pypto.language as pl


    @pl.program
    class K:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
            t: pl.Tile[[16, 64], pl.FP32] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
            w: pl.Tile[[16, 8], pl.FP32] = pl.tile.slice(t, [16, 8], [0, 3])
            y: pl.Tile[[16, 8], pl.FP32] = pl.tile.muls(w, 2.0)
            out1: pl.Tensor[[16, 8], pl.FP32] = pl.tile.store(y, [0, 0], out)
            return out1
    """)

#: a Mat row block feeding a matmul, with its row offset folded into the Left copy
MATMUL = textwrap.dedent("""\
    import pypto.language as pl


    @pl.program
    class K:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[64, 32], pl.BF16], b: pl.Tensor[[32, 32], pl.BF16], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            am: pl.Tile[[64, 32], pl.BF16] = pl.tile.load(a, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
            bm: pl.Tile[[32, 32], pl.BF16] = pl.tile.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
            rows: pl.Tile[[16, 32], pl.BF16] = pl.tile.slice(am, [16, 32], [16, 0])
            c: pl.Tile[[16, 32], pl.FP32] = pl.tile.matmul(rows, bm)
            out1: pl.Tensor[[16, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
            return out1
    """)

#: a copy of an unaligned column window bound to a plain alias of it, read through the alias
ALIASED = textwrap.dedent("""\
    import pypto.language as pl


    @pl.program
    class K:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
            t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
            w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, 3])
            w_alias: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = w
            y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w_alias, 2.0)
            out1: pl.Tensor[[16, 8], pl.FP32] = pl.tile.store(y, [0, 0], out)
            return out1
    """)

#: the second of two [16, 64] FP32 row pages of a Vec buffer as a matmul accumulator (aligned)
ACC_PAGE = textwrap.dedent("""\
    import pypto.language as pl


    @pl.program
    class K:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[16, 32], pl.BF16], b: pl.Tensor[[32, 64], pl.BF16], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
            am: pl.Tile[[16, 32], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
            bm: pl.Tile[[32, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 64], target_memory=pl.Mem.Mat)
            buf: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.create([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            page: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(buf, [16, 64], [16, 0])
            acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(page, am, bm)
            buf_1: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(buf, acc, [16, 0])
            out1: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(buf_1, [0, 0], out)
            return out1
    """)


@pytest.mark.parametrize("text", [UNALIGNED, MATMUL], ids=["unaligned-vec", "mat-matmul"])
def test_the_output_is_a_pypto_program_its_own_pass_leaves_unchanged(text):
    out = bridge.optimize_program(pl.parse(text, filename="k.py"))
    assert "pl.tile.extract(" in ir.python_print(out)
    ir.assert_structural_equal(passes.canonicalize_tile_slice()(out), out)


@pytest.mark.parametrize("text", [UNALIGNED, MATMUL, ALIASED, ACC_PAGE],
                         ids=["unaligned-vec", "mat-matmul", "alias-of-copy", "vec-accumulator-page"])
def test_our_pass_agrees_with_pypto_where_it_folds_the_same_windows(text):
    prog = pl.parse(text, filename="k.py")
    ir.assert_structural_equal(bridge.canonicalize_tile_slice()(prog),
                               passes.canonicalize_tile_slice()(prog))


def test_the_pass_carries_the_name_and_properties_of_pypto_s():
    ours, theirs = bridge.canonicalize_tile_slice(), passes.canonicalize_tile_slice()
    assert ours.get_name() == theirs.get_name() == "CanonicalizeTileSlice"
    assert ours.get_required_properties() == theirs.get_required_properties()
    assert ours.get_produced_properties() == theirs.get_produced_properties()


def test_a_program_we_reject_raises_our_error_naming_the_rule():
    # a matmul accumulating into rows 16..31 of a [32, 32] Acc tile: a strided window of the
    # accumulator the hardware cannot write, and no copy could take the write
    text = textwrap.dedent("""\
        import pypto.language as pl


        @pl.program
        class K:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[16, 64], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
                am: pl.Tile[[16, 64], pl.FP16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
                bm: pl.Tile[[64, 32], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
                al: pl.Tile[[16, 64], pl.FP16, pl.Mem.Left] = pl.tile.move(am, target_memory=pl.Mem.Left)
                br: pl.Tile[[64, 32], pl.FP16, pl.Mem.Right] = pl.tile.move(bm, target_memory=pl.Mem.Right)
                acc: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.create([32, 32], dtype=pl.FP32, target_memory=pl.Mem.Acc)
                win: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc, [16, 32], [16, 0])
                acc_1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(win, al, br)
                out1: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(acc_1, [0, 0], out)
                return out1
        """)
    with pytest.raises(ValueError, match="Acc") as info:
        bridge.optimize_program(pl.parse(text, filename="k.py"))
    assert not isinstance(info.value, bridge.PyptoParseError)
    with pytest.raises(ValueError):  # PyPTO rejects it too
        passes.canonicalize_tile_slice()(pl.parse(text, filename="k.py"))


def test_the_whole_pipeline_runs_with_our_pass_in_place_of_pypto_s():
    pipeline = bridge.pipeline()
    names = pipeline.get_pass_names()
    from pypto.ir.pass_manager import PassManager

    assert names == PassManager.get_strategy().pass_names
    prog = pl.parse(UNALIGNED, filename="k.py")
    ir.assert_structural_equal(bridge.run_pipeline(prog), PassManager.get_strategy().run_passes(prog))


def test_the_reader_accepts_what_pypto_prints():
    prog = pl.parse(MATMUL, filename="k.py")
    again = et.parse_program(ir.python_print(prog))
    assert [f.name for f in again.functions] == ["kernel"]


def test_a_store_with_its_partition_twice_is_printed_once_for_pypto():
    # FlattenTileNdTo2D's doubled partition: PyPTO's parser takes it once (codegen reads one)
    text = textwrap.dedent("""\
        import pypto.language as pl


        @pl.program
        class K:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, x: pl.Tensor[[16, 64], pl.FP16], out: pl.Out[pl.Tensor[[1, 16, 64], pl.FP16]]) -> pl.Tensor[[1, 16, 64], pl.FP16]:
                t: pl.Tile[[16, 64], pl.FP16, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
                out = pl.tile.store(t, [0, 0, 0], out, [1, 16, 64], [1, 16, 64])
                return out
        """)
    printed = bridge.pypto_text(et.optimize(et.parse_program(text)))
    assert "out: pl.Tensor[[1, 16, 64], pl.FP16] = pl.tile.store(t, [0, 0, 0], out, [1, 16, 64])" in printed
    pl.parse(printed, filename="k.py")
