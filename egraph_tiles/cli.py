"""The ``egraph-tiles`` command line.

Subcommands are registered in :data:`COMMANDS`: each entry is a function that adds one
subparser and sets its ``handler`` (a function of the parsed args returning an exit
code). To add a subcommand, write ``def add_x(sub): p = sub.add_parser("x", ...);
p.set_defaults(handler=...)`` and append it to ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from .dsl import DslError, parse_program, print_program
from .ir.stmts import Program
from .ir.verify import verify_program


class CliError(Exception):
    """A user-facing failure: printed to stderr, exit status 1."""


def read_program(path: str) -> Program:
    """Read, parse and verify a kernel file; errors become :class:`CliError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CliError(f"{path}: cannot read ({e})") from None
    try:
        prog = parse_program(text, filename=path)
        return verify_program(prog)
    except DslError as e:
        raise CliError(f"error: {e}") from None
    except ValueError as e:
        raise CliError(f"error: {path}: {e}" if not str(e).startswith(path) else f"error: {e}") from None


def _check(args: argparse.Namespace) -> int:
    prog = read_program(args.file)
    sys.stdout.write(print_program(prog))
    return 0


def add_check(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="parse and verify a kernel, print its canonical text",
                       description="Parse KERNEL.py, verify it and print the canonical DSL "
                       "text. Exit status 1 with the error (file:line:col) on bad input.")
    p.add_argument("file", metavar="KERNEL.py")
    p.set_defaults(handler=_check)


def _optimize(args: argparse.Namespace) -> int:
    import json

    from .egraph.report import Report
    from .passes.canonicalize import Options, canonicalize_tile_slice

    prog = read_program(args.file)
    for dest in (args.output, args.dot):
        if dest and not Path(dest).resolve().parent.is_dir():
            raise CliError(f"error: {dest}: directory {Path(dest).parent} does not exist")
    report = Report()
    opts = Options(dot_prefix=(args.dot[:-4] if args.dot.endswith(".dot") else args.dot) + "_"
                   if args.dot else None)
    try:
        out = verify_program(canonicalize_tile_slice(prog, options=opts, report=report))
    except ValueError as e:
        raise CliError(f"error: {e}") from None
    text = print_program(out)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    elif not args.json:
        sys.stdout.write(text)
    if args.explain:
        print(report.explain(), file=sys.stderr if not args.output and not args.json else sys.stdout)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    return 0


def add_optimize(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("optimize", help="canonicalize every tile.slice (e-graph optimizer)",
                       description="Optimize KERNEL.py: every tile.slice becomes a proven "
                       "zero-copy view, a folded extract index, or an explicit tile.extract.")
    p.add_argument("file", metavar="KERNEL.py")
    p.add_argument("-o", "--output", metavar="OUT.py", help="write the program here")
    p.add_argument("--explain", action="store_true",
                   help="say, for every slice use, what was decided and why")
    p.add_argument("--json", action="store_true",
                   help="print the report (decisions, bytes, e-graph size, time) as JSON")
    p.add_argument("--dot", metavar="FILE",
                   help="write each function's saturated e-graph as Graphviz (FILE_<fn>.dot)")
    p.set_defaults(handler=_optimize)


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [add_check, add_optimize]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="egraph-tiles",
                                     description="Equality-saturation optimizer for NPU tile programs.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except CliError as e:
        print(str(e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
