"""What the calls of a function share of where they pass its tile parameter (``ir.frames``
``joined``): equal places are exact; row strides that differ keep their greatest common
divisor; starts that differ keep their residue modulo the 32-byte alignment when they agree on
it, else their greatest common divisor; column strides that differ keep nothing."""

from __future__ import annotations

import pytest

from egraph_tiles.ir.frames import Frame, joined

ROWS_12, ROWS_8 = (384, 32), (256, 32)


@pytest.mark.parametrize("frames, expected", [
    ([Frame(ROWS_12, 48), Frame(ROWS_12, 48)], Frame(ROWS_12, 48)),
    ([Frame(ROWS_12, 0), Frame(ROWS_8, 0)], Frame((128, 32), 0, row_exact=False,
                                                          calls=((256, 32, 0), (384, 32, 0)))),
    ([Frame(ROWS_12, 16), Frame(ROWS_12, 48)], Frame(ROWS_12, 16, residue=True)),
    ([Frame(ROWS_12, 0), Frame(ROWS_12, 48)], Frame(ROWS_12, 48, start_exact=False,
                                                            calls=((384, 32, 0), (384, 32, 16)))),
    ([Frame(ROWS_12, 16, residue=True), Frame(ROWS_12, 4)], Frame(ROWS_12, 4, start_exact=False,
                                                                         calls=((384, 32, 4), (384, 32, 16)))),
    ([Frame(ROWS_12, 16, residue=True), Frame(ROWS_12, 16)], Frame(ROWS_12, 16, residue=True)),
    ([Frame(ROWS_12, 0), Frame((32, 384), 0)], Frame((), 0, False, False)),
], ids=["equal", "two-pitches", "starts-agree-modulo-32", "starts-differ", "residue-and-start",
        "residue-and-its-start", "transposed-and-row-major"])
def test_calls_share(frames, expected):
    assert joined(frames) == expected
