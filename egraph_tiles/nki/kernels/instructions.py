"""Calls of ``nl.*`` / ``nisa.*`` and type tests, read for the kernel reader (a part of
:class:`~egraph_tiles.nki.kernels.reader.Reader`): index builders are evaluated, instructions
are recorded (:class:`~egraph_tiles.nki.kernels.values.CallRecord`, with their whole-tile
operands) and their results shaped by the table in :mod:`~egraph_tiles.nki.kernels.calls`.
"""

from __future__ import annotations

import ast
import math
from typing import Any

import numpy as np

from egraph_tiles.nki.index.expr import AffineExpr
from egraph_tiles.nki.index.masks import TileMask
from egraph_tiles.nki.index.tile import TileIndex
from egraph_tiles.nki.kernels.calls import INDEX_CALLS, call_result
from egraph_tiles.nki.kernels.values import (
    NUMPY_FUNCS,
    CallRecord,
    Class,
    Object,
    Opaque,
    RawAccess,
    Tensor,
    const_value,
    is_int,
    is_lang,
    known_array,
)

__all__ = ["Instructions"]


class Instructions:
    """Module calls and type tests (mixed into the reader)."""

    def _type_test(self, fn: Any, node: ast.Call, env: dict[str, Any]) -> Any:
        """``isinstance(x, int)`` / ``type(x)`` of a value known before the kernel runs: a loop
        variable or program id is an ``int``, a tensor is none of Python's types."""
        args = [const_value(self.expr(a, env)) for a in node.args]
        x = args[0] if args else None
        if isinstance(x, (Opaque, TileMask, TileIndex)) or (fn is isinstance and len(args) != 2):
            return Opaque(f"`{ast.unparse(node)}` is not known before the kernel runs")
        kind = int if isinstance(x, AffineExpr) else (
            Tensor if isinstance(x, Tensor) else Object if isinstance(x, Object) else type(x))
        if fn is type:
            return kind
        classes = args[1] if isinstance(args[1], tuple) else (args[1],)
        if not all(isinstance(c, type) or isinstance(c, Class) for c in classes):
            return Opaque(f"`{ast.unparse(node)}`: the class is not known")
        if isinstance(x, Object):
            return any(isinstance(c, Class) and c.node.name == x.cls for c in classes)
        return any(isinstance(c, type) and issubclass(kind, c) for c in classes)

    def _module_call(self, qual: str, node: ast.Call, env: dict[str, Any]) -> Any:
        short = qual.rsplit(".", 1)[-1]
        if qual.startswith("math."):
            args = [const_value(self.expr(a, env)) for a in node.args]
            f = getattr(math, short, None)
            if f is not None and all(isinstance(a, (int, float)) for a in args):
                try:
                    return f(*args)
                except (TypeError, ValueError):
                    pass
            return Opaque(f"`{ast.unparse(node)}` is not known before the kernel runs")
        if qual in ("numpy.prod", "np.prod") or qual.endswith(".prod") and qual.startswith("num"):
            arg = const_value(self.expr(node.args[0], env)) if node.args else None
            if isinstance(arg, (tuple, list)) and all(is_int(d) for d in arg):
                return math.prod(arg)
        if qual.startswith(("numpy.", "np.")) and short in NUMPY_FUNCS:
            args = [const_value(self.expr(a, env)) for a in node.args]
            kwargs = {k.arg: const_value(self.expr(k.value, env)) for k in node.keywords
                      if k.arg and k.arg != "dtype"}
            if all(isinstance(a, (int, float, tuple, list)) or known_array(a)
                   for a in [*args, *kwargs.values()]):
                try:
                    out = getattr(np, short)(*args, **kwargs)
                except (TypeError, ValueError):
                    out = None
                if known_array(out) or isinstance(out, np.generic):
                    return const_value(out)
            return Opaque(f"`{ast.unparse(node)}` is not known before the kernel runs")
        if not qual.startswith("nki."):
            for a in node.args:
                self.expr(a, env)
            return Opaque(f"`{ast.unparse(node.func)}(...)` (another library) is not analyzed")
        lang = is_lang(qual.rsplit(".", 1)[0])
        if lang and short in INDEX_CALLS:
            return INDEX_CALLS[short](self, node, env)
        collect: list[RawAccess] = []
        self._nki_args += 1
        try:
            args, kwargs = self._args(node, env, collect, dst_first=lang and short == "store")
        finally:
            self._nki_args -= 1
        if kwargs.get("mask") is not None:
            self._apply_mask(node, kwargs["mask"], collect, args, kwargs)
        result = call_result(short if lang else "", node, args, kwargs)
        views = {id(a) for a in collect}
        arg_nodes = [a for a in node.args if not isinstance(a, ast.Starred)]
        pairs = list(zip(arg_nodes, args)) if len(arg_nodes) == len(args) else []
        pairs += [(k.value, kwargs[k.arg]) for k in node.keywords if k.arg in kwargs]
        whole = [(n, v) for n, v in pairs if isinstance(v, Tensor) and v.from_access not in views]
        rec = CallRecord(node, short if lang else "", self.instruction, args, kwargs, whole,
                         local_names=self.local_names[-1] if self.local_names else None,
                         in_helper=self.depth > 0)
        self.out.calls.append(rec)
        self._records[id(node)] = rec
        for acc in collect:
            if acc.record is None:  # the innermost call an access is an operand of
                acc.record = rec
        if isinstance(result, Tensor):
            result.producer = rec
            rec.result = result
        return result

    def _written(self, node: ast.expr, value: Any, n0: int) -> None:
        """``t[...] = v`` / ``t[...] += v``: the destination takes the shape of the tile written
        into it.  It becomes an access of the instruction that computes ``v`` in the statement
        (or of a copy instruction when ``v`` names a tile computed earlier), so the program
        check sees a narrowed value meet a destination that is not narrowed with it."""
        if not isinstance(value, Tensor) or value.producer is None:
            return
        dsts = [a for a in self.out.accesses[n0:] if a.role == "dst" and a.record is None]
        if not dsts:
            return
        rec = value.producer
        if rec.node is not node:
            rec = CallRecord(node, "", self.instruction, [value], {}, [(node, value)],
                             local_names=self.local_names[-1] if self.local_names else None,
                             in_helper=self.depth > 0)
            self.out.calls.append(rec)
        for acc in dsts:
            acc.record = rec

    def escape(self, *values: Any) -> None:
        """A call's result tile read outside an nl / nisa call (Python arithmetic on it, its
        ``.shape``, a method): its shape must stay what the legacy kernel has."""
        for v in values:
            if isinstance(v, Tensor) and v.producer is not None:
                self.out.escapes.add(id(v.producer))

