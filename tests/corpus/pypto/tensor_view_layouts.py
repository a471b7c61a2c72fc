# pypto.program: TensorViewLayouts
# A transposed (DN) weight and a strided activation view: both tensors carry their views,
# the activation tile is padded, and a row band of the padded tile feeds col_expand_mul with
# a per-row scale taken at a dynamic row.
import pypto.language as pl


@pl.program
class TensorViewLayouts:
    @pl.function(type=pl.FunctionType.InCore)
    def scaled_rows(x: pl.Tensor[[32, 64], pl.FP32, pl.TensorView(stride=[128, 1], layout=pl.TensorLayout.ND)], wt: pl.Tensor[[64, 32], pl.FP32, pl.TensorView(stride=[1, 64], layout=pl.TensorLayout.DN)], g: pl.Tensor[[8, 64], pl.FP32], row: pl.Scalar[pl.INDEX], out_0: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        xt: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec, pl.TileView(pad=pl.PadValue.zero)] = pl.tile.load(x, [0, 0], [32, 64], [32, 64], target_memory=pl.Mem.Vec)
        gt: pl.Tile[[8, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(g, [0, 0], [8, 64], [8, 64], target_memory=pl.Mem.Vec)
        band: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(xt, [16, 64], [16, 0])
        g_row: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(gt, [1, 64], [row, 0])
        scaled: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(band, g_row)
        out_1: pl.Tensor[[32, 64], pl.FP32] = pl.store(scaled, [16, 0], out_0)
        return out_1
