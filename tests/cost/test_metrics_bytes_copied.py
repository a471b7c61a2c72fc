"""The bytes-copied metric: inserted extract bytes, each statement position once."""

import egraph_tiles as et
from egraph_tiles.cost.metrics import bytes_copied, extract_statements
from dslkit import kernel

BEFORE = kernel("x: pl.Tensor[[16, 64], pl.BF16]", """
t = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
kept = pl.tile.extract(t, 0, 0, shape=[16, 8], target_memory=pl.Mem.Vec)
for i in pl.range(0, 4, 1):
    h: pl.Tile[[16, 4], pl.BF16, pl.Mem.Vec] = pl.tile.slice(t, [16, 4], [0, 3])
    y = pl.tile.muls(h, 0.5)
return kept
""")

AFTER = BEFORE.replace("pl.tile.slice(t, [16, 4], [0, 3])",
                       "pl.tile.extract(t, 0, 3, shape=[16, 4], target_memory=pl.Mem.Vec)")


def test_an_extract_inserted_in_a_loop_body_counts_its_bytes_once_not_per_trip():
    before, after = et.parse_program(BEFORE), et.parse_program(AFTER)
    assert bytes_copied(before, after) == 16 * 4 * 16 // 8  # 128 B, not 4 × 128


def test_extracts_already_in_the_input_are_not_charged():
    before = et.parse_program(BEFORE)
    assert bytes_copied(before, before) == 0
    assert extract_statements(before) == 1
