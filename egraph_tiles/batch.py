"""Whole kernel libraries: optimize many files in worker processes, in a stable order.

The engine behind ``egraph-tiles optimize PATH...`` / ``check PATH...`` and
:func:`optimize_files`.  Three steps:

* :func:`discover` turns paths into :class:`Source` s — a file as given, ``-`` for standard
  input, a folder recursively (every ``.py`` file holding a ``@pl.program``, sorted);
* :func:`run` applies a *work* function (by default :func:`optimize_text`) to each source, in
  this process (``jobs=1`` without a timeout) or in ``jobs`` worker processes; a worker that
  runs past ``timeout`` seconds is killed and replaced, so one slow or crashing file never stops
  the others;
* results come back as :class:`FileResult` s in input order, whatever order the workers finish in.

:func:`optimize_text` is the one-file pipeline (parse → verify → optimize → verify → print),
so the text a batch writes is exactly the text a one-file run prints.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import multiprocessing
import os
import re
import signal
import sys
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Callable, Iterable

#: what makes a ``.py`` file in a folder a kernel (a decorated program class)
PROGRAM_MARK = re.compile(r"^\s*@\s*pl\s*\.\s*program\b", re.MULTILINE)

STDIN = "-"

#: decision kinds of the optimizer's report, as the summary counts them ("kept": an extract the
#: saturation did not get to fold, so it still reads the slice in place)
COUNTED = {"view": "view", "kept": "view", "copy": "copy", "fold": "folded"}


@dataclass(frozen=True)
class Source:
    """One input: ``path`` as the user sees it (``<stdin>`` for standard input), ``rel`` its path
    under the folder it was found in (its file name for a file given directly; ``None`` for
    standard input), and its text — or the reason it could not be read."""

    path: str
    rel: Path | None
    text: str | None
    read_error: str | None = None

    @property
    def file(self) -> Path | None:
        return None if self.rel is None else Path(self.path)


@dataclass
class FileResult:
    """What happened to one file.

    ``status`` is ``ok``, ``error`` or ``timeout``; ``stage`` says where an error arose (``read``,
    ``parse``, ``verify``, ``reject`` — the optimizer refused a slice —, ``optimize``, ``timeout``,
    ``crash``).  ``output`` is the optimized program text, ``changed`` whether it differs from the
    input text, ``report`` the optimizer's report (``Report.to_json()``)."""

    path: str
    status: str = "ok"
    stage: str | None = None
    error: str | None = None
    output: str | None = None
    changed: bool = False
    report: dict = field(default_factory=lambda: {"functions": []})
    explain: str | None = None
    seconds: float = 0.0
    #: how ``output`` was made: "edited" (the user's text, changed statements edited) or
    #: "canonical" (the whole program reprinted)
    written: str | None = None
    #: why a file asked to be edited was reprinted instead
    note: str | None = None
    #: where an error is (1-based line and column; None when it has no place in the file), its
    #: message without the location, and the user's line it points at
    line: int | None = None
    col: int | None = None
    message: str | None = None
    source: str | None = None
    #: whether the result came from the cache
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def fail(self, stage: str, error: str, text: str | None = None) -> None:
        """Mark this result failed at ``stage`` with ``error`` (``path[:line[:col]]: ...``);
        with the file's ``text``, the location gains its column and the message quotes the
        user's own statement."""
        self.status = "timeout" if stage == "timeout" else "error"
        self.stage = stage
        self.line, self.col, self.message, self.source = locate(self.path, error, text)
        where = self.path + (f":{self.line}:{self.col}" if self.line else "")
        self.error = f"{where}: {self.message}"

    def errors(self) -> list[dict]:
        """The errors of this file as the JSON document lists them."""
        if self.ok:
            return []
        return [{"stage": self.stage, "message": self.message, "line": self.line,
                 "col": self.col, "source": self.source}]

    def counts(self) -> dict[str, int]:
        """Functions, slice uses decided (view / copy / folded / rejected) and bytes copied."""
        fns = self.report["functions"]
        c = {"functions": len(fns), "view": 0, "copy": 0, "folded": 0,
             "rejected": int(self.stage == "reject"),
             "bytes_before": sum(f["bytes_before"] for f in fns),
             "bytes_after": sum(f["bytes_after"] for f in fns)}
        for f in fns:
            for d in f["decisions"]:
                if d["decision"] in COUNTED:
                    c[COUNTED[d["decision"]]] += 1
        return c

    def to_json(self) -> dict:
        """This file's entry in the JSON document (``egraph_tiles/schema.json``)."""
        d = {"path": self.path, "status": self.status, "stage": self.stage,
             "changed": self.changed, "written": self.written, "note": self.note,
             "errors": self.errors(), "functions": self.report["functions"]}
        d.update({k: v for k, v in self.counts().items() if k != "functions"})
        d["seconds"] = round(self.seconds, 6)
        d["cached"] = self.cached
        if self.explain is not None:
            d["explain"] = self.explain
        return d


SCHEMA_VERSION = 1


def document(command: str, files: list[dict], seconds: float,
             totals_: dict | None = None) -> dict:
    """The one JSON document every command prints with ``--json``: ``schema``, ``command``,
    ``versions``, one entry per file (failures included) and the totals."""
    doc = {"schema": SCHEMA_VERSION, "command": command, "versions": versions(), "files": files}
    doc["totals"] = totals_ if totals_ is not None else {
        "files": len(files), "errors": sum(f["status"] != "ok" for f in files),
        "changed": sum(bool(f.get("changed")) for f in files), "seconds": round(seconds, 3)}
    return doc


def nki_document(path: str, report: dict, findings: list, source: str | None = None) -> dict:
    """``egraph-tiles nki --json``: the common document, its one file entry carrying the NKI
    report (whatever ``nki.command.report_json`` returns) as ``nki`` and each finding as an
    error (its ``kind`` as the stage)."""
    lines = source.splitlines() if source is not None else []
    errors = [{"stage": getattr(f, "kind", "error"), "message": f.message, "line": f.line,
               "col": getattr(f, "col", None),
               "source": lines[f.line - 1] if 0 < (f.line or 0) <= len(lines) else None}
              for f in findings]
    entry = {"path": path, "status": "error" if errors else "ok",
             "stage": "nki" if errors else None, "changed": False, "errors": errors,
             "nki": report}
    return document("nki", [entry], 0.0)


def locate(path: str, error: str, text: str | None
           ) -> tuple[int | None, int | None, str, str | None]:
    """Split ``path:line[:col]: message`` into line, column (1-based; the statement's first
    column when the message names only a line), message and the user's line.  A message that
    quotes a statement as the printer writes it (`` statement `...` ``) quotes the user's text
    instead."""
    m = re.match(re.escape(path) + r":(\d+)(?::(\d+))?: (.*)\Z", error, re.S)
    if m is None:
        msg = error[len(path) + 2:] if error.startswith(path + ": ") else error
        return None, None, msg, None
    line, col, msg = int(m.group(1)), m.group(2), m.group(3)
    lines = text.splitlines() if text is not None else []
    source = lines[line - 1] if 0 < line <= len(lines) else None
    if col is None and source is not None:
        col = len(source) - len(source.lstrip()) + 1
    if source is not None and "statement `" in msg:
        own = source.strip().replace("\\", "\\\\")
        msg = re.sub(r"statement `[^`]*`", lambda _: f"statement `{own}`", msg, count=1)
    return line, int(col) if col else None, msg, source


def explain_text(report: dict, path: str) -> str:
    """``--explain``: per function a summary line, then one line per decision located
    ``path:line:col`` (the column of the slice's name in that statement)."""
    out = []
    for f in report["functions"]:
        head = f"function {f['function']}:"
        if f.get("skipped"):
            out.append(f"{head} {f['skipped']}")
            continue
        out.append(f"{head} {len(f['decisions'])} decision(s); bytes copied {f['bytes_before']}"
                   f" -> {f['bytes_after']} static, {f['dynamic_before']} -> "
                   f"{f['dynamic_after']} dynamic; e-graph {f['enodes']} e-nodes, "
                   f"{f['iterations']} iteration(s), {f['seconds'] * 1000:.1f} ms"
                   + (f"; LIMIT HIT ({f['limit_hit']}): unproven views were copied"
                      if f.get("limit_hit") else ""))
        for d in f["decisions"]:
            where = f"{path}:{d['line']}:{d['col']}: " if d.get("line") else f"{path}: "
            out.append(f"  {where}{d['slice']} as {d['use']}: {d['decision']} — {d['reason']}")
    return "\n".join(out)


def decision_columns(report: dict, text: str) -> None:
    """Give every decision of ``report`` a ``col``: where its slice's name is used on its line
    (after the ``=``), else where the statement starts."""
    lines_ = text.splitlines()
    for f in report["functions"]:
        for d in f["decisions"]:
            line = d.get("line") or 0
            src = lines_[line - 1] if 0 < line <= len(lines_) else None
            if src is None:
                d["col"] = None
                continue
            col = len(src) - len(src.lstrip()) + 1
            if d["decision"] != "dropped":
                eq = src.find("=")
                m = re.compile(rf"\b{re.escape(d['slice'])}\b").search(src, eq + 1 if eq >= 0 else 0)
                if m:
                    col = m.start() + 1
            d["col"] = col


def totals(results: Iterable[FileResult], seconds: float) -> dict:
    """The summary over a batch: files, errors, changed files, and the sums of :meth:`counts`."""
    t = {"files": 0, "errors": 0, "changed": 0, "functions": 0, "view": 0, "copy": 0,
         "folded": 0, "rejected": 0, "bytes_before": 0, "bytes_after": 0}
    for r in results:
        t["files"] += 1
        t["errors"] += not r.ok
        t["changed"] += r.changed
        for k, v in r.counts().items():
            t[k] += v
    t["seconds"] = round(seconds, 3)
    return t


def versions() -> dict[str, str]:
    """The package's and egglog's installed versions."""
    from importlib.metadata import PackageNotFoundError, version

    def v(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "unknown"

    return {"egraph_tiles": v("egraph-tiles"), "egglog": v("egglog")}


# --------------------------------------------------------------------------- cache

#: the folder of the result cache (in the project root; it holds its own ``.gitignore``)
CACHE_DIR = ".egraph_tiles_cache"


def tool_fingerprint() -> str:
    """The versions of this package and egglog, and the size and time of every source file
    of the package (a checkout changes without a new version number)."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256(json.dumps(versions(), sort_keys=True).encode())
    for f in sorted(root.rglob("*")):
        if f.suffix in (".py", ".egg") and "__pycache__" not in f.parts:
            st = f.stat()
            h.update(f"{f.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


class Cache:
    """Results by file content, options and tool: a re-run skips the files that did not change.
    Only files (not standard input) and only results that do not depend on timing (no timeout,
    no crash) are stored.  An unreadable or corrupt entry is a miss."""

    def __init__(self, folder: str | os.PathLike, command: str):
        self.folder = Path(folder) / tool_fingerprint()
        self.command = command

    def key(self, src: Source, kwargs: dict) -> str | None:
        if src.rel is None or src.text is None or kwargs.get("dot"):
            return None
        blob = json.dumps([self.command, src.path, sorted(kwargs.items()), src.text])
        return hashlib.sha256(blob.encode()).hexdigest()

    def lookup(self, src: Source, kwargs: dict) -> FileResult | None:
        k = self.key(src, kwargs)
        if k is None:
            return None
        try:
            d = json.loads((self.folder / f"{k}.json").read_text(encoding="utf-8"))
            res = FileResult(**d)
        except (OSError, ValueError, TypeError):
            return None
        res.cached = True
        return res

    def store(self, src: Source, kwargs: dict, res: FileResult) -> None:
        k = self.key(src, kwargs)
        if k is None or res.status == "timeout" or res.stage in ("crash", "write"):
            return
        d = {f: getattr(res, f) for f in FileResult.__dataclass_fields__ if f != "cached"}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder.parent / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# written by egraph-tiles: its result cache\n*\n")
            tmp = self.folder / f"{k}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(d), encoding="utf-8")
            tmp.replace(self.folder / f"{k}.json")
        except OSError:  # a read-only tree: run without the cache
            pass


# --------------------------------------------------------------------------- discovery


def discover(paths: Iterable[str], stdin=None, exclude: Iterable[str] = (),
             skip: Iterable[str | os.PathLike] = ()) -> list[Source]:
    """Sources for ``paths`` in order: files as given, ``-`` as standard input (read from
    ``stdin``, default ``sys.stdin``), folders recursively (sorted; hidden folders skipped; only
    ``.py`` files holding ``@pl.program``).  A path given twice is read once.  In folders, files
    matching a glob of ``exclude`` (against the path under the folder, or any one of its
    parts) and everything under a folder of ``skip`` (an output folder) are left out."""
    out: list[Source] = []
    seen: set[Path] = set()
    pats = list(exclude)
    skipped = [Path(d).resolve() for d in skip]

    def add(src: Source) -> None:
        key = Path(src.path).resolve()
        if key not in seen:
            seen.add(key)
            out.append(src)

    def excluded(rel: Path) -> bool:
        text = rel.as_posix()
        return any(fnmatch.fnmatchcase(text, p) or any(fnmatch.fnmatchcase(part, p)
                                                        for part in rel.parts) for p in pats)

    for p in paths:
        if p == STDIN:
            out.append(Source("<stdin>", None, (stdin or sys.stdin).read()))
        elif Path(p).is_dir():
            root = Path(p)
            for f in sorted(root.rglob("*.py")):
                rel = f.relative_to(root)
                if any(part.startswith(".") for part in rel.parts[:-1]) or not f.is_file() \
                        or excluded(rel):
                    continue
                if skipped and any(f.resolve().is_relative_to(d) for d in skipped):
                    continue
                src = _read(str(f), rel)
                if src.text is None or PROGRAM_MARK.search(src.text):  # unreadable: reported
                    add(src)
        else:
            add(_read(p, Path(Path(p).name)))
    return out


def _read(path: str, rel: Path) -> Source:
    try:
        return Source(path, rel, Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Source(path, rel, None, f"{path}: no such file")
    except (OSError, UnicodeDecodeError) as e:
        return Source(path, rel, None, f"{path}: cannot read ({e})")


# --------------------------------------------------------------------------- one file


def optimize_text(path: str, text: str, *, explain: bool = False,
                  dot: str | None = None, canonical: bool = False) -> FileResult:
    """The one-file pipeline on ``text``: parse, verify, optimize, verify the result, write it
    back.  The output is ``text`` with only the statements the pass changed edited
    (:func:`~egraph_tiles.dsl.edit.edit_source`), or with ``canonical`` the whole program
    reprinted by the canonical printer (also the fallback when the change cannot be written as
    edits; ``res.written`` says which).  ``dot``: write the saturated e-graphs there (one
    Graphviz file; one graph per function).  Every failure becomes an error result (egglog
    panics included); nothing is raised."""
    from .dsl import DslError, parse_program, print_program
    from .ir.verify import verify_program
    from .passes import Options, Report, optimize
    from .dsl.edit import EditError, edit_source

    t0 = time.perf_counter()
    res = FileResult(path)
    stage = "parse"
    try:
        prog = parse_program(text, filename=path)
        stage = "verify"
        prog = verify_program(prog)
        stage = "optimize"
        report = Report()
        with _dot_file(dot) as dot_prefix:
            out = optimize(prog, options=Options(dot_prefix=dot_prefix), report=report)
        out = verify_program(out)
        if not canonical:
            try:
                res.output, res.written = edit_source(text, prog, out, path), "edited"
            except EditError as e:
                res.note = f"rewritten by the canonical printer: {e}"
        if res.output is None:
            res.output, res.written = print_program(out), "canonical"
        res.changed = res.output != text
        res.report = report.to_json()
        decision_columns(res.report, text)
        res.explain = explain_text(res.report, path) if explain else None
    except (KeyboardInterrupt, SystemExit):
        raise
    except DslError as e:
        res.fail("parse", str(e), text)
    except ValueError as e:
        msg = str(e)
        if stage == "optimize" and not msg.startswith("the e-graph failed"):
            stage = "reject"
        res.fail(stage, msg if msg.startswith(path) else f"{path}: {msg}", text)
    except OSError as e:  # the --dot file
        res.fail("write", f"{path}: {e}")
    except BaseException as e:  # an egglog panic is a BaseException; report it, never crash
        res.fail("crash", f"{path}: {type(e).__name__}: {e}")
    res.seconds = time.perf_counter() - t0
    return res


@contextmanager
def _dot_file(dot: str | None):
    """The pass writes one ``<prefix><function>.dot`` per function: let it write into a
    scratch folder, then join them into the one file the user named."""
    if dot is None:
        yield None
        return
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        yield os.path.join(tmp, "g_")
        parts = [Path(tmp, f).read_text(encoding="utf-8") for f in sorted(os.listdir(tmp))]
        Path(dot).write_text("".join(parts), encoding="utf-8")


# --------------------------------------------------------------------------- many files

Work = Callable[..., FileResult]


def default_jobs() -> int:
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def run(sources: list[Source], *, jobs: int | None = None, timeout: float | None = None,
        work: Work = optimize_text, work_kwargs: dict | None = None,
        on_result: Callable[[FileResult], None] | None = None,
        on_done: Callable[[FileResult], None] | None = None,
        cache: Cache | None = None) -> list[FileResult]:
    """Apply ``work(path, text, **work_kwargs)`` to every readable source.

    ``jobs=1`` without a ``timeout`` runs in this process; otherwise in ``jobs`` worker processes
    (``spawn``: a fresh interpreter each, so nothing of this process's state leaks in; ``work``
    must be a module-level function).  ``on_done`` sees each result as soon as it is ready (for a
    progress bar), ``on_result`` sees them in input order.  With a ``cache``, a file whose result
    is stored there (same text, options and tool) is not optimized again.  Returns the results
    in input order."""
    kwargs = work_kwargs or {}
    results: list[FileResult | None] = [None] * len(sources)
    emitted = 0

    def done(i: int, res: FileResult) -> None:
        nonlocal emitted
        results[i] = res
        if cache is not None and not res.cached:
            cache.store(sources[i], kwargs, res)
        if on_done:
            on_done(res)
        while emitted < len(results) and results[emitted] is not None:
            if on_result:
                on_result(results[emitted])
            emitted += 1

    todo = []
    for i, s in enumerate(sources):
        if s.text is None:
            res = FileResult(s.path)
            res.fail("read", s.read_error or f"{s.path}: cannot read")
            done(i, res)
        elif cache is not None and (hit := cache.lookup(s, kwargs)) is not None:
            done(i, hit)
        else:
            todo.append(i)
    jobs = max(1, min(jobs or default_jobs(), len(todo) or 1))
    if jobs == 1 and timeout is None:
        for i in todo:
            done(i, work(sources[i].path, sources[i].text, **kwargs))
    elif todo:
        _Pool(jobs, timeout, work, kwargs).run(
            [(i, sources[i].path, sources[i].text) for i in todo], done)
    return results  # type: ignore[return-value]


def optimize_files(paths: str | os.PathLike | Iterable[str | os.PathLike], *,
                   jobs: int | None = None, timeout: float | None = None, explain: bool = False,
                   canonical: bool = False) -> list[FileResult]:
    """Optimize every kernel under ``paths`` (one path or several: files, folders searched
    recursively for ``.py`` files holding ``@pl.program``, ``"-"`` for standard input) with
    ``jobs`` worker processes (default: the number of cores) and at most ``timeout`` seconds per
    file.  Returns one :class:`FileResult` per file, in input order; nothing is written.  Safe
    to call from a script without an ``if __name__ == "__main__":`` guard: the workers never
    run the calling script."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]  # one path, not the characters of one
    sources = discover([os.fsdecode(p) for p in paths])
    return run(sources, jobs=jobs, timeout=timeout,
               work_kwargs={"explain": explain, "canonical": canonical})


@contextmanager
def _main_hidden(work: Work):
    """While a worker starts: hide the calling script from ``spawn``, which would otherwise
    re-run it in the worker (a script without a ``__main__`` guard then starts workers of its
    own and dies).  Only when ``work`` does not itself live in that script."""
    main = sys.modules.get("__main__")
    if main is None or getattr(work, "__module__", None) == "__main__":
        yield
        return
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


def _worker(conn, work: Work, kwargs: dict) -> None:
    """A worker process: say it is ready, then answer ``(index, path, text)`` tasks until ``None``."""
    try:
        conn.send(None)
        while (task := conn.recv()) is not None:
            i, path, text = task
            try:
                res = work(path, text, **kwargs)
            except Exception as e:  # a work function that raises must not take the batch down
                res = FileResult(path)
                res.fail("crash", f"{path}: {type(e).__name__}: {e}")
            conn.send((i, res))
    except (KeyboardInterrupt, EOFError, OSError):  # the parent stopped: leave quietly
        return


@contextmanager
def _sigint_ignored():
    """While a worker starts: Ctrl-C ignored, a disposition the worker inherits (Python keeps
    an ignored SIGINT ignored), so a Ctrl-C reaches only this process, which stops the workers
    — no traceback from each of them."""
    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


@dataclass
class _Slot:
    proc: multiprocessing.process.BaseProcess
    task: tuple | None = None
    started: float = 0.0


class _Pool:
    """``jobs`` worker processes fed one task at a time; a worker past its deadline (or dead)
    is replaced and its task reported as ``timeout`` (or ``crash``)."""

    def __init__(self, jobs: int, timeout: float | None, work: Work, kwargs: dict):
        self.ctx = multiprocessing.get_context("spawn")
        self.jobs, self.timeout, self.work, self.kwargs = jobs, timeout, work, kwargs
        self.slots: dict = {}  # connection -> _Slot

    def _start(self) -> None:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child, self.work, self.kwargs), daemon=True)
        with _main_hidden(self.work), _sigint_ignored():
            proc.start()
        child.close()
        self.slots[parent] = _Slot(proc)

    def _retire(self, conn) -> _Slot:
        slot = self.slots.pop(conn)
        if slot.proc.is_alive():
            slot.proc.kill()
        slot.proc.join()
        conn.close()
        return slot

    def run(self, tasks: list[tuple], done: Callable[[int, FileResult], None]) -> None:
        queue = deque(tasks)
        left = len(tasks)
        try:
            for _ in range(min(self.jobs, left)):
                self._start()
            while left:
                for conn in wait(list(self.slots), timeout=self._wait_time()):
                    slot = self.slots[conn]
                    try:
                        msg = conn.recv()
                    except (EOFError, OSError):  # the worker died
                        self._retire(conn)
                        if slot.task is None:
                            raise RuntimeError("a worker process died while starting") from None
                        i, path, _ = slot.task
                        left -= 1
                        res = FileResult(path)
                        res.fail("crash", f"{path}: the worker process died "
                                            f"(exit code {slot.proc.exitcode})")
                        done(i, res)
                        if queue:
                            self._start()
                        continue
                    if msg is not None:
                        left -= 1
                        done(*msg)
                    slot.task = None
                    if queue:
                        slot.task, slot.started = queue.popleft(), time.monotonic()
                        conn.send(slot.task)
                left -= self._expire(queue, done)
        finally:
            for conn in list(self.slots):
                try:
                    conn.send(None)
                except OSError:
                    pass
            for conn in list(self.slots):
                self.slots[conn].proc.join(timeout=1)
                self._retire(conn)

    def _wait_time(self) -> float | None:
        if self.timeout is None:
            return None
        busy = [s.started for s in self.slots.values() if s.task is not None]
        if not busy:
            return None
        return max(0.0, min(busy) + self.timeout - time.monotonic())

    def _expire(self, queue: deque, done: Callable[[int, FileResult], None]) -> int:
        """Kill the workers past their deadline; report their tasks; return how many."""
        if self.timeout is None:
            return 0
        now, n = time.monotonic(), 0
        for conn, slot in list(self.slots.items()):
            if slot.task is not None and now - slot.started >= self.timeout:
                i, path, _ = slot.task
                self._retire(conn)
                res = FileResult(path, seconds=now - slot.started)
                res.fail("timeout", f"{path}: timed out after {self.timeout:g} s")
                done(i, res)
                n += 1
                if queue:
                    self._start()
        return n
