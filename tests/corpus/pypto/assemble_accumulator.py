# pypto.program: AssembleAccumulator
# Softmax-style row statistics gathered into one accumulator tile: each iteration reduces a
# 16-row block of scores and assembles its row maxima into column i of the accumulator.
import pypto.language as pl


@pl.program
class AssembleAccumulator:
    @pl.function(type=pl.FunctionType.InCore)
    def row_stats(scores: pl.Tensor[[64, 128], pl.FP32], stats_out: pl.Out[pl.Tensor[[16, 4], pl.FP32]]) -> pl.Tensor[[16, 4], pl.FP32]:
        block: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(scores, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        acc__ssa_v0: pl.Tile[[16, 4], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 4], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        for i, (acc__iter_v1,) in pl.range(4, init_values=(acc__ssa_v0,)):
            rows: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.slice(block, [16, 128], [i * 16, 0])
            row_max: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_max(rows)
            acc__ssa_v2: pl.Tile[[16, 4], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(acc__iter_v1, row_max, [0, i])
            acc__rv_v3: pl.Tile[[16, 4], pl.FP32, pl.Mem.Vec] = pl.yield_(acc__ssa_v2)
        first: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(acc__rv_v3, [16, 1], [0, 1])
        shifted: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.adds(first, -1.0)
        stats_1: pl.Tensor[[16, 4], pl.FP32] = pl.store(acc__rv_v3, [0, 0], stats_out)
        return stats_1
