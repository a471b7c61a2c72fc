"""The statement interpreter shared by the ideal and the hardware simulator.

It walks the structured IR (loops and ifs carry values through a trailing ``YieldStmt``),
evaluates scalar expressions, and hands every registered tile op to the backend by its
registry :class:`Family`.  A backend (:mod:`.ideal`, :mod:`.hardware`) decides what a tile
value *is* (a numpy array, or a set of byte addresses) and implements the tile ops.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Iterable

import numpy as np

from ..ir.exprs import (BinOp, Call, Compare, Const, Expr, ListExpr, Neg, StrConst, Symbol, TupleItem,
                        VarRef, static_type)
from ..ir.ops import REGISTRY, BoundCall, Family, Kind, OpDef, OpTypeError, infer_type
from ..ir.stmts import (AssignStmt, EvalStmt, ForStmt, Function, IfStmt, Program, ReturnStmt,
                        ScopeStmt, Stmt, WhileStmt, YieldStmt, walk)
from ..ir.types import DType, MemorySpace, ScalarType, TensorType, TileType, Type
from .errors import NonTermination, OutOfBounds, SimError, UnsupportedByModel
from .semantics import coerce, np_dtype

#: iteration cap of pl.while_ loops
MAX_WHILE_ITERATIONS = 100_000


class _Return(Exception):
    def __init__(self, values: list[Any]):
        self.values = values


def static_value(e: Expr, consts: dict[int, int]) -> int | None:
    """The compile-time value of an index expression: literals and scalar SSA definitions
    that are themselves constant (what constant propagation after ConvertToSSA sees)."""
    if isinstance(e, Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    if isinstance(e, VarRef):
        return consts.get(id(e.var))
    if isinstance(e, Neg):
        v = static_value(e.operand, consts)
        return None if v is None else -v
    if isinstance(e, BinOp):
        a, b = static_value(e.lhs, consts), static_value(e.rhs, consts)
        if a is None or b is None:
            return None
        return _binop(e.op, a, b) if (b != 0 or e.op in "+-*") else None
    return None


def _binop(op: str, a: Any, b: Any) -> Any:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "//":
        return a // b
    if op == "%":
        return a % b
    raise UnsupportedByModel(f"scalar operator {op}")


_CMP = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def _const_consts(fn: Function) -> dict[int, int]:
    consts: dict[int, int] = {}
    for s in walk(fn.body):
        if isinstance(s, AssignStmt) and not isinstance(s.value, Call):
            v = static_value(s.value, consts)
            if v is not None:
                consts[id(s.target)] = v
    return consts


def check_window(what: str, offsets: list[int], shape: list[int], bounds: Iterable[int]) -> None:
    bounds = list(bounds)
    if len(offsets) != len(bounds) or len(shape) != len(bounds):
        raise OutOfBounds(f"{what}: rank mismatch (offsets {offsets}, shape {shape}, source {bounds})")
    for o, n, b in zip(offsets, shape, bounds):
        if o < 0 or n < 0 or o + n > b:
            raise OutOfBounds(f"{what}: window at {offsets} of shape {shape} leaves the source {bounds}")


class Interpreter(ABC):
    """Runs one function of a program; subclasses implement the tile ops."""

    def __init__(self, program: Program, block_idx: int = 0):
        self.program = program
        self.block_idx = block_idx
        self.consts: dict[int, int] = {}
        #: the memref byte address of the tile the current assignment defines, if pinned
        self.placement: int | None = None
        #: statements executed so far (the clock of the hardware model's liveness)
        self.step = 0

    # ------------------------------------------------------------ backend interface

    @abstractmethod
    def load(self, values: np.ndarray, dt: DType, mem: MemorySpace) -> Any:
        """A fresh tile holding ``values`` (the loaded window of a tensor)."""

    @abstractmethod
    def create(self, values: np.ndarray, dt: DType, mem: MemorySpace) -> Any: ...

    @abstractmethod
    def view(self, opdef: OpDef, src: Any, args: dict[str, Any], static: bool) -> Any:
        """A zero-copy view (Family.VIEW) of ``src``; ``args`` are the evaluated arguments
        by parameter name, ``static`` whether a slice's offsets are compile-time constants."""

    @abstractmethod
    def copy(self, opdef: OpDef, src: Any, args: dict[str, Any], target: MemorySpace) -> Any:
        """A fresh buffer (Family.COPY): extract / move / transpose."""

    @abstractmethod
    def matmul(self, opdef: OpDef, tiles: dict[str, Any], out_dt: DType) -> Any: ...

    @abstractmethod
    def vector(self, opdef: OpDef, args: dict[str, Any], out_dt: DType,
               valid: tuple[int, ...] | None) -> Any:
        """A vector or col_expand op; ``valid`` is the first operand's static valid shape."""

    @abstractmethod
    def tile_shape(self, v: Any) -> tuple[int, ...]: ...

    @abstractmethod
    def value(self, tile: Any) -> np.ndarray:
        """The current contents of a tile as a numpy array."""

    @abstractmethod
    def overwrite(self, tile: Any, values: np.ndarray) -> None:
        """Write ``values`` over a tile's contents in place (an op writing its operand element
        by element: ``tile.write``)."""

    #: the class of this model's tiles; each has ``dtype`` and ``space`` fields
    tile_type: type

    def is_tile(self, v: Any) -> bool:
        return isinstance(v, self.tile_type)

    def touch(self, v: Any) -> None:
        """A statement reads or writes ``v`` (the hardware model tracks buffer liveness)."""

    def tile_dtype(self, v: Any) -> DType:
        return v.dtype

    def tile_memory(self, v: Any) -> MemorySpace:
        return v.space

    # ------------------------------------------------------------ driver

    def run(self, function: str | None, inputs: dict[str, np.ndarray],
            scalars: dict[str, int | float]) -> dict[str, np.ndarray]:
        fn = self._pick(function)
        env: dict[int, Any] = {}
        outs: dict[str, np.ndarray] = {}
        for p in fn.params:
            t = p.var.type
            name = p.var.name
            if isinstance(t, TensorType):
                shape = self._ints(t.shape, env)
                if name in inputs:
                    arr = coerce(np.asarray(inputs[name]), t.dtype)
                    if list(arr.shape) != shape:
                        raise SimError(f"input {name!r} has shape {list(arr.shape)}, expected {shape}")
                elif p.is_out:
                    arr = coerce(np.zeros(shape), t.dtype)
                else:
                    raise SimError(f"missing input tensor {name!r}")
                env[id(p.var)] = arr
                if p.is_out:
                    outs[name] = arr
            elif isinstance(t, ScalarType) or t is None:
                if name not in scalars:
                    raise SimError(f"missing scalar argument {name!r}")
                env[id(p.var)] = scalars[name]
            else:
                raise UnsupportedByModel(f"parameter {name!r} of type {type(t).__name__}")
        returned = self._call_function(fn, env)
        result = dict(outs)
        for i, v in enumerate(returned):
            if any(v is o for o in outs.values()):
                continue
            result[f"return{i}"] = self._export(v)
        return {k: np.array(v, copy=True) for k, v in result.items()}

    def _export(self, v: Any) -> np.ndarray:
        if isinstance(v, np.ndarray):
            return v
        if self.is_tile(v):
            return self.value(v)
        return np.asarray(v)

    def _pick(self, function: str | None) -> Function:
        if function is not None:
            return self.program.function(function)
        if not self.program.functions:
            raise SimError("the program has no function")
        return self.program.functions[0]

    def _call_function(self, fn: Function, env: dict[int, Any]) -> list[Any]:
        saved = self.consts
        self.consts = _const_consts(fn)
        try:
            self.exec_body(fn.body, env)
        except _Return as r:
            return r.values
        finally:
            self.consts = saved
        return []

    # ------------------------------------------------------------ statements

    def exec_body(self, body: list[Stmt], env: dict[int, Any]) -> list[Any] | None:
        """Run a statement list; the values of its trailing yield, if any."""
        for s in body:
            if isinstance(s, YieldStmt):
                return [self.eval(v, env) for v in s.values]
            self.exec_stmt(s, env)
        return None

    def exec_stmt(self, s: Stmt, env: dict[int, Any]) -> None:
        self.step += 1
        if isinstance(s, AssignStmt):
            self.placement = self._placement(s.target.type, env)
            try:
                env[id(s.target)] = self.eval(s.value, env, s.target.type)
            finally:
                self.placement = None
        elif isinstance(s, EvalStmt):
            self.eval(s.call, env)
        elif isinstance(s, ForStmt):
            self._for(s, env)
        elif isinstance(s, WhileStmt):
            self._while(s, env)
        elif isinstance(s, IfStmt):
            taken = s.then_body if self._truth(self.eval(s.cond, env)) else s.else_body
            ys = self.exec_body(taken, env)
            self._bind(s.return_vars, ys, env, "if")
        elif isinstance(s, ScopeStmt):
            lanes = self.eval(s.args[0], env) if s.args else 1
            for lane in range(int(lanes)):
                env[id(s.var)] = lane
                self.exec_body(s.body, env)
        elif isinstance(s, ReturnStmt):
            raise _Return([self.eval(v, env) for v in s.values])
        else:
            raise UnsupportedByModel(f"statement {type(s).__name__}")

    def _placement(self, t: Type | None, env: dict[int, Any]) -> int | None:
        """The byte address a ``memref`` annotation pins the assigned tile to (None: the
        allocator decides — no memref, or the allocation-planning sentinel)."""
        if not isinstance(t, TileType) or t.memref is None or t.memref.is_sentinel:
            return None
        off = t.memref.byte_offset
        return int(off) if isinstance(off, int) else int(self.eval(off, env))

    def _bind(self, vars_: list, values: list[Any] | None, env: dict[int, Any], what: str) -> None:
        if not vars_:
            return
        if values is None or len(values) != len(vars_):
            raise SimError(f"{what} yields {0 if values is None else len(values)} values for "
                           f"{len(vars_)} results")
        for v, x in zip(vars_, values):
            env[id(v)] = x

    def _for(self, s: ForStmt, env: dict[int, Any]) -> None:
        start, stop, step = (int(self.eval(e, env)) for e in (s.start, s.stop, s.step))
        if step == 0:
            raise SimError("pl.range with step 0")
        carried = [self.eval(e, env) for e in s.init_values]
        for i in range(start, stop, step):
            env[id(s.loop_var)] = i
            for v, x in zip(s.iter_args, carried):
                env[id(v)] = x
            ys = self.exec_body(s.body, env)
            if s.iter_args:
                if ys is None or len(ys) != len(s.iter_args):
                    raise SimError("loop body must yield one value per carry")
                carried = ys
        self._bind(s.return_vars, carried, env, "loop")

    def _while(self, s: WhileStmt, env: dict[int, Any]) -> None:
        carried = [self.eval(e, env) for e in s.init_values]
        for _ in range(MAX_WHILE_ITERATIONS):
            for v, x in zip(s.iter_args, carried):
                env[id(v)] = x
            if not self._truth(self.eval(s.cond, env)):
                break
            ys = self.exec_body(s.body, env)
            if s.iter_args:
                if ys is None or len(ys) != len(s.iter_args):
                    raise SimError("while body must yield one value per carry")
                carried = ys
        else:
            raise NonTermination(f"pl.while_ ran {MAX_WHILE_ITERATIONS} iterations")
        self._bind(s.return_vars, carried, env, "while")

    @staticmethod
    def _truth(v: Any) -> bool:
        return bool(v)

    # ------------------------------------------------------------ expressions

    def eval(self, e: Expr, env: dict[int, Any], target_type: Type | None = None) -> Any:
        if isinstance(e, Const):
            return e.value
        if isinstance(e, VarRef):
            if id(e.var) not in env:
                raise SimError(f"variable {e.var.name} has no value here")
            v = env[id(e.var)]
            self.touch(v)
            return v
        if isinstance(e, BinOp):
            return _binop(e.op, self.eval(e.lhs, env), self.eval(e.rhs, env))
        if isinstance(e, Neg):
            return -self.eval(e.operand, env)
        if isinstance(e, Compare):
            return _CMP[e.op](self.eval(e.lhs, env), self.eval(e.rhs, env))
        if isinstance(e, ListExpr):
            return [self.eval(x, env) for x in e.items]
        if isinstance(e, Symbol):
            return e.value if e.value is not None else e.path[-1]
        if isinstance(e, StrConst):
            return e.value
        if isinstance(e, Call):
            return self.call(e, env, target_type)
        if isinstance(e, TupleItem):  # an element of a program function's several results
            return self.eval(e.value, env)[e.index]
        raise UnsupportedByModel(f"expression {type(e).__name__}")

    def _ints(self, items: Iterable[Expr], env: dict[int, Any]) -> list[int]:
        return [int(self.eval(x, env)) for x in items]

    def is_static(self, e: Expr) -> bool:
        return static_value(e, self.consts) is not None

    def call(self, c: Call, env: dict[int, Any], target_type: Type | None = None) -> Any:
        if c.op.startswith("self."):
            fn = self.program.function(c.op[5:])
            args = [self.eval(a, env) for a in c.args]
            callee_env = {id(p.var): a for p, a in zip(fn.params, args)}
            by_name = {p.var.name: p.var for p in fn.params}
            for name, a in c.kwargs:  # (a keyword argument binds the parameter of its name)
                if name not in by_name:
                    raise SimError(f"{c.op} has no parameter {name!r}")
                callee_env[id(by_name[name])] = self.eval(a, env)
            vals = self._call_function(fn, callee_env)
            return vals[0] if len(vals) == 1 else tuple(vals)
        opdef = REGISTRY.get(c.op)
        if opdef is None:
            raise UnsupportedByModel(f"opaque call {c.op}: no semantics")
        if not opdef.modeled and not opdef.reinterprets:
            raise UnsupportedByModel(f"{c.op}: the registry gives it no value semantics")
        b = BoundCall(opdef, c, {})
        fam = opdef.family
        if fam is Family.SCALAR:
            return opdef.numpy(self, *(self.eval(a, env) for a in c.args))
        if fam is Family.LOAD:
            tensor = self.eval(b.require("tensor"), env)
            tt = self._tensor_dtype(b, env)
            mem = b.memory(opdef.default_target) or MemorySpace.Vec
            offs, shape = self._ints(b.shape("offsets"), env), self._ints(b.shape("shape"), env)
            check_window(opdef.name, offs, shape, tensor.shape)
            values = opdef.numpy(tensor, offs, shape)
            rt = self._result_type(c, target_type)
            if isinstance(rt, TileType) and rt.rank != values.ndim:
                values = values.reshape(self._ints(rt.shape, env))  # an N-D load, flattened
            return self.load(values, tt, mem)
        if fam is Family.STORE:
            tile = self.eval(b.require("tile"), env)
            out = self.eval(b.require("output"), env)
            offs = self._ints(b.shape("offsets"), env)
            values = self.value(tile)
            check_window(opdef.name, offs, list(values.shape), out.shape)
            return opdef.numpy(out, offs, values)
        args = {k: self.eval(v, env) for k, v in b.args.items()}
        if fam is Family.CREATE:
            rt = self._result_type(c, target_type)
            if not isinstance(rt, TileType) or rt.memory is None:
                raise UnsupportedByModel(f"{c.op} with no static result type")
            args["shape"] = self._ints(b.shape("shape"), env)
            mem = b.memory(rt.memory) or rt.memory
            return self.create(opdef.numpy(args), rt.dtype, mem)
        if opdef.window is not None:
            parts = b.window_parts()
            if parts is not None:
                check_window(opdef.name, self._ints(parts[1], env), self._ints(parts[2].items, env),
                             self.tile_shape(args[opdef.window.src]))
        if fam is Family.VIEW:
            off = b.args.get("offset")
            static = isinstance(off, ListExpr) and all(self.is_static(x) for x in off.items)
            return self.view(opdef, args["src"], args, static)
        if fam is Family.COPY:
            src = args["src"]
            return self.copy(opdef, src, args, b.memory(self.tile_memory(src)) or self.tile_memory(src))
        if fam is Family.MATMUL:
            lhs_dt = self.tile_dtype(args["lhs"])
            out_dt = DType.INT32 if lhs_dt.is_int else DType.FP32
            if "acc" in args:
                out_dt = self.tile_dtype(args["acc"])
            return self.matmul(opdef, args, out_dt)
        if fam in (Family.COL_EXPAND, Family.VECTOR):
            first = args[opdef.params[0]]
            rt = self._result_type(c, target_type)
            out_dt = rt.dtype if isinstance(rt, TileType) else self.tile_dtype(first)
            valid = None
            src_expr = b.args.get(opdef.params[0])
            if isinstance(src_expr, VarRef) and isinstance(src_expr.var.type, TileType):
                vs = src_expr.var.type.valid_shape
                if vs is not None:
                    valid = tuple(self._ints(vs, env))
            return self.vector(opdef, args, out_dt, valid)
        raise UnsupportedByModel(f"op family {fam} of {c.op}")

    @staticmethod
    def _result_type(c: Call, target_type: Type | None) -> Type | None:
        """The registry's result type of ``c`` (its annotation when the registry has none)."""
        try:
            t = infer_type(c, static_type)
        except OpTypeError:
            t = None
        return t if isinstance(t, TileType) else target_type

    def operands(self, opdef: OpDef, args: dict[str, Any], valid: tuple[int, ...] | None
                 ) -> tuple[list[Any], list[Any], dict[str, Any]]:
        """The tile operands, scalar operands and attributes of a vector op, in parameter order."""
        tiles = [args[p.name] for p in opdef.signature
                 if p.kind is Kind.TILE and self.is_tile(args.get(p.name))]
        scalars = [args[p.name] for p in opdef.signature
                   if p.kind is Kind.SCALAR and p.name in args]
        attrs = {k: v for k, v in args.items() if opdef.kind(k) not in (Kind.TILE, Kind.SCALAR)}
        return tiles, scalars, attrs

    def _tensor_dtype(self, b: BoundCall, env: dict[int, Any]) -> DType:
        e = b.require("tensor")
        if isinstance(e, VarRef) and isinstance(e.var.type, TensorType):
            return e.var.type.dtype
        arr = self.eval(e, env)
        for dt in (DType.FP32, DType.FP16, DType.INT32, DType.INT8, DType.INT16, DType.INT64):
            if np_dtype(dt) == arr.dtype:
                return dt
        raise UnsupportedByModel("tile.load of a tensor of unknown dtype")
