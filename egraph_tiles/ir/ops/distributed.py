"""The distributed ops: ``pld.*`` (cross-rank transfers, collectives, signals, windows),
``builtin.tensor.*`` (the per-chip collectives the host ones lower to) and ``dist.*`` (host
runtime intrinsics).

None of them is rewritten by the tile pass; what matters is their memory effect.  A collective
updates its window-bound ``target`` in place and uses a ``signal`` matrix as a cross-rank barrier
(both read and written); a transfer overwrites its destination (accumulates into it with
``atomic=``); ``pld.tile.get`` / ``put`` pass every chunk through their staging tiles, which are
therefore overwritten too.  A tile read by ``pld.tile.remote_store`` is an ordinary operand: a
window of it is a copy unless proven a safe view.
"""

from __future__ import annotations

from ..types import MemorySpace
from .model import FRESH, VALUE, Family, declare, view_of, writes

_D = dict(family=Family.TENSOR)

# -- collectives on window-bound tensors (the pld.tensor.* form and its per-chip builtin)

for _ns in ("pld.tensor", "builtin.tensor"):
    # reduced in place: the target holds every rank's combination, the signal is the barrier
    _first = "target" if _ns == "pld.tensor" else "src"
    for _n, _spec in (("allreduce", f"{_first}:n signal:n"), ("broadcast", "target:n signal:n"),
                      ("reduce_scatter", "target:n signal:n")):
        declare(f"{_ns}.{_n}", _spec, None, **_D, effect=writes(0), also_writes=(1,),
                attrs="op mode core_num root dtype")
    declare(f"{_ns}.barrier", "signal:n", None, **_D, effect=writes(0))
    # pushed: this rank's input is read, every rank's chunk lands in target (overwritten)
    for _n in ("allgather", "all_to_all"):
        declare(f"{_ns}.{_n}", "input:n target:n signal:n", None, **_D, effect=writes(1),
                also_writes=(2,), overwrites=(1,), attrs="dtype")
    declare(f"{_ns}.all_to_all_v", "input:n target:n signal:n send_counts:n recv_counts:n",
            None, **_D, effect=writes(1), also_writes=(2, 4), overwrites=(1, 4), attrs="dtype")
declare("builtin.tensor.allreduce_ring", "src:n signal:n", None, **_D, effect=writes(0),
        also_writes=(1,), attrs="op dtype")

# -- point-to-point transfers (the result, when there is one, names the destination)

declare("pld.tensor.get", "dst:n peer:i src:n dst_offsets:o src_offsets:o shape:s", None, **_D,
        effect=writes(0), overwrites=(0,), attrs="chunk_rows chunk_cols pipeline")
declare("pld.tensor.put", "dst:n peer:i src:n dst_offsets:o shape:s", None, **_D,
        effect=writes(0), overwrites=(0,), attrs="atomic chunk_rows chunk_cols pipeline")
declare("pld.tensor.remote_store", "src:n target:n peer:i offsets:o", None, **_D,
        effect=writes(1), overwrites=(1,), attrs="atomic")
declare("pld.tile.get", "dst:n peer:i src:n stage:t stage2:t dst_offsets:o src_offsets:o shape:s",
        None, Family.SYSTEM, effect=writes(0), also_writes=(3, 4), overwrites=(0, 3, 4),
        attrs="chunk_rows chunk_cols pipeline")
declare("pld.tile.put", "dst:n peer:i src:n stage:t stage2:t dst_offsets:o shape:s", None,
        Family.SYSTEM, effect=writes(0), also_writes=(3, 4), overwrites=(0, 3, 4),
        attrs="atomic chunk_rows chunk_cols pipeline")
# a local tile (Vec or Acc) stored into a peer's window: the tile is only read
declare("pld.tile.remote_store", "src_tile:t target:n peer:i offsets:o", None, Family.SYSTEM,
        effect=writes(1), overwrites=(1,),
        input_memory=(("src_tile", frozenset({MemorySpace.Vec, MemorySpace.Acc})),),
        attrs="atomic")
# a window of a peer's tensor loaded into a fresh Vec tile
for _n in ("pld.tile.remote_load", "pld.tile._remote_load_with_physical_tail_padding"):
    declare(_n, "target:n peer:i offsets:o shape:s valid_shape:s", None, Family.SYSTEM,
            effect=FRESH, output_memory=MemorySpace.Vec, attrs="allow_physical_tail_padding")

# -- signals, communication context, window buffers

declare("pld.system.notify", "target:n peer:i offsets:o value:x", None, Family.SYSTEM,
        effect=writes(0), overwrites=(0,), attrs="op")
for _n in ("wait", "defer_wait"):
    declare(f"pld.system.{_n}", "signal:n offsets:o expected:x", None, Family.SYSTEM,
            effect=VALUE, attrs="cmp")
declare("pld.system.get_comm_ctx", "dist_tensor:n", None, Family.SYSTEM, effect=VALUE)
for _n in ("rank", "nranks"):
    declare(f"pld.system.{_n}", "ctx:h", None, Family.SCALAR, effect=VALUE)
declare("pld.system.world_size", "", None, Family.SCALAR, effect=VALUE)
declare("pld.tensor.alloc_window_buffer", "size:i", None, Family.SYSTEM, effect=VALUE,
        attrs="name")
# a DistributedTensor laid over a window buffer: a view of the buffer's storage
declare("pld.tensor.window", "buf:h shape:s", None, **_D, effect=view_of(0), attrs="dtype")

# -- host runtime intrinsics (they read their operands; results are runtime handles)

for _n, _spec in (("make_tensor", "rt:h count:x"), ("tree_reduce", "rt:h leaves:h"),
                  ("submit_worker", "rt:h"), ("submit_orchestrator", "rt:h"),
                  ("future_get", "future:h")):
    declare(f"dist.{_n}", _spec, None, Family.SYSTEM, effect=VALUE)
