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

from egglog import EGraph, Expr, i64Like, method

from egraph_tiles.nki.expr import AffineExpr, Var
from egraph_tiles.nki.normal_form import NormalForm, QuasiAtom
from egraph_tiles.rules.affine import affine_schedule
from egraph_tiles.rules.arith import Lin, var_key

__all__ = ["AffineSolver", "Solution", "clear_cache", "solution_of", "solve"]

_CHUNK_CHARS = 40_000
_CACHE_LIMIT = 500_000


@dataclass(frozen=True, slots=True)
class Solution:
    """What the e-graph proved about one expression."""

    normal_form: NormalForm | None
    lo: int | None
    hi: int | None


class _Roots(Expr, egg_sort="NkiRoots"):
    """Extraction roots: a balanced tree of (query index, normal form) leaves."""

    @method(egg_fn="NkiLeaf")
    @classmethod
    def leaf(cls, i: i64Like, p: Lin) -> _Roots: ...

    @method(egg_fn="NkiMissing", cost=1_000_000_000)
    @classmethod
    def missing(cls, i: i64Like) -> _Roots: ...

    @method(egg_fn="NkiPair")
    @classmethod
    def pair(cls, a: _Roots, b: _Roots) -> _Roots: ...


_SCHEDULE = affine_schedule()


class AffineSolver:
    """One e-graph solving many affine expressions together."""

    def __init__(self) -> None:
        self._eg = EGraph()
        self._eg.register(_Roots.pair(_Roots.leaf(0, Lin(0)), _Roots.missing(0)))
        self._eg.run(_SCHEDULE)
        self._raw = self._eg._state.egraph  # low-level bindings e-graph (same instance)
        self._vars: dict[str, Var] = {}
        self._maps: dict[tuple[tuple[Var, AffineExpr], ...], int] = {}
        self._bindings: set[tuple[int, str]] = set()
        self._pending: dict[AffineExpr, None] = {}
        self._results: dict[AffineExpr, Solution] = {}
        self._n_lets = 0
        self._n_leaves = 0

    # ----- public ---------------------------------------------------------------------------
    def add(self, *exprs: AffineExpr) -> None:
        """Queue expressions for the next :meth:`solve`."""
        for e in exprs:
            if e not in self._results:
                self._pending[e] = None

    def solve(self) -> dict[AffineExpr, Solution]:
        """Load every queued expression, saturate once, return their solutions."""
        todo = list(self._pending)
        self._pending.clear()
        if not todo:
            return {}
        cmds: list[str] = []
        memo: dict[AffineExpr, str] = {}
        names = []
        for e in todo:
            text = self._encode(e, memo, cmds)
            name = self._let(f"(norm {text})", cmds)
            names.append(name)
        self._run_text(cmds)
        self._eg.run(_SCHEDULE)
        solved = self._read(todo, names)
        self._results.update(solved)
        return solved

    def solution(self, e: AffineExpr) -> Solution:
        """Solution of an already solved expression (solves it if it was only queued)."""
        if e not in self._results:
            self.add(e)
            self.solve()
        return self._results[e]

    # ----- loading --------------------------------------------------------------------------
    def _let(self, text: str, cmds: list[str]) -> str:
        self._n_lets += 1
        name = f"$nki{self._n_lets}"
        cmds.append(f"(let {name} {text})")
        return name

    def _declare_var(self, v: Var, cmds: list[str]) -> str:
        text = f'(NumVar "{v.name}" {var_key(v.name)})'
        known = self._vars.get(v.name)
        if known is not None:
            if known != v:
                raise ValueError(
                    f"variable {v.name!r} is used with two different ranges: "
                    f"[{known.lo}, {known.hi}] and [{v.lo}, {v.hi}]"
                )
            return text
        self._vars[v.name] = v
        atom = f'(AVar "{v.name}" {var_key(v.name)})'
        if v.lo is not None:
            cmds.append(f"(set (atom_lo {atom}) {v.lo})")
        if v.hi is not None:
            cmds.append(f"(set (atom_hi {atom}) {v.hi})")
        return text

    def _encode(self, e: AffineExpr, memo: dict[AffineExpr, str], cmds: list[str]) -> str:
        hit = memo.get(e)
        if hit is not None:
            return hit
        op, a = e.op, e.args
        if op == "const":
            text = f"(NumLit {a[0]})"
        elif op == "var":
            text = self._declare_var(a[0], cmds)
        elif op == "add":
            text = f"(NumAdd {self._encode(a[0], memo, cmds)} {self._encode(a[1], memo, cmds)})"
        elif op == "mul":
            text = f"(NumMul {self._encode(a[0], memo, cmds)} (NumLit {a[1]}))"
        elif op == "floordiv":
            text = f"(NumFloorDiv {self._encode(a[0], memo, cmds)} (NumLit {a[1]}))"
        elif op == "mod":
            text = f"(NumMod {self._encode(a[0], memo, cmds)} (NumLit {a[1]}))"
        elif op == "subst":
            text = self._encode_subst(e, memo, cmds)
        else:
            raise AssertionError(f"unknown AffineExpr op {op!r}")
        if len(text) > 200:  # share big subterms through a let instead of repeating the text
            text = self._let(text, cmds)
        memo[e] = text
        return text

    def _encode_subst(self, e: AffineExpr, memo: dict[AffineExpr, str], cmds: list[str]) -> str:
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
            ttext = self._encode(target, memo, cmds)
            cmds.append(f"(union (subst_binding {m} {var_key(v.name)}) (norm {ttext}))")
        return f"(NumOfLin (subst (norm {self._encode(inner, memo, cmds)}) {m}))"

    def _run_text(self, cmds: list[str]) -> None:
        chunk: list[str] = []
        size = 0
        for c in cmds:
            chunk.append(c)
            size += len(c)
            if size > _CHUNK_CHARS:
                self._raw.run_program(*self._raw.parse_program("\n".join(chunk)))
                chunk, size = [], 0
        if chunk:
            self._raw.run_program(*self._raw.parse_program("\n".join(chunk)))

    # ----- reading --------------------------------------------------------------------------
    def _read(self, todo: list[AffineExpr], names: list[str]) -> dict[AffineExpr, Solution]:
        cmds: list[str] = []
        leaves = []
        base = self._n_leaves  # leaf ids are unique across solves: NkiMissing(i) must not merge
        self._n_leaves += len(names)  # the leaves of two batches
        for i, name in enumerate(names):
            leaf = self._let(f"(NkiLeaf {base + i} {name})", cmds)
            cmds.append(f"(union {leaf} (NkiMissing {base + i}))")
            leaves.append(leaf)
        while len(leaves) > 1:
            nxt = []
            for j in range(0, len(leaves) - 1, 2):
                nxt.append(self._let(f"(NkiPair {leaves[j]} {leaves[j + 1]})", cmds))
            if len(leaves) % 2:
                nxt.append(leaves[-1])
            leaves = nxt
        self._run_text(cmds)
        out = self._raw.run_program(*self._raw.parse_program(f"(extract {leaves[0]})"))
        termdag, root = out[0].termdag, out[0].term
        forms: dict[int, NormalForm | None] = {}
        self._collect(termdag, root, forms)
        result: dict[AffineExpr, Solution] = {}
        for i, (e, name) in enumerate(zip(todo, names, strict=True), start=base):
            value = self._raw.lookup_function(name, [])
            lo = self._raw.lookup_function("lin_lo", [value])
            hi = self._raw.lookup_function("lin_hi", [value])
            result[e] = Solution(
                forms[i],
                None if lo is None else self._raw.value_to_i64(lo),
                None if hi is None else self._raw.value_to_i64(hi),
            )
        return result

    def _collect(self, td: object, root: int, forms: dict[int, NormalForm | None]) -> None:
        memo: dict[int, object] = {}
        stack = [root]
        while stack:
            node = td.get(stack.pop())
            if node.name == "NkiPair":
                stack.extend(node.args)
            elif node.name == "NkiLeaf":
                forms[td.get(node.args[0]).value.value] = self._lin(td, node.args[1], memo)
            elif node.name == "NkiMissing":
                forms[td.get(node.args[0]).value.value] = None
            else:
                raise AssertionError(f"unexpected extraction root {node.name}")

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
