"""``egraph-tiles nki``: analyze (and migrate) a legacy NKI kernel file.

    egraph-tiles nki KERNEL.py [--kernel NAME] --shape NAME=D0xD1... [--dtype NAME=DT]
        [--scalar NAME=VALUE] [--params FILE] [--path DIR] [--bind SYM=INT ...]
        [--grid G0xG1] [--json] [--migrate -o OUT.py] [--verify]

Options and the kernel path may come in any order.  ``--scalar`` values are Python literals
(``(3, 4)``, ``[1, 59, 38, 1280]``, ``None``, nested), ``true`` / ``false`` / ``null`` as JSON
spells them, or configurations ``Config(field=value)`` of a class the kernel's file or its
imports define; text that is not one of these is accepted only for a string parameter.

Exit status: 0 when every access was inferred without a finding, 1 otherwise (the report is
still printed), 1 with a message on stderr when the file cannot be read or the kernel chosen.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

from egraph_tiles.nki.kernels.analyze import KernelReport, analyze_kernel, pattern_json, verify_report
from egraph_tiles.nki.kernels.migrate import migrate_kernel as migrate
from egraph_tiles.nki.kernels.modules import from_file_value, parse_value
from egraph_tiles.nki.kernels.reader import Finding
from egraph_tiles.nki.kernels.values import ParamText

__all__ = ["add_parser", "kernel_path", "parse_assignments", "report_json", "report_text",
           "run_options"]


def _dims(text: str, flag: str, err: type[Exception]) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in text.lower().split("x"))
    except ValueError:
        raise err(f"error: {flag}: expected dimensions like 256x1024, got {text!r}") from None
    if not dims or any(d < 1 for d in dims):
        raise err(f"error: {flag}: dimensions must be positive, got {text!r}")
    return dims


def _split(item: str) -> list[str]:
    """``a=1,b=(2, 3) c=x`` -> ``["a=1", "b=(2, 3)", "c=x"]``: commas and spaces separate
    assignments only outside brackets and quotes, before the next ``NAME=``."""
    parts, depth, quote, cur = [], 0, "", ""
    for k, ch in enumerate(item):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch in ", " and depth == 0 and re.match(r"[\s,]*[A-Za-z_]\w*=", item[k + 1:]):
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip(" ,")]


def parse_assignments(items: list[str] | None, flag: str, err: type[Exception]) -> dict[str, str]:
    """``NAME=VALUE`` pairs: one per argument, or several separated by commas or spaces (a
    value may itself hold commas inside brackets: ``shape2D=(3, 4)``)."""
    out: dict[str, str] = {}
    flat = [i for group in items or [] for i in ([group] if isinstance(group, str) else group)]
    for item in flat:
        for part in _split(item):
            name, eq, value = part.partition("=")
            name = name.strip()
            if not eq or not name.isidentifier() or not value.strip():
                raise err(f"error: {flag}: expected NAME=VALUE, got {part!r}")
            out[name] = value.strip()
    return out


def kernel_path(args: argparse.Namespace, err: type[Exception]) -> None:
    """A kernel path given after an option that takes several values (``--shape a=4x4 k.py``)."""
    for flag in ("shape", "dtype", "scalar", "bind", "path"):
        groups = getattr(args, flag) or []
        for group in groups:
            for item in list(group):
                if "=" in item or flag == "path":
                    continue
                if args.file is not None:
                    raise err(f"error: --{flag}: expected NAME=VALUE, got {item!r}")
                args.file = item
                group.remove(item)
    if args.file is None:
        raise err("error: the kernel file KERNEL.py is required")


def read_params(path: str, err: type[Exception]) -> dict[str, Any]:
    """A ``--params`` file: a JSON object or a Python literal dict of parameter values; a value
    ``{"shape": [...], "dtype": ...}`` describes a tensor parameter."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise err(f"error: --params {path}: cannot read ({e})") from None
    try:
        doc = json.loads(text)
    except ValueError:
        value = parse_value(text)
        doc = value if isinstance(value, dict) else None
    if not isinstance(doc, dict) or not all(isinstance(k, str) for k in doc):
        raise err(f"error: --params {path}: expected a JSON object or a Python dict of "
                  "parameter values")
    return doc


def add_parser(sub: argparse._SubParsersAction, err: type[Exception]) -> None:
    """Register the ``nki`` subcommand (``err`` is the CLI's user-facing error type)."""
    p = sub.add_parser(
        "nki", help="infer every indexed access of a legacy NKI kernel (and migrate it)",
        description="Read KERNEL.py with ast (never executed), infer the access pattern of "
        "every indexed access of the kernel, report out-of-bounds / non-affine / partition / "
        "indirect findings, and optionally rewrite the legacy indices in the NKI 0.2+ form.")
    p.add_argument("file", metavar="KERNEL.py", nargs="?")
    p.add_argument("--kernel", metavar="NAME", help="the kernel function (default: the only "
                   "@nki.jit / @nki.trace function)")
    p.add_argument("--shape", action="append", nargs="+", metavar="NAME=D0xD1...",
                   help="shape of a tensor parameter (repeatable)")
    p.add_argument("--dtype", action="append", nargs="+", metavar="NAME=DT", help="dtype of a parameter")
    p.add_argument("--scalar", action="append", nargs="+", metavar="NAME=VALUE",
                   help="value of a Python scalar / configuration parameter")
    p.add_argument("--params", metavar="FILE", help="parameter values from a JSON object or a "
                   "Python literal dict (a tensor: {\"shape\": [...], \"dtype\": ...})")
    p.add_argument("--path", action="append", nargs="+", metavar="DIR",
                   help="package root for the kernel's imports (besides the kernel's folder)")
    p.add_argument("--bind", action="append", nargs="+", metavar="SYM=INT",
                   help="fix a loop variable or program_id_K to one value")
    p.add_argument("--grid", metavar="G0xG1...", help="SPMD launch grid (program id ranges)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--migrate", action="store_true",
                   help="rewrite every legacy index in the NKI 0.2+ form (basic slices or "
                   ".ap()), each checked to read the same elements in the same order")
    p.add_argument("-o", "--output", metavar="OUT.py",
                   help="with --migrate: write the migrated kernel file here (default: stdout "
                   "after the report)")
    p.add_argument("--verify", action="store_true",
                   help="check every pattern against numpy's reading of the legacy index")
    p.set_defaults(handler=lambda args: _run(args, err))


def run_options(args: argparse.Namespace, err: type[Exception]) -> dict[str, Any]:
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, str] = {}
    scalars: dict[str, Any] = {}
    if args.params:
        for name, v in read_params(args.params, err).items():
            if isinstance(v, dict) and "shape" in v:
                dims = v["shape"]
                if not isinstance(dims, (list, tuple)) or not all(
                        isinstance(d, int) and d >= 1 for d in dims):
                    raise err(f"error: --params: {name}: a shape is a list of positive integers")
                shapes[name] = tuple(dims)
                if isinstance(v.get("dtype"), str):
                    dtypes[name] = v["dtype"]
            else:
                scalars[name] = from_file_value(v)
    shapes.update({k: _dims(v, "--shape", err)
                   for k, v in parse_assignments(args.shape, "--shape", err).items()})
    dtypes.update(parse_assignments(args.dtype, "--dtype", err))
    scalars.update({k: ParamText(v) for k, v in
                    parse_assignments(args.scalar, "--scalar", err).items()})
    binds_raw = parse_assignments(args.bind, "--bind", err)
    binds = {}
    for k, v in binds_raw.items():
        try:
            binds[k] = int(v)
        except ValueError:
            raise err(f"error: --bind {k}={v}: expected an integer") from None
    grid = _dims(args.grid, "--grid", err) if args.grid else None
    paths = [d for group in args.path or [] for d in group]
    for d in paths:
        if not Path(d).is_dir():
            raise err(f"error: --path {d}: no such directory")
    return {"shapes": shapes, "dtypes": dtypes, "scalars": scalars, "binds": binds, "grid": grid,
            "paths": paths}


def _run(args: argparse.Namespace, err: type[Exception]) -> int:
    kernel_path(args, err)
    try:
        source = Path(args.file).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise err(f"{args.file}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise err(f"{args.file}: cannot read ({e})") from None
    opts = run_options(args, err)
    try:
        report = analyze_kernel(source, args.kernel, filename=args.file, **opts)
    except SyntaxError as e:
        raise err(f"error: {args.file}:{e.lineno}:{e.offset}: {e.msg}") from None
    except LookupError as e:
        raise err(f"error: {e.args[0]}") from None
    if args.output and not args.migrate:
        raise err("error: -o/--output needs --migrate")
    findings = list(report.findings)
    migrated: dict[int, str] = {}
    new_source = None
    if args.migrate:
        base = report
        if opts["binds"]:  # migrate the kernel for every iteration, not at the bound values
            base = analyze_kernel(source, args.kernel, filename=args.file,
                                  **{**opts, "binds": {}})
        mig = migrate(base)
        new_source = mig.source
        by_pos = {(id(r.raw.node) if base is report else _key(r)): t
                  for r in base.accesses if (t := mig.texts.get(id(r))) is not None}
        migrated = {id(r): by_pos[k] for r in report.accesses
                    if (k := id(r.raw.node) if base is report else _key(r)) in by_pos}
        findings += [f for f in mig.findings if f not in findings]
        if args.output:
            dest = Path(args.output)
            if not dest.resolve().parent.is_dir():
                raise err(f"error: {args.output}: directory {dest.parent} does not exist")
            dest.write_text(new_source, encoding="utf-8")
    verified = None
    if args.verify:
        verified, bad = verify_report(report)
        findings += bad
    findings.sort(key=lambda f: f.line)
    if args.json:  # the common document of every command; the NKI report is its "nki" object
        from egraph_tiles.batch import nki_document
        print(json.dumps(nki_document(args.file, report_json(report, findings, migrated),
                                      findings, source), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(report_text(report, findings, args.file, migrated))
        if verified is not None:
            print(f"verified: {verified} of {len(report.accesses)} access(es) read the same "
                  "elements as numpy's legacy index")
        if new_source is not None and not args.output:
            print(f"\n# ---- migrated {args.file} ----")
            sys.stdout.write(new_source)
    return 1 if findings else 0


def _key(rep: Any) -> tuple[int, int, str]:
    return (rep.raw.line, rep.raw.col, rep.raw.role)


def report_json(report: KernelReport, findings: list[Finding],
                migrated: dict[int, str] | None = None) -> dict[str, Any]:
    """The ``--json`` document."""
    accesses = []
    for rep in report.accesses:
        pattern, offset = pattern_json(rep)
        entry = {"line": rep.raw.line, "tensor": rep.raw.tensor_text,
                 "role": rep.raw.role, "shape": list(rep.shape), "pattern": pattern,
                 "offset": offset, "legacy": rep.raw.legacy or rep.raw.mask is not None,
                 "migrated": (migrated or {}).get(id(rep))}
        if id(rep) in report.verified:  # with --verify: true, or why the pattern differs
            err = report.verified[id(rep)]
            entry["verified"] = True if err is None else err
        accesses.append(entry)
    return {"kernel": report.name, "accesses": accesses,
            "errors": [{"line": f.line, "message": f.message} for f in findings]}


def report_text(report: KernelReport, findings: list[Finding], filename: str,
                migrated: dict[int, str] | None = None) -> str:
    """One table per instruction (the accesses of one statement), then the findings."""
    lines = [f"kernel {report.name} ({filename}): {len(report.accesses)} indexed access(es), "
             f"{len(findings)} finding(s)"]
    groups: dict[int, list[Any]] = {}
    for rep in report.accesses:
        groups.setdefault(rep.raw.instruction, []).append(rep)
    for reps in groups.values():
        first = reps[0].raw
        src = report.read.source.splitlines()
        line = first.stmt_line or first.line
        stmt = src[line - 1].strip() if 0 < line <= len(src) else ""
        if len(stmt) > 90:
            stmt = stmt[:87] + "..."
        lines.append("")
        lines.append(f"line {line}: {stmt}")
        rows = [("role", "access", "shape", "pattern", "offset")]
        for rep in reps:
            pattern, offset = pattern_json(rep)
            rows.append((rep.raw.role, ast.unparse(rep.raw.node), "x".join(map(str, rep.shape)),
                         json.dumps(pattern).replace('"', ""), str(offset)))
            if migrated and id(rep) in migrated:
                rows.append(("", "-> " + migrated[id(rep)], "", "", ""))
        widths = [max(len(r[k]) for r in rows) for k in range(5)]
        for r in rows:
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if findings:
        lines.append("")
        lines.append("findings:")
        for f in findings:
            kind = "" if f.message.startswith((f.kind, f.kind.replace("-", " "))) else f"{f.kind}: "
            lines.append(f"  {filename}:{f.line}: {kind}{f.message}")
    return "\n".join(lines) + "\n"
