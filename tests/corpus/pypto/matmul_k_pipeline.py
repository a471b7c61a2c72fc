# pypto.program: MatmulKPipeline
# A projection's K loop, double-buffered: the whole [64, 512] activation sits in Mat, each
# stage takes a 128-column K window of it (a Mat slice) into Left, and accumulates into the
# Acc tile carried by the loop.
import pypto.language as pl


@pl.program
class MatmulKPipeline:
    @pl.function(type=pl.FunctionType.InCore)
    def proj(x: pl.Tensor[[64, 512], pl.BF16], w: pl.Tensor[[512, 64], pl.BF16], y_out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        x_mat: pl.Tile[[64, 512], pl.BF16, pl.Mem.Mat, pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major)] = pl.tile.load(x, [0, 0], [64, 512], [64, 512], target_memory=pl.Mem.Mat)
        w_mat: pl.Tile[[512, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(w, [0, 0], [512, 64], [512, 64], target_memory=pl.Mem.Mat)
        x0: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.slice(x_mat, [64, 128], [0, 0])
        w0: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.slice(w_mat, [128, 64], [0, 0])
        acc__ssa_v0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(x0, w0)
        for ko, (acc__iter_v1,) in pl.pipeline(1, 4, stage=2, init_values=(acc__ssa_v0,)):
            xk: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.slice(x_mat, [64, 128], [0, ko * 128])
            wk: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.slice(w_mat, [128, 64], [ko * 128, 0])
            xk_left: pl.Tile[[64, 128], pl.BF16, pl.Mem.Left] = pl.tile.extract(xk, 0, 0, [64, 128], target_memory=pl.Mem.Left)
            acc__ssa_v2: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc__iter_v1, xk_left, wk)
            acc__rv_v3: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(acc__ssa_v2)
        y_1: pl.Tensor[[64, 64], pl.FP32] = pl.store(acc__rv_v3, [0, 0], y_out)
        return y_1
