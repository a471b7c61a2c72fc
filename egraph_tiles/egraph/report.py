"""The report behind ``--explain`` / ``--json``: per slice use, the decision and its reason
with the arithmetic, bytes copied before / after, e-graph size and time."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..ir import ops
from ..ir.exprs import Call, Expr, const_int
from ..ir.stmts import AssignStmt, Function, walk
from ..ir.types import TileType

ALIGN_BITS = 256


@dataclass
class SliceDecision:
    slice: str  # the slice variable
    use: str  # "muls operand 0", "extract source", "matmul left operand", ...
    decision: str  # view | copy | fold | kept | dropped
    reason: str
    bytes_copied: int = 0
    placement: str | None = None
    line: int = 0


@dataclass
class FunctionReport:
    function: str
    decisions: list[SliceDecision] = field(default_factory=list)
    bytes_before: int = 0
    bytes_after: int = 0
    enodes: int = 0
    iterations: int = 0
    saturated: bool = True
    limit_hit: str | None = None
    seconds: float = 0.0
    extractor: str = "greedy"
    skipped: str | None = None


@dataclass
class Report:
    functions: list[FunctionReport] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"functions": [asdict(f) for f in self.functions]}

    def explain(self) -> str:
        lines = []
        for f in self.functions:
            head = f"function {f.function}:"
            if f.skipped:
                lines.append(f"{head} {f.skipped}")
                continue
            lines.append(f"{head} {len(f.decisions)} decision(s); bytes copied {f.bytes_before}"
                         f" -> {f.bytes_after}; e-graph {f.enodes} e-nodes, {f.iterations} "
                         f"iteration(s), {f.seconds * 1000:.1f} ms"
                         + (f"; LIMIT HIT ({f.limit_hit}): unproven views were copied"
                            if f.limit_hit else ""))
            for d in f.decisions:
                where = f" [line {d.line}]" if d.line else ""
                lines.append(f"  {d.slice} as {d.use}: {d.decision}{where} — {d.reason}")
        return "\n".join(lines)


def extract_bytes(fn: Function) -> int:
    """Bytes copied by the function's ``tile.extract`` statements (constant shapes)."""
    total = 0
    for s in walk(fn.body):
        if isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == "tile.extract":
            t = s.target.type
            if isinstance(t, TileType):
                dims = t.const_shape()
                if dims is not None:
                    n = 1
                    for d in dims:
                        n *= d
                    total += n * t.dtype.storage_bits // 8
    return total


def show(e: Expr) -> str:
    from ..dsl.printer import format_expr

    return format_expr(e)


def pow2_part(n: int, cap: int = 1 << 30) -> int:
    return cap if n == 0 else min(n & -n, cap)


def alignment_reason(off_row: Expr, off_col: Expr, pitch: int | None, bits: int,
                     mult_row: int | None, mult_col: int | None, base_mult: int | None,
                     rows: int, cols: int, kept: bool) -> str:
    """The arithmetic behind an ordinary-operand decision, from the e-graph's known multiples."""
    parts = []
    r, c = const_int(off_row), const_int(off_col)
    if r is not None and c is not None and pitch is not None:
        total = (r * pitch + c) * bits
        parts.append(f"offset ({r} × {pitch} cols + {c}) × {bits} bits = {total} bits")
    else:
        if r is None or r != 0:
            parts.append(f"row offset {_s(off_row)} (multiple of {mult_row}) × "
                         f"{pitch if pitch is not None else '?'} cols × {bits} bits")
        if c is None or c != 0:
            parts.append(f"column offset {_s(off_col)} (multiple of {mult_col}) × {bits} bits")
    if base_mult is not None and base_mult < (1 << 30):
        parts.append(f"base address a multiple of {base_mult} bits")
    nbytes = rows * cols * bits // 8
    if kept:
        return "; ".join(parts) + f": multiple of {ALIGN_BITS} → view"
    return "; ".join(parts) + f", not provably ≡ 0 mod {ALIGN_BITS} → copy {nbytes} B"


def _s(e: Expr) -> str:
    return show(e)


def use_label(op: str, slot: tuple, ctx: str) -> str:
    if slot[0] == "alias":
        return "plain alias"
    if slot[0] == "init":
        return f"loop initializer {slot[1]}"
    if slot[0] == "yield":
        return f"yield value {slot[1]}"
    if ops.lookup(op) is None:  # the seed copies opaque operands: only sound if the op only reads
        return f"{op} operand {slot[1]} (opaque call, assumed not to write it)"
    kind = {"left": "left operand", "right": "right operand", "colx": "col_expand operand"}
    return f"{op} {kind.get(ctx, 'operand')} {slot[1]}"

