# pypto.program: NdLoadFlattened
# A [batch, seq, hidden] activation read two sequence blocks at a time: the 3-D load is
# annotated flattened to 2-D (rows = batch block x seq block), then a per-token scale column
# and an aligned half-width window are taken from it.
import pypto.language as pl


@pl.program
class NdLoadFlattened:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_tokens(x: pl.Tensor[[4, 16, 128], pl.FP32], out_0: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
        act: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 16, 128], [2, 16, 128], target_memory=pl.Mem.Vec)
        scale_col: pl.Tile[[32, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(act, [32, 1], [0, 3])
        inv: pl.Tile[[32, 1], pl.FP32, pl.Mem.Vec] = pl.tile.recip(scale_col)
        left_half: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(act, [32, 64], [0, 0])
        right_half: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(act, [32, 64], [0, 64])
        mixed: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.add(left_half, right_half)
        scaled: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.muls(mixed, 0.0625)
        out_1: pl.Tensor[[32, 128], pl.FP32] = pl.store(scaled, [0, 0], out_0)
        return out_1
