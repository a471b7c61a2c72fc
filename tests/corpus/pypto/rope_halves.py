# pypto.program: RopeHalves
# Rotary embedding on one 64-wide FP16 head: the two 32-column halves are rotated
# (x1 * cos - x2 * sin, x2 * cos + x1 * sin) and assembled back; a 2-column guard band at
# column 62 is read for a bias.
import pypto.language as pl


@pl.program
class RopeHalves:
    @pl.function(type=pl.FunctionType.AIV)
    def rope(x: pl.Tensor[[16, 64], pl.FP16], cos: pl.Tensor[[16, 32], pl.FP16], sin: pl.Tensor[[16, 32], pl.FP16], out_0: pl.Out[pl.Tensor[[16, 64], pl.FP16]]) -> pl.Tensor[[16, 64], pl.FP16]:
        xt: pl.Tile[[16, 64], pl.FP16, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], [16, 64], target_memory=pl.Mem.Vec)
        ct: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.load(cos, [0, 0], [16, 32], [16, 32], target_memory=pl.Mem.Vec)
        st: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.load(sin, [0, 0], [16, 32], [16, 32], target_memory=pl.Mem.Vec)
        x1: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.slice(xt, [16, 32], [0, 0])
        x2: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.slice(xt, [16, 32], [0, 32])
        a: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.mul(x1, ct)
        b: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.mul(x2, st)
        r1: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.sub(a, b)
        c: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.mul(x2, ct)
        d: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.mul(x1, st)
        r2: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.add(c, d)
        guard: pl.Tile[[16, 2], pl.FP16, pl.Mem.Vec] = pl.tile.slice(xt, [16, 2], [0, 62])
        guard_s: pl.Tile[[16, 2], pl.FP16, pl.Mem.Vec] = pl.tile.muls(guard, 0.5)
        rot: pl.Tile[[16, 64], pl.FP16, pl.Mem.Vec] = pl.tile.create([16, 64], dtype=pl.FP16, target_memory=pl.Mem.Vec)
        rot_1: pl.Tile[[16, 64], pl.FP16, pl.Mem.Vec] = pl.tile.assemble(rot, r1, [0, 0])
        rot_2: pl.Tile[[16, 64], pl.FP16, pl.Mem.Vec] = pl.tile.assemble(rot_1, r2, [0, 32])
        out_1: pl.Tensor[[16, 64], pl.FP16] = pl.store(rot_2, [0, 0], out_0)
        return out_1
