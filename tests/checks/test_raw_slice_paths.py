"""valid_shape / drop_dims slices reaching a col_expand op through a view, or reaching an opaque
call: checked like the direct uses — a col_expand materialization must be an
identity copy (#1640 / #2010), and an opaque call may do either that or a vector op, so its
operand must also be proven 32-byte aligned (#1789).  Each rejection is confirmed on the hardware
model."""


import egraph_tiles as et
from egraph_tiles.sim.soundness import unsound_because
from dslkit import kernel, rejection
from simkit import inputs_for

PARAMS = ("x: pl.Tensor[[16, 32], pl.FP32], g: pl.Tensor[[1, 32], pl.FP32], r: pl.Scalar[pl.INDEX],\n"
          "               out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]")
RET = "pl.Tensor[[16, 32], pl.FP32]"
HELPER = """
    @pl.function(type=pl.FunctionType.InCore)
    def helper(self, t: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec], gv: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec]:
        y = pl.tile.col_expand_mul(t, gv)
        return y
"""


def prog(*lines: str, helper: bool = False) -> et.ir.Program:
    """``x_vec`` and ``g_vec`` (all of x and g in Vec), then ``lines`` (from line 10), then x_vec
    stored; with ``helper``, the function ``helper`` after the kernel."""
    return et.verify_program(et.parse_program(kernel(PARAMS, "\n".join((
        "x_vec = pl.tile.load(x, [0, 0], [16, 32], target_memory=pl.Mem.Vec)",
        "g_vec = pl.tile.load(g, [0, 0], [1, 32], target_memory=pl.Mem.Vec)", *lines,
        "out = pl.store(x_vec, [0, 0], out)", "return out")), RET, more=HELPER if helper else "")))


def rejected(p: et.ir.Program, scalars: dict) -> str:
    msg = rejection(p)
    # the hardware model confirms: the program as written miscomputes or faults
    assert unsound_because(lambda q: q, p, inputs_for(p), scalars, "kernel") is not None
    return msg


SLICE_DYN = "q: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(x_vec, [1, 32], [r, 0], valid_shape=[1, 16])"
SLICE_CONST = "q: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(x_vec, [1, 32], [2, 0], valid_shape=[1, 16])"


def test_dynamic_valid_shape_slice_feeding_col_expand_through_a_view_is_rejected():
    p = prog(SLICE_DYN,
             "v: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.set_validshape(q, [1, 8])",
             "e = pl.tile.col_expand_mul(v, g_vec)",
             "o = pl.tile.adds(e, 1.0)")
    msg = rejected(p, {"r": 3})
    for piece in ("slice 'q'", "has valid_shape / drop_dims", "dynamic offset or non-contiguous",
                  "tile.col_expand_mul at line 12", "(through 'v': the view tile.set_validshape)",
                  "would corrupt its source", "copy it first with tile.extract"):
        assert piece in msg, (piece, msg)


def test_constant_single_row_valid_shape_slice_feeding_col_expand_through_a_view_is_accepted():
    p = prog(SLICE_CONST,
             "v: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.set_validshape(q, [1, 8])",
             "e = pl.tile.col_expand_mul(v, g_vec)")
    assert et.print_program(et.optimize(p)) == et.print_program(p)


def test_dynamic_valid_shape_slice_passed_to_a_col_expanding_function_is_rejected():
    # the function col_expands its parameter (egraph.calls): checked as the direct use would be
    p = prog(SLICE_DYN, "e = self.helper(q, g_vec)", helper=True)
    msg = rejected(p, {"r": 3})
    for piece in ("slice 'q'", "feeds self.helper at line 11", "would corrupt its source"):
        assert piece in msg, (piece, msg)


def test_unaligned_valid_shape_slice_passed_to_an_opaque_op_is_rejected():
    p = prog("q: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(x_vec, [16, 8], [0, 3], valid_shape=[8, 8])",
             "e = pl.custom.scale(q)")
    msg = rejection(p)
    # an opaque op may materialize it (the non-contiguous window would corrupt its source) or
    # use it as a vector op (unaligned): the first check to fail is reported
    for piece in ("slice 'q'", "feeds pl.custom.scale at line 11", "an opaque call",
                  "would corrupt its source"):
        assert piece in msg, (piece, msg)


def test_aligned_identity_valid_shape_slice_passed_to_a_function_is_accepted():
    p = prog(SLICE_CONST, "e = self.helper(q, g_vec)", helper=True)
    assert et.print_program(et.optimize(p)) == et.print_program(p)
    assert unsound_because(lambda q: q, p, inputs_for(p), {"r": 0}, "kernel") is None
