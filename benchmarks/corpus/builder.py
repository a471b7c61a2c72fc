"""A tiny text builder for DSL kernels: indented statement lines and fresh names."""

from __future__ import annotations

from dataclasses import dataclass, field

DT_BITS = {"FP32": 32, "BF16": 16, "FP16": 16, "INT8": 8}


@dataclass
class KernelBuilder:
    """Accumulates the body of one InCore function. ``stmts`` counts statements as the
    IR does (an assignment, a loop / if header, a yield, the final return)."""

    name: str
    lines: list[str] = field(default_factory=list)
    stmts: int = 0
    depth: int = 2
    _counter: int = 0
    _out: str = "out"

    def fresh(self, stem: str) -> str:
        self._counter += 1
        return f"{stem}_{self._counter}"

    def emit(self, line: str, count: bool = True) -> None:
        self.lines.append("    " * self.depth + line)
        if count:
            self.stmts += 1

    def assign(self, stem: str, value: str) -> str:
        v = self.fresh(stem)
        self.emit(f"{v} = {value}")
        return v

    def store(self, tile: str) -> None:
        """Keep ``tile`` live: store it into the output tensor (one statement)."""
        nxt = self.fresh("out")
        self.emit(f"{nxt} = pl.store({tile}, [0, 0], {self._out})")
        self._out = nxt

    def indent(self) -> None:
        self.depth += 1

    def dedent(self) -> None:
        self.depth -= 1

    def render(self, params: str, out_ty: str) -> str:
        head = [
            "import pypto.language as pl",
            "",
            "",
            "@pl.program",
            f"class {self.name}:",
            "    @pl.function(type=pl.FunctionType.InCore)",
            f"    def kernel(self, {params}) -> {out_ty}:",
        ]
        tail = ["    " * 2 + f"return {self._out}"]
        return "\n".join(head + self.lines + tail) + "\n"


def load(b: KernelBuilder, stem: str, tensor: str, rows: int, cols: int, mem: str = "Vec") -> str:
    return b.assign(stem, f"pl.tile.load({tensor}, [0, 0], [{rows}, {cols}], target_memory=pl.Mem.{mem})")


def sl(src: str, rows: int, cols: int, r: object, c: object) -> str:
    return f"pl.tile.slice({src}, [{rows}, {cols}], [{r}, {c}])"
