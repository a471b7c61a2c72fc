"""``ir.effects``: program points, loop nesting, storage classes and writes of one function."""

import egraph_tiles as et
from egraph_tiles.ir.effects import Share, function_effects
from egraph_tiles.ir.stmts import AssignStmt, ForStmt, walk
from dslkit import kernel

KERNEL = kernel("x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]", """
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
u = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
a = v
for i, (c,) in pl.range(0, 64, 8, init_values=(a,)):
    for j in pl.range(0, 4, 1):
        q = pl.tile.slice(c, [16, 8], [0, 8])
        pl.tile.fillpad_inplace(src=q, pad_value=pl.PadValue.zero)
    r = pl.yield_(c)
out = pl.store(u, [0, 0], out)
return out
""", "pl.Tensor[[16, 16], pl.FP32]")


def _setup():
    fn = et.parse_program(KERNEL).functions[0]
    names = {s.target.name: s.target for s in walk(fn.body) if isinstance(s, AssignStmt)}
    loops = [s for s in walk(fn.body) if isinstance(s, ForStmt)]
    return fn, function_effects(fn), names, loops


def test_alias_slice_and_loop_carry_share_the_source_storage():
    fn, fx, v, loops = _setup()
    outer = loops[0]
    for name in ("a", "q"):
        assert fx.same_storage(v[name], v["v"]), name
    assert fx.same_storage(outer.iter_args[0], v["v"])
    assert fx.same_storage(outer.return_vars[0], v["v"])
    assert not fx.same_storage(v["u"], v["v"])
    kinds = {e.kind for e in fx.edges}
    assert {Share.ALIAS, Share.SLICE, Share.LOOP_INIT, Share.LOOP_BACK, Share.LOOP_RESULT} <= kinds


def test_a_keyword_writeback_is_a_write_at_its_program_point():
    fn, fx, v, loops = _setup()
    (w,) = [w for w in fx.writes if w.op == "tile.fillpad_inplace"]
    assert w.var is v["q"] and w.index == 0 and not w.opaque
    assert fx.point(w.stmt).pos == w.point
    assert fx.writes_into_tile()


def test_loop_nesting_program_points_and_trip_counts():
    fn, fx, v, loops = _setup()
    outer, inner = loops
    q_stmt = next(s for s in walk(fn.body) if isinstance(s, AssignStmt) and s.target is v["q"])
    assert fx.enclosing_loops(q_stmt) == [outer, inner]
    assert fx.point(outer).pos < fx.point(q_stmt).pos <= fx.point(inner).end <= fx.point(outer).end
    assert fx.trip_count(outer) == 8 and fx.trip_count(inner) == 4
    assert fx.trips(q_stmt) == 32 and fx.trips(outer) == 1
    assert fx.written_in_loop(v["v"], inner) and fx.written_in_loop(v["v"], outer)
    assert not fx.written_in_loop(v["u"], outer)


def test_a_read_after_the_loop_sees_the_write_of_every_iteration():
    fn, fx, v, loops = _setup()
    outer, _ = loops
    q_stmt = next(s for s in walk(fn.body) if isinstance(s, AssignStmt) and s.target is v["q"])
    p = fx.point(q_stmt)
    # from the slice to itself in the next iteration: the write in between is seen
    assert fx.written_before_use(v["v"], p.pos, (), q_stmt)
    assert not fx.written_before_use(v["u"], p.pos, (), q_stmt)


def test_call_ops_are_the_ops_of_the_statement_level_calls():
    # assigned calls and the bare fillpad_inplace call; the loops' pl.range is not a call
    fn, fx, v, loops = _setup()
    assert fx.call_ops == {"tile.load", "tile.slice", "tile.fillpad_inplace", "store"}
