"""NKI-style subscripts in the tile DSL: ``t[i, :]``, ``t[:, a:b]``, ``pl.ds(off, size)``.

Each subscript lowers, through the NKI range normalization (``egraph_tiles.nki``), to a
canonical ``pl.tile.slice`` with affine offsets — so the optimizer's alignment proofs apply:

* ``bias``  — ``t[:, 1:2]``: column 1 of an FP32 tile starts 4 bytes in, so ``tile.muls``
              may not read it in place (#1789): it becomes a ``tile.extract``;
* ``hi``    — ``t[:, 8:16]``: column 8 starts 32 bytes in, provably aligned: stays a view;
* ``row``   — ``t[2 * blk + 1, :]``: a size-1 row window (rank kept) at an affine offset; the
              row stride is 64 bytes, so every row is aligned and it stays a view;
* ``g_row`` — ``gamma[pl.ds(head, 1), :]``: a dynamic row feeding ``col_expand_mul``, which
              cannot read a subview (#1640): it is materialized with ``tile.extract``;
* ``valid`` — ``t[pl.ds(0, n), :]``: a runtime-length window: static extent 16 (the
              supremum), valid shape ``[n, 16]`` (a 4-argument slice, left as written).

Run: ``egraph-tiles optimize examples/nki_subscripts.py --explain``.
"""

import pypto.language as pl


@pl.program
class NkiSubscripts:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        g: pl.Tensor[[4, 16], pl.FP32],
        blk: pl.Scalar[pl.INDEX],
        head: pl.Scalar[pl.INDEX],
        n: pl.Scalar[pl.INDEX],
        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        gamma = pl.tile.load(g, [0, 0], [4, 16], target_memory=pl.Mem.Vec)
        bias = t[:, 1:2]
        scaled = pl.tile.muls(bias, 0.5)
        hi = t[:, 8:16]
        doubled = pl.tile.muls(hi, 2.0)
        row = t[2 * blk + 1, :]
        row2 = pl.tile.muls(row, 3.0)
        g_row = gamma[pl.ds(head, 1), :]
        normed = pl.tile.col_expand_mul(t, g_row)
        valid = t[pl.ds(0, n), :]
        masked = pl.tile.muls(valid, 1.0)
        out = pl.store(scaled, [0, 0], out)
        out = pl.store(doubled, [0, 8], out)
        out = pl.store(row2, [0, 0], out)
        out = pl.store(normed, [0, 0], out)
        out = pl.store(masked, [0, 0], out)
        return out
