"""The seed's hazard programs, before and after canonicalization, with outputs that expose
the corruption (shared by tests/sim and tests/soundness)."""

UNALIGNED_BEFORE = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 8], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        local = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
        head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 1])
        scaled = pl.tile.muls(head, 0.5)
        out = pl.store(scaled, [0, 0], out)
        return out
"""


UNALIGNED_AFTER = UNALIGNED_BEFORE.replace(
    "pl.tile.slice(local, [16, 1], [0, 1])",
    "pl.tile.extract(local, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)")


DYNAMIC_ROW_BEFORE = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 256], pl.FP32], g: pl.Tensor[[1, 256], pl.FP32],
               row_off: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[1, 256], pl.FP32]],
               src: pl.Out[pl.Tensor[[16, 256], pl.FP32]]) -> pl.Tensor[[1, 256], pl.FP32]:
        local = pl.tile.load(x, [0, 0], [16, 256], target_memory=pl.Mem.Vec)
        gamma_t = pl.tile.load(g, [0, 0], [1, 256], target_memory=pl.Mem.Vec)
        row: pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [1, 256], [row_off, 0])
        scaled = pl.tile.col_expand_mul(row, gamma_t)
        out = pl.store(scaled, [0, 0], out)
        src = pl.store(local, [0, 0], src)
        return out
"""


DYNAMIC_ROW_AFTER = DYNAMIC_ROW_BEFORE.replace(
    "pl.tile.slice(local, [1, 256], [row_off, 0])",
    "pl.tile.extract(local, row_off, 0, shape=[1, 256], target_memory=pl.Mem.Vec)")


COLUMN_SLICE_BEFORE = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 128], pl.FP32], g: pl.Tensor[[1, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
               src: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.tile.load(x, [0, 0], [16, 128], target_memory=pl.Mem.Vec)
        gamma_t = pl.tile.load(g, [0, 0], [1, 64], target_memory=pl.Mem.Vec)
        hi: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 64], [0, 64])
        scaled = pl.tile.col_expand_mul(hi, gamma_t)
        out = pl.store(scaled, [0, 0], out)
        src = pl.store(t, [0, 0], src)
        return out
"""


COLUMN_SLICE_AFTER = COLUMN_SLICE_BEFORE.replace(
    "pl.tile.slice(t, [16, 64], [0, 64])",
    "pl.tile.extract(t, 0, 64, shape=[16, 64], target_memory=pl.Mem.Vec)")


ACC_ROW_WINDOW_BEFORE = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 16], pl.FP16], b: pl.Tensor[[16, 32], pl.FP16],
               out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        a_mat = pl.tile.load(a, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        a_all = pl.tile.extract(a_mat, 0, 0, shape=[32, 16], target_memory=pl.Mem.Left)
        a_lo = pl.tile.extract(a_mat, 16, 0, shape=[16, 16], target_memory=pl.Mem.Left)
        b_r = pl.tile.extract(b_mat, 0, 0, shape=[16, 32], target_memory=pl.Mem.Right)
        acc = pl.tile.matmul(a_all, b_r)
        win: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc, [16, 32], [16, 0])
        win2 = pl.tile.matmul_acc(win, a_lo, b_r)
        out = pl.store(acc, [0, 0], out)
        return out
"""


ACC_COLUMN_WINDOW_AFTER = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 64], pl.FP16],
               out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        a_mat = pl.tile.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        b_mat = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        a_l = pl.tile.extract(a_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
        b_all = pl.tile.extract(b_mat, 0, 0, shape=[16, 64], target_memory=pl.Mem.Right)
        b_hi = pl.tile.extract(b_mat, 0, 32, shape=[16, 32], target_memory=pl.Mem.Right)
        acc = pl.tile.matmul(a_l, b_all)
        win: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.tile.slice(acc, [16, 32], [0, 32])
        win2 = pl.tile.matmul_acc(win, a_l, b_hi)
        out = pl.store(acc, [0, 0], out)
        return out
"""


MAT_SLICE_MATMUL_BEFORE = """
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, l: pl.Tensor[[16, 32], pl.FP16], r: pl.Tensor[[32, 16], pl.FP16],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        lhs_mat = pl.tile.load(l, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        rhs_mat = pl.tile.load(r, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
        lhs_slice: pl.Tile[[16, 32], pl.FP16, pl.Mem.Mat] = pl.tile.slice(lhs_mat, [16, 32], [0, 0])
        rhs_slice: pl.Tile[[32, 16], pl.FP16, pl.Mem.Mat] = pl.tile.slice(rhs_mat, [32, 16], [0, 0])
        c = pl.tile.matmul(lhs_slice, rhs_slice)
        out = pl.store(c, [0, 0], out)
        return out
"""


MAT_SLICE_MATMUL_AFTER = MAT_SLICE_MATMUL_BEFORE.replace(
    "lhs_slice: pl.Tile[[16, 32], pl.FP16, pl.Mem.Mat] = pl.tile.slice(lhs_mat, [16, 32], [0, 0])",
    "lhs_slice = pl.tile.extract(lhs_mat, 0, 0, shape=[16, 32], target_memory=pl.Mem.Left)").replace(
    "rhs_slice: pl.Tile[[32, 16], pl.FP16, pl.Mem.Mat] = pl.tile.slice(rhs_mat, [32, 16], [0, 0])",
    "rhs_slice = pl.tile.extract(rhs_mat, 0, 0, shape=[32, 16], target_memory=pl.Mem.Right)")


#: (name, before, after, scalars): the "before" program faults or differs on the hardware model
HAZARDS = [
    ("unaligned_vector_operand_1789", UNALIGNED_BEFORE, UNALIGNED_AFTER, {}),
    ("dynamic_row_col_expand_1640", DYNAMIC_ROW_BEFORE, DYNAMIC_ROW_AFTER, {"row_off": 5}),
    ("column_slice_col_expand_2010", COLUMN_SLICE_BEFORE, COLUMN_SLICE_AFTER, {}),
    ("mat_slice_matmul_operands", MAT_SLICE_MATMUL_BEFORE, MAT_SLICE_MATMUL_AFTER, {}),
]
