"""A window a function returns through another function's return (``f`` returns what ``g``
returned, and ``g`` returns a slice of its parameter) is written by ``f``'s caller just as if
``g``'s caller had written it: ``g`` must return the window itself, never a copy (the write
would land in the copy).  Unaligned, it is rejected, naming ``g``'s return."""

from __future__ import annotations

import egraph_tiles as et
from dslkit import kernel, rejection
from simkit import inputs_for, unsound_because

PARAMS = ("x: pl.Tensor[[16, 64], pl.FP32], p: pl.Tensor[[16, 8], pl.FP32], "
          "out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]")
BODY = """
local = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
p8 = pl.tile.load(p, [0, 0], [16, 8], target_memory=pl.Mem.Vec)
r = self.f(local)
pl.tile.assemble(r, p8, [0, 0])
out = pl.store(local, [0, 0], out)
return out
"""
CALLEES = """
    @pl.function(type=pl.FunctionType.InCore)
    def f(self, t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]:
        s = self.g(t)
        return s

    @pl.function(type=pl.FunctionType.InCore)
    def g(self, t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(t, [16, 8], [0, {col}])
        return s
"""


def program(col: int) -> et.ir.Program:
    text = kernel(PARAMS, BODY, "pl.Tensor[[16, 64], pl.FP32]", more=CALLEES.format(col=col))
    return et.verify_program(et.parse_program(text))


def test_an_unaligned_window_returned_through_two_functions_and_written_by_the_caller_is_rejected():
    p = program(3)
    msg = rejection(p)
    assert "in function 'g', slice 's'" in msg and "written in place by the return" in msg
    assert unsound_because(lambda q: q, p, inputs_for(p), {}) is not None


def test_an_aligned_window_returned_through_two_functions_and_written_by_the_caller_stays_a_view():
    p = program(8)
    q = et.optimize(p)
    et.assert_structural_equal(q, p)
    assert unsound_because(et.optimize, p, inputs_for(p), {}) is None


NESTED_HANDBACK = """
    @pl.function(type=pl.FunctionType.InCore)
    def f(self, t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]:
        w = pl.tile.slice(t, [2, 8], [0, {col}])
        r = self.g(w)
        return r

    @pl.function(type=pl.FunctionType.InCore)
    def g(self, u: pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]) -> pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]:
        s = pl.tile.slice(u, [1, 8], [1, 0])
        return s
"""
BODY1 = BODY.replace("p8 = pl.tile.load(p, [0, 0], [16, 8]", "p8 = pl.tile.load(p, [0, 0], [1, 8]")


def nested_handback(col: int) -> et.ir.Program:
    text = kernel(PARAMS, BODY1, "pl.Tensor[[16, 64], pl.FP32]",
                  more=NESTED_HANDBACK.format(col=col))
    return et.verify_program(et.parse_program(text))


def test_a_window_handed_to_a_function_whose_result_is_returned_to_a_writer_is_not_copied():
    # before: f copied w (row 1 of it is 260 B into t, unaligned) for g, and the kernel's write
    # through f's result landed in the copy; now g judges its row where w puts it (g's
    # parameter is framed by its call), finds it unaligned and rejects the kernel
    p = nested_handback(1)
    msg = rejection(p)
    assert "in function 'g', slice 's'" in msg and "written in place by the return" in msg
    assert "Parameter 'u' is where every call passes it: rows 64 elements apart, its first " \
           "element at byte 4" in msg
    assert unsound_because(lambda q: q, p, inputs_for(p), {}) is not None


def test_an_aligned_window_handed_to_a_function_whose_result_is_returned_to_a_writer_stays_a_view():
    p = nested_handback(8)
    et.assert_structural_equal(et.optimize(p), p)
    assert unsound_because(et.optimize, p, inputs_for(p), {}) is None
