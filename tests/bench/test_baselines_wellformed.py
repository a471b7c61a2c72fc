"""The baseline strategies produce verified, parseable programs with the promised shape."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import egraph_tiles as et  # noqa: E402
from benchmarks.corpus import FAMILIES, MIXED, generate  # noqa: E402
from egraph_tiles.passes.baselines import STRATEGIES, copy_everything, view_everything, windows_of  # noqa: E402
from egraph_tiles.ir import MemorySpace  # noqa: E402
from egraph_tiles.cost.metrics import bytes_copied  # noqa: E402
from dslkit import kernel

FAMS = [*FAMILIES, MIXED]


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("family", FAMS)
def test_baseline_output_verifies_and_round_trips_through_the_printer(strategy, family):
    prog = et.parse_program(generate(family, 40, seed=3).text)
    out = et.verify_program(STRATEGIES[strategy](prog))
    et.assert_structural_equal(et.parse_program(et.print_program(out)), out)


@pytest.mark.parametrize("family", FAMS)
def test_copy_everything_leaves_no_vec_window(family):
    out = copy_everything(et.parse_program(generate(family, 40, seed=3).text))
    assert [w.var.name for w in windows_of(out) if w.memory is MemorySpace.Vec] == []


@pytest.mark.parametrize("family", FAMS)
def test_copy_everything_copies_at_least_as_many_bytes_as_the_seed_policy(family):
    prog = et.parse_program(generate(family, 40, seed=3).text)
    assert bytes_copied(prog, copy_everything(prog)) >= bytes_copied(prog, STRATEGIES["seed-policy"](prog))


def test_view_everything_is_the_input_as_written():
    prog = et.parse_program(generate(MIXED, 40, seed=3).text)
    assert view_everything(prog) is prog


COPY_KERNEL = kernel("x: pl.Tensor[[16, 64], pl.FP32]", """
t = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
aligned: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, 8])
a = pl.tile.muls(aligned, 0.5)
b = pl.tile.adds(aligned, 1.0)
return b
""")


def test_copy_everything_copies_even_an_aligned_window_once_per_consumer():
    text = et.print_program(copy_everything(et.parse_program(COPY_KERNEL)))
    assert text.count("pl.tile.extract(t, 0, 8, shape=[16, 8], target_memory=pl.Mem.Vec)") == 2
    assert "pl.tile.slice(" not in text
