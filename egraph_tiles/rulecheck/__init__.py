"""Symbolic soundness checks of the rewrite rules in ``egraph_tiles.rules``.

Every rules module is read programmatically: egglog text (a module's ``RULES`` / ``SCHEMA`` / ``RELAYOUT``
strings) is parsed directly; Python ``egglog`` rulesets are rendered to egglog text through
``EGraph(save_egglog_string=True)``.  Each ``rule`` / ``rewrite`` then becomes a z3 claim

    query facts  ∧  domain axioms   ⟹   every action's meaning

under the interpretation in :data:`INTERP` (what each constructor *denotes*) and
:data:`FACTS` (what each lattice function / relation *claims*).  ``union a b`` claims equal
denotations (for a ``Use`` of a window: that the realization is legal on the hardware
model); ``set (F args) v`` claims ``F``'s fact.  A rule whose symbols have no
interpretation is reported ``uncovered`` — those are judged by the end-to-end property
``hardware(optimize(p)) == ideal(p)`` instead.  Integer arithmetic is mathematical (egglog
i64 overflow raises, it never wraps); ``/`` and ``%`` on i64 truncate like Rust.

Run ``python -m egraph_tiles.rulecheck`` (``--table`` prints the markdown table).
"""

from .collect import RuleSpec, Signatures, collect
from .denote import BOOKKEEPING, CMPS, FACTS, INTERP, NUM, NZ_BOUND, POW2, PRIMS, Real, S, Tile, addr, divides, floordiv, floormod, legal, lowbit, nz_addr, nz_lands, pow2, tdiv
from .check import BITVECTOR_MODULES, BUDGET, COMPLETENESS, Checker, DEFINITIONS, UNCOVERED_BY, Uncovered, Verdict, check_all, clients, main, table, window_completeness

__all__ = [
    "BITVECTOR_MODULES",
    "BOOKKEEPING",
    "BUDGET",
    "CMPS",
    "COMPLETENESS",
    "Checker",
    "DEFINITIONS",
    "FACTS",
    "INTERP",
    "NUM",
    "NZ_BOUND",
    "POW2",
    "PRIMS",
    "Real",
    "RuleSpec",
    "S",
    "Signatures",
    "Tile",
    "UNCOVERED_BY",
    "Uncovered",
    "Verdict",
    "addr",
    "check_all",
    "clients",
    "collect",
    "divides",
    "floordiv",
    "floormod",
    "legal",
    "lowbit",
    "main",
    "nz_addr",
    "nz_lands",
    "pow2",
    "table",
    "tdiv",
    "window_completeness",
]
