"""The benchmark corpus: deterministic, parseable, sized as asked, families as listed."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import egraph_tiles.dsl as dsl  # noqa: E402
from benchmarks.corpus import FAMILIES, MIXED, generate  # noqa: E402
from egraph_tiles.ir import walk  # noqa: E402


def test_same_family_size_and_seed_give_identical_text():
    assert generate(MIXED, 300, seed=7).text == generate(MIXED, 300, seed=7).text


def test_different_seeds_give_different_kernels():
    assert generate(MIXED, 300, seed=1).text != generate(MIXED, 300, seed=2).text


@pytest.mark.parametrize("family", [*FAMILIES, MIXED])
def test_every_family_parses_and_reaches_the_requested_statement_count(family):
    k = generate(family, 60, seed=0)
    prog = dsl.parse_program(k.text, filename=f"{k.name}.py")
    n = sum(1 for _ in walk(prog.functions[0].body))
    assert n == k.statements
    assert 60 <= n < 60 + 40  # one block of overshoot at most


def test_a_ten_statement_kernel_is_small():
    k = generate("head_unaligned", 10, seed=0)
    assert 10 <= k.statements <= 20


def test_extra_proof_families_are_the_three_named_in_the_issue():
    assert {f.name for f in FAMILIES.values() if f.extra_proof} == {
        "loop_multiple", "affine_offsets", "shared_window"}


def test_affine_family_writes_the_unnormalised_offset():
    assert "* 16 + 8) - 8" in generate("affine_offsets", 200, seed=0).text


def test_unknown_family_is_rejected_with_the_known_names():
    with pytest.raises(ValueError, match="batched_matmul"):
        generate("nope", 10)


def test_the_families_the_issue_lists_are_all_generated():
    assert {"batched_matmul", "norm_rows", "attention_cols", "head_unaligned", "acc_windows",
            "loop_carry", "branches"} <= set(FAMILIES)


@pytest.mark.parametrize("family, marker", [
    ("batched_matmul", "pl.Mem.Mat"),
    ("norm_rows", "pl.tile.col_expand"),
    ("acc_windows", "pl.tile.matmul_acc("),
    ("loop_carry", "init_values="),
    ("branches", "if "),
])
def test_each_family_writes_its_characteristic_construct(family, marker):
    assert marker in generate(family, 60, seed=0).text


def test_ten_thousand_statement_kernel_is_deterministic_and_sized():
    a, b = generate(MIXED, 10_000, seed=3), generate(MIXED, 10_000, seed=3)
    assert a.text == b.text
    assert 10_000 <= a.statements < 10_000 + 40
