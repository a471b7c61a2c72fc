"""More statement and type forms: function types, scalar operators, store spellings,
slice keyword forms, multi-function programs. Each round-trips through the printer."""

import pytest

import egraph_tiles as et
from egraph_tiles.ir import FunctionType
import dslkit

PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX],\n"
          "               out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
HEAD = dslkit.kernel(PARAMS, """
t = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
""")


def roundtrip(text: str):
    prog = et.verify_program(et.parse_program(text))
    printed = et.print_program(prog)
    et.assert_structural_equal(et.parse_program(printed), prog)
    assert et.print_program(et.parse_program(printed)) == printed
    return prog, printed


def body(*lines: str):
    return roundtrip(dslkit.extended(HEAD, *lines))


@pytest.mark.parametrize("ftype", ["InCore", "AIC", "AIV", "Orchestration", "Opaque"])
def test_every_function_type_parses_and_prints_back(ftype):
    prog, printed = roundtrip(HEAD.replace("FunctionType.InCore", f"FunctionType.{ftype}"))
    assert prog.functions[0].func_type is FunctionType[ftype]
    assert f"type=pl.FunctionType.{ftype}" in printed


@pytest.mark.parametrize("expr", ["n // 2", "n % 16", "(n + 1) * 4 - n", "n * 16 + 8"])
def test_scalar_operator_round_trips(expr):
    _, printed = body(f"k = {expr}", "r = pl.tile.slice(t, [1, 64], [k, 0])")
    assert f"k: pl.Scalar[pl.INDEX] = {expr}" in printed


@pytest.mark.parametrize("cmp", ["n > 0", "n >= 1", "n < 4", "n <= 3", "n == 2", "n != 2"])
def test_if_condition_comparison_round_trips(cmp):
    _, printed = body(f"if {cmp}:", "    r = pl.yield_(t)", "else:", "    r = pl.yield_(t)")
    assert f"if {cmp}:" in printed


def test_tile_store_spelling_is_kept_and_rebinds_the_output():
    prog, printed = body("out = pl.tile.store(t, [0, 0], out)", "return out")
    assert "pl.tile.store(t, [0, 0], out)" in printed


def test_slice_with_valid_shape_and_drop_dims_round_trips():
    _, printed = body("r = pl.tile.slice(t, [1, 64], [n, 0], valid_shape=[1, 32], drop_dims=[0])")
    assert "valid_shape=[1, 32]" in printed and "drop_dims=[0]" in printed


def test_scalar_expression_argument_ko_plus_256_round_trips():
    _, printed = body("for ko in pl.range(0, 64, 32):",
                      "    r = pl.tile.extract(t, 0, ko + 16, shape=[16, 16], target_memory=pl.Mem.Vec)")
    assert "pl.tile.extract(t, 0, ko + 16, shape=[16, 16], target_memory=pl.Mem.Vec)" in printed


def test_program_of_three_functions_keeps_their_order_and_calls():
    text = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
        u = pl.tile.muls(t, 2.0)
        out = pl.store(u, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a = self.cube(x, out)
        b = self.vec(x, a)
        return b
"""
    prog, printed = roundtrip(text)
    assert [f.name for f in prog.functions] == ["cube", "vec", "main"]
    assert [s.value.op for s in prog.function("main").body[:2]] == ["self.cube", "self.vec"]
    assert "b: pl.Tensor[[16, 16], pl.FP32] = self.vec(x, a)" in printed  # typed from the callee


def test_distributed_tensor_parameter_round_trips():
    prog, printed = roundtrip(HEAD.replace("import pypto.language as pl",
                                           "import pypto.language as pl\nimport pypto.language.distributed as pld")
                              .replace("x: pl.Tensor[[16, 64], pl.FP32]", "x: pld.DistributedTensor[[16, 64], pl.FP32]"))
    assert prog.functions[0].params[0].var.type.distributed
    assert "x: pld.DistributedTensor[[16, 64], pl.FP32]" in printed


def test_split_aiv_scope_round_trips_with_its_mode():
    _, printed = body("for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):",
                      "    u = pl.tile.muls(t, 2.0)")
    assert "pl.split_aiv(2, mode=pl.SplitMode.NONE)" in printed


def test_while_loop_with_carries_round_trips():
    _, printed = body("for (a,) in pl.while_(init_values=(n,)):", "    pl.cond(a < 4)",
                      "    b = a + 1", "    a = pl.yield_(b)")
    assert "pl.while_(init_values=(n,))" in printed and "pl.cond(a < 4)" in printed
