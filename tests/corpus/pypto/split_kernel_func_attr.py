# pypto.program: SplitKernel
# A mixed kernel split into its cube and vector halves: the AIC half multiplies, the AIV half
# (split up/down over two vector cores) post-processes its half of the rows; the orchestration
# function launches both.
import pypto.language as pl


@pl.program
class SplitKernel:
    @pl.function(type=pl.FunctionType.AIC)
    def qk_cube(q: pl.Tensor[[32, 64], pl.FP16], k: pl.Tensor[[64, 64], pl.FP16], s_out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN})
        q_mat: pl.Tile[[32, 64], pl.FP16, pl.Mem.Mat] = pl.tile.load(q, [0, 0], [32, 64], [32, 64], target_memory=pl.Mem.Mat)
        k_mat: pl.Tile[[64, 64], pl.FP16, pl.Mem.Mat] = pl.tile.load(k, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Mat)
        k_half: pl.Tile[[64, 32], pl.FP16, pl.Mem.Mat] = pl.tile.slice(k_mat, [64, 32], [0, 32])
        q_left: pl.Tile[[32, 64], pl.FP16, pl.Mem.Left] = pl.tile.extract(q_mat, 0, 0, [32, 64], target_memory=pl.Mem.Left)
        k_right: pl.Tile[[64, 32], pl.FP16, pl.Mem.Right] = pl.tile.extract(k_half, 0, 0, [64, 32], target_memory=pl.Mem.Right)
        s_acc: pl.Tile[[32, 32], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(q_left, k_right)
        s_1: pl.Tensor[[32, 64], pl.FP32] = pl.store(s_acc, [0, 32], s_out)
        return s_1

    @pl.function(type=pl.FunctionType.AIV)
    def scale_vector(s: pl.Tensor[[32, 64], pl.FP32], p_out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN, "split_aiv": True})
        sub: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()
        s_vec: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(s, [sub * 16, 0], [16, 64], [16, 64], target_memory=pl.Mem.Vec)
        bias_col: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(s_vec, [16, 1], [0, 63])
        lifted: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.adds(bias_col, 1.0)
        p_vec: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.muls(s_vec, 0.125)
        p_1: pl.Tensor[[32, 64], pl.FP32] = pl.store(p_vec, [sub * 16, 0], p_out)
        return p_1

    @pl.function(type=pl.FunctionType.Orchestration)
    def attention(q: pl.Tensor[[32, 64], pl.FP16], k: pl.Tensor[[64, 64], pl.FP16], p: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        s_buf: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.create([32, 64], dtype=pl.FP32, layout=pl.TensorLayout.ND)
        s_0: pl.Tensor[[32, 64], pl.FP32] = self.qk_cube(q, k, s_buf)
        p_0: pl.Tensor[[32, 64], pl.FP32] = self.scale_vector(s_0, p)
        return p_0
