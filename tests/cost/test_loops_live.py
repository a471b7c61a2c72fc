"""The capacity check of hoisting (``cost.loops``) counts the bytes live at the loop nest's
peak: a tile occupies its buffer from its definition through its last read, so one read only
before the loop is not counted, one read after the loop is, and so is a temporary of the body
(the refusal names the live bytes).  Each buffer counts: a loop's initializer and the value
its body computes for the next trip are two."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import kernel
from egraph_tiles.cost.loops import CostModel
from egraph_tiles.passes import Options

X = "x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]"
T = """
local: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
z: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 8], dtype=pl.FP32, target_memory=pl.Mem.Vec)
"""
LOOP = """
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, 3])
    nxt = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
"""
# tiny: every hoist is refused, and the refusal shows what is live across the loop
TINY = CostModel(capacity={"Vec": 1})


def refusal(body: str) -> str:
    rep = et.Report()
    et.canonicalize_tile_slice(et.parse_program(kernel(X, body)), report=rep,
                               options=Options(cost=TINY))
    (d,) = [d for d in rep.functions[0].decisions if d.decision == "copy"]
    assert "not hoisted out of the loop at line" in d.reason
    return d.reason


def test_tiles_live_in_the_loop_are_its_source_initializer_and_carried_result():
    # local (4096 B), z (512 B) and nxt (512 B): the add writes a new buffer while it reads acc
    assert "Vec would hold 5120 B live + 512 B" in refusal(T + LOOP)


def test_a_tile_last_read_before_the_loop_is_not_live_across_it():
    before = """
early: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
out1 = pl.store(early, [0, 0], out)
"""
    assert "Vec would hold 5120 B live + 512 B" in refusal(T + before + LOOP)


def test_a_tile_read_after_the_loop_is_live_across_it():
    before = """
late: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
"""
    after = """
out1 = pl.store(late, [0, 0], out)
"""
    # local, z, nxt and late (1024 B)
    assert "Vec would hold 6144 B live + 512 B" in refusal(T + before + LOOP + after)


def test_a_tile_whose_view_is_read_after_the_loop_is_live_across_it():
    # late is last read before the loop (by the reshape), but its view part, the same storage,
    # is read after it: the class is live across the loop, counted once (1024 B)
    before = """
late: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
part = pl.tile.reshape(late, [32, 8])
"""
    after = """
out1 = pl.store(part, [0, 0], out)
"""
    assert "Vec would hold 6144 B live + 512 B" in refusal(T + before + LOOP + after)


def test_a_temporary_of_the_loop_body_counts_at_its_peak():
    body = """
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    t = pl.tile.create([16, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
    u = pl.tile.add(t, t)
    w = pl.tile.slice(local, [16, 8], [0, 3])
    nxt = pl.tile.add(acc, w)
    res = pl.yield_(nxt)
"""
    # t (2048 B) and u (2048 B) coexist at the first add: 4608 + 4096
    assert "Vec would hold 8704 B live + 512 B" in refusal(T + body)


def test_the_temporaries_of_a_function_the_loop_body_calls_count_at_the_call():
    body = """
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    w = pl.tile.slice(local, [16, 8], [0, 3])
    nxt = pl.tile.add(acc, w)
    r = self.heavy(nxt)
    res = pl.yield_(r)
"""
    heavy = """
    @pl.function(type=pl.FunctionType.InCore)
    def heavy(self, a: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]:
        t = pl.tile.create([16, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        u = pl.tile.add(t, t)
        s = pl.tile.slice(u, [16, 8], [0, 0])
        r = pl.tile.add(a, s)
        return r
"""
    rep = et.Report()
    et.canonicalize_tile_slice(et.parse_program(kernel(X, T + body, more=heavy)), report=rep,
                               options=Options(cost=TINY))
    (d,) = [d for d in rep.functions[0].decisions if d.decision == "copy"]
    # local, z, nxt and r (5632 B) beside heavy's own t and u (4096 B; its result is r)
    assert "Vec would hold 9728 B live + 512 B" in d.reason
