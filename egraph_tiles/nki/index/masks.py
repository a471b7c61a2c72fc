"""Tile masks built from index relations (seed: "Index -> Mask Bridge").

A mask is a predicate over a tile's iteration space:

* :class:`CmpTileMask` -- ``expr OP 0`` for ``OP`` in ``< <= > >= == !=``;
  :class:`EQTileMask` is the ``==`` case (an index promoted to a mask);
* :class:`TileMaskIntersection` -- the conjunction of masks (nested ones are flattened).

``mask.evaluate(env)`` returns the boolean numpy array over ``mask.tile.shape``.
:func:`inst_mask` substitutes an instruction's predicates onto its destination indices and
intersects them (``None`` when the instruction is not predicated).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from egraph_tiles.nki.index.combine import combine_tiles, generate_subst_map
from egraph_tiles.nki.index.expr import AffineExpr, Var
from egraph_tiles.nki.index.tile import HOOKS as tile_hooks
from egraph_tiles.nki.index.tile import NDTile, TileIndex

__all__ = [
    "CmpTileMask",
    "EQTileMask",
    "Instruction",
    "TileMask",
    "TileMaskIntersection",
    "inst_mask",
    "pred_eq",
    "pred_ge",
    "pred_gt",
    "pred_le",
    "pred_lt",
    "pred_ne",
    "substitute_expr_indices",
]

_OPS = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


class TileMask:
    """Base class: a boolean predicate over ``tile``'s iteration space."""

    tile: NDTile | None

    def evaluate(self, env: Mapping[str, Any] | None = None) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - abstract

    def exprs(self) -> tuple[AffineExpr, ...]:
        """Every affine expression the mask reads."""
        raise NotImplementedError  # pragma: no cover - abstract

    def substitute(self, subst_map: Mapping[Var, AffineExpr], tile: NDTile | None) -> TileMask:
        raise NotImplementedError  # pragma: no cover - abstract

    def __and__(self, other: TileMask) -> TileMaskIntersection:
        tiles = [t for t in (self.tile, other.tile) if t is not None]
        return TileMaskIntersection(self, other, tile=combine_tiles(*tiles) if tiles else None)

    def __bool__(self) -> bool:
        raise TypeError("a tile mask has no truth value; evaluate() it over its tile")

    def _env(self, env: Mapping[str, Any] | None) -> dict[str, Any]:
        tile = self.tile if self.tile is not None else NDTile((), ())
        return {**tile.axis_grid(), **(env or {})}

    def _shape(self) -> tuple[int, ...]:
        return self.tile.shape if self.tile is not None else ()


@dataclass(frozen=True, eq=False)
class CmpTileMask(TileMask):
    """``expr OP 0`` over ``tile``."""

    expr: AffineExpr
    op: str
    tile: NDTile | None = None

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise ValueError(f"unknown comparison {self.op!r}")

    def evaluate(self, env: Mapping[str, Any] | None = None) -> np.ndarray:
        val = np.asarray(self.expr.evaluate(self._env(env)))
        return np.broadcast_to(_OPS[self.op](val, 0), self._shape())

    def exprs(self) -> tuple[AffineExpr, ...]:
        return (self.expr,)

    def substitute(self, subst_map: Mapping[Var, AffineExpr], tile: NDTile | None) -> CmpTileMask:
        return type(self)(self.expr.substitute(subst_map), self.op, tile)

    def __repr__(self) -> str:
        return f"({self.expr} {self.op} 0)"


class EQTileMask(CmpTileMask):
    """``expr == 0`` over ``tile`` (an index promoted to a mask; ``i == j`` is ``i - j == 0``)."""

    def __init__(self, expr: AffineExpr, tile: NDTile | None = None) -> None:
        super().__init__(expr, "==", tile)

    def substitute(self, subst_map: Mapping[Var, AffineExpr], tile: NDTile | None) -> EQTileMask:
        return EQTileMask(self.expr.substitute(subst_map), tile)


@dataclass(frozen=True, eq=False)
class TileMaskIntersection(TileMask):
    """Conjunction of masks (flattened; an empty intersection is all-true)."""

    masks: tuple[TileMask, ...] = field(default=())
    tile: NDTile | None = None

    def __init__(self, *masks: TileMask, tile: NDTile | None = None) -> None:
        flat: list[TileMask] = []
        for m in masks:
            if isinstance(m, TileMaskIntersection):
                flat.extend(m.masks)
            elif isinstance(m, TileMask):
                flat.append(m)
            else:
                raise TypeError("unexpected type %s" % type(m))
        if tile is None:
            tiles = [m.tile for m in flat if m.tile is not None]
            tile = combine_tiles(*tiles) if tiles else None
        object.__setattr__(self, "masks", tuple(flat))
        object.__setattr__(self, "tile", tile)

    def evaluate(self, env: Mapping[str, Any] | None = None) -> np.ndarray:
        full = self._env(env)
        for m in self.masks:  # size-1 axes of a broadcast operand are always 0
            for idx in m.tile.indices if m.tile is not None else ():
                if idx.tripcount == 1:
                    full.setdefault(idx.var.name, 0)
        out = np.ones(self._shape(), dtype=bool)
        for m in self.masks:
            assert isinstance(m, CmpTileMask), "intersections are flattened to comparisons"
            val = np.asarray(m.expr.evaluate(full))
            out = out & np.broadcast_to(_OPS[m.op](val, 0), self._shape())
        return out

    def exprs(self) -> tuple[AffineExpr, ...]:
        return tuple(e for m in self.masks for e in m.exprs())

    def substitute(self, subst_map: Mapping[Var, AffineExpr], tile: NDTile | None) -> TileMaskIntersection:
        return TileMaskIntersection(*(m.substitute(subst_map, tile) for m in self.masks), tile=tile)

    def __repr__(self) -> str:
        return " & ".join(map(repr, self.masks)) or "True"


def _pred(op: str) -> Any:
    def pred(lhs: AffineExpr, rhs: AffineExpr, tile: NDTile | None = None) -> CmpTileMask:
        if op == "==":
            return EQTileMask(lhs - rhs, tile)
        return CmpTileMask(lhs - rhs, op, tile)

    pred.__name__ = f"pred_{op}"
    pred.__doc__ = f"Mask ``lhs {op} rhs`` over ``tile``."
    return pred


pred_lt = _pred("<")
pred_le = _pred("<=")
pred_gt = _pred(">")
pred_ge = _pred(">=")
pred_eq = _pred("==")
pred_ne = _pred("!=")


def substitute_expr_indices(mask: TileMask, subst_map: Mapping[Var, AffineExpr],
                            tile: NDTile | None = None) -> TileMask:
    """Apply one substitution map across a whole predicate (every index it reads)."""
    return mask.substitute(subst_map, tile if tile is not None else mask.tile)


@dataclass(frozen=True)
class Instruction:
    """What :func:`inst_mask` reads from an instruction."""

    inst_dst_tile: NDTile
    dst_par_indices: Sequence[Any]
    dst_free_indices: Sequence[Any]
    predicates: Sequence[TileMask] = ()

    @property
    def is_predicated(self) -> bool:
        return bool(len(self.predicates))


def inst_mask(inst: Instruction) -> TileMaskIntersection | None:
    """Substitute every predicate onto the destination indices and intersect them."""
    if not inst.is_predicated:
        return None
    dst_tile = inst.inst_dst_tile
    dst_par = list(inst.dst_par_indices)
    dst_free = list(inst.dst_free_indices)
    subst_map = generate_subst_map(
        dst_tile.canonical_par_indices + dst_tile.canonical_free_indices, dst_par + dst_free
    )
    tiles = [i.tile for i in dst_par + dst_free if isinstance(i, TileIndex) and i.tile is not None]
    tile = combine_tiles(*tiles) if tiles else dst_tile
    masks = [substitute_expr_indices(p, subst_map, tile) for p in inst.predicates]
    return TileMaskIntersection(*masks, tile=tile)


tile_hooks.update(EQTileMask=EQTileMask, TileMaskIntersection=TileMaskIntersection, pred_lt=pred_lt,
                  pred_le=pred_le, pred_gt=pred_gt, pred_ge=pred_ge, pred_eq=pred_eq, pred_ne=pred_ne)
