"""The copies of a function and the bytes each moves: one walker for every count of bytes.

A **copy** is a statement whose call the registry declares a copy — family ``COPY`` with a fresh
result (``tile.extract``, ``tile.move``, ``tile.transpose``, and any op registered alike): it
fills a new buffer from a source tile.  It moves the bytes of that buffer: its result type's
elements × storage bits / 8 (:func:`ir.target.copy_bytes`), the type the registry infers from the
operands, else the target's declared type.  A symbolic shape leaves the bytes unknown (None).

The report's static bytes (each copy statement once), the metrics of the benchmarks and the
dynamic bytes of ``cost.loops`` (each copy × the executions of its place) are views of
:func:`copies`; nothing else recognizes a copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from .exprs import Call, Expr, VarRef, const_shape
from .ops import Family, OpTypeError, Storage, infer_type, lookup
from .stmts import AssignStmt, EvalStmt, Function, Stmt, walk
from .target import copy_bytes
from .types import TileType, Type


class Copy(NamedTuple):
    """A copy statement, its call and the bytes it moves (None: a symbolic shape)."""

    stmt: Stmt
    call: Call
    nbytes: int | None


def is_copy(op: str) -> bool:
    """Whether the registry declares ``op`` a copy: family ``COPY``, a fresh result."""
    d = lookup(op)
    return d is not None and d.family is Family.COPY and d.effect is not None \
        and d.effect.storage is Storage.FRESH


def _type_of(e: Expr) -> Type | None:
    return e.var.type if isinstance(e, VarRef) else None


def moved_bytes(target: object, call: Call) -> int | None:
    """Bytes the copy ``call`` (assigned to ``target``, or None) moves: its result's."""
    try:
        t = infer_type(call, _type_of)
    except OpTypeError:
        t = None
    if not isinstance(t, TileType) or const_shape(t) is None:
        t = getattr(target, "type", None)
    dims = const_shape(t) if isinstance(t, TileType) else None
    return None if dims is None else copy_bytes(dims, t.dtype)  # type: ignore[union-attr]


def copies(fn: Function) -> Iterator[Copy]:
    """Every copy statement of ``fn``, in program order."""
    for s in walk(fn.body):
        if isinstance(s, AssignStmt) and isinstance(s.value, Call):
            target, call = s.target, s.value
        elif isinstance(s, EvalStmt):
            target, call = None, s.call
        else:
            continue
        if is_copy(call.op):
            yield Copy(s, call, moved_bytes(target, call))


def known_bytes(c: Copy, strict: bool) -> int:
    """``c``'s bytes; an unknown count is 0, or a ``ValueError`` when ``strict``."""
    if c.nbytes is None:
        if strict:
            raise ValueError(f"{c.call.op} with a symbolic shape: bytes are unknown")
        return 0
    return c.nbytes


def static_copy_bytes(fn: Function, strict: bool = False) -> int:
    """Bytes ``fn``'s copy statements move, each statement once (unknown sizes: see
    :func:`known_bytes`)."""
    return sum(known_bytes(c, strict) for c in copies(fn))
