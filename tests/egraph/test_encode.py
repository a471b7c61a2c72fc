"""The encoder's bookkeeping (egraph.encode): each site it records is keyed by the number of the
row it stated, so a violation fact names the statement that caused it."""

import pytest

from dslkit import vec_program
from egraph_tiles.egraph.encode import encode_function, has_slice
from egraph_tiles.ir.effects import function_effects


def _encoding(*lines: str):
    fn = vec_program(*lines).functions[0]
    return encode_function(fn, function_effects(fn))


@pytest.mark.parametrize("write, sites, table", [
    ("t2 = pl.tile.assemble(t, w, [0, 0])", "writes", "WriteRow"),  # a registry write-back
    ("pld.tile.remote_store(t, out)", "unclassified", "MayWriteRow"),  # an op that may write
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
    enc = _encoding("a = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)",
                    "b = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)",
                    "c = pl.tile.load(x, [0, 0], [8, 8], target_memory=pl.Mem.Vec)",
                    "wa = pl.tile.slice(a, [16, 8], [0, 8])", "wb = pl.tile.slice(b, [16, 8], [0, 8])",
                    "wc = pl.tile.slice(c, [8, 4], [0, 4])")
    ka, kb, kc = (enc.tile_of[w.src] for w in enc.windows)
    leaf = {row[0]: row[2:] for row in enc.rows["LeafRow"]}
    pitch = dict(enc.rows["PitchRow"])
    assert leaf[ka] == leaf[kb] == leaf[kc] == ("Vec", 32)
    assert (pitch[ka], pitch[kb], pitch[kc]) == (16, 16, 8)
    assert {k for k, in enc.rows["FreshRow"]} >= {ka, kb, kc}


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
