"""Call summaries (ir.summaries, ``CallSummary``): what each program function returns and writes in
terms of its parameters, computed once per program, and the storage edges and writes a call of
it gets in the caller's effects."""

from __future__ import annotations

import pytest

import egraph_tiles as et
from egraph_tiles.ir.effects import Returned, Share, function_effects
from egraph_tiles.ir.summaries import call_summaries
from egraph_tiles.ir.stmts import AssignStmt, walk

V64 = "pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]"
V8 = "pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]"


def program(*functions: str) -> et.ir.Program:
    """A program whose class holds ``functions`` (each a ``def`` with its body, 4-space
    indented, without the decorator)."""
    text = "import pypto.language as pl\n@pl.program\nclass K:\n" + "".join(
        "    @pl.function(type=pl.FunctionType.InCore)\n" + f for f in functions)
    return et.parse_program(text)


IDENT = f"""    def ident(self, t: {V64}) -> {V64}:
        return t
"""
SUB = f"""    def sub(self, t: {V64}) -> pl.Tile[[4, 8], pl.FP32, pl.Mem.Vec]:
        s: pl.Tile[[8, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [8, 8], [2, 3])
        s2: pl.Tile[[4, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(s, [4, 8], [1, 0])
        return s2
"""
FILL = f"""    def fill(self, t: {V64}, q: {V8}):
        s: {V8} = pl.tile.slice(t, [16, 8], [0, 0])
        s2: {V8} = pl.tile.assemble(s, q, [0, 0])
        return
"""
DYN = f"""    def dyn(self, t: {V64}, i: pl.Scalar[pl.INDEX]) -> {V8}:
        s: {V8} = pl.tile.slice(t, [16, 8], [0, i])
        return s
"""
TWO = f"""    def two(self, t: {V64}, u: {V8}) -> pl.Tuple[{V8}, {V64}]:
        s: {V8} = pl.tile.slice(t, [16, 8], [0, 8])
        return u, s
"""
CHOOSE = f"""    def choose(self, t: {V64}, u: {V64}, c: pl.Scalar[pl.INDEX]) -> {V64}:
        if c == 0:
            r = pl.yield_(t)
        else:
            r = pl.yield_(u)
        return r
"""
FRESH = f"""    def fresh(self, t: {V64}) -> {V64}:
        y: {V64} = pl.tile.muls(t, 2.0)
        return y
"""
OUTER = f"""    def outer(self, t: {V64}, q: {V8}) -> {V64}:
        self.fill(t, q)
        r: {V64} = self.ident(t)
        return r
"""
LOOP = f"""    def loop(self, t: {V64}) -> {V64}:
        r: {V64} = self.loop(t)
        return r
"""


@pytest.mark.parametrize("functions, name, results, writes", [
    ((IDENT,), "ident", ((Returned(0, True, None, (0, 0)),),), set()),
    ((SUB,), "sub", ((Returned(0, False, ((4, 8), (3, 3)), (3, 3)),),), set()),
    ((DYN,), "dyn", ((Returned(0, False, ((16, 8), (0, None))),),), set()),
    ((FILL,), "fill", (), {0}),
    ((TWO,), "two", ((Returned(1, True, None, (0, 0)),),
                     (Returned(0, False, ((16, 8), (0, 8)), (0, 8)),)), set()),
    ((CHOOSE,), "choose", ((Returned(0, True), Returned(1, True)),), set()),
    ((FRESH,), "fresh", ((),), set()),
    ((OUTER, FILL, IDENT), "outer", ((Returned(0, True, None, (0, 0)),),), {0}),
], ids=["returns-its-parameter", "returns-a-window-of-a-window", "window-at-a-dynamic-offset",
        "writes-through-a-slice",
        "tuple-elements", "either-parameter", "fresh-result", "through-further-calls"])
def test_summary_states_returned_parameters_windows_and_writes(functions, name, results, writes):
    s = call_summaries(program(*functions)).get(name)
    assert s is not None and s.results == results and s.writes == writes


def test_recursive_call_is_conservative_inside_the_cycle():
    # the inner call has no summary: it may write t and its result may be t's storage
    s = call_summaries(program(LOOP)).get("loop")
    assert s is not None and s.results == ((Returned(0),),) and s.writes == {0}


def caller_effects(body: str, *functions: str):
    p = program(f"""    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32]):
        local: {V64} = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        z: {V8} = pl.tile.create([16, 8], dtype=pl.FP32, target_memory=pl.Mem.Vec)
""" + "".join(" " * 8 + ln.strip() + "\n" for ln in body.strip().splitlines()) + "        return\n",
                *functions)
    fn = p.function("kernel")
    defs = {s.target.name: s.target for s in walk(fn.body) if isinstance(s, AssignStmt)}
    return function_effects(fn, call_summaries(p)), defs


def test_call_result_shares_the_argument_it_returns():
    fx, v = caller_effects("r = self.ident(local)", IDENT)
    (e,) = [e for e in fx.edges if e.kind is Share.CALL]
    assert (e.dst, e.src, e.whole, e.window) == (v["r"], v["local"], True, None)
    assert fx.same_storage(v["r"], v["local"]) and not fx.writes


def test_tuple_element_shares_only_what_that_element_returns():
    fx, v = caller_effects("pair = self.two(local, z)\nb = pair[1]\na = pair[0]", TWO)
    item = {e.dst.name: (e.src.name, e.window) for e in fx.edges
            if e.kind is Share.CALL and e.dst.name in ("a", "b")}
    assert item == {"a": ("z", None), "b": ("local", ((16, 8), (0, 8)))}


def test_call_writes_exactly_the_arguments_the_callee_writes_also_by_keyword():
    fx, v = caller_effects("self.fill(q=z, t=local)", FILL)
    assert [(w.var.name, w.index) for w in fx.writes] == [("local", 0)]


EXTERN = f"""    def ext(self, t: {V64}, u: {V8}) -> {V64}:
        ...
"""


def test_call_of_a_function_without_a_body_may_write_and_return_every_tile_operand():
    fx, v = caller_effects("r = self.ext(local, z)", EXTERN)
    assert sorted(w.var.name for w in fx.writes) == ["local", "z"]
    assert fx.same_storage(v["r"], v["local"]) and fx.same_storage(v["r"], v["z"])


def test_without_the_program_a_call_is_opaque_with_a_fresh_result():
    p = program(f"""    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32]):
        local: {V64} = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        r = self.ident(local)
        return
""", IDENT)
    fx = function_effects(p.function("kernel"))
    (w,) = fx.writes
    assert w.var.name == "local" and not any(e.kind is Share.CALL for e in fx.edges)


def test_summaries_are_computed_once_per_program():
    p = program(OUTER, FILL, IDENT)
    sums = call_summaries(p)
    assert call_summaries(p) is sums and sums.get("outer") is sums.get("outer")
