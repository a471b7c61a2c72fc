"""The rule checker, step 3: each rule as a z3 claim (query facts and domain axioms imply every
action's meaning), verdicts, the coverage table and the command line."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from dataclasses import dataclass
from typing import Any, Callable

import z3
from egglog import Ruleset

from ..egraph.schedule import program_text
from ..egraph.sexp import Q, Sexp, show
from ..nki.index.solver import _SCHEDULE
from ..rules.windows import PROGRAM
from .collect import RuleSpec, Signatures, _imported_names, collect
from .denote import (BOOKKEEPING, CMPS, FACTS, INTERP, NUM, PRIMS, Real, Tile, _acc_cols, _acc_rows,
                     _domain, _probe_fact, _probe_row, legal, lowbit, nz_lands)


#: functions defined by structural recursion on the normal form (not by its value): their
#: defining rules are not value identities; the rules *using* them are checked against the
#: specification P = d * lin_quot(P, d) + lin_rem(P, d)
DEFINITIONS = {"lin_quot", "lin_rem"}

#: modules whose claims are modular (alignment, known multiples): checked over 64-bit vectors
BITVECTOR_MODULES = {"multiples", "layout", "legality", "slices", "windows", "checks"}

#: z3's work budget per claim, in its deterministic resource units (``rlimit``), not seconds:
#: a verdict never depends on how loaded the machine is.  The hardest claim proved today (the
#: NZ contiguity of full-row windows) takes about 13 M; ``window-address-multiple`` needs about
#: 180 M and ``aligned-vec-view`` more than 300 M, so both stay "uncovered" and are judged by
#: the end-to-end property instead.
BUDGET = 40_000_000


def _unknown(s: z3.Solver) -> str:
    why = s.reason_unknown()
    return "z3: work budget exhausted" if why in ("canceled", "max. resource limit exceeded") \
        else f"z3: {why}"


class Uncovered(Exception):
    """A symbol without an interpretation."""


@dataclass
class Verdict:
    module: str
    rule: str
    status: str  # "proved" | "counterexample" | "uncovered"
    detail: str = ""


class Checker:
    def __init__(self, sigs: Signatures, interp: dict | None = None, facts: dict | None = None):
        self.sigs = sigs
        self.interp = INTERP if interp is None else interp
        self.facts = FACTS if facts is None else facts

    # -- per rule state
    def _reset(self) -> None:
        self.env: dict[str, Any] = {}
        self.sorts: dict[str, str] = {}
        self.axioms: list[z3.BoolRef] = []
        self.roots: list[z3.ExprRef] = []
        self.fresh_n = 0
        self.cache: dict[str, Any] = {}
        self.obligations: list[z3.BoolRef] = []
        self.in_action = False

    def _fresh(self, sort: str, hint: str) -> Any:
        self.fresh_n += 1
        n = f"{hint}!{self.fresh_n}"
        if sort == "String":
            return z3.String(n)
        if sort == "Tile":
            root = z3.String(n + ".root")
            self.roots.append(root)
            return Tile(root, NUM.var(n + ".r"), NUM.var(n + ".c"), NUM.var(n + ".rows"),
                        NUM.var(n + ".cols"), None, False)
        if sort in ("Real", "Roots", "Unit"):
            raise Uncovered(f"a free variable of sort {sort}")
        return NUM.var(n)

    # -- helpers used by INTERP / FACTS
    def positive(self, d: z3.ArithRef, value: z3.ArithRef) -> z3.ArithRef:
        """Quasi-affine terms are only ever built with a divisor d > 0: matched terms may
        assume it, and a rule that builds one must prove it."""
        (self.obligations if self.in_action else self.axioms).append(d > 0)
        return value

    def remainder(self, a: list, s: list[Sexp], fn: Callable) -> z3.ArithRef:
        self.positive(a[1], a[1])
        # rem_floordiv / rem_mod are only ever built on R = lin_rem(P, d): a constant R lies in
        # [0, d) (the remainder's invariant); a general R is taken as it is
        if isinstance(s[0], list) and s[0] and s[0][0] == "LinConst":
            self.axioms.append(z3.And(a[0] >= 0, a[0] < a[1]))
        return fn(a[0], a[1])

    def quot_rem(self, a: list, s: list[Sexp]) -> tuple[z3.ArithRef, z3.ArithRef]:
        key = show(s[0]) + "/" + show(s[1])
        if key not in self.cache:
            q, r = NUM.var(f"quot[{key}]"), NUM.var(f"rem[{key}]")
            self.axioms.extend([a[0] == a[1] * q + r, a[1] > 0])
            if isinstance(s[0], list) and s[0] and s[0][0] == "LinConst":
                self.axioms.append(z3.And(r >= 0, r < a[1]))
            self.cache[key] = (q, r)
        return self.cache[key]

    def loop_var(self, a: list) -> z3.BoolRef:
        k = NUM.var(f"trip!{self.fresh_n}")
        self.fresh_n += 1
        return z3.And(k >= 0, a[0] == a[1] + k * a[2])

    # -- sort inference of pattern variables
    def _infer(self, forms: list[Sexp]) -> None:
        changed = True

        def visit(x: Sexp, want: str | None) -> str | None:
            nonlocal changed
            if isinstance(x, str):
                if x in self.sorts:
                    return self.sorts[x]
                if want is not None and not x.startswith(":"):
                    self.sorts[x] = want
                    changed = True
                return want
            if isinstance(x, int):
                return "i64"
            if isinstance(x, Q):
                return "String"
            if not isinstance(x, list) or not x:
                return None
            head = x[0]
            if head in ("=", "!=", "union") and len(x) == 3:
                a = visit(x[1], None)
                b = visit(x[2], a)
                if a is None and b is not None:
                    visit(x[1], b)
                return None
            if head == "set" and len(x) == 3:
                visit(x[1], None)
                out = self.sigs.out.get(x[1][0]) if isinstance(x[1], list) else None
                visit(x[2], out)
                return None
            if head == "let":
                s = visit(x[2], None)
                visit(x[1], s)
                return s
            if head in self.sigs.args:
                for arg, srt in zip(x[1:], self.sigs.args[head]):
                    visit(arg, srt)
                return self.sigs.out.get(head)
            for arg in x[1:]:
                visit(arg, "i64")
            return "i64" if head in PRIMS else None

        while changed:
            changed = False
            for f in forms:
                visit(f, None)

    # -- translation
    def term(self, x: Sexp) -> Any:
        if isinstance(x, int):
            return NUM.val(x)
        if isinstance(x, Q):
            return z3.StringVal(x.s)
        if isinstance(x, str):
            if x not in self.env:
                self.env[x] = self._fresh(self.sorts.get(x, "i64"), x)
            return self.env[x]
        head, args = x[0], x[1:]
        if head == "&" and len(args) == 2 and args[1] == ["-", 0, args[0]]:
            v, definition = lowbit(self.term(args[0]), NUM.var(f"lowbit!{self.fresh_n}"))
            self.fresh_n += 1
            self.axioms.append(definition)
            return v
        if head in PRIMS:
            return PRIMS[head](*(self.term(a) for a in args))
        if head in self.interp:
            return self.interp[head](self, [self.term(a) for a in args], args)
        if head in self.facts or head in BOOKKEEPING:
            v = NUM.var(f"{head}!{self.fresh_n}")
            self.fresh_n += 1
            if head in self.facts:
                self.axioms.append(self.facts[head](self, [self.term(a) for a in args], v))
            return v
        raise Uncovered(f"no interpretation of {head!r}")

    def equal(self, a: Any, b: Any, ctx: list) -> z3.BoolRef:
        if isinstance(a, Tile) and isinstance(b, Tile):
            return z3.And(a.root == b.root, a.r == b.r, a.c == b.c, a.rows == b.rows,
                          a.cols == b.cols)
        if isinstance(a, Real) and isinstance(b, Real):
            if a.kind == "use" and b.kind == "use":
                return self.equal(a.tile, b.tile, ctx)
            if b.kind == "use":
                a, b = b, a
            if a.kind == "use":
                return legal(a.extra[0], b, a.tile)
            if a.kind == b.kind == "ext":
                return z3.And(a.tile.root == b.tile.root, a.tile.r + a.extra[0] == b.tile.r + b.extra[0],
                              a.tile.c + a.extra[1] == b.tile.c + b.extra[1])
            return self.equal(a.tile, b.tile, ctx) if a.kind == b.kind else z3.BoolVal(False)
        if isinstance(a, (Tile, Real)) or isinstance(b, (Tile, Real)):
            return z3.BoolVal(False)
        return a == b

    @staticmethod
    def _vars(x: Sexp) -> set[str]:
        if isinstance(x, str):
            return {x}
        if isinstance(x, list):
            return set().union(*(Checker._vars(y) for y in x[1:])) if len(x) > 1 else set()
        return set()

    def _order(self, query: list[Sexp]) -> list[Sexp]:
        """Definitions ``(= v (Ctor ...))`` before the atoms that use ``v``, so a variable
        is bound to its constructor term (and its syntactic facts) rather than a fresh value."""
        defs = {a[1]: a for a in query if isinstance(a, list) and len(a) == 3 and a[0] == "="
                and isinstance(a[1], str) and isinstance(a[2], list)}
        pending, out, bound = list(query), [], set()
        while pending:
            for a in pending:
                own = {a[1]} if any(a is d for d in defs.values()) else set()
                need = (self._vars(a) - own) & (set(defs) - bound)
                if not need:
                    break
            else:
                a = pending[0]
            pending.remove(a)
            out.append(a)
            if any(a is d for d in defs.values()):
                bound.add(a[1])
        return out

    def query(self, atom: Sexp) -> list[z3.BoolRef]:
        if isinstance(atom, list) and atom and atom[0] in ("=", "!=") and len(atom) == 3:
            lhs, rhs = atom[1], atom[2]
            if atom[0] == "=" and isinstance(lhs, str) and lhs not in self.env:
                self.env[lhs] = self.term(rhs)
                return []
            if atom[0] == "=" and isinstance(rhs, str) and rhs not in self.env:
                self.env[rhs] = self.term(lhs)
                return []
            eq = self.equal(self.term(lhs), self.term(rhs), [])
            return [eq if atom[0] == "=" else z3.Not(eq)]
        if isinstance(atom, list) and atom and atom[0] in CMPS:
            return [CMPS[atom[0]](self.term(atom[1]), self.term(atom[2]))]
        if isinstance(atom, list) and atom and atom[0] in self.facts and \
                self.sigs.out.get(atom[0]) == "Unit":
            return [self.facts[atom[0]](self, [self.term(a) for a in atom[1:]], None)]
        self.term(atom)  # a term that must exist: binds its variables
        return []

    def action(self, act: Sexp) -> list[z3.BoolRef]:
        head = act[0]
        if head == "union":
            return [self.equal(self.term(act[1]), self.term(act[2]), [])]
        if head == "set":
            f = act[1]
            if f[0] in BOOKKEEPING:
                return []
            if f[0] not in self.facts:
                raise Uncovered(f"no fact meaning for {f[0]!r}")
            return [self.facts[f[0]](self, [self.term(a) for a in f[1:]], self.term(act[2]))]
        if head == "let":
            self.env[act[1]] = self.term(act[2])
            return []
        if head in self.facts and self.sigs.out.get(head) == "Unit":
            return [self.facts[head](self, [self.term(a) for a in act[1:]], None)]
        if head == "subsume":  # hides a term from matching / extraction; claims nothing
            return []
        if head in ("delete", "panic", "extract"):
            raise Uncovered(f"action {head}")
        self.term(act)  # creating a term claims nothing
        return []

    def check(self, r: RuleSpec, rlimit: int = BUDGET) -> Verdict:
        NUM.bv = r.module in BITVECTOR_MODULES
        self._reset()
        heads = {a[1][0] if a[0] != "=" else None for a in r.actions
                 if isinstance(a, list) and a[0] == "union" and isinstance(a[1], list)}
        heads |= {q[0] for q in r.query[:1] if isinstance(q, list)}
        if heads & DEFINITIONS:
            return Verdict(r.module, r.name, "uncovered",
                           "structural definition of the coefficient-wise quotient/remainder")
        try:
            self._infer(r.query + r.actions)
            premises: list[z3.BoolRef] = []
            for atom in self._order(r.query):
                premises += self.query(atom)
            claims: list[z3.BoolRef] = []
            self.in_action = True
            for act in r.actions:
                claims += self.action(act)
            claims += self.obligations
        except Uncovered as e:
            return Verdict(r.module, r.name, "uncovered", str(e))
        if not claims:
            return Verdict(r.module, r.name, "proved", "no semantic claim (creates terms only)")
        s = z3.Solver()
        s.set("rlimit", rlimit)
        s.add(*premises, *self.axioms)
        for root in self.roots:
            s.add(*_domain(root))
        s.add(z3.Not(z3.And(*claims)))
        res = s.check()
        if res == z3.unsat:
            return Verdict(r.module, r.name, "proved")
        if res == z3.sat:
            m = s.model()
            shown = {k: m.eval(v.r if isinstance(v, Tile) else v, model_completion=True)
                     for k, v in self.env.items() if not isinstance(v, Real)}
            return Verdict(r.module, r.name, "counterexample",
                           ", ".join(f"{k}={v}" for k, v in shown.items() if k != "__lhs"))
        return Verdict(r.module, r.name, "uncovered", _unknown(s))


COMPLETENESS = "w_noncontig complete (a window no rule rejects is contiguous)"


def window_completeness(rules: list[RuleSpec], sigs: Signatures,
                        rlimit: int = BUDGET) -> Verdict:
    """The other half of "the rules say contiguous ⇔ the compact NZ write of the window lands on
    the window's own elements" (each rule deriving ``w_noncontig`` is checked on its own for ⇒):
    a probed window that *no* such rule rejects has every element land where the parent keeps
    it — the direction that matters for soundness (a missed rejection is a silent miscompute)."""
    NUM.bv = True
    deriving = [r for r in rules if r.module == "windows" and any(
        isinstance(a, list) and a and a[0] == "w_noncontig" for a in r.actions)]
    shared = [NUM.var(n) for n in ("p", "rows", "cols", "c")]
    s = z3.Solver()
    s.set("rlimit", rlimit)
    ck = Checker(sigs)
    try:
        for r in deriving:
            ck._reset()
            ck._infer(r.query + r.actions)
            probe = next(q for q in r.query if isinstance(q, list) and q and q[0] == "w_probe")
            ck.env.update(zip(probe[1:], shared))
            premises: list[z3.BoolRef] = []
            for atom in ck._order(r.query):
                premises += ck.query(atom)
            # the rule's own variables (e.g. the parent's row count) are existential in its query
            own = [v for name, v in ck.env.items() if name not in probe[1:] and z3.is_const(v)]
            fires = z3.And(*premises, *ck.axioms)
            s.add(z3.ForAll(own, z3.Not(fires)) if own else z3.Not(fires))
    except Uncovered as e:
        return Verdict("windows", COMPLETENESS, "uncovered", str(e))
    i, j = NUM.var("i"), NUM.var("j")
    s.add(_probe_fact(None, shared, None), i >= 0, i < shared[1], j >= 0, j < shared[2],
          z3.Not(nz_lands(*shared, i, j)))
    res = s.check()
    rules_text = ", ".join(r.name for r in deriving)
    if res == z3.unsat:
        return Verdict("windows", COMPLETENESS, "proved", f"NZ address function, z3 ({rules_text})")
    if res == z3.sat:
        m = s.model()
        p = shared[0]
        shown = {"parent rows": _acc_rows(p), "parent cols": _acc_cols(p), "rows": shared[1],
                 "cols": shared[2], "col": shared[3], "row": _probe_row(*shared)}
        return Verdict("windows", COMPLETENESS, "counterexample", ", ".join(
            f"{k}={m.eval(v, model_completion=True)}" for k, v in shown.items()))
    return Verdict("windows", COMPLETENESS, "uncovered", _unknown(s))


def check_all(package: str = "egraph_tiles.rules") -> list[Verdict]:
    rules, sigs = collect(package)
    ck = Checker(sigs)
    out = [ck.check(r) for r in rules]
    if any(r.module == "windows" for r in rules):
        out.append(window_completeness(rules, sigs))
    return out


#: what judges a rule that has no symbolic interpretation, by module: the NKI affine rules
#: never run inside `optimize`, so their judge is the sympy / numpy property tests of tests/nki
UNCOVERED_BY = {
    "arith": "property tests vs sympy / exhaustive numpy (`tests/nki/test_nki_rules_symbolic.py`)",
    "affine": "property tests vs sympy / exhaustive numpy (`tests/nki/test_nki_rules_symbolic.py`)",
    "": "end-to-end property `hardware(optimize(p)) == ideal(p)`",
}


def clients(package: str = "egraph_tiles.rules") -> dict[str, str]:
    """Which clients run each module's rules, read from the programs they compose (the tile
    pass's, the Acc-window check's, the NKI solver's schedule): a rule that serves several
    clients is still checked once, with the one meaning of its sorts."""
    texts = {"tile pass": program_text(), "Acc windows": PROGRAM}
    nki = str(_SCHEDULE)
    out: dict[str, str] = {}
    pkg = importlib.import_module(package)
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"{package}.{info.name}")
        rules = getattr(mod, "RULES", None)
        names = [c for c, t in texts.items() if isinstance(rules, str) and rules in t]
        if any(isinstance(v, Ruleset) and f"{k}" in nki for k, v in vars(mod).items()
               if k not in _imported_names(mod)):
            names.append("NKI layer")
        out[info.name] = ", ".join(names)
    return out


def table(verdicts: list[Verdict]) -> str:
    how = {"proved": "z3 proof (symbolic)", "counterexample": "**z3 counterexample**"}
    used = clients()
    lines = ["| module | rule | serves | verified by | note |", "|---|---|---|---|---|"]
    for v in verdicts:
        by = how.get(v.status) or UNCOVERED_BY.get(v.module, UNCOVERED_BY[""])
        lines.append(f"| {v.module} | {v.rule} | {used.get(v.module, '')} | {by} | {v.detail} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    vs = check_all()
    if "--table" in argv:
        print(table(vs))
    else:
        for v in vs:
            print(f"{v.status:15} {v.module}.{v.rule}  {v.detail}")
    counts = {s: sum(v.status == s for v in vs) for s in ("proved", "counterexample", "uncovered")}
    print(f"\n{len(vs)} rules: " + ", ".join(f"{n} {s}" for s, n in counts.items()), file=sys.stderr)
    return 1 if counts["counterexample"] else 0
