"""``ir.mutator``: default recursion over statement trees."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import egraph_tiles as et
from egraph_tiles.ir.exprs import BinOp, Call, Const, ListExpr, Var, VarRef
from egraph_tiles.ir.mutator import (ReadCount, StmtMutator, StmtVisitor, body_fields,
                                     drop_unused, replaced)
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


def test_count_own_counts_the_same_reads_as_count_but_not_those_of_nested_bodies():
    body = _body()  # v = load; for: a = slice(v); b = slice(a); y = muls(v); out = store(v)
    names = {s.target.name: s.target for s in walk(body) if isinstance(s, AssignStmt)}
    cands = {names["v"], names["a"], names["b"]}
    loop = next(s for s in body if isinstance(s, ForStmt))
    whole, flat = ReadCount(cands), ReadCount(cands)
    whole.count(loop.body, nested=False)
    assert flat.count_own(loop.body) is True  # the loop body assigns candidates a and b
    assert flat.uses == whole.uses == {names["v"]: 2, names["a"]: 1}
    assert flat.reads == whole.reads == {names["a"]: [names["v"]], names["b"]: [names["a"]]}
    top = ReadCount(cands)
    assert top.count_own(body) is True
    assert top.uses == {names["v"]: 1}  # the store's read; the loop's body is not read


def test_count_own_reads_keyword_operands_list_items_and_nested_expressions():
    t, i, u = Var("t"), Var("i"), Var("u")
    call = Call("tile.op", (ListExpr((VarRef(t), BinOp("+", VarRef(i), Const(1)))),),
                (("shape", ListExpr((VarRef(t), Const(4)))), ("other", VarRef(u))))
    rc = ReadCount({t, i, u})
    assert rc.count_own([EvalStmt(call), AssignStmt(Var("x"), call)]) is False
    assert rc.uses == {t: 4, i: 2, u: 2}


@dataclass(eq=False)
class _KeywordOnly(Stmt):
    body: list[Stmt]
    label: str = dataclasses.field(default="k", kw_only=True)


def test_replaced_is_dataclasses_replace():
    loop = next(s for s in _body() if isinstance(s, ForStmt))
    new = replaced(loop, body=[], init_values=[Const(1)])
    assert type(new) is ForStmt and new is not loop
    assert [getattr(new, f.name) for f in dataclasses.fields(ForStmt)] == \
        [getattr(dataclasses.replace(loop, body=[], init_values=[Const(1)]), f.name)
         for f in dataclasses.fields(ForStmt)]
    k = replaced(_KeywordOnly([], label="x"), body=[loop])  # (a keyword-only field: replace)
    assert k.body == [loop] and k.label == "x"
