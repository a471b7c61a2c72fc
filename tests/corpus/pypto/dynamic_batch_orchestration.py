# pypto.program: DynamicBatch
# An orchestration loop over a dynamic batch launching an InCore kernel per 16-row block; the
# last block's height is pl.min(B - b0, 16). The kernel copies an unaligned 3-column band.
import pypto.language as pl

B = pl.dynamic("B")


@pl.program
class DynamicBatch:
    @pl.function(type=pl.FunctionType.InCore)
    def block(x: pl.Tensor[[B, 64], pl.FP32], b0: pl.Scalar[pl.INDEX], rows: pl.Scalar[pl.INDEX], out_0: pl.InOut[pl.Tensor[[B, 64], pl.FP32]]) -> pl.Tensor[[B, 64], pl.FP32]:
        xt: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[rows, 64])] = pl.tile.load(x, [b0, 0], [16, 64], [rows, 64], target_memory=pl.Mem.Vec)
        band: pl.Tile[[16, 3], pl.FP32, pl.Mem.Vec] = pl.tile.slice(xt, [16, 3], [0, 5])
        band_e: pl.Tile[[16, 3], pl.FP32, pl.Mem.Vec] = pl.tile.exp(band)
        yt: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.muls(xt, 2.0)
        out_1: pl.Tensor[[B, 64], pl.FP32] = pl.store(yt, [b0, 0], out_0)
        return out_1

    @pl.function(type=pl.FunctionType.Orchestration)
    def run(x: pl.Tensor[[B, 64], pl.FP32], out_0: pl.Out[pl.Tensor[[B, 64], pl.FP32]]) -> pl.Tensor[[B, 64], pl.FP32]:
        for i, (out_iter,) in pl.range((B + 15) // 16, init_values=(out_0,)):
            b0: pl.Scalar[pl.INDEX] = i * 16
            rows: pl.Scalar[pl.INDEX] = pl.min(B - b0, 16)
            out_next: pl.Tensor[[B, 64], pl.FP32] = self.block(x, b0, rows, out_iter)
            out_rv: pl.Tensor[[B, 64], pl.FP32] = pl.yield_(out_next)
        return out_rv
