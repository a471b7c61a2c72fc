# pypto.program: MemrefAfterAlloc
# A layer-norm tail after address allocation: every tensor names its DDR buffer, every tile
# its on-chip allocation and byte offset; two tiles share one Vec allocation at different
# offsets.
import pypto.language as pl


@pl.program
class MemrefAfterAlloc:
    @pl.function(type=pl.FunctionType.InCore)
    def norm_tail(x: pl.Tensor[[16, 128], pl.FP32, pl.MemRef("mem_ddr_0", 0, 8192)], out_0: pl.Out[pl.Tensor[[16, 128], pl.FP32, pl.MemRef("mem_ddr_1", 0, 8192)]]) -> pl.Tensor[[16, 128], pl.FP32, pl.MemRef("mem_ddr_1", 0, 8192)]:
        mem_vec_2: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)
        mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)
        xt: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_2, 0, 8192), pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
        sq: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem_vec_2, 8192, 8192), pl.Mem.Vec] = pl.tile.mul(xt, xt)
        ss: pl.Tile[[16, 1], pl.FP32, pl.MemRef(mem_vec_3, 0, 64), pl.Mem.Vec] = pl.tile.row_sum(sq)
        tail: pl.Tile[[16, 8], pl.FP32, pl.MemRef(mem_vec_2, 0, 8192), pl.Mem.Vec] = pl.tile.slice(xt, [16, 8], [0, 120])
        odd: pl.Tile[[16, 4], pl.FP32, pl.MemRef(mem_vec_2, 0, 8192), pl.Mem.Vec] = pl.tile.slice(xt, [16, 4], [0, 2])
        tail_s: pl.Tile[[16, 8], pl.FP32, pl.MemRef(mem_vec_3, 64, 512), pl.Mem.Vec] = pl.tile.muls(tail, 0.5)
        odd_s: pl.Tile[[16, 4], pl.FP32, pl.MemRef(mem_vec_3, 576, 256), pl.Mem.Vec] = pl.tile.muls(odd, 2.0)
        out_1: pl.Tensor[[16, 128], pl.FP32, pl.MemRef("mem_ddr_1", 0, 8192)] = pl.store(xt, [0, 0], out_0)
        return out_1
