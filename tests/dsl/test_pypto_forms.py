"""The forms PyPTO's own printer emits are accepted and survive a round trip."""

import egraph_tiles as et
from egraph_tiles.ir import (AssignStmt, Call, MemorySpace, StrConst, Symbol,
                             TileType, bind)


def roundtrips(text: str):
    prog = et.parse_program(text, filename="pypto.py")
    et.verify_program(prog)
    printed = et.print_program(prog)
    again = et.parse_program(printed)
    assert et.print_program(again) == printed
    et.assert_structural_equal(again, prog)
    return prog, printed


def assign(prog, name: str) -> AssignStmt:
    for s in prog.functions[0].body:
        if isinstance(s, AssignStmt) and s.target.name == name:
            return s
    raise KeyError(name)


def test_level_and_role_decorator_arguments_are_kept_and_printed():
    prog, printed = roundtrips('''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV, level=pl.Level.CORE, role=pl.Role.Worker)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
        t = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
''')
    f = prog.functions[0]
    assert dict(f.decorator_kwargs)["level"] == Symbol(("Level", "CORE"))
    assert "@pl.function(type=pl.FunctionType.AIV, level=pl.Level.CORE, role=pl.Role.Worker)" in printed


def test_parameters_without_self_are_accepted_and_printed_without_self():
    prog, printed = roundtrips('''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(x: pl.Tensor[[16, 16], pl.FP32]):
        t = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
''')
    assert prog.functions[0].has_self is False
    assert [p.var.name for p in prog.functions[0].params] == ["x"]
    assert "def k(x: pl.Tensor[[16, 16], pl.FP32]):" in printed


def test_positional_extract_shape_binds_like_the_keyword_form():
    prog, _ = roundtrips('''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32]):
        t = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
        a = pl.tile.extract(t, 0, 1, [16, 1], target_memory=pl.Mem.Vec)
        b = pl.tile.extract(t, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)
''')
    a, b = assign(prog, "a"), assign(prog, "b")
    assert bind(a.value).arg("shape") == b.value.kwarg("shape")
    assert et.structural_equal(a.value, b.value)


def test_positional_load_shape_and_valid_shape_are_bound():
    prog, _ = roundtrips('''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32]):
        t = pl.tile.load(x, [0, 0], [16, 8], [16, 4], target_memory=pl.Mem.Vec)
''')
    t = assign(prog, "t")
    assert t.target.type.valid_shape is not None
    assert [c.value for c in t.target.type.valid_shape] == [16, 4]


def test_tileview_as_fourth_tile_type_element_sets_valid_shape_and_is_printed_back():
    prog, printed = roundtrips('''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32]):
        t: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[16, 4], blayout=pl.TileLayout.row_major)] = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
''')
    ty = assign(prog, "t").target.type
    assert isinstance(ty, TileType) and [c.value for c in ty.valid_shape] == [16, 4]
    assert isinstance(ty.view, Call) and ty.view.op == "TileView"
    assert "pl.TileView(valid_shape=[16, 4], blayout=pl.TileLayout.row_major)" in printed


def test_pad_value_keyword_is_kept():
    prog, printed = roundtrips('''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32]):
        t = pl.tile.load(x, [0, 0], [16, 8], [16, 5], target_memory=pl.Mem.Vec, pad_value=pl.PadValue.zero)
        pl.tile.fillpad_inplace(t, pad_value=pl.PadValue.zero)
''')
    assert assign(prog, "t").value.kwarg("pad_value") == Symbol(("PadValue", "zero"))
    assert "pl.tile.fillpad_inplace(t, pad_value=pl.PadValue.zero)" in printed


def test_memref_offsets_known_sentinel_and_named_are_read():
    prog, printed = roundtrips('''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32]):
        a: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec, pl.MemRef(512)] = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
        b: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec, pl.MemRef(-1)] = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
        c: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec, pl.MemRef(buf0)] = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
''')
    a, b, c = (assign(prog, n).target.type.memref for n in "abc")
    assert a.is_known and a.byte_offset == 512
    assert b.is_sentinel
    assert c.byte_offset == StrConst("buf0") and not c.is_known
    assert "pl.MemRef(buf0)" in printed


def test_memory_space_spelled_memoryspace_is_normalized_to_mem():
    prog, printed = roundtrips('''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32]):
        t: pl.Tile[[16, 8], pl.FP32, pl.MemorySpace.Vec] = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.MemorySpace.Vec)
''')
    assert assign(prog, "t").target.type.memory is MemorySpace.Vec
    assert "pl.MemorySpace" not in printed


def test_orchestration_function_calls_an_incore_function_through_self():
    prog, printed = roundtrips('''
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[[16, 8], pl.FP32], out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        t = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pld.DistributedTensor[[16, 8], pl.FP32], out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        r = self.kern(x, out)
        pld.tile.remote_store(r, 0)
        return r
''')
    main = prog.function("main")
    assert main.body[0].value.op == "self.kern"
    assert main.body[1].call.op == "pld.tile.remote_store"
    assert main.params[0].var.type.distributed
    assert "import pypto.language.distributed as pld" in printed
