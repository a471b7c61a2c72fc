"""Rulesets, the saturation schedule and its limits.

Schedule: load the program; the rules that create new index and window terms (:data:`TERMS`)
run once per iteration until they change nothing, under limits (iterations, e-nodes, seconds);
then the other rulesets (:data:`FACTS`) reach their fixpoint one after the other, in the order
they feed each other (never limited: none creates an index or window term, so they terminate),
and one run of every ruleset checks that nothing is left.  When a limit is hit before that, the
:data:`FACTS` are still derived to their fixpoint over the terms made so far (a limit bounds the
terms, not the proofs over them).  Soundness never depends on
saturation: every union a rule adds is a proven equality, and a view (``Keep`` of a window) is
only ever added by a proof in ``rules.legality`` — so a partially saturated e-graph can only
contain *fewer* views, and the safe forms (copies) exist whenever saturation stops.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from .bindings import eb
from .extract import RootTree, Shape
from .sexp import parse_sexps

from egraph_tiles.rules import (calls, checks, hoist, layout, legality, multiples, offsets, slices, sorts,
                                windows)

SPAN = eb.RustSpan("", 0, 0)
RULESETS = ("offsets", "slices", "multiples", "frames", "layout", "safe", "legality", "views",
            "proven", "demand", "invariance", "hoist")
#: the rulesets that create new index or window terms (peeled windows, folded offsets): run once
#: per limited iteration, so a limit bounds how many terms they make
TERMS = ("slices", "offsets")
#: the others, ``(ruleset, saturated)`` in the order they feed each other: each reads only terms
#: (fixed once ``TERMS`` change nothing) and the facts of the rulesets before it, so bringing each
#: to its fixpoint once, in this order, reaches the fixpoint of them all.  A ruleset whose rules
#: read a fact they (or their ruleset) derive — a chain: multiples up an ``Add`` tree, layout facts
#: down a window of a window, invariance demanded down and proven up an offset — is saturated; one
#: whose rules read only earlier rulesets' facts and the terms reaches its fixpoint in one run (its
#: unions join ``Real`` classes only, which no rule of it matches on anew), so it runs once: a
#: saturation would run it a second time only to find nothing (the ``legality`` rules
#: that read ``IdentityCopy`` / ``Dense`` (``views``) or a proven ``Keep`` (``proven``), and
#: ``hoist``'s ``demand`` and ``invariance``, are rulesets of their own for this).  None creates
#: an index or window term (only ``Real`` forms and facts over existing terms), so each saturation
#: terminates.  (Running every ruleset once per iteration instead, re-run on each iteration's
#: new tuples, took 6 iterations at 1,000 statements and ~15% more time.)
FACTS = (("multiples", True), ("frames", True), ("layout", True), ("safe", False), ("legality", False),
         ("views", False), ("proven", False), ("demand", True), ("invariance", True),
         ("hoist", False))
#: one command batch stays small (one huge command exhausts memory, see EGGLOG_NOTES)
CHUNK = 400


@dataclass(frozen=True)
class Limits:
    iterations: int = 40
    nodes: int = 2_000_000
    seconds: float = 60.0


@dataclass
class RunStats:
    iterations: int = 0
    saturated: bool = False
    limit_hit: str | None = None
    enodes: int = 0
    seconds: float = 0.0

    def then(self, later: "RunStats") -> None:
        """Fold in a later run of the same e-graph (round 2)."""
        self.iterations += later.iterations
        self.enodes = later.enodes
        self.saturated = self.saturated and later.saturated
        self.limit_hit = self.limit_hit or later.limit_hit


@contextmanager
def egglog_errors(what: str) -> Iterator[None]:
    """The boundary around egglog calls: any failure inside (an egglog panic arrives as a pyo3
    ``PanicException``, a ``BaseException``) becomes a ``ValueError`` saying ``what`` failed."""
    try:
        yield
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as e:
        raise ValueError(f"{what}: {type(e).__name__}: {e}") from e


@functools.cache
def program_text(acc_windows: bool = False) -> str:
    """The engine's program; with ``acc_windows`` also the Acc-window check's
    (``rules.windows.TEXT``: tables and rulesets of its own, see :func:`new_egraph`)."""
    return "\n".join([sorts.SCHEMA, hoist.SCHEMA, offsets.RULES, multiples.RULES, layout.RULES,
                      slices.RULES, legality.RULES, checks.RULES, calls.RULES, hoist.RULES,
                      sorts.LOAD, checks.LOAD, calls.LOAD, hoist.LOAD, layout.LOAD,
                      "(unstable-combined-ruleset all " + " ".join(RULESETS) + ")"]
                     + [windows.TEXT] * acc_windows)


def new_egraph(acc_windows: bool = False, statements: int | None = None) -> eb.EGraph:
    """An e-graph holding the engine's sorts and rules (give it back with :func:`release`) and,
    with ``acc_windows``, the Acc-window check's, so one e-graph serves both for a function
    (``checks.windows``: the check runs first, its facts in tables no rule of the engine reads
    and :func:`size` never counts).  Two programs, not one: resetting the e-graph costs per
    declared table and rule (a push / pop copies each, ~1 ms more with the check's; emptying
    runs a rule per table), so a function with nothing to check takes the engine's alone.
    ``statements``: the function's size (see :func:`prepared`)."""
    return prepared(program_text(acc_windows), statements)


#: idle prepared e-graphs by rules program (each holds the program only)
_IDLE: dict[str, list[eb.EGraph]] = {}


@dataclass
class _Prepared:
    """What :func:`prepared` and :func:`release` keep about a prepared e-graph."""

    program: str
    #: every table's size in the bare program (its own facts: ``DenseUse``)
    bare: dict[str, int]
    #: times handed out
    uses: int = 0
    #: statements of the functions it served without a push (see :data:`CLEAR_BELOW`)
    cleared: int = 0
    #: while handed out, whether its state was pushed (None: idle)
    pushed: bool | None = None


#: every prepared e-graph alive (by ``id``)
_PREPARED: dict[int, _Prepared] = {}
#: a prepared e-graph is handed out this many times, then dropped (the next user builds a new
#: one).  egglog keeps a report of every rule run across push / pop (~200 entries per function
#: for the engine's program) and each push copies it: push + pop took ~0.3 ms longer per 100
#: functions, and resident memory grew ~40 KB per function.  A rebuild costs ~50 ms.
REBUILD_AFTER = 200
#: a function of fewer statements than this takes a prepared e-graph without a push, and
#: :func:`release` empties its tables with the ``clear`` rules (:func:`clear_rules`) instead of a
#: pop.  A push copies every table and compiled rule of the program (~100 tables, ~200 rules with
#: the Acc-window check's) and a pop frees them: ~4 ms at 1,000 statements, where emptying the
#: tables takes ~2 ms; deleting costs ~0.15 us per tuple, so at 10,000 statements emptying takes
#: ~12 ms against a push and pop of ~6 ms.
CLEAR_BELOW = 2_500
#: ... and an e-graph is dropped once it has served this many statements that way: e-class ids
#: are never reused, so egglog's union-find keeps growing (~100 bytes per statement) until then
CLEAR_LIMIT = 200_000


def prepared(program: str, statements: int | None = None) -> eb.EGraph:
    """An e-graph holding the definitions and rules of ``program``.  Building one (typing and
    compiling the rules) costs ~50 ms, more than optimizing a 300-statement kernel, so it is
    built once per process and each user starts from the bare program (up to
    :data:`REBUILD_AFTER` users).  For a function of ``statements`` statements below
    :data:`CLEAR_BELOW` it is handed out as it is and :func:`release` empties its tables;
    otherwise (or with no ``statements``) its state is pushed and :func:`release` pops it.  One
    never released (an error on the way) is simply dropped."""
    idle = _IDLE.get(program)
    if idle:
        eg = idle.pop()
        held = _PREPARED[id(eg)]
    else:
        eg = eb.EGraph()
        for form in top_level_forms(program):  # one at a time: see top_level_forms
            eg.run_program(*eg.parse_program(form))
        bare = table_sizes(eg)
        for form in top_level_forms(clear_rules(program, [t for t, n in bare.items() if not n])):
            eg.run_program(*eg.parse_program(form))
        held = _PREPARED[id(eg)] = _Prepared(program, bare)
    held.uses += 1
    held.pushed = statements is None or statements >= CLEAR_BELOW
    if held.pushed:
        eg.run_program(eb.Push(1))
    else:
        held.cleared += statements or 0
    return eg


def clear_rules(program: str, tables: list[str]) -> str:
    """The ``clear`` ruleset of ``program``: one rule per table of ``tables`` deleting every
    tuple of it.  A table ``program`` does not declare is a ``ValueError``."""
    keys: dict[str, tuple[int, bool]] = {}  # each table's key columns, and whether it is a relation
    for form in parse_sexps(program):
        head = form[0] if form else None
        if head == "relation":
            keys[form[1]] = (len(form[2]), True)
        elif head in ("function", "constructor"):
            keys[form[1]] = (len(form[2]), False)
        elif head == "datatype":  # (datatype Sort (Variant Type ... [:cost n] [:unextractable]) ...)
            for variant in form[2:]:
                keys[variant[0]] = (sum(isinstance(t, str) and not t.startswith(":")
                                        for t in variant[1:]), False)
    rules = ["(ruleset clear)"]
    for table in tables:
        if table not in keys:
            raise ValueError(f"no declaration of table {table!r} in the rules program")
        n, relation = keys[table]
        term = f"({table}{''.join(f' k{i}' for i in range(n))})"
        rules.append(f"(rule ({term if relation else f'(= v {term})'}) ((delete {term})) "
                     f":ruleset clear :name \"clear-{table}\")")
    return "\n".join(rules)


def top_level_forms(program: str) -> list[str]:
    """The top-level s-expressions of an egglog ``program`` (comments dropped).  egglog keeps,
    with every compiled rule, the span it was parsed from, and a span holds the whole text it was
    parsed from: a 24 KB rules program parsed in one piece kept ~45 MB resident;
    parsed form by form, each span holds its own form (~7 MB in all)."""
    out: list[str] = []
    depth, start, i, in_str = 0, 0, 0, False
    while i < len(program):
        ch = program[i]
        if in_str:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == ";":  # a comment, to the end of the line
            end = program.find("\n", i)
            i = len(program) if end < 0 else end
            continue
        elif ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                out.append(program[start:i + 1])
        i += 1
    if depth or in_str:
        raise ValueError("unbalanced egglog program text")
    return out


#: an auxiliary e-graph (the relayout check's) that grew past this many e-nodes (tuples of
#: every table) is dropped by :func:`release`, not kept idle.  Such a check runs before the
#: main e-graph of the same function is built; kept idle, its compiled rules (~5 MB, see
#: :func:`top_level_forms`) would stay resident through that e-graph's saturation and
#: extraction, where the process peaks.  Rebuilding it for a later function costs
#: ~0.1 s, a few percent of a function that large.  The engine's own programs are always kept:
#: every function needs one next (the Acc-window check runs in the engine's e-graph).
KEEP_IDLE_BELOW = 50_000


def release(eg: eb.EGraph) -> None:
    """Give back an e-graph from :func:`prepared`: its state is popped, or its tables emptied,
    and it is handed out again — unless it was handed out :data:`REBUILD_AFTER` times (or served
    :data:`CLEAR_LIMIT` statements unpushed), is an auxiliary one that grew past
    :data:`KEEP_IDLE_BELOW` e-nodes, or is not back to its bare program's tables after emptying;
    then it is dropped.  Do not use ``eg`` afterwards."""
    held = _PREPARED.get(id(eg))
    if held is None or held.pushed is None:
        return  # given back already
    pushed, held.pushed = held.pushed, None
    try:
        keep = held.program in (program_text(), program_text(True)) or size(eg) < KEEP_IDLE_BELOW
        if keep and pushed:
            eg.run_program(eb.Pop(SPAN, 1))
        elif keep:
            eg.run_program(_CLEAR)
            # every table as the bare program left it, or the e-graph is not reused: nothing of
            # one function's facts may reach the next
            keep = table_sizes(eg) == held.bare
    except BaseException:  # not one of ours, or broken by a panic: drop it
        keep = False
    idle = _IDLE.setdefault(held.program, [])
    if keep and len(idle) < 2 and held.uses < REBUILD_AFTER and held.cleared < CLEAR_LIMIT:
        idle.append(eg)
    else:
        del _PREPARED[id(eg)]


def load(eg: eb.EGraph, commands: list[str]) -> None:
    for i in range(0, len(commands), CHUNK):
        eg.run_program(*eg.parse_program("\n".join(commands[i:i + CHUNK])))


#: the logical tables loaded into a shared relation, by name: ``(relation, tag)`` — the engine's
#: row tables (``sorts.TAGGED``) and the Acc-window check's (``rules.windows.TAGGED``), both
#: grouped by column signature (``sorts.shared_relations``)
TAGGED: dict[str, tuple[str, int]] = {**sorts.TAGGED, **windows.TAGGED}


def load_tables(eg: eb.EGraph, rows: dict[str, list[tuple]], ruleset: str = "load") -> None:
    """Bulk-load table rows with ``input`` (one TSV text per table; thousands of single
    commands would each be compiled as a rule), then run ``ruleset`` once (the engine's
    ``load``, or the Acc-window check's renamed copy of it).  A logical table of
    :data:`TAGGED` goes to its shared relation, each row led by the table's tag: one ``input``
    for all of them."""
    texts: dict[str, list[bytes]] = {}
    for table, r in rows.items():
        if r:
            relation, tag = TAGGED.get(table, (table, None))
            texts.setdefault(relation, []).append(_tsv(r, "" if tag is None else f"{tag}\t"))
    tables = sorted(texts)
    if tables:
        with _tsv_paths([(t, b"".join(texts[t])) for t in tables]) as paths:
            eg.run_program(*[eb.Input(SPAN, t, path) for t, path in zip(tables, paths)])
    eg.run_program(eb.RunSchedule(eb.Run(SPAN, eb.RunConfig(ruleset, None))))


def _tsv(rows: list[tuple], lead: str = "") -> bytes:
    """``rows`` as TSV text, each line led by ``lead`` (one ``%s`` template per table: every
    row of a table has its arity; ``%s`` formats like ``str``)."""
    line = lead + "\t".join(["%s"] * len(rows[0])) + "\n"
    return "".join([line % r for r in rows]).encode()


@contextmanager
def _tsv_paths(texts: list[tuple[str, bytes]]) -> Iterator[list[str]]:
    """A path from which egglog's ``input`` reads each text, valid inside the ``with``.  On
    Linux an anonymous in-memory file per text (``memfd``, read through ``/proc/self/fd``):
    no directory to create and remove per call, which cost more than a 1,000-statement
    function's formatting; elsewhere files in a temporary directory."""
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        fds: list[int] = []
        try:
            for table, text in texts:
                fds.append(os.memfd_create(table))
                _write_all(fds[-1], text)
            yield [f"/proc/self/fd/{fd}" for fd in fds]
        finally:
            for fd in fds:
                os.close(fd)
        return
    with tempfile.TemporaryDirectory(prefix="egraph_tiles_") as d:
        paths = [os.path.join(d, f"{table}.tsv") for table, _ in texts]
        for path, (_, text) in zip(paths, texts):
            with open(path, "wb") as f:
                f.write(text)
        yield paths


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


#: the tables of the extraction root tree (:func:`root_tree`).  No rule reads them but their own
#: ``load`` rules (``rules.sorts``), and every root names a tile or use term the program's rows
#: create, so the tree can be loaded with those rows, before saturation,
#: instead of after it (a second ``input`` and ``load`` run); a count leaving these tables out
#: (:func:`size`) is then the count without the tree.
ROOT_TABLES = frozenset({"RootNodeRow", "NRoot", "RI", "RPR", "RPT", "RU"})


def table_sizes(eg: eb.EGraph) -> dict[str, int]:
    """The number of tuples in each table."""
    return {name: n for o in eg.run_program(eb.PrintSize(SPAN, None))
            for name, n in getattr(o, "sizes", [])}


def size(eg: eb.EGraph, uncounted: frozenset[str] = frozenset()) -> int:
    """The number of tuples in every table but those named in ``uncounted`` and the Acc-window
    check's (``rules.windows.TABLES``: no rule of the engine reads or writes them, so they stay
    as the check left them, and the count — the one reported, the one the node limit reads —
    is the engine's, whether or not the check ran in the same e-graph)."""
    return sum(n for name, n in table_sizes(eg).items()
               if name not in uncounted and name not in windows.TABLES)


def _run(name: str) -> eb.Run:
    return eb.Run(SPAN, eb.RunConfig(name, None))


#: one iteration of the term-making rulesets; the fact rulesets in turn, each saturated or run once
#: (:data:`FACTS`); every rule
_TERMS = eb.RunSchedule(eb.Sequence(SPAN, [_run(r) for r in TERMS]))
_FACTS = eb.RunSchedule(eb.Sequence(SPAN, [eb.Saturate(SPAN, _run(r)) if sat else _run(r)
                                           for r, sat in FACTS]))
_ALL = eb.RunSchedule(_run("all"))
#: empties every table the bare program leaves empty (:func:`clear_rules`)
_CLEAR = eb.RunSchedule(_run("clear"))


def core_schedule(text: str) -> eb.RunSchedule:
    """The ``(run-schedule ...)`` of ``text`` — ``run``, ``seq`` and ``saturate`` of rulesets —
    as egglog's core command.  ``parse_program`` makes it egglog-experimental's user-defined
    ``run-schedule`` instead, which runs the same rules in the same order ~5% slower (the
    Acc-window check's 18 runs at 1,000 statements: ~0.1 ms)."""
    (form,) = parse_sexps(text)
    head, *items = form
    if head != "run-schedule":
        raise ValueError(f"not a run-schedule: {text!r}")
    return eb.RunSchedule(_schedule(["seq", *items]))


def _schedule(form: list) -> object:
    head, *args = form if isinstance(form, list) and form else (form,)
    if head == "run" and len(args) == 1 and isinstance(args[0], str):
        return _run(args[0])
    if head not in ("seq", "saturate"):
        raise ValueError(f"unsupported schedule form {head!r}")
    kids = [_schedule(a) for a in args]
    if head == "seq":
        return eb.Sequence(SPAN, kids)
    # (a saturate of several: of their sequence)
    return eb.Saturate(SPAN, kids[0] if len(kids) == 1 else eb.Sequence(SPAN, kids))


def _updated(out: list) -> bool:
    report = out[0].report if out and hasattr(out[0], "report") else None
    return report is None or report.updated


def saturate(eg: eb.EGraph, limits: Limits, uncounted: frozenset[str] = frozenset(),
             count: bool = True) -> RunStats:
    """Run the schedule (see the module's docstring); the node limit and the reported e-node
    count leave out the tables in ``uncounted``.  Without ``count`` the final e-node count (read
    only by a report) is not taken: ``enodes`` stays 0 (one size query of every table fewer,
    ~0.1 ms per function).  An iteration is one run of :data:`TERMS`, or,
    once they change nothing, the fixpoint of :data:`FACTS` and the run of every ruleset that
    checks the fixpoint (should that run change anything, the iterations go on)."""
    stats = RunStats()
    t0 = time.perf_counter()
    terms_changed = True
    while True:
        if stats.iterations >= limits.iterations:
            stats.limit_hit = f"iteration limit {limits.iterations}"
            break
        # the node limit: every 4 iterations, and before the facts (never derived over an e-graph
        # past it)
        checkpoint = not terms_changed or (stats.iterations and stats.iterations % 4 == 0)
        if checkpoint and size(eg, uncounted) > limits.nodes:
            stats.limit_hit = f"node limit {limits.nodes}"
            break
        stats.iterations += 1
        if terms_changed:
            terms_changed = _updated(eg.run_program(_TERMS))
        else:
            eg.run_program(_FACTS)
            if not _updated(eg.run_program(_ALL)):
                stats.saturated = True
                break
            terms_changed = True
        if time.perf_counter() - t0 > limits.seconds:
            stats.limit_hit = f"time limit {limits.seconds:g} s"
            break
    if stats.limit_hit:
        # the limits bound how many terms are made; every fact is still derived over the terms
        # made so far (FACTS terminate: none makes an index or window term), so a proof that
        # needed no further term still counts, and whatever is unproven keeps its safe copy
        eg.run_program(_FACTS)
    if count:
        stats.enodes = size(eg, uncounted)
    stats.seconds = time.perf_counter() - t0
    return stats


def run_checks(eg: eb.EGraph) -> None:
    """Saturate the ``written`` facts (never limited: a relation over existing e-classes, so it
    terminates, and a write left unpropagated would be an acceptance), then run the ``checks``
    ruleset once (stratified: its rules read proof lattices at their final value)."""
    eg.run_program(eb.RunSchedule(eb.Saturate(SPAN, eb.Run(SPAN, eb.RunConfig("written", None)))))
    eg.run_program(eb.RunSchedule(eb.Run(SPAN, eb.RunConfig("checks", None))))


def add_copy_views(eg: eb.EGraph, gates: list[tuple[int, int, str]], limits: Limits,
                   count: bool = True) -> RunStats:
    """Round 2 of the driver: load the gate rows ``(parent window, child tile, ctx)`` (uses of a
    slice of a slice whose parent was copied at its definition, with nothing writing the source in
    between), add the forms reading the parent's copy (``rules.slices`` ``copyview``), and
    saturate again so the safe and legality rules prove or refuse them like any window."""
    load_tables(eg, {"CopyViewGateRow": gates}, ruleset="copyview")
    return saturate(eg, limits, count=count)


def write_dot(eg: eb.EGraph, path: str) -> None:
    """The e-graph as Graphviz text at ``path`` (and SVG beside it when ``dot`` is installed)."""
    ser = eg.serialize([], max_functions=None, max_calls_per_function=None,
                       include_temporary_functions=False)
    with open(path, "w") as f:
        f.write(ser.to_dot())
    if shutil.which("dot"):
        subprocess.run(["dot", "-Tsvg", path, "-o", path[:-4] + ".svg"], check=False)


def class_of(eg: eb.EGraph, ctor: str, n: int) -> object:
    """The (canonical) e-class value of ``(ctor n)``."""
    return eg.eval_expr(eb.Call(SPAN, ctor, [eb.Lit(SPAN, eb.Int(n))]))[1]


def has_fact(eg: eb.EGraph, relation: str, *ns: int) -> bool:
    """Whether ``(relation n ...)`` holds (one lookup by value, no scan of the e-graph)."""
    values = [eg.eval_expr(eb.Lit(SPAN, eb.Int(n)))[1] for n in ns]
    return eg.lookup_function(relation, values) is not None


def root_tree(roots: list[tuple[str, int]]) -> tuple[RootTree, dict[str, list[tuple]]]:
    """The rows binding the roots to a balanced tree of nodes of ``sorts.ROOT_ARITY`` children
    (never a container root; tables :data:`ROOT_TABLES`) and the tree (``extract.RootTree``).
    A root ``(kind, k)`` is the term ``(NR k)`` of a use or extract term (kind ``R``) or
    ``(NT k)`` of a window (``RT``); the uses and extract terms, in order, fill the nodes over
    them (rows led by 0), then the windows theirs (1), and nodes over nodes (2) join those level
    by level.  Nodes are numbered -1, -2, ... (never a term's number); a node short of children
    repeats its last one (``extract.root_terms`` reads only its own), and a lone last node
    moves up a level as it is."""
    arity = sorts.ROOT_ARITY
    nodes: list[tuple] = []
    level: list[tuple[int, Shape]] = []  # (node number, shape)
    order: list[int] = []
    # (the roots' positions and numbers by wrapper, in one pass over them)
    groups: dict[str, tuple[list[int], list[int]]] = {"R": ([], []), "RT": ([], [])}
    for i, (kind, k) in enumerate(roots):
        group = groups.get(kind)
        assert group is not None, "a root is a use, an extract term or a window"
        group[0].append(i)
        group[1].append(k)
    for tag, (at, keys) in enumerate(groups.values()):
        order += at
        for j in range(0, len(keys), arity):
            kids = keys[j:j + arity]
            nodes.append((tag, -len(nodes) - 1, *kids, *kids[-1:] * (arity - len(kids))))
            level.append((nodes[-1][1], len(kids)))
    while len(level) > 1:
        nxt = []
        for j in range(0, len(level), arity):
            kids = level[j:j + arity]
            if len(kids) == 1:
                nxt.append(kids[0])
                continue
            ns = [n for n, _ in kids]
            nodes.append((2, -len(nodes) - 1, *ns, *ns[-1:] * (arity - len(ns))))
            nxt.append((nodes[-1][1], tuple(shape for _, shape in kids)))
        level = nxt
    top, shape = level[0] if level else (0, 0)
    return RootTree(top, shape, tuple(order)), {"RootNodeRow": nodes}
