"""A K-tiled matmul whose operands are Mat slices, accumulating into a column window
of a wider accumulator (the layout FlattenTileNdTo2D emits for batch pages).

* ``lhs_slice`` — the offset-0, full-shape Mat slice of a leading-dim-1 batch operand:
  the per-K extract reads through it, so the slice folds into the extract;
* ``page`` — an Acc column window spanning every row of the accumulator: the MAD can
  write it, so it is accepted.
"""

import pypto.language as pl

M, K, N = 32, 512, 64


@pl.program
class MatmulKLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def matmul(
        self,
        x: pl.Tensor[[M, K], pl.INT8],
        w: pl.Tensor[[K, N], pl.INT8],
        out: pl.Out[pl.Tensor[[M, N], pl.INT32]],
    ) -> pl.Tensor[[M, N], pl.INT32]:
        x_mat = pl.tile.load(x, [0, 0], [M, K], target_memory=pl.Mem.Mat)
        w_mat = pl.tile.load(w, [0, 0], [K, N], target_memory=pl.Mem.Mat)
        lhs_slice: pl.Tile[[M, K], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [M, K], [0, 0])
        acc = pl.tile.create([M, 2 * N], pl.INT32, target_memory=pl.Mem.Acc)
        page: pl.Tile[[M, N], pl.INT32, pl.Mem.Acc] = pl.tile.slice(acc, [M, N], [0, N])
        for ko, (c_iter,) in pl.range(0, K, 256, init_values=(page,)):
            a = pl.tile.extract(lhs_slice, 0, ko, shape=[M, 256], target_memory=pl.Mem.Left)
            b = pl.tile.extract(w_mat, ko, 0, shape=[256, N], target_memory=pl.Mem.Right)
            cc = pl.tile.matmul_acc(c_iter, a, b)
            c = pl.yield_(cc)
        out = pl.store(c, [0, 0], out)
        return out
