"""Source-preserving rewriting: apply a pass's result to the user's own text.

The canonical printer reprints a whole program; a user who keeps kernels in version control
wants the optimizer to touch only the statements it changes, as a formatter or a linter's fix
would.  :func:`edit_source` compares the program read from ``text`` with the program the pass
returned and edits just those statements; every other byte — comments, docstrings, blank lines,
module constants, annotations, the user's names — stays as written.

How the two programs map onto each other: the pass keeps every statement it does not change
(the same object) and every variable (the same :class:`Var`); a statement it rewrites keeps its
target variable (or, for a statement without one, its kind and source position).  So, block by
block, each output statement is *kept* (same object), *changed* (its source statement found by
target or position) or *inserted* (a copy); input statements left over were *removed*.  Each
becomes a token-exact edit at the positions :mod:`ast` records:

* changed — only the operands that differ are renamed when the call keeps its shape, otherwise
  the value expression is reprinted (the target and its annotation stay as written);
* inserted — a new line ``name = value`` in the statement's indentation, in place of the slice
  it replaces when there is one, otherwise right after the statement before it; integers in it
  are spelled with the module constants the neighbouring source statement uses (``HEAD_DIM``);
* removed — its lines are deleted (a block left empty gets ``pass``).

The result is checked: it must parse to a program structurally equal to the pass's output.
Anything this module cannot express as such edits raises :class:`EditError`, and callers fall
back to the canonical printer (never to a wrong program).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..ir.exprs import Call, Const, DynDim, Expr, ListExpr, Var, VarRef
from ..ir.stmts import (AssignStmt, EvalStmt, ForStmt, IfStmt, Program, ReturnStmt, ScopeStmt,
                        Stmt, WhileStmt, YieldStmt, child_bodies, defined_vars, stmt_exprs)
from ..ir.format import format_expr


class EditError(Exception):
    """The change cannot be written as edits of the user's text (the caller falls back to the
    canonical printer)."""


@dataclass
class _Edit:
    start: int
    end: int
    text: str


class _UserNames:
    """Printing names for :func:`format_expr`: the user's own (``Var.name``), fresh ones for
    variables the pass introduced whose name the function already uses."""

    def __init__(self, fresh: dict[int, str]):
        self.fresh = fresh
        self.dynamic: set[str] = set()

    def __call__(self, v: Var) -> str:
        return self.fresh.get(id(v), v.name)


class _Source:
    """The text with ``ast`` positions turned into string offsets."""

    def __init__(self, text: str, filename: str):
        self.text = text
        try:
            self.tree = ast.parse(text, filename=filename)
        except SyntaxError as e:
            raise EditError(f"the source does not parse ({e.msg})") from None
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.stmts: dict[tuple[int, int], ast.stmt] = {}
        todo = list(self.tree.body)
        while todo:  # statements only: no walk through every expression node
            node = todo.pop()
            self.stmts.setdefault((node.lineno, node.col_offset), node)
            for name in ("body", "orelse", "finalbody"):
                todo.extend(getattr(node, name, ()))
        self.constants = _int_constants(self.tree)

    def offset(self, line: int, col: int) -> int:
        """The string offset of ``ast``'s (1-based line, UTF-8 byte column)."""
        raw = self.lines[line - 1].encode("utf-8")[:col]
        return self.starts[line - 1] + len(raw.decode("utf-8", errors="replace"))

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        return self.text[self.start(node):self.end(node)]

    def node(self, s: Stmt) -> ast.stmt:
        n = self.stmts.get((s.span.line, s.span.col))
        if n is None:
            raise EditError(f"no source statement at line {s.span.line}")
        return n

    def indent(self, n: ast.stmt) -> str:
        return self.lines[n.lineno - 1][:len(self.lines[n.lineno - 1]) -
                                        len(self.lines[n.lineno - 1].lstrip())]

    def line_start(self, line: int) -> int:
        return self.starts[line - 1]

    def after_lines(self, n: ast.stmt) -> int:
        """The offset just past the last line of ``n`` (its newline included)."""
        return self.starts[n.end_lineno]  # type: ignore[index]

    def whole_lines(self, n: ast.stmt) -> tuple[int, int]:
        """The lines ``n`` occupies alone (a trailing comment goes with it)."""
        first = self.lines[n.lineno - 1]
        last = self.lines[n.end_lineno - 1]  # type: ignore[index]
        before = first.encode("utf-8")[:n.col_offset].decode("utf-8", errors="replace")
        after = last.encode("utf-8")[n.end_col_offset:].decode("utf-8", errors="replace")
        tail = after.strip()
        if before.strip() or not (tail == "" or tail.startswith("#")):
            raise EditError(f"line {n.lineno} holds more than one statement")
        return self.line_start(n.lineno), self.after_lines(n)


def _int_constants(tree: ast.Module) -> dict[str, int]:
    """Module-level ``NAME = <int literal>`` constants (for spelling inserted statements)."""
    out: dict[str, int] = {}
    for s in tree.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            target, value = s.targets[0], s.value
        elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value:
            target, value = s.target, s.value
        else:
            continue
        if isinstance(value, ast.Constant) and type(value.value) is int:
            if target.id in out:  # rebound: its spelling is ambiguous
                out[target.id] = None  # type: ignore[assignment]
            else:
                out[target.id] = value.value
    return {k: v for k, v in out.items() if v is not None}


def _spell(e: Expr, spellings: dict[int, str]) -> Expr:
    """``e`` with integer constants replaced by the module constant that spells them (printed
    by name: a :class:`DynDim` prints as its name)."""
    if isinstance(e, Const) and type(e.value) is int and e.value in spellings:
        return DynDim(spellings[e.value])
    if isinstance(e, ListExpr):
        return ListExpr(tuple(_spell(i, spellings) for i in e.items))
    if isinstance(e, Call):
        return Call(e.op, tuple(_spell(a, spellings) for a in e.args),
                    tuple((k, _spell(v, spellings)) for k, v in e.kwargs))
    return e


def _renames(node: ast.AST, old: Expr, new: Expr, out: list[tuple[ast.Name, Var]]) -> bool:
    """Walk the source ``node`` and the expressions before and after the pass together; collect
    the operand names to rewrite.  False when ``new`` differs from ``old`` other than by renamed
    operands (or the source does not mirror ``old``)."""
    if old == new:
        return True
    if isinstance(old, VarRef) and isinstance(new, VarRef):
        if isinstance(node, ast.Name) and node.id == old.var.name:
            out.append((node, new.var))
            return True
        return False
    if isinstance(old, Call) and isinstance(new, Call):
        if not isinstance(node, ast.Call) or old.op != new.op or len(old.args) != len(new.args) \
                or len(node.args) != len(old.args) \
                or [k for k, _ in old.kwargs] != [k for k, _ in new.kwargs] \
                or [k.arg for k in node.keywords] != [k for k, _ in old.kwargs]:
            return False
        pairs = list(zip(node.args, old.args, new.args))
        pairs += [(k.value, a, b) for k, (_, a), (_, b) in zip(node.keywords, old.kwargs, new.kwargs)]
        return all(_renames(n, a, b, out) for n, a, b in pairs)
    if isinstance(old, ListExpr) and isinstance(new, ListExpr):
        if not isinstance(node, (ast.List, ast.Tuple)) or len(node.elts) != len(old.items) \
                or len(old.items) != len(new.items):
            return False
        return all(_renames(n, a, b, out) for n, a, b in zip(node.elts, old.items, new.items))
    return False


class _Editor:
    def __init__(self, src: _Source, before: Program, after: Program):
        self.src = src
        self.edits: list[_Edit] = []
        self.before, self.after = before, after
        self.names = _UserNames({})

    # -- helpers

    def put(self, start: int, end: int, text: str) -> None:
        self.edits.append(_Edit(start, end, text))

    def format(self, e: Expr, near: list[ast.stmt]) -> str:
        """``e`` printed with the user's names, its integers spelled as the module constants
        the statements ``near`` use (when exactly one constant there has that value)."""
        used = {n.id for s in near for n in ast.walk(s) if isinstance(n, ast.Name)}
        by_value: dict[int, list[str]] = {}
        for name in sorted(used):
            if name in self.src.constants:
                by_value.setdefault(self.src.constants[name], []).append(name)
        spellings = {v: ns[0] for v, ns in by_value.items() if len(ns) == 1}
        return format_expr(_spell(e, spellings), self.names)

    def line_for(self, s: Stmt, near: list[ast.stmt], indent: str) -> str:
        if isinstance(s, AssignStmt):
            return f"{indent}{self.names(s.target)} = {self.format(s.value, near)}\n"
        if isinstance(s, EvalStmt):
            return f"{indent}{self.format(s.call, near)}\n"
        raise EditError(f"cannot insert a {type(s).__name__} at line {s.span.line}")

    # -- blocks

    def function_names(self, node: ast.AST) -> set[str]:
        names = set(self.src.constants)
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                names.add(n.id)
            elif isinstance(n, ast.arg):
                names.add(n.arg)
        return names

    def run(self) -> None:
        if len(self.before.functions) != len(self.after.functions):
            raise EditError("the pass changed the functions of the program")
        for fb, fa in zip(self.before.functions, self.after.functions):
            fnode = self.src.stmts.get((fb.span.line, fb.span.col))
            if fnode is None or [p.var for p in fb.params] != [p.var for p in fa.params]:
                raise EditError(f"function {fb.name}: its signature changed")
            taken = self.function_names(fnode)
            self.fresh_names(fa.body, {id(v) for s in _walk(fb.body) for v in defined_vars(s)},
                             taken)
            self.block(fb.body, fa.body)

    def fresh_names(self, body: list[Stmt], old: set[int], taken: set[str]) -> None:
        """Variables the pass introduced get their name unless the function already uses it."""
        for s in _walk(body):
            for v in defined_vars(s):
                if id(v) in old or id(v) in self.names.fresh:
                    continue
                name, i = v.name, 0
                while name in taken:
                    i += 1
                    name = f"{v.name}_{i}"
                taken.add(name)
                if name != v.name:
                    self.names.fresh[id(v)] = name

    def block(self, before: list[Stmt], after: list[Stmt]) -> None:
        kept = {id(s) for s in before} & {id(s) for s in after}
        by_target = {id(s.target): s for s in before
                     if isinstance(s, AssignStmt) and id(s) not in kept}
        by_span = {(type(s), s.span.line, s.span.col): s for s in before
                   if not isinstance(s, AssignStmt) and id(s) not in kept}
        paired: dict[int, Stmt] = {}   # id(after stmt) -> its source statement
        used: set[int] = set(kept)
        for s in after:
            if id(s) in kept:
                paired[id(s)] = s
                continue
            old = by_target.get(id(s.target)) if isinstance(s, AssignStmt) \
                else by_span.get((type(s), s.span.line, s.span.col))
            if old is not None and id(old) not in used:
                used.add(id(old))
                paired[id(s)] = old
        removed = [s for s in before if id(s) not in used]
        for s in after:
            old = paired.get(id(s))
            if old is not None and old is not s:
                self.change(old, s)
        self.place(before, after, paired, removed)

    def place(self, before: list[Stmt], after: list[Stmt], paired: dict[int, Stmt],
              removed: list[Stmt]) -> None:
        """Delete the removed statements; write each run of inserted ones where it belongs."""
        src = self.src
        order = {id(s): i for i, s in enumerate(before)}
        replaced: set[int] = set()
        i = 0
        while i < len(after):
            if id(after[i]) in paired:
                i += 1
                continue
            j = i
            while j < len(after) and id(after[j]) not in paired:
                j += 1
            run = after[i:j]
            prev = paired.get(id(after[i - 1])) if i else None
            nxt = paired.get(id(after[j])) if j < len(after) else None
            lo = order[id(prev)] if prev is not None else -1
            hi = order[id(nxt)] if nxt is not None else len(before)
            gap = [s for s in removed if lo < order[id(s)] < hi and id(s) not in replaced]
            near = [src.node(x) for x in (*gap, prev, nxt) if x is not None]
            near += [n for s in run if (n := src.stmts.get((s.span.line, s.span.col)))]
            if gap:
                anchor = src.node(gap[-1])
                replaced.add(id(gap[-1]))
                start, end = src.whole_lines(anchor)
            elif prev is not None:
                anchor = src.node(prev)
                start = end = src.after_lines(anchor)
            elif nxt is not None:
                anchor = src.node(nxt)
                start = end = src.line_start(anchor.lineno)
            else:
                raise EditError("statements inserted into an empty body")
            text = "".join(self.line_for(s, near, src.indent(anchor)) for s in run)
            if start == end and start == len(src.text) and not src.text.endswith("\n"):
                text = "\n" + text.rstrip("\n")
            self.put(start, end, text)
            i = j
        for k, s in enumerate(removed):
            if id(s) in replaced:
                continue
            n = src.node(s)
            start, end = src.whole_lines(n)
            last = not after and k == len(removed) - 1 and not replaced
            self.put(start, end, src.indent(n) + "pass\n" if last else "")

    def change(self, old: Stmt, new: Stmt) -> None:
        n = self.src.node(old)
        if isinstance(new, (ForStmt, WhileStmt, IfStmt, ScopeStmt)):
            self.compound(old, new, n)
            return
        if isinstance(new, AssignStmt):
            value_node = n.value if isinstance(n, (ast.Assign, ast.AnnAssign)) else None
            old_e, new_e = old.value, new.value  # type: ignore[attr-defined]
        elif isinstance(new, EvalStmt):
            value_node = n.value if isinstance(n, ast.Expr) else None
            old_e, new_e = old.call, new.call  # type: ignore[attr-defined]
        elif isinstance(new, (ReturnStmt, YieldStmt)):
            self.values(old, new, n)
            return
        else:
            raise EditError(f"cannot rewrite a {type(new).__name__} at line {old.span.line}")
        if value_node is None:
            raise EditError(f"line {old.span.line}: unexpected statement form")
        self.expr(value_node, old_e, new_e, [n])

    def expr(self, node: ast.AST, old: Expr, new: Expr, near: list[ast.stmt]) -> None:
        renames: list[tuple[ast.Name, Var]] = []
        if _renames(node, old, new, renames):
            for name_node, var in renames:
                self.put(self.src.start(name_node), self.src.end(name_node), self.names(var))
        else:
            self.put(self.src.start(node), self.src.end(node), self.format(new, near))

    def values(self, old: Stmt, new: Stmt, n: ast.stmt) -> None:
        if isinstance(n, ast.Return):
            node = n.value
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.Expr)) and isinstance(n.value, ast.Call):
            call = n.value
            if len(call.args) != len(old.values) or len(old.values) != len(new.values):  # type: ignore[attr-defined]
                raise EditError(f"line {old.span.line}: the yield changed its arity")
            for a, x, y in zip(call.args, old.values, new.values):  # type: ignore[attr-defined]
                self.expr(a, x, y, [n])
            return
        else:
            raise EditError(f"line {old.span.line}: unexpected statement form")
        ov, nv = old.values, new.values  # type: ignore[attr-defined]
        if node is None or len(ov) != len(nv):
            raise EditError(f"line {old.span.line}: the return changed its arity")
        if isinstance(node, ast.Tuple) and len(ov) != 1:
            for a, x, y in zip(node.elts, ov, nv):
                self.expr(a, x, y, [n])
        elif len(ov) == 1:
            self.expr(node, ov[0], nv[0], [n])
        else:
            raise EditError(f"line {old.span.line}: unexpected return form")

    def compound(self, old: Stmt, new: Stmt, n: ast.stmt) -> None:
        if type(old) is not type(new):
            raise EditError(f"line {old.span.line}: the statement changed its kind")
        if [id(v) for v in defined_vars(old)] != [id(v) for v in defined_vars(new)]:
            raise EditError(f"line {old.span.line}: the statement's variables changed")
        oe, ne = stmt_exprs(old), stmt_exprs(new)
        if len(oe) != len(ne):
            raise EditError(f"line {old.span.line}: the statement's header changed")
        if any(a != b for a, b in zip(oe, ne)):
            if not isinstance(old, ForStmt) or [old.start, old.stop, old.step] != \
                    [new.start, new.stop, new.step]:  # type: ignore[attr-defined]
                raise EditError(f"line {old.span.line}: the statement's header changed")
            inits = [k.value for k in n.iter.keywords if k.arg == "init_values"]  # type: ignore[attr-defined]
            if not inits or not isinstance(inits[0], (ast.Tuple, ast.List)):
                raise EditError(f"line {old.span.line}: the loop's init values changed")
            for a, x, y in zip(inits[0].elts, old.init_values, new.init_values):  # type: ignore[attr-defined]
                self.expr(a, x, y, [n])
        for bo, bn in zip(child_bodies(old), child_bodies(new)):
            self.block(bo, bn)

    def apply(self) -> str:
        text = self.src.text
        edits = sorted(self.edits, key=lambda e: (e.start, e.end))
        for a, b in zip(edits, edits[1:]):
            if a.end > b.start:
                raise EditError("overlapping edits")
        out, pos = [], 0
        for e in edits:
            out.append(text[pos:e.start])
            out.append(e.text)
            pos = e.end
        out.append(text[pos:])
        return "".join(out)


def _walk(body: list[Stmt]):
    for s in body:
        yield s
        for b in child_bodies(s):
            yield from _walk(b)


def edit_source(text: str, before: Program, after: Program, filename: str = "<input>") -> str:
    """The user's ``text`` with only the statements the pass changed edited, turning the
    program ``before`` (read from ``text``) into ``after`` (the pass's output).  Raises
    :class:`EditError` when the change cannot be written as such edits, or when the edited text
    would not read back as ``after``."""
    from ..ir.equality import structural_equal
    from .parser import parse_program

    src = _Source(text, filename)
    ed = _Editor(src, before, after)
    ed.run()
    out = ed.apply()
    if out == text:
        return out
    try:
        back = parse_program(out, filename=filename)
    except ValueError as e:
        raise EditError(f"the edited text does not read back ({e})") from None
    if not structural_equal(back, after):
        raise EditError("the edited text does not read back as the optimized program")
    return out
