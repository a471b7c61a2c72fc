"""The CanonicalizeTileSlice pass: a thin driver over the stages of ``egraph_tiles.egraph``.

effects → relayout check → Acc-window check → encode → saturate → checks → extract → decode (→ round 2) → report.
Every decision is made by the rules and the extractor; this module only sequences the stages
(see the README's stage table for each stage's file and tests).
"""

from __future__ import annotations

import gc
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..egraph import schedule
from ..egraph.checks import raise_violations
from ..egraph.decode import Decoded, Decoder
from ..egraph.encode import encode_function
from ..egraph.encode_facts import has_slice
from ..egraph.encoding import Encoding
from ..report.explain import explain
from ..egraph.extract import Extractor, GreedyExtractor
from ..cost.loops import CostModel, annotate_report, dynamic_copy_bytes, hoist_facts
from ..report.report import FunctionReport, Report
from ..egraph.round2 import copy_view_gates, gates_respected
from ..checks.relayout import check_relayouts
from ..checks.windows import check_acc_windows
from ..ir.copies import static_copy_bytes
from ..ir.effects import Effects, function_effects
from ..ir.frames import frames_of
from ..ir.lift import fold_calls, lift_calls
from ..ir.storage import positional_slices, storage_of
from ..ir.summaries import call_summaries
from ..ir.stmts import Function, Program


@dataclass
class Options:
    limits: schedule.Limits = field(default_factory=schedule.Limits)
    extractor: Extractor = field(default_factory=GreedyExtractor)
    explain: bool = False
    dot_prefix: str | None = None
    #: dynamic cost and hoisting (trip-count defaults, if-arm probability, capacities) ...
    cost: CostModel = field(default_factory=CostModel)
    #: ... and per-kernel overrides, by function name
    kernel_cost: dict[str, CostModel] = field(default_factory=dict)

    def cost_for(self, fn: str) -> CostModel:
        return self.kernel_cost.get(fn, self.cost)


def canonicalize_tile_slice(program: Program, *, options: Options | None = None,
                            report: Report | None = None) -> Program:
    """Return a new program in which every canonical ``tile.slice`` of every InCore / AIC / AIV
    function is canonicalized (folded, materialized, or kept as a proven zero-copy view)."""
    opts = options or Options()
    # (a call in a return / yield gets a statement of its own for the analyses: ir.lift)
    lifted, temps = lift_calls(program)
    with _no_cycle_collection():
        out = Program(program.name, [_function(fn, opts, report, lifted)
                                     for fn in lifted.functions])
    return fold_calls(out, temps)


@contextmanager
def _no_cycle_collection():
    """Python's cyclic garbage collector paused for the pass (its prior state restored after).
    The pass allocates many short-lived acyclic objects next to the long-lived program; each
    full collection re-traverses the whole program, which made the per-statement cost grow
    with the kernel's size.  The pass makes no reference cycles, so nothing piles up: plain
    reference counting frees everything it drops."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _function(fn: Function, opts: Options, report: Report | None,
              program: Program | None = None) -> Function:
    if not fn.func_type.is_incore:
        return _skipped(fn, report, "not an InCore function")
    # a keyword-spelled slice (tile.slice(t, shape=..., offset=...)) is the same window
    fn = positional_slices(fn) if has_slice(fn) else fn
    fx = function_effects(fn, call_summaries(program))
    check_relayouts(fn, fx)
    # the Acc-window check's e-graph, when it had something to check, is the one this function's
    # facts are loaded into next (its facts are inert here and never counted: checks.windows);
    # a Graphviz dump shows the engine's facts alone
    eg = check_acc_windows(fn, fx, program, keep=opts.dot_prefix is None)
    try:
        enc = encode_function(fn, fx, program, storage_of(fn, fx, frames_of(program, fn))) \
            if has_slice(fn) else None
    except BaseException:
        if eg is not None:
            schedule.release(eg)
        raise
    if enc is None or not (enc.windows or enc.raw_colx or enc.raw_vec or enc.call_values):
        if eg is not None:
            schedule.release(eg)
        return _skipped(fn, report, "no canonical tile.slice")
    t0 = time.perf_counter()
    model = opts.cost_for(fn.name)
    hoists = hoist_facts(fn, fx, enc, model, program)
    failed = f"the e-graph failed on function {fn.name!r}"
    with schedule.egglog_errors(failed):
        eg = eg if eg is not None else schedule.new_egraph(statements=fx.size)
        # the extraction roots are loaded with the program, not after saturation (one load run
        # instead of two): no rule reads them, and round 1's e-node count leaves them out
        root, roots = schedule.root_tree([ref for ref, _ in enc.roots]) if enc.windows else (0, {})
        schedule.load_tables(eg, {**enc.rows, **hoists.rows, **roots})
        enc.rows = hoists.rows = {}  # loaded: the e-graph holds the facts now (memory, #13)
        # (the e-node count is read only by the report)
        stats = schedule.saturate(eg, opts.limits, uncounted=schedule.ROOT_TABLES,
                                  count=report is not None)
        schedule.run_checks(eg)
    raise_violations(fn, enc, eg)
    if not enc.windows:
        schedule.release(eg)
        return _skipped(fn, report, "no canonical tile.slice")
    with schedule.egglog_errors(failed):
        terms = opts.extractor.extract(eg, root)[1]
        if opts.dot_prefix is not None:
            schedule.write_dot(eg, f"{opts.dot_prefix}{fn.name}.dot")
    # the decisions are built only for the report (nothing else reads them)
    record = report is not None
    decoder, decoded = _decode(fn, enc, fx, terms, record)
    gates = copy_view_gates(enc, decoder, eg)
    if gates:
        with schedule.egglog_errors(failed):
            stats.then(schedule.add_copy_views(eg, sorted(set(gates.values())), opts.limits,
                                               count=report is not None))
            terms = opts.extractor.extract(eg, root)[1]
        decoder2, decoded2 = _decode(fn, enc, fx, terms, record)
        if gates_respected(gates, decoder2):
            decoded = decoded2
    new_fn = Function(fn.name, fn.params, fn.return_types, decoded.body, fn.func_type,
                      fn.decorator_kwargs, fn.has_self, fn.span)
    if report is not None:
        seconds = time.perf_counter() - t0
        report.functions.append(FunctionReport(
            fn.name, bytes_before=static_copy_bytes(fn), bytes_after=static_copy_bytes(new_fn),
            enodes=stats.enodes, iterations=stats.iterations, saturated=stats.saturated,
            limit_hit=stats.limit_hit, seconds=seconds, extractor=opts.extractor.name,
            decisions=[explain(d, eg, enc.storage) for d in decoded.decisions],
            dynamic_before=dynamic_copy_bytes(fn, model),
            dynamic_after=dynamic_copy_bytes(new_fn, model)))
        annotate_report(report.functions[-1].decisions, decoded.decisions, hoists, fn, fx, model)
    schedule.release(eg)
    return new_fn


def _decode(fn: Function, enc: Encoding, fx: Effects, terms: list[tuple],
            record: bool = True) -> tuple[Decoder, Decoded]:
    assert len(terms) == len(enc.roots), (len(terms), len(enc.roots))
    decoder = Decoder(fn, enc, terms, fx, record)
    return decoder, decoder.run()


def _skipped(fn: Function, report: Report | None, why: str) -> Function:
    if report is not None:
        report.functions.append(FunctionReport(fn.name, skipped=why))
    return fn
