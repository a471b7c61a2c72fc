"""The CanonicalizeTileSlice pass: a thin driver over encode → saturate → extract → decode.

Round 2 (only when there is something to gate): a slice of a slice whose parent got a copy at its
definition may read that copy instead of the source.  "The parent was copied" is a result of
round 1's extraction, not a fact rules can derive (no negation), so the driver states it as gate
rows for the uses where it holds, saturates the same e-graph again and extracts again; the cost
model then picks, among the forms proven safe, the copy's view, the source's view or a copy.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..egraph import schedule
from ..egraph.decode import Decision, Decoder
from ..egraph.encode import Encoding, ExtSite, UseSite, Window, encode_function, has_slice
from ..egraph.extract import Extractor, GreedyExtractor, flatten_roots
from ..egraph.report import FunctionReport, Report, SliceDecision, alignment_reason, extract_bytes
from ..egraph.windows import check_acc_windows
from ..ir.effects import function_effects
from ..ir.exprs import Call, ListExpr, VarRef, const_int
from ..ir.stmts import AssignStmt, EvalStmt, Function, Program, Stmt
from ..ir.types import TileType


@dataclass
class Options:
    limits: schedule.Limits = field(default_factory=schedule.Limits)
    extractor: Extractor = field(default_factory=GreedyExtractor)
    explain: bool = False
    dot_prefix: str | None = None


def canonicalize_tile_slice(program: Program, *, options: Options | None = None,
                            report: Report | None = None) -> Program:
    """Return a new program in which every canonical ``tile.slice`` of every InCore / AIC / AIV
    function is canonicalized (folded, materialized, or kept as a proven zero-copy view)."""
    opts = options or Options()
    out = Program(program.name, [])
    for fn in program.functions:
        out.functions.append(_function(fn, opts, report))
    return out


def _function(fn: Function, opts: Options, report: Report | None) -> Function:
    if not fn.func_type.is_incore:
        if report is not None:
            report.functions.append(FunctionReport(fn.name, skipped="not an InCore function"))
        return fn
    fx = function_effects(fn)
    check_acc_windows(fn, fx)
    enc = encode_function(fn, fx) if has_slice(fn) else None
    canonical = enc is not None and bool(enc.windows)
    if not canonical and (enc is None or not (enc.raw_colx or enc.raw_vec)):
        if report is not None:
            report.functions.append(FunctionReport(fn.name, skipped="no canonical tile.slice"))
        return fn
    t0 = time.perf_counter()
    try:
        eg = schedule.new_egraph()
        schedule.load_tables(eg, enc.rows)
        stats = schedule.saturate(eg, opts.limits)
        schedule.run_checks(eg)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # egglog panics arrive as pyo3 PanicException (a BaseException)
        raise ValueError(f"the e-graph failed on function {fn.name!r}: {type(e).__name__}: {e}") from e
    _raise_colx_violations(fn, enc, eg)
    _raise_write_violations(fn, enc, eg)
    _raise_raw_vec_violations(fn, enc, eg)
    if not canonical:
        if report is not None:
            report.functions.append(FunctionReport(fn.name, skipped="no canonical tile.slice"))
        return fn
    try:
        root = schedule.root_tree(eg, [ref for ref, _ in enc.roots])
        _cost, term = opts.extractor.extract(eg, root)
        if opts.dot_prefix is not None:
            _write_dot(eg, f"{opts.dot_prefix}{fn.name}.dot")
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # egglog panics arrive as pyo3 PanicException (a BaseException)
        raise ValueError(f"the e-graph failed on function {fn.name!r}: {type(e).__name__}: {e}") from e
    results = flatten_roots(term)
    assert len(results) == len(enc.roots), (len(results), len(enc.roots))
    decoder = Decoder(fn, enc, results, fx)
    decoded = decoder.run()
    gates = _copy_view_gates(enc, decoder, eg)
    if gates:
        try:
            stats2 = schedule.add_copy_views(eg, sorted(set(gates.values())), opts.limits)
            _cost, term = opts.extractor.extract(eg, root)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # egglog panics arrive as pyo3 PanicException
            raise ValueError(f"the e-graph failed on function {fn.name!r}: {type(e).__name__}: {e}") from e
        stats.iterations += stats2.iterations
        stats.enodes = stats2.enodes
        stats.saturated = stats.saturated and stats2.saturated
        stats.limit_hit = stats.limit_hit or stats2.limit_hit
        results2 = flatten_roots(term)
        decoder2 = Decoder(fn, enc, results2, fx)
        decoded2 = decoder2.run()
        # every use reading a parent's copy must be one the gates allowed (else keep round 1)
        if all(gates.get(site) is not None and gates[site][0] == kp
               for site, kp in decoder2.buf_sites):
            decoded = decoded2
    new_fn = Function(fn.name, fn.params, fn.return_types, decoded.body, fn.func_type,
                      fn.decorator_kwargs, fn.has_self, fn.span)
    if report is not None:
        fr = FunctionReport(fn.name, bytes_before=extract_bytes(fn), bytes_after=extract_bytes(new_fn),
                            enodes=stats.enodes, iterations=stats.iterations,
                            saturated=stats.saturated, limit_hit=stats.limit_hit,
                            seconds=time.perf_counter() - t0, extractor=opts.extractor.name)
        fr.decisions = [_explain(d, enc, eg) for d in decoded.decisions]
        report.functions.append(fr)
    return new_fn


def _copy_view_gates(enc: Encoding, dec: Decoder, eg) -> dict[UseSite, tuple[int, int, str]]:
    """Gate rows ``(parent window, child tile, ctx)`` by use site (``id``): uses of a slice ``c`` of
    a Vec slice ``p`` that got a copy at its definition in round 1, with nothing writing the
    source between ``p``'s definition and the use (nor the use itself writing it).  Uses share an
    e-class per (tile class, ctx), so a class is gated only when every use in it qualifies with
    the same parent; a parent whose own uses are gated is skipped (its copy must stay as in
    round 1).  A child identical to its parent is excluded by the rule itself."""
    cand: dict[UseSite, int] = {}
    for site in enc.uses:
        w = site.window
        p = w.parent
        if p is None or site.ctx not in ("ord", "colx") or p.key not in dec.buf_var:
            continue
        base = dec._root_base(p)
        if dec.hazard(p, site.stmt, base):
            continue
        q = dec.fx.point(site.stmt).pos
        if dec.fx.written_in(base, q - 1, q):
            continue  # the consumer writes the source's storage: it must write the source
        if not _plain_read(site) or schedule.has_fact(eg, "WrittenUse", site.key):
            continue  # a use written through (rules.checks) must stay on the source
        cand[site] = p.key
    if not cand:
        return {}
    classes: dict[object, list[UseSite]] = {}
    for site in enc.uses:
        classes.setdefault(schedule.class_of(eg, "NR", site.key), []).append(site)
    gates: dict[UseSite, tuple[int, int, str]] = {}
    for sites in classes.values():
        parents = {cand.get(x) for x in sites}
        if len(parents) != 1 or None in parents:
            continue
        kp = parents.pop()
        for x in sites:
            gates[x] = (kp, enc.tile_of[x.var], x.ctx)
    gated_windows = {x.window.key for x in enc.uses if x in gates}
    return {k: g for k, g in gates.items() if g[0] not in gated_windows}


def _plain_read(site: UseSite) -> bool:
    """Whether the use only reads its operand: a call argument of a registered op that neither
    writes it back nor returns a view of it (an escape or a view could be written later under
    another name, and the write must land in the source, not in the parent's copy)."""
    from ..ir import ops

    call = site.stmt.value if isinstance(site.stmt, AssignStmt) else \
        site.stmt.call if isinstance(site.stmt, EvalStmt) else None
    if not isinstance(call, Call) or site.slot[0] not in ("arg", "kwarg"):
        return False
    op = ops.lookup(call.op)
    if op is None or op.inherits_input_memory:
        return False
    i = site.slot[1] if site.slot[0] == "arg" else \
        op.params.index(site.slot[1]) if site.slot[1] in op.params else None
    return i is not None and op.reuses_arg != i


def _raise_colx_violations(fn: Function, enc: Encoding, eg) -> None:
    """Turn the first ``ColxViolation`` fact (rules.checks) in program order into a ValueError."""
    for site in enc.raw_colx:
        if schedule.has_fact(eg, "ColxViolation", site.key):
            raise ValueError(
                f"{site.slice_stmt.span}: in function {fn.name!r}, slice {site.var.name!r} has "
                f"valid_shape / drop_dims and a dynamic offset or non-contiguous window, and "
                f"feeds {site.op}: its lazy materialization would corrupt its source. Slice "
                f"without valid_shape / drop_dims, or copy it first with tile.extract(..., "
                f"target_memory=pl.Mem.Vec).")


def _raise_raw_vec_violations(fn: Function, enc: Encoding, eg) -> None:
    """Turn the first ``RawVecViolation`` fact (rules.checks) in program order into a ValueError
    naming the valid_shape / drop_dims slice and the vector op using it."""
    for site in enc.raw_vec:
        if not schedule.has_fact(eg, "RawVecViolation", site.key):
            continue
        name = site.slice_stmt.target.name
        t = site.slice_stmt.target.type
        bits = t.dtype.storage_bits if isinstance(t, TileType) else 0
        n = max(256 // bits, 1) if bits else 8
        via = f" (through {site.var.name!r}, a view / alias of it)" if site.var is not \
            site.slice_stmt.target else ""
        raise ValueError(
            f"{site.slice_stmt.span}: in function {fn.name!r}, slice {name!r} (tile.slice at line "
            f"{site.slice_stmt.span.line}) has valid_shape / drop_dims and feeds {site.op} at "
            f"line {site.consumer.span.line}{via}. The pass does not copy a slice with "
            f"valid_shape / drop_dims, so it reaches the op as a view, and its address is not "
            f"provably 32-byte aligned: the device can hang (#1789). Align the window (start it "
            f"at a multiple of 32 bytes, e.g. a column offset that is a multiple of {n} elements "
            f"of this dtype; 8 for FP32), or slice without valid_shape / drop_dims and set the valid shape with "
            f"tile.set_validshape on an aligned copy.")


def _raise_write_violations(fn: Function, enc: Encoding, eg) -> None:
    """Turn the first ``WriteViolation`` fact (rules.checks) in program order into a ValueError
    naming the slice and the op that writes into it."""
    for w in enc.windows:
        if not schedule.has_fact(eg, "WindowWriteViolation", w.key):
            continue
        writers = [x for x in enc.writes if schedule.has_fact(eg, "WriteViolation", w.key, x.key)]
        by = "; ".join(
            f"{x.op} at line {x.stmt.span.line}"
            + (f" (through {x.var.name!r}, a view / alias of it)" if x.var is not w.var else "")
            for x in writers) or "an in-place write"
        bits = _bits(w)
        raise ValueError(
            f"{w.stmt.span}: in function {fn.name!r}, slice {w.var.name!r} (tile.slice at line "
            f"{w.stmt.span.line}) is written in place by {by}, and its window is not provably "
            f"32-byte aligned. A window written in place can be neither copied (the write would "
            f"land in the copy and be lost) nor used as an unaligned view (the device can hang, "
            f"#1789). Align the window (start it at a multiple of 32 bytes, e.g. a column offset "
            f"that is a multiple of {max(256 // bits, 1) if bits else 8} elements of this dtype; "
            f"8 for FP32), or write into a separate tile and "
            f"copy the result back explicitly.")


def _write_dot(eg, path: str) -> None:
    import shutil
    import subprocess

    ser = eg.serialize([], max_functions=None, max_calls_per_function=None,
                       include_temporary_functions=False)
    dot = ser.to_dot()
    with open(path, "w") as f:
        f.write(dot)
    if shutil.which("dot"):
        subprocess.run(["dot", "-Tsvg", path, "-o", path[:-4] + ".svg"], check=False)


def _explain(d: Decision, enc: Encoding, eg) -> SliceDecision:
    from ..egraph.report import use_label

    site = d.site
    if isinstance(site, Window):
        return SliceDecision(site.var.name, "slice statement", "dropped",
                             "no use left after canonicalization", line=site.stmt.span.line)
    if isinstance(site, ExtSite):
        w = site.window
        if d.kind == "fold":
            return SliceDecision(w.var.name, "tile.extract source", "fold",
                                 "offsets folded into the extract index; the extract reads the "
                                 "slice's base directly", line=site.stmt.span.line)
        return SliceDecision(w.var.name, "tile.extract source", d.kind,
                             "saturation stopped before the fold was proven",
                             line=site.stmt.span.line)
    assert isinstance(site, UseSite)
    w = site.window
    op = _op_of(site.stmt)
    label = use_label(op, site.slot, site.ctx)
    line = site.stmt.span.line
    nbytes = w.rows * w.cols * _bits(w) // 8
    copied = d.kind == "copy"
    if site.ctx in ("left", "right"):
        mem = "Left" if site.ctx == "left" else "Right"
        if copied:
            why = (f"Mat window as matmul {site.ctx} operand → tile.extract(target_memory={mem}), "
                   f"{nbytes} B")
        else:
            why = "not a Mat window: left as it is"
    elif d.buf_var is not None:
        why = _copy_view_reason(w, copied, d.buf_var.name, enc, eg)
    elif site.ctx == "colx":
        why = _colx_reason(w, copied, nbytes)
    else:
        why = _ord_reason(w, copied, enc, eg)
    if d.kind == "copy" and d.placement == "shared":
        why += f" (shares the copy {d.copy_var.name})"
    return SliceDecision(w.var.name, label, "copy" if copied else "view", why,
                         bytes_copied=nbytes if copied and d.placement != "shared" else 0,
                         placement=d.placement, line=line)


def _op_of(s: Stmt) -> str:
    if isinstance(s, AssignStmt) and isinstance(s.value, Call):
        return s.value.op
    if isinstance(s, EvalStmt):
        return s.call.op
    return type(s).__name__


def _root(w: Window) -> tuple[Window, list[Window]]:
    chain = [w]
    while chain[-1].parent is not None:
        chain.append(chain[-1].parent)
    return chain[-1], chain


def _bits(w: Window) -> int:
    t = w.var.type
    return t.dtype.storage_bits if isinstance(t, TileType) else 0


def _offsets(w: Window):
    from ..ir.exprs import BinOp

    _, chain = _root(w)
    r = c = None
    for x in reversed(chain):
        call = x.stmt.value
        assert isinstance(call, Call) and isinstance(call.args[2], ListExpr)
        xr, xc = call.args[2].items
        r = xr if r is None else BinOp("+", r, xr)
        c = xc if c is None else BinOp("+", c, xc)
    return r, c


def _colx_reason(w: Window, copied: bool, nbytes: int) -> str:
    root, _ = _root(w)
    r, c = _offsets(w)
    base = root.src.type
    bcols = base.const_shape()[-1] if isinstance(base, TileType) and base.const_shape() else None
    static = const_int(r) is not None and const_int(c) is not None
    contiguous = w.rows == 1 or (bcols is not None and w.cols == bcols)
    shape = f"[{w.rows}, {w.cols}] of a {bcols}-column base"
    if not copied:
        return (f"constant offset and contiguous window ({shape}): the lazy textract is an "
                f"identity copy → view")
    if not static:
        return f"dynamic offset: the address falls back to the source base (#1640) → copy {nbytes} B"
    if not contiguous:
        return (f"window {shape} is not contiguous: the dense repack would overwrite its own "
                f"source (#2010) → copy {nbytes} B")
    return f"not proven an identity copy → copy {nbytes} B"


def _copy_view_reason(w: Window, copied: bool, buf: str, enc: Encoding, eg) -> str:
    """A use read from its parent's copy ``buf`` (fresh, aligned, pitch = the parent's columns),
    at the child's own offsets."""
    from ..egraph.report import alignment_reason

    call = w.stmt.value
    assert isinstance(call, Call) and isinstance(call.args[2], ListExpr) and w.parent is not None
    r, c = call.args[2].items
    reason = alignment_reason(r, c, w.parent.cols, _bits(w), _mult(eg, r, enc), _mult(eg, c, enc),
                              None, w.rows, w.cols, not copied)
    return f"{'view' if not copied else 'copy'} of the parent's copy {buf}: {reason}"


def _ord_reason(w: Window, copied: bool, enc: Encoding, eg) -> str:
    from ..egraph.report import pow2_part

    root, _ = _root(w)
    base = root.src.type
    if isinstance(base, TileType) and base.memory is not None and base.memory.value != "Vec":
        return f"{base.memory.value} window outside the pass's scope for this consumer: left as it is"
    r, c = _offsets(w)
    pitch = base.const_shape()[-1] if isinstance(base, TileType) and base.const_shape() else None
    bits = _bits(w)
    mr = _mult(eg, r, enc)
    mc = _mult(eg, c, enc)
    base_mult = None
    if isinstance(base, TileType) and base.memref is not None and base.memref.is_known:
        base_mult = pow2_part(base.memref.byte_offset * 8)
    return alignment_reason(r, c, pitch, bits, mr, mc, base_mult, w.rows, w.cols, not copied)


def _mult(eg, e, enc: Encoding) -> int | None:
    """The known multiple the e-graph proved for an offset expression, read back by value
    (``lookup_function``: no extraction, no scan of the e-graph)."""
    from egglog import bindings as eb

    from ..egraph.report import pow2_part
    from ..ir.exprs import BinOp, Const

    k = const_int(e)
    if k is not None:
        return pow2_part(k)
    span = eb.RustSpan("", 0, 0)
    keys = {v.var: key for key, v in enc.syms.items() if isinstance(v, VarRef)}

    def term(x):
        if isinstance(x, Const) and const_int(x) is not None:
            return eb.Call(span, "Lit", [eb.Lit(span, eb.Int(const_int(x)))])
        if isinstance(x, VarRef) and x.var in keys:
            return eb.Call(span, "Sym", [eb.Lit(span, eb.String(keys[x.var]))])
        if isinstance(x, BinOp) and x.op in ("+", "-", "*"):
            a, b = term(x.lhs), term(x.rhs)
            if a is None or b is None:
                return None
            return eb.Call(span, {"+": "Add", "-": "Sub", "*": "Mul"}[x.op], [a, b])
        return None

    t = term(e)
    if t is None:
        return None
    _sort, value = eg.eval_expr(t)
    m = eg.lookup_function("Mult", [value])
    return None if m is None else eg.value_to_i64(m)
