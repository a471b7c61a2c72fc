"""Extraction behind one interface, so an ILP extractor can plug in.

An extractor returns the chosen term of the root as nested tuples ``(op, *children)`` with
primitive leaves (int / str).  Identical subterms compare equal, so identical copies of one
window are recognized (and emitted once) by the decoder.
"""

from __future__ import annotations

from typing import Protocol

from .bindings import eb

Term = tuple
#: the padding leaf's term (``rules.sorts``: fills the root tree's nodes short of children)
PAD = ("Pad",)


class Extractor(Protocol):
    name: str

    def extract(self, egraph: eb.EGraph, root: int) -> tuple[int, Term]:
        """(total cost, chosen term) of the e-class of ``(NRoot root)``."""
        ...


class GreedyExtractor:
    """egglog's bottom-up greedy extractor with per-node costs from the ``cost_table_*`` tables
    (a ``Copy`` costs its bytes).  One call extracts a whole function from a tree root."""

    name = "greedy"

    def extract(self, egraph: eb.EGraph, root: int) -> tuple[int, Term]:
        span = eb.RustSpan("", 0, 0)
        expr = eb.Call(span, "NRoot", [eb.Lit(span, eb.Int(root))])
        out = egraph.run_program(eb.UserDefined(span, "extract", [expr,
                                                                  eb.Lit(span, eb.Int(0))]))
        best = out[-1]
        assert isinstance(best, eb.ExtractBest), best
        return best.cost, one_node_kind(termdag_to_tuple(best.termdag, best.term))


def one_node_kind(term: Term) -> Term:
    """``term`` with the root tree's nodes over nodes (``RU``) stated as ``RP``, like the nodes
    over leaves (``rules.sorts``: two constructors only so that egglog's extractor costs the
    lower ones first): the decoder reads one kind of node.  Only the ``RU`` nodes, at the top
    of the tree (one in eight of its nodes), are rebuilt."""
    if term[0] != "RU":
        return term
    return ("RP", *map(one_node_kind, term[1:]))


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


def flatten_roots(term: Term) -> list[Term]:
    """The leaves of a balanced ``RP`` tree, in order, unwrapped from ``R`` / ``RT`` / ``RI``
    (the padding leaves ``(RT (Pad))`` left out)."""
    out: list[Term] = []
    leaf = out.append
    stack = [term]
    push, pop = stack.extend, stack.pop
    while stack:
        t = pop()
        if t[0] == "RP":
            push(t[:0:-1])  # (its children, last first: the first is popped first)
        elif t[1] != PAD:
            leaf(t[1])
    return out
