"""Property: every known multiple the e-graph claims divides the actual value, and every Vec view
the pass keeps for an ordinary operand starts on a 32-byte boundary."""

from hypothesis import given, strategies as st

import egraph_tiles as et
from canon_helpers import kernel
from egraph_tiles.egraph import schedule
from egraph_tiles.rules.sorts import IDX_OPS

VARS = ("a", "b", "c")


def exprs(depth: int = 3):
    leaf = st.one_of(st.integers(-64, 256).map(lambda v: ("lit", v)), st.sampled_from(VARS).map(lambda n: ("var", n)))
    if depth == 0:
        return leaf
    sub = exprs(depth - 1)
    # quotients and remainders by a positive literal (powers of two among them, often)
    divisor = st.one_of(st.sampled_from([2, 4, 8, 16, 32]), st.integers(1, 48)).map(lambda v: ("lit", v))
    return st.one_of(leaf, st.tuples(st.sampled_from("+-*"), sub, sub),
                     st.tuples(st.sampled_from(["//", "%"]), sub, divisor))


def text(e) -> str:
    if e[0] == "lit":
        return str(e[1]) if e[1] >= 0 else f"(0 - {-e[1]})"
    if e[0] == "var":
        return e[1]
    return f"({text(e[1])} {e[0]} {text(e[2])})"


def value(e, env) -> int:
    if e[0] == "lit":
        return e[1]
    if e[0] == "var":
        return env[e[1]]
    a, b = value(e[1], env), value(e[2], env)
    return {"+": a + b, "-": a - b, "*": a * b, "//": a // b if b else 0, "%": a % b if b else 0}[e[0]]


def egg(e) -> str:
    if e[0] == "lit":
        return f"(Lit {e[1]})"
    if e[0] == "var":
        return f'(Sym "{e[1]}")'
    return f"({IDX_OPS[e[0]]} {egg(e[1])} {egg(e[2])})"


envs = st.fixed_dictionaries({n: st.integers(-1000, 1000) for n in VARS})


@given(exprs(), st.lists(envs, min_size=1, max_size=5))
def test_every_claimed_multiple_divides_the_actual_value(e, values):
    eg = schedule.new_egraph()
    schedule.load(eg, [f"(let $e {egg(e)})"])
    schedule.saturate(eg, schedule.Limits())
    out = eg.run_program(*eg.parse_program("(extract (Mult $e))"))
    best = out[-1]
    claimed = best.termdag.get(best.term).value.value
    assert claimed >= 1 and claimed & (claimed - 1) == 0
    for env in values:
        assert value(e, env) % claimed == 0, (text(e), env, claimed)


@given(exprs(), st.lists(envs, min_size=1, max_size=5))
def test_every_kept_vec_view_is_32_byte_aligned(e, values):
    params = "x: pl.Tensor[[4, 4096], pl.FP32], a: pl.Scalar[pl.INDEX], b: pl.Scalar[pl.INDEX], c: pl.Scalar[pl.INDEX]"
    body = f"""
        t: pl.Tile[[4, 4096], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [4, 4096], target_memory=pl.Mem.Vec)
        off: pl.Scalar[pl.INDEX] = {text(e)}
        w: pl.Tile[[4, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [4, 8], [0, off])
        y: pl.Tile[[4, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w, 0.5)
    """
    out = et.print_program(et.canonicalize_tile_slice(et.parse_program(kernel(params, body))))
    if "pl.tile.slice(t" in out:  # kept as a view: its byte address must be 32-byte aligned
        for env in values:
            assert (value(e, env) * 4) % 32 == 0, (text(e), env)
    else:
        assert "pl.tile.extract(t" in out
