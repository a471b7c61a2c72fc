"""The NKI kernel reader and whole-kernel inference: legacy kernels as written (our own)."""

import textwrap

import numpy as np
import pytest

from egraph_tiles.nki.kernels.analyze import (
    analyze_kernel,
    legacy_elements,
    pattern_elements,
    pattern_json,
    verify_report,
)

HEADER = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import math
import numpy as np
import torch
"""


def analyze(body: str, **kw):
    return analyze_kernel(HEADER + textwrap.dedent(body).lstrip("\n"), **kw)


def rows(report):
    return [(a.raw.line - HEADER.count("\n"), a.raw.tensor_text, a.raw.role, a.shape,
             *pattern_json(a)) for a in report.accesses]


def kinds(report):
    return [f.kind for f in report.findings]


def test_arange_tile_access_is_inferred_as_a_pattern():
    r = analyze("""
        @nki.jit
        def k(a):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(512)[None, :]
            t = nl.load(a[i_p + 64, i_f + 8])
        """, shapes={"a": (256, 1024)})
    assert rows(r) == [(5, "a", "src", (128, 512), [[1024, 128], [1, 512]], 64 * 1024 + 8)]
    assert r.findings == []


def test_mgrid_with_steps_and_grid_attributes():
    r = analyze("""
        @nki.jit
        def k(a):
            i_p, i_f = nl.mgrid[0:128, 0:512:2]
            g = nl.mgrid[0:64, 0:32]
            t = nl.load(a[i_p, i_f + 1])
            u = nl.load(a[g.p + 1, g.x * 4])
        """, shapes={"a": (256, 1024)})
    assert [x[4:] for x in rows(r)] == [([[1024, 128], [2, 256]], 1), ([[1024, 64], [4, 32]], 1024)]


def test_ds_with_a_loop_variable_start_is_a_symbolic_offset():
    r = analyze("""
        @nki.jit
        def k(a):
            for i in nl.affine_range(4):
                x = nl.load(a[nl.ds(i * 64, 64), 0:256])
        """, shapes={"a": (256, 1024)})
    assert rows(r)[0][3:] == ((64, 256), [[1024, 64], [1, 256]], "65536*i")


def test_program_id_under_a_launch_grid():
    r = analyze("""
        @nki.jit
        def k(a):
            pid = nl.program_id(0)
            i_p = pid * 128 + nl.arange(128)[:, None]
            t = nl.load(a[i_p, nl.arange(512)[None, :]])
        """, shapes={"a": (512, 512)}, grid=(4,))
    assert rows(r)[0][5] == "65536*program_id_0" and r.findings == []


def test_program_id_without_a_grid_cannot_be_bounded():
    r = analyze("""
        @nki.jit
        def k(a):
            t = nl.load(a[nl.program_id(0) * 128 + nl.arange(128)[:, None], 0:512])
        """, shapes={"a": (512, 512)})
    assert kinds(r) == ["out-of-bounds"] and "pass --grid" in r.findings[0].message


def test_bind_makes_the_pattern_integers():
    r = analyze("""
        @nki.jit
        def k(a):
            for i in nl.affine_range(4):
                x = nl.load(a[i * 64 + nl.arange(64)[:, None], nl.arange(8)[None, :]])
        """, shapes={"a": (256, 8)}, binds={"i": 2})
    assert rows(r)[0][4:] == ([[8, 64], [1, 8]], 2 * 64 * 8)


def test_mask_narrows_the_partition_count_when_the_loop_variable_is_free():
    r = analyze("""
        @nki.jit
        def k(a, out):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(512)[None, :]
            for t in nl.affine_range(math.ceil(446 / 128)):
                x = nl.load(a[t * 128 + i_p, i_f], mask=(t * 128 + i_p < 446))
                nl.store(out[t * 128 + i_p, i_f], value=x, mask=(t * 128 + i_p < 446))
        """, shapes={"a": (446, 512), "out": (446, 512)})
    assert [x[2:] for x in rows(r)] == [
        ("src", (128, 512), [[512, "min(128, 446 - 128*t)"], [1, 512]], "65536*t"),
        ("dst", (128, 512), [[512, "min(128, 446 - 128*t)"], [1, 512]], "65536*t"),
    ]
    assert r.findings == []  # the mask keeps the last tile inside the tensor


def test_mask_count_is_a_number_when_the_loop_variable_is_bound():
    r = analyze("""
        @nki.jit
        def k(a):
            i_p = nl.arange(128)[:, None]
            for t in nl.affine_range(4):
                x = nl.load(a[t * 128 + i_p, 0:512], mask=(t * 128 + i_p < 446))
        """, shapes={"a": (446, 512)}, binds={"t": 3})
    assert rows(r)[0][4] == [[512, 62], [1, 512]]


def test_mask_on_a_free_axis_and_a_lower_bound_shift_the_offset():
    r = analyze("""
        @nki.jit
        def k(a):
            i_p, i_f = nl.mgrid[0:64, 0:128]
            x = nl.load(a[i_p, i_f], mask=(i_f >= 16) & (i_f < 100) & (i_p < 40))
        """, shapes={"a": (64, 128)})
    assert rows(r)[0][4:] == ([[128, 40], [1, 84]], 16)
    ok, bad = verify_report(r)
    assert (ok, bad) == (1, [])


def test_mask_on_the_destination_of_an_assignment():
    r = analyze("""
        @nki.jit
        def k(a):
            buf = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
            i_p, i_f = nl.mgrid[0:128, 0:64]
            buf[i_p, i_f] = nl.exp(a[i_p, i_f], mask=(i_p < 100))
        """, shapes={"a": (128, 64)})
    assert [(x[1], x[2], x[4][0][1]) for x in rows(r)] == [("a", "src", 100), ("buf", "dst", 100)]


def test_out_of_bounds_access_is_reported_with_line_and_worst_index():
    r = analyze("""
        @nki.jit
        def k(a):
            for t in nl.affine_range(4):
                x = nl.load(a[t * 128 + nl.arange(128)[:, None], nl.arange(512)[None, :]])
        """, shapes={"a": (446, 512)})
    (f,) = r.findings
    assert f.kind == "out-of-bounds" and f.line == HEADER.count("\n") + 4
    assert "reaches index 511 along dimension 0 of a at t=3 " in f.message


def test_mask_that_does_not_cover_the_overrun_still_reports_it():
    r = analyze("""
        @nki.jit
        def k(a):
            for t in nl.affine_range(4):
                x = nl.load(a[t * 128 + nl.arange(128)[:, None], 0:512],
                            mask=(t * 128 + nl.arange(128)[:, None] < 500))
        """, shapes={"a": (446, 512)})
    assert kinds(r) == ["out-of-bounds"] and "reaches index 499" in r.findings[0].message


def test_non_affine_index_is_reported():
    r = analyze("""
        @nki.jit
        def k(a):
            for i in nl.affine_range(4):
                y = nl.load(a[i * i, 0:128])
                z = nl.load(a[i, 0:128])
        """, shapes={"a": (256, 1024)})
    assert kinds(r) == ["non-affine"] and "i * i" in r.findings[0].message
    assert len(r.accesses) == 1  # the rest of the kernel is still analyzed


def test_partition_dimension_over_128_is_rejected():
    r = analyze("""
        @nki.jit
        def k(a):
            x = nl.load(a[nl.arange(256)[:, None], nl.arange(4)[None, :]])
        """, shapes={"a": (256, 4)})
    assert kinds(r) == ["partition"] and "256 > 128" in r.findings[0].message


def test_integer_tile_used_as_an_index_is_indirect():
    r = analyze("""
        @nki.jit
        def k(a, idx):
            ids = nl.load(idx[nl.arange(128)[:, None], 0])
            x = nl.load(a[ids, nl.arange(64)[None, :]])
        """, shapes={"a": (1000, 64), "idx": (128, 1)})
    assert kinds(r) == ["indirect"] and len(r.accesses) == 1


def test_helper_function_is_analyzed_at_its_call_sites():
    r = analyze("""
        def load_block(t, row):
            return nl.load(t[row + nl.arange(32)[:, None], nl.arange(16)[None, :]])

        @nki.jit
        def k(a):
            x = load_block(a, 0)
            y = load_block(a, 64)
        """, shapes={"a": (128, 16)})
    assert [x[5] for x in rows(r)] == [0, 64 * 16]


def test_nisa_call_indexed_arguments_are_accesses_dst_included():
    r = analyze("""
        @nki.jit
        def k(a):
            buf = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            i_p, i_f = nl.mgrid[0:128, 0:128]
            nisa.tensor_copy(dst=buf[i_p, i_f], src=a[i_f, i_p])
        """, shapes={"a": (128, 128)})
    assert [(x[1], x[2], x[4]) for x in rows(r)] == [
        ("buf", "dst", [[128, 128], [1, 128]]), ("a", "src", [[1, 128], [128, 128]])]


def test_scalar_parameters_and_shapes_drive_loop_counts():
    r = analyze("""
        @nki.jit
        def k(a, tile_rows=64, n_tiles=2):
            for t in nl.sequential_range(n_tiles):
                for c in range(a.shape[1] // 128):
                    x = nl.load(a[nl.ds(t * tile_rows, tile_rows), nl.ds(c * 128, 128)])
        """, shapes={"a": (256, 512)}, scalars={"n_tiles": 4})
    assert rows(r)[0][4:] == ([[512, 64], [1, 128]], "128*c + 32768*t") and r.findings == []


def test_loops_nested_six_deep():
    r = analyze("""
        @nki.jit
        def k(a):
            for b0 in nl.affine_range(2):
                for b1 in nl.affine_range(2):
                    for b2 in nl.affine_range(2):
                        for b3 in nl.static_range(2):
                            for b4 in range(2):
                                for b5 in nl.sequential_range(2):
                                    x = nl.load(a[b0, b1, b2, b3, b4 * 2 + b5, 0:8])
        """, shapes={"a": (2, 2, 2, 2, 4, 8)})
    assert rows(r)[0][4:] == ([[1, 8]], "256*b0 + 128*b1 + 64*b2 + 32*b3 + 16*b4 + 8*b5")
    assert verify_report(r) == (1, [])


def test_summed_aranges_give_two_tile_dimensions():
    r = analyze("""
        @nki.jit
        def k(a):
            i_p = nl.arange(4)[:, None, None]
            i_1 = nl.arange(8)[None, :, None]
            i_2 = nl.arange(16)[None, None, :]
            x = nl.load(a[i_p, i_2 * 8 + i_1])
        """, shapes={"a": (4, 128)})
    assert rows(r)[0][3:] == ((4, 8, 16), [[128, 4], [1, 8], [8, 16]], 0)
    assert verify_report(r) == (1, [])


def test_legacy_elements_and_pattern_agree_with_numpy_indexing():
    r = analyze("""
        @nki.jit
        def k(a):
            for t in nl.affine_range(3):
                x = nl.load(a[t * 2 + nl.arange(4)[:, None], nl.arange(5)[None, :] * 3 + 1])
        """, shapes={"a": (16, 20)})
    (rep,) = r.accesses
    data = np.arange(16 * 20).reshape(16, 20)
    want = data[2 * 2 + np.arange(4)[:, None], np.arange(5)[None, :] * 3 + 1]
    assert np.array_equal(legacy_elements(rep.raw, {"t": 2}), want)
    assert np.array_equal(pattern_elements(rep, {"t": 2}), want)


def test_other_libraries_are_never_executed():
    r = analyze("""
        @nki.jit
        def k(a):
            w = torch.ones(4)
            n = np.prod(a.shape)
            x = nl.load(a[0:128, 0:4])
        """, shapes={"a": (128, 4)})
    assert len(r.accesses) == 1 and r.findings == []


def test_a_construct_that_cannot_be_analyzed_does_not_stop_the_rest():
    r = analyze("""
        @nki.jit
        def k(a):
            while True:
                pass
            x = nl.load(a[0:128, 0:4])
        """, shapes={"a": (128, 4)})
    assert kinds(r) == ["error"] and "`while` loop" in r.findings[0].message
    assert len(r.accesses) == 1


def test_undecidable_if_analyzes_both_branches():
    r = analyze("""
        @nki.jit
        def k(a):
            for i in nl.affine_range(4):
                if i == 0:
                    x = nl.load(a[i, 0:4])
                else:
                    x = nl.load(a[i, 4:8])
        """, shapes={"a": (4, 8)})
    assert [x[5] for x in rows(r)] == ["8*i", "8*i + 4"]


def test_plain_function_is_chosen_by_name():
    r = analyze("""
        def plain(a):
            x = nl.load(a[0:2, 0:2])
        """, kernel="plain", shapes={"a": (2, 2)})
    assert len(r.accesses) == 1


def test_kernel_choice_errors():
    with pytest.raises(LookupError, match="choose the kernel with --kernel"):
        analyze("""
            def plain(a):
                pass
            """)
    with pytest.raises(LookupError, match="no function named 'nope'"):
        analyze("""
            def plain(a):
                pass
            """, kernel="nope")


def test_short_loop_whose_body_needs_concrete_values_is_unrolled():
    r = analyze("""
        @nki.jit
        def k(a):
            for h in nl.static_range(3):
                lo = max(0, h * 4 - 1)
                x = nl.load(a[nl.ds(lo, 4), 0:8])
        """, shapes={"a": (16, 8)})
    assert [x[5] for x in rows(r)] == [0, 3 * 8, 7 * 8] and r.findings == []


def test_predicate_on_loop_variables_only_is_a_mask():
    r = analyze("""
        @nki.jit
        def k(a):
            for i in nl.affine_range(64):
                for j in nl.affine_range(64):
                    x = nl.load(a[i * 4 + nl.arange(4)[:, None], 0:8], mask=(i * 4 + 4 <= 250))
        """, shapes={"a": (250, 8)})
    assert r.findings == []  # the instruction is skipped when i * 4 + 4 > 250
    assert verify_report(r) == (1, [])
