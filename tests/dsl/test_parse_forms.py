"""The DSL's statement forms parse into the expected IR and print canonically."""

import egraph_tiles as et
from egraph_tiles.ir import (AssignStmt, BinOp, Const, DType, EvalStmt, ForStmt, IfStmt,
                             LoopKind, ReturnStmt, ScalarType, ScopeStmt, TileType,
                             UnknownType, VarRef, WhileStmt, YieldStmt)
from egraph_tiles.ir.exprs import const_shape

import dslkit

PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX],\n"
          "               out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
HEAD = dslkit.kernel(PARAMS, """
t = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
""")


def body_of(*lines: str):
    text = dslkit.extended(HEAD, *lines)
    prog = et.parse_program(text)
    et.verify_program(prog)
    return prog.functions[0].body[1:], et.print_program(prog)


def test_rebinding_a_name_creates_a_new_variable():
    body, _ = body_of("out = pl.store(t, [0, 0], out)", "return out")
    store, ret = body
    assert isinstance(store, AssignStmt) and isinstance(ret, ReturnStmt)
    assert ret.values[0].var is store.target
    assert store.value.args[2].var is not store.target


def test_rebound_names_print_with_a_unique_suffix():
    _, printed = body_of("out = pl.store(t, [0, 0], out)", "return out")
    assert "out_1: pl.Tensor[[16, 64], pl.FP32] = pl.store(t, [0, 0], out)" in printed
    assert "return out_1" in printed


def test_every_assignment_is_printed_with_its_inferred_type():
    _, printed = body_of("s = pl.tile.slice(t, [1, 64], [n, 0])")
    assert "s: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [1, 64], [n, 0])" in printed


def test_annotated_scalar_constant_is_an_index_scalar():
    (s,), _ = body_of("off: pl.Scalar[pl.INDEX] = 16")
    assert s.target.type == ScalarType(DType.INDEX) and s.value == Const(16)


def test_unannotated_scalar_arithmetic_infers_the_operand_scalar_type():
    (s,), printed = body_of("base = n * 16")
    assert isinstance(s.value, BinOp) and s.target.type == ScalarType(DType.INDEX)
    assert "base: pl.Scalar[pl.INDEX] = n * 16" in printed


def test_scalar_expression_in_an_op_argument_keeps_its_structure():
    (s,), _ = body_of("r = pl.tile.slice(t, [1, 64], [n + 1, 0])")
    off = s.value.args[2].items[0]
    assert isinstance(off, BinOp) and off.op == "+" and off.rhs == Const(1)
    assert isinstance(off.lhs, VarRef) and off.lhs.var.name == "n"


def test_parenthesized_subtraction_round_trips_with_its_parentheses():
    _, printed = body_of("a = n - (n - 1)")
    assert "a: pl.Scalar[pl.INDEX] = n - (n - 1)" in printed


def test_range_with_one_argument_starts_at_zero_with_step_one():
    (loop,), printed = body_of("for i in pl.range(4):", "    u = pl.tile.muls(t, 0.5)")
    assert isinstance(loop, ForStmt) and loop.kind is LoopKind.RANGE
    assert (loop.start, loop.stop, loop.step) == (Const(0), Const(4), Const(1))
    assert "for i in pl.range(4):" in printed


def test_range_with_start_and_stop_prints_two_arguments():
    _, printed = body_of("for i in pl.range(2, 4):", "    u = pl.tile.muls(t, 0.5)")
    assert "for i in pl.range(2, 4):" in printed


def test_loop_carries_bind_iter_args_and_return_vars():
    (c0, loop), printed = body_of(
        "c0 = pl.tile.create([16, 64], pl.FP32, target_memory=pl.Mem.Acc)",
        "for ko, (c_iter,) in pl.range(0, 512, 256, init_values=(c0,)):",
        "    c = pl.yield_(c_iter)")
    assert [v.name for v in loop.iter_args] == ["c_iter"]
    assert [v.name for v in loop.return_vars] == ["c"]
    assert isinstance(loop.body[-1], YieldStmt)
    assert "for ko, (c_iter,) in pl.range(0, 512, 256, init_values=(c0,)):" in printed


def test_pipeline_keeps_its_stage_keyword():
    (loop,), printed = body_of("for i in pl.pipeline(0, 4, stage=2):", "    u = pl.tile.muls(t, 0.5)")
    assert loop.kind is LoopKind.PIPELINE and dict(loop.kwargs)["stage"] == Const(2)
    assert "for i in pl.pipeline(4, stage=2):" in printed


def test_parallel_loop_is_its_own_kind():
    (loop,), _ = body_of("for i in pl.parallel(8):", "    u = pl.tile.muls(t, 0.5)")
    assert loop.kind is LoopKind.PARALLEL


def test_while_loop_reads_its_condition_from_pl_cond():
    (loop,), printed = body_of("for (a,) in pl.while_(init_values=(n,)):", "    pl.cond(a < 2)",
                               "    b = a + 1", "    r = pl.yield_(b)")
    assert isinstance(loop, WhileStmt) and loop.cond.lhs.var is loop.iter_args[0]
    assert "    pl.cond(a < 2)" in printed


def test_if_else_yields_bind_the_if_return_vars():
    (s,), printed = body_of("if n > 0:", "    r = pl.yield_(t)", "else:",
                            "    u = pl.tile.muls(t, 0.5)", "    r = pl.yield_(u)")
    assert isinstance(s, IfStmt) and [v.name for v in s.return_vars] == ["r"]
    assert isinstance(s.return_vars[0].type, TileType)
    assert "else:" in printed


def test_if_without_else_and_without_yield_is_accepted():
    (s,), _ = body_of("if n > 0:", "    pl.tile.fillpad_inplace(t, pad_value=pl.PadValue.zero)")
    assert isinstance(s, IfStmt) and s.else_body == [] and s.return_vars == []


def test_split_aiv_is_a_scope_whose_definitions_stay_visible():
    (scope, after), _ = body_of("for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):",
                                "    u = pl.tile.muls(t, 0.5)", "v = pl.tile.muls(u, 2.0)")
    assert isinstance(scope, ScopeStmt) and scope.kind == "split_aiv"
    assert after.value.args[0].var is scope.body[0].target


def test_get_block_idx_is_an_index_scalar_op():
    (s,), _ = body_of("b = pl.get_block_idx()")
    assert s.value.op == "get_block_idx" and s.target.type == ScalarType(DType.INDEX)


def test_unknown_namespace_call_is_opaque_with_its_full_name():
    (s,), printed = body_of("pld.tile.remote_store(t, n)")
    assert isinstance(s, EvalStmt) and s.call.op == "pld.tile.remote_store"
    assert "pld.tile.remote_store(t, n)" in printed


def test_opaque_call_takes_its_annotation_as_its_type():
    (s,), _ = body_of("u: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pld.tile.remote_load(t)")
    assert isinstance(s.target.type, TileType)


def test_unannotated_opaque_call_has_unknown_type_and_prints_unannotated():
    (s,), printed = body_of("u = pld.tile.remote_load(t)")
    assert isinstance(s.target.type, UnknownType)
    assert "        u = pld.tile.remote_load(t)" in printed


def test_module_constants_resolve_in_shapes():
    text = HEAD.replace("@pl.program", "ROWS = 16\nCOLS = ROWS * 4\n\n@pl.program").replace(
        "[16, 64], target_memory", "[ROWS, COLS], target_memory")
    prog = et.parse_program(text)
    assert const_shape(prog.functions[0].body[0].target.type) == (16, 64)


def test_elif_becomes_a_nested_if_in_the_else_arm():
    (s,), printed = body_of("if n > 1:", "    r = pl.yield_(t)", "elif n > 0:",
                            "    r = pl.yield_(t)", "else:", "    r = pl.yield_(t)")
    assert isinstance(s, IfStmt) and isinstance(s.else_body[0], IfStmt)
    assert s.else_body[-1].__class__ is YieldStmt
