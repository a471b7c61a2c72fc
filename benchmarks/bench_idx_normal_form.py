"""What a tile offset costs under each normalization of the shared ``Idx`` sort.

    python benchmarks/bench_idx_normal_form.py [--terms 1000 10000] [--repeat 3]

The same affine offsets — ``(s*16 + c) - c`` and ``s*8 + t*4 + c`` over symbols ``s``, ``t``, the
shapes the tile pass folds — are normalized twice, each best of ``--repeat`` (CPU time):

* **offsets + multiples**: what the tile pass and the Acc-window check run — the rows bulk-loaded
  through the ``rules.sorts`` index tables (egglog ``input``), then ``rules.offsets`` and
  ``rules.multiples`` saturated;
* **NKI normal form**: what the NKI layer runs — the ``Lin`` normal form of ``rules.arith`` with
  the bounds and substitution of ``rules.affine``, driven by ``nki.index.solver.AffineSolver``.

It backs the design note "One integer sort, rulesets per client" in docs/design.md: the normal form
is the costlier per term.  Timings are reported, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from egglog import bindings as eb  # noqa: E402

from egraph_tiles.egraph.schedule import load_tables  # noqa: E402
from egraph_tiles.nki.index.expr import AffineExpr, scalar_var  # noqa: E402
from egraph_tiles.nki.index.solver import AffineSolver  # noqa: E402
from egraph_tiles.rules import multiples, offsets, sorts  # noqa: E402

PROGRAM = "\n".join([sorts.IDX_SCHEMA, offsets.RULES, multiples.RULES, sorts.TILE_IDX_LOAD])


def shapes(n: int) -> list[tuple[str, int, int]]:
    """``n`` offsets: (shape, symbol number, constant)."""
    return [("collect" if k % 2 else "sum", k // 2, 8 * (k % 16) + 8) for k in range(n)]


def tile_rows(terms: list[tuple[str, int, int]]) -> dict[str, list[tuple]]:
    rows: dict[str, list[tuple]] = {"IdxLitRow": [], "IdxSymRow": [], "IdxAddRow": [],
                                    "IdxSubRow": [], "IdxMulRow": []}
    n = 0

    def node(table: str, *args: object) -> int:
        nonlocal n
        n += 1
        rows[table].append((n, *args))
        return n

    for shape, s, c in terms:
        sym = node("IdxSymRow", f"s{s}")
        if shape == "collect":
            scaled = node("IdxMulRow", sym, node("IdxLitRow", 16))
            node("IdxSubRow", node("IdxAddRow", scaled, node("IdxLitRow", c)), node("IdxLitRow", c))
        else:
            t = node("IdxSymRow", f"t{s}")
            a = node("IdxAddRow", node("IdxMulRow", sym, node("IdxLitRow", 8)),
                     node("IdxMulRow", t, node("IdxLitRow", 4)))
            node("IdxAddRow", a, node("IdxLitRow", c))
    return rows


def nki_exprs(terms: list[tuple[str, int, int]]) -> list[AffineExpr]:
    out = []
    for shape, s, c in terms:
        sv = AffineExpr.var(scalar_var(f"s{s}"))
        if shape == "collect":
            out.append((sv * 16 + c) - c)
        else:
            out.append(sv * 8 + AffineExpr.var(scalar_var(f"t{s}")) * 4 + c)
    return out


def time_tile(terms) -> float:
    rows = tile_rows(terms)
    gc.collect()
    c = time.process_time()
    eg = eb.EGraph()
    eg.run_program(*eg.parse_program(PROGRAM))
    load_tables(eg, rows)
    eg.run_program(*eg.parse_program("(run-schedule (saturate (run offsets) (run multiples)))"))
    return time.process_time() - c


def time_nki(terms) -> float:
    exprs = nki_exprs(terms)
    gc.collect()
    c = time.process_time()
    s = AffineSolver()
    s.add(*exprs)
    s.solve()
    return time.process_time() - c


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--terms", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print("| offsets | offsets + multiples: CPU s | NKI normal form: CPU s | ratio |")
    print("|---:|---:|---:|---:|")
    for n in args.terms:
        terms = shapes(n)
        tile = min(time_tile(terms) for _ in range(args.repeat))
        nki = min(time_nki(terms) for _ in range(args.repeat))
        print(f"| {n:,} | {tile:.3f} | {nki:.3f} | {nki / tile:.1f}× |")


if __name__ == "__main__":
    main()
