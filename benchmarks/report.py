"""Markdown tables, CSV and plots from the benchmark rows."""

from __future__ import annotations

import csv
import math
from dataclasses import asdict, fields
from pathlib import Path

from .harness import COPY, GREEDY, ILP, ORDER, SEED, VIEW, Row

EXTRA_PROOF_FAMILIES = ("loop_multiple", "affine_offsets", "shared_window")


def _fmt(v: object, digits: int = 3) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        if v == 0:
            return "0"
        return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _cell(r: Row | None, attr: str) -> str:
    if r is None:
        return "n/a"
    if r.status != "ok":
        return r.status
    v = getattr(r, attr)
    if attr == "unsafe_views" and v is None and r.verdict not in (None, "ok"):
        return ">0"
    return _fmt(v)


def _index(rows: list[Row]) -> dict[tuple[str, str], Row]:
    return {(r.kernel, r.strategy): r for r in rows}


def detail_table(rows: list[Row]) -> str:
    head = ("| kernel | stmts | strategy | bytes copied | extracts (+inserted) | slices left | "
            "hw verdict | unsafe views | time (s) | peak KiB | e-nodes | e-classes |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        ext = "n/a" if r.extracts is None else f"{r.extracts} (+{r.inserted_extracts})"
        lines.append(
            f"| {r.kernel} | {r.statements} | {r.strategy} | {_cell(r, 'bytes_copied')} | "
            f"{ext if r.status == 'ok' else r.status} | {_cell(r, 'slices_left')} | "
            f"{r.verdict or 'n/a'} | {_cell(r, 'unsafe_views')} | {_cell(r, 'seconds')} | "
            f"{_cell(r, 'peak_kib')} | {_cell(r, 'enodes')} | {_cell(r, 'eclasses')} |")
    return "\n".join(lines)


def _flagged(r: Row | None, attr: str = "bytes_copied") -> str:
    """Bytes copied, flagged when an optimizing strategy's output is unsafe on the model."""
    cell = _cell(r, attr)
    if r is not None and r.status == "ok" and r.strategy != VIEW and r.verdict not in (None, "ok"):
        cell += f" ⚠ {r.verdict}"
    return cell


def family_table(rows: list[Row], size: int, attr: str = "bytes_copied") -> str:
    """Bytes copied (static, or ``attr="dynamic_bytes"``: × executions) per family and strategy
    at one target size (+ view-everything's unsafe views)."""
    idx = _index(rows)
    kernels = [(r.kernel, r.family) for r in rows if r.strategy == SEED and r.extra.get("size") == size
               and r.extra.get("series") == "family"]
    lines = [f"| family ({size} stmts) | " + " | ".join(ORDER) + " | unsafe views (view-everything) |",
             "|" + "---|" * (len(ORDER) + 2)]
    for k, fam in kernels:
        cells = [_flagged(idx.get((k, s)), attr) for s in ORDER]
        lines.append(f"| {fam} | " + " | ".join(cells) + f" | {_cell(idx.get((k, VIEW)), 'unsafe_views')} |")
    return "\n".join(lines)


def scaling_table(rows: list[Row]) -> str:
    idx = _index(rows)
    ks = sorted({(r.statements, r.kernel) for r in rows if r.extra.get("series") == "scaling"})
    lines = ["| statements | seed (s) | greedy (s) | ILP (s) | greedy / seed | ILP / seed | "
             "e-nodes (engine) | serialized nodes / classes | peak KiB seed / greedy / ILP |",
             "|" + "---|" * 9]
    for n, k in ks:
        s, g, i = idx.get((k, SEED)), idx.get((k, GREEDY)), idx.get((k, ILP))

        def ratio(x: Row | None) -> str:
            if x is None or s is None or x.seconds is None or not s.seconds:
                return "n/a"
            return f"{x.seconds / s.seconds:.1f}×"

        en = next((x.enodes for x in (g, i) if x is not None and x.enodes is not None), None)
        ser = "n/a" if i is None or i.ser_nodes is None else f"{i.ser_nodes:,} / {i.eclasses:,}"
        peaks = " / ".join(_cell(x, "peak_kib") for x in (s, g, i))
        lines.append(f"| {n} | {_cell(s, 'seconds')} | {_cell(g, 'seconds')} | {_cell(i, 'seconds')} | "
                     f"{ratio(g)} | {ratio(i)} | {_fmt(en)} | {ser} | {peaks} |")
    return "\n".join(lines)


def bars(rows: list[Row]) -> str:
    """The issue's bars, checked on this run's rows (reported, never asserted)."""
    idx = _index(rows)
    kernels = sorted({(r.kernel, r.family) for r in rows})
    out: list[str] = []
    worse, strict_miss, ilp_worse, unsafe = [], [], [], []
    strict_ok: dict[str, int] = {}
    for k, fam in kernels:
        s = idx.get((k, SEED))
        for name in (GREEDY, ILP):
            e = idx.get((k, name))
            if e is None or e.status != "ok" or s is None or s.status != "ok":
                continue
            if e.bytes_copied > s.bytes_copied:  # type: ignore[operator]
                worse.append(f"{k} ({name})")
            if fam in EXTRA_PROOF_FAMILIES and name == GREEDY:
                if e.bytes_copied < s.bytes_copied:  # type: ignore[operator]
                    strict_ok[fam] = strict_ok.get(fam, 0) + 1
                else:
                    strict_miss.append(k)
        i = idx.get((k, ILP))
        if i is not None and i.status == "ok" and i.ilp_cost is not None and i.greedy_dag_cost is not None \
                and i.ilp_cost > i.greedy_dag_cost + 1e-9:
            ilp_worse.append(k)
        for name in (COPY, SEED, GREEDY, ILP):
            r = idx.get((k, name))
            if r is not None and r.status == "ok" and r.verdict not in (None, "ok"):
                unsafe.append(f"{k} ({name}: {r.verdict})")
    n_ok = sum(1 for r in rows if r.strategy == GREEDY and r.status == "ok")
    out.append(f"- e-graph bytes ≤ seed policy: {'yes' if not worse else 'NO: ' + ', '.join(worse)}"
               f" ({n_ok} kernels with an e-graph result)")
    out.append("- strictly fewer bytes on extra-proof families: "
               + (", ".join(f"{f}: {c} kernel(s)" for f, c in sorted(strict_ok.items())) or "none")
               + (f"; not strictly fewer on {', '.join(strict_miss)}" if strict_miss else ""))
    out.append(f"- ILP DAG cost ≤ greedy DAG cost: {'yes' if not ilp_worse else 'NO: ' + ', '.join(ilp_worse)}")
    out.append(f"- 0 unsafe views for copy / seed / e-graph strategies: "
               f"{'yes' if not unsafe else 'NO: ' + ', '.join(unsafe)}")
    return "\n".join(out)


def load_csv(path: Path) -> list[Row]:
    """Rows back from ``results.csv`` (to re-plot without re-running)."""
    ints = {"statements", "bytes_copied", "dynamic_bytes", "extracts", "inserted_extracts", "slices_left",
            "unsafe_views", "enodes", "eclasses", "ser_nodes", "size"}
    floats = {"seconds", "peak_kib", "ilp_cost", "greedy_dag_cost"}
    rows: list[Row] = []
    with path.open() as fh:
        for d in csv.DictReader(fh):
            vals: dict = {}
            for k, v in d.items():
                if v == "" or v is None:
                    vals[k] = None
                elif k in ints:
                    vals[k] = int(v)
                elif k in floats:
                    vals[k] = float(v)
                else:
                    vals[k] = v
            series, size = vals.pop("series"), vals.pop("size")
            vals["note"] = vals["note"] or ""
            rows.append(Row(**vals, extra={"series": series, "size": size}))
    return rows


def write_csv(rows: list[Row], path: Path) -> None:
    names = [f.name for f in fields(Row) if f.name != "extra"] + ["series", "size"]
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=names)
        w.writeheader()
        for r in rows:
            d = asdict(r)
            extra = d.pop("extra")
            d["series"], d["size"] = extra.get("series"), extra.get("size")
            w.writerow(d)


def plot_bytes(rows: list[Row], size: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fams = [r.family for r in rows if r.strategy == SEED and r.extra.get("size") == size
            and r.extra.get("series") == "family"]
    idx = {(r.family, r.strategy): r for r in rows if r.extra.get("size") == size
           and r.extra.get("series") == "family"}
    fig, ax = plt.subplots(figsize=(12, 4.8))
    width = 0.8 / len(ORDER)
    for j, s in enumerate(ORDER):
        vals, unsafe = [], []
        for f in fams:
            r = idx.get((f, s))
            vals.append(r.bytes_copied / 1024 if r is not None and r.status == "ok" else math.nan)
            unsafe.append(r is not None and r.verdict not in (None, "ok"))
        xs = [i + (j - (len(ORDER) - 1) / 2) * width for i in range(len(fams))]
        bars = ax.bar(xs, vals, width, label=s)
        for x, v, bad in zip(xs, vals, unsafe):
            if bad:  # an unsafe result: mark it where its (possibly zero) bar stands
                ax.annotate("✗", (x, 0 if math.isnan(v) else v), ha="center", va="bottom",
                            color=bars.patches[0].get_facecolor(), fontsize=12, weight="bold")
    ax.set_xticks(range(len(fams)), fams, rotation=25, ha="right")
    ax.set_ylabel("KiB copied (inserted extracts)")
    ax.set_title(f"Bytes copied per strategy and kernel family ({size}-statement kernels)")
    ax.legend(title="✗ = unsafe on the hardware model", title_fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_time(rows: list[Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = [r for r in rows if r.extra.get("series") == "scaling"]
    fig, ax = plt.subplots(figsize=(7, 5))
    for s, style in ((SEED, "o-"), (GREEDY, "s-"), (ILP, "^-")):
        pts = sorted((r.statements, r.seconds) for r in series
                     if r.strategy == s and r.status == "ok" and r.seconds)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=s)
        if s == SEED and pts:
            ax.plot([p[0] for p in pts], [10 * p[1] for p in pts], "k:", label="10 × seed policy")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("statements")
    ax.set_ylabel("optimize wall time (s)")
    ax.set_title("Optimize time vs program size (mixed kernels)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
