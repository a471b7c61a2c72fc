"""The op model: each op declared once in the registry (operands, role, result type, memory
effect, window, numpy meaning), covering PyPTO's tile and tensor ops."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import egraph_tiles as et
from egraph_tiles.ir import Call, Const, ListExpr, TileType, TensorType, ScalarType, Var, VarRef
from egraph_tiles.ir.ops import (REGISTRY, Family, Kind, Role, Storage, infer_type, lookup,
                                 operand_role)
from egraph_tiles.ir.exprs import const_shape
from egraph_tiles.ir.types import DType, MemorySpace
from egraph_tiles.rules import checks, legality, slices

# PyPTO's tile and tensor op names (its op definitions are the reference; the entries are ours)
PYPTO_TILE_OPS = """
batch_matmul batch_matmul_acc row_expand row_expand_sub row_expand_div row_expand_mul
row_expand_add row_expand_max row_expand_min row_expand_expdif col_expand col_expand_mul
col_expand_add col_expand_div col_expand_sub col_expand_max col_expand_min col_expand_expdif
expands tpush_to_aiv tpush_to_aic tpop_from_aic tpop_from_aiv aiv_shard aic_gather mul add div
sub maximum minimum rem part_add part_mul part_max part_min fmod muls adds divs subs rems fmods
shl shls shr shrs maximums minimums and ands or ors xor xors prelu addc subc addsc subsc lrelu
sel sels cmp cmps fillpad fillpad_inplace fillpad_expand gather gatherb gather_mask
gather_compare matmul matmul_acc matmul_bias gemv gemv_acc gemv_bias matmul_mx matmul_mx_acc
matmul_mx_bias tget_scale_addr write get_block_idx get_subblock_idx get_block_num read create
load store mscatter mgather move alloc full ci tri random gather_row row_sum row_max row_min
row_prod col_sum col_max col_min col_prod row_argmax row_argmin col_argmax col_argmin scatter
scatter_mask sort32 mrgsort_format2 mrgsort_format1 slice reshape reinterpret_view transpose
transpose_view assemble extract scatter_update concat set_validshape neg exp sin cos recip sqrt
rsqrt cast log abs relu not
""".split()
PYPTO_TENSOR_OPS = """
row_expand_mul row_expand_div col_expand_mul col_expand_add row_expand row_expand_add
row_expand_sub row_expand_max row_expand_min row_expand_expdif col_expand col_expand_sub
col_expand_max col_expand_min col_expand_expdif col_expand_div expands expand_clone add adds sub
subs mul muls div divs part_add part_mul part_max part_min fmod fmods maximum minimum cmp and
ands or ors xor xors shl shls shr shrs gather gather_mask gather_compare matmul matmul_acc read
create slice assemble fillpad fillpad_expand full ci random dim write alloc get_block_idx
get_subblock_idx get_block_num paged_gather create_l1 gather_row row_max row_sum row_min
row_prod col_sum col_max col_min col_prod row_argmax row_argmin col_argmax col_argmin scatter
scatter_mask scatter_update sort32 mrgsort_format2 mrgsort_format1 reshape reinterpret_view
transpose view concat set_validshape neg abs not recip exp log sin cos sqrt rsqrt cast
aiv_shard aic_gather
""".split()


@pytest.mark.parametrize("name", PYPTO_TILE_OPS)
def test_every_pypto_tile_op_is_registered_and_classified(name):
    op = lookup(f"tile.{name}")
    assert op is not None and op.classified


@pytest.mark.parametrize("name", PYPTO_TENSOR_OPS)
def test_every_pypto_tensor_op_is_registered_and_classified(name):
    op = lookup(f"tensor.{name}")
    assert op is not None and op.classified


@pytest.mark.parametrize("spelling,op", [("tile.and_", "tile.and"), ("tile.or_", "tile.or"),
                                         ("tile.not_", "tile.not"), ("tensor.and_", "tensor.and")])
def test_pythons_underscored_spellings_are_the_same_op(spelling, op):
    a, b = REGISTRY[spelling], REGISTRY[op]
    assert (a.signature, a.family, a.effect, a.infer) == (b.signature, b.family, b.effect, b.infer)


@pytest.mark.parametrize("role", list(Role))
def test_each_role_is_matched_by_the_rules_in_its_egglog_spelling(role):
    text = slices.RULES + legality.RULES + checks.RULES
    assert f"(= ctx {role.egg})" in text or f"(Use w {role.egg})" in text


def test_no_rule_spells_a_context_other_than_a_role():
    import re

    text = slices.RULES + legality.RULES + checks.RULES + checks.LOAD
    spelled = set(re.findall(r'\(= ctx ("[^"]*")\)', text)) | set(re.findall(r'\(Use [^ ()]+ ("[^"]*")\)', text))
    assert spelled <= {r.egg for r in Role}


@pytest.mark.parametrize("op,index,role", [
    ("tile.matmul", 0, Role.LEFT), ("tile.matmul", 1, Role.RIGHT), ("tile.matmul_acc", 0, None),
    ("tile.matmul_acc", 1, Role.LEFT), ("tile.matmul_mx_acc", 3, Role.RIGHT),
    ("tile.matmul_mx_acc", 2, None), ("tile.matmul_bias", 2, None), ("tile.batch_matmul", 0, None),
    ("tile.col_expand_mul", 1, Role.COLX), ("tile.muls", 0, Role.ORD), ("tile.assemble", 1, Role.ORD),
    ("pld.tile.remote_store", 0, Role.ORD),
])
def test_operand_roles_come_from_the_registry(op, index, role):
    assert operand_role(op, index) is role


@pytest.mark.parametrize("op,storage,of", [
    ("tile.slice", Storage.VIEW, 0), ("tile.reshape", Storage.VIEW, 0),
    ("tile.extract", Storage.FRESH, None), ("tile.transpose", Storage.FRESH, None),
    ("tile.assemble", Storage.WRITES, 0), ("tile.store", Storage.WRITES, 2),
    ("tile.matmul_acc", Storage.WRITES, 0), ("tile.scatter_update", Storage.WRITES, 0),
    ("tile.mscatter", Storage.WRITES, 2), ("tile.write", Storage.WRITES, 0),
    ("tensor.assemble", Storage.WRITES, 0), ("tensor.view", Storage.VIEW, 0),
    ("tile.get_block_idx", Storage.VALUE, None), ("min", Storage.VALUE, None),
])
def test_memory_effects_are_declared(op, storage, of):
    e = REGISTRY[op].effect
    assert (e.storage, e.of) == (storage, of)


def test_derived_properties_follow_the_memory_effect():
    assert REGISTRY["tile.assemble"].reuses_arg == 0
    assert REGISTRY["tile.set_validshape"].inherits_input_memory
    assert not REGISTRY["tile.extract"].inherits_input_memory
    assert REGISTRY["tile.muls"].reuses_arg is None


def test_matmul_mx_operands_follow_pyptos_order():
    op = REGISTRY["tile.matmul_mx_acc"]
    assert op.params == ("acc", "lhs", "lhs_scale", "rhs", "rhs_scale")
    assert (op.left_arg, op.right_arg) == (1, 3)


def test_windows_are_declared_for_slice_extract_and_load():
    assert REGISTRY["tile.slice"].window.offsets == "offset"
    assert REGISTRY["tile.extract"].window.offsets == ("row", "col")
    assert REGISTRY["tile.load"].window.src == "tensor"
    assert REGISTRY["tile.muls"].window is None


def test_operand_kinds_are_declared():
    op = REGISTRY["tile.slice"]
    assert [p.kind for p in op.signature[:3]] == [Kind.TILE, Kind.SHAPE, Kind.INDICES]


def _v(name: str, t) -> VarRef:
    return VarRef(Var(name, t))


def _type(call: Call):
    from egraph_tiles.ir.exprs import static_type
    return infer_type(call, static_type)


def test_nd_load_is_typed_flattened_to_2d():
    x = _v("x", TensorType((Const(2), Const(16), Const(128)), DType.FP16))
    c = Call("tile.load", (x, ListExpr((Const(0),) * 3), ListExpr((Const(2), Const(16), Const(128)))))
    t = _type(c)
    assert isinstance(t, TileType) and const_shape(t) == (32, 128) and t.memory is MemorySpace.Vec


def test_transpose_with_axis_arguments_swaps_the_named_axes():
    t = _v("t", TileType((Const(2), Const(16), Const(8)), DType.FP32, MemorySpace.Vec))
    r = _type(Call("tile.transpose", (t, Const(0), Const(2))))
    assert const_shape(r) == (8, 16, 2)


def test_transpose_rejects_an_axis_outside_the_rank():
    t = _v("t", TileType((Const(16), Const(8)), DType.FP32, MemorySpace.Vec))
    with pytest.raises(ValueError, match="axes must be constant"):
        _type(Call("tile.transpose", (t, Const(0), Const(2))))


def test_scalar_min_of_index_scalars_is_an_index():
    n = _v("n", ScalarType(DType.INDEX))
    assert _type(Call("min", (n, Const(64)))) == ScalarType(DType.INDEX)


def test_scalar_min_rejects_a_tile():
    t = _v("t", TileType((Const(16), Const(8)), DType.FP32, MemorySpace.Vec))
    with pytest.raises(ValueError, match="takes scalars"):
        _type(Call("max", (t, Const(1))))


def test_tensor_create_is_typed_from_shape_and_dtype():
    p = et.parse_program("""
@pl.program
class K:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self):
        c = pl.tensor.create([4, 8], dtype=pl.FP32, layout=pl.TensorLayout.ND)
""")
    t = p.functions[0].body[0].target.type
    assert isinstance(t, TensorType) and t.dtype is DType.FP32 and t.shape == (Const(4), Const(8))


def test_every_family_is_used():
    assert {op.family for op in REGISTRY.values()} == set(Family)


OWNED = ["egraph_tiles/sim/interp.py", "egraph_tiles/sim/ideal.py", "egraph_tiles/sim/hardware.py",
         "egraph_tiles/sim/semantics.py", "egraph_tiles/ir/verify.py"]


OP_WORDS = ("tile", "tensor", "batch", "matmul", "mx", "cast", "expand", "fillpad", "slice",
            "extract", "store", "load")


def _op_like(value: object) -> bool:
    return isinstance(value, str) and (value in REGISTRY or any(w in value for w in OP_WORDS))


@pytest.mark.parametrize("path", OWNED)
def test_simulators_and_verifier_never_test_an_op_name(path):
    """Op meanings live in the registry: no ``op == "tile.x"`` / ``"batch" in op`` elsewhere."""
    tree = ast.parse((Path(__file__).parents[2] / path).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Constant) and _op_like(side.value):
                    raise AssertionError(f"{path}:{node.lineno} compares with {side.value!r}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("startswith", "endswith", "removeprefix", "rsplit") \
                and node.args and isinstance(node.args[0], ast.Constant) \
                and node.args[0].value not in ("self.",):
            raise AssertionError(f"{path}:{node.lineno} tests the spelling of a name")
