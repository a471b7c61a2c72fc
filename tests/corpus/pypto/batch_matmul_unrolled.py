# pypto.program: BatchMatmulUnrolled
# A batch matmul of two batch pages after FlattenTileNdTo2D: both batch operands are loaded
# as one Mat tile with the pages stacked along rows, and each page is a Mat slice feeding its
# own Left / Right extracts and matmul.
import pypto.language as pl


@pl.program
class BatchMatmulUnrolled:
    @pl.function(type=pl.FunctionType.InCore)
    def bmm(a: pl.Tensor[[2, 32, 64], pl.BF16], b: pl.Tensor[[2, 64, 32], pl.BF16], c0_out: pl.Out[pl.Tensor[[32, 32], pl.FP32]], c1_out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> tuple[pl.Tensor[[32, 32], pl.FP32], pl.Tensor[[32, 32], pl.FP32]]:
        a_mat: pl.Tile[[64, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0, 0], [2, 32, 64], [2, 32, 64], target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[128, 32], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0, 0], [2, 64, 32], [2, 64, 32], target_memory=pl.Mem.Mat)
        a_page0: pl.Tile[[32, 64], pl.BF16, pl.Mem.Mat] = pl.tile.slice(a_mat, [32, 64], [0, 0])
        b_page0: pl.Tile[[64, 32], pl.BF16, pl.Mem.Mat] = pl.tile.slice(b_mat, [64, 32], [0, 0])
        a_left0: pl.Tile[[32, 64], pl.BF16, pl.Mem.Left] = pl.tile.extract(a_page0, 0, 0, [32, 64], target_memory=pl.Mem.Left)
        b_right0: pl.Tile[[64, 32], pl.BF16, pl.Mem.Right] = pl.tile.extract(b_page0, 0, 0, [64, 32], target_memory=pl.Mem.Right)
        c_acc0: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_left0, b_right0)
        a_page1: pl.Tile[[32, 64], pl.BF16, pl.Mem.Mat] = pl.tile.slice(a_mat, [32, 64], [32, 0])
        b_page1: pl.Tile[[64, 32], pl.BF16, pl.Mem.Mat] = pl.tile.slice(b_mat, [64, 32], [64, 0])
        c_acc1: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_page1, b_page1)
        c0: pl.Tensor[[32, 32], pl.FP32] = pl.store(c_acc0, [0, 0], c0_out)
        c1: pl.Tensor[[32, 32], pl.FP32] = pl.store(c_acc1, [0, 0], c1_out)
        return c0, c1
