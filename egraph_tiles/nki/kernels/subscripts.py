"""Subscripts, read for the kernel reader (a part of
:class:`~egraph_tiles.nki.kernels.reader.Reader`): ``nl.mgrid[...]``, ``arange[:, None]``,
Python sequences, and every ``tensor[index]`` -- recorded as a
:class:`~egraph_tiles.nki.kernels.values.RawAccess` whose value is a tile of the index's shape.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from egraph_tiles.nki.index.expr import AffineExpr
from egraph_tiles.nki.index.masks import TileMask
from egraph_tiles.nki.index.ranges import DynSlice, arange, partial_tile_index
from egraph_tiles.nki.index.scalar import DynamicScalar
from egraph_tiles.nki.index.tile import TileIndex
from egraph_tiles.nki.kernels.values import (
    MGrid,
    Module,
    Opaque,
    RawAccess,
    ReaderError,
    Tensor,
    broadcast,
    const_value,
    expand_ellipsis,
    is_int,
    known_array,
    slice_count,
    view_shape,
)

__all__ = ["Subscripts"]


def _indirect_shape(items: Sequence[Any]) -> tuple[int, ...] | None:
    """The tile shape of ``t[b, idx_tile, i_f]``: the broadcast of its tile and arange
    indices (integers drop their dimension), when every other index is an integer."""
    shapes = []
    for it in items:
        if isinstance(it, (Tensor, TileIndex)):
            shapes.append(it.shape)
        elif not isinstance(it, (int, AffineExpr)):
            return None
    return broadcast(shapes) if shapes and all(s is not None for s in shapes) else None


class Subscripts:
    """``x[...]`` on every kind of value (mixed into the reader)."""

    def _subscript(self, node: ast.Subscript, env: dict[str, Any], role: str) -> Any:
        base = self.expr(node.value, env)
        if isinstance(base, Module) and base.qual.endswith("language.mgrid"):
            return self._mgrid(node, env)
        if isinstance(base, arange):
            item = self._index_items(node.slice, env)
            try:
                return base[item if len(item) != 1 else item[0]]
            except (IndexError, ValueError, TypeError) as e:
                raise ReaderError(f"`{ast.unparse(node)}`: {e}", node) from None
        if isinstance(base, Tensor):
            return self._access(node, base, env, role)
        if isinstance(base, (tuple, list, str, dict)) or known_array(base):
            key = self.expr(node.slice, env)
            key = const_value(key)
            try:
                return const_value(base[key])
            except (TypeError, IndexError, KeyError):
                if isinstance(key, AffineExpr) or known_array(base):
                    return Opaque(f"`{ast.unparse(node)}` indexes a Python sequence with a "
                                  "loop variable")
                raise ReaderError(f"cannot evaluate `{ast.unparse(node)}`", node) from None
        if isinstance(base, Opaque):
            if base.kind == "unknown" and "has no value" in base.why:
                raise ReaderError(base.why, node)
            self._index_items(node.slice, env)
            return base
        if isinstance(base, TileIndex):
            raise ReaderError(f"`{ast.unparse(node)}` subscripts an index (expected "
                              "nl.arange(n)[:, None] on the arange itself)", node)
        return Opaque(f"`{ast.unparse(node)}` is not analyzed")

    def _index_items(self, sl: ast.expr, env: dict[str, Any]) -> tuple[Any, ...]:
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        return tuple(const_value(self.expr(e, env)) for e in elts)

    def _mgrid(self, node: ast.Subscript, env: dict[str, Any]) -> MGrid:
        items = self._index_items(node.slice, env)
        ranges = []
        for it in items:
            if not isinstance(it, slice):
                raise ReaderError(f"nl.mgrid takes slices `start:stop[:step]`, got "
                                  f"`{ast.unparse(node.slice)}`", node)
            start, stop, step = (0 if it.start is None else it.start, it.stop,
                                 1 if it.step is None else it.step)
            if isinstance(start, AffineExpr) and step == 1 and isinstance(stop, (int, AffineExpr)):
                n = slice_count(slice(start, stop), 0)
                if n is not None and n > 0:  # a moving window of constant length
                    ranges.append((start, n))
                    continue
            if not all(is_int(v) for v in (start, stop, step)):
                raise ReaderError(f"nl.mgrid bounds must be integers known before the kernel "
                                  f"runs: `{ast.unparse(node.slice)}`", node)
            r = range(int(start), int(stop), int(step))
            if int(step) <= 0 or len(r) == 0:
                raise ReaderError(f"nl.mgrid axis `{start}:{stop}:{step}` is empty", node)
            ranges.append(r)
        axes = partial_tile_index(tuple(len(r) if isinstance(r, range) else r[1] for r in ranges))
        out = []
        for ax, r in zip(axes, ranges):
            if isinstance(r, range):
                idx = ax * r.step if r.step != 1 else ax
                out.append(idx + r.start if r.start else idx)
            else:
                out.append(ax + DynamicScalar(r[0]))
        return MGrid(tuple(out))

    def _access(self, node: ast.Subscript, base: Tensor, env: dict[str, Any], role: str) -> Any:
        items = self._index_items(node.slice, env)
        text = node.value.id if isinstance(node.value, ast.Name) else ast.unparse(node.value)
        legacy = False
        subs: list[Any] = []
        for it in items:
            if isinstance(it, MGrid):
                raise ReaderError(f"`{ast.unparse(node)}`: index with the grid's axes "
                                  "(grid.p, grid.x) or unpack it", node)
            if isinstance(it, Opaque):
                if it.kind == "nonaffine":
                    raise ReaderError(f"non-affine index in `{ast.unparse(node)}`: {it.why}",
                                  node, "non-affine")
                raise ReaderError(f"index of `{ast.unparse(node)}` cannot be analyzed: "
                                  f"{it.why}", node)
            if isinstance(it, Tensor):
                self._finding(node.lineno, f"indirect access `{ast.unparse(node)}`: the index "
                              f"is the data tile {it.name!r} (read at run time), not inferred",
                              "indirect")
                # its elements are not inferred, its shape is the index tiles' broadcast
                return base.with_shape(_indirect_shape(items), "<tile>")
            if isinstance(it, TileIndex):
                legacy = True
            elif isinstance(it, float):
                raise ReaderError(f"`{ast.unparse(node)}`: a float index", node)
            elif it is None:
                raise ReaderError(f"`{ast.unparse(node)}`: `None` (new axis) in a tensor "
                                  "index is not supported", node)
            elif isinstance(it, (TileMask, arange)):
                raise ReaderError(f"`{ast.unparse(node)}`: expected an index, got "
                                  f"{type(it).__name__} (subscript the arange: "
                                  "nl.arange(n)[:, None])", node)
            elif not isinstance(it, (int, AffineExpr, slice, DynSlice, type(Ellipsis))):
                raise ReaderError(f"index of `{ast.unparse(node)}` cannot be analyzed "
                                  f"({type(it).__name__})", node)
            subs.append(it)
        if base.shape is None:
            raise ReaderError(f"the shape of {text!r} is not known (pass --shape "
                              f"{text}=D0xD1... for a parameter)", node)
        subs = expand_ellipsis(subs, len(base.shape), node)
        for s in subs:
            if isinstance(s, slice) and any(isinstance(p, (Opaque, Tensor, TileIndex))
                                            for p in (s.start, s.stop, s.step)):
                raise ReaderError(f"slice bounds of `{ast.unparse(node)}` must be integers or "
                                  "affine loop expressions", node)
        acc = RawAccess(node.lineno, node.col_offset, node, text, base, role, tuple(subs),
                        legacy, tuple(self.scope), instruction=self.instruction,
                        stmt_line=self.stmt_line, in_helper=self.depth > 0,
                        operand=self._nki_args > 0 or role == "dst",
                        unrolled=tuple(self.unrolled) if self.depth == 0 else (),
                        local_names=self.local_names[-1] if self.local_names else None)
        self.out.accesses.append(acc)
        for c in self._collect:
            c.append(acc)
        shape = view_shape(acc.subs, base.shape)
        if shape is not None and base.buffer != "hbm" and not legacy:
            # an on-chip tile keeps a size-1 free axis where an integer indexes it
            keep = [k for k, sub in enumerate(acc.subs) if k > 0 and isinstance(sub, (int, AffineExpr))]
            if keep and len(shape) + len(keep) == len(base.shape):
                full = list(shape)
                for k in keep:
                    full.insert(k, 1)
                shape = tuple(full)
        return Tensor("<tile>", shape, base.dtype, base.buffer, id(acc))

