"""Loop-aware extraction: copies are priced by bytes × executions, and a copy of a
loop-invariant window is made once before the loop when nothing in the loop writes its source."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import example, given
from hypothesis import strategies as st

import egraph_tiles as et
from canon_helpers import assert_canonicalizes, kernel
from egraph_tiles.cost.ilp import ILPExtractor
from egraph_tiles.cost.loops import CostModel, Weights, milli
from egraph_tiles.ir.effects import function_effects
from egraph_tiles.passes import Options

X = "x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX], c0: pl.Scalar[pl.INDEX]"
T = """
local: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
z: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 8], dtype=pl.FP32, target_memory=pl.Mem.Vec)
"""
EXT = "pl.tile.extract(local, 0, 3, shape=[16, 8], target_memory=pl.Mem.Vec)"


def run(body: str, **opts):
    rep = et.Report()
    out = et.canonicalize_tile_slice(et.parse_program(kernel(X, T + body)), report=rep,
                                     options=Options(**opts))
    return out, rep.functions[0]


def test_invariant_copy_in_a_loop_is_hoisted_before_it():
    # the example: 64 copies of 512 B become one
    assert_canonicalizes(X, T + """
for i, (acc,) in pl.range(0, 64, 1, init_values=(z,)):
    w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
    nxt: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
""", T + f"""
w_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = {EXT}
for i, (acc,) in pl.range(0, 64, 1, init_values=(z,)):
    nxt: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, w_ext)
    res = pl.yield_(nxt)
""")


def test_report_shows_static_and_dynamic_bytes_of_the_hoisted_copy():
    _, fr = run("""
for i, (acc,) in pl.range(0, 64, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, 3])
    nxt = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
""")
    assert (fr.bytes_after, fr.dynamic_after) == (512, 512)
    (d,) = [d for d in fr.decisions if d.decision == "copy"]
    assert d.dynamic_bytes == 512 and "hoisted before the loop at line" in d.reason
    assert "512 B × 64" in d.reason


def test_copy_whose_source_is_written_in_the_loop_stays_inside():
    body = """
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
    nxt: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, w)
    pl.tile.fillpad_inplace(local, pl.PadValue.zero)
    res = pl.yield_(nxt)
"""
    assert_canonicalizes(X, T + body, T + body.replace(
        "w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])",
        f"w_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = {EXT}").replace("acc, w)", "acc, w_ext)"))


def test_copy_whose_source_is_written_through_a_view_in_the_loop_stays_inside():
    body = """
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
    nxt: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, w)
    lv: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.set_validshape(local, [8, 64])
    pl.tile.fillpad_inplace(lv, pl.PadValue.zero)
    res = pl.yield_(nxt)
"""
    out, fr = run(body)
    (d,) = [d for d in fr.decisions if d.decision == "copy"]
    assert d.placement == "definition" and fr.dynamic_after == 4 * 512


def test_copy_whose_source_is_written_through_an_alias_in_the_loop_stays_inside():
    _, fr = run("""
al = local
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, 3])
    nxt = pl.tile.add(acc, w)
    pl.tile.fillpad_inplace(al, pl.PadValue.zero)
    res = pl.yield_(nxt)
""")
    assert fr.dynamic_after == 4 * 512


def test_window_at_the_loop_variable_stays_inside():
    _, fr = run("""
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, i * 8 + 3])
    nxt = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
""")
    assert fr.dynamic_after == 4 * 512


def test_offset_defined_inside_the_loop_from_invariants_is_hoisted():
    # ``off`` is defined inside the loop, but only from values defined before it
    out, fr = run("""
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    off = c0 + 3
    w = pl.tile.slice(local, [16, 8], [0, off])
    nxt = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
""")
    assert fr.dynamic_after == 512
    et.verify_program(out)


def test_nested_loops_hoist_to_the_outermost_loop_the_window_is_invariant_in():
    out, fr = run("""
for j, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    for i, (acc2,) in pl.range(0, 8, 1, init_values=(acc,)):
        w = pl.tile.slice(local, [16, 8], [0, 3])
        nxt = pl.tile.add(acc2, w)
        r2 = pl.yield_(nxt)
    res = pl.yield_(r2)
""")
    assert fr.dynamic_before == 0 and fr.dynamic_after == 512
    assert isinstance(out.functions[0].body[2], et.ir.AssignStmt)  # the copy, before loop j


def test_window_invariant_only_in_the_inner_loop_is_hoisted_out_of_it():
    _, fr = run("""
for j, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    for i, (acc2,) in pl.range(0, 8, 1, init_values=(acc,)):
        w = pl.tile.slice(local, [16, 8], [0, j * 8 + 3])
        nxt = pl.tile.add(acc2, w)
        r2 = pl.yield_(nxt)
    res = pl.yield_(r2)
""")
    assert fr.dynamic_after == 4 * 512


def test_constant_window_under_an_if_in_a_loop_is_hoisted():
    _, fr = run("""
for i, (acc,) in pl.range(0, 8, 1, init_values=(z,)):
    if i > 2:
        w = pl.tile.slice(local, [16, 8], [0, 3])
        nxt = pl.tile.add(acc, w)
        r = pl.yield_(nxt)
    else:
        r = pl.yield_(acc)
    res = pl.yield_(r)
""")
    assert fr.dynamic_after == 512


def test_symbolic_window_under_an_if_in_a_loop_is_not_read_speculatively():
    # c0 might be out of range when the guard is false: the copy stays under the if
    _, fr = run("""
for i, (acc,) in pl.range(0, 8, 1, init_values=(z,)):
    if c0 < 56:
        w = pl.tile.slice(local, [16, 8], [0, c0])
        nxt = pl.tile.add(acc, w)
        r = pl.yield_(nxt)
    else:
        r = pl.yield_(acc)
    res = pl.yield_(r)
""")
    assert fr.dynamic_after == 8 * 512 // 2  # each if arm weighs 1/2


def test_capacity_refuses_a_hoist_and_explain_says_so():
    # the loop's peak: local (4096 B), z (512 B) and the add's result nxt (512 B), which the
    # next trip reads as acc while it writes a new nxt; the copy needs 512 B more
    small = CostModel(capacity={"Vec": 4096 + 1024 + 511})
    _, fr = run("""
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, 3])
    nxt = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
""", cost=small)
    (d,) = [d for d in fr.decisions if d.decision == "copy"]
    assert fr.dynamic_after == 4 * 512
    assert "not hoisted out of the loop at line" in d.reason and "5120 B live + 512 B = 5632 B > capacity 5631 B" in d.reason


def test_tile_read_after_the_loop_only_by_keyword_is_live_across_it():
    # ``other`` (4096 B) is read after the loop only as a keyword operand: live across the loop
    # with local (4096 B), z and nxt (512 B each), it leaves no room for the copy's 512 B
    small = CostModel(capacity={"Vec": 4096 + 4096 + 1024 + 511})
    _, fr = run("""
other: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, 3])
    nxt = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
out = pl.tile.store(tile=other, offsets=[0, 0], output=x)
""", cost=small)
    (d,) = [d for d in fr.decisions if d.decision == "copy"]
    assert "9216 B live + 512 B = 9728 B > capacity 9727 B" in d.reason


def test_symbolic_trip_count_uses_the_default_weight_overridable_per_kernel():
    body = """
for i, (acc,) in pl.range(0, n, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, i])
    nxt = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
"""
    _, fr = run(body)
    assert fr.dynamic_after == 16 * 512
    _, fr = run(body, kernel_cost={"kernel": CostModel(symbolic_trips=3)})
    assert fr.dynamic_after == 3 * 512


def test_weights_multiply_trip_counts_and_if_probabilities():
    prog = et.parse_program(kernel(X, T + """
for i, (acc,) in pl.range(0, 6, 2, init_values=(z,)):
    if i > 0:
        a = pl.tile.add(acc, acc)
        r = pl.yield_(a)
    else:
        r = pl.yield_(acc)
    res = pl.yield_(r)
"""))
    fn = prog.functions[0]
    w = Weights(function_effects(fn), CostModel(if_probability=Fraction(1, 4)))
    loop = fn.body[2]
    add = loop.body[0].then_body[0]
    assert (w[loop], w[loop.body[0]], w[add]) == (1, 3, Fraction(3, 4))


def test_weights_of_nested_blocks_multiply_every_owner():
    # nested loops (constant and symbolic trips), if arms inside a loop and around one: each
    # block's weight is its owner's times the owner's trips (a loop) or arm probability (an if)
    prog = et.parse_program(kernel(X, T + """
for i, (acc,) in pl.range(0, 6, 2, init_values=(z,)):
    if i > 0:
        for j, (b,) in pl.range(0, n, 1, init_values=(acc,)):
            a = pl.tile.add(b, b)
            r2 = pl.yield_(a)
        r = pl.yield_(r2)
    else:
        r = pl.yield_(acc)
    res = pl.yield_(r)
if n > 0:
    for k, (c,) in pl.range(0, 4, 1, init_values=(res,)):
        d = pl.tile.add(c, c)
        e = pl.yield_(d)
    f = pl.yield_(e)
else:
    f = pl.yield_(res)
"""))
    fn = prog.functions[0]
    w = Weights(function_effects(fn), CostModel(if_probability=Fraction(1, 3), symbolic_trips=5))
    outer, tail = fn.body[2], fn.body[3]
    inner_loop = outer.body[0].then_body[0]
    k_loop = tail.then_body[0]
    assert (w[outer], w[outer.body[0]], w[inner_loop]) == (1, 3, 1)
    assert w[inner_loop.body[0]] == Fraction(1, 3) * 3 * 5  # a = add(b, b)
    assert w[outer.body[0].else_body[0]] == 1  # r = yield_(acc): 3 trips x 1/3
    assert (w[tail], w[k_loop], w[k_loop.body[0]]) == (1, Fraction(1, 3), Fraction(4, 3))


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=1, max_value=10**4))
@example(1, 2000)
@example(3, 2000)
@example(5, 3)
def test_milli_is_the_thousandths_rounded_half_to_even(n, d):
    # a row's weight: executions x 1000 rounded as round() rounds a Fraction (1/2000 -> 0,
    # 3/2000 -> 2), an int weight exactly
    w = Fraction(n, d)
    w = w.numerator if w.denominator == 1 else w
    assert milli(w) == round(Fraction(n, d) * 1000)
    assert type(milli(w)) is int


def test_ilp_extractor_hoists_the_same_copy():
    body = """
for i, (acc,) in pl.range(0, 64, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, 3])
    nxt = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
"""
    greedy, _ = run(body)
    ilp, fr = run(body, extractor=ILPExtractor())
    et.assert_structural_equal(greedy, ilp)
    assert fr.dynamic_after == 512


def test_escaping_copy_is_not_hoisted():
    # a yielded copy becomes the loop's storage: one buffer for every iteration would be shared
    _, fr = run("""
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, 3])
    res = pl.yield_(w)
o = pl.tile.adds(res, 1.0)
""")
    assert fr.dynamic_after == 4 * 512


def test_identical_invariant_windows_of_two_loops_share_one_copy_before_the_first():
    out, fr = run("""
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, 3])
    nxt = pl.tile.add(acc, w)
    res0 = pl.yield_(nxt)
for j, (acc2,) in pl.range(0, 4, 1, init_values=(res0,)):
    w2 = pl.tile.slice(local, [16, 8], [0, 3])
    nxt2 = pl.tile.add(acc2, w2)
    res = pl.yield_(nxt2)
""")
    assert (fr.bytes_after, fr.dynamic_after) == (512, 512)
    assert [d.placement for d in fr.decisions if d.decision == "copy"] == ["before loop", "shared"]


def test_json_and_explain_carry_static_and_dynamic_bytes():
    rep = et.Report()
    et.canonicalize_tile_slice(et.parse_program(kernel(X, T + """
for i, (acc,) in pl.range(0, 8, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, i])
    nxt = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
""")), report=rep)
    f = rep.to_json()["functions"][0]
    assert (f["bytes_after"], f["dynamic_after"]) == (512, 8 * 512)
    assert f["decisions"][0]["dynamic_bytes"] == 8 * 512
    assert "0 -> 512 static, 0 -> 4096 dynamic" in rep.explain()


# --- speculation: a copy before the loop must read only what the program reads ---------------


def test_copy_after_an_early_return_in_the_loop_is_not_hoisted():
    # for c0 > 56 the program returns before reading the window (columns [c0, c0 + 8) would
    # leave the 64-column tile); a copy before the loop would read it anyway
    body = """
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    if c0 > 56:
        return acc
    w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, c0])
    nxt: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
"""
    ext = "pl.tile.extract(local, 0, c0, shape=[16, 8], target_memory=pl.Mem.Vec)"
    assert_canonicalizes(X, T + body, T + body.replace(
        "w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, c0])",
        f"w_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = {ext}").replace("acc, w)", "acc, w_ext)"))


def test_copy_before_an_early_return_in_the_loop_is_hoisted():
    # the window is read in the first iteration before any exit: the copy reads nothing new
    _, fr = run("""
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, c0])
    nxt = pl.tile.add(acc, w)
    if c0 > 56:
        return nxt
    res = pl.yield_(nxt)
""")
    assert fr.dynamic_after == 512


def test_copy_inside_an_inner_loop_that_may_run_zero_times_is_not_hoisted():
    # for n = 0 the inner loop never reads the window: it stays inside both loops
    body = """
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    for j, (acc2,) in pl.range(0, n, 1, init_values=(acc,)):
        w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, c0])
        nxt: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc2, w)
        r2 = pl.yield_(nxt)
    res = pl.yield_(r2)
"""
    ext = "pl.tile.extract(local, 0, c0, shape=[16, 8], target_memory=pl.Mem.Vec)"
    assert_canonicalizes(X, T + body, T + body.replace(
        "w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, c0])",
        f"w_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = {ext}").replace("acc2, w)", "acc2, w_ext)"))


def test_copy_inside_an_inner_loop_that_always_runs_is_hoisted_out_of_both():
    _, fr = run("""
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    for j, (acc2,) in pl.range(0, 2, 1, init_values=(acc,)):
        w = pl.tile.slice(local, [16, 8], [0, c0])
        nxt = pl.tile.add(acc2, w)
        r2 = pl.yield_(nxt)
    res = pl.yield_(r2)
""")
    assert fr.dynamic_after == 512


# --- capacity: the loop body's peak, its temporaries included ---------------------------------

#: a loop whose body peaks at exactly 192 KiB of Vec: local (4096 B) and the carry (512 B) live
#: across it, and two 96000 B temporaries (big read by the muls that defines big2)
PEAK_192K = """
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    big = pl.tile.create([16, 1500], dtype=pl.FP32, target_memory=pl.Mem.Vec)
    big2 = pl.tile.muls(big, 2.0)
    w = pl.tile.slice(local, [16, 8], [0, 3])
    nxt = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
"""


def test_hoist_that_would_exceed_the_loop_bodys_peak_capacity_is_refused():
    _, fr = run(PEAK_192K)
    (d,) = [d for d in fr.decisions if d.decision == "copy"]
    assert fr.dynamic_after == 4 * 512
    assert "Vec would hold 196608 B live + 512 B = 197120 B > capacity 196608 B" in d.reason


def test_hoist_fits_when_the_loop_bodys_peak_leaves_room():
    _, fr = run(PEAK_192K, cost=CostModel(capacity={"Vec": 196608 + 512}))
    assert fr.dynamic_after == 512


def test_window_under_an_if_in_bounds_for_every_offset_value_is_hoisted():
    # j in [0, 3]: columns [j*8 + 3, j*8 + 11) lie inside the 64 columns whatever the guard
    # says, so a copy before the inner loop reads nothing outside the tile
    _, fr = run("""
for j, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    for i, (acc2,) in pl.range(0, 8, 1, init_values=(acc,)):
        if c0 < i:
            w = pl.tile.slice(local, [16, 8], [0, j * 8 + 3])
            nxt = pl.tile.add(acc2, w)
            r = pl.yield_(nxt)
        else:
            r = pl.yield_(acc2)
        r2 = pl.yield_(r)
    res = pl.yield_(r2)
""")
    assert fr.dynamic_after == 4 * 512


def test_clamped_offset_under_an_if_is_hoisted():
    # k = min(max(c0, 0), 56): [k, k + 8) is inside the 64 columns for every c0
    _, fr = run("""
k = pl.min(pl.max(c0, 0), 56)
for i, (acc,) in pl.range(0, 8, 1, init_values=(z,)):
    if c0 < i:
        w = pl.tile.slice(local, [16, 8], [0, k])
        nxt = pl.tile.add(acc, w)
        r = pl.yield_(nxt)
    else:
        r = pl.yield_(acc)
    res = pl.yield_(r)
""")
    assert fr.dynamic_after == 512


def test_temporaries_in_an_if_arm_and_the_carried_buffers_count_toward_the_peak():
    # the loop's peak, in the if arm: local (4096 B), big and tb (95744 B each), and the carry's
    # buffers nxt and nxt2 (512 B each) fill 192 KiB: a copy held across the loop does not fit
    _, fr = run("""
big: pl.Tile[[374, 64], pl.FP32, pl.Mem.Vec] = pl.tile.create([374, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, 3])
    nxt = pl.tile.add(acc, w)
    if i > 0:
        tb = pl.tile.muls(big, 2.0)
        tbs = pl.tile.slice(tb, [16, 8], [0, 0])
        nxt2 = pl.tile.add(nxt, tbs)
        g = pl.yield_(nxt2)
    else:
        g = pl.yield_(nxt)
    res = pl.yield_(g)
""")
    (d,) = [d for d in fr.decisions if d.decision == "copy"]
    assert fr.dynamic_after == 4 * 512 and "not hoisted out of the loop" in d.reason
