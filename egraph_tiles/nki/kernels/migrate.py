"""Migrate a legacy NKI kernel to the 0.2+ indexing form.

Every access that uses ``nl.arange`` / ``nl.mgrid`` indices or a ``mask=`` is rewritten from its
inferred :class:`~egraph_tiles.nki.kernels.analyze.AccessReport`:

* a **basic slice** ``a[r0:r0 + 128, c0:c0 + 512:2]`` when one expresses the access: every
  tensor dimension reads at most one tile axis, with a positive step, in the tile's axis order
  (a dimension without an axis is an integer index, or ``k:k + 1`` where the tile keeps a size-1
  axis there);
* otherwise ``a.ap([[stride, count], ...], offset=...)`` -- the inferred pattern itself (on
  SBUF / PSUM only when the partition pair has the stride of the whole free size, as NKI
  requires);
* a mask that bounds one axis per predicate becomes ``min()``-bounded slice ends (``max()`` for a
  lower bound) and the ``mask=`` argument is dropped once every access of its call is rewritten.

Every rewritten access is checked **before** it is printed: at every loop iteration numpy reads
the new form and the legacy broadcast index of an ``arange``-filled array, and they must be the
same elements in the same order.  A form that fails is not written (the access stays as it was
and a ``migration`` finding says why), and neither is one whose loops have an unknown bound or
more than :data:`CHECK_ALL_UP_TO` iterations: an unchecked iteration could be the one where a
``min()`` end falls below its start.  ``arange`` / ``mgrid``
definitions no longer used are removed.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from egraph_tiles.nki.index.expr import Var
from egraph_tiles.nki.kernels.analyze import (
    AccessReport,
    KernelReport,
    _vars_of,
    check_elements,
    guards_hold,
    outer_flat,
)
from egraph_tiles.nki.index.normal_form import NormalForm, QuasiAtom
from egraph_tiles.nki.kernels.program import check_program, iteration_envs
from egraph_tiles.nki.kernels.reader import Finding
from egraph_tiles.nki.index.symint import SymInt, Value, sym_evaluate, sym_text

__all__ = ["Migration", "migrate_kernel"]


@dataclass
class Migration:
    """The migrated source, the new text of each rewritten access, and what failed."""

    source: str
    texts: dict[int, str]  # id(AccessReport) -> new access text
    findings: list[Finding]


# ----- the new form of one access ----------------------------------------------------------------

@dataclass(frozen=True)
class _Dim:
    """One tensor dimension of a basic slice: an index, or ``start:stop:step``."""

    start: Value
    stop: Value | None = None  # None: an integer index
    step: int = 1


@dataclass(frozen=True)
class _Form:
    kind: str  # "slice" | "ap"
    dims: tuple[_Dim, ...] = ()
    pattern: tuple[tuple[int, Value], ...] = ()
    offset: Value = 0


def _add(v: Value, nf: NormalForm) -> Value:
    """``v + nf`` with the sum pushed inside ``min`` / ``max`` (``min(a, b) + c``)."""
    if isinstance(v, int):
        return SymInt.lin(NormalForm.build(nf.const + v, nf.terms))
    if v.op == "lin":
        a = v.args[0]
        return SymInt.lin(NormalForm.build(a.const + nf.const, a.terms + nf.terms))
    if v.op in ("min", "max"):
        return SymInt.combine(v.op, [_add(x, nf) for x in v.args])
    return SymInt.combine("add", [*v.args, SymInt.lin(nf)])


def _scale(v: Value, k: int) -> Value:
    if isinstance(v, int):
        return v * k
    if v.op == "lin":
        nf = v.args[0]
        return SymInt.lin(NormalForm.build(nf.const * k, [(a, c * k) for a, c in nf.terms]))
    assert k > 0, "only positive steps are written as slices"
    return SymInt(v.op, tuple(_scale(a, k) for a in v.args))


def _is_axis(v: Any) -> bool:
    return isinstance(v, Var) and v.kind == "axis"


def _has_axis(atom: QuasiAtom) -> bool:
    for a, _ in atom.operand.terms:
        if _is_axis(a) or (isinstance(a, QuasiAtom) and _has_axis(a)):
            return True
    return False


def _slice_form(rep: AccessReport) -> _Form | None:
    """The basic-slice form, or ``None`` when slicing cannot express the access."""
    positions = rep.tile.source_axes()
    pos_of = {p.var: k for k, p in enumerate(positions) if p.tripcount > 1}
    per_dim: list[tuple[Var | None, int, NormalForm]] = []
    for nf in rep.exprs:
        axes = [(a, c) for a, c in nf.terms if _is_axis(a)]
        if any(isinstance(a, QuasiAtom) and _has_axis(a) for a, _ in nf.terms) or len(axes) > 1:
            return None
        if axes and (axes[0][1] <= 0 or axes[0][0] not in pos_of):
            return None
        rest = NormalForm.build(nf.const, [(a, c) for a, c in nf.terms if not _is_axis(a)])
        per_dim.append((axes[0][0], axes[0][1], rest) if axes else (None, 0, rest))
    plan = _align(per_dim, positions, pos_of)
    if plan is None:
        return None
    dims = []
    for (x, c, rest), keep in zip(per_dim, plan):
        if x is None:
            base = SymInt.lin(rest)
            dims.append(_Dim(base, _add(1, rest)) if keep else _Dim(base))
            continue
        n = positions[pos_of[x]].tripcount
        first = rep.lower.get(x, 0)
        end = rep.upper.get(x, n)
        start = _add(_scale(first, c), rest)
        stop = _add(_scale(_add(end, NormalForm(-1)), c), NormalForm.build(rest.const + 1, rest.terms)) \
            if c != 1 else _add(end, rest)
        dims.append(_Dim(start, stop, c))
    if rep.raw.tensor.buffer in ("sbuf", "psum") and dims and dims[0].stop is not None \
            and dims[0].step != 1:
        return None  # no strided partition access on chip
    return _Form("slice", tuple(dims))


def _align(per_dim: list[tuple[Var | None, int, NormalForm]], positions: Sequence[Any],
           pos_of: dict[Var, int]) -> list[bool] | None:
    """Match tensor dimensions to tile positions in order; a dimension without an axis either
    drops out (integer index) or fills a size-1 position (``k:k + 1``)."""

    def go(d: int, k: int) -> list[bool] | None:
        if d == len(per_dim):
            return [] if all(p.tripcount == 1 for p in positions[k:]) and k <= len(positions) \
                and k == len(positions) else None
        x = per_dim[d][0]
        if x is not None:
            if k < len(positions) and pos_of.get(x) == k:
                rest = go(d + 1, k + 1)
                return None if rest is None else [True, *rest]
            return None
        if k < len(positions) and positions[k].tripcount == 1:
            rest = go(d + 1, k + 1)
            if rest is not None:
                return [True, *rest]
        rest = go(d + 1, k)
        return None if rest is None else [False, *rest]

    return go(0, 0)


def _ap_form(rep: AccessReport) -> tuple[_Form | None, str]:
    shape = rep.raw.tensor.shape
    free = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    stride, count = rep.pattern[0]
    if rep.raw.tensor.buffer in ("sbuf", "psum") and count != 1 and stride != free:
        return None, (f"on {rep.raw.tensor.buffer} the partition pair of .ap() must have stride "
                      f"{free} (the free size), this access needs {stride}: use a DMA or a "
                      "transpose instead")
    return _Form("ap", pattern=_full_rank(rep), offset=rep.offset), ""


def _full_rank(rep: AccessReport) -> tuple[tuple[int, Value], ...]:
    """The pattern with a ``[1, 1]`` pair at each size-1 tile axis the reported pattern drops
    (``get_pattern()`` omits them), so that ``.ap()`` gives the legacy tile's shape."""
    by_var = dict(zip((a.var for a in rep.axes), rep.pattern[len(rep.pattern) - len(rep.axes):]))
    positions = rep.tile.source_axes()
    if len(positions) != len(rep.shape) or any(
            p.var not in by_var and p.tripcount != 1 for p in positions) or len(by_var) != len(
            [p for p in positions if p.var in by_var]):
        return rep.pattern
    return tuple(by_var.get(p.var, (1, 1)) for p in positions)


def _text(rep: AccessReport, form: _Form, names: dict[str, str]) -> str:
    base = rep.raw.tensor_text
    if form.kind == "ap":
        pat = ", ".join(f"[{s}, {sym_text(c, names)}]" for s, c in form.pattern)
        off = sym_text(form.offset, names)
        return f"{base}.ap([{pat}]" + (f", offset={off})" if off != "0" else ")")
    parts = []
    for d in form.dims:
        if d.stop is None:
            parts.append(sym_text(d.start, names))
        else:
            s = f"{sym_text(d.start, names)}:{sym_text(d.stop, names)}"
            parts.append(s + (f":{d.step}" if d.step != 1 else ""))
    return f"{base}[{', '.join(parts)}]"


def _elements(rep: AccessReport, form: _Form, env: dict[str, int]) -> np.ndarray | str:
    """What the new form reads (flat element ids, row-major) at ``env``, or why it cannot."""
    shape = rep.raw.tensor.shape
    if form.kind == "ap":
        counts = [max(int(sym_evaluate(c, env)), 0) for _, c in form.pattern]
        idx = np.full(counts, int(sym_evaluate(form.offset, env)), dtype=np.int64)
        for k, ((s, _), n) in enumerate(zip(form.pattern, counts)):
            sh = [1] * len(counts)
            sh[k] = n
            idx = idx + s * np.arange(n, dtype=np.int64).reshape(sh)
        if idx.size and (idx.min() < 0 or idx.max() >= math.prod(shape)):
            return "the pattern leaves the tensor"
        return idx
    parts: list[Any] = []
    for d, n in zip(form.dims, shape):
        start = int(sym_evaluate(d.start, env))
        if d.stop is None:
            if not 0 <= start < n:
                return f"index {start} is outside a dimension of {n}"
            parts.append(start)
            continue
        stop = int(sym_evaluate(d.stop, env))
        if start < 0 or stop > n:
            return f"slice {start}:{stop} is outside a dimension of {n}"
        if stop < start:  # Python would read a negative end from the back, not nothing
            return f"slice {start}:{stop} ends before it starts (the mask leaves no element)"
        parts.append(np.arange(start, stop, d.step))
    return outer_flat(parts, shape)


#: a rewrite is checked at every iteration of its loops, so it is made only when they have known
#: bounds and at most this many iterations in all
CHECK_ALL_UP_TO = 4096


def every_iteration(variables: Sequence[Var], steps: dict[str, int]) -> list[dict[str, int]] | None:
    """Every combination of the loop variables' values, or ``None`` when a bound is unknown or
    there are more than :data:`CHECK_ALL_UP_TO`."""
    if any(v.lo is None or v.hi is None for v in variables):
        return None
    ranges = [range(v.lo, v.hi + 1, steps.get(v.name, 1)) for v in variables]
    if math.prod(len(r) for r in ranges) > CHECK_ALL_UP_TO:
        return None
    return [dict(zip((v.name for v in variables), combo)) for combo in itertools.product(*ranges)]


def _check(rep: AccessReport, form: _Form, envs: list[dict[str, int]]) -> str | None:
    for env in envs:
        if not bool(np.all(guards_hold(rep, env))):
            continue  # the instruction does not run here (its statement runs under an `if`)
        got = _elements(rep, form, env)
        if isinstance(got, str):
            return f"{got} at {env or 'the only iteration'}"
        err = check_elements(rep, env, got)
        if err:
            return err
    return None


def _names(report: KernelReport) -> dict[str, str]:
    return dict(report.read.source_names)


def migrate_access(rep: AccessReport, report: KernelReport) -> tuple[str | None, str]:
    """The checked new text of one access, or ``(None, why not)``."""
    if rep.raw.mask is not None and not rep.box_mask:
        return None, "its mask is not a box (migrate it by hand, e.g. with nisa.affine_select)"
    if any(isinstance(a, Var) and a.name.startswith("program_id_")
           for g in rep.guards for a, _ in g.terms):
        return None, ("its mask has a predicate on program ids only (`"
                      f"{guard_text(rep, _names(report))}`): the instruction must run under a "
                      "condition the launch decides; rewrite it by hand")
    names = _names(report)
    form = _slice_form(rep)
    why = ""
    if form is None:
        form, why = _ap_form(rep)
        if form is None:
            return None, why
    if form.kind == "ap" and isinstance(rep.raw.node.ctx, ast.Store):
        st = _statement_of(report.read.tree, rep.raw.node, target=True)
        if st is None or _copy_call(report, rep) is None:
            return None, (f"it is an assignment target and `{rep.raw.tensor_text}.ap(...)` "
                          "cannot be assigned to; the statement is not `t[...] = value` or the "
                          "file imports no nki.isa / nki.language to copy with: write it with "
                          "nisa.tensor_copy(dst=...) by hand")
    if rep.raw.in_helper and _symbols(form) and rep.raw.local_names is not None:
        # inside a helper the caller's loop variables are the helper's parameters bound to them
        local = {k: rep.raw.local_names.get(k, v if v.startswith("nl.program_id") else "\x00")
                 for k, v in names.items()}
        if "\x00" in _text(rep, form, local):
            return None, ("the access is inside a helper function and depends on loop "
                          "variables of its caller that are not its parameters: rewrite the "
                          "helper by hand")
        names = local
    envs = every_iteration(_vars_of(rep), report.read.steps)
    if envs is None:
        return None, (f"its loops have an unknown bound or more than {CHECK_ALL_UP_TO:,} "
                      "iterations, too many to check the rewritten form at every one (give "
                      "smaller --shape values or rewrite it by hand)")
    err = _check(rep, form, envs)
    if err:
        return None, f"the rewritten form would read different elements: {err}"
    return _text(rep, form, names), ""


def _symbols(form: _Form) -> bool:
    vals = [v for d in form.dims for v in (d.start, d.stop) if v is not None]
    vals += [c for _, c in form.pattern] + [form.offset]
    return any(not isinstance(v, int) for v in vals)


# ----- the migrated file ---------------------------------------------------------------------------

def migrate_kernel(report: KernelReport) -> Migration:
    """Rewrite every legacy access of ``report``'s kernel in its source, keeping only rewrites
    that leave the kernel the same program (:mod:`~egraph_tiles.nki.kernels.program`)."""
    source = report.read.source
    findings: list[Finding] = []
    by_node: dict[int, list[AccessReport]] = {}
    for rep in report.accesses:
        if rep.raw.legacy or rep.raw.mask is not None:
            by_node.setdefault(id(rep.raw.node), []).append(rep)
    chosen: dict[int, tuple[Any, list[AccessReport]]] = {}
    for reps in by_node.values():
        results = [migrate_access(rep, report) for rep in reps]
        new = {t for t, _ in results}
        rep0 = reps[0]
        if None in new:
            why = next(w for t, w in results if t is None)
            findings.append(Finding(rep0.raw.line, f"not migrated: {ast.unparse(rep0.raw.node)}: "
                                    f"{why}", "migration"))
            continue
        if len(new) > 1:
            per = _per_iteration(reps, [t for t, _ in results])
            if per is None:
                findings.append(Finding(rep0.raw.line, f"not migrated: {ast.unparse(rep0.raw.node)} "
                                        "is reached with different indices (a helper called from "
                                        "several places): rewrite it by hand", "migration"))
                continue
            chosen[id(rep0.raw.node)] = (per, reps)
            continue
        chosen[id(rep0.raw.node)] = (new.pop(), reps)
    src = _Source(source)
    accepted = set(chosen)
    _unrolled_plan(report, chosen, accepted, findings)
    guarded = _guard_plan(report, chosen, accepted, findings)
    check = check_program(report, accepted, iteration_envs(report.read.steps, CHECK_ALL_UP_TO))
    for nid, why in check.refused.items():
        node = chosen[nid][1][0].raw.node
        findings.append(Finding(node.lineno, f"not migrated: {ast.unparse(node)}: {why}",
                                "migration"))
    texts: dict[int, str] = {}
    edits: list[tuple[int, int, str]] = []
    unrolled: list[tuple[ast.AST, dict[tuple[tuple[str, int], ...], str]]] = []
    for nid in accepted:
        text, reps = chosen[nid]
        if isinstance(text, dict):  # one text per iteration of an unrolled loop
            for rep in reps:
                texts[id(rep)] = text[rep.raw.unrolled]
            unrolled.append((reps[0].raw.node, text))
            continue
        for rep in reps:
            texts[id(rep)] = text
        node = reps[0].raw.node
        if isinstance(node.ctx, ast.Store) and text.startswith(f"{reps[0].raw.tensor_text}.ap("):
            # `t[...] = v` with an .ap() destination: a copy instruction writes it
            st = _statement_of(report.read.tree, node, target=True)
            edits += _copy_edits(report, reps[0], st, text, src, 0)
            continue
        edits.append((*src.span(node), text))
    edits += [(*src.span(node), text) for node, text in check.slices]
    for st, cond, reps in guarded:
        if all(id(r.raw.node) in accepted for r in reps):
            line = src.lines[st.lineno - 1]
            indent = line[:len(line) - len(line.lstrip())]
            start = src.pos(st.lineno, st.col_offset)
            edits.append((start, start, f"if {cond}:\n{indent}    "))
    edits += _mask_edits(report, accepted, check.dropped, src, findings)
    carried = {id(r.raw.mask_node) for r in report.accesses}
    for call, kw, _ in report.read.masked_calls:
        if id(kw) not in carried and id(kw) not in check.dropped:
            findings.append(Finding(kw.lineno, f"mask= of `{ast.unparse(call.func)}(...)` kept: "
                                    "the call has no indexed operand to carry it (rewrite it by "
                                    "hand)", "migration"))
    try:
        edits = _unrolled_edits(report, unrolled, edits, src, findings, texts)
        out = _apply(source, edits)
        out = _drop_unused_indices(out)
    except SyntaxError as e:  # a bug: never print a file that does not parse
        findings.append(Finding(e.lineno or 0, f"internal error: the migrated file does not "
                                f"parse ({e.msg}); nothing was rewritten", "migration"))
        out, texts = source, {}
    return Migration(out, texts, sorted(dict.fromkeys(findings), key=lambda f: f.line))


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
    names = _names(report)
    tree = report.read.tree
    by_call: dict[int, list[AccessReport]] = {}
    for nid in list(accepted):
        for rep in chosen[nid][1]:
            if rep.guards and rep.raw.call_node is not None:
                by_call.setdefault(id(rep.raw.call_node), []).append(rep)
    plan = []
    for reps in by_call.values():
        call = reps[0].raw.call_node
        conds = sorted({guard_text(r, names) for r in reps})
        st = _statement_of(tree, call) if tree is not None else None
        why = ""
        if any(isinstance(chosen[id(r.raw.node)][0], dict) for r in reps):
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
        for r in reps:
            if id(r.raw.node) in accepted:
                accepted.discard(id(r.raw.node))
                findings.append(Finding(r.raw.line, f"not migrated: {ast.unparse(r.raw.node)}: "
                                        f"its mask has a predicate on loop variables only "
                                        f"({' / '.join(conds)}): {why}", "migration"))
    return plan


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
