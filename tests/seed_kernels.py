"""The example programs of shared/seeds/canonicalize_tile_slice.txt, before and after,
each wrapped in a minimal InCore kernel (shared by the DSL and IR tests)."""

HEADER = '''import pypto.language as pl


@pl.program
class Seed:
    @pl.function(type=pl.FunctionType.InCore)
'''

SEED_KERNELS: dict[str, str] = {
    "extract_fold_before": HEADER + '''\
    def kernel(self, x: pl.Tensor[[32, 512], pl.INT8], ko: pl.Scalar[pl.INDEX]):
        x_mat: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [32, 512], target_memory=pl.Mem.Mat)
        lhs_slice: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.slice(x_mat, [32, 512], [0, 0])
        a:         pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(
            lhs_slice, 0, ko, shape=[32, 256], target_memory=pl.Mem.Left)
''',
    "extract_fold_after": HEADER + '''\
    def kernel(self, x: pl.Tensor[[32, 512], pl.INT8], ko: pl.Scalar[pl.INDEX]):
        x_mat: pl.Tile[[32, 512], pl.INT8, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [32, 512], target_memory=pl.Mem.Mat)
        a: pl.Tile[[32, 256], pl.INT8, pl.Mem.Left] = pl.tile.extract(
            x_mat, 0, ko, shape=[32, 256], target_memory=pl.Mem.Left)
''',
    "matmul_operands_before": HEADER + '''\
    def kernel(self, l: pl.Tensor[[16, 256], pl.BF16], r: pl.Tensor[[256, 64], pl.BF16]):
        lhs_mat = pl.tile.load(l, [0, 0], [16, 256], target_memory=pl.Mem.Mat)
        rhs_mat = pl.tile.load(r, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        lhs_slice: pl.Tile[[16, 256], pl.BF16, pl.Mem.Mat] = pl.tile.slice(lhs_mat, [16, 256], [0, 0])
        rhs_slice: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.slice(rhs_mat, [256, 64], [0, 0])
        c:         pl.Tile[[16, 64],  pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lhs_slice, rhs_slice)
''',
    "matmul_operands_after": HEADER + '''\
    def kernel(self, l: pl.Tensor[[16, 256], pl.BF16], r: pl.Tensor[[256, 64], pl.BF16]):
        lhs_mat = pl.tile.load(l, [0, 0], [16, 256], target_memory=pl.Mem.Mat)
        rhs_mat = pl.tile.load(r, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        lhs_left:  pl.Tile[[16, 256], pl.BF16, pl.Mem.Left]  = pl.tile.extract(
            lhs_mat, 0, 0, shape=[16, 256], target_memory=pl.Mem.Left)
        rhs_right: pl.Tile[[256, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(
            rhs_mat, 0, 0, shape=[256, 64], target_memory=pl.Mem.Right)
        c:         pl.Tile[[16, 64],  pl.FP32, pl.Mem.Acc]   = pl.tile.matmul(lhs_left, rhs_right)
''',
    "col_expand_dynamic_row_before": HEADER + '''\
    def kernel(self, x: pl.Tensor[[16, 256], pl.FP32], g: pl.Tensor[[1, 256], pl.FP32],
               row_off: pl.Scalar[pl.INDEX]):
        local = pl.tile.load(x, [0, 0], [16, 256], target_memory=pl.Mem.Vec)
        gamma_t = pl.tile.load(g, [0, 0], [1, 256], target_memory=pl.Mem.Vec)
        row:    pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [1, 256], [row_off, 0])
        scaled: pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(row, gamma_t)
''',
    "col_expand_dynamic_row_after": HEADER + '''\
    def kernel(self, x: pl.Tensor[[16, 256], pl.FP32], g: pl.Tensor[[1, 256], pl.FP32],
               row_off: pl.Scalar[pl.INDEX]):
        local = pl.tile.load(x, [0, 0], [16, 256], target_memory=pl.Mem.Vec)
        gamma_t = pl.tile.load(g, [0, 0], [1, 256], target_memory=pl.Mem.Vec)
        row_ext: pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.extract(
            local, row_off, 0, shape=[1, 256], target_memory=pl.Mem.Vec)
        scaled:  pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(row_ext, gamma_t)
''',
    "col_expand_column_slice_before": HEADER + '''\
    def kernel(self, x: pl.Tensor[[16, 128], pl.FP32], g: pl.Tensor[[1, 64], pl.FP32]):
        t = pl.tile.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Vec)
        gamma_t = pl.tile.load(g, [0, 0], [1, 64], target_memory=pl.Mem.Vec)
        hi:     pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 64], [0, 64])
        scaled: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(hi, gamma_t)
''',
    "col_expand_column_slice_after": HEADER + '''\
    def kernel(self, x: pl.Tensor[[16, 128], pl.FP32], g: pl.Tensor[[1, 64], pl.FP32]):
        t = pl.tile.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Vec)
        gamma_t = pl.tile.load(g, [0, 0], [1, 64], target_memory=pl.Mem.Vec)
        hi_ext: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.extract(
            t, 0, 64, shape=[16, 64], target_memory=pl.Mem.Vec)
        scaled: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(hi_ext, gamma_t)
''',
    "unaligned_column_before": HEADER + '''\
    def kernel(self, x: pl.Tensor[[16, 8], pl.FP32]):
        local = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
        head:   pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 1])
        scaled: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 0.5)
''',
    "unaligned_column_after": HEADER + '''\
    def kernel(self, x: pl.Tensor[[16, 8], pl.FP32]):
        local = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
        head_ext: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.extract(
            local, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
        scaled:   pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head_ext, 0.5)
''',
    "acc_column_window_matmul_acc": HEADER + '''\
    def kernel(self, l: pl.Tensor[[16, 256], pl.BF16], r: pl.Tensor[[256, 64], pl.BF16]):
        acc = pl.tile.create([16, 128], pl.FP32, target_memory=pl.Mem.Acc)
        lhs_mat = pl.tile.load(l, [0, 0], [16, 256], target_memory=pl.Mem.Mat)
        rhs_mat = pl.tile.load(r, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        page: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc, [16, 64], [0, 64])
        lhs_left = pl.tile.extract(lhs_mat, 0, 0, shape=[16, 256], target_memory=pl.Mem.Left)
        rhs_right = pl.tile.extract(rhs_mat, 0, 0, shape=[256, 64], target_memory=pl.Mem.Right)
        for ko, (c_iter,) in pl.range(0, 256, 128, init_values=(page,)):
            a = pl.tile.extract(lhs_mat, 0, ko, shape=[16, 128], target_memory=pl.Mem.Left)
            b = pl.tile.extract(rhs_mat, ko, 0, shape=[128, 64], target_memory=pl.Mem.Right)
            cc = pl.tile.matmul_acc(c_iter, a, b)
            c = pl.yield_(cc)
        pl.tile.matmul_acc(page, lhs_left, rhs_right)
''',
}
