"""The rule checker, step 1: every ``rule`` / ``rewrite`` of ``egraph_tiles.rules`` read as a :class:`RuleSpec`,
with the sorts and signatures it uses."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from dataclasses import dataclass, field
from typing import Any

from egglog import EGraph, Ruleset

from ..egraph.sexp import Q, Sexp, parse_sexps, show


@dataclass
class RuleSpec:
    module: str
    name: str
    query: list[Sexp]
    actions: list[Sexp]
    text: str


@dataclass
class Signatures:
    args: dict[str, list[str]] = field(default_factory=dict)
    out: dict[str, str] = field(default_factory=dict)

    def add_decls(self, forms: list[Sexp]) -> None:
        for f in forms:
            if not isinstance(f, list) or not f:
                continue
            head = f[0]
            if head == "datatype":
                sort = f[1]
                for ctor in f[2:]:
                    if isinstance(ctor, list):
                        self.args[ctor[0]] = [a for a in ctor[1:] if isinstance(a, str)
                                              and not a.startswith(":")]
                        self.out[ctor[0]] = sort
            elif head in ("constructor", "function"):
                self.args[f[1]] = list(f[2])
                self.out[f[1]] = f[3]
            elif head == "relation":
                self.args[f[1]] = list(f[2])
                self.out[f[1]] = "Unit"


def _kw(form: list, key: str) -> Any:
    for i, x in enumerate(form):
        if x == key and i + 1 < len(form):
            return form[i + 1]
    return None


def _rules_of(module: str, forms: list[Sexp]) -> list[RuleSpec]:
    out: list[RuleSpec] = []
    for f in forms:
        if not isinstance(f, list) or not f or f[0] not in ("rule", "rewrite", "birewrite"):
            continue
        name = _kw(f, ":name")
        name = name.s if isinstance(name, Q) else show(f)[:60]
        if f[0] == "rule":
            out.append(RuleSpec(module, name, list(f[1]), list(f[2]), show(f)))
        else:
            when = _kw(f, ":when") or []
            lhs, rhs = f[1], f[2]
            out.append(RuleSpec(module, name, [["=", "__lhs", lhs], *when],
                                [["union", "__lhs", rhs]], show(f)))
            if f[0] == "birewrite":
                out.append(RuleSpec(module, name + " (reverse)", [["=", "__lhs", rhs], *when],
                                    [["union", "__lhs", lhs]], show(f)))
    return out


def _egglog_text_of_ruleset(rs: Any) -> str:
    eg = EGraph(save_egglog_string=True)
    eg.run(rs)
    return eg.as_egglog_string


def _imported_names(mod: object) -> set[str]:
    """Names a module binds by ``import`` / ``from ... import`` (read from its source)."""
    tree = ast.parse(inspect.getsource(mod))  # type: ignore[arg-type]
    return {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}


def collect(package: str = "egraph_tiles.rules") -> tuple[list[RuleSpec], Signatures]:
    """Every rule of every module of ``package``, and the signatures declared there."""
    pkg = importlib.import_module(package)
    sigs = Signatures()
    rules: list[RuleSpec] = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"{package}.{info.name}")
        texts = [v for k, v in vars(mod).items() if isinstance(v, str) and k.isupper()
                 and "(" in v and k in ("RULES", "SCHEMA", "RELAYOUT")]
        imported = _imported_names(mod)
        for name, v in vars(mod).items():
            # a ruleset is attributed to the module that defines it, not to its importers
            if isinstance(v, Ruleset) and not name.startswith("_") and name not in imported:
                texts.append(_egglog_text_of_ruleset(v))
        for t in texts:
            forms = parse_sexps(t)
            sigs.add_decls(forms)
            rules.extend(_rules_of(info.name, forms))
    seen: set[tuple[str, str]] = set()
    uniq = []
    for r in rules:
        if (r.module, r.name) not in seen:
            seen.add((r.module, r.name))
            uniq.append(r)
    return uniq, sigs
