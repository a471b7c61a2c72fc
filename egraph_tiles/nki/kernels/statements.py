"""Statement-level edits of a migration: dropped ``mask=`` arguments, ``if`` guards, copy
instructions for ``.ap()`` destinations, per-iteration branches of unrolled loops, and the
removal of index definitions no longer read.  Edits are character ranges of the source,
applied from the end.
"""

from __future__ import annotations

import ast
from typing import Any

from egraph_tiles.nki.index.symint import sym_text
from egraph_tiles.nki.kernels.analyze import AccessReport, KernelReport
from egraph_tiles.nki.kernels.values import Finding


def _names(report: KernelReport) -> dict[str, str]:
    return dict(report.read.source_names)


#: the text of a symbol a helper cannot name (a loop variable of its caller that is not one of
#: its parameters): a rewrite whose text contains it is refused
UNNAMED = "\x00"


def scope_names(report: KernelReport, in_helper: bool, local: dict[str, str] | None
                ) -> dict[str, str]:
    """How the statement's own scope spells each symbol: the kernel's names, or inside a helper
    the helper's parameter bound to the caller's loop variable, its own loop variables, and
    ``nl.program_id(k)`` for a program id (a closure -- ``local`` None -- sees the caller's
    names); anything else is :data:`UNNAMED`."""
    names = _names(report)
    if not in_helper or local is None:
        return names
    lang = _module_names(report.read.tree).get("language")
    out = {}
    for k in names:
        if k in local:
            out[k] = local[k]
        elif k.startswith("program_id_") and lang is not None:
            out[k] = f"{lang}.program_id({k[len('program_id_'):]})"
        else:
            out[k] = UNNAMED
    return out


def access_names(report: KernelReport, rep: AccessReport) -> dict[str, str]:
    """:func:`scope_names` at an access."""
    return scope_names(report, rep.raw.in_helper, rep.raw.local_names)


class _Source:
    """Character offsets of ``ast`` positions (whose columns count UTF-8 bytes)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def pos(self, line: int, col: int) -> int:
        text = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        return self.starts[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8", "ignore"))

    def span(self, node: Any) -> tuple[int, int]:
        return self.pos(node.lineno, node.col_offset), self.pos(node.end_lineno, node.end_col_offset)


def _mask_edits(report: KernelReport, done: set[int], lone: set[int], src: _Source,
                findings: list[Finding]) -> list[tuple[int, int, str]]:
    """Drop each ``mask=`` whose accesses were all rewritten, and each one (``lone``: ids of
    keywords) on a call without indexed operands whose operands already have its box."""
    calls: dict[int, tuple[ast.Call, ast.keyword, list[AccessReport]]] = {}
    for rep in report.accesses:
        if rep.raw.mask_node is not None and rep.raw.call_node is not None:
            key = id(rep.raw.mask_node)
            calls.setdefault(key, (rep.raw.call_node, rep.raw.mask_node, []))[2].append(rep)
    for call, kw, _ in report.read.masked_calls:
        if id(kw) in lone:
            calls.setdefault(id(kw), (call, kw, []))
    edits = []
    for call, kw, reps in calls.values():
        if not all(id(r.raw.node) in done for r in reps):
            findings.append(Finding(kw.lineno, f"mask= of `{ast.unparse(call.func)}` kept: not "
                                    "every access of the call was rewritten", "migration"))
            continue
        before = [n for n in (*call.args, *call.keywords)
                  if n is not kw and (n.end_lineno, n.end_col_offset) <= (kw.lineno, kw.col_offset)]
        if before:
            prev = max(before, key=lambda n: (n.end_lineno, n.end_col_offset))
            start = src.pos(prev.end_lineno, prev.end_col_offset)
        else:
            start = src.pos(kw.lineno, kw.col_offset)
        end = src.pos(kw.end_lineno, kw.end_col_offset)
        if not before:  # mask= is the first argument: drop its trailing comma too
            rest = report.read.source[end:]
            stripped = rest.lstrip()
            if stripped.startswith(","):
                end += len(rest) - len(stripped) + 1
        edits.append((start, end, ""))
    return edits


def guard_text(rep: AccessReport, names: dict[str, str]) -> str:
    """The Python condition of an access's loop-variable predicates (``128*i - 512*j >= 0``)."""
    return " and ".join(f"{sym_text(g, names)} {op} 0" for g, op in zip(rep.guards, rep.guard_ops))


def _statement_of(tree: ast.Module | None, node: ast.AST, target: bool = False
                  ) -> ast.stmt | None:
    """The statement whose value is ``node`` (``f(...)``, ``x = f(...)``, ``t[...] += f(...)``),
    or with ``target`` the assignment ``node = value`` (its only target)."""
    for st in ast.walk(tree) if tree is not None else ():
        if target:
            if isinstance(st, ast.Assign) and st.targets == [node]:
                return st
        elif isinstance(st, (ast.Expr, ast.Assign, ast.AugAssign)) and st.value is node:
            return st
    return None


def _module_names(tree: ast.Module | None) -> dict[str, str]:
    """How the file spells ``nki.isa`` and ``nki.language`` (``nisa``, ``nl``, ``nki.isa``);
    a module imported by its own name wins over a path through ``nki``."""
    direct: dict[str, str] = {}
    via: dict[str, str] = {}
    for st in tree.body if tree is not None else ():
        for a in st.names if isinstance(st, (ast.Import, ast.ImportFrom)) else ():
            full = f"{st.module}.{a.name}" if isinstance(st, ast.ImportFrom) else a.name
            local = a.asname or (a.name if isinstance(st, ast.ImportFrom) else full)
            for sub in ("isa", "language"):
                if full.endswith(f"nki.{sub}"):
                    direct.setdefault(sub, local)
                elif full.endswith("nki"):
                    via.setdefault(sub, f"{local}.{sub}")
    return {**via, **direct}


def _copy_call(report: KernelReport, rep: AccessReport) -> str | None:
    """The call that writes an ``.ap()`` destination: ``nl.store(dst, value)`` to HBM,
    ``nisa.tensor_copy(dst=..., src=...)`` on chip (``None``: the file imports neither)."""
    names = _module_names(report.read.tree)
    if rep.raw.tensor.buffer == "hbm":
        return f"{names['language']}.store" if "language" in names else None
    return f"{names['isa']}.tensor_copy" if "isa" in names else None


def _guard_plan(report: KernelReport, chosen: dict[int, tuple[str, list[AccessReport]]],
                accepted: set[int], findings: list[Finding]
                ) -> list[tuple[ast.stmt, str, list[AccessReport]]]:
    """A mask predicate on loop variables only becomes an ``if`` around its statement (NKI 0.2+
    resolves an ``if`` on a loop variable when it unrolls the loop).  A statement that binds a
    name is wrapped only when every instruction reading that tile runs under the same mask;
    what cannot be wrapped is refused here (``accepted`` is narrowed)."""
    tree = report.read.tree
    by_call: dict[int, list[AccessReport]] = {}
    for nid in list(accepted):
        for rep in chosen[nid][1]:
            if rep.guards and rep.raw.call_node is not None:
                by_call.setdefault(id(rep.raw.call_node), []).append(rep)
    plan = []
    for reps in by_call.values():
        call = reps[0].raw.call_node
        conds = sorted({guard_text(r, access_names(report, r)) for r in reps})
        st = _statement_of(tree, call) if tree is not None else None
        why = ""
        if any(UNNAMED in c for c in conds):
            why = ("the statement is inside a helper function and the condition depends on "
                   "loop variables of its caller that are not its parameters")
            conds = [c.replace(UNNAMED, "?") for c in conds]
        elif any(isinstance(chosen[id(r.raw.node)][0], dict) for r in reps):
            why = "it is also read differently in each iteration of an unrolled loop"
        elif len(conds) != 1:
            why = "its accesses run under different conditions"
        elif st is None:
            why = "the masked call is not a whole statement (it needs an `if` around it)"
        elif isinstance(st, ast.Assign) and any(not isinstance(t, ast.Subscript)
                                                for t in st.targets):
            mask = reps[0].raw.mask
            mine = [rec for rec in report.read.calls if rec.node is call]
            uses = [rec for rec in report.read.calls for _, w in rec.whole
                    if w.producer is not None and w.producer.node is call]
            if any(rec.kwargs.get("mask") is not mask for rec in uses) or any(
                    id(rec) in report.read.escapes for rec in mine):
                why = "the tile it binds is read where the condition is not known to hold"
        if not why:
            plan.append((st, conds[0], reps))
            continue
        _refuse_guard(reps, conds, why, accepted, findings)
    return plan


def _refuse_guard(reps: list[AccessReport], conds: list[str], why: str, accepted: set[int],
                  findings: list[Finding]) -> None:
    for r in reps:
        if id(r.raw.node) in accepted:
            accepted.discard(id(r.raw.node))
            findings.append(Finding(r.raw.line, f"not migrated: {ast.unparse(r.raw.node)}: "
                                    f"its mask has a predicate on loop variables only "
                                    f"({' / '.join(conds)}): {why}", "migration"))


def guards_consistent(report: KernelReport, plan: list[tuple[ast.stmt, str, list[AccessReport]]],
                      accepted: set[int], findings: list[Finding]) -> bool:
    """After the program check: a statement put under ``if cond:`` that binds a tile must have
    every instruction reading the tile under the same ``if`` -- else the tile is unbound where
    it is read (a reader whose mask stays, or whose accesses were refused, is not wrapped).
    Refuse such bindings (``accepted`` narrowed); False when something was refused."""
    applied = {id(reps[0].raw.call_node): cond for _, cond, reps in plan
               if all(id(r.raw.node) in accepted for r in reps)}
    ok = True
    for st, cond, reps in plan:
        call = reps[0].raw.call_node
        if id(call) not in applied or not isinstance(st, ast.Assign) or all(
                isinstance(t, ast.Subscript) for t in st.targets):
            continue
        uses = [rec for rec in report.read.calls for _, w in rec.whole
                if w.producer is not None and w.producer.node is call]
        if any(applied.get(id(rec.node)) != cond for rec in uses):
            _refuse_guard(reps, [cond], "the tile it binds is read by an instruction that does "
                          "not run under the same `if`", accepted, findings)
            ok = False
    return ok


def _copy_edits(report: KernelReport, rep: AccessReport, st: ast.stmt, text: str,
                src: _Source, base: int) -> list[tuple[int, int, str]]:
    """``t[...] = value`` -> ``nisa.tensor_copy(dst=t.ap(...), src=value)`` (``nl.store(t.ap(...),
    value=value)`` to HBM), as edits relative to ``base``; the value keeps its parentheses."""
    call = _copy_call(report, rep)
    head = f"{call}({text}, value=" if str(call).endswith("store") else f"{call}(dst={text}, src="
    start, end = src.span(st)
    eq = src.source.index("=", src.span(rep.raw.node)[1])
    value = src.source[eq + 1:end]
    pad = len(value) - len(value.lstrip())
    return [(start - base, eq + 1 + pad - base, head), (end - base, end - base, ")")]


def _per_iteration(reps: list[AccessReport], texts: list[str | None]
                   ) -> dict[tuple[tuple[str, int], ...], str] | None:
    """One text per iteration of the unrolled loops an access is read in, when the text depends
    on those iterations only (else ``None``)."""
    out: dict[tuple[tuple[str, int], ...], str] = {}
    for rep, text in zip(reps, texts):
        key = rep.raw.unrolled
        if not key or text is None or out.setdefault(key, text) != text:
            return None
    return out


def _simple_statements(tree: ast.Module | None) -> dict[int, ast.stmt]:
    """id(node) -> the simple statement (no block) containing it."""
    out: dict[int, ast.stmt] = {}
    for st in ast.walk(tree) if tree is not None else ():
        if isinstance(st, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for node in ast.walk(st):
                out[id(node)] = st
    return out


def _unrolled_plan(report: KernelReport, chosen: dict[int, tuple[Any, list[AccessReport]]],
                   accepted: set[int], findings: list[Finding]) -> None:
    """Refuse (before the program check) the per-iteration rewrites a statement cannot be split
    by: outside a simple statement, or iterations that differ between its accesses."""
    owner = _simple_statements(report.read.tree)
    groups: dict[int, list[int]] = {}
    for nid in list(accepted):
        text, reps = chosen[nid]
        if isinstance(text, dict):
            st = owner.get(id(reps[0].raw.node))
            groups.setdefault(id(st) if st is not None else -nid, []).append(nid)
    for key, nids in groups.items():
        keysets = {frozenset(chosen[n][0]) for n in nids}
        if key < 0 or len(keysets) != 1:
            for n in nids:
                node = chosen[n][1][0].raw.node
                accepted.discard(n)
                findings.append(Finding(node.lineno, f"not migrated: {ast.unparse(node)} is "
                                        "reached with different indices and its statement "
                                        "cannot be split per iteration", "migration"))


def _unrolled_edits(report: KernelReport,
                    unrolled: list[tuple[ast.AST, dict[tuple[tuple[str, int], ...], str]]],
                    edits: list[tuple[int, int, str]], src: _Source, findings: list[Finding],
                    texts: dict[int, str]) -> list[tuple[int, int, str]]:
    """A statement whose accesses read differently in each iteration of a loop the reader
    unrolled becomes ``if h == 0: ... elif h == 1: ...``, one copy per iteration (NKI 0.2+
    unrolls the loop and resolves the ``if`` at specialization)."""
    if not unrolled:
        return edits
    owner = _simple_statements(report.read.tree)
    groups: dict[int, tuple[ast.stmt, list[tuple[ast.AST, dict]]]] = {}
    for node, per in unrolled:
        st = owner.get(id(node))
        if st is None:
            findings.append(Finding(node.lineno, f"not migrated: {ast.unparse(node)} is reached "
                                    "with different indices outside a simple statement",
                                    "migration"))
            continue
        groups.setdefault(id(st), (st, []))[1].append((node, per))
    out = list(edits)
    for st, nodes in groups.values():
        a, b = src.span(st)
        keys = sorted({k for _, per in nodes for k in per})
        inner = [e for e in out if a <= e[0] and e[1] <= b]
        crossing = [e for e in out if e[0] < b and e[1] > a and e not in inner]
        if crossing or any(set(per) != set(keys) for _, per in nodes) or any(
                e[0] == e[1] == a for e in inner):  # excluded by _unrolled_plan: a bug
            raise SyntaxError("a per-iteration statement overlaps another rewrite")
        out = [e for e in out if e not in inner]
        line = src.lines[st.lineno - 1]
        indent = line[:len(line) - len(line.lstrip())]
        branches = []
        for k, key in enumerate(keys):
            local = [(s - a, e - a, t) for s, e, t in inner]
            for node, per in nodes:
                if isinstance(node.ctx, ast.Store) and per[key].startswith(
                        ast.unparse(node.value) + ".ap("):  # an .ap() destination: a copy
                    rep = next(r for r in report.accesses if r.raw.node is node)
                    local += _copy_edits(report, rep, st, per[key], src, a)
                else:
                    local.append((src.span(node)[0] - a, src.span(node)[1] - a, per[key]))
            body = _apply(src.source[a:b], local)
            cond = " and ".join(f"{name} == {v}" for name, v in key)
            branches.append(f"{'if' if k == 0 else indent + 'elif'} {cond}:\n{indent}    {body}")
        out.append((a, b, "\n".join(branches)))
    return out


def _apply(source: str, edits: list[tuple[int, int, str]]) -> str:
    out = source
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:start] + text + out[end:]
    return out


def _is_index_def(value: ast.expr) -> bool:
    """An expression that only builds an index: it mentions ``arange`` / ``mgrid`` and calls
    nothing but ``arange``."""
    nodes = list(ast.walk(value))
    calls_ok = all(isinstance(n.func, ast.Attribute) and n.func.attr == "arange"
                   for n in nodes if isinstance(n, ast.Call))
    return calls_ok and any(isinstance(n, ast.Attribute) and n.attr in ("arange", "mgrid")
                            for n in nodes)


def _blocks(scopes: list[ast.AST]) -> list[tuple[ast.AST, set[str]]]:
    """Every statement container, with the names read in its innermost function."""
    out = []
    for scope in scopes:
        used = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Load)}
        stack = [scope]
        while stack:
            node = stack.pop()
            out.append((node, used))
            stack += [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.FunctionDef)]
    return out


def _drop_unused_indices(source: str) -> str:
    """Remove ``x = nl.arange(...)...`` / ``i, j = nl.mgrid[...]`` statements whose names are
    no longer read (repeated: one removal can free another); a block left empty gets ``pass``."""
    while True:
        tree = ast.parse(source)
        drop: list[tuple[int, int, str]] = []  # (first line, last line, replacement)
        scopes = [tree] + [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
        for parent, used in _blocks(scopes):
            for field_name in ("body", "orelse", "finalbody"):
                block = getattr(parent, field_name, None)
                if not isinstance(block, list) or not block or not isinstance(block[0], ast.stmt):
                    continue
                dead = [st for st in block if isinstance(st, ast.Assign)
                        and _is_index_def(st.value)
                        and not ({n.id for t in st.targets for n in ast.walk(t)
                                  if isinstance(n, ast.Name)} & used)]
                for k, st in enumerate(dead):
                    keep_pass = len(dead) == len(block) and k == 0
                    drop.append((st.lineno, st.end_lineno, "pass" if keep_pass else ""))
        if not drop:
            return source
        lines = source.splitlines(keepends=True)
        for first, last, repl in sorted(drop, reverse=True):
            line = lines[first - 1]
            indent = line[:len(line) - len(line.lstrip())]
            lines[first - 1:last] = [f"{indent}{repl}\n"] if repl else []
        source = "".join(lines)
