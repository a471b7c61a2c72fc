"""NKI kernels as written: every indexed access of a legacy kernel inferred, checked, verified.

:func:`analyze_kernel` reads a kernel file with :mod:`egraph_tiles.nki.kernels.reader` (``ast`` only,
never executed), then runs the seed's pipeline over **all** its accesses in one e-graph
(:class:`~egraph_tiles.nki.index.solver.AffineSolver`), in three batches:

1. every range length (``stop - start`` of slices and ``ds``);
2. every access's per-dimension index expressions, its row-major address, and its mask's
   predicates substituted onto its tile axes (``inst_mask``);
3. the mask-narrowed bounds (``min(128, 446 - 128*t)``) and the per-dimension index
   expressions with a masked axis replaced by its bound, for the out-of-bounds check.

The result per access is an :class:`AccessReport`: the access pattern (partition first,
``[[stride, count], ...]`` outermost to innermost, strides and offset in elements -- what NKI's
``get_pattern()`` reports), narrowed by the mask.  Findings (:class:`~egraph_tiles.nki.kernels.reader.
Finding`): an access that can leave its tensor (with the worst index), a non-affine index,
a partition dimension over 128, an indirect (data-dependent) index, a mask that is not a box.
:func:`verify_report` compares each pattern with numpy's reading of the legacy index.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from egraph_tiles.nki.index.access import access_exprs, pattern_from_solution, row_major_address
from egraph_tiles.nki.index.expr import AffineExpr, Var
from egraph_tiles.nki.index.masks import CmpTileMask, Instruction, TileMaskIntersection, inst_mask
from egraph_tiles.nki.index.normal_form import NormalForm, QuasiAtom
from egraph_tiles.nki.index.ranges import DynSlice, range_diff
from egraph_tiles.nki.kernels.reader import Finding, KernelRead, RawAccess, read_kernel
from egraph_tiles.nki.index.solver import AffineSolver, Solution, solve
from egraph_tiles.nki.index.symint import SymInt, Value, sym_evaluate, sym_text
from egraph_tiles.nki.index.tile import APIndex, NDTile, TileIndex

__all__ = ["AccessReport", "KernelReport", "PMAX", "analyze_kernel", "analyze_read", "read_kernel",
           "legacy_elements", "pattern_elements", "sample_envs", "verify_report"]

#: Partition limit of an on-chip tile (``nl.tile_size.pmax``).
PMAX = 128


@dataclass(eq=False)
class AccessReport:
    """One inferred access."""

    raw: RawAccess
    tile: NDTile
    exprs: tuple[NormalForm, ...]  # index expression per tensor dimension
    axes: tuple[APIndex, ...]  # pattern axes: partition first, outer to inner
    pattern: tuple[tuple[int, Value], ...]  # [[stride, count], ...] (counts narrowed by the mask)
    offset: Value
    lower: dict[Var, Value] = field(default_factory=dict)  # masked axis -> first index
    upper: dict[Var, Value] = field(default_factory=dict)  # masked axis -> count bound (exclusive)
    box_mask: bool = True  # the mask (if any) narrowed to a box: migration can drop it
    guards: tuple[NormalForm, ...] = ()  # mask predicates on loop variables only: `g < 0`...
    guard_ops: tuple[str, ...] = ()

    @property
    def shape(self) -> tuple[int, ...]:
        return self.tile.shape

    @property
    def masked(self) -> bool:
        return self.raw.mask is not None


@dataclass
class KernelReport:
    """Every access of one kernel, and every error / finding."""

    read: KernelRead
    accesses: list[AccessReport]
    findings: list[Finding]
    verified: dict[int, str | None] = field(default_factory=dict)  # filled by verify_report

    @property
    def name(self) -> str:
        return self.read.name


def analyze_kernel(source: str, kernel: str | None = None, **options: Any) -> KernelReport:
    """Read and analyze one kernel; ``options`` are the keywords of
    :func:`egraph_tiles.nki.kernels.reader.read_kernel` (``filename``, ``shapes``, ``dtypes``,
    ``scalars``, ``binds``, ``grid``)."""
    return analyze_read(read_kernel(source, kernel, **options))


# ----- analysis -----------------------------------------------------------------------------------

@dataclass(eq=False)
class _Work:
    raw: RawAccess
    tile: NDTile
    exprs: tuple[AffineExpr, ...]
    address: AffineExpr
    mask: TileMaskIntersection | None


def analyze_read(read: KernelRead, solver: AffineSolver | None = None) -> KernelReport:
    """Infer every access of ``read`` in one e-graph; collect findings."""
    solver = solver or AffineSolver()
    findings = list(read.findings)
    try:
        return _analyze(read, solver, findings)
    except BaseException as e:  # an egglog panic is a BaseException: report, never crash
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        findings.append(Finding(0, f"internal error while solving the kernel's indices: {e}"))
        return KernelReport(read, [], findings)


def _analyze(read: KernelRead, solver: AffineSolver, findings: list[Finding]) -> KernelReport:
    accs = read.accesses
    # batch 1: every range length
    diffs = [d for a in accs for k, s in enumerate(a.subs)
             if isinstance(s, (slice, DynSlice)) and (d := range_diff(s, a.tensor.shape[k]))]
    _solve(diffs, solver)
    work: list[_Work] = []
    for a in accs:
        try:
            tile, exprs = access_exprs(a.tensor.shape, a.subs)
        except (IndexError, ValueError, TypeError) as e:
            findings.append(Finding(a.line, f"{_text(a)}: {e}"))
            continue
        tile = tile or NDTile((1,), ())
        mask = None
        if a.mask is not None:
            par = [TileIndex(i.e, tile) for i in tile.canonical_par_indices]
            free = [TileIndex(i.e, tile) for i in tile.canonical_free_indices]
            mask = inst_mask(Instruction(tile, par, free, (a.mask,)))
        work.append(_Work(a, tile, exprs, row_major_address(a.tensor.shape, exprs), mask))
    # batch 2: addresses, index expressions, mask predicates
    exprs2 = [e for w in work for e in (w.address, *w.exprs)]
    exprs2 += [m.expr for w in work if w.mask is not None for m in _cmps(w.mask)]
    sols = _solve(exprs2, solver)
    pre: list[tuple[_Work, Any, dict, dict, bool]] = []
    batch3: list[AffineExpr] = []
    for w in work:
        sol = sols[w.address]
        if sol.normal_form is None:
            findings.append(Finding(w.raw.line, f"{_text(w.raw)}: the address has no affine "
                                    "normal form", "non-affine"))
            continue
        try:
            ap = pattern_from_solution(w.raw.tensor.shape, w.tile, w.address, sol,
                                       check_bounds=False)
        except ValueError as e:
            findings.append(Finding(w.raw.line, f"non-affine index {_text(w.raw)}: {e}",
                                    "non-affine"))
            continue
        lower, upper, box, guards = _mask_bounds(w, sols, findings)
        batch3 += [e for es in (*lower.values(), *upper.values()) for e in es]
        pre.append((w, ap, lower, upper, (box, guards)))
    # batch 3: mask bounds and masked per-dimension extremes
    subst_jobs = []
    for w, ap, lower, upper, _ in pre:
        jobs = _bound_jobs(w, sols, lower, upper)
        subst_jobs.append(jobs)
        batch3 += [e for _, _, es in jobs for e in es]
    sols.update(_solve(batch3, solver))
    reports = []
    for (w, ap, lower, upper, box), jobs in zip(pre, subst_jobs, strict=True):
        rep = _report(w, ap, lower, upper, box[0], sols)
        rep.guards = tuple(g for g, _ in box[1])
        rep.guard_ops = tuple(o for _, o in box[1])
        reports.append(rep)
        _check_bounds(w, rep, jobs, sols, read, findings)
        n_par = int(np.prod(w.tile.par_shape)) if w.tile.par_shape else 1
        if n_par > PMAX and w.raw.operand:
            findings.append(Finding(w.raw.line, f"{_text(w.raw)}: partition dimension of "
                                    f"{n_par} > {PMAX} (nl.tile_size.pmax); NKI rejects it",
                                    "partition"))
    findings = sorted(dict.fromkeys(findings), key=lambda f: f.line)  # unrolled copies once
    return KernelReport(read, reports, findings)


def _solve(exprs: Sequence[AffineExpr], solver: AffineSolver) -> dict[AffineExpr, Solution]:
    exprs = list(dict.fromkeys(exprs))
    return dict(zip(exprs, solve(exprs, solver), strict=True))


def _text(a: RawAccess) -> str:
    import ast

    return ast.unparse(a.node)


def _cmps(mask: TileMaskIntersection) -> list[CmpTileMask]:
    return [m for m in mask.masks if isinstance(m, CmpTileMask)]


def _axis_vars(tile: NDTile) -> dict[Var, APIndex]:
    return {i.var: i for i in tile.canonical_par_indices + tile.canonical_free_indices}


def _is_axis(v: Var) -> bool:
    return v.kind == "axis"


def _mask_bounds(w: _Work, sols: dict[AffineExpr, Solution], findings: list[Finding]
                 ) -> tuple[dict[Var, list[AffineExpr]], dict[Var, list[AffineExpr]], bool,
                            list[tuple[NormalForm, str]]]:
    """Per masked axis, the lower bounds (first index) and upper bounds (exclusive end) its
    predicates give, as expressions over loop variables; ``box`` is false when a predicate is
    not a bound on one axis of this access."""
    lower: dict[Var, list[AffineExpr]] = {}
    upper: dict[Var, list[AffineExpr]] = {}
    guards: list[tuple[NormalForm, str]] = []
    if w.mask is None:
        return lower, upper, True, guards
    axes = _axis_vars(w.tile)
    box = True
    for m in _cmps(w.mask):
        nf = sols[m.expr].normal_form
        if nf is None:
            box = False
            continue
        mine = [(a, c) for a, c in nf.terms if isinstance(a, Var) and a in axes]
        foreign = [a for a, _ in nf.terms if isinstance(a, Var) and _is_axis(a) and a not in axes]
        quasi = [a for a, _ in nf.terms if isinstance(a, QuasiAtom)
                 and any(_is_axis(v) for v in _atom_vars(a))]
        sol = sols[m.expr]
        if _always(m.op, sol.lo, sol.hi):
            continue  # holds for every element and iteration: narrows nothing
        if not mine and not foreign and not quasi:
            guards.append((nf, m.op))  # the instruction runs only when it holds
            continue
        if quasi or len(mine) > 1 or (not mine and not foreign) or (mine and m.op == "!="):
            box = False
            findings.append(Finding(w.raw.line, f"{_text(w.raw)}: mask predicate `{nf} {m.op} 0` "
                                    "is not a bound on one axis of the access: it is kept "
                                    "unnarrowed (migrate it by hand, e.g. nisa.affine_select)",
                                    "mask"))
            continue
        if not mine:
            continue  # a predicate on an axis this operand broadcasts over
        (x, c), = mine
        rest = NormalForm.build(nf.const, [(a, k) for a, k in nf.terms if a != x]).to_expr()
        for op, cc, r in _as_le_lt(m.op, c, rest):
            # cc*x + r OP 0 with OP in "<" / "<=" and cc != 0
            if cc > 0:  # x <= floor(-r'/cc), end (exclusive) = floor(-r'/cc) + 1
                bound = (-r - (1 if op == "<" else 0)) // cc + 1
                upper.setdefault(x, []).append(bound)
            else:
                d = -cc  # -d*x + r OP 0  ->  x >= ceil((r + [1 if <])/d)
                bound = (r + (1 if op == "<" else 0) + d - 1) // d
                lower.setdefault(x, []).append(bound)
    return lower, upper, box, guards


def _always(op: str, lo: int | None, hi: int | None) -> bool:
    """``e OP 0`` holds whenever ``lo <= e <= hi``."""
    if op in ("<", "<="):
        return hi is not None and (hi < 0 if op == "<" else hi <= 0)
    if op in (">", ">="):
        return lo is not None and (lo > 0 if op == ">" else lo >= 0)
    if op == "!=":
        return (hi is not None and hi < 0) or (lo is not None and lo > 0)
    return lo is not None and lo == hi == 0


def _as_le_lt(op: str, c: int, rest: AffineExpr) -> list[tuple[str, int, AffineExpr]]:
    if op in ("<", "<="):
        return [(op, c, rest)]
    if op in (">", ">="):
        return [({">": "<", ">=": "<="}[op], -c, -rest)]
    if op == "==":
        return [("<=", c, rest), ("<=", -c, -rest)]
    return []  # "!=" narrows nothing


def _atom_vars(atom: QuasiAtom) -> set[Var]:
    out: set[Var] = set()
    for a, _ in atom.operand.terms:
        out |= _atom_vars(a) if isinstance(a, QuasiAtom) else {a}
    return out


def _bound_jobs(w: _Work, sols: dict[AffineExpr, Solution], lower: dict, upper: dict
                ) -> list[tuple[int, str, list[AffineExpr]]]:
    """Per tensor dimension whose index reads a masked axis: the index with that axis replaced
    by each of its bounds (``hi`` and ``lo`` sides), to take the tightest interval bound."""
    jobs = []
    axes = _axis_vars(w.tile)
    for d, e in enumerate(w.exprs):
        nf = sols[e].normal_form
        if nf is None:
            continue
        masked = [(x, c) for x, c in nf.terms if isinstance(x, Var) and (x in lower or x in upper)]
        if not masked:
            continue
        for side in ("hi", "lo"):
            choices = []
            for x, c in masked:
                top = [AffineExpr.const(axes[x].tripcount - 1)] + [u - 1 for u in upper.get(x, [])]
                bot = [AffineExpr.const(0)] + list(lower.get(x, []))
                choices.append([(x, t) for t in ((top if c > 0 else bot) if side == "hi"
                                                  else (bot if c > 0 else top))])
            combos = list(itertools.islice(itertools.product(*choices), 16))
            jobs.append((d, side, [e.substitute(dict(combo)) for combo in combos]))
    return jobs


def _check_bounds(w: _Work, rep: AccessReport, jobs: list, sols: dict[AffineExpr, Solution],
                  read: KernelRead, findings: list[Finding]) -> None:
    shape = w.raw.tensor.shape
    his = {d: sols[e].hi for d, e in enumerate(w.exprs)}
    los = {d: sols[e].lo for d, e in enumerate(w.exprs)}
    for d, side, exprs in jobs:
        vals = [getattr(sols[e], side) for e in exprs]
        vals = [v for v in vals if v is not None]
        if not vals:
            continue
        if side == "hi":
            his[d] = min([v for v in (his[d], *vals) if v is not None])
        else:
            los[d] = max([v for v in (los[d], *vals) if v is not None])
    bad = [d for d in range(len(shape))
           if his[d] is None or los[d] is None or his[d] >= shape[d] or los[d] < 0]
    where: dict[tuple[int, str], dict[str, int]] = {}
    if bad:  # the intervals are not enough: every iteration, when there are few of them
        exact = _enumerated_bounds(rep, read.steps)
        if exact is not None:
            los, his, where = exact
    for d in range(len(shape)):
        hi, lo = his[d], los[d]
        if hi is None or lo is None:
            free = sorted(v.name for v in w.exprs[d].free_vars
                          if (v.hi is None or v.lo is None))
            findings.append(Finding(w.raw.line, f"{_text(w.raw)}: cannot bound the index along "
                                    f"dimension {d} ({', '.join(free) or 'a symbol'} has no "
                                    "range: pass --grid or --bind)", "out-of-bounds"))
        elif hi >= shape[d] or lo < 0:
            worst = hi if hi >= shape[d] else lo
            at = where.get((d, "hi" if hi >= shape[d] else "lo"))
            when = f" at {', '.join(f'{k}={v}' for k, v in at.items())}" if at else ""
            findings.append(Finding(w.raw.line, f"out of bounds: {_text(w.raw)} reaches index "
                                    f"{worst} along dimension {d} of {w.raw.tensor_text}{when} "
                                    f"(shape {shape}: valid 0..{shape[d] - 1}; the index spans "
                                    f"{lo}..{hi})", "out-of-bounds"))


_MAX_ENUMERATED = 1 << 16


def guards_hold(rep: AccessReport, env: Mapping[str, Any]) -> Any:
    """Whether the access's instruction runs at ``env`` (its loop-variable predicates hold)."""
    ok: Any = True
    for g, op in zip(rep.guards, rep.guard_ops):
        ok = ok & _CMP[op](np.asarray(g.evaluate(env)), 0)
    return ok


_CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
        "==": np.equal, "!=": np.not_equal}


def _enumerated_bounds(rep: AccessReport, steps: Mapping[str, int]
                       ) -> tuple[dict[int, Any], dict[int, Any], dict[tuple[int, str], dict[str, int]]] | None:
    """Exact per-dimension index bounds over every loop iteration (and program id) where the
    instruction runs, and the first iteration reaching each; ``None`` when a variable is
    unbounded or there are too many iterations."""
    variables = _vars_of(rep)
    if any(v.lo is None or v.hi is None for v in variables):
        return None
    ranges = [np.arange(v.lo, v.hi + 1, steps.get(v.name, 1)) for v in variables]
    if int(np.prod([len(r) for r in ranges], dtype=np.float64)) > _MAX_ENUMERATED:
        return None
    grids = np.meshgrid(*ranges, indexing="ij") if ranges else []
    env = {v.name: g.reshape(-1) for v, g in zip(variables, grids)}
    size = len(next(iter(env.values()))) if env else 1
    run = np.broadcast_to(np.asarray(guards_hold(rep, env)), (size,)).copy()
    ext: dict[Var, tuple[np.ndarray, np.ndarray]] = {}
    for a in rep.tile.canonical_par_indices + rep.tile.canonical_free_indices:
        first = np.broadcast_to(np.asarray(sym_evaluate(rep.lower.get(a.var, 0), env)), (size,))
        end = np.broadcast_to(np.asarray(sym_evaluate(rep.upper.get(a.var, a.tripcount), env)),
                              (size,))
        first, last = np.maximum(first, 0), np.minimum(end, a.tripcount) - 1
        run &= last >= first
        ext[a.var] = (first, last)
    if not run.any():
        zeros = {d: 0 for d in range(len(rep.exprs))}
        return zeros, dict(zeros), {}
    los, his, where = {}, {}, {}
    for d, nf in enumerate(rep.exprs):
        lo = hi = np.broadcast_to(np.asarray(NormalForm.build(nf.const, [
            (a, c) for a, c in nf.terms if a not in ext]).evaluate(env)), (size,))
        for a, c in nf.terms:
            if a in ext:
                f, la = ext[a]
                lo, hi = lo + np.minimum(c * f, c * la), hi + np.maximum(c * f, c * la)
        los[d], his[d] = int(lo[run].min()), int(hi[run].max())
        for side, vals, pick in (("lo", lo, np.argmin), ("hi", hi, np.argmax)):
            k = int(np.flatnonzero(run)[pick(vals[run])])
            where[(d, side)] = {name: int(v[k]) for name, v in env.items()}
    return los, his, where


def _report(w: _Work, ap: Any, lower: dict, upper: dict, box: bool,
            sols: dict[AffineExpr, Solution]) -> AccessReport:
    tile = w.tile
    axes = tuple(reversed(tile.canonical_par_indices)) + tuple(reversed(tile.canonical_free_indices))
    nfs = tuple(sols[e].normal_form for e in w.exprs)
    lo: dict[Var, Value] = {}
    up: dict[Var, Value] = {}
    for x, es in lower.items():
        lo[x] = SymInt.combine("max", [0] + [_value(sols[e]) for e in es])
    for x, es in upper.items():
        n = next(a.tripcount for a in axes if a.var == x)
        up[x] = SymInt.combine("min", [n] + [_value(sols[e]) for e in es])
    pattern: list[tuple[int, Value]] = []
    addr = sols[w.address].normal_form
    for a in axes:
        end = up.get(a.var, a.tripcount)
        first = lo.get(a.var, 0)
        count = end if first == 0 else SymInt.combine("add", [end, _neg(first)])
        pattern.append((addr.coefficient(a.var), count))
    if not tile.canonical_par_indices:
        pattern.insert(0, (0, 1))
    offset: Value = ap.offset if isinstance(ap.offset, int) else SymInt.lin(ap.offset)
    shifts = [_scale(lo[a.var], addr.coefficient(a.var)) for a in axes if a.var in lo]
    if shifts:
        offset = SymInt.combine("add", [offset, *shifts])
    return AccessReport(w.raw, tile, nfs, axes, tuple(pattern), offset, lo, up, box)


def _value(sol: Solution) -> Value:
    if sol.normal_form is None:
        raise ValueError("mask bound without a normal form")
    return SymInt.lin(sol.normal_form)


def _neg(v: Value) -> Value:
    return _scale(v, -1)


def _scale(v: Value, k: int) -> Value:
    if isinstance(v, int):
        return v * k
    if k == 1:
        return v
    if v.op == "lin":
        nf = v.args[0]
        return SymInt.lin(NormalForm.build(nf.const * k, [(a, c * k) for a, c in nf.terms]))
    if v.op == "add":
        return SymInt.combine("add", [_scale(a, k) for a in v.args])
    if k > 0:
        return SymInt(v.op, tuple(_scale(a, k) for a in v.args))
    flip = {"min": "max", "max": "min"}[v.op]
    return SymInt(flip, tuple(_scale(a, k) for a in v.args))


# ----- numpy evaluation (verification) -------------------------------------------------------------

def sample_envs(variables: Sequence[Var], steps: Mapping[str, int], k: int = 8,
                seed: int = 0) -> list[dict[str, int]]:
    """Loop iterations to check: all-first, all-last, then random ones (at most ``k``)."""
    if not variables:
        return [{}]
    rng = random.Random(seed)

    def values(v: Var) -> range:
        lo = v.lo if v.lo is not None else 0
        hi = v.hi if v.hi is not None else lo + 3
        return range(lo, hi + 1, steps.get(v.name, 1))

    vals = {v.name: values(v) for v in variables}
    envs = [{n: r[0] for n, r in vals.items()}, {n: r[-1] for n, r in vals.items()}]
    total = int(np.prod([len(r) for r in vals.values()], dtype=np.float64))
    if total <= k:
        return [dict(zip(vals, combo)) for combo in itertools.product(*vals.values())]
    while len(envs) < k:
        envs.append({n: rng.choice(r) for n, r in vals.items()})
    return envs


def _strides(shape: Sequence[int]) -> list[int]:
    return [math.prod(shape[k + 1:]) for k in range(len(shape))]


def outer_flat(parts: Sequence[Any], shape: Sequence[int]) -> np.ndarray:
    """Flat element ids of numpy *basic* indexing: each part an int or a 1-D array of indices
    (a slice's), row-major ``shape``; sliced dimensions in order, integer ones dropped."""
    flat: Any = np.zeros((), dtype=np.int64)
    for part, stride in zip(parts, _strides(shape)):
        if isinstance(part, np.ndarray):
            flat = np.add.outer(flat, part.astype(np.int64) * stride)
        else:
            flat = flat + int(part) * stride
    return np.asarray(flat)


def legacy_elements(raw: RawAccess, env: Mapping[str, int]) -> np.ndarray:
    """The legacy index read with numpy: the flat element ids (row-major) of ``tensor[index]``,
    one per position of the index's broadcast tile; -1 where the index leaves the tensor."""
    shape = raw.tensor.shape
    subs = list(raw.subs) + [slice(None)] * (len(shape) - len(raw.subs))
    env = dict(env)

    def scalar(v: Any) -> Any:
        return int(v.evaluate(env)) if isinstance(v, AffineExpr) else v

    def pyslice(s: Any) -> slice:
        if isinstance(s, DynSlice):
            start = scalar(s.start)
            return slice(start, start + int(s.size))
        return slice(scalar(s.start), scalar(s.stop), scalar(s.step))

    if not any(isinstance(s, TileIndex) for s in subs):
        parts = [np.arange(n)[pyslice(s)] if isinstance(s, (slice, DynSlice)) else scalar(s)
                 for s, n in zip(subs, shape)]
        if any(isinstance(i, int) and not 0 <= i < n for i, n in zip(parts, shape)):
            return np.full(1, -1)  # an integer index outside the tensor
        return outer_flat(parts, shape)
    owners = [k for k, s in enumerate(subs) if isinstance(s, (slice, DynSlice, TileIndex))]
    r = max((len(s.tile.shape) for s in subs if isinstance(s, TileIndex) and s.tile), default=0)
    r = max(r, len(owners))
    index = []
    for k, s in enumerate(subs):
        if isinstance(s, TileIndex):
            val = np.asarray(s.e.evaluate({**s.tile.axis_grid(), **env}))
            val = np.broadcast_to(val, s.tile.shape)
            index.append(val.reshape((1,) * (r - val.ndim) + val.shape))
        elif isinstance(s, (slice, DynSlice)):
            j = owners.index(k)
            vals = np.arange(shape[k])[pyslice(s)]
            index.append(vals.reshape((1,) * j + (len(vals),) + (1,) * (r - j - 1)))
        else:
            index.append(np.asarray(scalar(s)))
    arrs = np.broadcast_arrays(*index)
    inside = np.ones(arrs[0].shape, dtype=bool)
    flat = np.zeros(arrs[0].shape, dtype=np.int64)
    for a, n, stride in zip(arrs, shape, _strides(shape)):
        inside &= (a >= 0) & (a < n)
        flat = flat + a.astype(np.int64) * stride
    return np.where(inside, flat, -1)  # -1: outside the tensor (masked off, or a bug)


def pattern_elements(rep: AccessReport, env: Mapping[str, int]) -> np.ndarray:
    """Element ids the (mask-narrowed) pattern reads, shape = its counts."""
    counts = [max(int(sym_evaluate(c, env)), 0) for _, c in rep.pattern]
    grid = np.full(counts, int(sym_evaluate(rep.offset, env)), dtype=np.int64)
    for k, (step, n) in enumerate(zip([s for s, _ in rep.pattern], counts)):
        shape = [1] * len(counts)
        shape[k] = n
        grid = grid + step * np.arange(n, dtype=np.int64).reshape(shape)
    return grid


def mask_array(rep: AccessReport, env: Mapping[str, int]) -> np.ndarray | None:
    """The mask over the access's tile (``None`` when unmasked); predicates on axes the access
    broadcasts over do not restrict it."""
    if rep.raw.mask is None:
        return None
    tile = rep.tile
    grid = {**tile.axis_grid(), **env}
    mine = {i.var for i in tile.indices}
    out = np.ones(tile.shape, dtype=bool)
    preds = rep.raw.mask.masks if isinstance(rep.raw.mask, TileMaskIntersection) else (rep.raw.mask,)
    ops = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
           "==": np.equal, "!=": np.not_equal}
    for m in preds:
        vs = {v for v in m.expr.free_vars if _is_axis(v)}
        if any(v not in mine and v.hi != v.lo for v in vs):
            continue
        local = dict(grid)
        for v in vs:
            local.setdefault(v.name, 0)
        val = np.asarray(m.expr.evaluate(local))
        out &= np.broadcast_to(ops[m.op](val, 0), tile.shape)
    return out


def check_elements(rep: AccessReport, env: Mapping[str, int], got: np.ndarray) -> str | None:
    """``None`` when ``got`` (what a rewritten form reads) is the legacy access at ``env``,
    else what differs."""
    if not bool(np.all(guards_hold(rep, env))):
        return None  # the instruction does not run in this iteration
    want = legacy_elements(rep.raw, env)
    if want.shape != rep.tile.shape:
        try:
            want = np.broadcast_to(want, rep.tile.shape)
        except ValueError:
            return f"numpy reads shape {want.shape}, the tile is {rep.tile.shape}"
    mask = mask_array(rep, env)
    if mask is not None and rep.box_mask:
        want = want[mask]
        got = got.reshape(-1)
    else:
        squeeze = tuple(d for d in want.shape if d != 1)
        if tuple(d for d in got.shape if d != 1) != squeeze:
            return f"shape {got.shape} but the legacy index reads {want.shape}"
    if want.size != got.size or not np.array_equal(want.reshape(-1), got.reshape(-1)):
        return (f"elements differ at {env or 'the only iteration'} (legacy reads "
                f"{_head(want)}, the new form {_head(got)})")
    return None


def _head(a: np.ndarray) -> str:
    flat = a.reshape(-1)
    return "[" + ", ".join(map(str, flat[:6])) + (", ...]" if flat.size > 6 else "]")


def verify_report(report: KernelReport, k: int = 8) -> tuple[int, list[Finding]]:
    """Compare every access's pattern with numpy's reading of its legacy index at sampled
    iterations; returns (accesses verified, failures).  Each access's verdict is kept in
    ``report.verified`` (``id(AccessReport)`` -> the failure, or ``None`` when it held)."""
    ok, bad = 0, []
    for rep in report.accesses:
        envs = sample_envs(_vars_of(rep), report.read.steps, k)
        err = None
        for env in envs:
            err = check_elements(rep, env, pattern_elements(rep, env))
            if err:
                break
        report.verified[id(rep)] = err
        if err:
            bad.append(Finding(rep.raw.line, f"verify: {_text(rep.raw)}: pattern {err}", "verify"))
        else:
            ok += 1
    return ok, bad


def _vars_of(rep: AccessReport) -> list[Var]:
    vs = {v for v in rep.raw.scope}
    for nf in rep.exprs:
        vs |= {a for a, _ in nf.terms if isinstance(a, Var) and not _is_axis(a)}
        for a, _ in nf.terms:
            if isinstance(a, QuasiAtom):
                vs |= {v for v in _atom_vars(a) if not _is_axis(v)}
    if rep.raw.mask is not None:
        for m in _cmps_any(rep.raw.mask):
            vs |= {v for v in m.expr.free_vars if not _is_axis(v)}
    return sorted(vs, key=lambda v: v.name)


def _cmps_any(mask: Any) -> list[CmpTileMask]:
    return list(mask.masks) if isinstance(mask, TileMaskIntersection) else [mask]


def pattern_json(rep: AccessReport) -> tuple[list[list[Any]], Any]:
    """``pattern`` and ``offset`` for ``--json``: ints, or expression strings."""
    pat = [[int(s), c if isinstance(c, int) else sym_text(c)] for s, c in rep.pattern]
    off = rep.offset if isinstance(rep.offset, int) else sym_text(rep.offset)
    return pat, off
