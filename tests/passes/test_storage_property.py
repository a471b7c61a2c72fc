"""Property: a window reaching its consumer through any route the storage analysis models — a
view of a view, a loop carry, an if merge, the keyword spelling — is compiled right:
``hardware(optimize(p)) == ideal(p)`` with no fault, or rejected where the program as written
is itself wrong on the hardware model (a rejection is never of a right program)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import egraph_tiles as et
from egraph_tiles.sim.soundness import unsound_because
from dslkit import kernel
from simkit import inputs_for

#: how the window ``w`` reaches ``v``, the value the consumer reads (``{w2}``: a second window)
ROUTES = {
    "direct": ["v = w"],
    "set_validshape": ["v = pl.tile.set_validshape(w, [{h}, {wc}])"],
    "view-of-view": ["v0 = pl.tile.set_validshape(w, [{h}, {wc}])",
                     "v = pl.tile.set_validshape(v0, [{h}, {wc}])"],
    "carry": ["for i, (a,) in pl.range(2, init_values=(w,)):",
              "    t = pl.tile.adds(g, 1.0)",
              "    v = pl.yield_(a)"],
    "carry-other": ["for i, (a,) in pl.range(2, init_values=(w,)):",
                    "    w2 = {w2}",
                    "    v = pl.yield_(w2)"],
    "carry-written": ["for i, (a,) in pl.range(2, init_values=(w,)):",
                      "    aw = pl.tile.set_validshape(a, [1, {wc}])",
                      "    f = pl.tile.fillpad_inplace(aw, pad_value=pl.PadValue.zero)",
                      "    v = pl.yield_(a)"],
    "merge": ["w2 = {w2}",
              "if n > 0:",
              "    v = pl.yield_(w)",
              "else:",
              "    v = pl.yield_(w2)"],
}

#: what reads ``v``: a row of it in a vector op (class D), v in a vector op, v in col_expand (E),
#: a reshape of v (read from its first element as a dense tile)
CONSUMERS = {
    "row": ["s = pl.tile.slice(v, [1, {k}], [{r1}, 0])", "e = pl.tile.adds(s, 1.0)"],
    "vector": ["e = pl.tile.adds(v, 1.0)"],
    "col_expand": ["g1 = pl.tile.slice(g, [1, {wc}], [0, 0])", "e = pl.tile.col_expand_mul(v, g1)"],
    "reshape": ["rs = pl.tile.reshape(v, [{hw4}, 4])", "e = pl.tile.adds(rs, 1.0)"],
}


@st.composite
def programs(draw):
    cols = draw(st.sampled_from([8, 12, 16, 24, 32]))
    h = draw(st.integers(2, 8))
    wc = draw(st.sampled_from([c for c in (4, 8, 12, 16) if c <= cols]))
    r0, c0 = draw(st.integers(0, 16 - h)), draw(st.integers(0, cols - wc))
    r2, c2 = draw(st.integers(0, 16 - h)), draw(st.integers(0, cols - wc))
    keyword = draw(st.booleans())
    memref = draw(st.sampled_from(["", ", pl.MemRef(0)", ", pl.MemRef(16)"]))
    route = draw(st.sampled_from(sorted(ROUTES)))
    consumer = draw(st.sampled_from(sorted(CONSUMERS)))
    k = draw(st.sampled_from([c for c in (4, 8) if c <= wc]))
    r1 = draw(st.integers(0, h - 1))
    slice_of = "pl.tile.slice(local, shape=[{h}, {wc}], offset=[{r}, {c}])" if keyword else \
        "pl.tile.slice(local, [{h}, {wc}], [{r}, {c}])"
    w2 = slice_of.format(h=h, wc=wc, r=r2, c=c2)
    lines = [f"local: pl.Tile[[16, {cols}], pl.FP32, pl.Mem.Vec{memref}] = "
             f"pl.tile.load(x, [0, 0], [16, {cols}], target_memory=pl.Mem.Vec)",
             "g = pl.tile.load(y, [0, 0], [1, 16], target_memory=pl.Mem.Vec)",
             "w = " + slice_of.format(h=h, wc=wc, r=r0, c=c0),
             *(ln.format(h=h, wc=wc, w2=w2) for ln in ROUTES[route]),
             *(ln.format(k=k, r1=r1, wc=wc, hw4=h * wc // 4) for ln in CONSUMERS[consumer]),
             "out = pl.store(local, [0, 0], out)",
             "out = pl.store(e, [0, 0], out)",
             "return out"]
    params = ("x: pl.Tensor[[16, 32], pl.FP32], y: pl.Tensor[[1, 16], pl.FP32], "
              "n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]")
    text = kernel(params, "\n".join(lines), "pl.Tensor[[32, 32], pl.FP32]")
    return et.verify_program(et.parse_program(text)), {"n": draw(st.integers(0, 1))}


@pytest.mark.slow
@given(programs())
def test_a_window_through_any_modelled_route_is_compiled_right_or_rightly_rejected(case):
    p, scalars = case
    ins = inputs_for(p)
    try:
        why = unsound_because(et.optimize, p, ins, scalars)
    except ValueError:
        # a rejection is right only for a program that is wrong as written, for some n
        assert any(unsound_because(lambda q: q, p, ins, {"n": n}) is not None for n in (0, 1)), \
            et.print_program(p)
        return
    assert why is None, (why, et.print_program(p), et.print_program(et.optimize(p)))
