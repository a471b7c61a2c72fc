"""The NKI index library: affine index expressions, tiles, ranges, masks, access patterns and the
e-graph solver.  Acyclic, bottom up: ``expr`` -> ``normal_form`` -> ``solver``; ``scalar`` ->
``tile`` -> ``combine`` -> ``masks``; ``ranges`` / ``symint`` -> ``access`` -> ``kernel``.
(``tile`` and ``expr`` reach ``combine`` / ``masks`` / ``solver`` through hooks those modules
register when imported; importing this package imports them all.)
"""

from egraph_tiles.nki.index.access import AccessPattern, access_address, lower_access
from egraph_tiles.nki.index.combine import (
    broadcast_shapes,
    cached_combine_index_tiles,
    canonicalize_expr,
    combine_cache,
    combine_index_tiles,
    combine_tiles,
    generate_subst_map,
    unique_sequence,
)
from egraph_tiles.nki.index.expr import AffineExpr, Var, axis_var, scalar_var, wrap_expr
from egraph_tiles.nki.index.kernel import Access, InferredInstruction, KernelInstruction, infer_kernel
from egraph_tiles.nki.index.masks import (
    CmpTileMask,
    EQTileMask,
    Instruction,
    TileMask,
    TileMaskIntersection,
    inst_mask,
    pred_eq,
    pred_ge,
    pred_gt,
    pred_le,
    pred_lt,
    pred_ne,
    substitute_expr_indices,
)
from egraph_tiles.nki.index.normal_form import NormalForm, QuasiAtom
from egraph_tiles.nki.index.ranges import (
    DynSlice,
    arange,
    ds,
    normalize_expr_range_args,
    normalize_range_args,
    normalize_slice,
    partial_tile_index,
)
from egraph_tiles.nki.index.scalar import DynamicScalar, Scalar, nki_scalar_int_dtype, scalar
from egraph_tiles.nki.index.solver import AffineSolver, Solution, solution_of, solve
from egraph_tiles.nki.index.tile import APIndex, NDTile, TileIndex, filter_indices, generate_ap_index

__all__ = [
    "APIndex",
    "Access",
    "AccessPattern",
    "AffineExpr",
    "AffineSolver",
    "CmpTileMask",
    "DynSlice",
    "DynamicScalar",
    "EQTileMask",
    "InferredInstruction",
    "Instruction",
    "KernelInstruction",
    "NDTile",
    "NormalForm",
    "QuasiAtom",
    "Scalar",
    "Solution",
    "TileIndex",
    "TileMask",
    "TileMaskIntersection",
    "Var",
    "access_address",
    "arange",
    "axis_var",
    "broadcast_shapes",
    "cached_combine_index_tiles",
    "canonicalize_expr",
    "combine_cache",
    "combine_index_tiles",
    "combine_tiles",
    "ds",
    "filter_indices",
    "generate_ap_index",
    "generate_subst_map",
    "infer_kernel",
    "inst_mask",
    "lower_access",
    "nki_scalar_int_dtype",
    "normalize_expr_range_args",
    "normalize_range_args",
    "normalize_slice",
    "partial_tile_index",
    "pred_eq",
    "pred_ge",
    "pred_gt",
    "pred_le",
    "pred_lt",
    "pred_ne",
    "scalar",
    "scalar_var",
    "solution_of",
    "solve",
    "substitute_expr_indices",
    "unique_sequence",
    "wrap_expr",
]
