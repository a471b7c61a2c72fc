"""The extraction root tree (``schedule.root_tree``): a balanced tree of 8-child nodes over the
function's roots (``RPR`` over uses and extract terms, ``RPT`` over windows, ``RU`` over nodes),
loaded with the program's rows before saturation.  No rule reads it, so the saturated e-graph's
e-node count (which leaves the tree out) and the extracted term are those of loading it after
saturation, in a second load."""

from pathlib import Path

import pytest

from canon_helpers import engine_rows
from egraph_tiles.egraph import schedule
from egraph_tiles.egraph.extract import GreedyExtractor, RootTree, root_terms

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_root_tree_groups_uses_then_windows_by_eight_level_by_level():
    # a root is its own term (NR k) / (NT k); nodes count down from -1, led by 0 over uses, 1
    # over windows, 2 over nodes; a node short of children repeats its last one
    refs = [("RT" if i % 3 == 2 else "R", 10 + i) for i in range(14)]  # 10 uses, 4 windows
    tree, rows = schedule.root_tree(refs)
    uses = [10, 11, 13, 14, 16, 17, 19, 20, 22, 23]
    assert rows == {"RootNodeRow": [(0, -1, *uses[:8]), (0, -2, 22, 23, *[23] * 6),
                                    (1, -3, 12, 15, 18, 21, *[21] * 4),
                                    (2, -4, -1, -2, -3, *[-3] * 5)]}
    assert tree == RootTree(-4, (8, 2, 4), tuple(
        [i for i in range(14) if i % 3 != 2] + [i for i in range(14) if i % 3 == 2]))


def test_a_lone_last_node_moves_up_a_level_as_it_is():
    tree, rows = schedule.root_tree([("R", 100 + i) for i in range(65)])  # 9 nodes over uses
    assert [n[:2] for n in rows["RootNodeRow"][9:]] == [(2, -10), (2, -11)]
    assert rows["RootNodeRow"][10][2:] == (-10, -9, *[-9] * 6)
    assert (tree.node, tree.shape) == (-11, ((8,) * 8, 1))


def test_no_root_is_an_empty_tree():
    assert schedule.root_tree([]) == (RootTree(0, 0, ()), {"RootNodeRow": []})
    assert GreedyExtractor().extract(None, RootTree(0, 0, ())) == (0, [])


def test_the_roots_come_back_in_the_programs_order_without_padding():
    tree = RootTree(-3, (2, 1), (0, 2, 1))
    term = ("RU", ("RPR", ("a",), ("c",), ("c",)), ("RPT", ("b",), ("b",)), ("RPT", ("b",)))
    assert root_terms(tree, term) == [("a",), ("b",), ("c",)]


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
def test_the_root_tree_extracts_to_the_roots_in_order(n):
    rows, refs, terms = _windows(n)
    root, tree = schedule.root_tree(refs)
    eg = schedule.new_egraph()
    try:
        schedule.load_tables(eg, {**rows, **tree})
        assert GreedyExtractor().extract(eg, root)[1] == terms
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
