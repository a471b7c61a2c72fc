"""NKI-style subscripts on tiles: ``t[i, :]``, ``t[:, 64:128]``, ``t[ds(off, 64), :]`` → ``tile.slice``.

The bridge between the NKI index layer (:mod:`egraph_tiles.nki`) and the tile DSL.  Each
subscript element is reduced to ``(start, length, step)`` by the *same* normalization chain
NKI uses -- :func:`~egraph_tiles.nki.index.ranges.normalize_slice` (Python slices) or
:func:`~egraph_tiles.nki.index.ranges.normalize_range_args` (``ds`` and single indices) →
:func:`~egraph_tiles.nki.index.ranges.normalize_expr_range_args` -- whose constant detection and
supremum are the e-graph's (one batched solve per subscript).  The offsets come back as the
affine **normal form** (``8 + i * 16`` and ``(i * 16 + 8)`` both become ``i * 16 + 8``) and
are rebuilt as IR scalar expressions, so the result is an ordinary canonical slice::

    t[a:b, c:d]        tile.slice(t, [b - a, d - c], [a, c])
    t[i, :]            tile.slice(t, [1, cols], [i, 0])            (rank kept, see below)
    t[ds(off, 64), :]  tile.slice(t, [64, cols], [off, 0])         (also pl.ds)
    t[ds(off, n), :]   tile.slice(t, [sup, cols], [off, 0], [n, cols])   (n a runtime scalar)

Choices (documented in docs/dsl.md, "NKI subscripts in the tile DSL"):

* **An integer or scalar index selects a size-1 window and keeps the rank** (``t[i, :]`` is a
  ``[1, cols]`` tile).  Tiles of this IR are 2-D and every consumer op expects rank 2; a
  rank-reducing index would need ``drop_dims`` -- a 5-argument slice the canonicalization
  skips, so its alignment proofs would not apply.  Missing trailing elements mean ``:``.
* **Runtime lengths.**  When ``stop - start`` is not a compile-time constant the static
  extent is the e-graph supremum of ``stop - start`` and the runtime length becomes the
  slice's ``valid_shape`` (4-argument form).  The DSL has no way to declare a scalar's range,
  so each runtime scalar of the element is taken to lie in ``[0, D]`` (``D`` = the tile's
  extent on that axis: an index or a length past it can only address outside the tile), and
  the extent is clamped to ``D - c`` where ``c`` is the constant part of ``start`` -- a window
  starting at ``c`` cannot reach past the tile's end.
* **Only dense windows**: a step other than 1 is rejected (``tile.slice`` has no stride).
  The seed's messages come first: step 0, then a non-unit step with a runtime length.
* **Bounds**: a window with a constant start must lie inside the tile; any window's static
  extent must fit the tile.  Out-of-range windows are a :class:`DslError` at the element.
* A subscript is an **assignment's whole right-hand side** (``row = t[i, :]``), like every
  other op of this SSA DSL; the printer writes the canonical ``pl.tile.slice(...)`` text.
"""

from __future__ import annotations

import ast
from numbers import Integral
from typing import TYPE_CHECKING, Any

from ..ir.exprs import BinOp, Call, Const, Expr, ListExpr, Neg, Var, VarRef, const_int, const_shape
from ..ir.types import ScalarType, TileType
from .errors import DslError
from .read_common import dotted as _dotted

if TYPE_CHECKING:
    from egraph_tiles.nki.index.normal_form import NormalForm

    from .read_exprs import ExprReader as _ExprReader

__all__ = ["lower_subscript"]

_DS_NAMES = ("ds", "pl.ds")


class _Reject(Exception):
    """A subscript element the bridge cannot lower; carries the message (located later)."""


class _Scalars:
    """IR scalar variables ↔ the NKI runtime-scalar variables standing for them."""

    def __init__(self, hi: int):
        self.hi = hi
        self.by_name: dict[str, Var] = {}

    def affine(self, e: Expr, role: str) -> Any:
        """``e`` as an int (constant) or an ``AffineExpr``; ``role`` names it in errors."""
        from egraph_tiles.nki.index.expr import AffineExpr, scalar_var

        c = const_int(e)
        if c is not None:
            return c
        if isinstance(e, Const):  # a float or bool literal
            raise _Reject(f"`{role}` must be int or scalar[int]")
        if isinstance(e, VarRef):
            v = e.var
            if not (isinstance(v.type, ScalarType) and v.type.dtype.is_int):
                raise _Reject(f"`{role}` must be int or scalar[int] ({v.name!r} is not an "
                              "integer scalar)")
            name = f"{v.name}_{v.uid}"
            self.by_name[name] = v
            return AffineExpr.var(scalar_var(name, 0, self.hi))
        if isinstance(e, Neg):
            return -self.affine(e.operand, role)
        if isinstance(e, BinOp):
            a, b = self.affine(e.lhs, role), self.affine(e.rhs, role)
            if e.op == "+":
                return a + b
            if e.op == "-":
                return a - b
            if e.op == "*":
                if isinstance(a, Integral) or isinstance(b, Integral):
                    return a * b
                raise _Reject("index is not affine: a product of two runtime scalars; expected "
                              "multiplication by an integer constant")
            if not isinstance(b, Integral):
                raise _Reject(f"'{e.op}' between NKI index and non integer is not supported.")
            if b <= 0:
                raise _Reject(f"'{e.op}' of an index by a non-positive integer ({b}) is not supported")
            return a // b if e.op == "//" else a % b
        raise _Reject(f"`{role}` must be int or scalar[int]")

    def to_ir(self, nf: NormalForm) -> Expr:
        """An affine normal form as an IR scalar expression: terms, then the constant."""
        out: Expr | None = None
        # positive terms first (``off - i * 2``, not ``-(i * 2) + off``), each group in the
        # normal form's atom order
        terms = [t for t in nf.terms if t[1] > 0] + [t for t in nf.terms if t[1] < 0]
        for atom, coef in terms:
            base = self._atom(atom)
            mag = abs(coef)
            term = base if mag == 1 else BinOp("*", base, Const(mag))
            if out is None:
                out = term if coef > 0 else Neg(term)
            else:
                out = BinOp("+" if coef > 0 else "-", out, term)
        if out is None:
            return Const(nf.const)
        if nf.const:
            out = BinOp("+" if nf.const > 0 else "-", out, Const(abs(nf.const)))
        return out

    def _atom(self, atom: Any) -> Expr:
        from egraph_tiles.nki.index.expr import Var as NkiVar

        if isinstance(atom, NkiVar):
            return VarRef(self.by_name[atom.name])
        return BinOp("//" if atom.op == "floordiv" else "%", self.to_ir(atom.operand), Const(atom.d))


def lower_subscript(reader: _ExprReader, node: ast.Subscript) -> Call:
    """Lower ``t[...]`` (``t`` a tile with a constant shape) to a canonical ``tile.slice`` call."""
    base = node.value
    if not isinstance(base, ast.Name) or base.id not in reader.env:
        raise reader.err(node, "expected a subscript of a tile variable, e.g. row = t[i, :]")
    src = reader.env[base.id]
    st = src.type
    if not isinstance(st, TileType):
        kind = type(st).__name__.replace("Type", "").lower() if st is not None else "value"
        raise reader.err(node, f"{base.id!r} is a {kind}; subscripts apply to tiles only "
                         "(load a tile first with pl.tile.load)")
    dims = const_shape(st)
    if dims is None:
        raise reader.err(node, f"subscript of {base.id!r}, whose shape is not constant; "
                         "expected a tile with a compile-time shape (or use pl.tile.slice)")
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if len(items) > len(dims):
        raise reader.err(node, f"{len(items)} subscripts for the rank-{len(dims)} tile "
                         f"{base.id!r}; expected at most {len(dims)}")
    axes = [_Axis(reader, base.id, k, item, d) for k, (item, d) in enumerate(zip(items, dims))]
    axes += [_Axis.full(reader, base.id, k, d) for k, d in enumerate(dims) if k >= len(items)]
    _presolve(axes)
    for ax in axes:
        ax.normalize()
    shape = ListExpr(tuple(Const(ax.extent) for ax in axes))
    offset = ListExpr(tuple(ax.offset for ax in axes))
    args: tuple[Expr, ...] = (VarRef(src), shape, offset)
    if any(ax.valid is not None for ax in axes):
        valid = tuple(ax.valid if ax.valid is not None else Const(ax.extent) for ax in axes)
        args += (ListExpr(valid),)
    return Call("tile.slice", args)


class _Axis:
    """One subscript element of one axis: read, normalized, checked."""

    def __init__(self, reader: _ExprReader, tile: str, axis: int, item: ast.AST | None, dim: int):
        self.reader, self.tile, self.axis, self.node, self.dim = reader, tile, axis, item, dim
        self.scalars = _Scalars(dim)
        self.extent = dim
        self.offset: Expr = Const(0)
        self.valid: Expr | None = None
        self.range_obj: Any = None
        self.step = 1
        if item is not None:
            try:
                self.range_obj = self._read(item)
            except _Reject as e:
                raise self.error(str(e)) from None

    @classmethod
    def full(cls, reader: _ExprReader, tile: str, axis: int, dim: int) -> _Axis:
        ax = cls(reader, tile, axis, None, dim)
        ax.range_obj = slice(None, None, None)
        return ax

    def error(self, message: str) -> DslError:
        where = f"subscript `{ast.unparse(self.node)}`" if self.node is not None else "subscript"
        return self.reader.err(self.node, f"{message} (axis {self.axis} of tile {self.tile!r}, "
                               f"{where})")

    def value(self, node: ast.AST, role: str) -> Any:
        return self.scalars.affine(self.reader.expr(node), role)

    def _read(self, item: ast.AST) -> Any:
        from egraph_tiles.nki.index.ranges import ds

        if isinstance(item, ast.Slice):
            start = self.value(item.lower, "start") if item.lower is not None else None
            stop = self.value(item.upper, "stop") if item.upper is not None else None
            step = None
            if item.step is not None:
                step = self.value(item.step, "step")
                if not isinstance(step, Integral):
                    raise _Reject(f"step of `{ast.unparse(item)}` must be an int")
            return slice(start, stop, step)
        if isinstance(item, ast.Call) and _dotted(item.func) in _DS_NAMES:
            if len(item.args) != 2 or item.keywords or any(isinstance(a, ast.Starred) for a in item.args):
                raise _Reject("expected ds(start, size) with two positional arguments")
            return ds(self.value(item.args[0], "start"), self.value(item.args[1], "size"))
        if isinstance(item, ast.Constant) and (item.value is None or item.value is Ellipsis):
            raise _Reject(f"`{ast.unparse(item)}` is not supported in a tile subscript; expected "
                          "an index, a slice a:b or ds(start, size)")
        if isinstance(item, ast.Call):
            raise _Reject(f"unexpected call `{ast.unparse(item)}` in a tile subscript; expected "
                          "an index, a slice a:b or ds(start, size) (also pl.ds)")
        return ds(self.value(item, "start"), 1)  # a single index: a size-1 window

    def queries(self) -> list[Any]:
        """The affine expressions the normalization will ask the e-graph about."""
        from egraph_tiles.nki.index.expr import AffineExpr
        from egraph_tiles.nki.index.ranges import DynSlice, range_diff

        out = []
        r = self.range_obj
        start = r.start if isinstance(r, (DynSlice, slice)) else None
        if isinstance(start, AffineExpr):
            out.append(start)
        d = range_diff(r, self.dim)
        if d is not None:
            out.append(d)
        return out

    def normalize(self) -> None:
        from egraph_tiles.nki.index.expr import wrap_expr
        from egraph_tiles.nki.index.ranges import normalize_range_args, normalize_slice, range_diff

        r = self.range_obj
        try:
            if isinstance(r, slice):
                start, length, step = normalize_slice(r, self.dim)
            else:
                start, length, step = normalize_range_args(r)
        except (ValueError, TypeError) as e:
            raise self.error(str(e)) from None
        if step != 1:
            raise self.error(f"strided subscript (step {step}): tile.slice windows are dense; "
                             "expected step 1")
        start_nf = wrap_expr(start).normal_form()
        c = start_nf.const
        diff = range_diff(r, self.dim)  # None when both bounds are ints
        extent = length
        if diff is not None and not diff.is_const:
            # runtime length: static extent = supremum, clamped to the room after start's constant
            extent = min(length, self.dim - max(c, 0))
            if extent <= 0:
                raise self.error(f"a window starting at {start_nf} leaves no room in the tile's "
                                 f"extent {self.dim}")
            self.valid = self.scalars.to_ir(diff.normal_form())
        if extent <= 0:
            raise self.error(f"empty window (length {extent}); expected stop > start")
        if start_nf.is_const and (c < 0 or c + extent > self.dim):
            raise self.error(f"window [{c}, {c + extent}) lies outside the tile's extent "
                             f"{self.dim}")
        if extent > self.dim:
            raise self.error(f"window extent {extent} does not fit the tile's extent {self.dim}")
        self.extent = extent
        self.offset = self.scalars.to_ir(start_nf)


def _presolve(axes: list[_Axis]) -> None:
    """Solve every start / ``stop - start`` of the subscript in ONE e-graph (fills the memo)."""
    from egraph_tiles.nki.index.solver import solve

    exprs = [q for ax in axes for q in ax.queries()]
    if exprs:
        solve(exprs)


