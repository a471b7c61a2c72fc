"""A window handed on as a value — a loop carry's initializer, a yield into a carry or an if
result, the operand of a call whose result shares it — is copied *there* when it is not a
provable view, and a copy is a snapshot.  When what it flows into is read after the window's
storage may be written (later in the function, or in a later trip of a loop around both), the
snapshot would serve the read the elements from before the write.  Such a window must stay a
view; an unaligned one is rejected (``stale-escape-violation``), naming the value, the route and
the read.  A plain alias is not affected: its copy is placed before the read, after the write;
nor is a call of a function that only hands its tile back: the window passes as it is, and a
read of the result is a read of the window.

Each case is judged on the hardware model too: the program as written faults there (the window
is unaligned), so the rejection is no false alarm."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import kernel, rejection
from simkit import inputs_for, unsound_because

PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], p: pl.Tensor[[16, 8], pl.FP32], "
          "n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
RET = "pl.Tensor[[16, 64], pl.FP32]"
HEAD = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
p8 = pl.tile.load(p, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
"""
TAIL = """
out = pl.store(local, [0, 0], out)
return out
"""
IDENT = """
    @pl.function(type=pl.FunctionType.InCore)
    def ident(self, t: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]:
        return t
"""


def program(body: str, more: str = "") -> et.ir.Program:
    return et.verify_program(et.parse_program(kernel(PARAMS, HEAD + body + TAIL, RET, more=more)))


def assert_rejected_as_stale(body: str, value: str, more: str = "") -> None:
    p = program(body, more)
    msg = rejection(p)
    assert f"flows into {value!r}" in msg and "reads after the window's storage may be written" in msg
    assert unsound_because(lambda q: q, p, inputs_for(p), {"n": 1}) is not None


def test_a_carry_initialised_with_an_unaligned_window_and_read_after_a_write_in_the_loop_is_rejected():
    assert_rejected_as_stale("""
win = pl.tile.slice(local, [16, 8], [0, 3])
for i, (a,) in pl.range(3, init_values=(win,)):
    pl.tile.assemble(local, p8, [0, 0])
    m = pl.tile.muls(a, 2.0)
    pl.tile.assemble(local, m, [0, 16])
    ra = pl.yield_(a)
""", "a")


def test_an_if_result_of_an_unaligned_window_read_after_a_write_is_rejected():
    assert_rejected_as_stale("""
w = pl.tile.slice(local, [16, 8], [0, 3])
if n > 0:
    m = pl.yield_(w)
else:
    m = pl.yield_(p8)
pl.tile.assemble(local, p8, [0, 0])
r = pl.tile.muls(m, 2.0)
pl.tile.assemble(local, r, [0, 16])
""", "m")


def test_a_loop_result_of_an_unaligned_window_read_after_the_loop_wrote_its_tile_is_rejected():
    assert_rejected_as_stale("""
win = pl.tile.slice(local, [16, 8], [0, 3])
for i, (a, b) in pl.range(2, init_values=(win, p8)):
    pl.tile.assemble(local, b, [0, 0])
    b2 = pl.tile.adds(b, 1.0)
    ra, rb = pl.yield_(a, b2)
m = pl.tile.muls(ra, 2.0)
pl.tile.assemble(local, m, [0, 16])
""", "a")


def test_a_call_result_that_is_its_unaligned_window_argument_is_copied_where_read_after_a_write():
    # a function that only hands its tile back passes the window as it is; the read of its
    # result is a read of the window, copied there, after the write
    body = """
w = pl.tile.slice(local, [16, 8], [0, 3])
r = self.ident(w)
pl.tile.assemble(local, p8, [0, 0])
m = pl.tile.muls(r, 2.0)
pl.tile.assemble(local, m, [0, 16])
"""
    p = program(body, IDENT)
    q = et.optimize(p)
    et.assert_structural_equal(q, program(body.replace(
        "m = pl.tile.muls(r, 2.0)",
        "w_ext = pl.tile.extract(local, 0, 3, shape=[16, 8], target_memory=pl.Mem.Vec)\n"
        "m = pl.tile.muls(w_ext, 2.0)"), IDENT))
    assert unsound_because(et.optimize, p, inputs_for(p), {"n": 1}) is None


def test_an_aligned_window_carried_and_read_after_a_write_stays_a_view():
    body = """
win = pl.tile.slice(local, [16, 8], [0, 8])
for i, (a,) in pl.range(3, init_values=(win,)):
    pl.tile.assemble(local, p8, [0, 0])
    m = pl.tile.muls(a, 2.0)
    pl.tile.assemble(local, m, [0, 16])
    ra = pl.yield_(a)
"""
    p = program(body)
    q = et.optimize(p)
    et.assert_structural_equal(q, p)
    assert unsound_because(et.optimize, p, inputs_for(p), {"n": 1}) is None


def test_a_carry_read_before_any_write_is_still_copied_at_its_initializer():
    # before: the unaligned window carried into a loop that never writes its tile
    # after:  win_ext = pl.tile.extract(local, 0, 3, shape=[16, 8], ...) as the initializer
    body = """
win = pl.tile.slice(local, [16, 8], [0, 3])
for i, (a,) in pl.range(3, init_values=(win,)):
    m = pl.tile.muls(a, 2.0)
    ra = pl.yield_(m)
pl.tile.assemble(local, ra, [0, 16])
"""
    p = program(body)
    q = et.optimize(p)
    et.assert_structural_equal(q, program(body.replace(
        "win = pl.tile.slice(local, [16, 8], [0, 3])",
        "win_ext = pl.tile.extract(local, 0, 3, shape=[16, 8], target_memory=pl.Mem.Vec)")
        .replace("init_values=(win,)", "init_values=(win_ext,)")))
    assert unsound_because(et.optimize, p, inputs_for(p), {"n": 1}) is None
