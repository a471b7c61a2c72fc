"""A tile a distributed op reads (``pld.tile.remote_store``) is an ordinary operand: a window of
it is copied (``tile.extract``) unless proven a safe view, as PyPTO materializes it; a staging
tile a transfer overwrites keeps the write where the program reads it."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import call_ops, kernel

PARAMS = ("x: pl.Tensor[[16, 16], pl.FP32], "
          "peer_buf: pld.DistributedTensor[[16, 16], pl.FP32]")


def program(*lines: str) -> et.ir.Program:
    body = "\n".join(("v: pl.Tile[[16, 16], pl.FP32] = pl.tile.load(x, [0, 0], [16, 16], "
                      "target_memory=pl.Mem.Vec)", *lines, "return x"))
    return et.parse_program(kernel(PARAMS, body, "pl.Tensor[[16, 16], pl.FP32]",
                                   imports="import pypto.language.distributed as pld\n"))


def test_an_unaligned_window_sent_to_a_peer_is_materialized():
    # before: head = slice(v, [16, 8], [0, 3]); pld.tile.remote_store(head, target=peer_buf, ...)
    # after:  head_ext = extract(v, 0, 3, shape=[16, 8]); pld.tile.remote_store(head_ext, ...)
    p = program("head: pl.Tile[[16, 8], pl.FP32] = pl.tile.slice(v, [16, 8], [0, 3])",
                "pld.tile.remote_store(head, target=peer_buf, peer=1, offsets=[0, 0])")
    out = et.optimize(p)
    assert call_ops(out) == ["tile.load", "tile.extract", "pld.tile.remote_store"]
    printed = et.print_program(out)
    assert "pld.tile.remote_store(head_ext, target=peer_buf, peer=1, offsets=[0, 0])" in printed
    assert "pl.pld." not in printed


def test_an_aligned_row_block_sent_to_a_peer_stays_a_view():
    # before = after: rows 8..15 of a 16 x 16 FP32 tile start on a 512-byte boundary
    p = program("rows: pl.Tile[[8, 16], pl.FP32] = pl.tile.slice(v, [8, 16], [8, 0])",
                "pld.tile.remote_store(rows, target=peer_buf, peer=1, offsets=[0, 0])")
    assert call_ops(et.optimize(p)) == ["tile.load", "tile.slice", "pld.tile.remote_store"]
