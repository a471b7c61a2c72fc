"""RMSNorm of one attention head, plus the head's projection.

The slices in this kernel are the four cases the optimizer decides differently:

* ``h1``    — an aligned column slice (head 1 starts 32 floats = 128 bytes in): a vector
              op may read it in place, so it stays a zero-copy view;
* ``scale`` — an unaligned column slice (column 1, 4 bytes in): a vector op on it would
              fault (#1789), so it must be copied into its own aligned tile;
* ``g_row`` — a dynamic-row slice of the per-head gamma table feeding col_expand_mul:
              lazy materialization would land at the source base (#1640), so it is
              extracted;
* ``lhs`` / ``rhs`` — Mat slices feeding a matmul: folded into Left / Right extracts.

Run: ``egraph-tiles check examples/rmsnorm_heads.py`` or
``egraph-tiles optimize examples/rmsnorm_heads.py --explain``.
"""

import pypto.language as pl

TOKENS = 16
HIDDEN = 128
HEADS = 4
HEAD_DIM = 32
PROJ = 64


@pl.program
class RmsNormHeads:
    @pl.function(type=pl.FunctionType.InCore)
    def rmsnorm_heads(
        self,
        x: pl.Tensor[[TOKENS, HIDDEN], pl.FP32],
        gamma: pl.Tensor[[HEADS, HEAD_DIM], pl.FP32],
        xq: pl.Tensor[[TOKENS, HEAD_DIM], pl.BF16],
        w: pl.Tensor[[HEAD_DIM, PROJ], pl.BF16],
        head: pl.Scalar[pl.INDEX],
        out: pl.Out[pl.Tensor[[TOKENS, HIDDEN], pl.FP32]],
        proj: pl.Out[pl.Tensor[[TOKENS, PROJ], pl.FP32]],
    ) -> pl.Tensor[[TOKENS, HIDDEN], pl.FP32]:
        local = pl.tile.load(x, [0, 0], [TOKENS, HIDDEN], target_memory=pl.Mem.Vec)
        g_all = pl.tile.load(gamma, [0, 0], [HEADS, HEAD_DIM], target_memory=pl.Mem.Vec)

        # head 1: an aligned column slice, read in place by the vector ops
        h1: pl.Tile[[TOKENS, HEAD_DIM], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [TOKENS, HEAD_DIM], [0, HEAD_DIM])
        sq = pl.tile.mul(h1, h1)
        ss = pl.tile.row_sum(sq)
        ms = pl.tile.muls(ss, 0.03125)
        inv = pl.tile.rsqrt(ms)

        # the per-token scale lives in column 1: an unaligned slice
        scale: pl.Tile[[TOKENS, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [TOKENS, 1], [0, 1])
        factor = pl.tile.mul(inv, scale)

        # this head's gamma row, at a dynamic row offset, feeding col_expand_mul
        g_row: pl.Tile[[1, HEAD_DIM], pl.FP32, pl.Mem.Vec] = pl.tile.slice(g_all, [1, HEAD_DIM], [head, 0])
        normed = pl.tile.col_expand_mul(h1, g_row)

        out = pl.store(normed, [0, HEAD_DIM], out)
        out = pl.store(factor, [0, 0], out)

        # the head's projection: Mat slices feeding a matmul
        xq_mat = pl.tile.load(xq, [0, 0], [TOKENS, HEAD_DIM], target_memory=pl.Mem.Mat)
        w_mat = pl.tile.load(w, [0, 0], [HEAD_DIM, PROJ], target_memory=pl.Mem.Mat)
        lhs: pl.Tile[[TOKENS, HEAD_DIM], pl.BF16, pl.Mem.Mat] = pl.tile.slice(xq_mat, [TOKENS, HEAD_DIM], [0, 0])
        rhs: pl.Tile[[HEAD_DIM, PROJ], pl.BF16, pl.Mem.Mat] = pl.tile.slice(w_mat, [HEAD_DIM, PROJ], [0, 0])
        acc = pl.tile.matmul(lhs, rhs)
        proj = pl.store(acc, [0, 0], proj)
        return out
