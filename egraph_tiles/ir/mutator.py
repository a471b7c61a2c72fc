"""Rewriting statement trees with default recursion (in the spirit of Halide's ``IRMutator``).

A pass subclasses :class:`StmtMutator` and overrides only the statement kinds it cares about
(``visit_AssignStmt``, ``visit_YieldStmt``, ...); every other statement is kept, and a compound
one is rebuilt with its nested bodies mutated.  Which fields hold nested bodies is read from the
statement's dataclass fields (every ``list[Stmt]`` field), so a new statement kind in
``ir.stmts`` needs no edit here.  Nothing is mutated in place: a statement (or body) that did not
change is returned as it is, anything else is a fresh copy.
"""

from __future__ import annotations

import dataclasses
import operator
import typing
from typing import Callable, Union

from . import stmts as _stmts
from .exprs import _LEAVES, Call, ListExpr, Var, VarRef, free_vars, var_reads
from .stmts import AssignStmt, EvalStmt, Stmt, child_bodies, stmt_exprs, walk

Mutated = Union[Stmt, list[Stmt]]

_BODY_FIELDS: dict[type, tuple[str, ...]] = {}


def body_fields(cls: type) -> tuple[str, ...]:
    """The names of the nested-body fields (``list[Stmt]``) of a statement class."""
    got = _BODY_FIELDS.get(cls)
    if got is None:
        hints = typing.get_type_hints(cls, vars(_stmts)) if dataclasses.is_dataclass(cls) else {}
        got = _BODY_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls)
                                        if hints.get(f.name) == list[Stmt])
    return got


#: per statement class: its fields' reader and their positions (:func:`replaced`), or None
_POSITIONAL: dict[type, tuple[Callable, dict[str, int]] | None] = {}


def replaced(s: Stmt, /, **changes: object) -> Stmt:
    """``dataclasses.replace(s, **changes)``: the class called with every field positionally,
    read in one call (a quarter of replace's time); replace itself for a class with
    a keyword-only or non-init field or only one field."""
    cls = type(s)
    if cls not in _POSITIONAL:
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        plain = len(fields) > 1 and all(f.init and not f.kw_only for f in fields)
        _POSITIONAL[cls] = (operator.attrgetter(*(f.name for f in fields)),
                            {f.name: i for i, f in enumerate(fields)}) if plain else None
    how = _POSITIONAL[cls]
    if how is None:
        return dataclasses.replace(s, **changes)  # type: ignore[type-var]
    values = list(how[0](s))
    for name, v in changes.items():
        values[how[1][name]] = v
    return cls(*values)


class StmtMutator:
    """Default recursion over statement trees; override ``visit_<Kind>`` per statement kind.

    A visit returns the new statement, or a list of statements (insertions around it; an empty
    list drops it).  ``recurse(s, **changes)`` is the default: ``s`` with ``changes`` applied and
    every nested body passed through :meth:`nested` (override it to open a scope per body).
    """

    _dispatch: dict[type, Callable | None]

    def mutate_body(self, body: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        changed = False
        for s in body:
            r = self.mutate(s)
            if r is s:
                out.append(s)
                continue
            changed = True
            if isinstance(r, list):
                out.extend(r)
            else:
                out.append(r)
        return out if changed else body

    def mutate(self, s: Stmt) -> Mutated:
        visit = _visitor(type(self), type(s))
        return visit(self, s) if visit is not None else self.recurse(s)

    def recurse(self, s: Stmt, **changes: object) -> Stmt:
        for name in body_fields(type(s)):
            if name not in changes:
                old = getattr(s, name)
                new = self.nested(old)
                if new is not old:
                    changes[name] = new
        return replaced(s, **changes) if changes else s

    def nested(self, body: list[Stmt]) -> list[Stmt]:
        """One nested body of a compound statement."""
        return self.mutate_body(body)


class StmtVisitor:
    """Walks statement trees with the same default recursion, for passes that read rather than
    rewrite: override ``visit_<Kind>``; any other statement's nested bodies are visited in
    order (a statement kind the visitor has never heard of still has its body visited)."""

    _dispatch: dict[type, Callable | None]

    def visit_body(self, body: list[Stmt]) -> None:
        for s in body:
            self.visit(s)

    def visit(self, s: Stmt) -> None:
        v = _visitor(type(self), type(s))
        if v is not None:
            v(self, s)
            return
        for name in body_fields(type(s)):
            self.visit_body(getattr(s, name))


def _visitor(cls: type, kind: type) -> Callable | None:
    """``cls``'s ``visit_<Kind>`` method for statement class ``kind`` (or its nearest base)."""
    table = cls.__dict__.get("_dispatch")
    if table is None:
        table = {}
        cls._dispatch = table  # type: ignore[attr-defined]
    if kind not in table:
        table[kind] = next((getattr(cls, f"visit_{k.__name__}") for k in kind.__mro__
                            if hasattr(cls, f"visit_{k.__name__}")), None)
    return table[kind]


def used_vars(body: list[Stmt]) -> set[Var]:
    """Every variable read anywhere in ``body`` (nested bodies included)."""
    return {v for s in walk(body) for e in stmt_exprs(s) for v in free_vars(e)}


class _DropAssignments(StmtMutator):
    def __init__(self, dead: set[Var]):
        self.dead = dead

    def visit_AssignStmt(self, s: AssignStmt) -> Mutated:
        return [] if s.target in self.dead else s


class ReadCount:
    """Reads of the ``candidates`` (one per occurrence), counted statement by statement, and
    what each candidate's own assignment reads: enough to find the dead ones (:meth:`rounds`)."""

    def __init__(self, candidates: set[Var]):
        self.candidates = candidates
        self.uses: dict[Var, int] = {}
        self.reads: dict[Var, list[Var]] = {}

    def count(self, stmts: list[Stmt], nested: bool = True) -> bool:
        """Count the reads of ``stmts`` (with ``nested``, of their nested bodies too).  Returns
        whether one of ``stmts`` assigns a candidate."""
        assigns = self.count_own(stmts)
        if nested:
            for s in stmts:
                if type(s) is not AssignStmt and type(s) is not EvalStmt:
                    for b in child_bodies(s):
                        self.count(b)
        return assigns

    def count_own(self, stmts: list[Stmt]) -> bool:
        """The reads of the statements' own expressions, not of their nested bodies (a rebuild
        counts each body as it builds it); returns whether one of ``stmts`` assigns a candidate.  Every read goes to one list and the
        candidates are picked out of it at the end; the common statement, an assigned call,
        has its operands read here (a variable, a list of them, a constant) and only deeper
        ones by :func:`var_reads`: the same reads, for a third less time."""
        candidates, reads = self.candidates, self.reads
        buf: list[Var] = []
        add = buf.append
        assigns = False
        for s in stmts:
            if type(s) is not AssignStmt:
                for e in stmt_exprs(s):
                    var_reads(e, buf)
                continue
            e = s.value  # type: ignore[attr-defined]
            start = len(buf)
            if type(e) is Call:
                for a in e.args:  # type: ignore[attr-defined]
                    t = type(a)
                    if t is VarRef:
                        add(a.var)  # type: ignore[attr-defined]
                    elif t is ListExpr:
                        for x in a.items:  # type: ignore[attr-defined]
                            if type(x) is VarRef:
                                add(x.var)  # type: ignore[attr-defined]
                            elif type(x) not in _LEAVES:
                                var_reads(x, buf)
                    elif t not in _LEAVES:
                        var_reads(a, buf)
                for _, a in e.kwargs:  # type: ignore[attr-defined]
                    if type(a) not in _LEAVES:
                        var_reads(a, buf)
            else:
                var_reads(e, buf)
            if s.target in candidates:  # type: ignore[attr-defined]
                assigns = True
                reads.setdefault(s.target, []).extend(  # type: ignore[attr-defined]
                    filter(candidates.__contains__, buf[start:]))
        uses = self.uses
        for v in filter(candidates.__contains__, buf):
            uses[v] = uses.get(v, 0) + 1
        return assigns

    def rounds(self) -> list[set[Var]]:
        """The candidates nothing reads, then those only they read, ... (one set per round):
        dropping an assignment releases its reads, which gives the next round."""
        uses = dict(self.uses)
        candidates = self.candidates
        rounds: list[set[Var]] = []
        dead = {c for c in candidates if not uses.get(c)}
        while dead:
            rounds.append(dead)
            candidates = candidates - dead
            released = [v for d in dead for v in self.reads.get(d, ())]
            for v in released:
                uses[v] -= 1
            dead = {v for v in released if v in candidates and not uses[v]}
        return rounds


def drop_unused(body: list[Stmt], candidates: set[Var]) -> tuple[list[Stmt], list[set[Var]]]:
    """Remove the assignments of ``candidates`` that nothing reads, to a fixpoint (a chain of
    dead slices goes together).  Returns the new body and the variables dropped in each round
    (one walk counts the reads: :class:`ReadCount`)."""
    rc = ReadCount(candidates)
    rc.count(body)
    rounds = rc.rounds()
    if rounds:
        body = _DropAssignments(set().union(*rounds)).mutate_body(body)
    return body, rounds
