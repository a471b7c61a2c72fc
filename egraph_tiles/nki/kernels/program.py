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
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from egraph_tiles.nki.index.expr import Var
from egraph_tiles.nki.index.symint import Value, sym_evaluate, sym_text
from egraph_tiles.nki.kernels.analyze import AccessReport, KernelReport, _vars_of
from egraph_tiles.nki.kernels.values import CallRecord, Tensor

__all__ = ["ProgramCheck", "check_program"]

_ELEMENTWISE_RESULT = {"load", "", "tensor_copy", "exp", "add", "subtract", "multiply",
                       "divide", "maximum", "minimum", "negative", "copy", "activation",
                       "tensor_tensor", "tensor_scalar"}


@dataclass
class ProgramCheck:
    """Accesses (by node id) refused with why, and the slices of whole-tile operands to write."""

    refused: dict[int, str] = field(default_factory=dict)
    slices: list[tuple[ast.expr, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Axis:
    first: Value
    end: Value

    def count(self, env: dict[str, int]) -> int:
        return int(sym_evaluate(self.end, env)) - int(sym_evaluate(self.first, env))


def _tile_axes(rep: AccessReport) -> list[_Axis]:
    """Per tile axis of the access (source-shape order), its narrowed ``[first, end)``."""
    out = []
    for pos in rep.tile.source_axes():
        out.append(_Axis(rep.lower.get(pos.var, 0), rep.upper.get(pos.var, pos.tripcount)))
    return out


class _Checker:
    slices: dict[int, tuple[ast.expr, list[str]]]
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
        if any(len(s) != rank for s in shapes):
            return None
        return tuple(max(s[k] for s in shapes) for k in range(rank))

    def box(self, rec: CallRecord, legacy: tuple[int, ...], env: dict[str, int], depth: int = 0
            ) -> tuple[list[tuple[Value, Value]] | None, str, list[AccessReport]]:
        """Per instruction axis, ``(first, end)`` of its operands as migrated: a rewritten access
        narrowed by its mask, one left as written over the whole axis, a tile produced by a
        narrowed instruction over that instruction's box.  On disagreement: ``None``, why, and
        the accesses to refuse (the instruction's own, or the producer of a narrowed tile)."""
        axes: list[tuple[Value, Value] | None] = [None] * len(legacy)
        own = self.own(rec)

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
            if len(tile) != len(legacy):
                if any(a.count(env) != n for a, n in zip(tile, rep.shape)):
                    return None, (f"`{ast.unparse(rep.raw.node)}` has another rank than the "
                                  "instruction"), own
                continue
            for k, (a, n) in enumerate(zip(tile, legacy)):
                if rep.shape[k] == n and n != 1:
                    why = put(k, a.first, a.end, own)
                    if why:
                        return None, why, own
        for node, w in rec.whole:
            p = w.producer
            if p is None or depth > 32:
                continue
            pbox = self.result_box(p, env, depth + 1)
            if pbox is None or w.shape is None or len(pbox) != len(w.shape):
                return None, f"`{ast.unparse(node)}` is narrowed in a way the check cannot " \
                    "follow", self.own(p)
            if all(int(sym_evaluate(e, env)) - int(sym_evaluate(f, env)) == n
                   for (f, e), n in zip(pbox, w.shape)):
                continue  # not narrowed here: a whole tile (sliced to the box if need be)
            if len(w.shape) != len(legacy):
                if any(int(sym_evaluate(e, env)) - int(sym_evaluate(f, env)) != n
                       for (f, e), n in zip(pbox, w.shape)):
                    return None, f"`{ast.unparse(node)}` has another rank than the " \
                        "instruction", self.own(p)
                continue
            for k, ((f, e), n) in enumerate(zip(pbox, legacy)):
                if w.shape[k] == n and n != 1:
                    why = put(k, f, e, self.own(p))
                    if why:
                        return None, f"its result `{ast.unparse(node)}` meets line " \
                            f"{node.lineno} with another box: {why}", self.own(p)
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
        if rec.short in _ELEMENTWISE_RESULT and len(rec.result.shape) == len(box):
            return box
        if rec.short in ("sum", "max", "min", "mean", "prod", "tensor_reduce"):
            axis, keep = rec.kwargs.get("axis"), rec.kwargs.get("keepdims", False)
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
        may_narrow = any(self.rewritten(r) and r.raw.mask is not None for r in own) or any(
            w.producer is not None for _, w in rec.whole)
        legacy = self.legacy_shape(rec)
        if legacy is None and may_narrow:
            return self.refuse(own, "the instruction's operands have shapes the check cannot "
                               "align; rewrite it by hand")
        variables = {v for r in own for v in _vars_of(r)}
        for _, w in rec.whole:
            if w.producer is not None:
                variables |= {v for r in self.own(w.producer) for v in _vars_of(r)}
        envs = self.envs_of(sorted(variables, key=lambda v: v.name))
        if envs is None:
            if may_narrow or any(w.producer is not None for _, w in rec.whole):
                return self.refuse(own, "its loops are too many to check the narrowed "
                                   "instruction at every iteration")
            return False
        slices: dict[int, tuple[ast.expr, list[str]]] = {}
        for env in envs:
            box: list[tuple[Value, Value]] | None = None
            if legacy is not None:
                box, why, culprit = self.box(rec, legacy, env)
                if box is None:
                    return self.refuse(culprit, why) or self.refuse(own, why)
                narrow = any(self._count(f, e, env) != n for (f, e), n in zip(box, legacy))
                if narrow and rec.result is not None and id(rec) in self.report.read.escapes:
                    return self.refuse(own, "its result tile is read outside an instruction "
                                       "(arithmetic, .shape or a method) with the legacy shape")
                if narrow and rec.result is not None and id(rec) in self.indexed:
                    return self.refuse(own, "its result tile is indexed later in the legacy "
                                       "tile's layout")
            for node, w in rec.whole:
                need = self.required(w, legacy, box, env)
                have = self.current(w, env)
                if need is None:
                    return self.refuse(own, f"operand `{ast.unparse(node)}` cannot be narrowed "
                                       "with the instruction")
                if have == need:
                    continue
                if w.producer is not None and have != w.shape:
                    # a narrowed tile meets an instruction with another box: keep its producer
                    return self.refuse(self.own(w.producer), f"its result `{ast.unparse(node)}` "
                                       f"would have shape {have} where line {node.lineno} needs "
                                       f"{need} (at {env or 'the only iteration'})")
                if box is None or w.shape is None or have is None or any(n < 1 for n in need):
                    return self.refuse(own, f"operand `{ast.unparse(node)}` would be empty or "
                                       "cannot be narrowed")
                text = [self._slice_text(k, w.shape[k], box) for k in range(len(w.shape))]
                prev = slices.setdefault(id(node), (node, text))
                if prev[1] != text:
                    return self.refuse(own, f"operand `{ast.unparse(node)}` needs different "
                                       "slices")
        self.slices.update(slices)
        return False

    @staticmethod
    def _count(first: Value, end: Value, env: dict[str, int]) -> int:
        return int(sym_evaluate(end, env)) - int(sym_evaluate(first, env))

    def _slice_text(self, k: int, n: int, box: list[tuple[Value, Value]]) -> str:
        if n == 1:
            return "0:1"
        first, end = box[k]
        names = self.report.read.source_names
        return f"{sym_text(first, names)}:{sym_text(end, names)}"

    def required(self, w: Tensor, legacy: tuple[int, ...] | None,
                 box: list[tuple[Value, Value]] | None, env: dict[str, int]
                 ) -> tuple[int, ...] | None:
        if w.shape is None:
            return None
        if legacy is None or box is None:
            return w.shape
        if len(w.shape) != len(legacy):
            return w.shape if all(self._count(f, e, env) == n
                                  for (f, e), n in zip(box, legacy)) else None
        return tuple(1 if d == 1 else self._count(f, e, env) for d, (f, e) in zip(w.shape, box))

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
        ch.slices, ch.memo = {}, {}
        if not any(ch.check(rec) for rec in report.read.calls):
            break
    out = ProgramCheck(ch.refused)
    for node, parts in ch.slices.values():
        base = ast.unparse(node)
        if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
            base = f"({base})"
        out.slices.append((node, f"{base}[{', '.join(parts)}]"))
    return out


def iteration_envs(steps: dict[str, int], limit: int) -> Any:
    """``envs_of(variables)``: every combination of the loop variables' values, or ``None``."""
    import itertools

    def envs_of(variables: Sequence[Var]) -> list[dict[str, int]] | None:
        if any(v.lo is None or v.hi is None for v in variables):
            return None
        ranges = [range(v.lo, v.hi + 1, steps.get(v.name, 1)) for v in variables]
        if math.prod(len(r) for r in ranges) > limit:
            return None
        return [dict(zip((v.name for v in variables), c)) for c in itertools.product(*ranges)]

    return envs_of

