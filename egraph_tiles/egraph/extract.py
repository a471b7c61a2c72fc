"""Extraction behind one interface, so an ILP extractor can plug in.

An extractor returns the chosen term of each root as nested tuples ``(op, *children)`` with
primitive leaves (int / str).  Identical subterms compare equal, so identical copies of one
window are recognized (and emitted once) by the decoder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Union

from .bindings import eb

Term = tuple
#: a root tree node's shape: the number of its own roots for a node over roots, the shapes of
#: its own children for a node over nodes
Shape = Union[int, tuple]


@dataclass(frozen=True)
class RootTree:
    """What to extract for one function (``schedule.root_tree``): the tree's top node
    ``(NRoot node)``, its shape, and for each root in the tree's order (uses and extract terms,
    then windows) its place among the function's roots."""

    node: int
    shape: Shape
    order: tuple[int, ...]


class Extractor(Protocol):
    name: str

    def extract(self, egraph: eb.EGraph, root: RootTree) -> tuple[int, list[Term]]:
        """(total cost, the chosen term of each root of ``root`` in the function's order)."""
        ...


class GreedyExtractor:
    """egglog's bottom-up greedy extractor with per-node costs from the ``cost_table_*`` tables
    (a ``Copy`` costs its bytes).  One call extracts a whole function from a tree root."""

    name = "greedy"

    def extract(self, egraph: eb.EGraph, root: RootTree) -> tuple[int, list[Term]]:
        if not root.order:
            return 0, []
        span = eb.RustSpan("", 0, 0)
        expr = eb.Call(span, "NRoot", [eb.Lit(span, eb.Int(root.node))])
        out = egraph.run_program(eb.UserDefined(span, "extract", [expr,
                                                                  eb.Lit(span, eb.Int(0))]))
        best = out[-1]
        assert isinstance(best, eb.ExtractBest), best
        return best.cost, root_terms(root, termdag_to_tuple(best.termdag, best.term))


def root_terms(root: RootTree, term: Term) -> list[Term]:
    """The roots' terms in the extracted tree ``term`` of ``root``, in the function's order; a
    node's repeated last children (its padding) are left out."""
    leaves: list[Term] = []
    stack = [(term, root.shape)]
    while stack:
        t, shape = stack.pop()
        if isinstance(shape, int):
            leaves += t[1:shape + 1]
        else:  # (its children, last first: the first is popped first)
            stack += zip(t[len(shape):0:-1], reversed(shape))
    out: list[Term] = [()] * len(leaves)
    for i, leaf in zip(root.order, leaves):
        out[i] = leaf
    return out


def termdag_to_tuple(td: eb.TermDag, root: int) -> Term:
    """The term ``root`` of ``td`` as nested tuples, shared subterms shared.  A term dag only
    ever adds a node after its children, so one pass over the ids in order builds every node
    from finished children (no recursion, no stack: extracted terms can be deep)."""
    memo: list[object] = []
    push, built = memo.append, memo.__getitem__
    app, lit = eb.TermApp, eb.TermLit
    for node in map(td.get, range(root + 1)):
        kind = type(node)
        if kind is app:  # its arguments precede it: built already
            args = node.args
            n = len(args)  # (one or two arguments, the common cases, without an iterator)
            if n == 2:
                push((node.name, memo[args[0]], memo[args[1]]))
            elif n == 1:
                push((node.name, memo[args[0]]))
            else:
                push((node.name, *map(built, args)))
        elif kind is lit:
            push(node.value.value)
        else:
            raise AssertionError(f"unexpected term {node!r}")
    return memo[root]  # type: ignore[return-value]

