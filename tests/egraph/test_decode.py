"""Decoding (``egraph.decode``): one rebuild pass keeps every statement nothing was decided at as
it was, and removes dead slices from the rebuilt bodies, nested ones and chains included."""

from __future__ import annotations

import egraph_tiles as et
from canon_helpers import assert_canonicalizes, kernel
from egraph_tiles.ir.stmts import AssignStmt

X = "x: pl.Tensor[[16, 64], pl.FP32]"
T = """
local: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
z: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 8], dtype=pl.FP32, target_memory=pl.Mem.Vec)
"""


def test_a_dead_slice_chain_inside_a_loop_is_dropped_and_the_rest_of_the_body_kept():
    assert_canonicalizes(X, T + """
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    a: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 32], [0, 0])
    b: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(a, [16, 8], [0, 8])
    nxt: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.adds(acc, 1.0)
    res = pl.yield_(nxt)
""", T + """
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    nxt: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.adds(acc, 1.0)
    res = pl.yield_(nxt)
""")


def test_statements_nothing_was_decided_at_are_kept_as_the_same_objects():
    prog = et.parse_program(kernel(X, T + """
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(z, w)
for i, (acc,) in pl.range(0, 4, 1, init_values=(z,)):
    nxt: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.adds(acc, 1.0)
    res = pl.yield_(nxt)
"""))
    before = prog.functions[0].body
    after = et.canonicalize_tile_slice(prog).functions[0].body
    assert "w_ext" in [s.target.name for s in after if isinstance(s, AssignStmt)]  # (a copy)
    kept = [s for s in before if not (isinstance(s, AssignStmt) and s.target.name in ("w", "y"))]
    assert len(kept) == len(before) - 2
    assert all(any(s is t for t in after) for s in kept)


def test_a_windows_source_is_written_when_anything_may_write_its_storage_through_a_view():
    from egraph_tiles.egraph.decode import Decoder
    from egraph_tiles.egraph.encode import encode_function
    from egraph_tiles.ir.effects import function_effects
    from egraph_tiles.ir.stmts import walk

    fn = et.parse_program(kernel(X, T + """
u = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
q: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 8])
pl.tile.fillpad_inplace(src=q, pad_value=pl.PadValue.zero)
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(u, [16, 8], [0, 8])
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(z, w)
""")).functions[0]
    fx = function_effects(fn)
    v = {s.target.name: s.target for s in walk(fn.body) if isinstance(s, AssignStmt)}
    enc = encode_function(fn, fx)
    dec = Decoder(fn, enc, [], fx)
    assert dec.written(enc.window_of[v["q"]])  # (q's own write lands in its source, local)
    assert not dec.written(enc.window_of[v["w"]])  # (nothing writes u)


def test_without_a_report_the_decoder_records_no_decisions_and_rebuilds_the_same_body(monkeypatch):
    # a copy, a view, a folded extract and a dropped slice: only the report reads the decisions
    from egraph_tiles.report.report import Report
    from egraph_tiles.passes import canonicalize

    text = kernel(X, T + """
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(z, w)
d: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 16])
e: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [8, 16], [8, 24])
f: pl.Tile[[4, 8], pl.FP32, pl.Mem.Mat] = pl.tile.extract(e, 1, 2, shape=[4, 8], target_memory=pl.Mem.Mat)
""")
    decoders = []

    class Recorded(canonicalize.Decoder):
        def __init__(self, *args):
            super().__init__(*args)
            decoders.append(self)

    monkeypatch.setattr(canonicalize, "Decoder", Recorded)
    report = Report()
    with_report = et.print_program(et.canonicalize_tile_slice(et.parse_program(text),
                                                              report=report))
    without = et.print_program(et.canonicalize_tile_slice(et.parse_program(text)))
    assert with_report == without
    kinds = {d.decision for d in report.functions[0].decisions}
    assert {"copy", "fold", "dropped"} <= kinds
    assert decoders[0].decisions and not decoders[-1].decisions


def test_a_use_kept_as_a_view_leaves_the_slice_and_its_consumer_as_the_same_objects():
    # (a view of the slice itself: nothing is rebuilt for it, with or without a report)
    from egraph_tiles.report.report import Report

    prog = et.parse_program(kernel(X, T + """
v: pl.Tile[[8, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [8, 64], [8, 0])
y: pl.Tile[[8, 64], pl.FP32, pl.Mem.Vec] = pl.tile.adds(v, 1.0)
"""))
    before = {s.target.name: s for s in prog.functions[0].body if isinstance(s, AssignStmt)}
    report = Report()
    with_report = et.canonicalize_tile_slice(prog, report=report).functions[0].body
    assert [d.decision for d in report.functions[0].decisions] == ["view"]
    for body in (with_report, et.canonicalize_tile_slice(prog).functions[0].body):
        assert any(s is before["v"] for s in body) and any(s is before["y"] for s in body)


def test_a_returned_window_is_an_escape_that_shares_the_copy_of_its_other_use():
    # (the return is a use of w: the caller gets the copy, never the unaligned view; the copy
    # at the definition serves both uses, and the slice is dropped)
    assert_canonicalizes(X, T + """
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
u: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(z, w)
return w
""", T + """
w_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(local, 0, 3, shape=[16, 8], target_memory=pl.Mem.Vec)
u: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.add(z, w_ext)
return w_ext
""")


def test_a_view_of_a_slice_of_a_slice_reads_its_base_and_the_parent_read_by_nothing_else_is_dropped():
    # (c stays read in place by its view; re-emitted on local, it no longer reads p)
    assert_canonicalizes(X, T + """
p: pl.Tile[[8, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [8, 64], [8, 0])
c: pl.Tile[[4, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(p, [4, 64], [4, 0])
y: pl.Tile[[4, 64], pl.FP32, pl.Mem.Vec] = pl.tile.adds(c, 1.0)
""", T + """
c: pl.Tile[[4, 64], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [4, 64], [12, 0])
y: pl.Tile[[4, 64], pl.FP32, pl.Mem.Vec] = pl.tile.adds(c, 1.0)
""")
