"""A tiny text builder for DSL kernels: indented statement lines and fresh names."""

from __future__ import annotations

from dataclasses import dataclass, field

#: the output tensor is a grid of [16, 256] regions, this many per 16-row band
OUT_REGION_COLS = 4
OUT_COLS = 256 * OUT_REGION_COLS


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
    stores: int = 0

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
        """Keep ``tile`` live: store it into its own [16, 256] region of the output
        tensor (one statement), so a corrupted result is visible in the output."""
        nxt = self.fresh("out")
        r, c = divmod(self.stores, OUT_REGION_COLS)
        self.emit(f"{nxt} = pl.store({tile}, [{r * 16}, {c * 256}], {self._out})")
        self._out = nxt
        self.stores += 1

    @property
    def out_rows(self) -> int:
        """Rows of the output tensor: one 16-row band per ``OUT_REGION_COLS`` stores."""
        return 16 * max(1, -(-self.stores // OUT_REGION_COLS))

    def indent(self) -> None:
        self.depth += 1

    def dedent(self) -> None:
        self.depth -= 1

    def render(self, params: str) -> str:
        out_ty = f"pl.Tensor[[{self.out_rows}, {OUT_COLS}], pl.FP32]"
        params = f"{params}, out: pl.Out[{out_ty}]"
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
