"""The op registry: each op declared once, with everything the rest of the code needs.

An entry (:class:`OpDef`) states

* its **operands**: positional parameter names, each with a :class:`Kind` (tile, tensor,
  index list, scalar, dtype, ...), and keyword-only attributes;
* its **family** (:class:`Family`), from which the **role** of a window operand follows
  (:meth:`OpDef.role`, a :class:`Role` whose ``egg`` spelling the rules use as the use context);
* its **result-type rule** (``infer``; ``None``: the type comes from the annotation);
* its **memory effect** (:class:`Effect`): a fresh buffer, a view of operand ``k``, a write into
  operand ``k`` (the result names that operand's storage), or a scalar — or ``None`` when the
  op's writes are unknown (*unclassified*, like an op that is not registered at all); with
  ``also_writes`` (other operands written: a collective's signal matrix, a transfer's staging
  tiles) and ``overwrites`` it gives each operand's :class:`Access` (read, written, or both:
  :meth:`OpDef.access`);
* its **window operands** (:class:`WindowOperand`: which source it reads at which offsets and extent),
  checked in bounds by the verifier and the simulators;
* its **numpy meaning** (``numpy``), which the simulators apply; ``None``: not modelled (the
  simulators raise ``UnsupportedByModel``).

The properties the passes and rules read (``inherits_input_memory``, ``inplace_safe``,
``reuses_arg``, ``left_arg`` / ``right_arg`` / ``bias_arg``, ``family``) are derived from that
declaration.  Long op lists are data: the tables generate one entry per line.

The op set is PyPTO's whole op registry (same names, operand order and memory effects), written
independently, one module per namespace: :mod:`.tile`, :mod:`.tensor`, :mod:`.scalar`,
:mod:`.distributed` (``pld.*``, ``builtin.*``, ``dist.*``) and :mod:`.system` (``system.*``,
``prefetch.*``, ``array.*``).  The model itself is :mod:`.model`; result-type rules are in
:mod:`.infer`, numpy meanings in :mod:`.meanings`.  Nothing outside this package tests op names.
"""

from __future__ import annotations

from . import distributed, scalar, system, tensor, tile  # noqa: F401  (each fills REGISTRY)
from .infer import transpose_axes
from .meanings import Operands
from .model import (ACC, FRESH, LEFT, NO_PATH, REGISTRY, RIGHT, TRANSFERS, VALUE, VEC, Access,
                    BoundCall, Effect, Family, InferFn, Kind, OpDef, OpTypeError, Param, Role,
                    Storage, WindowOperand, accumulates, bind, classified, dims_agree, dims_agree_flattened,
                    infer_type, lookup,
                    operand_role, shape_of, transfer_error, view_of, writes)

__all__ = ["ACC", "FRESH", "LEFT", "NO_PATH", "REGISTRY", "RIGHT", "TRANSFERS", "VALUE", "VEC",
           "Access", "BoundCall", "Effect", "Family", "InferFn", "Kind", "OpDef", "OpTypeError",
           "Operands", "Param", "Role", "Storage", "WindowOperand", "accumulates", "bind", "classified",
           "dims_agree", "dims_agree_flattened", "infer_type", "lookup", "operand_role", "shape_of", "transfer_error",
           "transpose_axes", "view_of", "writes"]
