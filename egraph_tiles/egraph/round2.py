"""Round 2 of the driver: slices of a copied slice.

A slice ``c`` of a slice ``p`` whose parent got a copy at its definition may read that copy
instead of the source.  "The parent was copied" is a result of round 1's extraction, not a fact
rules can derive (no negation), so the driver states it as gate rows ``(parent window, child
tile, ctx)`` for the uses where it holds (``CopyViewGateRow``, read by ``rules.slices``
``copyview``), saturates the same e-graph again and extracts again; the cost model then picks,
among the forms proven safe, the copy's view, the source's view or a copy.  Whether nothing
writes the source in between is read from the memory effects (``ir.effects``).
"""

from __future__ import annotations

from .bindings import eb

from ..ir import ops
from ..ir.effects import call_of, op_effect, operand_index
from .decode import Decoder
from .encoding import Encoding, UseSite
from .schedule import class_of, has_fact

Gate = tuple[int, int, str]


def copy_view_gates(enc: Encoding, dec: Decoder, eg: eb.EGraph) -> dict[UseSite, Gate]:
    """Gate rows ``(parent window, child tile, ctx)`` by use site: uses of a slice ``c`` of
    a Vec slice ``p`` that got a copy at its definition in round 1, with nothing writing the
    source between ``p``'s definition and the use (nor the use itself writing it).  Uses share an
    e-class per (tile class, ctx), so a class is gated only when every use in it qualifies with
    the same parent; a parent whose own uses are gated is skipped (its copy must stay as in
    round 1).  A child identical to its parent is excluded by the rule itself."""
    cand: dict[UseSite, int] = {}
    for site in enc.uses:
        w = site.window
        p = w.parent
        if p is None or site.ctx not in (ops.Role.ORD, ops.Role.COLX) or p.key not in dec.buf_var:
            continue
        if dec.hazard(p, site.stmt):
            continue
        q = dec.fx.point(site.stmt).pos
        if dec.fx.written_in(p.root.src, q - 1, q):
            continue  # the consumer writes the source's storage: it must write the source
        if not plain_read(site) or has_fact(eg, "WrittenUse", site.key):
            continue  # a use written through (rules.checks) must stay on the source
        cand[site] = p.key
    if not cand:
        return {}
    classes: dict[object, list[UseSite]] = {}
    for site in enc.uses:
        classes.setdefault(class_of(eg, "NR", site.key), []).append(site)
    gates: dict[UseSite, Gate] = {}
    for sites in classes.values():
        parents = {cand.get(x) for x in sites}
        if len(parents) != 1 or None in parents:
            continue
        kp = parents.pop()
        for x in sites:
            gates[x] = (kp, enc.tile_of[x.var], x.ctx)
    gated_windows = {x.window.key for x in enc.uses if x in gates}
    return {k: g for k, g in gates.items() if g[0] not in gated_windows}


def plain_read(site: UseSite) -> bool:
    """Whether the use only reads its operand: a call argument of a registered op that neither
    writes it back nor returns a view of it (an escape or a view could be written later under
    another name, and the write must land in the source, not in the parent's copy)."""
    call = call_of(site.stmt)
    if call is None or site.slot[0] not in ("arg", "kwarg"):
        return False
    eff = op_effect(call.op)
    if eff is None or eff.storage is ops.Storage.VIEW:
        return False
    index = site.slot[1] if site.slot[0] == "arg" else operand_index(call, site.slot[1])
    return isinstance(index, int) and not (eff.storage is ops.Storage.WRITES and eff.of == index)


def gates_respected(gates: dict[UseSite, Gate], dec: Decoder) -> bool:
    """Whether every use that reads a parent's copy in round 2 is one the gates allowed (else
    the driver keeps round 1)."""
    return all(gates.get(site) is not None and gates[site][0] == kp for site, kp in dec.buf_sites)
