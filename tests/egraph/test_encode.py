"""The encoder's bookkeeping (egraph.encode): each site it records is keyed by the number of the
row it stated, so a violation fact names the statement that caused it."""

import pytest

import egraph_tiles as et
from dslkit import kernel, vec_program
from egraph_tiles.egraph.encode import encode_function
from egraph_tiles.egraph.encode_facts import has_slice, written_edges
from egraph_tiles.ir.effects import function_effects


def _encoding(*lines: str):
    fn = vec_program(*lines).functions[0]
    return encode_function(fn, function_effects(fn))


@pytest.mark.parametrize("write, sites, table", [
    ("t2 = pl.tile.assemble(t, w, [0, 0])", "writes", "WriteRow"),  # a registry write-back
    ("pld.tile.remote_scatter(t, out)", "unclassified", "MayWriteRow"),  # an op that may write
])
def test_write_site_key_is_its_rows_number_when_the_written_tile_has_no_term_yet(write, sites, table):
    # before: w = slice(v, ...); t = create(...); <write into t> — ``t`` gets its leaf term only
    # when the write is stated: the site keeps the write row's number
    enc = _encoding("w = pl.tile.slice(v, [16, 8], [0, 8])",
                    "t = pl.tile.create([16, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)", write)
    site, = getattr(enc, sites)
    assert site.var.name == "t"
    assert enc.rows[table] == [(site.key, enc.tile_of[site.var])]


def test_each_tile_states_its_own_types_leaf_facts():
    # a and b share one shape, c has another: each leaf states its type's memory, bits, pitch
    # (a 2-d tile with a constant pitch in a fresh buffer: one FreshLeafRow with every fact)
    enc = _encoding("a = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)",
                    "b = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)",
                    "c = pl.tile.load(x, [0, 0], [8, 8], target_memory=pl.Mem.Vec)",
                    "wa = pl.tile.slice(a, [16, 8], [0, 8])", "wb = pl.tile.slice(b, [16, 8], [0, 8])",
                    "wc = pl.tile.slice(c, [8, 4], [0, 4])")
    ka, kb, kc = (enc.tile_of[w.src] for w in enc.windows)
    leaf = {row[0]: row[2:5] for row in enc.rows["FreshLeafRow"]}
    assert leaf[ka] == leaf[kb] == ("Vec", 32, 16) and leaf[kc] == ("Vec", 32, 8)
    assert not {"LeafRow", "PitchRow", "PitchIdxRow", "FreshRow"} & set(enc.rows)


def test_only_the_base_of_a_window_states_its_leaf_rows():
    # v is sliced, t is only written (assemble): the rules read a leaf's facts only through a
    # window over it, so t stays a bare tile number (it is still in the write's row)
    enc = _encoding("w = pl.tile.slice(v, [16, 8], [0, 8])",
                    "t = pl.tile.create([16, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)",
                    "t2 = pl.tile.assemble(t, w, [0, 0])")
    kv, kt = enc.tile_of[enc.windows[0].src], enc.tile_of[enc.writes[0].var]
    assert enc.writes[0].var.name == "t" and kt != kv
    assert [row[0] for row in enc.rows["FreshLeafRow"]] == [kv]
    assert "LeafRow" not in enc.rows and (enc.writes[0].key, kt) in enc.rows["WriteRow"]


def test_a_tile_in_a_planned_buffer_states_its_facts_row_by_row():
    # xt has a memref (byte offset 0): a LeafRow, its pitch rows and a MemrefRow, no FreshAlloc
    prog = et.parse_program(kernel(
        "x: pl.Tensor[[16, 128], pl.FP32]",
        """
        mem: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)
        xt: pl.Tile[[16, 128], pl.FP32, pl.MemRef(mem, 0, 8192), pl.Mem.Vec] = pl.tile.load(
            x, [0, 0], [16, 128], target_memory=pl.Mem.Vec)
        w = pl.tile.slice(xt, [16, 8], [0, 120])
        y = pl.tile.muls(w, 2.0)
        """))
    fn = prog.functions[0]
    enc = encode_function(fn, function_effects(fn))
    k = enc.tile_of[enc.windows[0].src]
    assert [row[2:] for row in enc.rows["LeafRow"] if row[0] == k] == [("Vec", 32)]
    assert dict(enc.rows["PitchRow"])[k] == 128 and k in dict(enc.rows["PitchIdxRow"])
    assert k in dict(enc.rows["MemrefRow"])
    assert k not in {row[0] for row in enc.rows.get("FreshLeafRow", [])}


def test_only_storage_edges_a_write_can_travel_are_stated():
    # a write into 20 travels 20 -> 10 -> 1; nothing writes 11; a may-write into window 32 also
    # reaches window 31 (same shape: equal Win terms share an e-class), so 31 -> 40 is kept
    rows = {"ViewEdgeRow": [(10, 1), (11, 2), (20, 10), (30, 31), (31, 40)],
            "WriteRow": [(100, 20)], "MayWriteRow": [(101, 32)],
            "WinRow": [(31, 1, 5, 5, 16, 8), (32, 2, 5, 5, 16, 8), (33, 2, 5, 5, 8, 8)]}
    assert written_edges(rows) == ([(10, 1), (20, 10), (31, 40)], [])


def test_a_write_crosses_no_if_merge_on_the_other_arm_of_a_condition_its_route_took():
    # write 100 lands in 50, which takes 40 on the else arm of condition c; 40 takes 30 on the
    # then arm of c (no run), 41 on the else arm; write 101 into 40 may cross either
    arms = [(50, 40, ("c", 1)), (40, 30, ("c", 0)), (40, 41, ("c", 1))]
    rows = {"ViewEdgeRow": [], "WriteRow": [(100, 50), (101, 40)]}
    assert written_edges(rows, arms) == \
        ([], [(100, 40, 41), (100, 50, 40), (101, 40, 30), (101, 40, 41)])


def test_a_write_through_views_still_reaches_its_source_window():
    # w is a Vec window; r views it (reshape keeps the storage); assemble writes r in place:
    # the edge r -> w is stated, so the written window keeps its proof obligation
    enc = _encoding("w = pl.tile.slice(v, [16, 8], [0, 8])",
                    "r = pl.tile.reshape(w, [8, 16])",
                    "t = pl.tile.create([8, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)",
                    "r2 = pl.tile.assemble(r, t, [0, 0])")
    kw, kr = enc.tile_of[enc.windows[0].var], enc.tile_of[enc.writes[0].var]
    assert enc.writes[0].var.name == "r" and (kr, kw) in enc.rows["ViewEdgeRow"]


def test_has_slice_finds_a_slice_nested_in_a_loop_and_an_if():
    fn = vec_program("for i, (c,) in pl.range(2, init_values=(v,)):",
                     "    if i > 0:",
                     "        w = pl.tile.slice(c, [16, 8], [0, 8], [16, 4])",
                     "        y = pl.tile.muls(w, 2.0)",
                     "    d = pl.yield_(c)").functions[0]
    assert has_slice(fn)


def test_has_slice_is_false_for_a_function_without_slices():
    fn = vec_program("for i, (c,) in pl.range(2, init_values=(v,)):",
                     "    y = pl.tile.muls(c, 2.0)", "    d = pl.yield_(c)").functions[0]
    assert not has_slice(fn)


def test_a_windows_root_is_the_first_slice_of_its_chain():
    enc = _encoding("a = pl.tile.slice(v, [16, 16], [0, 0])",
                    "b = pl.tile.slice(a, [16, 8], [0, 8])",
                    "c = pl.tile.slice(b, [8, 8], [8, 0])")
    a, b, c = enc.windows
    assert [w.var.name for w in c.chain()] == ["a", "b", "c"]
    assert a.root is b.root is c.root is a
