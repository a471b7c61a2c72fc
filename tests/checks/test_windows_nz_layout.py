"""The contiguity rule (``w-noncontiguous`` in ``rules/windows.py``) against the NZ layout itself.

Model (seed: "block (r_b, c_b) of an [M, N] tile sits at (c_b * M/16 + r_b) * fractal"; "the
MAD writes its destination compactly from a bare pointer with no destination stride"):

* element (i, j) of an [M, N] Acc tile is at ((j//16) * M/16 + i//16) * 256 + (i%16) * 16 + j%16;
* the MAD writes an R x C result as a compact NZ tile of its own starting at the window's first
  element: element (i, j) at ((j//16) * R/16 + i//16) * 256 + (i%16) * 16 + j%16.

A window is written correctly iff every element lands where the parent keeps it.  The exhaustive
sweep covers every parent with M, N in {16, 32, 48}, every window on whole row fractals (R and
the row offset multiples of 16 — the MAD writes whole 16-row fractals), and every column extent
and column offset.  The rule is run by egglog itself, on ``w_probe`` facts.
"""

from __future__ import annotations

import numpy as np
import pytest

from egraph_tiles.checks.windows import run_rules

SIZES = (16, 32, 48)


def parent_addr(m: int, n: int) -> np.ndarray:
    i, j = np.indices((m, n))
    return ((j // 16) * (m // 16) + i // 16) * 256 + (i % 16) * 16 + j % 16


def compact_addr(r: int, c: int) -> np.ndarray:
    i, j = np.indices((r, c))
    return ((j // 16) * (r // 16) + i // 16) * 256 + (i % 16) * 16 + j % 16


def windows():
    for m in SIZES:
        for n in SIZES:
            for r in range(16, m + 1, 16):
                for c in range(1, n + 1):
                    for c0 in range(0, n - c + 1):
                        yield m, n, r, c, c0


@pytest.fixture(scope="module")
def verdicts() -> list[tuple[tuple[int, int, int, int, int, int], bool, bool]]:
    """(window, contiguous in the NZ model, rejected by the egglog rule) for every window."""
    parents = {(m, n): k for k, (m, n) in enumerate((m, n) for m in SIZES for n in SIZES)}
    facts: dict[str, list[tuple]] = {"w_tile": [], "w_dim": []}
    for (m, n), p in parents.items():
        facts["w_tile"].append((p, "Acc", 32, 2))
        facts["w_dim"] += [(p, 0, m), (p, 1, n)]
    facts["w_probe"] = [(parents[m, n], r, c, c0) for m, n, r, c, c0 in windows()]
    _, rows = run_rules(facts)
    rejected = {tuple(row) for row in rows["w_noncontig"]}

    out = []
    addrs = {(m, n): parent_addr(m, n) for m in SIZES for n in SIZES}
    for m, n, r, c, c0 in windows():
        compact = compact_addr(r, c)
        for r0 in range(0, m - r + 1, 16):
            block = addrs[m, n][r0:r0 + r, c0:c0 + c]
            contiguous = bool(np.array_equal(block - block[0, 0], compact))
            out.append(((m, n, r, c, r0, c0), contiguous, (parents[m, n], r, c, c0) in rejected))
    return out


def test_model_sees_a_full_row_window_starting_mid_block_as_miswritten():
    # [16, 16] at [0, 8] of [16, 64]: spans every row, but crosses the block boundary at 16
    block = parent_addr(16, 64)[0:16, 8:24]
    assert not np.array_equal(block - block[0, 0], compact_addr(16, 16))


def test_model_sees_the_seed_row_window_as_miswritten():
    # [16, 32] at [16, 0] of [32, 32]: the second block column lands in the wrong row tile
    block = parent_addr(32, 32)[16:32, 0:32]
    assert not np.array_equal(block - block[0, 0], compact_addr(16, 32))


def test_sweep_is_exhaustive_over_the_scope(verdicts):
    assert len(verdicts) == 18400


def test_rule_matches_nz_contiguity_on_every_window_in_scope(verdicts):
    # rejected exactly when the compact NZ write does not land on the window's own elements
    mismatched = [(w, ok) for w, ok, rej in verdicts if ok == rej]
    assert mismatched == []


def test_rule_never_rejects_a_contiguous_window(verdicts):
    too_strict = [w for w, ok, rej in verdicts if ok and rej]
    assert too_strict == []


def test_rule_rejects_every_partial_row_window_that_is_not_contiguous(verdicts):
    missed = [w for w, ok, rej in verdicts if not ok and not rej and w[2] < w[0]]
    assert missed == []


def test_rule_rejects_every_full_row_window_that_starts_mid_block_and_crosses_a_block(verdicts):
    # w-noncontiguous-mid-block: the 2,880 windows the seed's rule accepted but the NZ layout
    # writes wrong (all rows, column offset not a multiple of 16, crossing a block boundary)
    mid_block = [(w, ok, rej) for w, ok, rej in verdicts
                 if w[2] == w[0] and w[5] % 16 != 0 and w[5] // 16 != (w[5] + w[3] - 1) // 16]
    assert len(mid_block) == 2880
    assert all(not ok and rej for _, ok, rej in mid_block)


def test_full_row_window_at_a_block_aligned_column_offset_is_accepted(verdicts):
    aligned = [(w, ok, rej) for w, ok, rej in verdicts if w[2] == w[0] and w[5] % 16 == 0]
    assert aligned and all(ok and not rej for _, ok, rej in aligned)


# ---------------------------------------------------------------------- positive proofs, dynamic
# offsets, any element width, batch parents


@pytest.fixture(scope="module")
def proofs() -> dict[str, set[tuple[int, ...]]]:
    """The egglog verdicts for every in-scope window of every parent kind: a 2-D FP32, a 2-D FP16
    and a 3-D (batch, [2, M, N]) INT32 parent of each size; ``w_contig`` for constant offsets and
    ``w_dyn_contig`` for a dynamic offset with each known multiple."""
    facts: dict[str, list[tuple]] = {"w_tile": [], "w_dim": []}
    kinds = {}
    for (m, n) in ((m, n) for m in SIZES for n in SIZES):
        for kind, bits, dims in (("fp32", 32, (m, n)), ("fp16", 16, (m, n)), ("batch", 32, (2, m, n))):
            p = len(kinds)
            kinds[p] = (kind, m, n)
            facts["w_tile"].append((p, "Acc", bits, len(dims)))
            facts["w_dim"] += [(p, i, d) for i, d in enumerate(dims)]
    facts["w_probe"] = [(p, r, c, c0) for p, (_, m, n) in kinds.items()
                        for mm, nn, r, c, c0 in windows() if (mm, nn) == (m, n)]
    facts["w_dprobe"] = [(p, r, c, mult) for p, (_, m, n) in kinds.items()
                         for r in range(16, m + 1, 16) for c in range(1, n + 1) for mult in MULTS]
    _, rows = run_rules(facts)
    return {"kinds": kinds, "contig": {tuple(x) for x in rows["w_contig"]},
            "noncontig": {tuple(x) for x in rows["w_noncontig"]},
            "dyn": {tuple(x) for x in rows["w_dyn_contig"]}}


MULTS = (1, 2, 4, 8, 16, 32)


def _contiguous(m: int, n: int, r: int, c: int, c0: int) -> bool:
    compact = compact_addr(r, c)
    addrs = parent_addr(m, n)
    for r0 in range(0, m - r + 1, 16):
        block = addrs[r0:r0 + r, c0:c0 + c]
        if not np.array_equal(block - block[0, 0], compact):
            return False
    return True


def test_positive_rule_proves_exactly_the_contiguous_windows_for_every_parent_kind(proofs):
    # w_contig (what accepts a window) holds exactly when the NZ model writes it right, for FP32,
    # FP16 and batch-page parents alike (the NZ blocks are 16 x 16 elements whatever the width;
    # a batch page is an NZ tile of its own); w_noncontig (the message's reason) is its complement
    wrong = []
    for p, (kind, m, n) in proofs["kinds"].items():
        for mm, nn, r, c, c0 in windows():
            if (mm, nn) != (m, n):
                continue
            ok = _contiguous(m, n, r, c, c0)
            if ok != ((p, r, c, c0) in proofs["contig"]) or ok == ((p, r, c, c0) in proofs["noncontig"]):
                wrong.append((kind, m, n, r, c, c0, ok))
    assert wrong == []


def test_batch_page_layout_is_the_2d_layout_per_page():
    # the hardware model's rank-3 Acc tile: page b at b * M * N elements, each page NZ
    from egraph_tiles.sim.hardware import nz_index, nz_index_batch

    idx = nz_index_batch(3, 32, 48)
    assert idx.shape == (3, 32, 48)
    for b in range(3):
        assert np.array_equal(idx[b], b * 32 * 48 + nz_index(32, 48))


def test_dynamic_rule_proves_a_multiple_only_when_every_offset_it_allows_is_contiguous(proofs):
    # w_dyn_contig (p, R, C, mult) accepts every in-bounds column offset that is a multiple of
    # mult; the sweep checks all of them in every parent of every size — and that the rule
    # accepts whenever every in-bounds offset the multiple allows is contiguous (exact)
    wrong = []
    for p, (kind, m, n) in proofs["kinds"].items():
        for r in range(16, m + 1, 16):
            for c in range(1, n + 1):
                for mult in MULTS:
                    offs = range(0, n - c + 1, mult)  # every in-bounds offset a multiple allows
                    ok = all(_contiguous(m, n, r, c, c0) for c0 in offs)
                    if ((p, r, c, mult) in proofs["dyn"]) != ok:
                        wrong.append((kind, m, n, r, c, mult, ok))
    assert wrong == []
