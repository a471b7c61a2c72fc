"""The extraction root tree (``schedule.root_tree``): a balanced tree of 8-child nodes (``RP``
over the function's roots, ``RU`` over nodes), loaded with the program's rows before
saturation.  No rule reads it, so the saturated e-graph's e-node count (which leaves the tree
out) and the extracted term are those of loading it after saturation, in a second load."""

from pathlib import Path

import pytest

from canon_helpers import engine_rows
from egraph_tiles.egraph import schedule
from egraph_tiles.egraph.extract import GreedyExtractor, flatten_roots

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_root_tree_groups_the_roots_by_eight_level_by_level():
    # a root is the leaf (NRoot k) of its own term; inner nodes count down from -1, led by 0
    # over leaves and 1 over nodes; a node short of children is filled with the padding leaf 0
    refs = [("RT" if i % 2 else "R", 10 + i) for i in range(9)]
    root, rows = schedule.root_tree(refs)
    assert rows == {"RootNodeRow": [(0, -1, *range(10, 18)), (0, -2, 18, *[0] * 7),
                                    (1, -3, -1, -2, *[0] * 6)]}
    assert root == -3
    assert schedule.root_tree([("R", 5)]) == (5, {"RootNodeRow": []})
    assert schedule.root_tree([]) == (-1, {"RootNodeRow": [(0, -1, *[0] * 8)]})


def test_a_lone_last_node_moves_up_a_level_as_it_is():
    refs = [("R", 100 + i) for i in range(65)]  # 9 nodes over leaves, the last over one
    root, rows = schedule.root_tree(refs)
    nodes = rows["RootNodeRow"]
    assert [n[:2] for n in nodes[9:]] == [(1, -10), (1, -11)]
    assert nodes[9][2:] == tuple(range(-1, -9, -1)) and nodes[10][2:] == (-10, -9, *[0] * 6)
    assert root == -11


def _windows(n: int) -> tuple[dict[str, list[tuple]], list[tuple[str, int]], list[tuple]]:
    """Rows of ``n`` windows of one leaf (window i is i + 1 columns wide), the roots (window i
    itself when i is even, a tile.extract of it when odd) and the term each root extracts to."""
    rows: dict[str, list[tuple]] = {"FreshLeafRow": [(1, "t1", "Vec", 32, 512, 3)],
                                    "IdxLitRow": [(2, 0), (3, 512)], "WinRow": [], "ExtRow": []}
    refs, terms = [], []
    zero = ("Lit", 0)
    for i in range(n):
        rows["WinRow"].append((1000 + i, 1, 2, 2, 1, i + 1))
        win = ("Win", ("Leaf", "t1"), zero, zero, 1, i + 1)
        if i % 2:
            rows["ExtRow"].append((2000 + i, 1000 + i, 2, 2))
            refs.append(("R", 2000 + i))
            terms.append(("Ext", win, zero, zero))
        else:
            refs.append(("RT", 1000 + i))
            terms.append(win)
    return rows, refs, terms


@pytest.mark.parametrize("n", [0, 1, 2, 9, 100])
def test_the_root_tree_flattens_back_to_the_roots_in_order(n):
    rows, refs, terms = _windows(n)
    root, tree = schedule.root_tree(refs)
    eg = schedule.new_egraph()
    try:
        schedule.load_tables(eg, {**rows, **tree})
        assert flatten_roots(GreedyExtractor().extract(eg, root)[1]) == terms
    finally:
        schedule.release(eg)


def _saturated_and_extracted(text: str, roots_first: bool) -> list[tuple]:
    """(e-nodes, iterations, saturated, extracted term) of each function with a window."""
    out = []
    for enc, rows in engine_rows(text):
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
