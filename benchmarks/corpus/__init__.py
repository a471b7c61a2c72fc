"""A deterministic corpus of realistic tile kernels in the DSL.

``generate(family, statements, seed)`` returns DSL text for one InCore kernel of about
``statements`` IR statements (at least one block; sizes 10 … 10,000), built only from a
``random.Random(seed)`` — the same arguments always give the same text. ``family`` is a
name from :data:`FAMILIES` or ``"mixed"`` (blocks drawn from every family but the loop-heavy
ones, :data:`LOOP_FAMILIES`, measured on their own by ``benchmarks/bench_loops.py``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .builder import KernelBuilder
from .families import FAMILIES, LOOP_FAMILIES, PARAMS, SCALAR_ARGS, Family

MIXED = "mixed"
SIZES = (10, 30, 100, 300, 1000, 3000, 10000)


@dataclass(frozen=True)
class Kernel:
    name: str
    family: str
    target_statements: int
    seed: int
    text: str
    statements: int  # as counted by the builder (IR statements, return included)


def generate(family: str, statements: int, seed: int = 0) -> Kernel:
    if family != MIXED and family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; expected one of {[*FAMILIES, MIXED]}")
    if statements < 1:
        raise ValueError("statements must be positive")
    rng = random.Random(f"{family}:{statements}:{seed}")
    name = f"K_{family}_{statements}_{seed}"
    b = KernelBuilder("".join(p.capitalize() for p in name.split("_")))
    pool = [f for f in FAMILIES.values() if not f.loops]  # the loop family stands alone
    while True:
        fam = rng.choice(pool) if family == MIXED else FAMILIES[family]
        fam.emit(b, rng)
        if b.stmts + 1 >= statements:
            break
    text = b.render(PARAMS)
    return Kernel(name, family, statements, seed, text, b.stmts + 1)


def corpus(sizes: tuple[int, ...] = (10, 100), seed: int = 0,
           families: tuple[str, ...] | None = None) -> list[Kernel]:
    """Every family at every size (plus ``mixed``), deterministic from ``seed``."""
    fams = families if families is not None else (*FAMILIES, MIXED)
    return [generate(f, n, seed) for f in fams for n in sizes]


__all__ = ["FAMILIES", "LOOP_FAMILIES", "Family", "Kernel", "MIXED", "SCALAR_ARGS", "SIZES", "corpus", "generate"]
