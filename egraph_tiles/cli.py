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


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [add_check]


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
