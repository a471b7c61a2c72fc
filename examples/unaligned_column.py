"""The smallest kernel with a decision to make: column 1 of an FP32 tile starts 4 bytes
past an aligned allocation, so tile.muls may not read it in place (#1789); column 8
starts 32 bytes in and may."""

import pypto.language as pl


@pl.program
class UnalignedColumn:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        local = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        head = pl.tile.slice(local, [16, 1], [0, 1])
        scaled = pl.tile.muls(head, 0.5)
        aligned = pl.tile.slice(local, [16, 8], [0, 8])
        doubled = pl.tile.muls(aligned, 2.0)
        out = pl.store(scaled, [0, 0], out)
        out = pl.store(doubled, [0, 8], out)
        return out
