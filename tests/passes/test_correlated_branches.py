"""Two ``if`` statements testing the same condition of the function's scalar parameters take the same
arm in any run: a window handed into one arm of the first and on through the other arm of the
second reaches nothing there (``Storage.flows_to`` with the arms taken; ``ir.effects``
``branch_arm``).  A condition on anything else is not known to hold the same value twice."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import kernel, rejection
from simkit import inputs_for, unsound_because

PARAMS = ("a: pl.Tensor[[64, 16], pl.FP16], b: pl.Tensor[[16, 64], pl.FP16], "
          "bo: pl.Tensor[[64, 64], pl.FP16], flag: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX], "
          "out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]")
#: ``win`` reaches ``m1`` by the else arm of the first if, and ``m2`` takes ``m1`` by the then
#: arm of the second (``fresh``: the other arms' tile)
ROUTE = """
if flag > 0:
    f1 = {fresh}
    m1 = pl.yield_(f1)
else:
    m1 = pl.yield_(win)
if {second}:
    m2 = pl.yield_(m1)
else:
    f2 = {fresh}
    m2 = pl.yield_(f2)"""
#: the Mat window ``win``'s route ends in a matmul operand (a Mat window there has no data path)
BODY = """
a_mat = pl.tile.load(a, [0, 0], [64, 16], target_memory=pl.Mem.Mat)
root = pl.tile.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
lt = pl.tile.extract(a_mat, 0, 0, shape=[16, 16], target_memory=pl.Mem.Left)
win = pl.tile.slice(root, [16, 16], [0, 0])""" + ROUTE.replace(
    "{fresh}", "pl.tile.load(bo, [0, 0], [16, 16], target_memory=pl.Mem.Mat)") + """
o = pl.tile.matmul(lt, m2)
pl.store(o, [0, 0], out)
return out"""


def program(body: str, params: str = PARAMS, **fields) -> et.ir.Program:
    text = kernel(params, body.format(**fields), "pl.Tensor[[64, 64], pl.FP32]")
    return et.verify_program(et.parse_program(text))


def assert_unchanged_and_right(p: et.ir.Program) -> None:
    """``p`` is left as written and runs right for either value of ``flag``."""
    et.assert_structural_equal(et.optimize(p), p)
    for flag in (0, 1):
        assert unsound_because(et.optimize, p, inputs_for(p), {"flag": flag, "n": 0}) is None


def test_a_mat_window_reaching_a_matmul_only_through_opposite_arms_of_one_condition_is_accepted():
    assert_unchanged_and_right(program(BODY, second="flag > 0"))


def test_a_mat_window_reaching_a_matmul_through_arms_of_two_conditions_is_rejected():
    # flag = 0, n = 1 takes the else arm of the first if and the then arm of the second
    p = program(BODY, second="n > 0")
    assert "Mat window 'win'" in rejection(p)
    assert unsound_because(lambda q: q, p, inputs_for(p), {"flag": 0, "n": 1}) is not None


RAW = """
root = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
win = pl.tile.slice(root, [1, 1], [0, 1], valid_shape=[1, 1])""" + ROUTE.replace(
    "{fresh}", "pl.tile.load(o, [0, 0], [1, 1], target_memory=pl.Mem.Vec)") + """
y = pl.tile.muls(m2, 2.0)
pl.store(y, [0, 0], out)
return out"""
RAW_PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], o: pl.Tensor[[64, 64], pl.FP32], "
              "flag: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX], "
              "out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]")


def test_an_unaligned_valid_shape_slice_reaching_a_vector_op_only_through_opposite_arms_is_accepted():
    # (win, 4 B in, is never copied: on the one route to tile.muls it would be read unaligned)
    assert_unchanged_and_right(program(RAW, RAW_PARAMS, second="flag > 0"))


def test_an_unaligned_valid_shape_slice_reaching_a_vector_op_through_two_conditions_is_rejected():
    p = program(RAW, RAW_PARAMS, second="n > 0")
    assert "slice 'win'" in rejection(p)
    assert unsound_because(lambda q: q, p, inputs_for(p), {"flag": 0, "n": 1}) is not None


WRITE = """
root = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
win = pl.tile.slice(root, [1, 4], [3, {col}])
if flag > 0:
    m1 = pl.yield_(win)
else:
    f1 = pl.tile.load(o, [0, 0], [1, 4], target_memory=pl.Mem.Vec)
    m1 = pl.yield_(f1)
if {second}:
    f2 = pl.tile.load(o, [0, 0], [1, 4], target_memory=pl.Mem.Vec)
    m2 = pl.yield_(f2)
else:
    m2 = pl.yield_(m1)
pt = pl.tile.load(o, [0, 0], [1, 4], target_memory=pl.Mem.Vec)
pl.tile.assemble(m2, pt, [0, 0])
pl.store(root, [0, 0], out)
return out"""


def test_an_aligned_window_handed_on_where_a_write_may_follow_it_stays_a_view():
    # (flag = 1, n = 0 writes win through both merges: win, 800 B in, is aligned and stays a
    # view, so the write lands in root)
    p = program(WRITE, RAW_PARAMS, col=8, second="n > 0")
    et.assert_structural_equal(et.optimize(p), p)
    assert unsound_because(et.optimize, p, inputs_for(p), {"flag": 1, "n": 0}) is None


def test_an_unaligned_window_a_write_reaches_only_through_opposite_arms_of_one_condition_is_accepted():
    # (win, 772 B in, is unaligned, but no run writes it: the write's route is followed by arms,
    # egraph.encode_facts ``written_edges``)
    assert_unchanged_and_right(program(WRITE, RAW_PARAMS, col=1, second="flag > 0"))


def test_an_unaligned_window_a_write_reaches_through_arms_of_two_conditions_is_rejected():
    # (flag = 1, n = 0 writes win: a copy would lose the write, the unaligned view can hang)
    assert "slice 'win'" in rejection(program(WRITE, RAW_PARAMS, col=1, second="n > 0"))


READ_TWICE = """
    @pl.function(type=pl.FunctionType.InCore)
    def inner(self, root: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec],
              fl: pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]:
        win = pl.tile.slice(root, [1, 4], [3, 1])
        if pl.tile.read(fl, [0, 0]) > 0.0:
            m1 = pl.yield_(win)
        else:
            f1 = pl.tile.create([1, 4], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            m1 = pl.yield_(f1)
        pl.tile.write(fl, [0, 0], -1.0)
        if pl.tile.read(fl, [0, 0]) > 0.0:
            f2 = pl.tile.create([1, 4], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            m2 = pl.yield_(f2)
        else:
            m2 = pl.yield_(m1)
        pt = pl.tile.create([1, 4], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        pl.tile.assemble(m2, pt, [0, 0])
        y = pl.tile.muls(root, 1.0)
        return y
"""


def test_a_condition_reading_a_tile_is_not_known_to_hold_the_same_value_twice():
    # (fl[0, 0] > 0 takes the then arm of the first if; the write makes the second take its
    # else arm: win, 772 B in, is written through m2.  Two equal texts are not one condition.)
    text = kernel(RAW_PARAMS.replace("flag: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX], ", ""), """
root = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
fl = pl.tile.load(o, [0, 0], [1, 8], target_memory=pl.Mem.Vec)
r = self.inner(root, fl)
pl.store(r, [0, 0], out)
return out""", "pl.Tensor[[64, 64], pl.FP32]", more=READ_TWICE)
    p = et.verify_program(et.parse_program(text))
    assert "slice 'win'" in rejection(p)
    ins = inputs_for(p)
    ins["o"][0, 0] = 1.0
    assert unsound_because(lambda q: q, p, ins, {}) is not None
