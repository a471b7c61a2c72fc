"""Every op of PyPTO's registry is one of ours, with its operand kinds and its memory effect:
which operands it reads and which it writes — the distributed (``pld.*``, ``builtin.*``,
``dist.*``), system, prefetch and array ops included.  An op outside the registry stays
unclassified (conservative); no op PyPTO defines is."""

from __future__ import annotations

import pytest

from egraph_tiles.ir import Call, Const, ListExpr, Symbol, Var, VarRef
from egraph_tiles.ir.effects import function_effects
from egraph_tiles.ir.ops import REGISTRY, Access, Family, Kind, Role, Storage, lookup, operand_role
from egraph_tiles.ir.stmts import EvalStmt, Function
from egraph_tiles.ir.types import DType, MemorySpace, TileType

# PyPTO's op names outside the tile and tensor namespaces (tests/ir/test_op_model.py lists those)
PYPTO_OTHER_OPS = """
pld.system.defer_wait pld.system.get_comm_ctx pld.system.notify pld.system.nranks pld.system.rank
pld.system.wait pld.system.world_size pld.tensor.all_to_all pld.tensor.all_to_all_v
pld.tensor.allgather pld.tensor.alloc_window_buffer pld.tensor.allreduce pld.tensor.barrier
pld.tensor.broadcast pld.tensor.get pld.tensor.put pld.tensor.reduce_scatter
pld.tensor.remote_store pld.tensor.window pld.tile.get pld.tile.put pld.tile.remote_load
pld.tile.remote_store
builtin.tensor.all_to_all builtin.tensor.all_to_all_v builtin.tensor.allgather
builtin.tensor.allreduce builtin.tensor.allreduce_ring builtin.tensor.barrier
builtin.tensor.broadcast builtin.tensor.reduce_scatter
dist.future_get dist.make_tensor dist.submit_orchestrator dist.submit_worker dist.tree_reduce
system.aic_initialize_pipe system.aiv_initialize_pipe system.available_aiv_count
system.available_cluster_count system.bar_all system.bar_m system.bar_v system.cacheinvalid
system.fence system.import_peer_buffer system.reserve_buffer system.set_ffts system.sync_dst
system.sync_set system.sync_src system.sync_wait system.syncall system.task_dummy
system.task_invalid system.task_is_valid system.tfree_to_aic system.tfree_to_aiv
prefetch.async_prefetch prefetch.make_context prefetch.session prefetch.wait
array.create array.get_element array.update_element
test.deduce_raises_internal test.deduce_raises_type test.op test.tensor_op_no_conv
""".split()


@pytest.mark.parametrize("name", PYPTO_OTHER_OPS)
def test_every_pypto_op_outside_tile_and_tensor_is_registered_and_classified(name):
    op = lookup(name)
    assert op is not None and op.classified


def _namespace(name: str) -> str:
    parts = name.split(".")
    return ".".join(parts[:-1]) if parts[0] in ("pld", "builtin") else parts[0]


@pytest.mark.parametrize("namespace, count", [
    ("pld.tile", 4 + 1),  # + the printer's sentinel spelling of a padded-tail remote_load
    ("pld.tensor", 12), ("pld.system", 7), ("builtin.tensor", 8), ("dist", 5), ("system", 22),
    ("prefetch", 4), ("array", 3), ("test", 4),
])
def test_registry_size_per_namespace(namespace, count):
    assert sum(1 for n in REGISTRY if "." in n and _namespace(n) == namespace) == count


R, W, RW = Access.READ, Access.WRITE, Access.READ_WRITE


@pytest.mark.parametrize("name, kwargs, accesses", [
    # tiles: a store overwrites its tensor, an atomic one accumulates into it
    ("tile.store", {}, (R, R, W, R, R)),
    ("tile.store", {"atomic": Symbol(("AtomicType", "Add"))}, (R, R, RW, R, R)),
    ("tile.store", {"atomic": Symbol(("AtomicType", "None_"))}, (R, R, W, R, R)),
    ("tile.matmul_acc", {}, (RW, R, R, R)),
    ("tile.mgather", {}, (R, R, W, R)),  # the scratch tile
    # collectives: the window-bound target and the signal matrix
    ("pld.tensor.allreduce", {}, (RW, RW)),
    ("pld.tensor.allgather", {}, (R, W, RW)),
    ("pld.tensor.all_to_all_v", {}, (R, W, RW, R, W)),
    ("builtin.tensor.barrier", {}, (RW,)),
    # transfers: the destination, and the staging tiles every chunk passes through
    ("pld.tile.get", {}, (W, R, R, W, W, R, R, R)),
    ("pld.tile.put", {"atomic": Const(1)}, (RW, R, R, W, W, R, R)),
    ("pld.tile.remote_store", {}, (R, W, R, R)),
    ("pld.tile.remote_load", {}, (R, R, R, R, R)),
    ("pld.system.notify", {}, (W, R, R, R)),
    ("pld.system.notify", {"op": Symbol(("pld", "NotifyOp", "AtomicAdd"))}, (RW, R, R, R)),
    ("pld.system.wait", {}, (R, R, R)),
    # system: a freed pipe slot is refilled by the producer; a soft syncall counts in its workspace
    ("system.tfree_to_aiv", {}, (RW,)),
    ("system.syncall", {}, (RW, R)),
    ("system.cacheinvalid", {}, (R, R, R)),
    ("prefetch.async_prefetch", {}, (R, R)),
    ("array.update_element", {}, (RW, R, R)),
    ("dist.tree_reduce", {}, (R, R)),
])
def test_each_operand_is_read_or_written_as_the_op_declares(name, kwargs, accesses):
    op = REGISTRY[name]
    assert len(op.params) == len(accesses)
    assert tuple(op.access(i, tuple(kwargs.items())) for i in range(len(accesses))) == accesses


@pytest.mark.parametrize("name, kinds", [
    ("pld.tile.remote_store", (Kind.TILE, Kind.TENSOR, Kind.INDEX, Kind.INDICES)),
    ("pld.tile.get", (Kind.TENSOR, Kind.INDEX, Kind.TENSOR, Kind.TILE, Kind.TILE, Kind.INDICES,
                      Kind.INDICES, Kind.SHAPE)),
    ("pld.system.rank", (Kind.HANDLE,)),
    ("prefetch.wait", (Kind.HANDLE, Kind.HANDLE)),
    ("system.tfree_to_aic", (Kind.TILE,)),
    ("array.create", (Kind.INDEX, Kind.DTYPE)),
])
def test_operand_kinds(name, kinds):
    assert tuple(p.kind for p in REGISTRY[name].signature) == kinds


@pytest.mark.parametrize("name, storage", [
    ("pld.tile.remote_load", Storage.FRESH), ("pld.tensor.window", Storage.VIEW),
    ("pld.tensor.allreduce", Storage.WRITES), ("system.bar_v", Storage.VALUE),
    ("prefetch.make_context", Storage.VALUE), ("array.create", Storage.FRESH),
])
def test_what_the_result_names(name, storage):
    assert REGISTRY[name].effect.storage is storage


def test_a_tile_a_distributed_op_reads_is_an_ordinary_operand():
    # a window passed to remote_store is copied unless proven a safe view, like any read
    assert operand_role("pld.tile.remote_store", 0) is Role.ORD
    assert REGISTRY["pld.tile.remote_store"].family is Family.SYSTEM


def test_an_op_outside_the_registry_stays_unclassified():
    assert lookup("pld.tile.remote_scatter") is None
    assert operand_role("pld.tile.remote_scatter", 0) is Role.ORD


def test_the_staging_tiles_of_a_get_are_recorded_as_written():
    # pld.tile.get(dst, peer, src, stage, stage2): dst, stage and stage2 are written
    tile = TileType((Const(16), Const(16)), DType.FP32, MemorySpace.Vec)
    stage, stage2, other = Var("stage", tile), Var("stage2", tile), Var("other", tile)
    dst, src = Var("dst", None), Var("src", None)
    call = Call("pld.tile.get", (VarRef(dst), Const(1), VarRef(src), VarRef(stage), VarRef(stage2),
                                 ListExpr((Const(0), Const(0))), ListExpr((Const(0), Const(0))),
                                 ListExpr((Const(16), Const(16)))))
    fx = function_effects(Function("k", [], [], [EvalStmt(call)]))
    assert {(w.var.name, w.index) for w in fx.writes} == {("dst", 0), ("stage", 3), ("stage2", 4)}
    assert not any(w.opaque for w in fx.writes)
    assert not fx.written_in(other, 0, fx.size)
