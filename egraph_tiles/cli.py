"""The ``egraph-tiles`` command line: a thin layer over :mod:`egraph_tiles.batch`.

Subcommands are registered in :data:`COMMANDS`: each entry is a function that adds one
subparser and sets its ``handler`` (a function of the parsed args returning an exit
code). To add a subcommand, write ``def add_x(sub): p = sub.add_parser("x", ...);
p.set_defaults(handler=...)`` and append it to ``COMMANDS``.

Exit status: 0 success; 1 a file failed to read, parse, verify or optimize (or, with
``optimize --check``, would change); 2 a usage error (raise :class:`UsageError`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Callable

from . import batch
from .batch import FileResult, Source


class CliError(Exception):
    """A user-facing failure: printed to stderr, exit status 1."""


class UsageError(Exception):
    """A command line that cannot be run as given: printed to stderr, exit status 2."""


# --------------------------------------------------------------------------- shared options


def _positive(kind):
    def parse(text: str):
        try:
            v = kind(text)
        except ValueError:
            v = 0
        if v <= 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return v
    return parse


def add_batch_command(sub: argparse._SubParsersAction, name: str, handler: Callable, help: str,
                      description: str) -> argparse.ArgumentParser:
    """A many-file subcommand: its parser, with PATH..., -j, --timeout and --json (what every
    one of them takes), running ``handler``."""
    p = sub.add_parser(name, help=help, description=description)
    p.set_defaults(handler=handler)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="kernel files, folders (every .py holding a @pl.program, recursively) "
                   "or - for standard input")
    p.add_argument("-j", "--jobs", type=_positive(int), default=None, metavar="N",
                   help="worker processes (default: the number of cores)")
    p.add_argument("--timeout", type=_positive(float), default=None, metavar="SECONDS",
                   help="give up on a file after this long (the others go on)")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON (one file: the optimizer's report; "
                   "several: one document, per file and totals)")
    return p


def is_single(args: argparse.Namespace) -> bool:
    """One file or standard input (not a folder): today's one-file behaviour applies."""
    return len(args.paths) == 1 and not Path(args.paths[0]).is_dir()


class Run:
    """Feedback while a batch runs, on stderr: a rich progress bar on a terminal (plus the
    lines worth reading: errors, files that would change), one plain line per file otherwise;
    then the summary table."""

    def __init__(self, command: str, args: argparse.Namespace, sources: list[Source]):
        self.command, self.args, self.n = command, args, len(sources)
        self.tty = sys.stderr.isatty()
        self.progress = None
        self.t0 = time.perf_counter()

    def __enter__(self) -> Run:
        if self.tty:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn)

            self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                     MofNCompleteColumn(), TimeElapsedColumn(),
                                     console=Console(stderr=True))
            self.task = self.progress.add_task(self.command, total=self.n)
            self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()

    def done(self, res: FileResult) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)

    def line(self, res: FileResult, would_change: bool) -> None:
        if not res.ok:
            text = f"error: {res.error}"
        elif would_change:
            text = f"{res.path}: would change"
        elif self.tty:
            return
        else:
            text = f"{res.path}: ok"
        if self.progress is not None:
            self.progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=sys.stderr, flush=True)

    def seconds(self) -> float:
        return time.perf_counter() - self.t0


def summary_table(t: dict) -> str:
    """The totals of a batch as a small two-column table (rich; plain text off a terminal)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table("summary", "", box=box.SIMPLE_HEAD)
    for label, value in [
            ("files", f"{t['files']:,}"), ("errors", f"{t['errors']:,}"),
            ("changed", f"{t['changed']:,}"), ("functions", f"{t['functions']:,}"),
            ("slices", f"{t['view']:,} view, {t['copy']:,} copy, {t['folded']:,} folded, "
                       f"{t['rejected']:,} rejected"),
            ("bytes copied", f"{t['bytes_before']:,} -> {t['bytes_after']:,}"),
            ("time", f"{t['seconds']:.2f} s")]:
        table.add_row(label, value)
    console = Console(stderr=True)
    with console.capture() as cap:
        console.print(table)
    return "\n".join(line.rstrip() for line in cap.get().splitlines()).strip("\n") + "\n"


def batch_json(results: list[FileResult], seconds: float) -> str:
    doc = {"versions": batch.versions(), "files": [r.to_json() for r in results],
           "totals": batch.totals(results, seconds)}
    return json.dumps(doc, indent=2, ensure_ascii=False)


def finish(run: Run, results: list[FileResult]) -> None:
    """After a batch: the JSON document on stdout (``--json``), the summary table on stderr."""
    seconds = run.seconds()
    if run.args.json:
        print(batch_json(results, seconds))
    sys.stderr.write(summary_table(batch.totals(results, seconds)))


# --------------------------------------------------------------------------- check


def _check(args: argparse.Namespace) -> int:
    sources = batch.discover(args.paths)
    if is_single(args):
        (res,) = batch.run(sources, jobs=1, timeout=args.timeout)
        if not res.ok:
            raise CliError(f"error: {res.error}")
        if args.json:
            print(json.dumps(res.report, indent=2, ensure_ascii=False))
        else:
            from . import parse_program, print_program

            sys.stdout.write(print_program(parse_program(sources[0].text, filename=res.path)))
        return 0
    with Run("check", args, sources) as run:
        results = batch.run(sources, jobs=args.jobs, timeout=args.timeout,
                            on_done=run.done, on_result=lambda r: run.line(r, False))
    finish(run, results)
    return int(not all(r.ok for r in results))


def add_check(sub: argparse._SubParsersAction) -> None:
    add_batch_command(sub, "check", _check,
                      help="parse, verify and optimize kernels without writing them",
                      description="Parse, verify and optimize every kernel under PATH... and "
                      "write nothing. One file: print its canonical DSL text. Several: a "
                      "line per file and a summary. Exit status 1 when a file fails to parse, "
                      "verify or optimize (file:line:col: message), 2 on a usage error.")


# --------------------------------------------------------------------------- optimize


def destinations(args: argparse.Namespace, sources: list[Source]) -> dict[str, Path]:
    """Where each source's optimized text goes (path -> file); empty for stdout / --check."""
    if args.output:
        return {sources[0].path: Path(args.output)} if sources else {}
    if not (args.out_dir or args.in_place):
        return {}
    dest: dict[str, Path] = {}
    taken: dict[Path, str] = {}
    for s in sources:
        d = s.file if args.in_place else Path(args.out_dir) / s.rel
        if d in taken:
            raise UsageError(f"{s.path} and {taken[d]} would both be written to {d}")
        taken[d], dest[s.path] = s.path, d
    return dest


def _check_usage(args: argparse.Namespace, single: bool) -> None:
    writes = [f for f, on in (("-o", args.output), ("--out-dir", args.out_dir),
                              ("--in-place", args.in_place)) if on]
    if args.check and writes:
        raise UsageError(f"--check writes nothing: drop {writes[0]}")
    if batch.STDIN in args.paths and (args.out_dir or args.in_place):
        raise UsageError("standard input has no file to write: use -o FILE or stdout")
    if not single:
        if args.output:
            raise UsageError("-o takes one input file; for several use --out-dir DIR or --in-place")
        if args.dot:
            raise UsageError("--dot takes one input file")
        if not (writes or args.check or args.json or args.explain):
            raise UsageError("several inputs: write them with --out-dir DIR or --in-place, or "
                             "only report with --check, --json or --explain")
    for dest in (args.output, args.dot):
        if dest and not Path(dest).resolve().parent.is_dir():
            raise CliError(f"error: {dest}: directory {Path(dest).parent} does not exist")


def write(res: FileResult, dest: Path | None, in_place: bool) -> None:
    """Write a result's program to ``dest`` (in place: only when it changed); a failure to
    write makes the result an error."""
    if dest is None or not res.ok or (in_place and not res.changed):
        return
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(res.output, encoding="utf-8")
    except OSError as e:
        res.fail("write", f"{dest}: cannot write ({e})")


def _optimize(args: argparse.Namespace) -> int:
    single = is_single(args)
    _check_usage(args, single)
    sources = batch.discover(args.paths)
    dest = destinations(args, sources)
    dot_prefix = ((args.dot[:-4] if args.dot.endswith(".dot") else args.dot) + "_"
                  if args.dot else None)
    kwargs = {"explain": args.explain, "dot_prefix": dot_prefix, "canonical": args.canonical}
    if single:
        (res,) = batch.run(sources, jobs=1, timeout=args.timeout, work_kwargs=kwargs)
        write(res, dest.get(res.path), args.in_place)
        if not res.ok:
            raise CliError(f"error: {res.error}")
        to_stdout = not dest and not args.check and not args.json
        if to_stdout:
            sys.stdout.write(res.output)
        if args.explain:
            print(res.explain, file=sys.stderr if to_stdout or args.json else sys.stdout)
        if args.json:
            print(json.dumps(res.report, indent=2, ensure_ascii=False))
        if args.check and res.changed:
            print(f"{res.path}: would change", file=sys.stderr)
            return 1
        return 0

    def emit(res: FileResult) -> None:
        write(res, dest.get(res.path), args.in_place)
        run.line(res, args.check and res.ok and res.changed)
        if args.explain and res.explain is not None and not args.json:
            print(f"== {res.path} ==\n{res.explain}", flush=True)

    with Run("optimize", args, sources) as run:
        results = batch.run(sources, jobs=args.jobs, timeout=args.timeout, work_kwargs=kwargs,
                            on_done=run.done, on_result=emit)
    finish(run, results)
    failed = not all(r.ok for r in results) or (args.check and any(r.changed for r in results))
    return int(failed)


def add_optimize(sub: argparse._SubParsersAction) -> None:
    p = add_batch_command(sub, "optimize", _optimize,
                          help="canonicalize every tile.slice (e-graph optimizer)",
                          description="Optimize kernels: every tile.slice becomes a proven "
                          "zero-copy view, a folded extract index, or an explicit tile.extract. "
                          "One input prints the program (or writes -o FILE); several need "
                          "--out-dir, --in-place, --check, --json or --explain.")
    where = p.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="OUT.py", help="write the program here (one input)")
    where.add_argument("--out-dir", metavar="DIR",
                       help="write each program under DIR, mirroring each folder's tree")
    where.add_argument("--in-place", action="store_true",
                       help="rewrite each file that optimizing changes")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if optimizing would change a file")
    p.add_argument("--explain", action="store_true",
                   help="say, for every slice use, what was decided and why")
    p.add_argument("--canonical", action="store_true",
                   help="reprint the whole program in canonical form instead of editing only "
                   "the statements the optimizer changes")
    p.add_argument("--dot", metavar="FILE",
                   help="write each function's saturated e-graph as Graphviz (FILE_<fn>.dot; "
                   "one input)")


def add_nki(sub: argparse._SubParsersAction) -> None:
    from .nki.command import add_parser

    add_parser(sub, CliError)


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [add_check, add_optimize, add_nki]


def version_text() -> str:
    v = batch.versions()
    return f"egraph-tiles {v['egraph_tiles']} (egglog {v['egglog']})"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="egraph-tiles",
                                     description="Equality-saturation optimizer for NPU tile programs.")
    parser.add_argument("--version", action="version", version=version_text())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # --help / --version (0) and argparse's usage errors (2)
        return int(e.code or 0)
    try:
        return int(args.handler(args) or 0)
    except UsageError as e:
        print(f"egraph-tiles {args.command}: error: {e}", file=sys.stderr)
        return 2
    except CliError as e:
        print(str(e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # the worker processes are already stopped
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
