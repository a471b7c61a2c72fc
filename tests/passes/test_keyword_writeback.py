"""A write-back operand passed as a keyword (``fillpad_inplace(src=w, ...)``) is a write like a
positional one: a copy of a window of the same storage read after it must be made after it."""

import egraph_tiles as et
from egraph_tiles.ir.exprs import Call
from egraph_tiles.ir.stmts import AssignStmt, EvalStmt
from egraph_tiles.sim import run_hardware, run_ideal
from simkit import inputs_for
from dslkit import kernel

KERNEL = kernel("x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]", """
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
q = pl.tile.slice(v, [16, 1], [0, 1])
w = pl.tile.slice(v, [16, 8], [0, 0])
wv = pl.tile.set_validshape(w, [8, 8])
pl.tile.fillpad_inplace({call_args})
y = pl.tile.muls(q, 0.5)
out = pl.store(y, [0, 0], out)
return out
""", "pl.Tensor[[16, 1], pl.FP32]")


def _optimize(call_args: str) -> tuple[et.Program, et.Program]:
    p = et.verify_program(et.parse_program(KERNEL.format(call_args=call_args)))
    return p, et.optimize(p)


def _order(p: et.Program) -> list[str]:
    out = []
    for s in p.functions[0].body:
        call = s.value if isinstance(s, AssignStmt) else s.call if isinstance(s, EvalStmt) else None
        if isinstance(call, Call):
            out.append(call.op)
    return out


def test_copy_of_a_window_written_through_a_keyword_writeback_is_made_after_the_write():
    p, opt = _optimize("src=wv, pad_value=pl.PadValue.zero")
    order = _order(opt)
    assert order.index("tile.extract") > order.index("tile.fillpad_inplace"), order
    ins = inputs_for(p)
    ideal, hw = run_ideal(p, ins), run_hardware(opt, ins)
    for k in ideal:
        assert (ideal[k] == hw[k]).all(), k


def test_keyword_and_positional_writeback_place_the_copy_alike():
    _, by_kw = _optimize("src=wv, pad_value=pl.PadValue.zero")
    _, by_pos = _optimize("wv, pl.PadValue.zero")
    assert _order(by_kw) == _order(by_pos)
