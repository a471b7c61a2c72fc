"""NKI-style affine index layer: TileIndex / NDTile / arange / ds / broadcast / masks.

The index algebra (normal form, loop-axis substitution, constant detection, interval bounds)
runs as egglog rules (``egraph_tiles.rules.arith`` and ``egraph_tiles.rules.affine``), driven in
batches by :class:`AffineSolver`.  Spec: ``shared/seeds/nki_affine_index_inference.txt``.

Pipeline::

    arange[:] / ds(start, size) / slices   normalize_slice -> normalize_range_args
                                           -> normalize_expr_range_args (is_const / supremum)
    partial_tile_index(shape)              per-axis TileIndex tuple on an NDTile
    TileIndex arithmetic                   + - * // % fold into .e (affine only)
    combine_tiles / cached_combine_index_tiles / broadcast_shapes
    generate_subst_map -> canonicalize_expr -> AffineExpr.substitute   (e-graph rules)
    lower_access -> AccessPattern([[step, count], ...], offset);  inst_mask -> TileMaskIntersection

The tile DSL's subscripts (``t[i, :]``, ``t[:, 64:128]``, ``t[ds(off, n), :]``) lower through the
same normalization to canonical ``tile.slice`` calls: ``egraph_tiles.dsl.subscripts``.
"""

from egraph_tiles.nki.index import (
    APIndex,
    Access,
    AccessPattern,
    AffineExpr,
    AffineSolver,
    CmpTileMask,
    DynSlice,
    DynamicScalar,
    EQTileMask,
    InferredInstruction,
    Instruction,
    KernelInstruction,
    NDTile,
    NormalForm,
    QuasiAtom,
    Scalar,
    Solution,
    TileIndex,
    TileMask,
    TileMaskIntersection,
    Var,
    access_address,
    arange,
    axis_var,
    broadcast_shapes,
    cached_combine_index_tiles,
    canonicalize_expr,
    combine_cache,
    combine_index_tiles,
    combine_tiles,
    ds,
    filter_indices,
    generate_ap_index,
    generate_subst_map,
    infer_kernel,
    inst_mask,
    lower_access,
    nki_scalar_int_dtype,
    normalize_expr_range_args,
    normalize_range_args,
    normalize_slice,
    partial_tile_index,
    pred_eq,
    pred_ge,
    pred_gt,
    pred_le,
    pred_lt,
    pred_ne,
    scalar,
    scalar_var,
    solution_of,
    solve,
    substitute_expr_indices,
    unique_sequence,
    wrap_expr,
)

# Legacy kernels as written: reader (ast only), whole-kernel inference, migration.
from egraph_tiles.nki.kernels.analyze import AccessReport, KernelReport, analyze_kernel, verify_report
from egraph_tiles.nki.kernels.migrate import Migration, migrate_kernel
from egraph_tiles.nki.kernels.reader import Finding, read_kernel

__all__ = [
    "APIndex", "Access", "AccessPattern", "AccessReport", "Finding", "KernelReport", "Migration",
    "analyze_kernel", "migrate_kernel", "read_kernel", "verify_report", "AffineExpr", "AffineSolver", "CmpTileMask",
    "DynSlice", "DynamicScalar", "EQTileMask", "InferredInstruction", "Instruction",
    "KernelInstruction", "NDTile", "NormalForm", "QuasiAtom", "Scalar", "Solution", "TileIndex",
    "TileMask", "TileMaskIntersection", "Var", "access_address", "arange", "axis_var",
    "broadcast_shapes", "cached_combine_index_tiles", "canonicalize_expr", "combine_cache",
    "combine_index_tiles", "combine_tiles", "ds", "filter_indices", "generate_ap_index",
    "generate_subst_map", "infer_kernel", "inst_mask", "lower_access", "nki_scalar_int_dtype",
    "normalize_expr_range_args", "normalize_range_args", "normalize_slice", "partial_tile_index",
    "pred_eq", "pred_ge", "pred_gt", "pred_le", "pred_lt", "pred_ne", "scalar", "scalar_var",
    "solution_of", "solve", "substitute_expr_indices", "unique_sequence", "wrap_expr",
]
