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
from egraph_tiles.nki.kernels.statements import (
    _apply,
    _copy_call,
    _copy_edits,
    _drop_unused_indices,
    _guard_plan,
    _mask_edits,
    _per_iteration,
    _Source,
    _statement_of,
    _unrolled_edits,
    _unrolled_plan,
    UNNAMED,
    access_names,
    guard_text,
    guards_consistent,
)
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
    return iteration_envs(steps, CHECK_ALL_UP_TO)(variables)


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
    names = access_names(report, rep)
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
    if UNNAMED in _text(rep, form, names):
        # inside a helper the caller's loop variables are the helper's parameters bound to them
        return None, ("the access is inside a helper function and depends on loop "
                      "variables of its caller that are not its parameters: rewrite the "
                      "helper by hand")
    envs = every_iteration(_vars_of(rep), report.read.steps)
    if envs is None:
        return None, (f"its loops have an unknown bound or more than {CHECK_ALL_UP_TO:,} "
                      "iterations, too many to check the rewritten form at every one (give "
                      "smaller --shape values or rewrite it by hand)")
    err = _check(rep, form, envs)
    if err:
        return None, f"the rewritten form would read different elements: {err}"
    return _text(rep, form, names), ""


# ----- the migrated file ---------------------------------------------------------------------------

def _specialisation_guard(source: str, report: KernelReport) -> str:
    """``source`` with asserts at the top of the kernel's body on the parameter values the
    migration is specialised to (tensor shapes, scalars given as literals): the rewritten
    accesses name the sizes the kernel was read with (``min(300, ...)``, an ``.ap()`` pitch), so
    launched with other sizes the kernel must stop, not compute something else."""
    given = report.read.given
    if not given:
        return source
    tree = ast.parse(source)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)
               and n.name == report.read.name), None)
    if fn is None or not fn.body:
        return source
    body = fn.body
    doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str)
    if doc and len(body) == 1:
        return source
    first = body[1] if doc else body[0]  # (after the docstring)
    lines = source.splitlines(keepends=True)
    indent = " " * first.col_offset
    checks = []
    for name, (kind, v) in given.items():
        if kind == "shape":
            want = tuple(v)
            checks.append(f"{indent}assert tuple({name}.shape) == {want!r}, "
                          f"{f'migrated for {name}.shape == {want!r}'!r}\n")
        elif v is None or isinstance(v, bool):
            checks.append(f"{indent}assert {name} is {v!r}, {f'migrated for {name} is {v!r}'!r}\n")
        else:
            want = tuple(v) if isinstance(v, list) else v
            lhs = f"tuple({name})" if isinstance(want, tuple) else name
            checks.append(f"{indent}assert {lhs} == {want!r}, "
                          f"{f'migrated for {name} == {want!r}'!r}\n")
    at = first.lineno - 1
    return "".join(lines[:at] + checks + lines[at:])


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
    refused: dict[int, str] = {}
    while True:  # until every tile bound under an `if` is read under it (a refusal re-checks)
        guarded = _guard_plan(report, chosen, accepted, findings)
        check = check_program(report, accepted, iteration_envs(report.read.steps, CHECK_ALL_UP_TO))
        refused.update(check.refused)
        if guards_consistent(report, guarded, accepted, findings):
            break
    for nid, why in refused.items():
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
        if texts:
            out = _specialisation_guard(out, report)
    except SyntaxError as e:  # a bug: never print a file that does not parse
        findings.append(Finding(e.lineno or 0, f"internal error: the migrated file does not "
                                f"parse ({e.msg}); nothing was rewritten", "migration"))
        out, texts = source, {}
    return Migration(out, texts, sorted(dict.fromkeys(findings), key=lambda f: f.line))
