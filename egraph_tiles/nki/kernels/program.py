"""The migrated kernel is the same program: a check of all rewrites together.

Each rewritten access reads the same elements as its legacy self (``migrate`` checks that per
access).  Dropping a ``mask=`` also changes the *shape* of the instruction: the legacy
instruction ran over the whole tile with some elements switched off; the migrated one runs over
the mask's box only.  So every other operand of that instruction must shrink to the same box,
and every tile the instruction produces is smaller than the legacy tile.  For every evaluation of
every instruction, at every iteration of its loops, this module checks:

* the rewritten accesses of an instruction agree on its box (the count and first element along
  each instruction axis);
* a whole-tile operand (a tile passed as is, ``value=out_tile``) that keeps its legacy shape is
  narrowed with an explicit bounded slice of the box (``out_tile[0:min(128, 446 - 128*h), 0:446]``);
  one produced by a narrowed instruction must already have the box's shape;
* a narrowed instruction's result tile is read only where its new shape is what the reader
  expects: as a whole operand of an instruction with the same box -- not indexed (its rows
  would be addressed in the legacy tile's layout), not through Python arithmetic, ``.shape``
  or a method;
* an instruction that keeps its ``mask=`` (not every access of it could be rewritten) keeps
  every access as written: the mask has the legacy tile's shape.

What fails is not narrowed: the instruction keeps its mask and its accesses stay as written
(with a ``migration`` finding), and the check runs again until nothing changes.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from egraph_tiles.nki.index.expr import Var
from egraph_tiles.nki.index.masks import TileMask
from egraph_tiles.nki.index.symint import Value, sym_evaluate, sym_text
from egraph_tiles.nki.kernels.analyze import AccessReport, KernelReport, _vars_of
from egraph_tiles.nki.kernels.calls import CALLS
from egraph_tiles.nki.kernels.statements import UNNAMED, scope_names
from egraph_tiles.nki.kernels.values import CallRecord, Tensor

__all__ = ["ProgramCheck", "check_program"]



@dataclass
class ProgramCheck:
    """Accesses (by node id) refused with why, and the slices of whole-tile operands to write."""

    refused: dict[int, str] = field(default_factory=dict)
    slices: list[tuple[ast.expr, str]] = field(default_factory=list)
    dropped: set[int] = field(default_factory=set)  # id(mask keyword) of calls without accesses


@dataclass(frozen=True)
class _Axis:
    first: Value
    end: Value

    def count(self, env: dict[str, int]) -> int:
        return int(sym_evaluate(self.end, env)) - int(sym_evaluate(self.first, env))


def _mask_box(mask: Any, legacy: tuple[int, ...], env: dict[str, int]
              ) -> list[tuple[int, int]] | None:
    """The box a mask switches on over an instruction of shape ``legacy`` at one iteration
    (``None``: not a box, or empty)."""
    if not isinstance(mask, TileMask) or mask.tile is None:
        return None
    try:
        arr = np.broadcast_to(np.asarray(mask.evaluate(env), dtype=bool), legacy)
    except (ValueError, KeyError, TypeError):
        return None
    out, outer = [], np.ones((), dtype=bool)
    for k in range(arr.ndim):
        on = np.flatnonzero(arr.any(axis=tuple(j for j in range(arr.ndim) if j != k)))
        if on.size == 0 or on[-1] - on[0] + 1 != on.size:
            return None
        out.append((int(on[0]), int(on[-1]) + 1))
        line = np.zeros(arr.shape[k], dtype=bool)
        line[on] = True
        outer = np.multiply.outer(outer, line)
    return out if np.array_equal(outer, arr) else None


def _axes_of(rank: int, total: int) -> list[int] | None:
    """Where the axes of a rank-``rank`` operand sit in a rank-``total`` instruction: NKI
    broadcasts the partition axis (first) and the free axes (right-aligned) separately."""
    if rank > total:
        return None
    return [0] + list(range(total - rank + 1, total)) if rank else []


def _within(inner: Any, outer: tuple[Value, Value], env: dict[str, int]) -> bool:
    """``inner`` starts where ``outer`` does (a narrowed tile's first element) and ends
    within it, at ``env``."""
    (fi, ei), (fo, eo) = inner, outer
    first = int(sym_evaluate(fi, env))
    return first == int(sym_evaluate(fo, env)) and int(sym_evaluate(ei, env)) <= int(
        sym_evaluate(eo, env)) and first == 0


def _tile_axes(rep: AccessReport) -> list[_Axis]:
    """Per tile axis of the access (source-shape order), its narrowed ``[first, end)``."""
    out = []
    for pos in rep.tile.source_axes():
        out.append(_Axis(rep.lower.get(pos.var, 0), rep.upper.get(pos.var, pos.tripcount)))
    return out


class _Checker:
    slices: dict[int, tuple[ast.expr, list[str]]]
    dropped: set[int]
    kept: set[int]
    narrowing: dict[int, bool]
    memo: dict[tuple[int, tuple[tuple[str, int], ...]], list[tuple[Value, Value]] | None]

    def __init__(self, report: KernelReport, accepted: set[int], envs_of: Any) -> None:
        self.report = report
        self.accepted = accepted
        self.envs_of = envs_of
        self.refused: dict[int, str] = {}
        self.by_record: dict[int, list[AccessReport]] = {}
        for rep in report.accesses:
            if rep.raw.record is not None:
                self.by_record.setdefault(id(rep.raw.record), []).append(rep)
        self.masked_reps: dict[int, list[AccessReport]] = {}  # id(call node) -> its accesses
        for rep in report.accesses:
            if rep.raw.mask_node is not None and rep.raw.call_node is not None:
                self.masked_reps.setdefault(id(rep.raw.call_node), []).append(rep)
        self.indexed: set[int] = {id(r.raw.tensor.producer) for r in report.accesses
                                  if r.raw.tensor.producer is not None}

    # ----- which accesses an instruction has -------------------------------------------------
    def own(self, rec: CallRecord) -> list[AccessReport]:
        """The instruction's accesses, and those its ``mask=`` bounds (refused together)."""
        reps = self.by_record.get(id(rec), []) + self.masked_reps.get(id(rec.node), [])
        return list({id(r): r for r in reps}.values())

    def rewritten(self, rep: AccessReport) -> bool:
        return id(rep.raw.node) in self.accepted

    def narrows(self, rec: CallRecord, depth: int = 0) -> bool:
        """Whether a rewritten access bounded by a mask feeds the instruction (its own, or one
        of an instruction producing its operands): only then can its shape change."""
        key = id(rec)
        if key not in self.narrowing:
            self.narrowing[key] = any(
                self.rewritten(r) and (r.lower or r.upper) for r in self.own(rec)) or (
                depth < 32 and any(w.producer is not None and self.narrows(w.producer, depth + 1)
                                   for _, w in rec.whole))
        return self.narrowing[key]

    def culprits(self, rec: CallRecord, depth: int = 0) -> list[AccessReport]:
        """The rewritten accesses a tile's narrowing comes from: the instruction's own, and
        those of the instructions producing its operands (refused to keep the tile whole)."""
        out = [r for r in self.own(rec) if self.rewritten(r)]
        if depth < 32:
            for _, w in rec.whole:
                if w.producer is not None:
                    out += self.culprits(w.producer, depth + 1)
        return out

    def variables(self, rec: CallRecord, depth: int = 0) -> set[Var]:
        """The loop variables an instruction's box depends on (through its producers too)."""
        out = {v for r in self.own(rec) for v in _vars_of(r)}
        if depth < 32:
            for _, w in rec.whole:
                if w.producer is not None:
                    out |= self.variables(w.producer, depth + 1)
        return out

    def refuse(self, reps: Sequence[AccessReport], why: str) -> bool:
        changed = False
        for r in reps:
            nid = id(r.raw.node)
            if nid in self.accepted:
                self.accepted.discard(nid)
                self.refused[nid] = why
                changed = True
        return changed

    # ----- shapes at one iteration ----------------------------------------------------------
    def legacy_shape(self, rec: CallRecord) -> tuple[int, ...] | None:
        reps = self.by_record.get(id(rec), [])
        dst = [r for r in reps if r.raw.role == "dst"]
        if dst:
            return dst[0].shape
        shapes = [r.shape for r in reps] + [w.shape for _, w in rec.whole]
        if any(s is None for s in shapes) or not shapes:
            return None
        rank = max(len(s) for s in shapes)
        out = [1] * rank
        for s in shapes:
            for d, k in zip(s, _axes_of(len(s), rank) or []):
                if d != 1 and out[k] not in (1, d):
                    return None
                out[k] = max(out[k], d)
        return tuple(out)

    def box(self, rec: CallRecord, legacy: tuple[int, ...], env: dict[str, int], depth: int = 0
            ) -> tuple[list[tuple[Value, Value]] | None, str, list[AccessReport]]:
        """Per instruction axis, ``(first, end)`` of its operands as migrated: a rewritten access
        narrowed by its mask, one left as written over the whole axis, a tile produced by a
        narrowed instruction over that instruction's box.  On disagreement: ``None``, why, and
        the accesses to refuse (the instruction's own, or the producer of a narrowed tile)."""
        axes: list[tuple[Value, Value] | None] = [None] * len(legacy)
        own = self.own(rec)
        by_own: set[int] = set()  # axes the instruction's own accesses bound

        def put(k: int, first: Value, end: Value, culprit: list[AccessReport]) -> str:
            got = (int(sym_evaluate(first, env)), int(sym_evaluate(end, env)))
            if axes[k] is None:
                axes[k] = (first, end)
                return ""
            have = tuple(int(sym_evaluate(v, env)) for v in axes[k])  # type: ignore[union-attr]
            if have == got:
                return ""
            return (f"its operands would cover axis {k} differently ({have[0]}:{have[1]} and "
                    f"{got[0]}:{got[1]} at {env or 'the only iteration'})")

        for rep in self.by_record.get(id(rec), []):
            tile = _tile_axes(rep) if self.rewritten(rep) else [_Axis(0, n) for n in rep.shape]
            where = _axes_of(len(tile), len(legacy))
            if where is None:
                return None, (f"`{ast.unparse(rep.raw.node)}` has another rank than the "
                              "instruction"), own
            for a, d, k in zip(tile, rep.shape, where):
                if d == legacy[k] and d != 1:
                    why = put(k, a.first, a.end, own)
                    if why:
                        return None, why, own
                    by_own.add(k)
        for node, w in rec.whole:
            p = w.producer
            if p is None or depth > 32:
                continue
            pbox = self.result_box(p, env, depth + 1)
            if pbox is None or w.shape is None or len(pbox) != len(w.shape):
                return None, f"`{ast.unparse(node)}` is narrowed in a way the check cannot " \
                    "follow", self.culprits(p)
            if all(int(sym_evaluate(e, env)) - int(sym_evaluate(f, env)) == n
                   for (f, e), n in zip(pbox, w.shape)):
                continue  # not narrowed here: a whole tile (sliced to the box if need be)
            where = _axes_of(len(w.shape), len(legacy))
            if where is None:
                return None, f"`{ast.unparse(node)}` has another rank than the " \
                    "instruction", self.culprits(p)
            for (f, e), d, k in zip(pbox, w.shape, where):
                if d == legacy[k] and d != 1:
                    if k in by_own and _within(axes[k], (f, e), env):
                        continue  # the narrowed tile holds the box: it is sliced to it
                    why = put(k, f, e, [])
                    if why:
                        return None, f"its result `{ast.unparse(node)}` meets line " \
                            f"{node.lineno} with another box: {why}", self.culprits(p)
        return [a if a is not None else (0, n) for a, n in zip(axes, legacy)], "", own

    def result_box(self, rec: CallRecord, env: dict[str, int], depth: int = 0
                   ) -> list[tuple[Value, Value]] | None:
        """``(first, end)`` per axis of an instruction's result tile (``None``: not known)."""
        key = (id(rec), tuple(sorted(env.items())))
        if key not in self.memo:
            self.memo[key] = self._result_box(rec, env, depth)
        return self.memo[key]

    def _result_box(self, rec: CallRecord, env: dict[str, int], depth: int
                    ) -> list[tuple[Value, Value]] | None:
        if not isinstance(rec.result, Tensor) or rec.result.shape is None:
            return None
        if not self.narrows(rec):
            return [(0, n) for n in rec.result.shape]
        legacy = self.legacy_shape(rec)
        if legacy is None:  # an allocation, or operands the check does not align
            if rec.whole or any(self.rewritten(r) for r in self.own(rec)):
                return None
            return [(0, n) for n in rec.result.shape]
        box, _, _ = self.box(rec, legacy, env, depth)
        if box is None:
            return None
        counts = tuple(int(sym_evaluate(e, env)) - int(sym_evaluate(f, env)) for f, e in box)
        if counts == legacy:
            return [(0, n) for n in rec.result.shape]  # not narrowed at this iteration
        spec = CALLS.get(rec.short)
        if (spec is None or rec.short == "load") and len(rec.result.shape) == len(box):
            return box  # elementwise (the table's default): the result has the box
        if spec is not None and spec.shape is CALLS["sum"].shape:
            axis, keep = rec.kwargs.get("axis"), rec.kwargs.get("keepdims", False)
            if axis is None:  # given positionally: not followed
                return None
            axes = set(axis if isinstance(axis, (tuple, list)) else (axis,))
            axes = {a % len(box) for a in axes if isinstance(a, int)}
            return [((0, 1) if k in axes else b) for k, b in enumerate(box)
                    if keep is True or k not in axes]
        return None

    # ----- one instruction evaluation -------------------------------------------------------
    def check(self, rec: CallRecord) -> bool:
        """Check one evaluation; True when something was refused (run again)."""
        own = self.own(rec)
        group = self.masked_reps.get(id(rec.node), [])
        if group and not all(self.rewritten(r) for r in group):
            kept = [r for r in group if self.rewritten(r)]
            if kept:
                return self.refuse(kept, "its instruction keeps mask= (another operand stays as "
                                   "written), and the mask has the legacy tile's shape")
        may_narrow = self.narrows(rec)
        mask = rec.kwargs.get("mask") if isinstance(rec.node, ast.Call) else None
        lone = mask is not None and not group  # a mask= no access of the call carries
        if not may_narrow and not lone:
            return False  # every operand keeps its legacy shape
        legacy = self.legacy_shape(rec)
        if legacy is None and may_narrow:
            return self.refuse(self.culprits(rec), "the instruction's operands have shapes the "
                               "check cannot align; rewrite it by hand")
        envs = self.envs_of(sorted(self.variables(rec), key=lambda v: v.name))
        if envs is None:
            if may_narrow:
                return self.refuse(self.culprits(rec), "its loops are too many to check the "
                                   "narrowed instruction at every iteration")
            return False
        slices: dict[int, tuple[ast.expr, list[str]]] = {}
        droppable, narrowed_by = lone and legacy is not None, []
        for env in envs:
            box: list[tuple[Value, Value]] | None = None
            if legacy is not None:
                box, why, culprit = self.box(rec, legacy, env)
                if box is None:
                    return self.refuse(culprit, why) or self.refuse(own, why)
                narrow = any(self._count(f, e, env) != n for (f, e), n in zip(box, legacy))
                if lone:
                    here = [(int(sym_evaluate(f, env)), int(sym_evaluate(e, env))) for f, e in box]
                    droppable = droppable and _mask_box(mask, legacy, env) == here
                    if narrow:
                        narrowed_by = [r for _, w in rec.whole if w.producer is not None
                                       for r in self.culprits(w.producer)]
                if narrow and rec.result is not None and id(rec) in self.report.read.escapes:
                    return self.refuse(self.culprits(rec), "its result tile is read outside an instruction "
                                       "(arithmetic, .shape or a method) with the legacy shape")
                if narrow and rec.result is not None and id(rec) in self.indexed:
                    return self.refuse(self.culprits(rec), "its result tile is indexed later in the legacy "
                                       "tile's layout")
            for node, w in rec.whole:
                need = self.required(w, legacy, box, env)
                have = self.current(w, env)
                if need is None:
                    return self.refuse(own, f"operand `{ast.unparse(node)}` cannot be narrowed "
                                       "with the instruction")
                if have == need:
                    continue
                if w.producer is not None and have != w.shape and not (
                        box is not None and self._holds(w, box, env)):
                    # a narrowed tile meets an instruction with another box: keep its producer
                    return self.refuse(self.culprits(w.producer), f"its result `{ast.unparse(node)}` "
                                       f"would have shape {have} where line {node.lineno} needs "
                                       f"{need} (at {env or 'the only iteration'})")
                if box is None or w.shape is None or have is None or any(n < 1 for n in need):
                    return self.refuse(own, f"operand `{ast.unparse(node)}` would be empty or "
                                       "cannot be narrowed")
                where = _axes_of(len(w.shape), len(box)) or []
                text = [self._slice_text(rec, k, d, box) for d, k in zip(w.shape, where)]
                if any(UNNAMED in t for t in text):
                    return self.refuse(own, f"operand `{ast.unparse(node)}` would be sliced "
                                       "with loop variables of a helper's caller that are not "
                                       "its parameters")
                prev = slices.setdefault(id(node), (node, text))
                if prev[1] != text:
                    return self.refuse(own, f"operand `{ast.unparse(node)}` needs different "
                                       "slices")
        if lone:
            kw = next(k for k in rec.node.keywords if k.arg == "mask")  # type: ignore[union-attr]
            if droppable and envs:
                self.dropped.add(id(kw))
            else:
                self.kept.add(id(kw))
                if narrowed_by:  # the kept mask has the legacy shape: keep the operands whole
                    return self.refuse(narrowed_by, f"line {kw.lineno} keeps a mask= of the "
                                       "legacy tile's shape on it")
        self.slices.update(slices)
        return False

    def _holds(self, w: Tensor, box: list[tuple[Value, Value]], env: dict[str, int]) -> bool:
        """A narrowed tile holds the instruction's box on every axis it spans: both start at
        the legacy tile's first element, the box ends within the tile (a bounded slice of the
        tile is then the box)."""
        pbox = self.result_box(w.producer, env) if w.producer is not None else None
        where = _axes_of(len(w.shape), len(box)) if w.shape is not None else None
        if pbox is None or where is None or len(pbox) != len(w.shape):
            return False
        return all(d == 1 or _within(box[k], b, env) for b, d, k in zip(pbox, w.shape, where))

    @staticmethod
    def _count(first: Value, end: Value, env: dict[str, int]) -> int:
        return int(sym_evaluate(end, env)) - int(sym_evaluate(first, env))

    def _slice_text(self, rec: CallRecord, k: int, n: int, box: list[tuple[Value, Value]]
                    ) -> str:
        if n == 1:
            return "0:1"
        first, end = box[k]
        names = scope_names(self.report, rec.in_helper, rec.local_names)
        return f"{sym_text(first, names)}:{sym_text(end, names)}"

    def required(self, w: Tensor, legacy: tuple[int, ...] | None,
                 box: list[tuple[Value, Value]] | None, env: dict[str, int]
                 ) -> tuple[int, ...] | None:
        """The shape a whole-tile operand must have in the migrated instruction."""
        if w.shape is None:
            return None
        if legacy is None or box is None:
            return w.shape
        where = _axes_of(len(w.shape), len(legacy))
        if where is None:
            return None
        return tuple(1 if d == 1 else self._count(*box[k], env) for d, k in zip(w.shape, where))

    def current(self, w: Tensor, env: dict[str, int]) -> tuple[int, ...] | None:
        if w.producer is not None:
            box = self.result_box(w.producer, env)
            return None if box is None else tuple(self._count(f, e, env) for f, e in box)
        return w.shape


def check_program(report: KernelReport, accepted: set[int], envs_of: Any) -> ProgramCheck:
    """Refuse the rewrites that would make the migrated kernel another program (``accepted``:
    ids of the access nodes whose rewrite passed its own check; it is narrowed in place)."""
    ch = _Checker(report, accepted, envs_of)
    for _ in range(len(report.read.calls) + 2):
        ch.slices, ch.memo, ch.dropped, ch.kept, ch.narrowing = {}, {}, set(), set(), {}
        if not any(ch.check(rec) for rec in report.read.calls):
            break
    out = ProgramCheck(ch.refused, dropped=ch.dropped - ch.kept)
    for node, parts in ch.slices.values():
        base = ast.unparse(node)
        if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
            base = f"({base})"
        out.slices.append((node, f"{base}[{', '.join(parts)}]"))
    return out


def iteration_envs(steps: dict[str, int], limit: int) -> Any:
    """``envs_of(variables)``: every combination of the loop variables' values, or ``None`` when a
    bound is unknown or there are more than ``limit``."""

    def envs_of(variables: Sequence[Var]) -> list[dict[str, int]] | None:
        if any(v.lo is None or v.hi is None for v in variables):
            return None
        ranges = [range(v.lo, v.hi + 1, steps.get(v.name, 1)) for v in variables]
        if math.prod(len(r) for r in ranges) > limit:
            return None
        return [dict(zip((v.name for v in variables), c)) for c in itertools.product(*ranges)]

    return envs_of

