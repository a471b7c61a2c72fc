"""The verifier rejects ill-formed IR with a ValueError naming the statement and line."""

import pytest

import egraph_tiles as et
from egraph_tiles.ir import AssignStmt, Call, Const, ForStmt, ListExpr, VarRef
import dslkit

PARAMS = "x: pl.Tensor[[16, 8], pl.FP32], m: pl.Tensor[[16, 64], pl.BF16]"
HEAD = dslkit.kernel(PARAMS, """
t = pl.tile.load(x, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
mt = pl.tile.load(m, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
""")


def prog(*lines: str):
    return et.parse_program(dslkit.extended(HEAD, *lines), "k.py")


def rejects(p, *fragments: str) -> str:
    with pytest.raises(ValueError) as info:
        et.verify_program(p)
    msg = str(info.value)
    for f in fragments:
        assert f in msg
    return msg


def test_well_formed_program_passes_and_is_returned():
    p = prog("s = pl.tile.slice(t, [16, 1], [0, 7])")
    assert et.verify_program(p) is p


def test_use_before_definition_is_named_with_its_line():
    p = prog("u = pl.tile.muls(t, 0.5)", "w = pl.tile.muls(u, 0.5)")
    body = p.functions[0].body
    body[2], body[3] = body[3], body[2]  # swap: w now reads u before u exists
    rejects(p, "k.py:10", "statement `w: pl.Tile", "'u' is used before its definition")


def test_slice_window_outside_its_source_is_rejected():
    p = prog("s = pl.tile.slice(t, [16, 4], [0, 6])")
    rejects(p, "k.py:9", "pl.tile.slice(t, [16, 4], [0, 6])", "[6, 10) on axis 1", "extent 8")


def test_extract_window_outside_its_source_is_rejected():
    p = prog("e = pl.tile.extract(mt, 8, 0, shape=[16, 16], target_memory=pl.Mem.Left)")
    rejects(p, "[8, 24) on axis 0")


def test_extract_from_mat_into_mat_is_rejected():
    p = prog("e = pl.tile.extract(mt, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)")
    e = p.functions[0].body[2].value
    p.functions[0].body[2].value = Call(e.op, e.args, (("shape", e.kwarg("shape")),
                                                       ("target_memory", _mem("Mat"))))
    rejects(p, "k.py:9", "cannot copy Mat into Mat")


def test_extract_from_vec_into_left_is_accepted_before_memory_inference():
    # PyPTO infers memory spaces after CanonicalizeTileSlice: this copy is its business then
    p = prog("e: pl.Tile[[16, 8], pl.FP32, pl.Mem.Left] = "
             "pl.tile.extract(t, 0, 0, shape=[16, 8], target_memory=pl.Mem.Left)")
    assert et.verify_program(p) is p


def test_shape_mismatch_between_declared_type_and_value_is_rejected():
    p = prog("u = pl.tile.muls(t, 0.5)")
    s = p.functions[0].body[2]
    s.value = Call("tile.slice", (VarRef(p.functions[0].body[0].target), ListExpr((Const(16), Const(4))),
                                  ListExpr((Const(0), Const(0)))))
    rejects(p, "shape [16, 8] vs [16, 4]")


def test_dtype_mismatch_of_binary_operands_is_rejected():
    p = prog("u = pl.tile.muls(t, 0.5)", "w = pl.tile.add(t, u)")
    p.functions[0].body[3].value = Call("tile.add", (VarRef(p.functions[0].body[0].target),
                                                     VarRef(p.functions[0].body[1].target)))
    rejects(p, "k.py:10", "tile.add")


def test_yield_arity_differing_from_the_loop_carries_is_rejected():
    p = prog("for i, (a,) in pl.range(2, init_values=(t,)):", "    r = pl.yield_(a)")
    loop = p.functions[0].body[2]
    assert isinstance(loop, ForStmt)
    loop.body[-1].values.append(loop.body[-1].values[0])
    rejects(p, "k.py:10", "yield arity 2 differs from the 1 carried value(s)")


def test_definition_in_a_loop_body_is_not_visible_after_the_loop():
    p = prog("for i in pl.range(2):", "    u = pl.tile.muls(t, 0.5)", "    w = pl.tile.muls(u, 0.5)")
    body = p.functions[0].body
    body.append(body[2].body.pop())  # w now reads u after u's loop ended
    rejects(p, "k.py:11", "'u' is used before its definition")


def test_definition_in_one_loop_body_is_not_visible_in_the_next():
    p = prog("for i in pl.range(2):", "    u = pl.tile.muls(t, 0.5)", "    w = pl.tile.muls(u, 0.5)",
             "for j in pl.range(2):", "    z = pl.tile.muls(t, 0.5)")
    first, second = p.functions[0].body[2:4]
    second.body.append(first.body.pop())
    rejects(p, "k.py:11", "'u' is used before its definition")


def test_a_loop_variable_is_not_visible_after_its_loop():
    p = prog("for i in pl.range(2):", "    u = pl.tile.slice(t, [16, 1], [0, i])",
             "w = pl.tile.muls(t, 0.5)")
    body = p.functions[0].body
    body.append(body[2].body.pop())
    rejects(p, "k.py:10", "'i' is used before its definition")


def test_loop_carrying_values_without_a_yield_is_rejected():
    p = prog("for i, (a,) in pl.range(2, init_values=(t,)):", "    r = pl.yield_(a)")
    p.functions[0].body[2].body.pop()
    rejects(p, "k.py:9", "must end with pl.yield_")


def test_yield_of_a_differently_shaped_tile_is_rejected():
    p = prog("s = pl.tile.slice(t, [16, 4], [0, 0])",
             "for i, (a,) in pl.range(2, init_values=(t,)):", "    r = pl.yield_(a)")
    loop = p.functions[0].body[3]
    loop.body[-1].values[0] = VarRef(p.functions[0].body[2].target)
    rejects(p, "k.py:11", "yielded value for 'a'", "shape [16, 8] vs [16, 4]")


def test_statement_built_without_a_span_is_reported_without_a_line():
    p = prog()
    v = p.functions[0].body[0].target
    p.functions[0].body.append(AssignStmt(v, Call("tile.slice", (VarRef(v), ListExpr((Const(32), Const(8))),
                                                                  ListExpr((Const(0), Const(0)))))))
    rejects(p, "(no source line)", "window extent 32 on axis 0")


def _mem(name: str):
    from egraph_tiles.ir import MemorySpace, Symbol

    return Symbol(("Mem", name), MemorySpace[name])
