"""Two windows the pass rejected though nothing about them is unsafe: a window a scalar
``tile.write`` stores one element into (no vector alignment to prove; never copied, so the
store lands in the source) and a slice whose only keyword is ``pad_value`` (nothing to pad
without a valid_shape: an ordinary window, copied when unaligned)."""

from __future__ import annotations

import pytest

import egraph_tiles as et
from canon_helpers import assert_canonicalizes
from dslkit import kernel

X = "x: pl.Tensor[[16, 64], pl.FP32]"
T = """
local: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
"""
EXT = "pl.tile.extract(local, 0, 3, shape=[16, 8], target_memory=pl.Mem.Vec)"


def test_scalar_write_into_an_unaligned_window_stays_a_view():
    body = T + """
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
pl.tile.write(w, [1, 2], 7.0)
"""
    assert_canonicalizes(X, body, body)


def test_vector_reads_around_a_scalar_write_copy_before_and_after_it():
    # the store goes through the view; each vector read copies the window it sees
    assert_canonicalizes(X, T + """
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
a: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w, 3.0)
pl.tile.write(w, [1, 2], 7.0)
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w, 2.0)
""", T + f"""
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
w_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = {EXT}
a: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w_ext, 3.0)
pl.tile.write(w, [1, 2], 7.0)
w_ext_1: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = {EXT}
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w_ext_1, 2.0)
""")


def test_scalar_read_of_an_unaligned_window_reads_the_view():
    body = T + """
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3])
v: pl.Scalar[pl.FP32] = pl.tile.read(w, [1, 2])
"""
    assert_canonicalizes(X, body, body)


def test_vector_write_into_an_unaligned_window_is_still_rejected():
    prog = et.parse_program(kernel(X, T + """
w = pl.tile.slice(local, [16, 8], [0, 3])
pl.tile.fillpad_inplace(w, pl.PadValue.zero)
"""))
    with pytest.raises(ValueError, match="written in place by tile.fillpad_inplace"):
        et.canonicalize_tile_slice(prog)


def test_slice_with_only_a_pad_value_is_copied_when_unaligned():
    assert_canonicalizes(X, T + """
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 3], pad_value=pl.PadValue.zero)
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w, 2.0)
""", T + f"""
w_ext: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = {EXT}
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w_ext, 2.0)
""")


def test_slice_with_only_a_pad_value_stays_a_view_when_aligned():
    body = T + """
w: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(local, [16, 8], [0, 8], pad_value=pl.PadValue.max)
y: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(w, 2.0)
"""
    assert_canonicalizes(X, body, body)


def test_scalar_write_through_a_window_lands_in_its_source_on_the_hardware_model():
    # the simulators give tile.write / tile.read their meaning: the kept view is right; a copy
    # of the window would take the store and lose it
    from egraph_tiles.sim.soundness import unsound_because
    from simkit import inputs_for
    params = X + ", out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]"
    body = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [16, 8], [0, 1])
pl.tile.write(w, [0, 0], 5.0)
r = pl.tile.read(w, [0, 0])
yv = pl.tile.slice(local, [16, 8], [0, 0])
y = pl.tile.adds(yv, r)
out = pl.store(y, [0, 0], out)
return out"""
    ret = "pl.Tensor[[16, 8], pl.FP32]"
    p = et.verify_program(et.parse_program(kernel(params, body, ret)))
    copied = et.verify_program(et.parse_program(kernel(params, body.replace(
        "pl.tile.slice(local, [16, 8], [0, 1])",
        "pl.tile.extract(local, 0, 1, shape=[16, 8], target_memory=pl.Mem.Vec)"), ret)))
    ins = inputs_for(p)
    assert unsound_because(et.optimize, p, ins, {}) is None
    assert unsound_because(lambda q: copied, p, ins, {}) is not None
