"""``ir.lift``: a call in a ``return`` / ``yield`` gets a statement of its own for the analyses,
and goes back where it was written when the pass left it alone."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import kernel
from egraph_tiles.ir.lift import fold_calls, lift_calls
from egraph_tiles.ir.stmts import AssignStmt, IfStmt, ReturnStmt, YieldStmt

TEXT = kernel("x: pl.Tensor[[16, 64], pl.FP32], flag: pl.Scalar[pl.INDEX], "
              "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]", """
a = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
if flag > 0:
    m = pl.yield_(pl.tile.muls(a, 2.0))
else:
    m = pl.yield_(a)
return pl.store(m, [0, 0], out)""", "pl.Tensor[[16, 64], pl.FP32]")


def test_a_call_in_a_yield_is_assigned_to_a_temporary_of_the_if_result_type():
    p = et.parse_program(TEXT)
    lifted, _ = lift_calls(p)
    then = next(s for s in lifted.functions[0].body if isinstance(s, IfStmt)).then_body
    assign, yielded = then
    assert isinstance(assign, AssignStmt) and assign.value.op == "tile.muls"
    assert isinstance(yielded, YieldStmt) and yielded.values[0].var is assign.target
    assert assign.target.name == "muls_r" and assign.target.type == then[-1].values[0].var.type


def test_a_call_in_a_return_is_assigned_to_a_temporary_of_the_result_type():
    p = et.parse_program(TEXT)
    lifted, _ = lift_calls(p)
    *_, assign, ret = lifted.functions[0].body
    assert isinstance(ret, ReturnStmt) and ret.values[0].var is assign.target
    assert assign.target.type == p.functions[0].return_types[0]


def test_folding_an_untouched_lift_gives_back_the_statements_read():
    p = et.parse_program(TEXT)
    lifted, temps = lift_calls(p)
    assert fold_calls(lifted, temps).functions[0].body == p.functions[0].body


def test_a_program_without_such_calls_is_not_rebuilt():
    p = et.parse_program(TEXT.replace("pl.yield_(pl.tile.muls(a, 2.0))", "pl.yield_(a)")
                         .replace("return pl.store(m, [0, 0], out)", "o = pl.store(m, [0, 0], out)\n        return o"))
    assert lift_calls(p)[0] is p
