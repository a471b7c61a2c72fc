"""The ``system.*`` ops (pipe barriers, flag synchronisation, cross-core pipes, task handles,
launch queries), ``prefetch.*`` (asynchronous L2 prefetch), ``array.*`` (small scalar arrays)
and the fixtures of PyPTO's own registry tests (``test.*``).

They move no tile data the pass could rewrite.  Most only read their operands (or have none);
the writes: a soft ``syncall`` counts in its workspace, ``array.update_element`` updates its
array, and freeing a popped tile hands its slot back to the producer core, which refills it — so
the tile's storage counts as written there, and nothing may read it through a view afterwards.
"""

from __future__ import annotations

from .model import FRESH, VALUE, Family, declare, writes

_S = dict(family=Family.SYSTEM)

# -- barriers and synchronisation: no operand, or event ids read

for _n in ("bar_v", "bar_m", "bar_all", "fence", "task_invalid", "task_dummy",
           "available_cluster_count", "available_aiv_count"):
    declare(f"system.{_n}", "", None, **_S, effect=VALUE, attrs="deps")
for _n in ("sync_src", "sync_dst"):
    declare(f"system.{_n}", "", None, **_S, effect=VALUE, attrs="set_pipe wait_pipe event_id")
declare("system.sync_set", "event_id_dyn:x", None, **_S, effect=VALUE,
        attrs="pipe event_id ffts_mode core_type")
declare("system.sync_wait", "event_id_dyn:x", None, **_S, effect=VALUE,
        attrs="pipe event_id core_type")
declare("system.task_is_valid", "task_id:x", None, **_S, effect=VALUE)
# the soft form counts arrivals in its workspace (read and written); the hard form ignores it
declare("system.syncall", "gm_workspace:n used_cores:x", None, **_S, effect=writes(0),
        attrs="core_type mode")
declare("system.cacheinvalid", "tensor:n shapes:s offsets:o", None, **_S, effect=VALUE)
declare("system.set_ffts", "workspace:n", None, **_S, effect=VALUE)

# -- cross-core pipes and buffers

for _n in ("aic_initialize_pipe", "aiv_initialize_pipe"):
    declare(f"system.{_n}", "c2v_consumer_buf:x v2c_consumer_buf:x", None, **_S, effect=VALUE,
            attrs="dir_mask slot_size slot_num local_slot_num id")
declare("system.reserve_buffer", "", None, **_S, effect=VALUE, attrs="name size base")
declare("system.import_peer_buffer", "", None, **_S, effect=VALUE, attrs="name peer_func")
for _n in ("tfree_to_aic", "tfree_to_aiv"):
    declare(f"system.{_n}", "tile:t", None, **_S, effect=writes(0), attrs="split id")

# -- asynchronous prefetch into L2 (the source tensor is read)

declare("prefetch.make_context", "", None, **_S, effect=VALUE)
declare("prefetch.async_prefetch", "src:n ctx:h", None, **_S, effect=VALUE)
declare("prefetch.session", "ctx:h", None, **_S, effect=VALUE)
declare("prefetch.wait", "event:h session:h", None, **_S, effect=VALUE)

# -- scalar arrays

declare("array.create", "extent:i dtype:d", None, **_S, effect=FRESH)
declare("array.get_element", "array:h index:i", None, Family.SCALAR, effect=VALUE)
declare("array.update_element", "array:h index:i value:x", None, **_S, effect=writes(0))

# -- fixtures of PyPTO's registry tests (registered in its library like any op)

declare("test.op", "arg1:x arg2:x", None, **_S, effect=VALUE,
        attrs="int_attr string_attr bool_attr")
for _n in ("deduce_raises_internal", "deduce_raises_type"):
    declare(f"test.{_n}", "x:x", None, **_S, effect=VALUE)
declare("test.tensor_op_no_conv", "x:n", None, Family.TENSOR, effect=FRESH)
