"""Why each slice use got its decision (``--explain`` / ``--json``).

The arithmetic is read back from what the encoder stated and the rules proved: each window
records its offset expressions and the ``(NI k)`` terms they were loaded as, the accumulated
offset of a chained slice is the ``Add`` term ``peel-chained-slice`` built, and its known
multiple is the ``Mult`` fact ``rules.multiples`` recorded for that term (looked up by value:
nothing is re-encoded and nothing is added to the e-graph).
"""

from __future__ import annotations

from typing import Callable

from ..egraph.bindings import eb

from ..ir import ops
from ..ir.effects import call_of, callee_name
from ..ir.exprs import BinOp, Expr, const_int, const_shape
from ..ir.format import format_expr
from ..ir.storage import Storage
from ..ir.target import ALIGN_BITS, CAP
from ..ir.types import MemorySpace, TileType
from ..egraph.decode import Decision
from ..egraph.encoding import ExtSite, UseSite, Window
from ..cost.loops import window_bytes
from .report import SliceDecision
from ..egraph.schedule import class_of


#: (module constants: an enum member looked up on its class is slow, and these run per decision)
_CUBE, _COLX, _VEC = (ops.Role.LEFT, ops.Role.RIGHT), ops.Role.COLX, MemorySpace.Vec
#: each role's label, by its value (a role is a ``str``)
_LABEL = {role.value: role.label for role in ops.Role}
#: what a program function does with a window passed to it, by the use context its call summary
#: gave the operand (egraph.calls)
_CALLEE = {
    ops.Role.CALL.value: "it reads the tile as one of its own (windows of it, a reshape, an "
                         "opaque op): kept only dense and aligned",
    ops.Role.CUBE_CALL.value: "a matmul operand",
    ops.Role.HAND_BACK.value: "it only hands a window of the tile back: kept when that window is "
                         "aligned at its address here, or dense and aligned",
    ops.Role.COLX.value: "a col_expand operand",
    ops.Role.ORD.value: "an operand it reads or writes in place",
}


def explain(d: Decision, eg: eb.EGraph, storage: Storage | None = None) -> SliceDecision:
    """The report line of one decision."""
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
    call = call_of(site.stmt)
    label = use_label(call.op if call is not None else type(site.stmt).__name__, site.slot,
                      site.ctx)
    nbytes = window_bytes(w)
    copied = d.kind == "copy"
    if site.ctx in _CUBE:
        mem = site.ctx.copy_memory.value
        if copied:
            why = (f"Mat window as matmul {site.ctx} operand → tile.extract(target_memory={mem}), "
                   f"{nbytes} B")
        else:
            why = "not a Mat window: left as it is"
    elif d.buf_var is not None:
        why = _copy_view_reason(w, copied, d.buf_var.name, eg, nbytes)
    elif site.ctx is _COLX:
        why = _colx_reason(w, copied, nbytes)
    elif site.ctx is ops.Role.DENSE_PASS:
        dense = f"[{w.rows}, {w.cols}], one row or its source's width"
        why = (f"reshaped, and only windows of the result are taken: dense ({dense}) → view"
               if not copied else f"reshaped, and not provably dense ({dense}) → copy {nbytes} B")
    elif site.ctx is ops.Role.PASS:
        why = ("handed on to a value nothing reads or writes as a whole, only windows of it "
               "(each judged at its own address from this one's): left as it is")
    elif site.passed is not None:
        why = _passed_reason(w, copied, eg, nbytes, site.passed)
    else:
        why = _ord_reason(w, copied, eg, nbytes, storage)
    if d.kind == "copy" and d.placement == "shared":
        why += f" (shares the copy {d.copy_var.name})"
    return SliceDecision(w.var.name, label, "copy" if copied else "view", why,
                         bytes_copied=nbytes if copied and d.placement != "shared" else 0,
                         placement=d.placement, line=site.stmt.span.line)


def use_label(op: str, slot: tuple, ctx: ops.Role) -> str:
    if slot[0] == "alias":
        return "plain alias"
    if slot[0] == "init":
        return f"loop initializer {slot[1]}"
    if slot[0] == "yield":
        return f"yield value {slot[1]}"
    if slot[0] == "return":
        return f"return value {slot[1]} (escapes to the caller)"
    if callee_name(op) is not None:  # what the function does with it decided the context
        return f"{op} operand {slot[1]} (a program function: {_CALLEE.get(ctx, 'operand')})"
    if not ops.classified(op):  # it may write its operand: kept only as a proven aligned view
        return f"{op} operand {slot[1]} (unclassified op: it may write its operand)"
    return f"{op} {_LABEL[ctx]} {slot[1]}"


def window_bits(w: Window) -> int:
    t = w.var.type
    return t.dtype.storage_bits if isinstance(t, TileType) else 0


def _pitch(t: object) -> int | None:
    """The columns of a tile type of constant shape (None: not one)."""
    dims = const_shape(t) if isinstance(t, TileType) else None
    return dims[-1] if dims else None


def pow2_part(n: int, cap: int = CAP) -> int:
    return cap if n == 0 else min(n & -n, cap)


# ---------------------------------------------------------------------- offsets and their facts


def _accumulated(w: Window) -> tuple[Expr, Expr]:
    """The offsets of ``w`` in its root's base (row, column), as the slices spell them."""
    chain = w.chain()
    r, c = chain[0].offsets
    for x in chain[1:]:
        r, c = BinOp("+", r, x.offsets[0]), BinOp("+", c, x.offsets[1])
    return r, c


def _root_offsets(w: Window, eg: eb.EGraph) -> tuple[Expr, Expr, int | None, int | None]:
    """The accumulated offsets of ``w`` and the known multiples proven for them: the class of
    the left-nested ``Add`` of the chain's offset terms (what ``peel-chained-slice`` built)."""
    chain = w.chain()

    def offset_class(axis: int) -> object | None:
        cls = class_of(eg, "NI", chain[0].offset_terms[axis])
        for x in chain[1:]:
            nxt = class_of(eg, "NI", x.offset_terms[axis])
            cls = eg.lookup_function("Add", [cls, nxt]) if cls is not None else None
        return cls

    r, c = _accumulated(w)
    return (r, c, _multiple(eg, r, lambda: offset_class(0)),
            _multiple(eg, c, lambda: offset_class(1)))


def _multiple(eg: eb.EGraph, e: Expr, cls: Callable[[], object | None]) -> int | None:
    """The known multiple of offset ``e``: the value's own power of two when ``e`` is a
    constant, else the ``Mult`` fact of its e-class ``cls()`` (looked up only then: each
    e-graph evaluation costs tens of microseconds, and most offsets are constants)."""
    k = const_int(e)
    if k is not None:
        return pow2_part(k)
    c = cls()
    m = eg.lookup_function("Mult", [c]) if c is not None else None
    return None if m is None else eg.value_to_i64(m)


def alignment_reason(off_row: Expr, off_col: Expr, pitch: int | None, bits: int,
                     mult_row: int | None, mult_col: int | None, base_mult: int | None,
                     nbytes: int, kept: bool, base_bytes: int | None = None,
                     base_label: str = "MemRef byte offset") -> str:
    """The arithmetic behind an ordinary-operand decision, from the e-graph's known multiples
    (``base_bytes``: the base's constant MemRef byte offset, summed exactly with a constant
    column offset, as ``window-address-exact-constant-part`` does)."""
    parts = []
    r, c = const_int(off_row), const_int(off_col)
    exact = base_bytes is not None and base_bytes != 0 and c is not None
    base = f"{base_label} {base_bytes} B ({base_bytes * 8} bits)" if exact else ""
    if r is not None and c is not None and pitch is not None:
        total = (r * pitch + c) * bits
        parts.append(f"offset ({r} × {pitch} cols + {c}) × {bits} bits = {total} bits"
                     + (f" + {base} = {total + base_bytes * 8} bits" if exact else ""))
    else:
        if r is None or r != 0:
            parts.append(f"row offset {format_expr(off_row)} (multiple of {mult_row}) × "
                         f"{pitch if pitch is not None else '?'} cols × {bits} bits")
        if exact:
            parts.append(f"column offset {c} × {bits} bits + {base} = "
                         f"{c * bits + base_bytes * 8} bits")
        elif c is None or c != 0:
            parts.append(f"column offset {format_expr(off_col)} (multiple of {mult_col}) × "
                         f"{bits} bits")
    if base_mult is not None and base_mult < CAP and not exact:
        parts.append(f"base address a multiple of {base_mult} bits")
    if kept:
        return "; ".join(parts) + f": multiple of {ALIGN_BITS} → view"
    return "; ".join(parts) + f", not provably ≡ 0 mod {ALIGN_BITS} → copy {nbytes} B"


def _colx_reason(w: Window, copied: bool, nbytes: int) -> str:
    r, c = _accumulated(w)
    base = w.root.src.type
    bcols = _pitch(base)
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


def _copy_view_reason(w: Window, copied: bool, buf: str, eg: eb.EGraph, nbytes: int) -> str:
    """A use read from its parent's copy ``buf`` (fresh, aligned, pitch = the parent's columns),
    at the child's own offsets."""
    assert w.parent is not None
    (r, c), (kr, kc) = w.offsets, w.offset_terms
    mr = _multiple(eg, r, lambda: class_of(eg, "NI", kr))
    mc = _multiple(eg, c, lambda: class_of(eg, "NI", kc))
    reason = alignment_reason(r, c, w.parent.cols, window_bits(w), mr, mc, None, nbytes,
                              not copied)
    return f"{'view' if not copied else 'copy'} of the parent's copy {buf}: {reason}"


def _passed_reason(w: Window, copied: bool, eg: eb.EGraph, nbytes: int, passed: tuple) -> str:
    """A window passed to a function that only hands a window of it back: that window's
    address here (the operand's offsets plus the callee's, at the operand's pitch), or the
    operand's own when it is dense and aligned."""
    (h, wd), (dr, dc), need = passed
    r, c, mr, mc = _root_offsets(w, eg)
    pitch = _pitch(w.root.src.type)
    rr, cc = const_int(r), const_int(c)
    total = None
    if rr is not None and cc is not None and pitch is not None:
        total = ((rr + dr) * pitch + cc + dc) * window_bits(w)
        where = (f"the [{h}, {wd}] window it hands back is at (({rr} + {dr}) × {pitch} cols + "
                 f"{cc} + {dc}) × {window_bits(w)} bits = {total} bits")
    else:
        where = f"the [{h}, {wd}] window it hands back is at offset [{dr}, {dc}] of it"
    if need == "identity":  # (its callers col_expand it)
        return f"{where}: {'no' if copied else 'an'} identity copy there → " + (
            f"copy {nbytes} B" if copied else "view")
    if copied:
        return f"{where}, not provably ≡ 0 mod {ALIGN_BITS}, and the operand is not dense and " \
               f"aligned → copy {nbytes} B"
    if total is not None and total % ALIGN_BITS == 0:
        return f"{where}: multiple of {ALIGN_BITS} → view"
    return f"{where}; the operand is dense and aligned → view"


def _ord_reason(w: Window, copied: bool, eg: eb.EGraph, nbytes: int,
                storage: Storage | None = None) -> str:
    src = w.root.src
    base = src.type
    if isinstance(base, TileType) and base.memory is not None and base.memory is not _VEC:
        return f"{base.memory.value} window outside the pass's scope for this consumer: left as it is"
    r, c, mr, mc = _root_offsets(w, eg)
    pitch = _pitch(base)
    base_mult = base_bytes = None
    label = "MemRef byte offset"
    if storage is not None and (not storage.is_root(src) or src in storage.frames):
        # a view, carry or merge (or a parameter its calls frame, ir.frames): its pitch and
        # start are its storage's (ir.storage)
        lay, bits = storage.layout(src), window_bits(w)
        frame = storage.frames.get(src)
        if frame is not None and not frame.exact:
            return (f"its base {src.name!r} is where every call passes it ({frame.describe(bits)}): "
                    + (f"not provably aligned in every call → copy {nbytes} B" if copied else
                       "aligned in every call → view"))
        if lay is None or len(lay.strides) != 2 or lay.strides[1] != bits:
            return (f"its base {src.name!r} has no known row-major storage (a transpose, a "
                    "merge or carry of different windows, an unclassified op's result): "
                    + ("nothing provable → copy " + f"{nbytes} B" if copied else "view"))
        pitch = lay.strides[0] // bits
        rt, off = lay.root.type, lay.offset_bytes()
        m = rt.memref if isinstance(rt, TileType) else None
        frame = storage.frames.get(lay.root)
        start = frame.start if frame is not None else \
            0 if m is None or m.is_sentinel else m.byte_offset if m.is_known else None
        off_c = const_int(off) if off is not None else None
        if off_c is not None and isinstance(start, int):
            where = " (where every call passes it)" if frame is not None else ""
            base_bytes, label = start + off_c, f"{src.name!r}{where} starting"
            base_mult = pow2_part(base_bytes * 8)
    elif isinstance(base, TileType) and base.memref is not None and base.memref.is_known:
        base_bytes = base.memref.byte_offset
        base_mult = pow2_part(base_bytes * 8)
    return alignment_reason(r, c, pitch, window_bits(w), mr, mc, base_mult, nbytes, not copied,
                            base_bytes, label)
