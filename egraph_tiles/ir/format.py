"""IR → canonical DSL text: the DSL's printer, and the formatting of expressions, types and
statements in messages (the verifier's, structural equality's).

Canonical means: every variable has a unique, readable name within its function (the
source name when unambiguous, ``name_1``, ``name_2``... otherwise), every assignment
with a known type is annotated, loops print in their shortest equivalent range form,
and ``print_program(parse_program(print_program(p))) == print_program(p)``.
"""

from __future__ import annotations

import keyword

from .exprs import (BinOp, Call, Compare, Const, DictExpr, DynDim, Expr, ListExpr, Neg, StrConst,
                    Symbol, TupleItem, Var, VarRef, as_expr, const_int, var_reads)
from .ops import REGISTRY
from .stmts import (AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ForStmt, Function, IfStmt,
                    Param, Program, ReturnStmt, ScopeStmt, Stmt, WhileStmt, YieldStmt,
                    child_bodies, defined_vars, stmt_exprs)
from .types import (TYPE_CALLS, MemRef, OpaqueType, ScalarType, TensorType, TileType, TupleType,
                    Type, UnknownType)

_IND = "    "
_RESERVED = {"pl", "pld", "self", "tuple"}
#: binding strength of binary operators (Python's order; comparisons bind at 1, unary minus at 3)
_PREC = {"or": 0.1, "and": 0.2, "|": 0.4, "^": 0.5, "&": 0.6, "<<": 0.8, ">>": 0.8,
         "+": 1, "-": 1, "*": 2, "//": 2, "%": 2, "/": 2, "**": 4}


class Names:
    """Unique printable names for the variables of one function."""

    def __init__(self, reserved: set[str] | None = None) -> None:
        self._by_id: dict[int, str] = {}
        self._taken: set[str] = set(reserved or ())
        #: the last suffix given for each base name
        self._suffix: dict[str, int] = {}
        #: the dynamic dimensions printed with these names (declared at module level)
        self.dynamic: set[str] = set()

    def assigned(self) -> list[str]:
        return list(self._by_id.values())

    def __call__(self, v: Var) -> str:
        n = self._by_id.get(id(v))
        if n is None:
            n = self._assign(v)
        return n

    def _assign(self, v: Var) -> str:
        base = v.name if isinstance(v.name, str) else "v"
        if not base.isidentifier() or keyword.iskeyword(base) or base in _RESERVED:
            base = "v" if not base.isidentifier() else f"{base}_"
        # the first free ``base_i``; suffixes below the last one given for ``base`` were all
        # taken then and still are, so the search resumes there (no rescan per variable)
        i = self._suffix.get(base, 0)
        name = f"{base}_{i}" if i else base
        while name in self._taken:
            i += 1
            name = f"{base}_{i}"
        self._suffix[base] = i
        self._taken.add(name)
        self._by_id[id(v)] = name
        return name

    def rebind(self, v: Var, holder: Var) -> None:
        """Give ``v`` the name ``holder`` has (``holder`` is never read after ``v`` is bound)."""
        self._by_id[id(v)] = self._by_id[id(holder)]

    @classmethod
    def for_function(cls, f: Function, reserved: set[str] | None = None,
                     rebind: bool = False) -> "Names":
        """Names for ``f``'s variables.  With ``rebind``, a variable takes the name of the one
        it replaces (``out = pl.tile.store(t, [0, 0], out)``) when the replaced one is never
        read after it (textually: the same reading then in our reader and in PyPTO's, whose IR
        keeps one variable per name where we keep SSA values)."""
        names = cls(reserved)
        for p in f.params:
            names(p.var)
        if rebind:
            names._rebinding(f)
            return names

        def visit(body: list[Stmt]) -> None:
            for s in body:
                dv = defined_vars(s)
                ret = set(map(id, getattr(s, "return_vars", [])))
                for v in dv:
                    if id(v) not in ret:
                        names(v)
                for b in child_bodies(s):
                    visit(b)
                for v in getattr(s, "return_vars", []):
                    names(v)

        visit(f.body)
        return names

    def _rebinding(self, f: Function) -> None:
        """Name every variable of ``f`` in program order; the target of an assignment takes the
        name of the variable it replaces where that one is never read after it."""
        last: dict[int, int] = {}  # id(var) -> the last position (statement number) reading it
        order: list[tuple[int, Var, bool]] = []  # (position, var, an assignment's target)
        at = 0

        def visit(body: list[Stmt]) -> None:
            nonlocal at
            for s in body:
                at += 1
                here = at
                ret = getattr(s, "return_vars", [])
                dv = [v for v in defined_vars(s) if all(v is not r for r in ret)]
                for e in stmt_exprs(s):
                    for r in var_reads(e):
                        last[id(r)] = here
                for v in dv:  # a shape naming a scalar variable reads it
                    t = v.type
                    for d in (*getattr(t, "shape", ()), *(getattr(t, "valid_shape", None) or ())):
                        for r in var_reads(d):
                            last[id(r)] = here
                    order.append((here, v, isinstance(s, AssignStmt)))
                for b in child_bodies(s):
                    visit(b)
                for v in ret:
                    order.append((at, v, False))

        visit(f.body)
        holder: dict[str, Var] = {self._by_id[id(p.var)]: p.var for p in f.params}
        for here, v, target in order:
            if id(v) in self._by_id:
                continue
            old = holder.get(v.name) if target and isinstance(v.name, str) else None
            if old is not None and last.get(id(old), 0) <= here:
                self.rebind(v, old)
            else:
                self(v)
            holder[self._by_id[id(v)]] = v


# ---------------------------------------------------------------- expressions


def format_expr(e: Expr, names: Names | None = None, prec: int = 0) -> str:
    """Format an expression; ``prec`` is the binding strength the context needs."""
    nm = names or Names()
    if isinstance(e, Const):
        v = e.value
        if isinstance(v, bool):
            return "True" if v else "False"
        s = repr(v)
        if isinstance(v, (int, float)) and v < 0 and prec >= 3:
            return f"({s})"
        return s
    if isinstance(e, VarRef):
        return nm(e.var)
    if isinstance(e, StrConst):
        return repr(e.value)
    if isinstance(e, BinOp):
        p = _PREC[e.op]
        left = p + 1 if e.op == "**" else p  # ** groups to the right, the others to the left
        s = f"{format_expr(e.lhs, nm, left)} {e.op} {format_expr(e.rhs, nm, p + 1)}"
        return f"({s})" if p < prec else s
    if isinstance(e, Neg):
        s = f"-{format_expr(e.operand, nm, 3)}"
        return f"({s})" if prec > 3 else s
    if isinstance(e, Compare):
        s = f"{format_expr(e.lhs, nm, 1)} {e.op} {format_expr(e.rhs, nm, 1)}"
        return f"({s})" if prec > 0 else s
    if isinstance(e, ListExpr):
        return "[" + ", ".join(format_expr(i, nm) for i in e.items) + "]"
    if isinstance(e, Symbol):
        if e.path and e.path[0] in ("pld", "self"):
            return ".".join(e.path)
        return "pl." + ".".join(e.path)
    if isinstance(e, Call):
        return format_call(e, nm)
    if isinstance(e, DictExpr):
        return "{" + ", ".join(f"{format_expr(k, nm)}: {format_expr(v, nm)}" for k, v in e.items) + "}"
    if isinstance(e, DynDim):
        nm.dynamic.add(e.name)
        return e.name
    if isinstance(e, TupleItem):
        return f"{format_expr(e.value, nm, 5)}[{e.index}]"
    raise TypeError(f"cannot print expression {e!r}")


def _op_name(op: str) -> str:
    """Registered ops and type elements are stored without ``pl.``; every other call keeps
    its full spelling (``pl.tile.assemble``, ``self.fn``).  The distributed ops live in their own
    module (``pld.tile.remote_store``), registered or not."""
    if op.startswith("pld."):
        return op
    if op in REGISTRY or op in TYPE_CALLS:
        return f"pl.{op}"
    return op


def format_call(c: Call, names: Names | None = None) -> str:
    nm = names or Names()
    if c.op in ("not", "~") and len(c.args) == 1 and not c.kwargs:  # forms.UNARY_OPS
        s = f"{c.op} ({format_expr(c.args[0], nm)})"
        return f"({s})" if c.op == "not" else s  # `not` binds looser than a comparison
    parts = [format_expr(a, nm) for a in c.args]
    parts += [f"{k}={format_expr(v, nm)}" for k, v in c.kwargs]
    return f"{_op_name(c.op)}({', '.join(parts)})"


def _dims(shape: tuple[Expr, ...], nm: Names) -> str:
    return "[" + ", ".join(format_expr(d, nm) for d in shape) + "]"


def format_type(t: Type | None, names: Names | None = None) -> str | None:
    """The annotation text of a type, or None when it has no spelling (unknown)."""
    nm = names or Names()
    if isinstance(t, TileType):
        items = [_dims(t.shape, nm), repr(t.dtype)]
        if t.memory is not None:
            items.append(repr(t.memory))
        if t.memref is not None:
            items.append(_memref(t.memref, nm))
        if t.view is not None:
            view = t.view
            if t.valid_shape is not None and isinstance(view, Call):
                kws = tuple((k, v) for k, v in view.kwargs if k != "valid_shape")
                view = Call(view.op, view.args, (("valid_shape", ListExpr(t.valid_shape)),) + kws)
            items.append(format_expr(view, nm))
        elif t.valid_shape is not None:
            items.append(f"pl.TileView(valid_shape={_dims(t.valid_shape, nm)})")
        return f"pl.Tile[{', '.join(items)}]"
    if isinstance(t, TensorType):
        head = "pld.DistributedTensor" if t.distributed else "pl.Tensor"
        items = [_dims(t.shape, nm), repr(t.dtype)]
        if t.view is not None:
            items.append(format_expr(t.view, nm))
        if t.memref is not None:
            items.append(_memref(t.memref, nm))
        return f"{head}[{', '.join(items)}]"
    if isinstance(t, OpaqueType):
        return t.spelling
    if isinstance(t, ScalarType):
        return f"pl.Scalar[{t.dtype!r}]"
    if isinstance(t, TupleType):
        if not t.elements:
            return "pl.Tuple[()]"
        inner = [format_type(x, nm) for x in t.elements]
        if any(i is None for i in inner):
            return None
        return f"pl.Tuple[{', '.join(inner)}]"  # type: ignore[arg-type]
    return None


def _memref(m: MemRef, nm: Names) -> str:
    off = m.byte_offset
    if m.base is not None and m.size is not None:
        parts = [format_expr(m.base, nm), format_expr(as_expr(off), nm), format_expr(as_expr(m.size), nm)]
        return f"pl.MemRef({', '.join(parts)})"
    if m.base is not None:
        return f"pl.MemRef({format_expr(m.base, nm)})"
    if isinstance(off, int):
        return f"pl.MemRef({off})"
    if isinstance(off, StrConst) and off.value.isidentifier():
        return f"pl.MemRef({off.value})"
    return f"pl.MemRef({format_expr(off, nm)})"


# ---------------------------------------------------------------- statements


def _range_args(s: ForStmt, nm: Names) -> list[str]:
    start, step = const_int(s.start), const_int(s.step)
    stop = format_expr(s.stop, nm)
    if isinstance(s.step, Const) and step == 1:
        if isinstance(s.start, Const) and start == 0:
            return [stop]
        return [format_expr(s.start, nm), stop]
    return [format_expr(s.start, nm), stop, format_expr(s.step, nm)]


def _tuple(items: list[str]) -> str:
    if len(items) == 1:
        return f"({items[0]},)"
    return "(" + ", ".join(items) + ")"


def format_stmt(s: Stmt, names: Names | None = None) -> str:
    """One line naming a statement (its header for compound statements), for messages."""
    nm = names or Names()
    lines: list[str] = []
    _stmt(s, nm, 0, lines, [])
    return lines[0] if lines else ""


def _stmt(s: Stmt, nm: Names, depth: int, out: list[str], yield_targets: list[Var]) -> None:
    ind = _IND * depth
    if isinstance(s, AssignStmt):
        ann = format_type(s.target.type, nm) if not isinstance(s.target.type, UnknownType) else None
        lhs = nm(s.target) + (f": {ann}" if ann else "")
        out.append(f"{ind}{lhs} = {format_expr(s.value, nm)}")
    elif isinstance(s, EvalStmt):
        out.append(f"{ind}{format_call(s.call, nm)}")
    elif isinstance(s, YieldStmt):
        vals = ", ".join(format_expr(v, nm) for v in s.values)
        if not yield_targets:
            out.append(f"{ind}pl.yield_({vals})")
        elif len(yield_targets) == 1:
            v = yield_targets[0]
            ann = format_type(v.type, nm) if v.type is not None else None
            out.append(f"{ind}{nm(v)}{': ' + ann if ann else ''} = pl.yield_({vals})")
        else:
            tg = ", ".join(nm(v) for v in yield_targets)
            out.append(f"{ind}{tg} = pl.yield_({vals})")
    elif isinstance(s, ForStmt):
        args = _range_args(s, nm)
        if s.iter_args:
            args.append("init_values=" + _tuple([format_expr(e, nm) for e in s.init_values]))
        args += [f"{k}={format_expr(v, nm)}" for k, v in s.kwargs]
        tgt = nm(s.loop_var)
        if s.iter_args:
            tgt += ", " + _tuple([nm(v) for v in s.iter_args])
        out.append(f"{ind}for {tgt} in pl.{s.kind.value}({', '.join(args)}):")
        _body(s.body, nm, depth + 1, out, s.return_vars)
    elif isinstance(s, WhileStmt):
        inits = _tuple([format_expr(e, nm) for e in s.init_values])
        out.append(f"{ind}for {_tuple([nm(v) for v in s.iter_args])} in "
                   f"pl.while_(init_values={inits}):")
        out.append(f"{ind}{_IND}pl.cond({format_expr(s.cond, nm)})")
        _body(s.body, nm, depth + 1, out, s.return_vars, allow_empty=True)
    elif isinstance(s, IfStmt):
        out.append(f"{ind}if {format_expr(s.cond, nm)}:")
        _body(s.then_body, nm, depth + 1, out, s.return_vars)
        if s.else_body or s.return_vars:
            out.append(f"{ind}else:")
            _body(s.else_body, nm, depth + 1, out, s.return_vars)
    elif isinstance(s, ScopeStmt):
        parts = [format_expr(a, nm) for a in s.args]
        parts += [f"{k}={format_expr(v, nm)}" for k, v in s.kwargs]
        call = f"pl.{s.kind}({', '.join(parts)})"
        if s.form == "for":
            out.append(f"{ind}for {nm(s.var)} in {call}:")
        else:
            out.append(f"{ind}with {call}{' as ' + nm(s.var) if s.form == 'with_as' else ''}:")
        _body(s.body, nm, depth + 1, out, [])
    elif isinstance(s, BreakStmt):
        out.append(f"{ind}break")
    elif isinstance(s, ContinueStmt):
        out.append(f"{ind}continue")
    elif isinstance(s, ReturnStmt):
        vals = ", ".join(format_expr(v, nm) for v in s.values)
        out.append(f"{ind}return {vals}" if vals else f"{ind}return")
    else:
        raise TypeError(f"cannot print statement {s!r}")


def _body(body: list[Stmt], nm: Names, depth: int, out: list[str], yield_targets: list[Var],
          allow_empty: bool = False) -> None:
    if not body and not allow_empty:
        out.append(_IND * depth + "pass")
    for s in body:
        _stmt(s, nm, depth, out, yield_targets)


def _param(p: Param, nm: Names) -> str:
    t = format_type(p.var.type, nm) or "pl.Scalar[pl.INDEX]"
    if p.is_out:
        t = f"pl.InOut[{t}]" if p.inout else f"pl.Out[{t}]"
    return f"{nm(p.var)}: {t}"


def format_function(f: Function, depth: int = 1) -> list[str]:
    return _function_lines(f, set(), depth)[0]


def _function_lines(f: Function, reserved: set[str], depth: int = 1,
                    rebind: bool = False) -> tuple[list[str], Names]:
    nm = Names.for_function(f, reserved, rebind)
    ind = _IND * depth
    kws = [f"type=pl.FunctionType.{f.func_type.value}"]
    kws += [f"{k}={format_expr(v, nm)}" for k, v in f.decorator_kwargs]
    params = (["self"] if f.has_self else []) + [_param(p, nm) for p in f.params]
    rts = [format_type(t, nm) or "None" for t in f.return_types]
    ret = ""
    if len(rts) == 1:
        ret = f" -> {rts[0]}"
    elif len(rts) > 1:
        ret = f" -> tuple[{', '.join(rts)}]"
    head = f"{ind}def {f.name}({', '.join(params)}){ret}:"
    if len(head) > 100 and params:
        sep = ",\n" + ind + _IND * 2
        head = f"{ind}def {f.name}(\n{ind}{_IND * 2}{sep.join(params)},\n{ind}){ret}:"
    lines = [f"{ind}@pl.function({', '.join(kws)})", head]
    _body(f.body, nm, depth + 1, lines, [], allow_empty=f.abstract)
    if f.abstract:
        lines.append(_IND * (depth + 1) + "...")
    return lines, nm


def print_program(prog: Program, *, rebind: bool = False) -> str:
    """Canonical DSL text of a program.  ``rebind``: a variable that replaces another one never
    read after it takes its name, as PyPTO's printer names them (``out = pl.tile.store(t,
    [0, 0], out)``); by default every variable has a name of its own."""
    dyn: set[str] = set()
    body = ["@pl.program", f"class {prog.name}:"]
    if not prog.functions:
        body.append(_IND + "pass")
    for i, f in enumerate(prog.functions):
        if i:
            body.append("")
        lines, nm = _function_lines(f, set(), rebind=rebind)
        clash = nm.dynamic & set(nm.assigned())
        if clash:  # a local named like a dynamic dimension it reads: rename the local
            lines, nm = _function_lines(f, clash, rebind=rebind)
        dyn |= nm.dynamic
        body += lines
    text = "\n".join(body)
    header = ["import pypto.language as pl"]
    if "pld." in text:
        header.append("import pypto.language.distributed as pld")
    if dyn:
        header.append("")
        header += [f'{n} = pl.dynamic("{n}")' for n in sorted(dyn)]
    return "\n".join(header) + "\n\n\n" + text + "\n"


# ``str(program)`` is the program's text.  Assigned here rather than written in ``ir.stmts``,
# which this module imports: the printer sits above the IR classes in the import order.
Program.__str__ = print_program  # type: ignore[method-assign,assignment]
