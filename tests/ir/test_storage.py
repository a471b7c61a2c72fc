"""The storage analysis (``ir.storage``): each tile value's buffer, bit offset and strides,
composed through views, carries and merges; unknown where incoming values disagree or an edge
kind is not modelled."""

from __future__ import annotations

import egraph_tiles as et
from egraph_tiles.ir.format import format_expr
from egraph_tiles.ir.effects import Edge, function_effects
from egraph_tiles.ir.storage import positional_slices, storage_of
from egraph_tiles.ir.summaries import call_summaries
from dslkit import kernel

PARAMS = ("x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX], "
          "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]")
LOAD12 = "local = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)\n"
LOAD16 = "local = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)\n"


def analysed(body: str):
    p = et.parse_program(kernel(PARAMS, body + "\nout = pl.store(local, [0, 0], out)\nreturn out",
                                "pl.Tensor[[16, 16], pl.FP32]"))
    fn = positional_slices(p.functions[0])
    fx = function_effects(fn)
    names = {v.name: v for v in fx.defs}
    return storage_of(fn, fx), names, fx, fn


def fact(body: str, name: str):
    """(root name, byte offset as printed, strides in bits) of ``name``, or None: unknown."""
    st, names, _, _ = analysed(body)
    lay = st.layout(names[name])
    if lay is None:
        return None
    return lay.root.name, format_expr(lay.offset_bytes()), lay.strides


def test_a_slice_of_a_set_validshape_view_keeps_the_sources_row_pitch():
    assert fact(LOAD12 + "v = pl.tile.set_validshape(local, [16, 8])\n"
                "s = pl.tile.slice(v, [1, 8], [1, 0])", "s") == ("local", "48", (384, 32))


def test_a_row_of_a_transpose_view_starts_one_element_in_and_steps_by_rows():
    assert fact(LOAD16 + "v = pl.tile.transpose_view(local)\n"
                "s = pl.tile.slice(v, [1, 8], [1, 0])", "s") == ("local", "4", (32, 512))


def test_a_slice_of_a_slice_adds_the_offsets_with_the_roots_strides():
    assert fact(LOAD16 + "i = n * 2\na = pl.tile.slice(local, [8, 8], [i, 8])\n"
                "s = pl.tile.slice(a, [1, 8], [1, 0])", "s") == ("local", "i * 64 + 96", (512, 32))


def test_a_reshape_lays_the_bytes_out_densely_from_its_operands_start():
    assert fact(LOAD16 + "w = pl.tile.slice(local, [1, 16], [3, 0])\n"
                "v = pl.tile.reshape(w, [2, 8])", "v") == ("local", "192", (256, 32))


def test_a_loop_carry_whose_yield_passes_it_on_keeps_the_initializers_fact():
    body = LOAD12 + """w = pl.tile.slice(local, [8, 8], [8, 0])
for i, (a,) in pl.range(2, init_values=(w,)):
    r = pl.yield_(a)"""
    assert fact(body, "a") == fact(body, "r") == ("local", "384", (384, 32))


def test_a_loop_carry_whose_yield_names_another_window_is_unknown():
    assert fact(LOAD12 + """w = pl.tile.slice(local, [8, 8], [0, 0])
for i, (a,) in pl.range(2, init_values=(w,)):
    b = pl.tile.slice(local, [8, 8], [8, 0])
    r = pl.yield_(b)""", "a") is None


LOOP_RESULT = LOAD12 + """w = pl.tile.slice(local, [8, 8], [8, 0])
for i, (a,) in pl.range({trips}, init_values=(w,)):
    e = pl.tile.slice(local, [8, 8], [0, 4])
{extra}    r = pl.yield_(e)"""


def test_the_result_of_a_loop_known_to_run_is_its_last_yield():
    assert fact(LOOP_RESULT.format(trips=2, extra=""), "r") == ("local", "16", (384, 32))


def test_the_result_of_a_loop_known_never_to_run_is_its_initializer():
    assert fact(LOOP_RESULT.format(trips=0, extra=""), "r") == ("local", "384", (384, 32))


def test_the_result_of_a_loop_that_may_run_or_not_is_unknown_when_they_differ():
    assert fact(LOOP_RESULT.format(trips="n", extra=""), "r") is None


def test_the_result_of_a_loop_that_may_break_before_its_yield_is_unknown_when_they_differ():
    extra = "    if n > 0:\n        break\n"
    assert fact(LOOP_RESULT.format(trips=2, extra=extra), "r") is None


def test_an_if_merge_has_a_fact_only_when_both_arms_agree():
    arms = LOAD12 + """w1 = pl.tile.slice(local, [8, 8], [0, 0])
w2 = pl.tile.slice(local, [8, 8], [{row}, 0])
if n > 0:
    m = pl.yield_(w1)
else:
    m = pl.yield_(w2)"""
    assert fact(arms.format(row=8), "m") is None
    assert fact(arms.format(row=0), "m") == ("local", "0", (384, 32))


def test_a_value_may_name_every_valid_shape_slice_reaching_it_through_a_merge():
    st, names, _, _ = analysed(LOAD12 + """w1 = pl.tile.slice(local, [8, 8], [0, 0], valid_shape=[8, 4])
w2 = pl.tile.slice(local, [8, 8], [8, 0], valid_shape=[8, 4])
if n > 0:
    m = pl.yield_(w1)
else:
    m = pl.yield_(w2)
v = pl.tile.set_validshape(m, [4, 8])""")
    assert {o.name for o in st.origins[names["v"]]} == {"w1", "w2"}


def test_an_edge_kind_the_analysis_does_not_model_gives_unknown_storage():
    # (e.g. a call result sharing an argument's storage): the value may still name the slice
    st0, names, fx, fn = analysed(LOAD16 + "w = pl.tile.slice(local, [8, 8], [0, 8], valid_shape=[8, 8])\n"
                                  "r = pl.tile.adds(w, 1.0)")
    assert st0.layout(names["r"]) is not None  # a fresh result: its own root
    fx.edges.append(Edge("call-result", names["r"], names["w"], fx.stmt_at(fx.defs[names["r"]][0])))
    st = storage_of(fn, fx)
    assert st.layout(names["r"]) is None
    assert {o.name for o in st.origins[names["r"]]} == {"w"}


def test_a_keyword_spelled_slice_is_the_positional_slice():
    _, _, _, fn = analysed(LOAD16 + "s = pl.tile.slice(local, shape=[16, 8], offset=[0, 1])")
    s = next(s for s in fn.body if getattr(s, "target", None) and s.target.name == "s")
    assert len(s.value.args) == 3 and not s.value.kwargs


def test_set_validshape_keeps_its_sources_memref_in_its_type():
    p = et.parse_program(kernel(PARAMS, """
local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.MemRef(16)] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
v = pl.tile.set_validshape(local, [16, 8])
out = pl.store(v, [0, 0], out)
return out""", "pl.Tensor[[16, 16], pl.FP32]"))
    v = next(s.target for s in p.functions[0].body if getattr(s, "target", None)
             and s.target.name == "v")
    assert v.type.memref is not None and v.type.memref.byte_offset == 16


def test_a_window_escapes_into_the_values_that_share_its_storage_at_its_use():
    # an init its iter-arg, a set_validshape its result, a call result sharing its argument's
    # storage (an edge of a kind the analysis does not model) that result; a slice: nothing
    st0, names, fx, fn = analysed(LOAD16 + """w = pl.tile.slice(local, [8, 8], [0, 8])
v = pl.tile.set_validshape(w, [8, 4])
r = pl.tile.adds(w, 1.0)
s = pl.tile.slice(w, [1, 8], [0, 0])
for i, (a,) in pl.range(2, init_values=(w,)):
    b = pl.yield_(a)""")
    at = {n: fx.stmt_at(fx.defs[names[n]][0]) for n in ("v", "r", "s")}
    fx.edges.append(Edge("call-result", names["r"], names["w"], at["r"]))
    st = storage_of(fn, fx)
    loop = next(x for x in fn.body if type(x).__name__ == "ForStmt")
    assert [v.name for v in st.escapes(loop, ("init", 0), names["w"])] == ["a"]
    assert [v.name for v in st.escapes(at["v"], ("arg", 0), names["w"])] == ["v"]
    assert [v.name for v in st.escapes(at["r"], ("arg", 0), names["w"])] == ["r"]
    assert st.escapes(at["s"], ("arg", 0), names["w"]) == []


def test_a_window_whose_call_result_reaches_col_expand_is_used_as_dense_and_aligned():
    # the encoder reads the escape from the storage edges: a (future) call-result edge makes the
    # window's operand use need what the result's col_expand needs (context CALL: dense and
    # aligned, or copied before the call)
    from egraph_tiles.egraph.encode import encode_function
    from egraph_tiles.ir.ops import Role

    p = et.parse_program(kernel(
        "x: pl.Tensor[[16, 64], pl.FP32], g: pl.Tensor[[1, 16], pl.FP32], "
        "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]", """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
gt = pl.tile.load(g, [0, 0], [1, 16], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [16, 16], [0, 16])
r = pl.tile.adds(w, 1.0)
e = pl.tile.col_expand_mul(r, gt)
out = pl.store(e, [0, 0], out)
return out""", "pl.Tensor[[16, 16], pl.FP32]"))
    fn = p.functions[0]
    fx = function_effects(fn)
    names = {v.name: v for v in fx.defs}
    contexts = [u.ctx for u in encode_function(fn, fx, p, storage_of(fn, fx)).uses]
    assert contexts == [Role.ORD]  # a fresh result: the window is only read
    fx.edges.append(Edge("call-result", names["r"], names["w"],
                         fx.stmt_at(fx.defs[names["r"]][0])))
    contexts = [u.ctx for u in encode_function(fn, fx, p, storage_of(fn, fx)).uses]
    assert contexts == [Role.CALL]


CALLS = """
import pypto.language as pl
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 12], pl.FP32], out: pl.Out[pl.Tensor[[16, 12], pl.FP32]]
               ) -> pl.Tensor[[16, 12], pl.FP32]:
        local = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
        w = pl.tile.slice(local, [16, 8], [0, 2])
        r = self.CALLEE(w)
        out = pl.store(local, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def ident(self, t: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]:
        u = pl.tile.set_validshape(t, [16, 8])
        return u

    @pl.function(type=pl.FunctionType.InCore)
    def row1(self, t: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [1, 8], [1, 0])
        return s

    @pl.function(type=pl.FunctionType.InCore)
    def turned(self, t: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec]:
        v = pl.tile.transpose_view(t)
        return v
"""


def call_fact(callee: str):
    """(root, byte offset, strides) of the kernel's call result ``r`` (``w`` is local's columns
    2..9: 8 B in, 48 B rows), or None: unknown."""
    p = et.parse_program(CALLS.replace("CALLEE", callee))
    fn = p.functions[0]
    fx = function_effects(fn, call_summaries(p))
    lay = storage_of(fn, fx).layout(next(v for v in fx.defs if v.name == "r"))
    return None if lay is None else (lay.root.name, format_expr(lay.offset_bytes()), lay.strides)


def test_a_call_result_the_callee_proves_is_its_parameter_has_the_arguments_layout():
    assert call_fact("ident") == ("local", "8", (384, 32))


def test_a_call_result_that_is_a_constant_window_of_the_parameter_is_that_window_of_the_argument():
    # row 1 of the argument: one of local's 48 B rows past its start (not the 32 B of t's own)
    assert call_fact("row1") == ("local", "56", (384, 32))


def test_a_call_result_laid_out_anew_by_the_callee_is_unknown():
    assert call_fact("turned") is None


def test_the_route_from_a_slice_to_a_value_is_named_step_by_step():
    st, names, _, _ = analysed(LOAD16 + """w = pl.tile.slice(local, [8, 8], [0, 8])
v = pl.tile.set_validshape(w, [8, 8])
for i, (a,) in pl.range(2, init_values=(v,)):
    r = pl.yield_(a)""")
    assert st.route(names["w"], names["r"]) == "the view tile.set_validshape, then a loop carry"
    assert st.route(names["r"], names["w"]) is None


def test_only_a_value_that_may_still_be_the_slice_keeps_it_for_col_expand():
    # set_validshape keeps the slice's own subview; transpose_view lays it out anew
    st, names, _, _ = analysed(LOAD16 + """w = pl.tile.slice(local, [8, 8], [0, 8], valid_shape=[8, 4])
v = pl.tile.set_validshape(w, [8, 8])
t = pl.tile.transpose_view(w)""")
    assert {o.name for o in st.kept_origins[names["v"]]} == {"w"}
    assert names["t"] not in st.kept_origins
    assert {o.name for o in st.origins[names["t"]]} == {"w"}
