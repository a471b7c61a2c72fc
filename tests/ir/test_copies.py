"""One walker recognizes copies (``ir.copies``): a registry ``COPY`` op with a fresh result,
whatever its name; the report's static bytes, the metrics and the dynamic bytes all read it."""

from __future__ import annotations

import pytest

import egraph_tiles as et
from dslkit import kernel
from egraph_tiles.cost.loops import CostModel, dynamic_copy_bytes
from egraph_tiles.ir.copies import copies, static_copy_bytes
from egraph_tiles.cost.metrics import bytes_copied, extract_statements, program_dynamic_bytes

X = "x: pl.Tensor[[16, 64], pl.FP32]"
T = """
t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
"""


def fn_of(body: str):
    return et.parse_program(kernel(X, T + body)).functions[0]


@pytest.mark.parametrize("stmt, nbytes", [
    ("e = pl.tile.extract(t, 0, 8, shape=[16, 8], target_memory=pl.Mem.Vec)", 16 * 8 * 4),
    ("m: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.move(t, target_memory=pl.Mem.Mat)", 16 * 64 * 4),
    ("tt = pl.tile.transpose(t, 0, 1)", 16 * 64 * 4),
])
def test_a_copy_op_moves_its_result_bytes(stmt, nbytes):
    (c,) = copies(fn_of(stmt))
    assert c.nbytes == nbytes


@pytest.mark.parametrize("stmt", [
    "s = pl.tile.slice(t, [16, 8], [0, 8])",  # a view: no bytes moved
    "r = pl.tile.reshape(t, [32, 32])",
    "a = pl.tile.add(t, t)",  # computes a fresh tile, copies nothing
])
def test_a_view_or_a_computation_is_not_a_copy(stmt):
    assert list(copies(fn_of(stmt))) == []


def test_a_move_in_a_loop_costs_its_bytes_per_trip_in_the_dynamic_view():
    fn = fn_of("""
for i in pl.range(0, 4, 1):
    m: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.move(t, target_memory=pl.Mem.Mat)
""")
    assert static_copy_bytes(fn) == 4096
    assert dynamic_copy_bytes(fn, CostModel()) == 4 * 4096


def test_metrics_count_move_and_transpose_copies():
    before = et.parse_program(kernel(X, T))
    after = et.parse_program(kernel(X, T + """
m: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.move(t, target_memory=pl.Mem.Mat)
tt = pl.tile.transpose(t, 0, 1)
"""))
    assert bytes_copied(before, after) == 2 * 4096
    assert extract_statements(after) == 2
    assert program_dynamic_bytes(after) == 2 * 4096


def test_the_report_counts_a_move_in_the_functions_bytes():
    rep = et.Report()
    et.canonicalize_tile_slice(et.parse_program(kernel(X, T + """
m: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.move(t, target_memory=pl.Mem.Mat)
w = pl.tile.slice(t, [16, 8], [0, 3])
y = pl.tile.muls(w, 2.0)
""")), report=rep)
    fr = rep.functions[0]
    assert (fr.bytes_before, fr.bytes_after) == (4096, 4096 + 512)
    assert (fr.dynamic_before, fr.dynamic_after) == (4096, 4096 + 512)
