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

import multiprocessing
import os
import re
import sys
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
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

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def fail(self, stage: str, error: str) -> None:
        """Mark this result failed at ``stage`` with ``error`` (``path: ...``)."""
        self.status = "timeout" if stage == "timeout" else "error"
        self.stage, self.error = stage, error

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
        d = asdict(self)
        del d["output"]
        if self.explain is None:
            del d["explain"]
        d.update(self.counts())
        return d


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


# --------------------------------------------------------------------------- discovery


def discover(paths: Iterable[str], stdin=None) -> list[Source]:
    """Sources for ``paths`` in order: files as given, ``-`` as standard input (read from
    ``stdin``, default ``sys.stdin``), folders recursively (sorted; hidden folders skipped; only
    ``.py`` files holding ``@pl.program``).  A path given twice is read once."""
    out: list[Source] = []
    seen: set[Path] = set()

    def add(src: Source) -> None:
        key = Path(src.path).resolve()
        if key not in seen:
            seen.add(key)
            out.append(src)

    for p in paths:
        if p == STDIN:
            out.append(Source("<stdin>", None, (stdin or sys.stdin).read()))
        elif Path(p).is_dir():
            root = Path(p)
            for f in sorted(root.rglob("*.py")):
                rel = f.relative_to(root)
                if any(part.startswith(".") for part in rel.parts[:-1]) or not f.is_file():
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
                  dot_prefix: str | None = None, canonical: bool = False) -> FileResult:
    """The one-file pipeline on ``text``: parse, verify, optimize, verify the result, write it
    back.  The output is ``text`` with only the statements the pass changed edited
    (:func:`~egraph_tiles.dsl.edit.edit_source`), or with ``canonical`` the whole program
    reprinted by the canonical printer (also the fallback when the change cannot be written as
    edits; ``res.written`` says which).  Every failure becomes an error result (egglog panics
    included); nothing is raised."""
    from . import DslError, Options, Report, optimize, parse_program, print_program, verify_program
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
        res.explain = report.explain() if explain else None
    except (KeyboardInterrupt, SystemExit):
        raise
    except DslError as e:
        res.fail("parse", str(e))
    except ValueError as e:
        msg = str(e)
        if stage == "optimize" and not msg.startswith("the e-graph failed"):
            stage = "reject"
        res.fail(stage, msg if msg.startswith(path) else f"{path}: {msg}")
    except BaseException as e:  # an egglog panic is a BaseException; report it, never crash
        res.fail("crash", f"{path}: {type(e).__name__}: {e}")
    res.seconds = time.perf_counter() - t0
    return res


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
        on_done: Callable[[FileResult], None] | None = None) -> list[FileResult]:
    """Apply ``work(path, text, **work_kwargs)`` to every readable source.

    ``jobs=1`` without a ``timeout`` runs in this process; otherwise in ``jobs`` worker processes
    (``spawn``: a fresh interpreter each, so nothing of this process's state leaks in; ``work``
    must be a module-level function).  ``on_done`` sees each result as soon as it is ready (for a
    progress bar), ``on_result`` sees them in input order.  Returns the results in input order."""
    kwargs = work_kwargs or {}
    results: list[FileResult | None] = [None] * len(sources)
    emitted = 0

    def done(i: int, res: FileResult) -> None:
        nonlocal emitted
        results[i] = res
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
    conn.send(None)
    while (task := conn.recv()) is not None:
        i, path, text = task
        try:
            res = work(path, text, **kwargs)
        except Exception as e:  # a work function that raises must not take the batch down
            res = FileResult(path)
            res.fail("crash", f"{path}: {type(e).__name__}: {e}")
        conn.send((i, res))


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
        with _main_hidden(self.work):
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
