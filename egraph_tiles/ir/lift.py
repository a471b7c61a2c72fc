"""Calls written inside a ``return`` or ``pl.yield_`` (``return self.add(a, b)``, PyPTO's printer
writes them) named for the analyses, and written back in place after the pass.

Every analysis of the pass reads a call where a statement makes it: ``x = op(...)`` or a bare
``op(...)`` (``ir.effects.call_of``): its writes, the storage its result shares, the frames its
arguments give a program function, the use contexts of its operands.  A call handed straight out
of a function or a loop body is none of those, and whatever it does to its operands would go
unseen.  :func:`lift_calls` gives each such call a statement of its own, ``t = op(...)`` right
before the ``return`` / ``yield`` that then hands out ``t`` (typed as the value it hands out: the
function's result type, the loop's or if's result).  :func:`fold_calls` puts back every call the
pass left where it was: the assignment dropped and the call written in the ``return`` / ``yield``
again (the very statement read, when neither changed), so an unchanged function prints as read.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from .exprs import Call, Var, VarRef, free_vars
from .mutator import Mutated, StmtMutator, replaced
from .stmts import (AssignStmt, ForStmt, Function, IfStmt, Program, ReturnStmt, Stmt, WhileStmt,
                    YieldStmt, _ValuesStmt, defined_vars, stmt_exprs, walk)
from .types import TupleType, Type


@dataclass
class Lifted:
    """What :func:`lift_calls` wrote: the temporaries, and each statement it rebuilt (a ``return``
    / ``yield`` reading temporaries, a compound statement holding one) with the statement read."""

    temps: set[Var] = field(default_factory=set)
    #: id of a statement written -> (it, the statement as read)
    original: dict[int, tuple[Stmt, Stmt]] = field(default_factory=dict)


def lift_calls(program: Program) -> tuple[Program, Lifted]:
    """``program`` with every call in a ``return`` / ``yield`` value assigned to a temporary
    first (see the module docstring); the program itself when there is none."""
    lifted = Lifted()
    functions = [_Lift(fn, lifted).function() for fn in program.functions]
    if not lifted.temps:
        return program, lifted
    return Program(program.name, functions), lifted


def fold_calls(program: Program, lifted: Lifted) -> Program:
    """``program`` with each temporary of ``lifted`` that is still assigned a call right before
    the one ``return`` / ``yield`` reading it written back into that statement."""
    if not lifted.temps:
        return program
    return Program(program.name, [_Fold(fn, lifted).function() for fn in program.functions])


class _Lift(StmtMutator):
    def __init__(self, fn: Function, lifted: Lifted) -> None:
        self.fn, self.lifted = fn, lifted
        self.owners: list[Stmt] = []
        self.names: set[str] | None = None

    def function(self) -> Function:
        body = self.mutate_body(self.fn.body)
        if body is self.fn.body:
            return self.fn
        return replaced(self.fn, body=body)  # type: ignore[return-value]

    def mutate(self, s: Stmt) -> Mutated:
        if not isinstance(s, (ForStmt, WhileStmt, IfStmt)):
            return super().mutate(s)
        self.owners.append(s)
        try:
            new = super().mutate(s)
        finally:
            self.owners.pop()
        if new is not s:
            self.lifted.original[id(new)] = (new, s)  # type: ignore[assignment]
        return new

    def visit_YieldStmt(self, s: YieldStmt) -> Mutated:
        owner = self.owners[-1] if self.owners else None
        types = [v.type for v in owner.return_vars] if owner is not None else []  # type: ignore[union-attr]
        return self.lift(s, types)

    def visit_ReturnStmt(self, s: ReturnStmt) -> Mutated:
        types = list(self.fn.return_types)
        if len(s.values) == 1 and len(types) > 1:
            types = [TupleType(tuple(types))]
        return self.lift(s, types)

    def lift(self, s: _ValuesStmt, types: list[Type]) -> Mutated:
        if not any(type(v) is Call for v in s.values):
            return s
        out: list[Stmt] = []
        values = []
        for i, v in enumerate(s.values):
            if type(v) is not Call:
                values.append(v)
                continue
            t = Var(self.fresh(v), types[i] if i < len(types) else None)
            out.append(AssignStmt(t, v, s.span))
            self.lifted.temps.add(t)
            values.append(VarRef(t))
        new = replaced(s, values=values)
        self.lifted.original[id(new)] = (new, s)
        return [*out, new]

    def fresh(self, call: Call) -> str:
        """A name no variable of the function has: the op's last part, ``_r``."""
        if self.names is None:
            self.names = {p.var.name for p in self.fn.params} | {
                v.name for s in walk(self.fn.body) for v in defined_vars(s)}
        stem = f"{call.op.rsplit('.', 1)[-1]}_r"
        name, k = stem, 1
        while name in self.names:
            k += 1
            name = f"{stem}{k}"
        self.names.add(name)
        return name


class _Fold(StmtMutator):
    def __init__(self, fn: Function, lifted: Lifted) -> None:
        self.fn, self.lifted = fn, lifted
        self.reads: dict[Var, int] = {}
        for st in walk(fn.body):
            for e in stmt_exprs(st):
                for v in free_vars(e):
                    if v in lifted.temps:
                        self.reads[v] = self.reads.get(v, 0) + 1

    def function(self) -> Function:
        if not self.reads:
            return self.fn
        body = self.mutate_body(self.fn.body)
        return self.fn if body is self.fn.body else replaced(self.fn, body=body)  # type: ignore[return-value]

    def mutate(self, s: Stmt) -> Mutated:
        new = super().mutate(s)
        return self.as_read(s, new) if isinstance(new, Stmt) else new

    def as_read(self, lifted: Stmt, new: Stmt) -> Stmt:
        """The statement as read in place of ``new`` (what became of the statement ``lifted``
        wrote) when nothing in it changed since."""
        entry = self.lifted.original.get(id(lifted))
        if entry is None or entry[0] is not lifted:
            return new
        read = entry[1]
        if type(new) is not type(read) or any(
                not (x is y or type(x) is list and type(y) is list and len(x) == len(y)
                     and all(a is b for a, b in zip(x, y)))
                for x, y in ((getattr(new, f.name), getattr(read, f.name)) for f in fields(read))):
            return new
        return read

    def mutate_body(self, body: list[Stmt]) -> list[Stmt]:
        body = super().mutate_body(body)
        out: list[Stmt] = []
        changed = False
        for s in body:
            if isinstance(s, (ReturnStmt, YieldStmt)):
                named = {v.var for v in s.values if type(v) is VarRef}  # type: ignore[attr-defined]
                calls: dict[Var, Call] = {}
                while out and type(out[-1]) is AssignStmt and out[-1].target in named \
                        and self.reads.get(out[-1].target) == 1 and type(out[-1].value) is Call:  # type: ignore[attr-defined]
                    a = out.pop()
                    calls[a.target] = a.value  # type: ignore[attr-defined]
                if calls:
                    values = [calls.get(v.var, v) if type(v) is VarRef else v for v in s.values]  # type: ignore[attr-defined]
                    s = self.as_read(s, replaced(s, values=values))
                    changed = True
            out.append(s)
        return out if changed else body
