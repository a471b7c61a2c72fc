"""Migration of legacy NKI indices to the 0.2+ form: basic slices, ``.ap()``, masks as ``min()``."""

import textwrap

from egraph_tiles.nki.kernels.analyze import analyze_kernel
from egraph_tiles.nki.kernels.migrate import migrate_kernel

HEADER = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n"


def migrate(body: str, **kw):
    report = analyze_kernel(HEADER + textwrap.dedent(body).lstrip("\n"), **kw)
    mig = migrate_kernel(report)
    return mig.source[len(HEADER):], [f.message for f in mig.findings], report, mig


def test_box_index_becomes_a_basic_slice_and_unused_aranges_are_removed():
    new, findings, _, _ = migrate("""
        @nki.jit
        def k(a):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(512)[None, :]
            t = nl.load(a[i_p + 64, i_f + 8])
        """, shapes={"a": (256, 1024)})
    assert new == textwrap.dedent("""\
        @nki.jit
        def k(a):
            assert tuple(a.shape) == (256, 1024), 'migrated for a.shape == (256, 1024)'
            t = nl.load(a[64:192, 8:520])
        """)
    assert findings == []


def test_steps_and_loop_offsets_are_kept_in_the_slice():
    new, _, _, _ = migrate("""
        @nki.jit
        def k(a):
            i_p, i_f = nl.mgrid[0:64, 0:256:2]
            for t in nl.affine_range(4):
                x = nl.load(a[t * 64 + i_p, i_f + 1])
        """, shapes={"a": (256, 512)})
    assert "x = nl.load(a[64*t:64*t + 64, 1:256:2])" in new and "mgrid" not in new


def test_mask_becomes_a_min_bounded_end_and_the_mask_argument_is_dropped():
    new, findings, _, _ = migrate("""
        @nki.jit
        def k(a, out):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            for t in nl.affine_range(4):
                x = nl.load(a[t * 128 + i_p, i_f], mask=(t * 128 + i_p < 446))
                nl.store(out[t * 128 + i_p, i_f], value=x,
                         mask=(t * 128 + i_p < 446))
        """, shapes={"a": (446, 64), "out": (446, 64)})
    assert new == textwrap.dedent("""\
        @nki.jit
        def k(a, out):
            assert tuple(a.shape) == (446, 64), 'migrated for a.shape == (446, 64)'
            assert tuple(out.shape) == (446, 64), 'migrated for out.shape == (446, 64)'
            for t in nl.affine_range(4):
                x = nl.load(a[128*t:min(446, 128*t + 128), 0:64])
                nl.store(out[128*t:min(446, 128*t + 128), 0:64], value=x)
        """)
    assert findings == []


def test_lower_bound_mask_becomes_a_max_bounded_start():
    new, _, _, _ = migrate("""
        @nki.jit
        def k(a, s):
            i_p, i_f = nl.mgrid[0:8, 0:16]
            for t in nl.affine_range(3):
                x = nl.load(a[i_p, t * 4 + i_f - 4], mask=(t * 4 + i_f - 4 >= 0))
        """, shapes={"a": (8, 32)})
    assert "x = nl.load(a[0:8, max(0, 4*t - 4):4*t + 12])" in new


def test_transpose_needs_an_access_pattern():
    new, findings, report, mig = migrate("""
        @nki.jit
        def k(a):
            i_p, i_f = nl.mgrid[0:128, 0:64]
            x = nl.load(a[i_f, i_p])
        """, shapes={"a": (64, 128)})
    assert "x = nl.load(a.ap([[1, 128], [128, 64]]))" in new and findings == []
    assert list(mig.texts.values()) == ["a.ap([[1, 128], [128, 64]])"]


def test_summed_aranges_merge_into_an_access_pattern_with_offset():
    new, _, _, _ = migrate("""
        @nki.jit
        def k(a):
            i_p = nl.arange(4)[:, None, None]
            i_1 = nl.arange(8)[None, :, None]
            i_2 = nl.arange(16)[None, None, :]
            x = nl.load(a[i_p + 2, i_2 * 8 + i_1])
        """, shapes={"a": (8, 128)})
    assert "x = nl.load(a.ap([[128, 4], [1, 8], [8, 16]], offset=256))" in new


def test_overlapping_windows_need_an_access_pattern():
    new, _, _, _ = migrate("""
        @nki.jit
        def k(a):
            i_p = nl.arange(16)[:, None, None]
            i_w = nl.arange(6)[None, :, None]
            i_k = nl.arange(3)[None, None, :]
            x = nl.load(a[i_p, i_w + i_k])
        """, shapes={"a": (16, 8)})
    assert "x = nl.load(a.ap([[8, 16], [1, 6], [1, 3]]))" in new


def test_on_chip_access_that_no_form_expresses_is_left_and_reported():
    new, findings, _, _ = migrate("""
        @nki.jit
        def k(a):
            buf = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.sbuf)
            i_p, i_f = nl.mgrid[0:64, 0:64]
            x = nl.exp(buf[i_f, i_p])
        """, shapes={"a": (64, 64)})
    assert "x = nl.exp(buf[i_f, i_p])" in new and "mgrid" in new
    assert findings == ["not migrated: buf[i_f, i_p]: on sbuf the partition pair of .ap() must "
                        "have stride 64 (the free size), this access needs 1: use a DMA or a "
                        "transpose instead"]


def test_mask_that_is_not_a_box_is_kept_and_reported():
    new, findings, _, _ = migrate("""
        @nki.jit
        def k(a):
            i_p, i_f = nl.mgrid[0:64, 0:64]
            x = nl.load(a[i_p, i_f], mask=(i_f <= i_p))
        """, shapes={"a": (64, 64)})
    assert "mask=(i_f <= i_p)" in new
    assert any("its mask is not a box" in f for f in findings)
    assert any("mask= of `nl.load` kept" in f for f in findings)


def test_helper_access_depending_on_the_callers_loop_is_not_rewritten():
    new, findings, _, _ = migrate("""
        def load_row(t, row):
            return nl.load(t[row + nl.arange(4)[:, None], nl.arange(8)[None, :]])

        @nki.jit
        def k(a):
            for i in nl.affine_range(4):
                x = load_row(a, i * 4)
        """, shapes={"a": (16, 8)})
    assert "t[row + nl.arange(4)[:, None]" in new
    assert any("inside a helper function" in f for f in findings)


def test_helper_with_one_constant_form_is_rewritten():
    new, findings, _, _ = migrate("""
        def first_rows(t):
            return nl.load(t[nl.arange(4)[:, None], nl.arange(8)[None, :]])

        @nki.jit
        def k(a):
            x = first_rows(a)
        """, shapes={"a": (16, 8)})
    assert "return nl.load(t[0:4, 0:8])" in new and findings == []


def test_integer_index_keeps_the_tile_rank():
    new, _, _, _ = migrate("""
        @nki.jit
        def k(a, b):
            i_p = nl.arange(128)[:, None]
            x = nl.load(b[i_p, 3])
            y = nl.load(a[i_p, 2, nl.arange(4)[None, :]])
        """, shapes={"a": (128, 8, 4), "b": (128, 8)})
    assert "x = nl.load(b[0:128, 3:4])" in new  # the legacy tile is (128, 1)
    assert "y = nl.load(a[0:128, 2, 0:4])" in new  # the legacy tile is (128, 4)


def test_basic_slices_and_unrelated_code_are_untouched():
    src = """
        @nki.jit
        def k(a):
            # a comment stays
            x = nl.load(a[0:128, 0:64])
            y = nl.exp(x)
        """
    new, findings, _, _ = migrate(src, shapes={"a": (128, 64)})
    assert new == textwrap.dedent(src).lstrip("\n") and findings == []


def test_mask_excluding_one_position_is_not_a_box():
    new, findings, _, _ = migrate("""
        @nki.jit
        def k(a):
            i_p, i_f = nl.mgrid[0:8, 0:8]
            x = nl.load(a[i_p, i_f], mask=(i_f != 3))
        """, shapes={"a": (8, 8)})
    assert "mask=(i_f != 3)" in new and any("its mask is not a box" in f for f in findings)


def test_mask_that_leaves_no_element_in_some_iteration_is_not_migrated():
    # for t = 1 the end min(2, 1 - 2*t) is -1: Python would read a[0:-1] (one element from the
    # back) where the legacy mask drops the instruction, so the access stays as written
    new, findings, _, _ = migrate("""
        @nki.jit
        def k(a):
            i0 = nl.arange(2)[:, None]
            for t in nl.affine_range(2):
                x = nl.load(a[i0, 0], mask=(i0 + 2 * t < 1))
        """, shapes={"a": (2, 1)})
    assert "x = nl.load(a[i0, 0], mask=(i0 + 2 * t < 1))" in new
    assert any("ends before it starts" in f for f in findings), findings


def test_mask_emptied_at_a_single_unsampled_corner_is_not_migrated():
    # 16 x 16 iterations; the end min(2, 29 - 2*t + 2*u) falls below 0 only at t = 15, u = 0,
    # which neither the all-first nor the all-last iteration is: the rewrite is checked at every
    # iteration, so a[0:-1] is never printed
    new, findings, _, _ = migrate("""
        @nki.jit
        def k(a):
            i0 = nl.arange(2)[:, None]
            for t in nl.affine_range(16):
                for u in nl.affine_range(16):
                    x = nl.load(a[i0, 0], mask=(i0 + 2 * t - 2 * u < 29))
        """, shapes={"a": (2, 1)})
    assert "x = nl.load(a[i0, 0], mask=(i0 + 2 * t - 2 * u < 29))" in new
    assert any("ends before it starts" in f and "'t': 15, 'u': 0" in f for f in findings), findings


def test_access_in_loops_too_long_to_check_every_iteration_stays_as_written():
    new, findings, _, _ = migrate("""
        @nki.jit
        def k(a):
            i_p = nl.arange(128)[:, None]
            for t in nl.affine_range(128):
                for u in nl.affine_range(64):
                    x = nl.load(a[t * 128 + i_p, u])
        """, shapes={"a": (16384, 64)})
    assert "x = nl.load(a[t * 128 + i_p, u])" in new
    assert any("more than 4,096 iterations" in f for f in findings), findings


def test_the_migrated_kernel_asserts_the_sizes_and_scalars_it_is_specialised_to():
    # the rewritten accesses name the analysed sizes (min(300, ...)); launched with other sizes,
    # the kernel stops instead of computing something else
    new, _, _, _ = migrate("""
        @nki.jit
        def k(a, out, scale, flag=None):
            \"\"\"Doubled rows.\"\"\"
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            for t in nl.affine_range(3):
                x = nl.load(a[t * 128 + i_p, i_f], mask=(t * 128 + i_p < 300))
                nl.store(out[t * 128 + i_p, i_f], value=x, mask=(t * 128 + i_p < 300))
        """, shapes={"a": (300, 64), "out": (300, 64)}, scalars={"scale": 2, "flag": None})
    assert new.startswith(textwrap.dedent("""\
        @nki.jit
        def k(a, out, scale, flag=None):
            \"\"\"Doubled rows.\"\"\"
            assert tuple(a.shape) == (300, 64), 'migrated for a.shape == (300, 64)'
            assert tuple(out.shape) == (300, 64), 'migrated for out.shape == (300, 64)'
            assert scale == 2, 'migrated for scale == 2'
            assert flag is None, 'migrated for flag is None'
            for t in nl.affine_range(3):
        """))


def test_a_kernel_with_nothing_migrated_gets_no_asserts():
    new, _, _, _ = migrate("""
        @nki.jit
        def k(a):
            t = nl.load(a[64:192, 8:520])
        """, shapes={"a": (256, 1024)})
    assert "assert" not in new


def test_the_migrated_kernel_stops_when_launched_with_other_sizes():
    import numpy as np
    import pytest

    from egraph_tiles.nki.kernels.mock import run_kernel

    src = HEADER + textwrap.dedent("""
        @nki.jit
        def k(a, out):
            n = a.shape[0]
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(64)[None, :]
            for t in nl.affine_range((n + 127) // 128):
                x = nl.load(a[t * 128 + i_p, i_f], mask=(t * 128 + i_p < n))
                nl.store(out[t * 128 + i_p, i_f], value=x, mask=(t * 128 + i_p < n))
        """)
    mig = migrate_kernel(analyze_kernel(src, shapes={"a": (300, 64), "out": (300, 64)}))
    assert "min(300, 128*t + 128)" in mig.source
    other = {"a": np.ones((400, 64)), "out": np.zeros((400, 64))}
    run_kernel(src, "k", other)  # the legacy kernel is generic in n
    with pytest.raises(AssertionError, match=r"migrated for a.shape == \(300, 64\)"):
        run_kernel(mig.source, "k", other)
