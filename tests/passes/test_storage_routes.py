"""Every tile value knows its storage (``ir.storage``): a window's facts — its row pitch, its
byte offset into the buffer, the MemRef base offset, which slices it may name — survive views,
loop carries and if merges, and a value whose storage is unknown gets the conservative outcome
(a copy, or a rejection naming the route), never a view.

Each case gives the program before and after.  Before, kept as written (what the pass used to
emit for it), it miscomputes or faults on the hardware model; after, it matches the ideal
semantics with no fault."""

from __future__ import annotations

import pytest

import egraph_tiles as et
from egraph_tiles.sim.soundness import unsound_because
from dslkit import kernel, rejection
from simkit import inputs_for

#: the kernel's parameters: x (16 x 16 FP32), n (a scalar choosing an if arm), out
PARAMS = ("x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX], "
          "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]")
RET = "pl.Tensor[[16, 16], pl.FP32]"
#: the col_expand kernels' result
RET64 = "pl.Tensor[[16, 64], pl.FP32]"
#: the else arm of every if below (n = 0)
SCALARS = {"n": 0}


def program(body: str, params: str = PARAMS) -> et.ir.Program:
    ret = RET64 if params == COLX else "pl.Tensor[[8, 32], pl.FP32]" if params == DENSE else RET
    return et.verify_program(et.parse_program(kernel(params, body, ret)))


def assert_fixed(before: str, after: str, params: str = PARAMS) -> None:
    """``before`` optimizes to ``after``; kept as written it is wrong on the hardware model,
    optimized it is right."""
    p = program(before, params)
    q = et.optimize(p)
    et.assert_structural_equal(q, program(after, params))
    ins = inputs_for(p)
    assert unsound_because(lambda x: x, p, ins, SCALARS) is not None
    assert unsound_because(et.optimize, p, ins, SCALARS) is None


# ---------------------------------------------------------------- class D: pitch and offset
def test_a_row_of_a_valid_shape_slice_uses_its_sources_pitch():
    # row 1 of v ([16, 8] of a [16, 12] FP32 tile) starts 48 B in, not 32 B: copied
    assert_fixed("""
local = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
v = pl.tile.slice(local, [16, 8], [0, 0], valid_shape=[16, 8])
s = pl.tile.slice(v, [1, 8], [1, 0])
d = pl.tile.adds(s, 1.0)
out = pl.store(d, [0, 0], out)
return out""", """
local = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
v = pl.tile.slice(local, [16, 8], [0, 0], valid_shape=[16, 8])
s_ext = pl.tile.extract(v, 1, 0, shape=[1, 8], target_memory=pl.Mem.Vec)
d = pl.tile.adds(s_ext, 1.0)
out = pl.store(d, [0, 0], out)
return out""")


def test_a_row_of_a_set_validshape_view_of_a_valid_shape_slice_uses_the_sources_pitch():
    assert_fixed("""
local = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
v0 = pl.tile.slice(local, [16, 8], [0, 0], valid_shape=[16, 8])
v = pl.tile.set_validshape(v0, [16, 8])
s = pl.tile.slice(v, [1, 8], [1, 0])
d = pl.tile.adds(s, 1.0)
out = pl.store(d, [0, 0], out)
return out""", """
local = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
v0 = pl.tile.slice(local, [16, 8], [0, 0], valid_shape=[16, 8])
v = pl.tile.set_validshape(v0, [16, 8])
s_ext = pl.tile.extract(v, 1, 0, shape=[1, 8], target_memory=pl.Mem.Vec)
d = pl.tile.adds(s_ext, 1.0)
out = pl.store(d, [0, 0], out)
return out""")


def test_a_row_of_a_transpose_view_is_a_column_of_its_source():
    # row 1 of transpose_view(local) starts 4 B in, and its elements are a row apart
    assert_fixed("""
local = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
v = pl.tile.transpose_view(local)
s = pl.tile.slice(v, [1, 8], [1, 0])
d = pl.tile.adds(s, 1.0)
out = pl.store(d, [0, 0], out)
return out""", """
local = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
v = pl.tile.transpose_view(local)
s_ext = pl.tile.extract(v, 1, 0, shape=[1, 8], target_memory=pl.Mem.Vec)
d = pl.tile.adds(s_ext, 1.0)
out = pl.store(d, [0, 0], out)
return out""")


def test_a_set_validshape_view_keeps_its_sources_memref_byte_offset():
    # local starts at byte 16: row 1 of the view is at 16 + 64 = 80 B, not 64 B
    assert_fixed("""
local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.MemRef(16)] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
v = pl.tile.set_validshape(local, [16, 8])
s = pl.tile.slice(v, [1, 8], [1, 0])
d = pl.tile.adds(s, 1.0)
out = pl.store(d, [0, 0], out)
return out""", """
local: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.MemRef(16)] = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
v = pl.tile.set_validshape(local, [16, 8])
s_ext = pl.tile.extract(v, 1, 0, shape=[1, 8], target_memory=pl.Mem.Vec)
d = pl.tile.adds(s_ext, 1.0)
out = pl.store(d, [0, 0], out)
return out""")


def test_a_loop_carry_of_a_window_keeps_the_windows_pitch():
    # a carries w ([16, 8] of a [16, 12] tile) on every trip: its row 1 is 48 B in
    assert_fixed("""
local = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [16, 8], [0, 0])
z = pl.tile.full([1, 8], dtype=pl.FP32, value=0.0)
for i, (a, acc) in pl.range(2, init_values=(w, z)):
    s = pl.tile.slice(a, [1, 8], [1, 0])
    d = pl.tile.add(s, acc)
    r, acc2 = pl.yield_(a, d)
out = pl.store(acc2, [0, 0], out)
return out""", """
local = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [16, 8], [0, 0])
z = pl.tile.full([1, 8], dtype=pl.FP32, value=0.0)
for i, (a, acc) in pl.range(2, init_values=(w, z)):
    s_ext = pl.tile.extract(a, 1, 0, shape=[1, 8], target_memory=pl.Mem.Vec)
    d = pl.tile.add(s_ext, acc)
    r, acc2 = pl.yield_(a, d)
out = pl.store(acc2, [0, 0], out)
return out""")


def test_an_if_merge_of_two_windows_has_no_known_offset():
    # m is w1 or w2: rows 384 B apart; row 1 of either is 48 B past its start, not 32 B
    assert_fixed("""
local = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
w1 = pl.tile.slice(local, [8, 8], [0, 0])
w2 = pl.tile.slice(local, [8, 8], [8, 0])
if n > 0:
    m = pl.yield_(w1)
else:
    m = pl.yield_(w2)
s = pl.tile.slice(m, [1, 8], [1, 0])
d = pl.tile.adds(s, 1.0)
out = pl.store(d, [0, 0], out)
return out""", """
local = pl.tile.load(x, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
w1 = pl.tile.slice(local, [8, 8], [0, 0])
w2 = pl.tile.slice(local, [8, 8], [8, 0])
if n > 0:
    m = pl.yield_(w1)
else:
    m = pl.yield_(w2)
s_ext = pl.tile.extract(m, 1, 0, shape=[1, 8], target_memory=pl.Mem.Vec)
d = pl.tile.adds(s_ext, 1.0)
out = pl.store(d, [0, 0], out)
return out""")


# ---------------------------------------------------------------- class H: keyword spelling
def test_a_keyword_spelled_slice_is_a_window():
    assert_fixed("""
local = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
s = pl.tile.slice(local, shape=[16, 8], offset=[0, 1])
d = pl.tile.adds(s, 1.0)
out = pl.store(d, [0, 0], out)
return out""", """
local = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
s_ext = pl.tile.extract(local, 0, 1, shape=[16, 8], target_memory=pl.Mem.Vec)
d = pl.tile.adds(s_ext, 1.0)
out = pl.store(d, [0, 0], out)
return out""")


def test_an_aligned_keyword_spelled_slice_stays_a_view():
    p = program("""
local = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
s = pl.tile.slice(local, shape=[16, 8], offset=[0, 8])
d = pl.tile.adds(s, 1.0)
out = pl.store(d, [0, 0], out)
return out""")
    et.assert_structural_equal(et.optimize(p), program("""
local = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
s = pl.tile.slice(local, [16, 8], [0, 8])
d = pl.tile.adds(s, 1.0)
out = pl.store(d, [0, 0], out)
return out"""))


# ---------------------------------------------------------------- class E: col_expand identity
COLX = ("x: pl.Tensor[[16, 64], pl.FP32], g: pl.Tensor[[1, 16], pl.FP32], "
        "h: pl.Tensor[[1, 64], pl.FP32], n: pl.Scalar[pl.INDEX], "
        "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
LOADS = """local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
gt = pl.tile.load(g, [0, 0], [1, 16], target_memory=pl.Mem.Vec)
"""
#: local is stored first: a lazy repack over it shows in its columns 16..47
TAIL = """out = pl.store(local, [0, 0], out)
out = pl.store(e, [0, 0], out)
return out"""


def test_a_window_reaching_col_expand_through_set_validshape_is_copied_first():
    # w is 16 rows of a 64-wide tile: its lazy repack would overwrite local
    assert_fixed(LOADS + """w = pl.tile.slice(local, [16, 16], [0, 16])
v = pl.tile.set_validshape(w, [16, 16])
e = pl.tile.col_expand_mul(v, gt)
""" + TAIL, LOADS + """w_ext = pl.tile.extract(local, 0, 16, shape=[16, 16], target_memory=pl.Mem.Vec)
v = pl.tile.set_validshape(w_ext, [16, 16])
e = pl.tile.col_expand_mul(v, gt)
""" + TAIL, COLX)


def test_a_window_reaching_col_expand_through_a_loop_carry_is_copied_before_the_loop():
    assert_fixed(LOADS + """w = pl.tile.slice(local, [16, 16], [0, 16])
for i, (a,) in pl.range(2, init_values=(w,)):
    d = pl.tile.adds(gt, 1.0)
    r = pl.yield_(a)
e = pl.tile.col_expand_mul(r, gt)
""" + TAIL, LOADS + """w_ext = pl.tile.extract(local, 0, 16, shape=[16, 16], target_memory=pl.Mem.Vec)
for i, (a,) in pl.range(2, init_values=(w_ext,)):
    d = pl.tile.adds(gt, 1.0)
    r = pl.yield_(a)
e = pl.tile.col_expand_mul(r, gt)
""" + TAIL, COLX)


def test_windows_reaching_col_expand_through_an_if_merge_are_copied_in_their_arms():
    assert_fixed(LOADS + """w1 = pl.tile.slice(local, [16, 16], [0, 16])
w2 = pl.tile.slice(local, [16, 16], [0, 32])
if n > 0:
    m = pl.yield_(w1)
else:
    m = pl.yield_(w2)
e = pl.tile.col_expand_mul(m, gt)
""" + TAIL, LOADS + """w1_ext = pl.tile.extract(local, 0, 16, shape=[16, 16], target_memory=pl.Mem.Vec)
w2_ext = pl.tile.extract(local, 0, 32, shape=[16, 16], target_memory=pl.Mem.Vec)
if n > 0:
    m = pl.yield_(w1_ext)
else:
    m = pl.yield_(w2_ext)
e = pl.tile.col_expand_mul(m, gt)
""" + TAIL, COLX)


def test_a_full_width_window_reaching_col_expand_through_a_carry_stays_a_view():
    # rows 8..15 of all 64 columns: an identity copy at an aligned address
    before = LOADS + """ht = pl.tile.load(h, [0, 0], [1, 64], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [8, 64], [8, 0])
for i, (a,) in pl.range(2, init_values=(w,)):
    d = pl.tile.adds(gt, 1.0)
    r = pl.yield_(a)
e = pl.tile.col_expand_mul(r, ht)
out = pl.store(e, [0, 0], out)
return out"""
    p = program(before, COLX)
    et.assert_structural_equal(et.optimize(p), p)
    assert unsound_because(et.optimize, p, inputs_for(p), SCALARS) is None


def test_a_window_carried_into_col_expand_and_written_in_the_loop_is_rejected():
    # a copy before the loop would take fillpad's writes (local never sees them); kept, the
    # non-identity window's lazy repack corrupts local: neither is right
    p = program(LOADS + """w = pl.tile.slice(local, [16, 16], [0, 16])
d = pl.tile.adds(w, 1.0)
for i, (a,) in pl.range(2, init_values=(w,)):
    f = pl.tile.fillpad_inplace(a, pad_value=pl.PadValue.zero)
    r = pl.yield_(f)
e = pl.tile.col_expand_mul(r, gt)
out = pl.store(local, [0, 0], out)
out = pl.store(e, [0, 0], out)
out = pl.store(d, [0, 0], out)
return out""", COLX)
    assert unsound_because(lambda x: x, p, inputs_for(p), SCALARS) is not None
    msg = rejection(p)
    for piece in ["slice 'w' (tile.slice at line 9) flows into 'a' (a loop carry's initializer "
                  "at line 11)", "tile.col_expand_mul at line 14", "written in place",
                  "neither copied there"]:
        assert piece in msg, (piece, msg)


def test_an_identity_window_carried_into_col_expand_and_written_stays_a_view():
    p = program(LOADS + """ht = pl.tile.load(h, [0, 0], [1, 64], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [8, 64], [8, 0])
for i, (a,) in pl.range(2, init_values=(w,)):
    f = pl.tile.fillpad_inplace(a, pad_value=pl.PadValue.zero)
    r = pl.yield_(f)
e = pl.tile.col_expand_mul(r, ht)
out = pl.store(local, [0, 0], out)
out = pl.store(e, [0, 0], out)
return out""", COLX)
    et.assert_structural_equal(et.optimize(p), p)
    assert unsound_because(et.optimize, p, inputs_for(p), SCALARS) is None


# ---------------------------------------------------------------- reshapes read a dense tile
DENSE = ("x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX], "
         "out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]")


def test_a_window_reshaped_through_set_validshape_is_copied_first():
    # w (16 rows of a 64-wide tile) is not dense: the reshape would read 256 consecutive floats
    assert_fixed("""
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [16, 16], [0, 0])
v = pl.tile.set_validshape(w, [16, 16])
r = pl.tile.reshape(v, [8, 32])
d = pl.tile.adds(r, 1.0)
out = pl.store(d, [0, 0], out)
return out""", """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
w_ext = pl.tile.extract(local, 0, 0, shape=[16, 16], target_memory=pl.Mem.Vec)
v = pl.tile.set_validshape(w_ext, [16, 16])
r = pl.tile.reshape(v, [8, 32])
d = pl.tile.adds(r, 1.0)
out = pl.store(d, [0, 0], out)
return out""", DENSE)


def test_a_window_reshaped_after_a_loop_carry_is_copied_before_the_loop():
    assert_fixed("""
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [16, 16], [0, 0])
for i, (a,) in pl.range(2, init_values=(w,)):
    t = pl.tile.adds(local, 1.0)
    c = pl.yield_(a)
r = pl.tile.reshape(c, [8, 32])
d = pl.tile.adds(r, 1.0)
out = pl.store(d, [0, 0], out)
return out""", """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
w_ext = pl.tile.extract(local, 0, 0, shape=[16, 16], target_memory=pl.Mem.Vec)
for i, (a,) in pl.range(2, init_values=(w_ext,)):
    t = pl.tile.adds(local, 1.0)
    c = pl.yield_(a)
r = pl.tile.reshape(c, [8, 32])
d = pl.tile.adds(r, 1.0)
out = pl.store(d, [0, 0], out)
return out""", DENSE)


# ---------------------------------------------------------------- class F: Mat windows
MATP = ("a: pl.Tensor[[32, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16], n: pl.Scalar[pl.INDEX], "
       "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]")
MATS = """a_mat = pl.tile.load(a, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
b_mat = pl.tile.load(b, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
a_win = pl.tile.slice(a_mat, [16, 16], [16, 0])
"""


def test_a_mat_window_reaching_matmul_through_set_validshape_folds_into_a_left_extract():
    assert_fixed(MATS + """v = pl.tile.set_validshape(a_win, [16, 16])
c = pl.tile.matmul(v, b_mat)
out = pl.store(c, [0, 0], out)
return out""", MATS + """v = pl.tile.set_validshape(a_win, [16, 16])
a_win_left = pl.tile.extract(a_mat, 16, 0, shape=[16, 16], target_memory=pl.Mem.Left)
c = pl.tile.matmul(a_win_left, b_mat)
out = pl.store(c, [0, 0], out)
return out""", MATP)


def test_a_mat_window_carried_by_a_loop_into_matmul_folds_into_a_left_extract():
    # the carry names a_win on every trip (its yield passes the carry on): its storage is known
    assert_fixed(MATS + """for i, (w,) in pl.range(2, init_values=(a_win,)):
    c0 = pl.tile.matmul(w, b_mat)
    r = pl.yield_(w)
c = pl.tile.matmul(r, b_mat)
out = pl.store(c, [0, 0], out)
return out""", MATS + """a_win_left = pl.tile.extract(a_mat, 16, 0, shape=[16, 16], target_memory=pl.Mem.Left)
for i, (w,) in pl.range(2, init_values=(a_win,)):
    c0 = pl.tile.matmul(a_win_left, b_mat)
    r = pl.yield_(w)
c = pl.tile.matmul(a_win_left, b_mat)
out = pl.store(c, [0, 0], out)
return out""", MATP)


def test_an_if_merge_of_two_mat_windows_into_matmul_is_rejected_naming_the_route():
    # m is one of two windows: no one extract stands for it, and there is no Mat->Mat copy
    p = program(MATS + """a_top = pl.tile.slice(a_mat, [16, 16], [0, 0])
if n > 0:
    m = pl.yield_(a_win)
else:
    m = pl.yield_(a_top)
c = pl.tile.matmul(m, b_mat)
out = pl.store(c, [0, 0], out)
return out""", MATP)
    assert unsound_because(lambda x: x, p, inputs_for(p), {"n": 1}) is not None
    msg = rejection(p)
    for piece in ["Mat window 'a_win' (tile.slice at line 9)", "flows into 'm' (a yield at line 12)",
                  "tile.matmul at line 15 uses as a matmul operand", "Mat->Mat",
                  "Fix: extract the window to Left / Right where the matmul reads it"]:
        assert piece in msg, (piece, msg)


# ---------------------------------------------------------------- class G: valid_shape slices
@pytest.mark.parametrize("route,body,consumer", [
    ("carry into col_expand", """v = pl.tile.slice(local, [16, 16], [0, 16], valid_shape=[16, 16])
for i, (a,) in pl.range(2, init_values=(v,)):
    d = pl.tile.adds(gt, 1.0)
    r = pl.yield_(a)
e = pl.tile.col_expand_mul(r, gt)""", "feeds tile.col_expand_mul at line 13 (through 'r': a loop carry)"),
    ("merge into col_expand", """v = pl.tile.slice(local, [16, 16], [0, 16], valid_shape=[16, 16])
u = pl.tile.slice(local, [16, 16], [0, 0], valid_shape=[16, 16])
if n > 0:
    m = pl.yield_(v)
else:
    m = pl.yield_(u)
e = pl.tile.col_expand_mul(m, gt)""", "feeds tile.col_expand_mul at line 15 (through 'm': an if merge)"),
    ("merge into a vector op", """v = pl.tile.slice(local, [16, 16], [0, 1], valid_shape=[16, 16])
u = pl.tile.slice(local, [16, 16], [0, 0], valid_shape=[16, 16])
if n > 0:
    m = pl.yield_(v)
else:
    m = pl.yield_(u)
e = pl.tile.adds(m, 1.0)""", "feeds tile.adds at line 15 (through 'm'"),
])
def test_a_valid_shape_slice_reaching_a_consumer_through_a_route_is_checked(route, body, consumer):
    p = program(LOADS + body + "\n" + TAIL, COLX)
    assert unsound_because(lambda x: x, p, inputs_for(p), {"n": 1}) is not None
    msg = rejection(p)
    assert "slice 'v'" in msg and consumer in msg, msg


def test_a_valid_shape_slice_reaching_col_expand_through_a_transpose_view_is_kept():
    # col_expand lazily materializes only the slice's own subview (set_validshape keeps it);
    # transpose_view lays the window out anew, so col_expand reads the view in place: no repack
    # over local, nothing to reject
    before = LOADS + """v = pl.tile.slice(local, [4, 16], [6, 16], valid_shape=[4, 1])
tv = pl.tile.transpose_view(v)
ht = pl.tile.load(h, [0, 0], [1, 4], target_memory=pl.Mem.Vec)
e = pl.tile.col_expand_mul(tv, ht)
out = pl.store(local, [0, 0], out)
return out"""
    p = program(before, COLX)
    q = et.optimize(p)
    et.assert_structural_equal(q, p)
    assert unsound_because(et.optimize, p, inputs_for(p), SCALARS) is None


def test_an_unaligned_pad_value_slice_carried_into_a_vector_op_is_copied_before_the_loop():
    # a slice whose only keyword is pad_value is a plain window: copied, not rejected
    assert_fixed(LOADS + """v = pl.tile.slice(local, [16, 16], [0, 1], pad_value=pl.PadValue.zero)
for i, (a,) in pl.range(2, init_values=(v,)):
    d = pl.tile.adds(gt, 1.0)
    r = pl.yield_(a)
e = pl.tile.adds(r, 1.0)
""" + TAIL, LOADS + """v_ext = pl.tile.extract(local, 0, 1, shape=[16, 16], target_memory=pl.Mem.Vec)
for i, (a,) in pl.range(2, init_values=(v_ext,)):
    d = pl.tile.adds(gt, 1.0)
    r = pl.yield_(a)
e = pl.tile.adds(r, 1.0)
""" + TAIL, COLX)


def test_a_valid_shape_slice_returned_by_a_call_then_transposed_into_col_expand_is_kept():
    # the callee hands the slice back; the caller's transpose_view lays it out anew, so the
    # col_expand reads it in place: nothing is materialized over the source, nothing to reject
    text = """
import pypto.language as pl
@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32], g: pl.Tensor[[1, 2], pl.FP32],
               out: pl.Out[pl.Tensor[[1, 2], pl.FP32]]) -> pl.Tensor[[1, 2], pl.FP32]:
        local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
        v = pl.tile.slice(local, [2, 1], [0, 0], valid_shape=[2, 1])
        r = self.ident(v)
        t = pl.tile.transpose_view(r)
        gt = pl.tile.load(g, [0, 0], [1, 2], target_memory=pl.Mem.Vec)
        e = pl.tile.col_expand_mul(t, gt)
        out = pl.store(e, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def ident(self, t: pl.Tile[[2, 1], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[2, 1], pl.FP32, pl.Mem.Vec]:
        return t
"""
    p = et.verify_program(et.parse_program(text))
    et.assert_structural_equal(et.optimize(p), p)
    assert unsound_because(et.optimize, p, inputs_for(p), {}) is None


# ---------------------------------------------------------------- windows of a handed-on window
#: a [16, 64] FP32 source (rows 256 B apart) and one element to write
WRITES = ("x: pl.Tensor[[16, 64], pl.FP32], p: pl.Tensor[[1, 1], pl.FP32], "
          "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")


def written_program(body: str) -> et.ir.Program:
    return et.verify_program(et.parse_program(kernel(WRITES, """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
pt = pl.tile.load(p, [0, 0], [1, 1], target_memory=pl.Mem.Vec)
""" + body + """
out = pl.store(local, [0, 0], out)
return out""", RET64)))


def assert_kept_and_right(body: str) -> None:
    """The program is right as written, and the optimizer leaves it as it is."""
    p = written_program(body)
    q = et.optimize(p)
    et.assert_structural_equal(q, p)
    assert unsound_because(et.optimize, p, inputs_for(p), {}) is None


def test_a_window_handed_through_set_validshape_to_a_written_slice_stays_a_view():
    # w is 28 B in (unaligned) but only a view of it is taken: the view's element 1 is at
    # 32 B, written in place.  A copy of w for set_validshape would take the write (and put the
    # element 4 B into the copy)
    assert_kept_and_right("""
w = pl.tile.slice(local, [1, 4], [0, 7])
v = pl.tile.set_validshape(w, [1, 4])
e = pl.tile.slice(v, [1, 1], [0, 1])
pl.tile.assemble(e, pt, [0, 0])""")


def test_a_window_carried_to_a_written_slice_of_the_loop_result_stays_a_view():
    assert_kept_and_right("""
w = pl.tile.slice(local, [1, 4], [0, 7])
for i, (a,) in pl.range(2, init_values=(w,)):
    r = pl.yield_(a)
e = pl.tile.slice(r, [1, 1], [0, 1])
pl.tile.assemble(e, pt, [0, 0])""")


def test_a_window_read_whole_and_sliced_after_a_carry_is_rejected_naming_the_route():
    # a is read whole (an unaligned vector operand) and a slice of the result is written at an
    # address judged from w's place: w can be neither copied before the loop nor kept
    msg = rejection(written_program("""
w = pl.tile.slice(local, [1, 4], [0, 7])
for i, (a,) in pl.range(2, init_values=(w,)):
    d = pl.tile.exp(a)
    r = pl.yield_(a)
e = pl.tile.slice(r, [1, 1], [0, 1])
pl.tile.assemble(e, pt, [0, 0])"""))
    assert "slice 'w'" in msg and "flows into 'a' (a loop carry's initializer" in msg
    assert "windows are taken of that (at line 14)" in msg
    assert "also read or written as a whole, and it is not provably 32-byte aligned" in msg


def test_a_dense_window_reshaped_then_only_sliced_stays_a_view_at_any_address():
    # w is dense but 28 B in; nothing reads r whole, and e (column 1 of r) is judged at
    # 28 + 4 = 32 B, w's place: w stays itself (a copy would move e to 4 B into it)
    assert_kept_and_right("""
w = pl.tile.slice(local, [1, 16], [0, 7])
r = pl.tile.reshape(w, [2, 8])
e = pl.tile.slice(r, [1, 1], [0, 1])
d = pl.tile.adds(e, 1.0)""")


def test_a_window_reshaped_then_read_whole_and_sliced_is_rejected_when_unaligned():
    msg = rejection(written_program("""
w = pl.tile.slice(local, [1, 16], [0, 7])
r = pl.tile.reshape(w, [2, 8])
f = pl.tile.exp(r)
e = pl.tile.slice(r, [1, 1], [0, 1])
d = pl.tile.adds(e, 1.0)"""))
    assert "flows into 'r' (the result of tile.reshape at line 11)" in msg
    assert "tile.reshape reads it as a dense tile" in msg


def test_a_window_not_dense_reshaped_then_only_sliced_is_rejected():
    # two rows of 8 of a 64-wide tile: the reshape reads 16 consecutive elements, not the window
    msg = rejection(written_program("""
w = pl.tile.slice(local, [2, 8], [0, 8])
r = pl.tile.reshape(w, [1, 16])
e = pl.tile.slice(r, [1, 8], [0, 8])
d = pl.tile.adds(e, 1.0)"""))
    assert "tile.reshape reads it as a dense tile, and it is not provably dense" in msg


def test_an_aligned_dense_window_reshaped_then_sliced_stays_a_view():
    assert_kept_and_right("""
w = pl.tile.slice(local, [1, 16], [0, 8])
r = pl.tile.reshape(w, [2, 8])
e = pl.tile.slice(r, [1, 1], [1, 0])
d = pl.tile.adds(e, 1.0)
pl.tile.assemble(e, pt, [0, 0])""")


def test_the_result_of_a_loop_known_to_run_is_its_last_yield_not_its_initializer():
    # one trip: r is e, never w; the write through r needs only e aligned (it is)
    assert_kept_and_right("""
w = pl.tile.slice(local, [1, 1], [0, 1])
for i, (a,) in pl.range(1, init_values=(w,)):
    e = pl.tile.slice(local, [1, 1], [0, 0])
    r = pl.yield_(e)
pl.tile.assemble(r, pt, [0, 0])""")


def test_the_result_of_a_loop_known_never_to_run_is_its_initializer():
    # zero trips: r is w, written unaligned: rejected naming w (as written the device faults)
    p = written_program("""
w = pl.tile.slice(local, [1, 1], [0, 1])
for i, (a,) in pl.range(0, init_values=(w,)):
    e = pl.tile.slice(local, [1, 1], [0, 0])
    r = pl.yield_(e)
pl.tile.assemble(r, pt, [0, 0])""")
    assert unsound_because(lambda x: x, p, inputs_for(p), {}) is not None
    msg = rejection(p)
    assert "slice 'w'" in msg and "through 'r'" in msg


def assert_right(body: str) -> None:
    """The program is accepted, and optimized it is right on the hardware model."""
    p = written_program(body)
    assert unsound_because(et.optimize, p, inputs_for(p), {}) is None


def test_a_window_viewed_then_transposed_then_sliced_may_still_be_copied_where_viewed():
    # a transposed view states no pitch or address (its columns are not consecutive), so no
    # window of it is judged from w's place: w may be copied for set_validshape (unaligned)
    assert_right("""
w = pl.tile.slice(local, [1, 8], [0, 7])
v = pl.tile.set_validshape(w, [1, 8])
t = pl.tile.transpose_view(v)
e = pl.tile.slice(t, [1, 1], [4, 0])
d = pl.tile.muls(e, 2.0)""")


def test_a_window_transposed_twice_then_sliced_is_handed_on_as_it_is():
    # two transposes put w's columns back in place: e is judged at w's address (4 B in), so w
    # must stay itself where it is transposed, which touches none of its bytes
    assert_kept_and_right("""
w = pl.tile.slice(local, [1, 1], [0, 1])
t = pl.tile.transpose_view(w)
u = pl.tile.transpose_view(t)
e = pl.tile.slice(u, [1, 1], [0, 0])
d = pl.tile.col_expand_mul(e, pt)""")


def test_a_written_row_of_a_view_is_judged_at_its_whole_constant_address():
    # w starts 48 B into a 12-wide FP32 tile (unaligned); e, row 1 of its view, 48 B further:
    # 96 B, aligned — the view's start and the row offset are one constant, judged whole
    p = et.verify_program(et.parse_program(kernel(
        "y: pl.Tensor[[16, 12], pl.FP32], p: pl.Tensor[[1, 1], pl.FP32], "
        "out: pl.Out[pl.Tensor[[16, 12], pl.FP32]]", """
local = pl.tile.load(y, [0, 0], [16, 12], target_memory=pl.Mem.Vec)
pt = pl.tile.load(p, [0, 0], [1, 1], target_memory=pl.Mem.Vec)
w = pl.tile.slice(local, [2, 1], [1, 0])
v = pl.tile.set_validshape(w, [2, 1])
e = pl.tile.slice(v, [1, 1], [1, 0])
pl.tile.assemble(e, pt, [0, 0])
out = pl.store(local, [0, 0], out)
return out""", "pl.Tensor[[16, 12], pl.FP32]")))
    et.assert_structural_equal(et.optimize(p), p)
    assert unsound_because(et.optimize, p, inputs_for(p), {}) is None


def test_explain_judges_a_window_of_a_view_at_its_storages_pitch_and_start():
    p = written_program("""
w = pl.tile.slice(local, [1, 4], [0, 7])
v = pl.tile.set_validshape(w, [1, 4])
e = pl.tile.slice(v, [1, 1], [0, 1])
pl.tile.assemble(e, pt, [0, 0])""")
    rep = et.Report()
    et.canonicalize_tile_slice(p, report=rep)
    why = {d.slice: d.reason for d in rep.functions[0].decisions}
    assert why["e"] == ("offset (0 × 64 cols + 1) × 32 bits = 32 bits + 'v' starting 28 B "
                        "(224 bits) = 256 bits: multiple of 256 → view")
    assert why["w"].startswith("handed on to a value nothing reads or writes as a whole")


ALIAS_VIEW = """
root = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
win = pl.tile.slice(root, [1, 4], [0, 7])
al = win
sv = pl.tile.set_validshape(al, [1, 4])
one = pl.tile.slice(sv, [1, 1], [0, 1])
y = pl.tile.muls(one, 2.0)
{more}pl.store(y, [0, 0], out)
return out"""
ALIAS_PARAMS = "x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]"


def test_an_alias_of_a_window_whose_view_is_sliced_is_handed_on_as_it_is():
    # one, column 1 of the view of win (28 B in), is 32 B in: aligned where it lies.  Copying
    # win where the alias is made (as the seed's alias escape did) put one 4 B into the copy
    p = et.verify_program(et.parse_program(kernel(ALIAS_PARAMS, ALIAS_VIEW.format(more=""), RET64)))
    et.assert_structural_equal(et.optimize(p), p)
    assert unsound_because(et.optimize, p, inputs_for(p), {}) is None


def test_an_alias_of_a_window_whose_view_is_sliced_and_read_whole_is_rejected_unaligned():
    # (the alias is read whole too, 28 B in: a copy would move the window judged where it lies)
    p = et.verify_program(et.parse_program(kernel(
        ALIAS_PARAMS, ALIAS_VIEW.format(more="z = pl.tile.muls(al, 2.0)\n"), RET64)))
    assert "slice 'win'" in rejection(p)
    assert unsound_because(lambda q: q, p, inputs_for(p), {}) is not None
