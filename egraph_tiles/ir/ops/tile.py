"""The ``tile.*`` ops (and the bare ``store``): on-chip tiles, the ops the pass rewrites around."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..types import DType, MemorySpace
from .infer import (infer_batch_matmul, infer_batch_matmul_acc, infer_binary, infer_cast, infer_cmp, infer_create, infer_expand, infer_extract, infer_full, infer_load, infer_matmul, infer_matmul_acc, infer_move, infer_read, infer_reduce, infer_reinterpret, infer_reshape, infer_same_as_first, infer_set_validshape, infer_slice, infer_store, infer_transpose, nz_relayout)
from .meanings import (assemble_meaning, div, expand, pad, read_meaning, reduce, slice_meaning, store_meaning, write_meaning, t, transpose_meaning, ts, tt, window_of)
from .model import (ACC, LEFT, REGISTRY, RIGHT, VALUE, VEC, Family, WindowOperand, declare, view_of,
                    writes)

# -- memory: load, store, create, views, copies

declare("tile.load", "tensor:n offsets:o shape:s valid_shape:s", infer_load, Family.LOAD,
    output_memory="target_memory", default_target=MemorySpace.Vec, inplace_safe=False,
    window=WindowOperand("tensor", "offsets", "shape"), attrs="target_memory clamp",
    numpy=lambda t, offs, shape: window_of(t, offs, shape))
# ``shapes``: the ND partition FlattenTileNdTo2D adds for an N-D tensor; a store that already
# carried one gets it appended once more (``partition``, the fifth operand PyPTO's IR then holds)
for _n in ("store", "tile.store"):
    declare(_n, "tile:t offsets:o output:n shapes:s partition:s", infer_store, Family.STORE,
        effect=writes(2), overwrites=(2,), output_memory=MemorySpace.DDR, attrs="atomic",
        numpy=store_meaning)
declare("tile.create", "shape:s dtype:d", infer_create, Family.CREATE,
    output_memory="target_memory", default_target=MemorySpace.Vec, inplace_safe=False,
    attrs="target_memory transpose flat_layout", numpy=lambda args: np.zeros(args["shape"]))
declare("tile.full", "shape:s dtype:d value:x", infer_full, Family.CREATE,
    output_memory=MemorySpace.Vec, numpy=lambda args: np.full(args["shape"], args["value"]))
for _n, _spec in (("tile.ci", "start:x shape:s"), ("tile.tri", "diagonal:x shape:s valid_shape:s"),
                  ("tile.random", "key0:x key1:x counter0:x counter1:x counter2:x counter3:x "
                                  "shape:s valid_shape:s")):
    declare(_n, _spec, infer_full, Family.CREATE, output_memory=MemorySpace.Vec,
        attrs="dtype descending upper rounds")
declare("tile.alloc", "memory_space:m size:i", None, Family.SYSTEM, effect=VALUE, attrs="pinned")

declare("tile.slice", "src:t shape:s offset:o valid_shape:s drop_dims:s", infer_slice, Family.VIEW,
    effect=view_of(0), output_memory="inherit", window=WindowOperand("src", "offset", "shape"),
    attrs="pad_value", numpy=slice_meaning)
declare("tile.reshape", "src:t shape:s", infer_reshape, Family.VIEW, effect=view_of(0),
    output_memory="inherit", relayout=nz_relayout, numpy=lambda a, args: a.reshape(args["shape"]))
declare("tile.set_validshape", "src:t valid_rows:i valid_cols:i", infer_set_validshape, Family.VIEW,
    effect=view_of(0), output_memory="inherit", same_layout=True, numpy=lambda a, args: a.view())
declare("tile.reinterpret_view", "src:t dtype:d shape:s", infer_reinterpret, Family.VIEW,
    effect=view_of(0), output_memory="inherit", reinterprets=True, relayout=nz_relayout)
declare("tile.transpose_view", "src:t", infer_transpose, Family.VIEW, effect=view_of(0),
    output_memory="inherit", numpy=lambda a, args: a.swapaxes(-1, -2))
declare("tile.extract", "src:t row:i col:i shape:s", infer_extract, Family.COPY,
    output_memory="target_memory", inplace_safe=False, window=WindowOperand("src", ("row", "col"), "shape"),
    attrs="target_memory", numpy=lambda a, args: window_of(a, [args["row"], args["col"]], args["shape"]))
declare("tile.move", "src:t", infer_move, Family.COPY, output_memory="target_memory",
    inplace_safe=False, attrs="target_memory blayout slayout", numpy=lambda a, args: a)
declare("tile.transpose", "src:t axis1:i axis2:i tmp_tile:t", infer_transpose, Family.COPY,
    output_memory="target_memory", inplace_safe=False, numpy=transpose_meaning)
# tile.assemble(target, source, offset): writes source into target at offset, in place
declare("tile.assemble", "target:t source:t offset:o", infer_same_as_first, Family.VECTOR,
    effect=writes(0), output_memory="inherit", numpy=assemble_meaning)
declare("tile.concat", "src0:t src1:t", None, Family.VECTOR, output_memory=MemorySpace.Vec,
    inplace_safe=False)

# -- matmul family (PyPTO operand order; scales sit right after the operand they scale)

_MM = dict(output_memory=MemorySpace.Acc)
declare("tile.matmul", "lhs:t rhs:t", infer_matmul, Family.MATMUL, **_MM,
    input_memory=(("lhs", LEFT), ("rhs", RIGHT)), inplace_safe=False, left_arg=0, right_arg=1,
    numpy=np.matmul)
declare("tile.gemv", "lhs:t rhs:t", infer_matmul, Family.MATMUL, **_MM, attrs="acc_phase",
    input_memory=(("lhs", LEFT), ("rhs", RIGHT)), inplace_safe=False, left_arg=0, right_arg=1,
    numpy=np.matmul)
for _n in ("tile.matmul_bias", "tile.gemv_bias"):
    declare(_n, "lhs:t rhs:t bias:t", infer_matmul, Family.MATMUL, **_MM, attrs="acc_phase",
        input_memory=(("lhs", LEFT), ("rhs", RIGHT)), inplace_safe=False,
        left_arg=0, right_arg=1, bias_arg=2, numpy=np.matmul)
declare("tile.matmul_acc", "acc:t lhs:t rhs:t init_cond:x", infer_matmul_acc, Family.MATMUL, **_MM,
    input_memory=(("acc", ACC), ("lhs", LEFT), ("rhs", RIGHT)), effect=writes(0),
    left_arg=1, right_arg=2, numpy=np.matmul)
declare("tile.gemv_acc", "acc:t lhs:t rhs:t", infer_matmul_acc, Family.MATMUL, **_MM,
    attrs="acc_phase", input_memory=(("acc", ACC), ("lhs", LEFT), ("rhs", RIGHT)),
    effect=writes(0), left_arg=1, right_arg=2, numpy=np.matmul)
declare("tile.matmul_mx", "lhs:t lhs_scale:t rhs:t rhs_scale:t", infer_matmul, Family.MATMUL, **_MM,
    inplace_safe=False, left_arg=0, right_arg=2)
declare("tile.matmul_mx_acc", "acc:t lhs:t lhs_scale:t rhs:t rhs_scale:t", infer_matmul_acc,
    Family.MATMUL, **_MM, input_memory=(("acc", ACC), ("lhs", LEFT), ("rhs", RIGHT)),
    effect=writes(0), left_arg=1, right_arg=3)
declare("tile.matmul_mx_bias", "lhs:t lhs_scale:t rhs:t rhs_scale:t bias:t", infer_matmul,
    Family.MATMUL, **_MM, inplace_safe=False, left_arg=0, right_arg=2, bias_arg=4)
# batch matmuls: 3-D operands the pass does not rewrite (no Left / Right roles)
declare("tile.batch_matmul", "lhs:t rhs:t", infer_batch_matmul, Family.MATMUL, **_MM,
    inplace_safe=False)
declare("tile.batch_matmul_acc", "acc:t lhs:t rhs:t", infer_batch_matmul_acc, Family.MATMUL, **_MM,
    effect=writes(0))
declare("tile.tget_scale_addr", "dst_scale:t src:t", None, Family.SYSTEM, effect=writes(0),
        overwrites=(0,))

# -- broadcasts: col_expand family (lazily materialized subview operands, #1640 / #2010)

#: the combinations of a broadcast with ``lhs`` (suffix of the op name, numpy meaning)
_EXPANDS = (("", None), ("_mul", np.multiply), ("_add", np.add), ("_sub", np.subtract),
            ("_div", div), ("_max", np.maximum), ("_min", np.minimum),
            ("_expdif", lambda a, b: np.exp(a - b)))
_COLX = dict(input_memory=(("lhs", VEC), ("rhs", VEC)), output_memory="inherit")
for _n, _spec, _family, _axis in (("col_expand", "lhs:t rhs:t", Family.COL_EXPAND, 1),
                                  ("row_expand", "lhs:t rhs:t tmp:t", Family.VECTOR, 0)):
    for _sfx, _fn in _EXPANDS:
        declare(f"tile.{_n}{_sfx}", _spec, infer_expand(_axis), _family, **_COLX,
            numpy=expand(_fn, _axis))
declare("tile.expands", "src:t scalar:x", infer_same_as_first, Family.VECTOR,
    input_memory=(("src", VEC),), output_memory="inherit",
    numpy=lambda v: np.full(v.tiles[0].shape, v.scalars[0]))

# -- elementwise vector ops: one line each (name, numpy meaning or None when not modelled)

_V = dict(output_memory="inherit")
for _n, _fn in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", div),
                ("max", np.maximum), ("min", np.minimum), ("maximum", np.maximum),
                ("minimum", np.minimum), ("fmod", np.fmod), ("and", None), ("or", None),
                ("shl", None), ("shr", None), ("part_add", None), ("part_mul", None),
                ("part_max", None), ("part_min", None)):
    declare(f"tile.{_n}", "lhs:t rhs:t", infer_binary, Family.VECTOR, **_V,
        input_memory=(("lhs", VEC), ("rhs", VEC)), numpy=_fn and tt(_fn),
        attrs="high_precision")
for _n in ("rem", "xor"):  # with a scratch tile
    declare(f"tile.{_n}", "lhs:t rhs:t tmp:t", infer_binary, Family.VECTOR, **_V,
        input_memory=(("lhs", VEC), ("rhs", VEC)))
for _n, _fn in (("muls", np.multiply), ("adds", np.add), ("subs", np.subtract), ("divs", div),
                ("maxs", np.maximum), ("mins", np.minimum), ("maximums", np.maximum),
                ("minimums", np.minimum), ("fmods", np.fmod), ("ands", None), ("ors", None),
                ("shls", None), ("shrs", None), ("lrelu", None)):
    declare(f"tile.{_n}", "src:t scalar:x", infer_same_as_first, Family.VECTOR, **_V,
        input_memory=(("src", VEC),), numpy=_fn and ts(_fn))
for _n in ("rems", "xors"):
    declare(f"tile.{_n}", "src:t scalar:x tmp:t", infer_same_as_first, Family.VECTOR, **_V,
        input_memory=(("src", VEC),))
for _n, _fn in (("exp", np.exp), ("sqrt", np.sqrt), ("rsqrt", lambda a: 1 / np.sqrt(a)),
                ("neg", np.negative), ("abs", np.abs), ("recip", lambda a: 1 / a),
                ("relu", lambda a: np.maximum(a, 0)), ("log", np.log), ("sin", np.sin),
                ("cos", np.cos), ("not", None)):
    declare(f"tile.{_n}", "src:t tmp:t", infer_same_as_first, Family.VECTOR, **_V,
        input_memory=(("src", VEC),), numpy=_fn and t(_fn), attrs="high_precision")
for _n in ("addc", "subc"):
    declare(f"tile.{_n}", "lhs:t rhs:t rhs2:t", infer_binary, Family.VECTOR, **_V)
for _n in ("addsc", "subsc"):
    declare(f"tile.{_n}", "lhs:t scalar:x rhs2:t", infer_same_as_first, Family.VECTOR, **_V)
declare("tile.prelu", "src:t slope:t tmp:t", infer_same_as_first, Family.VECTOR, **_V,
    inplace_safe=False)
declare("tile.cmp", "lhs:t rhs:t", infer_cmp, Family.VECTOR, **_V, attrs="cmp_type")
declare("tile.cmps", "lhs:t scalar:x", infer_cmp, Family.VECTOR, **_V, attrs="cmp_type")
declare("tile.sel", "mask:t lhs:t rhs:t tmp:t", None, Family.VECTOR, **_V)
declare("tile.sels", "mask:t src:t tmp:t scalar:x", None, Family.VECTOR, **_V)
declare("tile.cast", "src:t target_type:d mode:a", infer_cast, Family.VECTOR, **_V,
    input_memory=(("src", VEC),), numpy=t(lambda a: a))
declare("tile.fillpad", "src:t pad_value:a", infer_same_as_first, Family.VECTOR, **_V,
    input_memory=(("src", VEC),), numpy=lambda v: pad(v.tiles[0], v))
declare("tile.fillpad_inplace", "src:t pad_value:a", infer_same_as_first, Family.VECTOR, **_V,
    input_memory=(("src", VEC),), effect=writes(0), numpy=lambda v: pad(v.tiles[0], v))
declare("tile.fillpad_expand", "src:t shape:s", None, Family.VECTOR, **_V, inplace_safe=False,
    attrs="pad_value")

# -- reductions (row_* take an optional scratch tile)

for _n, _fn in (("row_sum", np.sum), ("row_max", np.max), ("row_min", np.min),
                ("row_prod", np.prod)):
    declare(f"tile.{_n}", "src:t tmp_tile:t", infer_reduce(1), Family.VECTOR, **_V,
        input_memory=(("src", VEC),), inplace_safe=False, numpy=reduce(_fn, -1))
for _n, _fn in (("col_sum", np.sum), ("col_max", np.max), ("col_min", np.min),
                ("col_prod", np.prod)):
    declare(f"tile.{_n}", "src:t tmp_tile:t", infer_reduce(0), Family.VECTOR, **_V,
        input_memory=(("src", VEC),), numpy=reduce(_fn, 0))
for _n, _axis in (("row_argmax", 1), ("row_argmin", 1), ("col_argmax", 0), ("col_argmin", 0)):
    declare(f"tile.{_n}", "src:t tmp_tile:t", infer_reduce(_axis, DType.INT32), Family.VECTOR, **_V,
        inplace_safe=False)

# -- sorting, gathers, scatters: results from annotations, memory effects declared

for _n, _spec in (("sort32", "src:t idx:t"), ("mrgsort_format1", "src:t block_len:x"),
                  ("mrgsort_format2", "src0:t src1:t tmp_or_src2:t tmp_or_src3:t tmp:t"),
                  ("gather", "src:t indices:t tmp:t"), ("gatherb", "src:t offset:t"),
                  ("gather_mask", "src:t mask_pattern:a"),
                  ("gather_compare", "src:t kvalue:x tmp:t")):
    declare(f"tile.{_n}", _spec, None, Family.VECTOR, output_memory=MemorySpace.Vec,
        inplace_safe=False, attrs="exhausted output_dtype cmp_mode offset out_cols count_dtype")
for _n, _spec in (("scatter", "dst:t src:t indexes:t"), ("scatter_mask", "dst:t src:t mask_pattern:a"),
                  ("scatter_update", "input:t index:t src:t")):
    declare(f"tile.{_n}", _spec, infer_same_as_first, Family.VECTOR, effect=writes(0),
        output_memory="inherit", attrs="dim")
declare("tile.gather_row", "dst:t src:n dst_offset:o src_offset:o shapes:s valid_shape:s", None,
        Family.SYSTEM, effect=writes(0), attrs="transpose")
declare("tile.mscatter", "src:t idx:t output:n", None, Family.SYSTEM, effect=writes(2),
        overwrites=(2,))
# the scratch tile (when given) is overwritten by the gather
declare("tile.mgather", "mem:n idx:t scratch:t valid_shape:s", None, Family.SYSTEM,
        inplace_safe=False, also_writes=(2,), overwrites=(2,),
        attrs="coalesce gather_oob target_memory")
declare("tile.read", "src:t indices:o", infer_read, Family.SCALAR, effect=VALUE,
        numpy=read_meaning)
declare("tile.write", "src:t indices:o value:x", None, Family.SCALAR, effect=writes(0),
        numpy=write_meaning)

# -- cross-core transfers: a pushed tile is read, a popped one is fresh

for _n in ("tile.tpush_to_aiv", "tile.tpush_to_aic"):
    declare(_n, "src:t", None, Family.SYSTEM, effect=VALUE, attrs="split id")
for _n in ("tile.tpop_from_aic", "tile.tpop_from_aiv"):
    declare(_n, "", None, Family.SYSTEM, attrs="split id")
for _ns in ("tile", "tensor"):
    for _n in ("aiv_shard", "aic_gather"):
        declare(f"{_ns}.{_n}", "x:t", None, Family.SYSTEM)


# -- PyPTO's Python spellings that differ from its op names (``pl.tile.and_`` is ``tile.and``)

for _ns in ("tile",):
    for _n in ("and", "or", "not"):
        REGISTRY[f"{_ns}.{_n}_"] = replace(REGISTRY[f"{_ns}.{_n}"], name=f"{_ns}.{_n}_")
declare("tile.mrgsort", "src0:t src1:t src2:t src3:t tmp:t", None, Family.VECTOR,
    output_memory=MemorySpace.Vec, inplace_safe=False, attrs="exhausted block_len")

