# pypto.program: ScalarMinBounds
# A sequence of dynamic length processed in 64-column chunks: the last chunk's width is
# pl.min(seq - off, 64), used as the valid width of the chunk's window.
import pypto.language as pl

SEQ = pl.dynamic("SEQ")


@pl.program
class ScalarMinBounds:
    @pl.function(type=pl.FunctionType.InCore)
    def chunked(x: pl.Tensor[[16, SEQ], pl.FP32], out_0: pl.Out[pl.Tensor[[16, SEQ], pl.FP32]]) -> pl.Tensor[[16, SEQ], pl.FP32]:
        n_chunks: pl.Scalar[pl.INDEX] = (SEQ + 63) // 64
        for ci, (out_iter,) in pl.range(n_chunks, init_values=(out_0,)):
            off: pl.Scalar[pl.INDEX] = ci * 64
            width: pl.Scalar[pl.INDEX] = pl.min(SEQ - off, 64)
            chunk: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[16, width])] = pl.tile.load(x, [0, off], [16, 64], [16, width], target_memory=pl.Mem.Vec)
            lead: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(chunk, [16, 8], [0, 8])
            shifted: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(chunk, [16, 1], [0, 5])
            lead_s: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(lead, 2.0)
            shifted_s: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(shifted, 2.0)
            out_next: pl.Tensor[[16, SEQ], pl.FP32] = pl.store(chunk, [0, off], out_iter)
            out_rv: pl.Tensor[[16, SEQ], pl.FP32] = pl.yield_(out_next)
        return out_rv
