"""Access-pattern lowering checked against direct numpy indexing (hypothesis), and the
whole pipeline end to end through infer_kernel (one e-graph per kernel)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egraph_tiles.nki import (
    Access,
    AffineSolver,
    KernelInstruction,
    arange,
    ds,
    infer_kernel,
    lower_access,
    scalar,
)


def test_arange_access_pattern():
    i_p, i_f = arange(128)[:, None], arange(512)[None, :]
    ap = lower_access((256, 1024), (i_p + 64, i_f + 8))
    assert ap.pattern == ((1024, 128), (1, 512)) and ap.offset == 64 * 1024 + 8
    a = np.arange(256 * 1024).reshape(256, 1024)
    np.testing.assert_array_equal(ap.gather(a), a[64:192, 8:520])


def test_dynamic_offset_stays_in_the_offset():
    off = scalar("off", lo=0, hi=100)
    ap = lower_access((256, 64), (ds(off, 32), slice(None, None, 2)))
    assert ap.pattern == ((64, 32), (2, 32))
    assert not isinstance(ap.offset, int) and ap.offset.coefficient(off.value.args[0]) == 64
    a = np.arange(256 * 64).reshape(256, 64)
    np.testing.assert_array_equal(ap.gather(a, {"off": 17}), a[17:49, ::2])


def test_runtime_length_uses_the_supremum_extent():
    n = scalar("n", lo=1, hi=48)
    ap = lower_access((64, 16), (slice(0, n), 3))
    assert ap.pattern == ((16, 48),) and ap.offset == 3


def test_out_of_bounds_access_is_rejected_by_the_interval_bounds():
    off = scalar("off", lo=0, hi=100)
    with pytest.raises(IndexError, match="out of bounds"):
        lower_access((128, 8), (ds(off, 64), slice(None)))


def test_quasi_affine_address_that_is_not_affine_is_rejected():
    i = arange(8)[:, None]
    with pytest.raises(ValueError, match="not affine in the tile axes"):
        lower_access((8, 4), ((i // 2) * 2, 0))


def test_quasi_affine_address_that_simplifies_is_accepted():
    i = arange(8)[:, None]
    # (4i + 2) // 2 = 2i + 1 and (i + 8) % 8 - i = 0 because 0 <= i < 8
    ap = lower_access((16, 4), ((i * 4 + 2) // 2, (i + 8) % 8 - i + 2))
    assert ap.pattern == ((8, 8),) and ap.offset == 4 + 2
    a = np.arange(64).reshape(16, 4)
    np.testing.assert_array_equal(ap.gather(a).reshape(-1), a[np.arange(8) * 2 + 1, 2])


# ---- hypothesis: random tensors, subscripts and offsets vs numpy -----------------------------

@st.composite
def accesses(draw):
    """(tensor shape, NKI subscripts, equivalent numpy index, runtime env)."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 9)) for _ in range(rank))
    nki, npy, env = [], [], {}
    for k, d in enumerate(shape):
        kind = draw(st.sampled_from(["int", "slice", "ds", "dynds", "colon"]))
        if kind == "int":
            v = draw(st.integers(0, d - 1))
            nki.append(v)
            npy.append(v)
        elif kind == "colon":
            nki.append(slice(None))
            npy.append(slice(None))
        elif kind == "slice":
            start = draw(st.integers(0, d - 1))
            stop = draw(st.integers(start + 1, d))
            step = draw(st.integers(1, 3))
            nki.append(slice(start, stop, step))
            npy.append(slice(start, stop, step))
        else:
            size = draw(st.integers(1, d))
            if kind == "ds":
                start = draw(st.integers(0, d - size))
                nki.append(ds(start, size))
            else:
                s = scalar(f"s{k}_{d - size}", lo=0, hi=d - size)
                start = draw(st.integers(0, d - size))
                env[s.name] = start
                nki.append(ds(s, size))
            npy.append(slice(start, start + size))
    return shape, tuple(nki), tuple(npy), env


def _check(shape, nki_index, np_index, env, pattern):
    a = np.arange(int(np.prod(shape))).reshape(shape) * 7 + 3
    want = a[np_index].reshape(-1)
    got = pattern.gather(a, env).reshape(-1)
    np.testing.assert_array_equal(got, want)


@settings(max_examples=10)
@given(st.lists(accesses(), min_size=1, max_size=12))
def test_access_patterns_match_numpy_indexing(batch):
    instrs = [KernelInstruction(Access(shape, idx)) for shape, idx, _, _ in batch]
    result = infer_kernel(instrs)
    for (shape, idx, npy, env), inferred in zip(batch, result, strict=True):
        _check(shape, idx, npy, env, inferred.dst)


@settings(max_examples=10)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 5), st.integers(0, 5),
       st.integers(1, 3), st.integers(0, 4))
def test_arange_index_arithmetic_matches_numpy(p, f, r0, c0, scale, dyn):
    i_p, i_f = arange(p)[:, None], arange(f)[None, :]
    off = scalar("dyn", lo=0, hi=4)
    shape = (p * scale + r0 + 4 + 1, f + c0 + 1)
    ap = lower_access(shape, (i_p * scale + r0 + off, i_f + c0))
    a = np.arange(int(np.prod(shape))).reshape(shape)
    want = a[(np.arange(p) * scale + r0 + dyn)[:, None], (np.arange(f) + c0)[None, :]]
    np.testing.assert_array_equal(ap.gather(a, {"dyn": dyn}).reshape(want.shape), want)


def test_pipeline_end_to_end_in_one_egraph():
    n = scalar("rows", lo=1, hi=64)
    off = scalar("o", lo=0, hi=64)
    i_p, i_f = arange(64)[:, None], arange(32)[None, :]
    instrs = [
        KernelInstruction(Access((128, 64), (i_p + off, i_f + 32)), (Access((64, 32), (i_p, i_f)),),
                          (i_p < n,)),
        KernelInstruction(Access((128, 64), (ds(off, 64), slice(0, 32))),),
        KernelInstruction(Access((128, 64), (slice(0, n), i_f * 2))),
    ]
    solver = AffineSolver()
    result = infer_kernel(instrs, solver=solver)
    # every address and mask expression was solved by the kernel's one e-graph
    assert len(solver._results) >= 5
    assert result[0].dst.pattern == ((64, 64), (1, 32))
    assert result[0].srcs[0].pattern == ((32, 64), (1, 32))
    assert result[1].dst.pattern == result[0].dst.pattern
    assert result[2].dst.pattern == ((64, 64), (2, 32)) and result[2].dst.offset == 0
    assert result[1].mask is None
    np.testing.assert_array_equal(result[0].mask.evaluate({"rows": 10})[:, 0], np.arange(64) < 10)
    a = np.arange(128 * 64).reshape(128, 64)
    np.testing.assert_array_equal(result[0].dst.gather(a, {"o": 5}), a[5:69, 32:64])


@pytest.mark.slow
@settings(max_examples=150)
@given(st.lists(accesses(), min_size=1, max_size=30))
def test_access_patterns_match_numpy_indexing_many(batch):
    test_access_patterns_match_numpy_indexing.hypothesis.inner_test(batch)


def test_infer_kernel_builds_exactly_one_egraph(monkeypatch):
    import egraph_tiles.nki.index.kernel as kernel

    made = []
    real = kernel.AffineSolver

    def counting() -> real:
        made.append(1)
        return real()

    monkeypatch.setattr(kernel, "AffineSolver", counting)
    from egraph_tiles.nki.index.solver import clear_cache

    clear_cache()
    i_p = arange(16)[:, None]
    instrs = [KernelInstruction(Access((64, 8), (i_p + 16 * (k % 3), ds(k % 4, 4)))) for k in range(40)]
    result = infer_kernel(instrs)
    assert len(made) == 1 and len(result) == 40
    assert result[5].dst.offset == 16 * 2 * 8 + 1
