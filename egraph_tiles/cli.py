"""The ``egraph-tiles`` command line: a thin layer over :mod:`egraph_tiles.batch`.

Subcommands are registered in :data:`COMMANDS`: each entry is a function that adds one
subparser and sets its ``handler`` (a function of the parsed args returning an exit
code). To add a subcommand, write ``def add_x(sub): p = sub.add_parser("x", ...);
p.set_defaults(handler=...)`` and append it to ``COMMANDS``.

Exit status, the same for every command: 0 success; 1 a file failed to read, parse, verify or
optimize, no kernel was found, or (``optimize --check``) a file would change; 2 a usage error
(raise :class:`UsageError`).  A closed output pipe or Ctrl-C ends the run without a traceback.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
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


class NothingToDo(Exception):
    """``--kernels-only`` and none of the files is a kernel: exit status 0."""


# --------------------------------------------------------------------------- configuration

#: ``[tool.egraph-tiles]`` keys: what each must be, and the option it sets
CONFIG_KEYS = {"jobs": int, "timeout": (int, float), "exclude": list, "canonical": bool,
               "cache": bool}


def find_config(start: Path) -> tuple[Path | None, dict]:
    """The nearest ``pyproject.toml`` at or above ``start`` and its ``[tool.egraph-tiles]``
    table (as ruff finds its settings); ``(None, {})`` when there is none.  The folder of the
    nearest ``pyproject.toml`` is also where the result cache lives."""
    import tomllib

    here = start.resolve()
    for d in [here, *here.parents] if here.is_dir() else here.parents:
        f = d / "pyproject.toml"
        if f.is_file():
            try:
                data = tomllib.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise UsageError(f"{f}: cannot read its configuration ({e})") from None
            table = data.get("tool", {}).get("egraph-tiles", {})
            for k, v in table.items():
                kind = CONFIG_KEYS.get(k)
                if kind is None:
                    raise UsageError(f"{f}: [tool.egraph-tiles] has no setting {k!r} (known: "
                                     + ", ".join(CONFIG_KEYS) + ")")
                if not isinstance(v, kind) or isinstance(v, bool) and kind is not bool:
                    raise UsageError(f"{f}: [tool.egraph-tiles] {k} = {v!r} has the wrong type")
            return f, table
    return None, {}


def apply_config(args: argparse.Namespace) -> None:
    """Fill every option the command line left unset from ``[tool.egraph-tiles]``."""
    first = next((p for p in args.paths if p != batch.STDIN), ".")
    args.config, table = find_config(Path(first))
    if args.jobs is None and "jobs" in table:
        args.jobs = _positive(int)(str(table["jobs"]))
    if args.timeout is None and "timeout" in table:
        args.timeout = _positive(float)(str(table["timeout"]))
    args.exclude = list(table.get("exclude", [])) + list(args.exclude or [])
    if getattr(args, "canonical", None) is None:
        args.canonical = bool(table.get("canonical", False))
    if args.cache is None:
        args.cache = bool(table.get("cache", True))


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
    """A many-file subcommand: its parser, with PATH... and the options every one of them
    takes, running ``handler``."""
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
                   help="print one JSON document (schema 1: egraph_tiles/schema.json): one "
                   "entry per file, failures included, and the totals")
    p.add_argument("--exclude", action="append", metavar="GLOB",
                   help="in folders, skip files whose path under the folder (or one of its "
                   "parts) matches GLOB (repeatable)")
    noise = p.add_mutually_exclusive_group()
    noise.add_argument("-q", "--quiet", action="store_true",
                       help="print only errors and files that would change")
    noise.add_argument("-v", "--verbose", action="store_true",
                       help="also a line per file (cache hits marked) and the summary for "
                       "one file")
    p.add_argument("--kernels-only", action="store_true",
                   help="skip files given by name that hold no @pl.program, as in folders "
                   "(for pre-commit, which passes every staged .py file); finding no kernel "
                   "is then not an error")
    p.add_argument("--no-cache", dest="cache", action="store_false", default=None,
                   help=f"do not read or write the result cache ({batch.CACHE_DIR}/ beside "
                   "the nearest pyproject.toml)")
    return p


def is_single(args: argparse.Namespace) -> bool:
    """One file or standard input (not a folder): the one-file behaviour applies."""
    return len(args.paths) == 1 and not Path(args.paths[0]).is_dir()


def discover(args: argparse.Namespace, skip: list[str] | None = None) -> list[Source]:
    """The sources of ``args.paths``; "no kernel found" is an error (a mistyped path must
    not pass)."""
    sources = batch.discover(args.paths, exclude=args.exclude, skip=skip or [])
    if args.kernels_only:
        sources = [s for s in sources if s.text is None or s.rel is None
                   or batch.PROGRAM_MARK.search(s.text)]
        if not sources:
            raise NothingToDo()
    if not sources:
        where = ", ".join(args.paths)
        raise CliError(f"error: {where}: no kernel found (no .py file holding a @pl.program"
                       + (" outside the excluded paths" if args.exclude else "") + ")")
    return sources


def cache_for(args: argparse.Namespace, command: str) -> batch.Cache | None:
    if not args.cache or args.config is None:
        return None
    return batch.Cache(args.config.parent / batch.CACHE_DIR, command)


class Out:
    """Lines for the user on stderr: colour on a terminal (rich; ``NO_COLOR`` respected),
    plain text otherwise."""

    STYLES = {"error": "bold red", "would change": "yellow", "rewritten": "cyan",
              "note": "magenta", "ok": "green"}

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.console = None
        if self.tty:
            from rich.console import Console
            self.console = Console(stderr=True, highlight=False, soft_wrap=True)

    def say(self, text: str, kind: str | None = None, source: str | None = None,
            col: int | None = None) -> None:
        """One message; ``source`` (the user's line) and ``col`` add the line and a caret."""
        extra = ""
        if source is not None:
            extra = f"\n    {source.rstrip()}"
            if col:
                extra += "\n    " + " " * (col - 1) + "^"
        if self.console is not None:
            from rich.text import Text
            t = Text(text)
            if kind in self.STYLES:
                head = text.find(kind)
                if text.startswith(kind):
                    t.stylize(self.STYLES[kind], 0, len(kind))
                elif head >= 0 and text.endswith(kind):
                    t.stylize(self.STYLES[kind], head, len(text))
            t.append(extra, style="dim")
            self.console.print(t)
        else:
            print(text + extra, file=sys.stderr, flush=True)


class Run:
    """Feedback while a batch runs, on stderr: a rich progress bar on a terminal (plus the
    lines worth reading: errors, files that would change), one plain line per file otherwise;
    then the summary table."""

    def __init__(self, command: str, args: argparse.Namespace, sources: list[Source]):
        self.command, self.args, self.n = command, args, len(sources)
        self.out = Out()
        self.tty = self.out.tty
        self.single = is_single(args)
        self.progress = None
        self.t0 = time.perf_counter()

    def __enter__(self) -> Run:
        if self.tty and not self.single and not self.args.quiet:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn)

            self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                     MofNCompleteColumn(), TimeElapsedColumn(),
                                     console=self.out.console, transient=False)
            self.task = self.progress.add_task(self.command, total=self.n)
            self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()

    def done(self, res: FileResult) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)

    def line(self, res: FileResult, would_change: bool, wrote: bool = False) -> None:
        a = self.args
        if not res.ok:
            self.out.say(f"error: {res.error}", "error",
                         None if a.quiet else res.source, res.col)
        elif would_change:
            self.out.say(f"{res.path}: would change", "would change")
        elif wrote and getattr(a, "in_place", False) and not a.quiet:
            self.out.say(f"{res.path}: rewritten", "rewritten")
        elif a.verbose or (not self.tty and not self.single and not a.quiet):
            self.out.say(f"{res.path}: ok" + (" (cached)" if res.cached and a.verbose else ""),
                         "ok")
        if res.note and not a.quiet:  # reprinted, not edited: say why
            self.out.say(f"note: {res.path}: {res.note}", "note")

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


def batch_json(command: str, results: list[FileResult], seconds: float) -> str:
    doc = batch.document(command, [r.to_json() for r in results], seconds,
                         batch.totals(results, seconds))
    return json.dumps(doc, indent=2, ensure_ascii=False)


def finish(run: Run, results: list[FileResult]) -> None:
    """After a batch: the JSON document on stdout (``--json``), the summary table on stderr
    (several files, or ``--verbose``; never ``--quiet``)."""
    seconds = run.seconds()
    if run.args.json:
        print(batch_json(run.command, results, seconds), flush=True)
    if run.args.verbose or not (run.single or run.args.quiet):
        sys.stderr.write(summary_table(batch.totals(results, seconds)))


# --------------------------------------------------------------------------- check


def _check(args: argparse.Namespace) -> int:
    apply_config(args)
    sources = discover(args)
    with Run("check", args, sources) as run:
        results = batch.run(sources, jobs=1 if run.single else args.jobs, timeout=args.timeout,
                            on_done=run.done, on_result=lambda r: run.line(r, False),
                            cache=cache_for(args, "check"),
                            work_kwargs={"canonical": args.canonical})
    finish(run, results)
    return int(not all(r.ok for r in results))


def add_check(sub: argparse._SubParsersAction) -> None:
    p = add_batch_command(sub, "check", _check,
                          help="parse, verify and optimize kernels without writing them",
                          description="Parse, verify and optimize every kernel under PATH... "
                          "and write nothing: errors as file:line:col: message. Exit status 1 "
                          "when a file fails to parse, verify or optimize or no kernel is "
                          "found, 2 on a usage error.")
    p.set_defaults(canonical=None)


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
        if not args.in_place and s.file is not None and d.resolve() == s.file.resolve():
            raise UsageError(f"--out-dir {args.out_dir} would write over the input {s.path}; "
                             "use --in-place to rewrite inputs")
        taken[d], dest[s.path] = s.path, d
    return dest


def _check_usage(args: argparse.Namespace, single: bool) -> None:
    writes = [f for f, on in (("-o", args.output), ("--out-dir", args.out_dir),
                              ("--in-place", args.in_place)) if on]
    if args.check and writes:
        raise UsageError(f"--check writes nothing: drop {writes[0]}")
    if args.diff and writes:
        raise UsageError(f"--diff writes nothing: drop {writes[0]}")
    if args.diff and args.json:
        raise UsageError("--diff and --json both print on standard output: choose one")
    if batch.STDIN in args.paths and (args.out_dir or args.in_place):
        raise UsageError("standard input has no file to write: use -o FILE or stdout")
    if args.output and batch.STDIN not in args.paths:
        ins = [Path(p).resolve() for p in args.paths]
        if Path(args.output).resolve() in ins:
            raise UsageError(f"-o {args.output} names the input: use --in-place to rewrite it")
    if not single:
        if args.output:
            raise UsageError("-o takes one input file; for several use --out-dir DIR or --in-place")
        if args.dot:
            raise UsageError("--dot takes one input file")
    for dest in (args.output, args.dot):
        if dest and not Path(dest).resolve().parent.is_dir():
            raise CliError(f"error: {dest}: directory {Path(dest).parent} does not exist")


def _check_several(args: argparse.Namespace, single: bool) -> None:
    """Several inputs (once they are found: an empty folder is "no kernel found", not this)."""
    if not single and not (args.out_dir or args.in_place or args.check or args.diff
                           or args.json or args.explain):
        raise UsageError("several inputs: write them with --out-dir DIR or --in-place, or "
                         "only report with --check, --diff, --json or --explain")


def write(res: FileResult, dest: Path | None, in_place: bool) -> bool:
    """Write a result's program to ``dest`` (in place: only when it changed); a failure to
    write makes the result an error.  Whether it wrote."""
    if dest is None or not res.ok or (in_place and not res.changed):
        return False
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(res.output, encoding="utf-8")
    except OSError as e:
        res.fail("write", f"{dest}: cannot write ({e})")
        return False
    return True


def unified_diff(res: FileResult, text: str) -> str:
    """The change as a unified diff ``patch -p0`` applies (both names: the file's path)."""
    name = res.path if res.path != "<stdin>" else "-"
    a, b = text.splitlines(keepends=True), res.output.splitlines(keepends=True)
    lines = []
    for line in difflib.unified_diff(a, b, name, name):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


def _optimize(args: argparse.Namespace) -> int:
    apply_config(args)
    single = is_single(args)
    skip = [args.out_dir] if args.out_dir else []
    for p in args.paths if args.out_dir else []:
        if p != batch.STDIN and Path(p).resolve().is_relative_to(Path(args.out_dir).resolve()):
            raise UsageError(f"--out-dir {args.out_dir} holds the input {p}: the output would "
                             "write over it (use --in-place to rewrite inputs)")
    _check_usage(args, single)
    sources = discover(args, skip)
    _check_several(args, single)
    dest = destinations(args, sources)
    texts = {s.path: s.text for s in sources}
    kwargs = {"explain": args.explain, "dot": args.dot, "canonical": args.canonical}
    to_stdout = single and not dest and not (args.check or args.json or args.diff)

    def emit(res: FileResult) -> None:
        wrote = write(res, dest.get(res.path), args.in_place)
        run.line(res, args.check and res.ok and res.changed, wrote)
        if res.ok and to_stdout:
            sys.stdout.write(res.output)
            sys.stdout.flush()
        if res.ok and args.diff and res.changed:
            sys.stdout.write(unified_diff(res, texts[res.path]))
            sys.stdout.flush()
        if args.explain and res.explain is not None and not args.json:
            text = res.explain if single else f"== {res.path} ==\n{res.explain}"
            print(text, file=sys.stderr if to_stdout or args.diff else sys.stdout, flush=True)

    with Run("optimize", args, sources) as run:
        results = batch.run(sources, jobs=1 if single else args.jobs, timeout=args.timeout,
                            work_kwargs=kwargs, on_done=run.done, on_result=emit,
                            cache=cache_for(args, "optimize"))
    finish(run, results)
    failed = not all(r.ok for r in results) or (args.check and any(r.changed for r in results))
    return int(failed)


def add_optimize(sub: argparse._SubParsersAction) -> None:
    p = add_batch_command(sub, "optimize", _optimize,
                          help="canonicalize every tile.slice (e-graph optimizer)",
                          description="Optimize kernels: every tile.slice becomes a proven "
                          "zero-copy view, a folded extract index, or an explicit tile.extract. "
                          "Only the statements the optimizer changes are edited; every other "
                          "byte of the file stays as written. One input prints the program (or "
                          "writes -o FILE); several need --out-dir, --in-place, --check, "
                          "--diff, --json or --explain.")
    where = p.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="OUT.py",
                       help="write the program here (one input; not the input itself)")
    where.add_argument("--out-dir", metavar="DIR",
                       help="write each program under DIR, mirroring each folder's tree (DIR "
                       "is never read as input)")
    where.add_argument("--in-place", action="store_true",
                       help="rewrite each file that optimizing changes")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if optimizing would change a file")
    p.add_argument("--diff", action="store_true",
                   help="write nothing; print what would change as a unified diff (patch -p0 "
                   "applies it)")
    p.add_argument("--explain", action="store_true",
                   help="say, for every slice use, what was decided and why (file:line:col)")
    p.add_argument("--canonical", action="store_true", default=None,
                   help="reprint the whole program in canonical form instead of editing only "
                   "the statements the optimizer changes")
    p.add_argument("--dot", metavar="FILE",
                   help="write the saturated e-graph as Graphviz to FILE (one graph per "
                   "function; one input)")


# --------------------------------------------------------------------------- nki

def _nki_usage(args: argparse.Namespace) -> None:
    """The nki options a run cannot use are usage errors (exit 2), as for every command."""
    from .nki import command

    command.kernel_path(args, UsageError)  # the kernel path, wherever it was given
    if args.output and not args.migrate:
        raise UsageError("-o/--output needs --migrate")
    command.run_options(args, UsageError)


def add_nki(sub: argparse._SubParsersAction) -> None:
    from .nki.command import add_parser

    add_parser(sub, CliError)
    p = sub.choices["nki"]
    run = p.get_default("handler")

    def handler(args: argparse.Namespace) -> int:
        _nki_usage(args)
        try:
            return run(args)
        except CliError as e:
            if not args.json:
                raise
            msg = str(e).removeprefix("error: ")
            res = FileResult(args.file)
            res.fail("read" if "no such file" in msg or "cannot read" in msg else "nki", msg)
            entry = res.to_json()
            print(json.dumps(batch.document("nki", [entry], 0.0), indent=2, ensure_ascii=False))
            return 1

    p.set_defaults(handler=handler)


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


def _silence_stdout() -> None:
    """After a closed pipe: send what is left to /dev/null, so the interpreter's final flush
    does not fail with a second traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as e:  # --help / --version (0) and argparse's usage errors (2)
            return int(e.code or 0)
        try:
            return int(args.handler(args) or 0)
        except UsageError as e:
            msg = str(e).removeprefix("error: ")
            print(f"egraph-tiles {args.command}: error: {msg}", file=sys.stderr)
            return 2
        except NothingToDo:
            return 0
        except CliError as e:
            msg = str(e)
            print(msg if msg.startswith("error:") else f"error: {msg}", file=sys.stderr)
            return 1
    except BrokenPipeError:  # `... | head -1`: the reader is gone; stop quietly
        _silence_stdout()
        return 1
    except KeyboardInterrupt:  # the worker processes are already stopped
        try:
            print("interrupted", file=sys.stderr)
        except OSError:
            pass
        return 130


if __name__ == "__main__":
    sys.exit(main())
