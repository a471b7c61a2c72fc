"""The ``tensor.*`` ops (Orchestration level: DDR tensors, nothing for the tile pass to rewrite)."""

from __future__ import annotations

from dataclasses import replace


from ..types import MemorySpace
from .infer import (infer_first_tensor, infer_index_scalar, infer_read, infer_tensor_create)
from .tile import _EXPANDS
from .model import (REGISTRY, VALUE, Family, declare, view_of,
                    writes)

# -- tensor ops (Orchestration level: DDR tensors, nothing for the tile pass to rewrite)

_T = dict(output_memory=MemorySpace.DDR)
declare("tensor.create", "shape:s", infer_tensor_create, Family.TENSOR, **_T,
    attrs="dtype layout manual_dep init_value")
declare("tensor.full", "shape:s value:x", None, Family.TENSOR, **_T, attrs="dtype")
declare("tensor.ci", "start:x shape:s", None, Family.TENSOR, **_T, attrs="dtype descending")
declare("tensor.random", "key0:x key1:x counter0:x counter1:x counter2:x counter3:x shape:s", None,
    Family.TENSOR, **_T, attrs="dtype rounds")
declare("tensor.alloc", "memory_space:m size:i", None, Family.TENSOR, effect=VALUE)
declare("tensor.create_l1", "shape:s", None, Family.TENSOR)
declare("tensor.read", "src:n indices:o", infer_read, Family.TENSOR, effect=VALUE)
declare("tensor.dim", "src:n axis:i", infer_index_scalar, Family.TENSOR, effect=VALUE)
declare("tensor.write", "src:n indices:o value:x", None, Family.TENSOR, effect=writes(0),
        overwrites=(0,))
declare("tensor.assemble", "target:n source:n offset:o", infer_first_tensor, Family.TENSOR,
    effect=writes(0), overwrites=(0,), attrs="atomic")
declare("tensor.slice", "src:n shape:s offset:o valid_shape:s drop_dims:s", None, Family.TENSOR,
    effect=view_of(0))
for _n, _spec in (("view", "src:n shape:s valid_shape:s"), ("reshape", "src:n shape:s valid_shape:s"),
                  ("reinterpret_view", "src:n shape:s"),
                  ("set_validshape", "src:n valid_rows:i valid_cols:i")):
    declare(f"tensor.{_n}", _spec, None, Family.TENSOR, effect=view_of(0), attrs="layout")
for _n, _spec in (("transpose", "src:n axis1:i axis2:i valid_shape:s"), ("concat", "src0:n src1:n"),
                  ("fillpad", "src:n"), ("fillpad_expand", "src:n shape:s"),
                  ("expand_clone", "src:n target:n"), ("expands", "target:n scalar:x"),
                  ("cast", "src:n"), ("matmul", "lhs:n rhs:n"),
                  ("paged_gather", "src:n indices:n block_table:n"), ("gather", "input:n index:n"), ("gather_mask", "src:n"),
                  ("gather_compare", "input:n kvalue:x"), ("scatter", "input:n index:n src:n"),
                  ("scatter_mask", "input:n dst:n"),
                  ("sort32", "src:n idx:n"), ("mrgsort_format1", "src:n block_len:x"),
                  ("mrgsort_format2", "src0:n src1:n src2:n src3:n"),
                  ("gather_row", "acc:n src:n dst_offset:o src_offset:o shapes:s valid_shape:s")):
    declare(f"tensor.{_n}", _spec, None, Family.TENSOR, **_T,
        attrs="pad_value target_type mode out_dtype a_trans b_trans c_matrix_nz exhausted")
declare("tensor.matmul_acc", "acc:n lhs:n rhs:n init_cond:x", None, Family.TENSOR, **_T,
    effect=writes(0))
declare("tensor.scatter_update", "src:n index:n updates:n", None, Family.TENSOR, **_T,
    effect=writes(0), attrs="dim")
for _n in ("add", "sub", "mul", "div", "maximum", "minimum", "fmod", "cmp", "and", "or", "xor",
           "shl", "shr", "part_add", "part_mul", "part_max", "part_min",
           "adds", "subs", "muls", "divs", "fmods", "ands", "ors", "xors", "shls", "shrs",
           *(f"{_axis}_expand{_sfx}" for _axis in ("row", "col") for _sfx, _ in _EXPANDS)):
    declare(f"tensor.{_n}", "lhs:n rhs:x", infer_first_tensor, Family.TENSOR, **_T,
        attrs="high_precision cmp_type")
for _n in ("neg", "abs", "not", "recip", "exp", "log", "sin", "cos", "sqrt", "rsqrt",
           "row_max", "row_sum", "row_min", "row_prod", "col_sum", "col_max", "col_min",
           "col_prod", "row_argmax", "row_argmin", "col_argmax", "col_argmin"):
    declare(f"tensor.{_n}", "src:n", None, Family.TENSOR, **_T, attrs="high_precision axis keep_dim")



# -- PyPTO's Python spellings that differ from its op names (``pl.tile.and_`` is ``tile.and``)

for _ns in ("tensor",):
    for _n in ("and", "or", "not"):
        REGISTRY[f"{_ns}.{_n}_"] = replace(REGISTRY[f"{_ns}.{_n}"], name=f"{_ns}.{_n}_")
