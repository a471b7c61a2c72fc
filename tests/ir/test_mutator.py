"""``ir.mutator``: default recursion over statement trees."""

from __future__ import annotations

from dataclasses import dataclass

import egraph_tiles as et
from egraph_tiles.ir.exprs import Call, Const, Var, VarRef
from egraph_tiles.ir.mutator import StmtMutator, StmtVisitor, body_fields, drop_unused
from egraph_tiles.ir.stmts import NO_SPAN, AssignStmt, EvalStmt, ForStmt, Span, Stmt, walk
from dslkit import kernel

KERNEL = kernel("x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]", """
v = pl.tile.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Vec)
for i in pl.range(0, 4, 1):
    a = pl.tile.slice(v, [16, 8], [0, 0])
    b = pl.tile.slice(a, [16, 4], [0, 0])
    y = pl.tile.muls(v, 0.5)
out = pl.store(v, [0, 0], out)
return out
""", "pl.Tensor[[16, 16], pl.FP32]")


def _body():
    return et.parse_program(KERNEL).functions[0].body


class _Nothing(StmtMutator):
    pass


class _MarkMuls(StmtMutator):
    """Puts a bare ``tile.muls`` call before every ``tile.muls`` assignment."""

    def visit_AssignStmt(self, s: AssignStmt):
        if isinstance(s.value, Call) and s.value.op == "tile.muls":
            return [EvalStmt(s.value, s.span), s]
        return s


def test_a_mutator_that_overrides_nothing_returns_the_very_same_body():
    body = _body()
    assert _Nothing().mutate_body(body) is body


def test_one_override_rewrites_inside_loops_and_leaves_the_input_untouched():
    body = _body()
    before = [type(s).__name__ for s in walk(body)]
    new = _MarkMuls().mutate_body(body)
    assert [type(s).__name__ for s in walk(body)] == before
    loop = next(s for s in new if isinstance(s, ForStmt))
    assert [type(s).__name__ for s in loop.body] == ["AssignStmt", "AssignStmt", "EvalStmt",
                                                      "AssignStmt"]
    assert new[0] is body[0]  # unchanged statements are shared, not copied


@dataclass(eq=False)
class _Region(Stmt):
    """A statement kind the mutator has never heard of, with a nested body."""

    label: str
    body: list[Stmt]
    span: Span = NO_SPAN


def test_a_new_statement_kind_with_a_body_gets_default_recursion():
    assert body_fields(_Region) == ("body",)
    inner = AssignStmt(Var("y"), Call("tile.muls", (VarRef(Var("v")), Const(0.5))))
    r = _Region("r", [inner])
    (new,) = _MarkMuls().mutate_body([r])
    assert isinstance(new, _Region) and new is not r and new.label == "r"
    assert [type(s).__name__ for s in new.body] == ["EvalStmt", "AssignStmt"]


def test_drop_unused_removes_a_dead_chain_round_by_round():
    body = _body()
    names = {s.target.name: s.target for s in walk(body) if isinstance(s, AssignStmt)}
    new, rounds = drop_unused(body, {names["a"], names["b"], names["y"]})
    assert [{v.name for v in r} for r in rounds] == [{"b", "y"}, {"a"}]
    assert {s.target.name for s in walk(new) if isinstance(s, AssignStmt)} == {"v", "out"}


class _Assigned(StmtVisitor):
    def __init__(self):
        self.names = []

    def visit_AssignStmt(self, s: AssignStmt):
        self.names.append(s.target.name)


def test_a_visitor_reaches_assignments_inside_a_statement_kind_it_does_not_know():
    inner = AssignStmt(Var("y"), Call("tile.muls", (VarRef(Var("v")), Const(0.5))))
    v = _Assigned()
    v.visit_body([*_body(), _Region("r", [inner])])
    assert v.names == ["v", "a", "b", "y", "out", "y"]
