"""ILP-optimal DAG extraction over a serialized e-graph, with ``highspy``.

The extractor works on a neutral form, :class:`SerializedEGraph`: e-nodes with an op,
an e-class, child *node* ids and a cost — exactly egglog's ``EGraph._serialize()``
JSON (the egraph-serialize format), so any e-graph the engine builds can be handed
over with :func:`SerializedEGraph.from_egglog` and solved here.

Formulation (one binary per e-node ``x_n``, one per e-class ``y_c``, one continuous
level per e-class ``l_c``):

* every root class is chosen: ``y_r = 1``;
* a chosen class picks exactly one of its nodes: ``sum_{n in c} x_n = y_c``;
* a picked node requires each child class: ``x_n <= y_d``;
* acyclicity: a picked node's class sits strictly above its children's classes,
  ``l_d >= l_c + 1 - K (1 - x_n)`` with ``K`` the number of classes (big-M);
  a node that is its own child can never be picked;
* objective: ``sum cost_n x_n`` — a node shared by several parents is paid once,
  which is the whole point over greedy tree-cost extraction.

The solve is time-limited; if HiGHS returns no solution (or a worse one than greedy)
the greedy bottom-up extraction is returned instead and the result says so.
"""

from __future__ import annotations

import importlib
import json
import math
import pkgutil
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import highspy
import numpy as np

import egraph_tiles.rules as rules_package

from ..egraph.extract import RootTree, root_terms

NodeId = str
ClassId = str


@dataclass(frozen=True)
class ENode:
    op: str
    eclass: ClassId
    children: tuple[NodeId, ...]
    cost: float


@dataclass
class SerializedEGraph:
    """E-nodes by id and the root e-classes to extract."""

    nodes: dict[NodeId, ENode]
    roots: list[ClassId] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any] | str, roots: Iterable[ClassId] = ()) -> SerializedEGraph:
        """From egraph-serialize JSON (``{"nodes": {...}, "root_eclasses": [...]}``)."""
        if isinstance(data, str):
            data = json.loads(data)
        nodes = {
            nid: ENode(str(n["op"]), str(n["eclass"]), tuple(n.get("children", ())),
                       float(n.get("cost", 1.0)))
            for nid, n in data["nodes"].items()
        }
        rs = list(roots) or [str(r) for r in data.get("root_eclasses", [])]
        return cls(nodes, rs)

    @classmethod
    def from_egglog(cls, egraph: Any, roots: Iterable[ClassId] = ()) -> SerializedEGraph:
        """From a high-level ``egglog.EGraph`` (via ``_serialize().to_json()``)."""
        return cls.from_json(egraph._serialize().to_json(), roots)

    def classes(self) -> dict[ClassId, list[NodeId]]:
        out: dict[ClassId, list[NodeId]] = {}
        for nid, n in self.nodes.items():
            out.setdefault(n.eclass, []).append(nid)
        return out

    def child_classes(self, nid: NodeId) -> tuple[ClassId, ...]:
        """The distinct e-classes of a node's children, in first-seen order."""
        seen: dict[ClassId, None] = {}
        for ch in self.nodes[nid].children:
            seen.setdefault(self.nodes[ch].eclass, None)
        return tuple(seen)


CostFn = Callable[[NodeId, ENode], float]


@dataclass
class Extraction:
    """One chosen node per needed e-class, and what that selection costs as a DAG."""

    choice: dict[ClassId, NodeId]
    cost: float
    method: str  # "ilp-optimal", "ilp-feasible" (time limit hit), "greedy", "greedy-fallback"
    seconds: float = 0.0
    num_nodes: int = 0
    num_classes: int = 0
    greedy_cost: float = math.nan  # the greedy selection's DAG cost on the same roots

    def term(self, graph: SerializedEGraph, root: ClassId) -> Any:
        """The chosen term under ``root`` as nested ``(op, *children)`` tuples (shared
        subterms are the same Python object)."""
        memo: dict[ClassId, Any] = {}

        def build(c: ClassId) -> Any:
            if c in memo:
                return memo[c]
            n = graph.nodes[self.choice[c]]
            t = (n.op, *(build(graph.nodes[ch].eclass) for ch in n.children))
            memo[c] = t
            return t

        return build(root)


def _costs(graph: SerializedEGraph, cost_fn: CostFn | None) -> dict[NodeId, float]:
    if cost_fn is None:
        return {nid: n.cost for nid, n in graph.nodes.items()}
    return {nid: float(cost_fn(nid, n)) for nid, n in graph.nodes.items()}


def dag_cost(graph: SerializedEGraph, choice: dict[ClassId, NodeId], roots: Iterable[ClassId],
             costs: dict[NodeId, float]) -> float:
    """Cost of a selection counted as a DAG: every reachable chosen node paid once.
    ``math.inf`` when the selection is cyclic or misses a needed class."""
    total = 0.0
    state: dict[ClassId, int] = {}  # 1 = on stack, 2 = done
    for r in roots:
        stack: list[tuple[ClassId, int]] = [(r, 0)]
        while stack:
            c, i = stack.pop()
            if i == 0:
                if state.get(c) == 2:
                    continue
                if state.get(c) == 1 or c not in choice:
                    return math.inf
                state[c] = 1
                total += costs[choice[c]]
            kids = graph.child_classes(choice[c])
            if i < len(kids):
                stack.append((c, i + 1))
                k = kids[i]
                if state.get(k) == 1:
                    return math.inf
                if state.get(k) != 2:
                    stack.append((k, 0))
            else:
                state[c] = 2
    return total


def greedy(graph: SerializedEGraph, cost_fn: CostFn | None = None) -> Extraction:
    """Bottom-up extraction by tree cost (egglog's default): each class takes the node
    minimising own cost + the best cost of each child class, to a fixpoint."""
    t0 = time.perf_counter()
    costs = _costs(graph, cost_fn)
    best: dict[ClassId, tuple[float, NodeId]] = {}
    parents: dict[ClassId, list[NodeId]] = {}
    kids = {nid: graph.child_classes(nid) for nid in graph.nodes}
    for nid, ks in kids.items():
        for k in ks:
            parents.setdefault(k, []).append(nid)
    work = [nid for nid, ks in kids.items() if not ks]
    while work:
        nxt: dict[NodeId, None] = {}
        for nid in work:
            c0 = costs[nid]
            if math.isinf(c0):
                continue
            if any(k not in best for k in kids[nid]):
                continue
            c = c0 + sum(best[k][0] for k in kids[nid])
            cls = graph.nodes[nid].eclass
            if cls not in best or c < best[cls][0]:
                best[cls] = (c, nid)
                for p in parents.get(cls, ()):
                    nxt[p] = None
        work = list(nxt)
    choice = {c: n for c, (_, n) in best.items()}
    missing = [r for r in graph.roots if r not in choice]
    if missing:
        raise ValueError(f"no finite-cost term for root classes {missing}")
    choice = _reachable_choice(graph, choice, graph.roots)
    cost = dag_cost(graph, choice, graph.roots, costs)
    return Extraction(choice, cost, "greedy", time.perf_counter() - t0, len(graph.nodes),
                      len(graph.classes()), cost)


def _reachable_choice(graph: SerializedEGraph, choice: dict[ClassId, NodeId],
                      roots: Iterable[ClassId]) -> dict[ClassId, NodeId]:
    out: dict[ClassId, NodeId] = {}
    stack = list(roots)
    while stack:
        c = stack.pop()
        if c in out:
            continue
        out[c] = choice[c]
        stack.extend(k for k in graph.child_classes(choice[c]) if k not in out)
    return out


def _relevant(graph: SerializedEGraph, costs: dict[NodeId, float]) -> tuple[list[ClassId], list[NodeId]]:
    """Classes reachable from the roots through usable nodes, and those usable nodes.
    A node is usable when its cost is finite, it is not its own child, and every child
    class has a usable node (computed bottom-up to a fixpoint)."""
    classes = graph.classes()
    kids = {nid: graph.child_classes(nid) for nid in graph.nodes}
    ok_class: set[ClassId] = set()
    changed = True
    while changed:
        changed = False
        for nid, n in graph.nodes.items():
            if n.eclass in ok_class or math.isinf(costs[nid]) or n.eclass in kids[nid]:
                continue
            if all(k in ok_class for k in kids[nid]):
                ok_class.add(n.eclass)
                changed = True
    usable = {nid for nid, n in graph.nodes.items()
              if not math.isinf(costs[nid]) and n.eclass not in kids[nid]
              and all(k in ok_class for k in kids[nid])}
    seen: dict[ClassId, None] = {}
    stack = [r for r in graph.roots]
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen[c] = None
        for nid in classes.get(c, ()):
            if nid in usable:
                stack.extend(k for k in kids[nid] if k not in seen)
    rel_nodes = [nid for c in seen for nid in classes.get(c, ()) if nid in usable]
    return list(seen), rel_nodes


def ilp(graph: SerializedEGraph, cost_fn: CostFn | None = None, time_limit: float = 10.0,
        threads: int = 1) -> Extraction:
    """The cheapest DAG extraction of ``graph.roots``, by integer programming."""
    t0 = time.perf_counter()
    costs = _costs(graph, cost_fn)
    fallback = greedy(graph, cost_fn)
    classes, nodes = _relevant(graph, costs)
    cidx = {c: i for i, c in enumerate(classes)}
    nn, nc = len(nodes), len(classes)
    # columns: x_n (nn), y_c (nc), l_c (nc)
    x0, y0, l0 = 0, nn, nn + nc
    ncol = nn + 2 * nc
    col_cost = np.zeros(ncol)
    col_cost[:nn] = [costs[n] for n in nodes]
    lower = np.zeros(ncol)
    upper = np.ones(ncol)
    upper[l0:] = max(nc - 1, 0)
    for r in graph.roots:
        lower[y0 + cidx[r]] = 1.0
    rows_lo: list[float] = []
    rows_hi: list[float] = []
    starts: list[int] = [0]
    index: list[int] = []
    value: list[float] = []

    def row(lo: float, hi: float, entries: list[tuple[int, float]]) -> None:
        rows_lo.append(lo)
        rows_hi.append(hi)
        for i, v in entries:
            index.append(i)
            value.append(v)
        starts.append(len(index))

    members: dict[int, list[int]] = {}
    for j, nid in enumerate(nodes):
        members.setdefault(cidx[graph.nodes[nid].eclass], []).append(j)
    for ci in range(nc):
        row(0.0, 0.0, [(x0 + j, 1.0) for j in members.get(ci, [])] + [(y0 + ci, -1.0)])
    big = float(nc)
    for j, nid in enumerate(nodes):
        ci = cidx[graph.nodes[nid].eclass]
        for k in graph.child_classes(nid):
            di = cidx[k]
            row(-math.inf, 0.0, [(x0 + j, 1.0), (y0 + di, -1.0)])  # x_n <= y_d
            # l_d - l_c - K x_n >= 1 - K
            row(1.0 - big, math.inf, [(l0 + di, 1.0), (l0 + ci, -1.0), (x0 + j, -big)])

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("threads", int(threads))
    lp = highspy.HighsLp()
    lp.num_col_ = ncol
    lp.num_row_ = len(rows_lo)
    lp.col_cost_ = col_cost
    lp.col_lower_ = lower
    lp.col_upper_ = upper
    inf = h.getInfinity()
    lp.row_lower_ = np.array([max(v, -inf) for v in rows_lo])
    lp.row_upper_ = np.array([min(v, inf) for v in rows_hi])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * (nn + nc) + \
        [highspy.HighsVarType.kContinuous] * nc
    h.setOptionValue("mip_rel_gap", 0.0)  # the default 1e-4 gap accepts worse than greedy
    h.setOptionValue("mip_abs_gap", 1e-6)
    h.passModel(lp)
    start = _warm_start(graph, fallback.choice, nodes, classes, cidx)
    if start is not None:
        sol0 = highspy.HighsSolution()
        sol0.col_value = start
        sol0.value_valid = True
        h.setSolution(sol0)
    h.run()
    status = h.getModelStatus()
    sol = h.getSolution()
    elapsed = time.perf_counter() - t0
    have = sol.value_valid and status in (highspy.HighsModelStatus.kOptimal,
                                          highspy.HighsModelStatus.kTimeLimit,
                                          highspy.HighsModelStatus.kInterrupt)
    if have:
        xs = sol.col_value
        choice = {graph.nodes[nid].eclass: nid for j, nid in enumerate(nodes) if xs[x0 + j] > 0.5}
        if all(r in choice for r in graph.roots):
            choice = _reachable_choice(graph, choice, graph.roots)
            c = dag_cost(graph, choice, graph.roots, costs)
            if c <= fallback.cost:
                method = "ilp-optimal" if status == highspy.HighsModelStatus.kOptimal else "ilp-feasible"
                return Extraction(choice, c, method, elapsed, len(graph.nodes),
                                  len(graph.classes()), fallback.cost)
    fallback.greedy_cost = fallback.cost
    fallback.method = "greedy-fallback"
    fallback.seconds = elapsed
    return fallback


def _warm_start(graph: SerializedEGraph, choice: dict[ClassId, NodeId], nodes: list[NodeId],
                classes: list[ClassId], cidx: dict[ClassId, int]) -> list[float] | None:
    """The greedy selection as a feasible MIP start (levels: a topological order)."""
    nn, nc = len(nodes), len(classes)
    pos = {n: j for j, n in enumerate(nodes)}
    if any(n not in pos for n in choice.values()):
        return None
    vals = [0.0] * (nn + 2 * nc)
    order: list[ClassId] = []  # post-order: children first
    seen: set[ClassId] = set()
    for r in graph.roots:
        stack: list[tuple[ClassId, bool]] = [(r, False)]
        while stack:
            c, done = stack.pop()
            if done:
                order.append(c)
                continue
            if c in seen:
                continue
            seen.add(c)
            stack.append((c, True))
            stack.extend((k, False) for k in graph.child_classes(choice[c]) if k not in seen)
    for i, c in enumerate(reversed(order)):  # parents get smaller levels than children
        vals[pos[choice[c]]] = 1.0
        vals[nn + cidx[c]] = 1.0
        vals[nn + nc + cidx[c]] = float(i)
    return vals


# ------------------------------------------------------------------ the engine's Extractor


def _literal(op: str) -> object:
    """A primitive node's op as the Python value egglog's TermDag reports for it."""
    try:
        return json.loads(op)
    except ValueError:
        return op


class ILPExtractor:
    """The engine's ``Extractor`` interface (``egraph_tiles.egraph.extract``), solved by ILP:
    ``Options(extractor=ILPExtractor())``.

    Reads the low-level e-graph through egglog's serializer. Node costs follow egglog's
    extraction semantics: the declared ``:cost`` of each constructor, overridden by a
    ``cost_table_<Ctor>`` row when one exists for the node (``Copy`` costs its bytes);
    ``:unextractable`` constructors and every non-constructor function (facts, tables,
    globals) are forbidden. ``last`` keeps the size / method of the most recent solve.

    The root is the engine's balanced root tree. Its ``RT`` roots (one per slice
    statement, extracted so the decoder can read the window's final form) are
    *report-only*: they do not enter the objective, so a window node is paid only when a
    use or an extract actually references it — the DAG reading of the engine's "a window
    costs a statement" (under tree cost every reference pays; here each pays once)."""

    name = "ilp"

    def __init__(self, time_limit: float = 10.0, schema: str | None = None,
                 report_only: tuple[str, ...] = ("RT",)):
        self.time_limit = time_limit
        self.report_only = report_only
        self.ctor_cost = parse_constructor_costs(schema if schema is not None else rules_schema())
        self.last: Extraction | None = None

    def serialize(self, egraph: Any, root: str | int) -> tuple[SerializedEGraph, dict[NodeId, float]]:
        """The e-graph and its node costs; ``root`` is a global ``let`` name, or the
        number ``n`` of a ``(NRoot n)`` naming term."""
        ser = egraph.serialize([], max_functions=None, max_calls_per_function=None,
                               include_temporary_functions=False)
        data = json.loads(ser.to_json())
        nodes = data["nodes"]
        if isinstance(root, int):
            root_cls = [n["eclass"] for n in nodes.values()
                        if n["op"] == "NRoot" and len(n["children"]) == 1
                        and nodes[n["children"][0]]["op"] == str(root)]
        else:
            root_cls = [c for c, d in data["class_data"].items()
                        if root in (x.strip() for x in str(d.get("let", "")).split(","))]
        if len(root_cls) != 1:
            raise AssertionError(f"root {root!r} names {len(root_cls)} e-classes")
        graph = SerializedEGraph.from_json(data, root_cls)
        return graph, self._costs(graph)

    def _costs(self, graph: SerializedEGraph) -> dict[NodeId, float]:
        table: dict[tuple[str, tuple[ClassId, ...]], float] = {}
        for n in graph.nodes.values():
            if n.op.startswith("cost_table_"):
                value = next((m.op for m in graph.nodes.values()
                              if m.eclass == n.eclass and not m.children), None)
                if value is not None:
                    key = (n.op.removeprefix("cost_table_"),
                           tuple(graph.nodes[c].eclass for c in n.children))
                    table[key] = min(table.get(key, math.inf), float(_literal(value)))  # type: ignore[arg-type]
        costs: dict[NodeId, float] = {}
        for nid, n in graph.nodes.items():
            if nid.startswith("primitive-"):
                costs[nid] = n.cost
                continue
            declared = self.ctor_cost.get(n.op, math.inf)
            key = (n.op, tuple(graph.nodes[c].eclass for c in n.children))
            costs[nid] = table.get(key, declared) if not math.isinf(declared) else math.inf
        return costs

    def extract(self, egraph: Any, root: RootTree) -> tuple[int, Any]:
        if not root.order:
            return 0, []
        graph, costs = self.serialize(egraph, root.node)
        top = graph.roots[0]
        charged = [c for op, c in _root_leaves(graph, top) if op not in self.report_only]
        full = greedy(SerializedEGraph(graph.nodes, [top]), cost_fn=lambda nid, _n: costs[nid])
        result = ilp(SerializedEGraph(graph.nodes, charged), cost_fn=lambda nid, _n: costs[nid],
                     time_limit=self.time_limit)
        # the ILP's choice is closed under children, so overriding greedy's stays acyclic
        choice = {**full.choice, **result.choice}
        self.last = result
        return int(result.cost), root_terms(root, _term(graph, choice, top))


#: the root tree's nodes over roots (``rules.sorts``) and the kind of root each holds: ``R`` a use
#: or extract term, ``RT`` a window (what ``report_only`` names)
_ROOT_NODES = {"RPR": "R", "RPT": "RT"}


def _root_leaves(graph: SerializedEGraph, top: ClassId) -> list[tuple[str, ClassId]]:
    """(kind, class) for each root of the tree under ``top`` (a node's repeated padding
    children once)."""
    classes = graph.classes()
    out: dict[tuple[str, ClassId], None] = {}
    stack = [top]
    while stack:
        nodes = [graph.nodes[n] for n in classes[stack.pop()]]
        node = next(n for n in nodes if n.op in ("RU", *_ROOT_NODES))
        kids = [graph.nodes[ch].eclass for ch in node.children]
        if node.op == "RU":
            stack.extend(reversed(kids))
        else:
            out.update(((_ROOT_NODES[node.op], c), None) for c in kids)
    return list(out)


def _term(graph: SerializedEGraph, choice: dict[ClassId, NodeId], root: ClassId) -> Any:
    """The chosen term as the engine's nested tuples, primitives as Python values."""
    memo: dict[ClassId, Any] = {}
    stack: list[tuple[ClassId, bool]] = [(root, False)]
    while stack:
        c, done = stack.pop()
        if c in memo:
            continue
        n = graph.nodes[choice[c]]
        if not n.children and choice[c].startswith("primitive-"):
            memo[c] = _literal(n.op)
            continue
        kids = [graph.nodes[ch].eclass for ch in n.children]
        if done:
            memo[c] = (n.op, *(memo[k] for k in kids))
        else:
            stack.append((c, True))
            stack.extend((k, False) for k in kids if k not in memo)
    return memo[root]


def rules_schema() -> str:
    """Every egglog declaration text in ``egraph_tiles.rules`` (module-level strings that
    declare datatypes or constructors), so new constructors get their declared costs."""
    texts: list[str] = []
    for info in pkgutil.iter_modules(rules_package.__path__):
        mod = importlib.import_module(f"{rules_package.__name__}.{info.name}")
        for v in vars(mod).values():
            if isinstance(v, str) and ("(datatype" in v or "(constructor" in v):
                texts.append(v)
    return "\n".join(texts)


def parse_constructor_costs(schema: str) -> dict[str, float]:
    """Constructor name → declared cost (default 1; ``math.inf`` if ``:unextractable``),
    read from egglog ``(datatype Sort (Ctor args... [:cost n] [:unextractable]) ...)`` and
    ``(constructor Ctor (args...) Sort [:cost n] [:unextractable])`` text."""
    out: dict[str, float] = {}
    for m in re.finditer(r"\(constructor\s+(\S+)\s+\([^()]*\)\s+\S+([^()]*)\)", schema):
        parts = m.group(2).split()
        out[m.group(1)] = (math.inf if ":unextractable" in parts else
                           float(parts[parts.index(":cost") + 1]) if ":cost" in parts else 1.0)
    for block in re.finditer(r"\(datatype\s+\w+((?:\s*\([^()]*\))*)\s*\)", schema):
        for ctor in re.finditer(r"\(([^()]*)\)", block.group(1)):
            parts = ctor.group(1).split()
            if not parts:
                continue
            name = parts[0]
            cost = 1.0
            if ":unextractable" in parts:
                cost = math.inf
            elif ":cost" in parts:
                cost = float(parts[parts.index(":cost") + 1])
            out[name] = cost
    return out
