"""The extraction root tree (``schedule.root_tree``): a balanced binary tree of ``RP`` nodes
over the function's roots, loaded with the program's rows before saturation.  No rule reads it,
so the saturated e-graph's e-node count (which leaves the tree out) and the extracted term are
those of loading it after saturation, in a second load."""

from pathlib import Path

import pytest

import egraph_tiles as et
from egraph_tiles.egraph import schedule
from egraph_tiles.egraph.encode import encode_function
from egraph_tiles.egraph.extract import GreedyExtractor
from egraph_tiles.egraph.loops import CostModel, hoist_facts
from egraph_tiles.ir.effects import function_effects

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_root_tree_pairs_the_roots_level_by_level():
    root, rows = schedule.root_tree([("R", 5), ("RT", 7), ("R", 9)])
    assert rows == {"RootRRow": [(1, 5), (3, 9)], "RootTRow": [(2, 7)],
                    "RootPairRow": [(4, 1, 2), (5, 4, 3)]}
    assert root == 5


def _saturated_and_extracted(text: str, roots_first: bool) -> list[tuple]:
    """(e-nodes, iterations, saturated, extracted term) of each function with a window."""
    program = et.parse_program(text)
    out = []
    for fn in program.functions:
        fx = function_effects(fn)
        enc = encode_function(fn, fx, program) if fn.func_type.is_incore else None
        if enc is None or not enc.windows:
            continue
        rows = {**enc.rows, **hoist_facts(fn, fx, enc, CostModel()).rows}
        root, tree = schedule.root_tree([ref for ref, _ in enc.roots])
        eg = schedule.new_egraph()
        try:
            schedule.load_tables(eg, {**rows, **tree} if roots_first else rows)
            stats = schedule.saturate(eg, schedule.Limits(), uncounted=schedule.ROOT_TABLES)
            if not roots_first:
                schedule.load_tables(eg, tree)
            out.append((stats.enodes, stats.iterations, stats.saturated,
                        GreedyExtractor().extract(eg, root)))
        finally:
            schedule.release(eg)
    return out


@pytest.mark.parametrize("example", ["unaligned_column.py", "rmsnorm_heads.py",
                                     "matmul_k_loop.py"])
def test_the_root_tree_loaded_before_saturation_changes_neither_count_nor_term(example):
    text = (EXAMPLES / example).read_text()
    early = _saturated_and_extracted(text, roots_first=True)
    assert early and early == _saturated_and_extracted(text, roots_first=False)
