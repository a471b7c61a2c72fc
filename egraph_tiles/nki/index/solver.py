"""Drive the affine e-graph: load many ``AffineExpr``s, saturate once, read the results back.

The algebra lives in ``egraph_tiles.rules.arith`` (normal form) and
``egraph_tiles.rules.affine`` (substitution, bounds); this module only translates.

* :class:`AffineSolver` owns one e-graph.  ``add(*exprs)`` queues expressions, ``solve()``
  loads every queued one (egglog text through the low-level bindings -- ~5x faster than the
  high-level constructors), saturates ``arith_rules | affine_rules`` once, extracts all normal
  forms in ONE extraction of a balanced tree of roots, and reads bounds with direct lookups.
  The solver is incremental: later ``solve()`` calls reuse the same e-graph.
* :func:`solve` solves a batch in a fresh solver and memoizes every result;
  :func:`solution_of` is the per-expression convenience on top of that memo.

The memo (``expr -> Solution``) is a pure cache: expressions are immutable, their variables
carry their ranges, so a result never changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from egglog import EGraph, Expr, String, StringLike, i64, i64Like, method, rule, ruleset, set_, union, vars_

from egraph_tiles.nki.index.expr import HOOKS as expr_hooks
from egraph_tiles.nki.index.expr import AffineExpr, Var
from egraph_tiles.nki.index.normal_form import NormalForm, QuasiAtom
from egraph_tiles.rules.affine import affine_schedule, atom_hi, atom_lo, lin_hi, lin_lo, subst_binding
from egraph_tiles.rules.arith import Atom, Lin, Num, norm, var_key

__all__ = ["AffineSolver", "Solution", "clear_cache", "solution_of", "solve"]

_CHUNK_CHARS = 20_000
_CACHE_LIMIT = 500_000


@dataclass(frozen=True, slots=True)
class Solution:
    """What the e-graph proved about one expression."""

    normal_form: NormalForm | None
    lo: int | None
    hi: int | None


class _Roots(Expr, egg_sort="NkiRoots"):
    """Extraction roots: a balanced tree of per-query results."""

    @method(egg_fn="NkiQ", unextractable=True)
    @classmethod
    def query(cls, i: i64Like, n: Num) -> _Roots: ...

    @method(egg_fn="NkiLeaf", cost=50)
    @classmethod
    def leaf(cls, i: i64Like, p: Lin) -> _Roots: ...

    @method(egg_fn="NkiReport", cost=1)
    @classmethod
    def report(cls, i: i64Like, p: Lin, lo: i64Like, hi: i64Like) -> _Roots: ...

    @method(egg_fn="NkiReportLo", cost=10)
    @classmethod
    def report_lo(cls, i: i64Like, p: Lin, lo: i64Like) -> _Roots: ...

    @method(egg_fn="NkiReportHi", cost=10)
    @classmethod
    def report_hi(cls, i: i64Like, p: Lin, hi: i64Like) -> _Roots: ...

    @method(egg_fn="NkiMissing", cost=1_000_000_000)
    @classmethod
    def missing(cls, i: i64Like) -> _Roots: ...

    @method(egg_fn="NkiPair")
    @classmethod
    def pair(cls, a: _Roots, b: _Roots) -> _Roots: ...


class _Facts(Expr, egg_sort="NkiFacts"):
    """Driver facts shipped as terms (one command loads many; rules turn them into facts)."""

    @method(egg_fn="NkiBind")
    @classmethod
    def bind(cls, m: i64Like, key: i64Like, target: Num) -> _Facts: ...

    @method(egg_fn="NkiLo")
    @classmethod
    def lo(cls, name: StringLike, key: i64Like, lo: i64Like) -> _Facts: ...

    @method(egg_fn="NkiHi")
    @classmethod
    def hi(cls, name: StringLike, key: i64Like, hi: i64Like) -> _Facts: ...

    @method(egg_fn="NkiFactPair")
    @classmethod
    def pair(cls, a: _Facts, b: _Facts) -> _Facts: ...


_i, _m, _k, _v, _lo, _hi = vars_("i m k v lo hi", i64)
_n = vars_("n", Num).__next__()
_p = vars_("p", Lin).__next__()
_name = vars_("name", String).__next__()

# Loading (not algebra): queries are normalized, driver facts become e-graph facts.
_load = ruleset(
    rule(_Roots.query(_i, _n), name="load_query").then(
        union(_Roots.query(_i, _n)).with_(_Roots.leaf(_i, norm(_n)))
    ),
    rule(_Facts.bind(_m, _k, _n), name="load_binding").then(
        union(subst_binding(_m, _k)).with_(norm(_n))
    ),
    rule(_Facts.lo(_name, _k, _v), name="load_var_lo").then(
        set_(atom_lo(Atom.var(_name, _k))).to(_v)
    ),
    rule(_Facts.hi(_name, _k, _v), name="load_var_hi").then(
        set_(atom_hi(Atom.var(_name, _k))).to(_v)
    ),
    name="nki_load",
)

# Reporting, run once after saturation (the bound lattices are final then).
_report = ruleset(
    rule(_Roots.leaf(_i, _p), lin_lo(_p) == _lo, lin_hi(_p) == _hi, name="report_bounds").then(
        union(_Roots.leaf(_i, _p)).with_(_Roots.report(_i, _p, _lo, _hi))
    ),
    rule(_Roots.leaf(_i, _p), lin_lo(_p) == _lo, name="report_lo").then(
        union(_Roots.leaf(_i, _p)).with_(_Roots.report_lo(_i, _p, _lo))
    ),
    rule(_Roots.leaf(_i, _p), lin_hi(_p) == _hi, name="report_hi").then(
        union(_Roots.leaf(_i, _p)).with_(_Roots.report_hi(_i, _p, _hi))
    ),
    rule(_Roots.query(_i, _n), name="report_missing_fallback").then(
        union(_Roots.query(_i, _n)).with_(_Roots.missing(_i))
    ),
    name="nki_report",
)

_SCHEDULE = _load.saturate() + affine_schedule() + _report.saturate()


class AffineSolver:
    """One e-graph solving many affine expressions together."""

    def __init__(self) -> None:
        self._eg = EGraph()
        self._eg.register(
            _Roots.pair(_Roots.query(0, Num(0)), _Roots.missing(0)),
            _Facts.pair(_Facts.lo("_", 0, 0), _Facts.bind(0, 0, Num(0))),
        )
        self._eg.run(_SCHEDULE)
        self._raw = self._eg._state.egraph  # low-level bindings e-graph (same instance)
        self._vars: dict[str, Var] = {}
        self._maps: dict[tuple[tuple[Var, AffineExpr], ...], int] = {}
        self._bindings: set[tuple[int, str]] = set()
        self._pending: dict[AffineExpr, None] = {}
        self._results: dict[AffineExpr, Solution] = {}
        self._n_lets = 0
        self._n_leaves = 1  # leaf 0 is the warm-up term above

    # ----- public ---------------------------------------------------------------------------
    def add(self, *exprs: AffineExpr) -> None:
        """Queue expressions for the next :meth:`solve`."""
        for e in exprs:
            if e not in self._results:
                self._pending[e] = None

    def solve(self) -> dict[AffineExpr, Solution]:
        """Load every queued expression, saturate once, return their solutions.

        Loading is a handful of egglog commands whatever the batch size (each command costs
        ~0.1-0.7 ms in egglog, so one command per term would dominate).
        """
        todo = list(self._pending)
        self._pending.clear()
        if not todo:
            return {}
        facts: list[str] = []
        memo: dict[AffineExpr, str] = {}
        base = self._n_leaves
        self._n_leaves += len(todo)
        queries = [f"(NkiQ {base + k} {self._encode(e, memo, facts)})" for k, e in enumerate(todo)]
        cmds = self._tree_commands("NkiFactPair", facts) + self._tree_commands("NkiPair", queries)
        roots = [c.split(" ", 2)[1] for c in cmds[-self._n_chunks(queries):]] if queries else []
        self._run_text(cmds)
        self._eg.run(_SCHEDULE)
        solved = self._read(todo, base, roots)
        self._results.update(solved)
        return solved

    def solution(self, e: AffineExpr) -> Solution:
        """Solution of an already solved expression (solves it if it was only queued)."""
        if e not in self._results:
            self.add(e)
            self.solve()
        return self._results[e]

    # ----- loading --------------------------------------------------------------------------
    @staticmethod
    def _n_chunks(items: list[str]) -> int:
        return len(AffineSolver._chunks(items))

    @staticmethod
    def _chunks(items: list[str]) -> list[list[str]]:
        out: list[list[str]] = [[]]
        size = 0
        for it in items:
            if size > _CHUNK_CHARS:
                out.append([])
                size = 0
            out[-1].append(it)
            size += len(it)
        return [c for c in out if c]

    def _tree_commands(self, pair: str, items: list[str]) -> list[str]:
        """One ``(let $x (PAIR ...balanced tree...))`` command per chunk of ``items``."""
        cmds = []
        for chunk in self._chunks(items):
            level = chunk
            while len(level) > 1:
                nxt = [f"({pair} {level[j]} {level[j + 1]})" for j in range(0, len(level) - 1, 2)]
                if len(level) % 2:
                    nxt.append(level[-1])
                level = nxt
            self._n_lets += 1
            cmds.append(f"(let $nki{self._n_lets} {level[0]})")
        return cmds

    def _declare_var(self, v: Var, facts: list[str]) -> str:
        key = var_key(v.name)
        text = f'(Var "{v.name}" {key})'
        known = self._vars.get(v.name)
        if known is not None:
            if known != v:
                raise ValueError(
                    f"variable {v.name!r} is used with two different ranges: "
                    f"[{known.lo}, {known.hi}] and [{v.lo}, {v.hi}]"
                )
            return text
        self._vars[v.name] = v
        if v.lo is not None:
            facts.append(f'(NkiLo "{v.name}" {key} {v.lo})')
        if v.hi is not None:
            facts.append(f'(NkiHi "{v.name}" {key} {v.hi})')
        return text

    def _encode(self, e: AffineExpr, memo: dict[AffineExpr, str], facts: list[str]) -> str:
        hit = memo.get(e)
        if hit is not None:
            return hit
        op, a = e.op, e.args
        if op == "const":
            text = f"(Lit {a[0]})"
        elif op == "var":
            text = self._declare_var(a[0], facts)
        elif op == "add":
            text = f"(Add {self._encode(a[0], memo, facts)} {self._encode(a[1], memo, facts)})"
        elif op == "mul":
            text = f"(Mul {self._encode(a[0], memo, facts)} (Lit {a[1]}))"
        elif op == "floordiv":
            text = f"(FloorDiv {self._encode(a[0], memo, facts)} (Lit {a[1]}))"
        elif op == "mod":
            text = f"(Mod {self._encode(a[0], memo, facts)} (Lit {a[1]}))"
        elif op == "subst":
            text = self._encode_subst(e, memo, facts)
        else:
            raise AssertionError(f"unknown AffineExpr op {op!r}")
        memo[e] = text
        return text

    def _encode_subst(self, e: AffineExpr, memo: dict[AffineExpr, str], facts: list[str]) -> str:
        inner, items = e.args
        m = self._maps.get(items)
        if m is None:
            m = len(self._maps) + 1
            self._maps[items] = m
        mapped = dict(items)
        for v in sorted(inner.free_vars, key=lambda v: v.name):
            if (m, v.name) in self._bindings:
                continue
            self._bindings.add((m, v.name))
            target = mapped.get(v, AffineExpr.var(v))
            facts.append(f"(NkiBind {m} {var_key(v.name)} {self._encode(target, memo, facts)})")
        return f"(OfLin (subst (norm {self._encode(inner, memo, facts)}) {m}))"

    def _run_text(self, cmds: list[str]) -> None:
        for c in cmds:
            self._raw.run_program(*self._raw.parse_program(c))

    # ----- reading --------------------------------------------------------------------------
    def _read(self, todo: list[AffineExpr], base: int, roots: list[str]) -> dict[AffineExpr, Solution]:
        while len(roots) > 1:  # join the chunk roots so ONE extraction reads everything
            nxt = [f"(NkiPair {roots[j]} {roots[j + 1]})" for j in range(0, len(roots) - 1, 2)]
            if len(roots) % 2:
                nxt.append(roots[-1])
            roots = nxt
        out = self._raw.run_program(*self._raw.parse_program(f"(extract {roots[0]})"))
        termdag, root = out[0].termdag, out[0].term
        found: dict[int, Solution] = {}
        self._collect(termdag, root, found)
        return {e: found[base + k] for k, e in enumerate(todo)}

    def _collect(self, td: object, root: int, found: dict[int, Solution]) -> None:
        memo: dict[int, object] = {}
        stack = [root]

        def lit(tid: int) -> object:
            return td.get(tid).value.value

        while stack:
            node = td.get(stack.pop())
            name, args = node.name, node.args
            if name == "NkiPair":
                stack.extend(args)
            elif name == "NkiMissing":
                found[lit(args[0])] = Solution(None, None, None)
            else:
                nf = self._lin(td, args[1], memo)
                lo = hi = None
                if name == "NkiReport":
                    lo, hi = lit(args[2]), lit(args[3])
                elif name == "NkiReportLo":
                    lo = lit(args[2])
                elif name == "NkiReportHi":
                    hi = lit(args[2])
                elif name != "NkiLeaf":
                    raise AssertionError(f"unexpected extraction root {name}")
                found[lit(args[0])] = Solution(nf, lo, hi)

    def _lin(self, td: object, tid: int, memo: dict[int, object]) -> NormalForm:
        hit = memo.get(tid)
        if hit is not None:
            return hit  # type: ignore[return-value]
        terms = []
        cur = tid
        while True:
            node = td.get(cur)
            if node.name == "LinConst":
                const = td.get(node.args[0]).value.value
                break
            if node.name != "LinTerm":
                raise AssertionError(f"non-canonical normal form node {node.name}")
            coef = td.get(node.args[0]).value.value
            terms.append((self._atom(td, node.args[2], memo), coef))
            cur = node.args[3]
        nf = NormalForm.build(const, terms)
        memo[tid] = nf
        return nf

    def _atom(self, td: object, tid: int, memo: dict[int, object]) -> Var | QuasiAtom:
        node = td.get(tid)
        if node.name == "AVar":
            return self._vars[td.get(node.args[0]).value.value]
        d = td.get(node.args[1]).value.value
        operand = self._lin(td, node.args[0], memo)
        if node.name == "AFloorDiv":
            return QuasiAtom("floordiv", operand, d)
        if node.name == "AMod":
            return QuasiAtom("mod", operand, d)
        raise AssertionError(f"unexpected atom node {node.name}")


# ----- batch / memoized API -----------------------------------------------------------------
_SOLUTIONS: dict[AffineExpr, Solution] = {}


def solve(exprs: Iterable[AffineExpr], solver: AffineSolver | None = None) -> list[Solution]:
    """Solve many expressions in ONE e-graph (memoized); returns solutions in input order."""
    exprs = list(exprs)
    todo = [e for e in dict.fromkeys(exprs) if e not in _SOLUTIONS and e.op != "const"]
    if todo:
        s = solver or AffineSolver()
        s.add(*todo)
        solved = s.solve()
        if len(_SOLUTIONS) + len(solved) > _CACHE_LIMIT:
            _SOLUTIONS.clear()
        _SOLUTIONS.update(solved)
    return [_const_solution(e) if e.op == "const" else _SOLUTIONS[e] for e in exprs]


def solution_of(e: AffineExpr) -> Solution:
    """Solution of one expression: from the memo, else a one-expression e-graph."""
    if e.op == "const":
        return _const_solution(e)
    hit = _SOLUTIONS.get(e)
    if hit is not None:
        return hit
    return solve([e])[0]


def _const_solution(e: AffineExpr) -> Solution:
    v = e.args[0]
    return Solution(NormalForm(v), v, v)


def clear_cache() -> None:
    """Forget every memoized solution (for benchmarks and tests)."""
    _SOLUTIONS.clear()


expr_hooks["solution_of"] = solution_of
