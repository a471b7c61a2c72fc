"""The report behind ``--explain`` / ``--json``: per slice use, the decision and its reason
with the arithmetic, bytes copied before / after, e-graph size and time."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field



@dataclass
class SliceDecision:
    slice: str  # the slice variable
    use: str  # "muls operand 0", "extract source", "matmul left operand", ...
    decision: str  # view | copy | fold | kept | dropped
    reason: str
    bytes_copied: int = 0
    placement: str | None = None
    line: int = 0
    #: bytes × executions of the copy's place (loop trip counts, if-arm probability)
    dynamic_bytes: int = 0


@dataclass
class FunctionReport:
    function: str
    decisions: list[SliceDecision] = field(default_factory=list)
    bytes_before: int = 0
    bytes_after: int = 0
    #: bytes moved per call: each copy × the executions of its place
    dynamic_before: int = 0
    dynamic_after: int = 0
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
                         f" -> {f.bytes_after} static, {f.dynamic_before} -> {f.dynamic_after} dynamic; e-graph {f.enodes} e-nodes, {f.iterations} "
                         f"iteration(s), {f.seconds * 1000:.1f} ms"
                         + (f"; LIMIT HIT ({f.limit_hit}): unproven views were copied"
                            if f.limit_hit else ""))
            for d in f.decisions:
                where = f" [line {d.line}]" if d.line else ""
                lines.append(f"  {d.slice} as {d.use}: {d.decision}{where} — {d.reason}")
        return "\n".join(lines)
