"""Reading statements of a function body: assignments, calls, loops, ifs, scopes, yields."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..ir.exprs import Call, Const, Expr, ListExpr, StrConst, Symbol, TupleItem, Var, VarRef
from ..ir.stmts import (AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt, Stmt, WhileStmt,
                        YieldStmt)
from ..ir.types import DType, ScalarType, TupleType, Type
from .forms import BINOPS, LOOPS, SCOPES
from .read_common import describe, dotted


@dataclass
class _Yield:
    node: ast.AST
    targets: list[str]
    annotation: Type | None
    stmt: YieldStmt


@dataclass
class _Block:
    stmts: list[Stmt] = field(default_factory=list)
    yield_: _Yield | None = None



class StmtReader:
    """Statements (a mixin of the function reader, which supplies expressions, types and scopes)."""

    def block(self, body: list[ast.stmt], allow_yield: bool) -> _Block:
        out = _Block()
        for i, s in enumerate(body):
            y = self._yield(s)
            if y is not None:
                if not allow_yield:
                    raise self.err(s, "pl.yield_ is only allowed as the last statement of a "
                                   "loop, while or if/else body")
                if i != len(body) - 1:
                    raise self.err(s, "pl.yield_ must be the last statement of its body")
                out.yield_ = y
                out.stmts.append(y.stmt)
                continue
            st = self.stmt(s)
            if st is not None:
                out.stmts.append(st)
        return out

    def _yield(self, s: ast.stmt) -> _Yield | None:
        value: ast.AST | None = None
        targets: list[str] = []
        ann: Type | None = None
        if isinstance(s, ast.Expr):
            value = s.value
        elif isinstance(s, ast.Assign):
            value = s.value
        elif isinstance(s, ast.AnnAssign):
            value = s.value
        if not (isinstance(value, ast.Call) and dotted(value.func) == "pl.yield_"):
            return None
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise self.err(s, "expected one target list for pl.yield_ (a, b = pl.yield_(x, y))")
            t = s.targets[0]
            elts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
            for e in elts:
                if not isinstance(e, ast.Name):
                    raise self.err(e, "expected variable names as the targets of pl.yield_")
                targets.append(e.id)
        elif isinstance(s, ast.AnnAssign):
            if not isinstance(s.target, ast.Name):
                raise self.err(s, "expected a variable name as the target of pl.yield_")
            targets.append(s.target.id)
            ann = self.type_(s.annotation)[0]
        if value.keywords:
            raise self.err(value, "pl.yield_ takes positional values only")
        if len(set(targets)) != len(targets):
            raise self.err(s, "the targets of pl.yield_ must be distinct names")
        vals = [self.expr(a) for a in value.args]
        if targets and len(vals) != len(targets):
            raise self.err(s, f"pl.yield_ yields {len(vals)} value(s) into {len(targets)} target(s)")
        return _Yield(s, targets, ann, YieldStmt(vals, self.span(s)))

    def stmt(self, s: ast.stmt) -> Stmt | None:
        if isinstance(s, ast.Pass):
            return None
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                return None  # docstring
            if not isinstance(s.value, ast.Call):
                raise self.err(s, f"unexpected {describe(s.value)} as a statement; expected an "
                               "assignment or an op call")
            if dotted(s.value.func) == "pl.cond":
                raise self.err(s, "pl.cond(...) is only allowed as the first statement of a "
                               "pl.while_ body")
            call = self.call(s.value)
            if not isinstance(call, Call):
                raise self.err(s, "expected an op call as a statement")
            self.call_type(call, s, None, s.value)
            return EvalStmt(call, self.span(s))
        if isinstance(s, ast.Break):
            return BreakStmt(self.span(s))
        if isinstance(s, ast.Continue):
            return ContinueStmt(self.span(s))
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            return self.assign(s)
        if isinstance(s, ast.For):
            return self.for_(s)
        if isinstance(s, ast.If):
            return self.if_(s)
        if isinstance(s, ast.Return):
            if s.value is None:
                vals: list[Expr] = []
            elif isinstance(s.value, ast.Tuple):
                vals = [self.expr(e) for e in s.value.elts]
            else:
                vals = [self.expr(s.value)]
            return ReturnStmt(vals, self.span(s))
        if isinstance(s, ast.With):
            return self.with_(s)
        if isinstance(s, ast.While):
            raise self.err(s, "Python while loops are not supported; expected "
                           "for (a,) in pl.while_(init_values=(x,)): with pl.cond(...) first")
        raise self.err(s, f"unsupported statement ({type(s).__name__}); expected an assignment, "
                       "an op call, for over pl.range/pl.pipeline/pl.parallel/pl.while_/"
                       "pl.split_aiv, if/else or return")

    def assign(self, s: ast.Assign | ast.AnnAssign | ast.AugAssign) -> Stmt:
        ann: Type | None = None
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise self.err(s, "chained assignment; expected one target per statement")
            target = s.targets[0]
            value_node: ast.AST = s.value
        elif isinstance(s, ast.AnnAssign):
            target = s.target
            if s.value is None:
                raise self.err(s, "annotation without a value; expected name: type = value")
            value_node = s.value
            ann, is_out = self.type_(s.annotation)
            if is_out:
                raise self.err(s.annotation, "pl.Out[...] is only allowed on parameters")
        else:
            target = s.target
            op = BINOPS.get(type(s.op))
            if op is None or not isinstance(target, ast.Name):
                raise self.err(s, "unsupported augmented assignment; expected x += / -= / *= ...")
            value_node = ast.BinOp(ast.Name(target.id, ast.Load()), s.op, s.value)
            ast.copy_location(value_node, s)
        if not isinstance(target, ast.Name):
            raise self.err(target, "expected a single variable name as the assignment target "
                           "(tuple unpacking and subscripts are not supported)")
        if isinstance(value_node, ast.Subscript) and isinstance(value_node.value, ast.Name) \
                and isinstance(getattr(self.env.get(value_node.value.id), "type", None), TupleType):
            value: Expr = self.tuple_item(value_node)
        elif isinstance(value_node, ast.Subscript):  # NKI-style t[i, :], t[ds(off, 64), :]
            from .subscripts import lower_subscript
            value = lower_subscript(self, value_node)
        else:
            value = self.expr(value_node)
        t = self.value_type(value, s, ann, value_node)
        if ann is not None:
            t = self.agree(s, target.id, t, ann)
        v = self.bind(target, target.id, t)
        return AssignStmt(v, value, self.span(s))

    def tuple_item(self, node: ast.Subscript) -> Expr:
        """``ret[k]`` of a tuple-typed ``ret``: its k-th element."""
        base = self.expr(node.value)
        n = len(base.var.type.elements)  # type: ignore[union-attr]
        k = node.slice
        if not (isinstance(k, ast.Constant) and type(k.value) is int and 0 <= k.value < n):
            raise self.err(node, f"expected a constant index 0..{n - 1} into the tuple "
                           f"{node.value.id!r}")  # type: ignore[attr-defined]
        return TupleItem(base, k.value)

    def _names(self, node: ast.AST, what: str) -> list[ast.Name]:
        elts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else None
        if elts is None:
            raise self.err(node, f"expected a parenthesized tuple of {what}, e.g. (a,)")
        for e in elts:
            if not isinstance(e, ast.Name):
                raise self.err(e, f"expected a variable name in the {what}")
        return elts  # type: ignore[return-value]

    def _init_values(self, call: ast.Call) -> tuple[list[Expr], list[tuple[str, Expr]], ast.AST | None]:
        inits: list[Expr] = []
        kws: list[tuple[str, Expr]] = []
        init_node = None
        for k in call.keywords:
            if k.arg is None:
                raise self.err(k, "**kwargs is not supported in a loop header")
            if k.arg == "init_values":
                init_node = k.value
                if not isinstance(k.value, (ast.Tuple, ast.List)):
                    raise self.err(k.value, "expected init_values=(x, ...) as a tuple")
                inits = [self.expr(e) for e in k.value.elts]
            else:
                kws.append((k.arg, self.expr(k.value)))
        return inits, kws, init_node

    def _run_body(self, body: list[ast.stmt], binds: list[tuple[ast.AST, str, Type | None]]
                  ) -> tuple[_Block, list[Var]]:
        with self.child_scope():
            vs = [self.bind(n, name, t) for n, name, t in binds]
            blk = self.block(body, allow_yield=True)
        return blk, vs

    def _carried(self, s: ast.AST, blk: _Block, n: int, what: str,
                 carry_types: list[Type | None]) -> list[Var]:
        """Bind the return vars named by the body's trailing yield."""
        y = blk.yield_
        if n == 0:
            if y is not None:
                raise self.err(y.node, f"this {what} has no init_values, so its body cannot pl.yield_")
            return []
        if y is None:
            raise self.err(s, f"this {what} carries {n} value(s); expected its body to end with "
                           f"{_yield_example(n)}")
        if len(y.stmt.values) != n or len(y.targets) != n:
            raise self.err(y.node, f"mismatched carries: the {what} carries {n} value(s) but "
                           f"pl.yield_ yields {len(y.stmt.values)} into {len(y.targets)} target(s)")
        out = []
        for name, t in zip(y.targets, carry_types):
            if y.annotation is not None:
                t = y.annotation
            out.append(self.bind(y.node, name, t))
        return out

    def for_(self, s: ast.For) -> Stmt:
        if s.orelse:
            raise self.err(s.orelse[0], "for/else is not supported")
        it = s.iter
        name = dotted(it.func) if isinstance(it, ast.Call) else None
        if name is None or not name.startswith("pl.") or name[3:] not in (*LOOPS, "while_", "split_aiv"):
            raise self.err(it, "expected a loop over pl.range(...), pl.pipeline(...), "
                           "pl.parallel(...), pl.while_(init_values=...) or pl.split_aiv(...)")
        assert isinstance(it, ast.Call)
        kind = name[3:]
        if kind == "split_aiv":
            return self._scope(s, it)
        if kind == "while_":
            return self._while(s, it)
        args = [self.expr(a) for a in it.args]
        if not 1 <= len(args) <= 3:
            raise self.err(it, f"{name} takes 1 to 3 positional arguments (stop | start, stop "
                           f"[, step]), got {len(args)}")
        if len(args) == 1:
            start, stop, step = Const(0), args[0], Const(1)
        elif len(args) == 2:
            start, stop, step = args[0], args[1], Const(1)
        else:
            start, stop, step = args
        for a, n in zip((start, stop, step), it.args if len(args) == 3 else [None] * 3):
            if isinstance(a, (ListExpr, StrConst, Symbol, Call)):
                raise self.err(n or it, f"{name} bounds must be scalar expressions")
        inits, kws, init_node = self._init_values(it)
        tgt = s.target
        if isinstance(tgt, ast.Name):
            loop_name, carry_names = tgt, []
        elif isinstance(tgt, ast.Tuple) and len(tgt.elts) == 2 and isinstance(tgt.elts[0], ast.Name):
            loop_name = tgt.elts[0]
            carry_names = self._names(tgt.elts[1], "loop-carried names")
        else:
            raise self.err(tgt, "expected `for i in ...` or `for i, (a, b) in ...(init_values=(x, y))`")
        if len(carry_names) != len(inits):
            raise self.err(init_node or tgt, f"mismatched carries: {len(carry_names)} loop-carried "
                           f"name(s) but {len(inits)} init value(s)")
        ctypes = [self.type_of(e) for e in inits]
        binds = [(loop_name, loop_name.id, ScalarType(DType.INDEX))]
        binds += [(n, n.id, t) for n, t in zip(carry_names, ctypes)]
        blk, vs = self._run_body(s.body, binds)
        rets = self._carried(s, blk, len(inits), "loop", ctypes)
        return ForStmt(vs[0], LOOPS[kind], start, stop, step, vs[1:], inits, blk.stmts, rets,
                       tuple(kws), self.span(s))

    def _while(self, s: ast.For, it: ast.Call) -> Stmt:
        if it.args:
            raise self.err(it, "pl.while_ takes only init_values=(...)")
        inits, kws, init_node = self._init_values(it)
        if kws:
            raise self.err(it, f"pl.while_ takes only init_values=(...), got {kws[0][0]}=")
        names = self._names(s.target, "while-carried names")
        if len(names) != len(inits):
            raise self.err(init_node or s.target, f"mismatched carries: {len(names)} carried "
                           f"name(s) but {len(inits)} init value(s)")
        first = s.body[0]
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Call)
                and dotted(first.value.func) == "pl.cond"):
            raise self.err(first, "expected pl.cond(<condition>) as the first statement of a "
                           "pl.while_ body")
        cnode = first.value
        if len(cnode.args) != 1 or cnode.keywords:
            raise self.err(cnode, "pl.cond takes exactly one condition")
        ctypes = [self.type_of(e) for e in inits]
        with self.child_scope():
            vs = [self.bind(n, n.id, t) for n, t in zip(names, ctypes)]
            cond = self.expr(cnode.args[0])
            blk = self.block(s.body[1:], allow_yield=True)
        rets = self._carried(s, blk, len(inits), "while loop", ctypes)
        return WhileStmt(vs, inits, cond, blk.stmts, rets, self.span(s))

    def _scope(self, s: ast.For, it: ast.Call) -> Stmt:
        if not isinstance(s.target, ast.Name):
            raise self.err(s.target, "expected `for lane in pl.split_aiv(...)`")
        args = tuple(self.expr(a) for a in it.args)
        _, kws, _ = self._init_values(it)
        if any(k == "init_values" for k in (k.arg for k in it.keywords)):
            raise self.err(it, "pl.split_aiv takes no init_values")
        v = self.bind(s.target, s.target.id, ScalarType(DType.INDEX))
        blk = self.block(s.body, allow_yield=False)
        return ScopeStmt("split_aiv", v, args, tuple(kws), blk.stmts, self.span(s))

    def with_(self, s: ast.With) -> Stmt:
        """``with pl.<region>(...) [as name]:`` — a region kept as written (``forms.SCOPES``)."""
        if len(s.items) != 1:
            raise self.err(s, "expected one region per with statement")
        item = s.items[0]
        it = item.context_expr
        name = dotted(it.func) if isinstance(it, ast.Call) else None
        if name is None or not name.startswith("pl.") or name[3:] not in SCOPES:
            raise self.err(it, "expected a region such as with pl.at(level=pl.Level.CORE_GROUP): "
                           "(one of " + ", ".join(f"pl.{k}" for k in sorted(SCOPES)) + ")")
        assert isinstance(it, ast.Call)
        args = tuple(self.expr(a) for a in it.args)
        _, kws, _ = self._init_values(it)
        target = item.optional_vars
        if target is not None and not isinstance(target, ast.Name):
            raise self.err(target, "expected `with pl.<region>(...) as name:`")
        v = self.bind(target, target.id, None) if target is not None \
            else Var("_region")
        blk = self.block(s.body, allow_yield=False)
        return ScopeStmt(name[3:], v, args, tuple(kws), blk.stmts, self.span(s),
                         "with_as" if target is not None else "with")

    def if_(self, s: ast.If) -> Stmt:
        cond = self.expr(s.test)
        if isinstance(cond, (ListExpr, StrConst, Symbol)):
            raise self.err(s.test, "expected a scalar condition such as flag > 0")
        then, _ = self._run_body(s.body, [])
        els, _ = self._run_body(s.orelse, []) if s.orelse else (_Block(), [])
        ty, ey = then.yield_, els.yield_
        if ty is not None and ey is None and len(s.orelse) == 1 and isinstance(s.orelse[0], ast.If) \
                and els.stmts and isinstance(els.stmts[-1], IfStmt):
            # `elif` arms that yield: the nested if's results flow out of the else arm
            inner = els.stmts[-1]
            if [v.name for v in inner.return_vars] == ty.targets:
                y = YieldStmt([VarRef(v) for v in inner.return_vars], self.span(s.orelse[0]))
                els.stmts.append(y)
                ey = _Yield(s.orelse[0], list(ty.targets), None, y)
        rets: list[Var] = []
        if ty is None and ey is None:
            pass
        elif ty is None or ey is None:
            node = (ty or ey).node  # type: ignore[union-attr]
            raise self.err(node, "only one arm of this if yields; expected both the if and the "
                           "else arm to end with pl.yield_ into the same names")
        else:
            if ty.targets != ey.targets:
                raise self.err(ey.node, f"the if arm yields into ({', '.join(ty.targets)}) but the "
                               f"else arm into ({', '.join(ey.targets)}); expected the same names")
            if not ty.targets:
                raise self.err(ty.node, "expected x = pl.yield_(...) with target names in an if arm")
            ctypes = [self.type_of(e) for e in ty.stmt.values]
            rets = self._carried(s, then, len(ty.targets), "if", ctypes)
        return IfStmt(cond, then.stmts, els.stmts, rets, self.span(s))



def _yield_example(n: int) -> str:
    names = ", ".join(f"r{i}" for i in range(n))
    vals = ", ".join(f"v{i}" for i in range(n))
    return f"`{names} = pl.yield_({vals})`"
