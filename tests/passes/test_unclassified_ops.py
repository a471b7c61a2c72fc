"""An op whose writes the registry does not know (unregistered) is not assumed read-only: a
window it receives stays a view only when its address is proven aligned; otherwise the pass
rejects it ("cannot prove `op` does not write its operand") rather than copy it — a copy could
swallow the write, a misaligned view could fault (rules.checks unclassified-operand-violation)."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st

import egraph_tiles as et
from dslkit import call_ops, rejection, vec_program

PARAMS = ("x: pl.Tensor[[16, 16], pl.FP32], m: pl.Tensor[[16, 64], pl.BF16], "
          "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]")


def prog(*lines: str) -> et.ir.Program:
    """``v`` (all of x in Vec), then ``lines`` (from line 9), then v stored; ``m`` is a second tensor, for Mat tiles."""
    return vec_program(*lines, params=PARAMS)


def rejection_of(*lines: str) -> str:
    return rejection(prog(*lines))


def test_unaligned_window_feeding_an_unclassified_op_is_rejected_naming_the_op():
    msg = rejection_of("q = pl.tile.slice(v, [16, 1], [0, 1])", "pld.tile.remote_scatter(q, out)")
    for piece in ("slice 'q'", "line 9", "`pld.tile.remote_scatter` at line 10",
                  "cannot prove `pld.tile.remote_scatter` does not write its operand",
                  "copy could swallow", "misaligned view could fault", "8 for FP32"):
        assert piece in msg, (piece, msg)


def test_aligned_window_feeding_an_unclassified_op_stays_a_view():
    # before: q = slice(v, [16, 8], [0, 8]); pld.tile.remote_scatter(q, out)  ->  after: unchanged
    p = prog("q = pl.tile.slice(v, [16, 8], [0, 8])", "pld.tile.remote_scatter(q, out)")
    out = et.optimize(p)
    assert et.print_program(out) == et.print_program(p)


def test_unaligned_window_reaching_an_unclassified_op_through_a_view_is_rejected():
    msg = rejection_of("q = pl.tile.slice(v, [16, 1], [0, 1])",
                    "qv = pl.tile.set_validshape(q, [8, 1])", "pld.tile.remote_scatter(qv, out)")
    assert "slice 'q'" in msg and "(through 'qv': the view tile.set_validshape)" in msg


def test_unaligned_window_reaching_an_unclassified_op_through_an_alias_is_rejected():
    msg = rejection_of("q = pl.tile.slice(v, [16, 1], [0, 1])", "a = q",
                    "r: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pld.tile.remote_copy(a)")
    assert "cannot prove `pld.tile.remote_copy` does not write its operand" in msg


def test_unaligned_window_reaching_an_unclassified_op_through_a_loop_carry_is_rejected():
    msg = rejection_of("q = pl.tile.slice(v, [16, 1], [0, 1])",
                    "for i, (c,) in pl.range(2, init_values=(q,)):",
                    "    pld.tile.remote_scatter(c, out)", "    d = pl.yield_(c)")
    assert "slice 'q'" in msg and "pld.tile.remote_scatter" in msg


def test_classified_read_only_op_keeps_copying_an_unaligned_window():
    out = et.optimize(prog("q = pl.tile.slice(v, [16, 1], [0, 1])", "y = pl.tile.muls(q, 2.0)"))
    assert "tile.extract" in call_ops(out)


def test_valid_shape_slice_feeding_an_unclassified_op_must_be_aligned():
    msg = rejection_of("q = pl.tile.slice(v, [16, 8], [0, 1], [8, 8])", "pld.tile.remote_scatter(q, out)")
    # (unaligned, and non-contiguous: an unclassified op may also materialize it)
    assert "has valid_shape / drop_dims" in msg and "feeds pld.tile.remote_scatter" in msg


def test_mat_window_feeding_an_unclassified_op_is_left_a_view():
    # no copy is made of a Mat window outside the matmul / extract consumers, so no write is lost
    p = prog("mt = pl.tile.load(m, [0, 0], [16, 64], target_memory=pl.Mem.Mat)",
             "q = pl.tile.slice(mt, [16, 16], [0, 8])", "pld.tile.remote_scatter(q, out)")
    assert "tile.extract" not in call_ops(et.optimize(p))


def test_explain_says_the_op_was_unclassified():
    rep = et.Report()
    et.optimize(prog("q = pl.tile.slice(v, [16, 8], [0, 8])", "pld.tile.remote_scatter(q, out)"),
                report=rep)
    (d,) = [d for f in rep.functions for d in f.decisions if d.decision == "view"]
    assert d.use == "pld.tile.remote_scatter operand 0 (unclassified op: it may write its operand)"


DTYPE_BITS = {"FP32": 32, "FP16": 16, "INT8": 8}


@given(dtype=st.sampled_from(sorted(DTYPE_BITS)), col=st.integers(0, 63), width=st.integers(1, 64),
       rows=st.sampled_from([1, 4, 16]), row=st.integers(0, 15), via_view=st.booleans())
@settings(max_examples=25, deadline=None)
def test_a_window_an_unclassified_op_receives_is_never_copied_and_kept_only_when_aligned(
        dtype, col, width, rows, row, via_view):
    """Property: the pass never copies such a window (a copy could swallow the write); it keeps
    it as a view exactly when its byte address is a multiple of 32, and rejects it otherwise."""
    assume(col + width <= 64 and row + rows <= 16)
    text = f"""
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.{dtype}], out: pl.Out[pl.Tensor[[16, 64], pl.{dtype}]]):
        v = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        q = pl.tile.slice(v, [{rows}, {width}], [{row}, {col}])
"""
    operand = "q"
    if via_view:
        text += f"        qv = pl.tile.set_validshape(q, [{rows}, {width}])\n"
        operand = "qv"
    text += f"        pld.tile.remote_scatter({operand}, out)\n"
    prog = et.parse_program(text)
    aligned = (row * 64 + col) * DTYPE_BITS[dtype] % 256 == 0
    try:
        out = et.optimize(prog)
    except ValueError as e:
        assert not aligned and "cannot prove `pld.tile.remote_scatter` does not write" in str(e)
        return
    assert aligned and "tile.extract" not in call_ops(out)


def test_a_window_of_an_unclassified_ops_result_is_copied():
    # the result of an op the registry cannot classify may be its operand (here a [16, 8] window
    # of the 16-wide v: row 1 starts 64 B in, not the 32 B its own shape says) or a view of it:
    # its storage is unknown, so a row of it is copied, never proven aligned from its own shape
    before = prog("w = pl.tile.slice(v, [16, 8], [0, 0])",
                  "r: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pld.tile.remote_view(w)",
                  "s = pl.tile.slice(r, [1, 8], [1, 0])", "d = pl.tile.adds(s, 1.0)")
    after = prog("w = pl.tile.slice(v, [16, 8], [0, 0])",
                 "r: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pld.tile.remote_view(w)",
                 "s_ext = pl.tile.extract(r, 1, 0, shape=[1, 8], target_memory=pl.Mem.Vec)",
                 "d = pl.tile.adds(s_ext, 1.0)")
    assert et.print_program(et.optimize(before)) == et.print_program(after)
