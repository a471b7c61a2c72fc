"""The ILP extractor: optimal DAG extraction where greedy tree-cost extraction is not."""

import math

from egraph_tiles.cost.ilp import ENode, SerializedEGraph, dag_cost, greedy, ilp
from dslkit import kernel


def _graph(spec: dict[str, tuple[str, str, tuple[str, ...], float]], roots: list[str]) -> SerializedEGraph:
    return SerializedEGraph({nid: ENode(op, c, ch, cost) for nid, (op, c, ch, cost) in spec.items()}, roots)


def _sharing_graph() -> SerializedEGraph:
    # root = f(A, B). A is a 5-byte copy `a_copy` or a free view `a_view(S)`; same for B.
    # S (the shared source) costs 5 and is paid once if both views are taken.
    return _graph({
        "f": ("f", "R", ("a_copy", "b_copy"), 1.0),
        "f2": ("f", "R", ("a_view", "b_view"), 1.0),
        "a_copy": ("copy", "A", (), 5.0),
        "a_view": ("view", "A", ("s",), 1.0),
        "b_copy": ("copy", "B", (), 5.0),
        "b_view": ("view", "B", ("s",), 1.0),
        "s": ("shared", "S", (), 5.0),
    }, ["R"])


def test_greedy_pays_a_shared_child_once_per_parent_and_so_picks_copies():
    g = greedy(_sharing_graph())
    assert g.choice["A"] == "a_copy" and g.choice["B"] == "b_copy"
    assert g.cost == 11.0


def test_ilp_counts_the_shared_child_once_and_finds_the_optimum():
    e = ilp(_sharing_graph())
    assert e.method == "ilp-optimal"
    assert e.choice["A"] == "a_view" and e.choice["B"] == "b_view" and e.choice["S"] == "s"
    assert e.cost == 8.0  # f + two views + the shared source once


def test_ilp_never_picks_a_cyclic_selection_even_when_it_is_cheaper():
    # class A = g(A) for free (a cycle) or a leaf of cost 3: only the leaf is a finite term.
    g = _graph({
        "root": ("r", "R", ("cyc",), 0.0),
        "cyc": ("g", "A", ("loop",), 0.0),
        "loop": ("h", "B", ("cyc",), 0.0),
        "leaf": ("leaf", "A", (), 3.0),
        "leafb": ("leafb", "B", (), 7.0),
    }, ["R"])
    e = ilp(g)
    assert e.cost == 3.0
    assert e.choice["A"] == "leaf"
    assert dag_cost(g, e.choice, ["R"], {n: g.nodes[n].cost for n in g.nodes}) == 3.0


def test_ilp_honours_an_infinite_cost_override_as_forbidden():
    e = ilp(_sharing_graph(), cost_fn=lambda nid, n: math.inf if n.op == "view" else n.cost)
    assert e.choice["A"] == "a_copy" and e.cost == 11.0


def test_ilp_with_no_solver_time_returns_a_selection_no_worse_than_greedy():
    e = ilp(_sharing_graph(), time_limit=0.0)
    assert e.method in ("greedy-fallback", "ilp-optimal", "ilp-feasible")
    assert e.cost <= 11.0


def test_ilp_reads_egglog_serialized_egraphs():
    from egglog import EGraph, Expr, i64Like, union

    class T(Expr):
        def __init__(self, v: i64Like) -> None: ...
        def __add__(self, o: "T") -> "T": ...

    eg = EGraph()
    eg.register(union(T(1) + T(2)).with_(T(3)))
    sg = SerializedEGraph.from_egglog(eg)
    root = next(n.eclass for n in sg.nodes.values() if n.op == "T" and
                sg.nodes[n.children[0]].op == "3")
    sg.roots = [root]
    e = ilp(sg)
    # T(3) needs two nodes (T and the literal); T(1) + T(2) needs five.
    assert e.cost == 2.0
    assert e.term(sg, root) == ("T", ("3",))


SHARED_HEAD = kernel("x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 8], pl.FP32]]", """
t = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
head: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, 3])
a = pl.tile.muls(head, 0.5)
b = pl.tile.adds(head, 1.0)
c = pl.tile.add(a, b)
out = pl.store(c, [0, 0], out)
return out
""", "pl.Tensor[[16, 8], pl.FP32]")


def test_ilp_extractor_plugs_into_the_engine_and_agrees_with_greedy_on_a_shared_copy():
    import egraph_tiles as et
    from egraph_tiles.cost.ilp import ILPExtractor
    from egraph_tiles.passes.canonicalize import Options

    prog = et.parse_program(SHARED_HEAD)
    ilp_x = ILPExtractor()
    got = et.optimize(prog, options=Options(extractor=ilp_x))
    et.assert_structural_equal(got, et.optimize(prog))
    assert ilp_x.last is not None and ilp_x.last.method == "ilp-optimal"
    assert ilp_x.last.cost <= ilp_x.last.greedy_cost
    text = et.print_program(got)
    assert text.count("pl.tile.extract(") == 1 and "pl.tile.slice(" not in text


def test_constructor_costs_are_read_from_datatype_and_constructor_declarations():
    from egraph_tiles.cost.ilp import parse_constructor_costs

    costs = parse_constructor_costs(
        "(datatype Tile (Leaf String) (Win Tile i64 :cost 1000) (Use Tile :unextractable))\n"
        "(constructor Copy (Tile String) Real :cost 7)")
    assert costs == {"Leaf": 1.0, "Win": 1000.0, "Use": math.inf, "Copy": 7.0}
