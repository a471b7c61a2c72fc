"""Every construct PyPTO's printer emits parses, goes through the pass, prints, and re-parses
to the same program (structurally equal, and printing is idempotent).

Each test writes one form into a small kernel whose unaligned column slice the pass copies,
so the program the form sits in is really rewritten.
"""

import pytest

import egraph_tiles as et
from egraph_tiles.ir import AssignStmt, Call, EvalStmt, ForStmt, Symbol, TensorType, TileType
from egraph_tiles.ir.exprs import BinOp, Const, DictExpr, DynDim, StrConst, VarRef
from egraph_tiles.ir.stmts import BreakStmt, ContinueStmt, LoopKind, walk
from egraph_tiles.ir.types import DType, OpaqueType, ScalarType, TupleType

#: the statements every kernel ends with: an unaligned column slice the pass must copy
SLICE = [
    "head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 1])",
    "scaled: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 0.5)",
]
LOAD = ("local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = "
        "pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)")


def kernel(*body: str, params: str = "x: pl.Tensor[[16, 16], pl.FP32]",
           decorator: str = "type=pl.FunctionType.InCore", header: str = "",
           returns: str = "", load: str = LOAD) -> str:
    lines = [load, *body, *SLICE]
    text = "\n".join("        " + ln for ln in lines)
    ret = f" -> {returns}" if returns else ""
    return (f"# pypto.program: P\nimport pypto.language as pl\n{header}\n\n@pl.program\nclass P:\n"
            f"    @pl.function({decorator})\n    def k({params}){ret}:\n{text}\n")


def through_the_pass(text: str):
    """parse -> optimize -> print -> parse; returns (parsed, optimized, printed)."""
    prog = et.parse_program(text, filename="pypto.py")
    opt = et.optimize(prog)
    printed = et.print_program(opt)
    assert "pl.tile.extract(local, 0, 1" in printed  # the pass really ran
    again = et.parse_program(printed)
    et.assert_structural_equal(again, opt)
    assert et.print_program(again) == printed
    return prog, opt, printed


def stmt(prog, name: str) -> AssignStmt:
    for s in walk(prog.functions[0].body):
        if isinstance(s, AssignStmt) and s.target.name == name:
            return s
    raise KeyError(name)


def param_type(prog, i: int):
    return prog.functions[0].params[i].var.type


# ---------------------------------------------------------------- functions


def test_function_without_self():
    prog, _, printed = through_the_pass(kernel())
    assert prog.functions[0].has_self is False
    assert "def k(x: pl.Tensor[[16, 16], pl.FP32]):" in printed


@pytest.mark.parametrize("ftype", ["InCore", "AIV", "AIC"])
def test_incore_function_types_are_optimized(ftype):
    _, opt, _ = through_the_pass(kernel(decorator=f"type=pl.FunctionType.{ftype}"))
    assert opt.functions[0].func_type.value == ftype


def test_bare_decorator_is_an_opaque_function_left_alone():
    prog = et.parse_program(kernel(decorator="").replace("@pl.function()", "@pl.function"))
    assert prog.functions[0].func_type.value == "Opaque"
    assert "pl.tile.slice(local, [16, 1], [0, 1])" in et.print_program(et.optimize(prog))


@pytest.mark.parametrize("ftype", ["Group", "Spmd", "Graph", "Inline"])
def test_other_function_types_parse_and_print_back(ftype):
    text = kernel(decorator=f"type=pl.FunctionType.{ftype}")
    prog = et.parse_program(text)
    assert prog.functions[0].func_type.value == ftype
    assert f"type=pl.FunctionType.{ftype}" in et.print_program(et.optimize(prog))


def test_every_decorator_keyword_is_kept_and_printed_back():
    _, opt, printed = through_the_pass(kernel(
        decorator='type=pl.FunctionType.InCore, level=pl.Level.CORE_GROUP, '
                  'role=pl.Role.Orchestrator, auto_scope=False, external_source="k.cpp", '
                  'some_future_flag=3'))
    kws = dict(opt.functions[0].decorator_kwargs)
    assert kws["auto_scope"] == Const(False) and kws["external_source"] == StrConst("k.cpp")
    assert kws["some_future_flag"] == Const(3)
    assert "role=pl.Role.Orchestrator, auto_scope=False, external_source='k.cpp'" in printed


def test_func_attr_statement_is_kept_first_in_the_body():
    prog, opt, printed = through_the_pass(kernel(
        load='pl.func_attr({"split": pl.SplitMode.UP_DOWN, "split_aiv": True})\n        ' + LOAD))
    first = opt.functions[0].body[0]
    assert isinstance(first, EvalStmt) and first.call.op == "pl.func_attr"
    assert isinstance(first.call.args[0], DictExpr)
    assert printed.splitlines()[7].strip() == \
        "pl.func_attr({'split': pl.SplitMode.UP_DOWN, 'split_aiv': True})"


def test_func_attr_naming_a_parameter_keeps_the_reference():
    _, opt, _ = through_the_pass(kernel(
        load='pl.func_attr({"stationary": x})\n        ' + LOAD))
    (key, value), = opt.functions[0].body[0].call.args[0].items
    assert isinstance(value, VarRef) and value.var is opt.functions[0].params[0].var


def test_inout_parameter_keeps_its_direction():
    prog, _, printed = through_the_pass(kernel(
        params="x: pl.Tensor[[16, 16], pl.FP32], y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]"))
    p = prog.functions[0].params[1]
    assert p.is_out and p.inout
    assert "y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]" in printed


def test_tuple_return_type_in_pypto_spelling():
    prog, _, printed = through_the_pass(kernel(
        "return x, x", returns="pl.Tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]"))
    assert len(prog.functions[0].return_types) == 2


def test_ssa_suffixed_names_are_kept():
    prog, _, printed = through_the_pass(kernel(
        "t__ssa_v0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(local, 2.0)",
        "t__rv_v1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(t__ssa_v0, 1.0)"))
    assert "t__rv_v1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(t__ssa_v0, 1.0)" in printed


# ---------------------------------------------------------------- keyword values


def test_dict_keyword_value_on_a_registered_op():
    load = ('local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], '
            '[16, 16], target_memory=pl.Mem.Vec, attrs={"some_flag": True, "n": 2})')
    prog, _, printed = through_the_pass(kernel(load=load))
    attrs = stmt(prog, "local").value.kwarg("attrs")
    assert attrs == DictExpr(((StrConst("some_flag"), Const(True)), (StrConst("n"), Const(2))))
    assert "attrs={'some_flag': True, 'n': 2})" in printed


@pytest.mark.parametrize("value", ["pl.TensorLayout.ND", "pl.TileLayout.row_major",
                                   "pl.PadValue.zero", "pl.PipeType.MTE2", "pl.AtomicType.add",
                                   "pl.adir.input", "'hard'", "True", "2.5", "[pl.adir.input, pl.adir.output]"])
def test_enum_string_bool_float_and_list_keyword_values(value):
    _, _, printed = through_the_pass(kernel(f"pl.system.sync_set(flag={value})"))
    assert f"pl.system.sync_set(flag={value})" in printed


def test_for_loop_attrs_and_stage_keywords_are_kept():
    _, opt, printed = through_the_pass(kernel(
        "for i in pl.pipeline(0, 4, 1, stage=2, attrs={\"unroll_hint\": 2}):",
        "    u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(local, 2.0)"))
    assert "for i in pl.pipeline(4, stage=2, attrs={'unroll_hint': 2}):" in printed


def test_unroll_loop():
    prog, _, printed = through_the_pass(kernel(
        "for i in pl.unroll(2):", "    u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(local, 2.0)"))
    assert next(s for s in walk(prog.functions[0].body) if isinstance(s, ForStmt)).kind is LoopKind.UNROLL
    assert "for i in pl.unroll(2):" in printed


def test_break_and_continue_are_kept():
    prog, _, printed = through_the_pass(kernel(
        "for i in pl.range(4):", "    if i > 2:", "        break", "    else:", "        continue"))
    kinds = [type(s) for s in walk(prog.functions[0].body)]
    assert BreakStmt in kinds and ContinueStmt in kinds
    assert "                break\n            else:\n                continue" in printed


# ---------------------------------------------------------------- types


def test_tensor_with_a_memref():
    prog, _, printed = through_the_pass(kernel(
        params='x: pl.Tensor[[16, 16], pl.FP32, pl.MemRef("mem_ddr_0", 0, 1024)]'))
    t = param_type(prog, 0)
    assert isinstance(t, TensorType) and t.memref.base == StrConst("mem_ddr_0")
    assert t.memref.byte_offset == 0 and t.memref.size == 1024
    assert "x: pl.Tensor[[16, 16], pl.FP32, pl.MemRef('mem_ddr_0', 0, 1024)]" in printed


@pytest.mark.parametrize("view", ["pl.TensorView(stride=[16, 1], layout=pl.TensorLayout.ND)",
                                  "pl.TensorView(stride=[], layout=pl.TensorLayout.DN)",
                                  "pl.TensorView(valid_shape=[8, 16], stride=[], layout=pl.TensorLayout.ND)",
                                  "pl.TensorView()"])
def test_tensor_view_layouts(view):
    prog, _, printed = through_the_pass(kernel(params=f"x: pl.Tensor[[16, 16], pl.FP32, {view}]"))
    assert f"x: pl.Tensor[[16, 16], pl.FP32, {view}]" in printed


def test_tensor_view_and_memref_together():
    ann = ("pl.Tensor[[16, 16], pl.FP32, pl.TensorView(stride=[16, 1], layout=pl.TensorLayout.ND), "
           "pl.MemRef('mem_ddr_1', 0, 1024)]")
    _, _, printed = through_the_pass(kernel(params=f"x: {ann}"))
    assert f"x: {ann}" in printed


def test_n_d_tensor_shape():
    load = ("local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = "
            "pl.tile.load(x, [0, 0, 0], [1, 16, 16], [1, 16, 16], target_memory=pl.Mem.Vec)")
    prog, _, printed = through_the_pass(kernel(params="x: pl.Tensor[[2, 16, 16], pl.FP32]", load=load))
    assert len(param_type(prog, 0).shape) == 3
    assert stmt(prog, "local").target.type.shape == (Const(16), Const(16))


def test_n_d_load_annotated_flattened_to_2d():
    load = ("local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = "
            "pl.tile.load(x, [0, 0, 0], [2, 8, 16], [2, 8, 16], target_memory=pl.Mem.Vec)")
    through_the_pass(kernel(params="x: pl.Tensor[[4, 8, 16], pl.FP32]", load=load))


def test_flattened_annotation_must_hold_the_same_rows():
    load = ("local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = "
            "pl.tile.load(x, [0, 0, 0], [3, 8, 16], [3, 8, 16], target_memory=pl.Mem.Vec)")
    with pytest.raises(et.DslError, match="annotated shape"):
        et.parse_program(kernel(params="x: pl.Tensor[[4, 8, 16], pl.FP32]", load=load))


def test_dynamic_dimension_declared_at_module_level():
    prog, _, printed = through_the_pass(kernel(
        params="x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[N, 16], pl.FP32]",
        header='\nN = pl.dynamic("N")'))
    assert param_type(prog, 1).shape[0] == DynDim("N")
    assert 'N = pl.dynamic("N")' in printed
    assert "y: pl.Tensor[[N, 16], pl.FP32]" in printed


def test_dynamic_dimension_in_a_scalar_bound():
    prog, _, printed = through_the_pass(kernel(
        "n: pl.Scalar[pl.INDEX] = pl.min(N, 64)",
        "for i in pl.range(n):", "    u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(local, 2.0)",
        header='\nN = pl.dynamic("N")'))
    assert stmt(prog, "n").value == Call("min", (DynDim("N"), Const(64)))  # registered: pl.min
    assert stmt(prog, "n").target.type == ScalarType(DType.INDEX)
    assert "n: pl.Scalar[pl.INDEX] = pl.min(N, 64)" in printed


def test_a_local_named_like_a_dynamic_dimension_is_renamed_when_printed():
    _, _, printed = through_the_pass(kernel(
        "N: pl.Scalar[pl.INDEX] = 4", "M: pl.Scalar[pl.INDEX] = N + 1",
        params="x: pl.Tensor[[N, 16], pl.FP32]", header='\nN = pl.dynamic("N")'))
    assert "x: pl.Tensor[[N, 16], pl.FP32]" in printed
    assert "N_1: pl.Scalar[pl.INDEX] = 4" in printed and "M: pl.Scalar[pl.INDEX] = N_1 + 1" in printed


def test_tile_memref_in_pypto_order_with_an_alloc_base():
    load = ("local: pl.Tile[[16, 16], pl.FP32, pl.MemRef(mem_vec_0, 0, 1024), pl.Mem.Vec] = "
            "pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)")
    prog, _, printed = through_the_pass(kernel(
        load="mem_vec_0: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 1024)\n        " + load))
    t = stmt(prog, "local").target.type
    assert isinstance(t.memref.base, VarRef) and t.memref.base.var.name == "mem_vec_0"
    assert stmt(prog, "mem_vec_0").target.type == OpaqueType("pl.Ptr")
    assert "pl.MemRef(mem_vec_0, 0, 1024)" in printed


def test_memref_offset_decides_alignment():
    # an 8-column FP32 window at column 8 starts 32 bytes into its source: aligned when the
    # source's allocation offset is a multiple of 32 bytes, unaligned 4 bytes further
    def optimized(off: int) -> str:
        text = kernel(load=(
            f"local: pl.Tile[[16, 16], pl.FP32, pl.MemRef('mem_vec_0', {off}, 1024), pl.Mem.Vec] = "
            "pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)"),
            *["w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 8])",
              "y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w, 2.0)"])
        return et.print_program(et.optimize(et.parse_program(text)))

    assert "pl.tile.extract(local, 0, 8" in optimized(4)
    assert "pl.tile.extract(local, 0, 8" not in optimized(64)


def test_memref_pinned_by_name():
    load = ("local: pl.Tile[[16, 16], pl.FP32, pl.MemRef(\"ping\"), pl.Mem.Vec] = "
            "pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)")
    prog, _, printed = through_the_pass(kernel(load=load))
    assert stmt(prog, "local").target.type.memref.base == StrConst("ping")
    assert "pl.MemRef('ping')" in printed


@pytest.mark.parametrize("view", ["pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major)",
                                  "pl.TileView(pad=pl.PadValue.max)",
                                  "pl.TileView(valid_shape=[12, 16], pad=pl.PadValue.zero)",
                                  "pl.TileView(stride=[16, 1], start_offset=0, fractal=512)"])
def test_tile_views(view):
    load = (f"local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, {view}] = "
            "pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)")
    _, _, printed = through_the_pass(kernel(load=load))
    assert view in printed


def test_valid_shape_naming_scalars_and_scalar_functions():
    _, opt, printed = through_the_pass(kernel(
        "n: pl.Scalar[pl.INDEX] = pl.min(pl.max(4, 8), 16)",
        "v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[n, 16])] = "
        "pl.tile.set_validshape(local, [n, 16])"))
    assert "pl.TileView(valid_shape=[n, 16])" in printed


def test_opaque_types_are_kept_by_their_spelling():
    prog, _, printed = through_the_pass(kernel(
        "a: pl.Array[8, pl.INT32] = pl.array.create(8, pl.INT32)",
        "e: pl.AsyncEvent = pl.system.prefetch_async(x)"))
    assert stmt(prog, "a").target.type == OpaqueType("pl.Array[8, pl.INT32]")
    assert "a: pl.Array[8, pl.INT32] = pl.array.create(8, pl.INT32)" in printed


def test_empty_tuple_type():
    prog, _, _ = through_the_pass(kernel("r: pl.Tuple[()] = pl.system.barrier()"))
    assert stmt(prog, "r").target.type == TupleType(())


# ---------------------------------------------------------------- expressions and ops


def test_typed_index_constants_read_as_plain_literals():
    prog, _, printed = through_the_pass(kernel(
        "s: pl.Scalar[pl.INDEX] = pl.const(32, pl.INDEX) + pl.const(32, pl.INDEX)"))
    assert stmt(prog, "s").value == BinOp("+", Const(32), Const(32))
    assert "s: pl.Scalar[pl.INDEX] = 32 + 32" in printed


def test_typed_non_index_constants_and_casts_are_kept():
    prog, _, printed = through_the_pass(kernel(
        "c: pl.Scalar[pl.INT64] = pl.const(5, pl.INT64)",
        "d: pl.Scalar[pl.INT32] = pl.cast(c, pl.INT32)"))
    assert stmt(prog, "d").target.type == ScalarType(DType.INT32)
    assert "c: pl.Scalar[pl.INT64] = pl.const(5, pl.INT64)" in printed
    assert "d: pl.Scalar[pl.INT32] = pl.cast(c, pl.INT32)" in printed


@pytest.mark.parametrize("expr", ["a / 2", "a ** 2", "a & 3", "a | 3", "a ^ 3", "a << 2", "a >> 1",
                                  "(a + 1) * (a - 1) // 2 % 7", "-a ** 2", "(-a) ** 2", "(a & 3) << 2"])
def test_scalar_operators_round_trip(expr):
    _, _, printed = through_the_pass(kernel("a: pl.Scalar[pl.INDEX] = 6", f"b = {expr}"))
    assert f"= {expr}" in printed


def test_boolean_connectives_in_conditions():
    _, _, printed = through_the_pass(kernel(
        "a: pl.Scalar[pl.INDEX] = 6", "if a > 2 and a < 8 or a == 0:",
        "    u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(local, 2.0)"))
    assert "if (a > 2) and (a < 8) or (a == 0):" in printed


def test_unregistered_op_takes_its_result_type_from_the_annotation():
    prog, _, printed = through_the_pass(kernel(
        "acc: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 16], dtype=pl.FP32, "
        "target_memory=pl.Mem.Vec)",
        "acc2: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.future_op(acc, local, [0, 0])"))
    s = stmt(prog, "acc2")
    assert s.value.op == "pl.tile.future_op" and isinstance(s.target.type, TileType)
    assert "= pl.tile.future_op(acc, local, [0, 0])" in printed


def test_unregistered_tensor_op_with_layout_keyword():
    _, _, printed = through_the_pass(kernel(
        "t: pl.Tensor[[4, 8], pl.FP32] = pl.tensor.create([4, 8], dtype=pl.FP32, layout=pl.TensorLayout.ND)"))
    assert "= pl.tensor.create([4, 8], dtype=pl.FP32, layout=pl.TensorLayout.ND)" in printed


def test_unregistered_op_statement_without_annotation():
    _, _, printed = through_the_pass(kernel("pl.system.bar_all()"))
    assert "        pl.system.bar_all()\n" in printed


def test_underscored_op_spelling_with_an_annotation():
    _, _, printed = through_the_pass(kernel(
        "m: pl.Tile[[16, 16], pl.INT8, pl.Mem.Vec] = pl.tile.create([16, 16], dtype=pl.INT8, target_memory=pl.Mem.Vec)",
        "n: pl.Tile[[16, 16], pl.INT8, pl.Mem.Vec] = pl.tile.and_(m, m)"))
    assert "= pl.tile.and_(m, m)" in printed


def test_unannotated_typo_of_a_registered_op_is_still_rejected_with_a_hint():
    with pytest.raises(et.DslError, match=r"did you mean pl\.tile\.muls"):
        et.parse_program(kernel("u = pl.tile.mulss(local, 0.5)"))


def test_statement_typo_of_a_registered_op_is_rejected_with_a_hint():
    with pytest.raises(et.DslError, match=r"did you mean pl\.tile\.store"):
        et.parse_program(kernel("pl.tile.stor(local, [0, 0], x)"))


def test_pld_and_self_calls_stay_as_written():
    _, _, printed = through_the_pass(kernel("pld.tile.remote_scatter(local, 0)"))
    assert "pld.tile.remote_scatter(local, 0)" in printed


def test_a_registered_pld_op_prints_in_its_own_module():
    _, _, printed = through_the_pass(kernel("pld.tile.remote_store(local, x, 0, [0, 0])"))
    assert "        pld.tile.remote_store(local, x, 0, [0, 0])" in printed


def test_symbol_of_an_unknown_enum_family_is_kept():
    _, _, printed = through_the_pass(kernel("pl.system.sync_wait(pipe=pl.PipeType.MTE3, mode=pl.CompactMode.normal)"))
    assert "pl.system.sync_wait(pipe=pl.PipeType.MTE3, mode=pl.CompactMode.normal)" in printed


def test_symbol_kinds_are_compared_by_spelling():
    prog = et.parse_program(kernel("pl.system.sync_set(flag=pl.adir.input)"))
    call = next(s for s in prog.functions[0].body if isinstance(s, EvalStmt)).call
    assert call.kwarg("flag") == Symbol(("adir", "input"))


# ---------------------------------------------------------------- regions


@pytest.mark.parametrize("header", ["with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"qk\") as tid:",
                                    "with pl.auto_scope():", "with pl.manual_scope():",
                                    "with pl.spmd(4, sync_start=True):"])
def test_with_regions_are_kept_and_their_bodies_optimized(header):
    prog, _, printed = through_the_pass(kernel(
        header, "    inner: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 2])",
        "    inner_s: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(inner, 0.5)"))
    assert header.replace('"qk"', "'qk'") in printed
    assert "pl.tile.extract(local, 0, 2, shape=[16, 1], target_memory=pl.Mem.Vec)" in printed


def test_a_region_keeps_its_names_visible_after_it():
    _, _, printed = through_the_pass(kernel(
        "with pl.auto_scope():", "    u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(local, 2.0)",
        "w: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(u, 1.0)"))
    assert "        w: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(u, 1.0)" in printed


def test_unknown_region_is_rejected_with_the_known_ones():
    with pytest.raises(et.DslError, match=r"pl\.auto_scope"):
        et.parse_program(kernel("with pl.nowhere():", "    pass"))


def test_tuple_results_are_read_by_index():
    text = '''import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def pair(x: pl.Tensor[[16, 16], pl.FP32], a_out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Scalar[pl.INDEX]]:
        local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 1])
        scaled: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 0.5)
        a_1: pl.Tensor[[16, 16], pl.FP32] = pl.store(local, [0, 0], a_out)
        return a_1, 4

    @pl.function(type=pl.FunctionType.Orchestration)
    def run(x: pl.Tensor[[16, 16], pl.FP32], a: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ret: pl.Tuple[pl.Tensor[[16, 16], pl.FP32], pl.Scalar[pl.INDEX]] = self.pair(x, a)
        a_2: pl.Tensor[[16, 16], pl.FP32] = ret[0]
        n: pl.Scalar[pl.INDEX] = ret[1]
        return a_2
'''
    prog, _, printed = through_the_pass(text)
    run = prog.functions[1]
    assert isinstance(run.body[1].target.type, TensorType)
    assert run.body[2].target.type == ScalarType(DType.INDEX)
    assert "a_2: pl.Tensor[[16, 16], pl.FP32] = ret[0]" in printed
    assert "ret: pl.Tuple[pl.Tensor[[16, 16], pl.FP32], pl.Scalar[pl.INDEX]] = self.pair(x, a)" in printed
    with pytest.raises(et.DslError, match="constant index 0..1"):
        et.parse_program(text.replace("ret[1]", "ret[2]"))


@pytest.mark.parametrize("op", ["pl.tile.sin(local)", "pl.tile.row_expand(local, local)",
                                "pl.tensor.col_expand_mul(x, x)", "pl.tile.maximum(local, local)"])
def test_real_ops_outside_the_registry_are_not_mistaken_for_typos(op):
    prog = et.parse_program(kernel(f"u = {op}"))  # registered or not, it parses unannotated
    assert stmt(prog, "u").value.op.endswith(op.split("(")[0][3:])


def test_submit_of_a_program_function_in_a_manual_scope():
    text = '''import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        head: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 1], [0, 1])
        scaled: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.muls(head, 0.5)
        y_1: pl.Tensor[[16, 16], pl.FP32] = pl.store(local, [0, 0], y)
        return y_1

    @pl.function(type=pl.FunctionType.Orchestration)
    def run(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            t0: pl.Scalar[pl.INDEX] = pl.submit(self.k, x, y, attrs={"arg_directions": [pl.adir.input, pl.adir.output]})
            t1: pl.Scalar[pl.INDEX] = pl.submit(self.k, x, y, deps=[t0])
        return y
'''
    prog, _, printed = through_the_pass(text)
    call = prog.functions[1].body[0].body[1].value
    assert call.args[0] == Symbol(("self", "k")) and call.kwarg("deps").items[0].var.name == "t0"
    assert "t1: pl.Scalar[pl.INDEX] = pl.submit(self.k, x, y, deps=[t0])" in printed


def test_abstract_function_body_is_kept():
    text = kernel().replace('''    @pl.function(type=pl.FunctionType.InCore)''', '''    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def host_cb(x: pl.Tensor[[16, 16], pl.FP32]):
        pl.func_attr({"deferred_completion_waiter": True})
        ...

    @pl.function(type=pl.FunctionType.InCore)''')
    prog, _, printed = through_the_pass(text)
    assert prog.functions[0].abstract and len(prog.functions[0].body) == 1
    assert "        pl.func_attr({'deferred_completion_waiter': True})\n        ...\n" in printed


@pytest.mark.parametrize("cond", ["not a > 2", "~a == 0", "abs(a - 8) < 2"])
def test_prefix_operators_and_abs_in_conditions(cond):
    _, _, printed = through_the_pass(kernel(
        "a: pl.Scalar[pl.INDEX] = 6", f"if {cond}:",
        "    u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(local, 2.0)"))
    assert "        if " in printed


def test_not_inside_a_comparison_keeps_its_grouping():
    prog, _, printed = through_the_pass(kernel(
        "a: pl.Scalar[pl.BOOL] = 6 > 2", "b: pl.Scalar[pl.BOOL] = (not a) == False"))
    assert stmt(prog, "b").value.lhs == Call("not", (VarRef(stmt(prog, "a").target),))
