"""Read a legacy NKI kernel with ``ast`` (never executing it) into its indexed accesses.

The reader is a small abstract interpreter over the kernel's syntax tree.  Values it tracks:

* Python ints / floats / bools / strings / tuples (constants, shapes, ``--scalar`` values);
* symbolic integers -- :class:`~egraph_tiles.nki.expr.AffineExpr` over loop variables
  (``affine_range`` / ``sequential_range`` / ``static_range`` / ``range``) and program ids
  (``program_id_k``), each a :class:`~egraph_tiles.nki.expr.Var` with its range;
* index values of the existing layer: ``arange`` / ``TileIndex`` / ``DynSlice`` / slices,
  ``mgrid`` grids, and ``TileMask`` predicates;
* :class:`Tensor` -- a parameter, an ``nl.ndarray``-style allocation or a tile returned by
  ``nl.load`` / a compute op (its shape is the broadcast shape of its operands);
* :class:`Opaque` -- anything else (a data-dependent value, a non-affine product, a call into
  another library); using one in an index is reported, never guessed.

Every ``tensor[index]`` evaluated on a :class:`Tensor` is recorded as a :class:`RawAccess` (line,
tensor text, role, the evaluated subscripts, the call's ``mask=``).  A statement the reader
cannot analyze records a :class:`Finding` naming its line and what was expected; the statement's
targets become opaque and the rest of the kernel is still read.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

from egraph_tiles.nki.expr import AffineExpr, Var, scalar_var
from egraph_tiles.nki.masks import TileMask
from egraph_tiles.nki.ranges import DynSlice, arange, partial_tile_index
from egraph_tiles.nki.scalar import DynamicScalar
from egraph_tiles.nki.tile import TileIndex

__all__ = ["Finding", "KernelRead", "Opaque", "RawAccess", "ReaderError", "Tensor",
           "kernel_names", "read_kernel"]

#: ``nl.tile_size`` constants (NKI's hardware tile limits).
TILE_SIZE = {"pmax": 128, "psum_fmax": 512, "gemm_stationary_fmax": 128,
             "gemm_moving_fmax": 512, "bn_stats_fmax": 512, "psum_min_dtype": "float32",
             "total_available_sbuf_size": 24 * 1024 * 1024}
_BUFFERS = {"sbuf": "sbuf", "psum": "psum", "hbm": "hbm", "shared_hbm": "hbm",
            "private_hbm": "hbm"}
_DTYPES = {"bfloat16", "float16", "float32", "float8_e4m3", "float8_e5m2", "tfloat32",
           "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool_",
           "float8e4", "float8e5", "fp8_exp4", "fp8_exp5"}
_ALLOC = {"ndarray", "zeros", "ones", "full", "empty", "rand", "random_seed", "shared_constant"}
_ALLOC_LIKE = {"zeros_like", "ones_like", "empty_like", "full_like"}
_LOOPS = {"affine_range", "sequential_range", "static_range", "range"}
_KERNEL_DECORATORS = {"jit", "trace", "baremetal", "benchmark", "profile", "simulate_kernel"}
_MAX_CALL_DEPTH = 16
_MAX_UNROLL = 32


class ReaderError(Exception):
    """A construct the reader cannot analyze (becomes a :class:`Finding`)."""

    def __init__(self, message: str, node: ast.AST | None = None, kind: str = "error") -> None:
        super().__init__(message)
        self.message = message
        self.line = getattr(node, "lineno", None)
        self.kind = kind


@dataclass(frozen=True)
class Finding:
    """An error or finding at a kernel line (``kind``: ``error``, ``out-of-bounds``,
    ``non-affine``, ``partition``, ``indirect``, ``mask``, ``migration``, ``verify``)."""

    line: int
    message: str
    kind: str = "error"


@dataclass(frozen=True, eq=False)
class Opaque:
    """A value the index layer cannot use (``why`` says what it is)."""

    why: str
    kind: str = "unknown"  # "unknown" | "nonaffine" | "data"


@dataclass(eq=False)
class Tensor:
    """A tensor or tile: ``shape`` (``None`` when unknown), dtype, buffer (hbm/sbuf/psum)."""

    name: str
    shape: tuple[int, ...] | None
    dtype: str | None = None
    buffer: str = "sbuf"
    from_access: int = 0  # id of the RawAccess whose value this is (0: not an access's value)

    def with_shape(self, shape: tuple[int, ...] | None, name: str | None = None) -> Tensor:
        return Tensor(name or self.name, shape, self.dtype, self.buffer)


@dataclass(frozen=True)
class MGrid:
    """The value of ``nl.mgrid[...]``: one index per axis, also as ``.p`` / ``.x`` / ``.y`` / ``.z``."""

    indices: tuple[TileIndex, ...]


@dataclass(eq=False)
class RawAccess:
    """One ``tensor[index]`` as read: where, which tensor, the evaluated subscripts."""

    line: int
    col: int
    node: ast.Subscript
    tensor_text: str
    tensor: Tensor
    role: str
    subs: tuple[Any, ...]
    legacy: bool  # uses arange / mgrid indices (or a mask): needs migration to 0.2+
    scope: tuple[Var, ...]  # loop variables and program ids in scope, outermost first
    mask: TileMask | None = None
    mask_node: ast.keyword | None = None
    call_node: ast.Call | None = None
    instruction: int = 0  # accesses of one statement share an instruction number
    stmt_line: int = 0  # first line of that statement
    in_helper: bool = False  # read inside a helper function (at one of its call sites)
    operand: bool = True  # an operand of an nl / nisa instruction (not a view passed along)


@dataclass
class KernelRead:
    """Everything read from one kernel."""

    name: str
    source: str = ""
    accesses: list[RawAccess] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    symbols: dict[str, Var] = field(default_factory=dict)
    steps: dict[str, int] = field(default_factory=dict)  # loop variable -> step
    source_names: dict[str, str] = field(default_factory=dict)  # symbol -> Python text
    masked_calls: list[tuple[ast.Call, ast.keyword, tuple[str, ...]]] = field(default_factory=list)
    # every call with a mask=: the call, its keyword, its whole-tile operands (not indexed)


# ----- module structure ---------------------------------------------------------------------------

def _is_kernel_decorator(dec: ast.expr) -> bool:
    d = dec.func if isinstance(dec, ast.Call) else dec
    name = d.attr if isinstance(d, ast.Attribute) else d.id if isinstance(d, ast.Name) else ""
    return name in _KERNEL_DECORATORS


def kernel_names(tree: ast.Module) -> list[str]:
    """Names of the module's decorated kernels (``@nki.jit``, ``@nki.trace``, ...)."""
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef)
            and any(_is_kernel_decorator(d) for d in n.decorator_list)]


def _module_alias(qualname: str) -> str:
    """``neuronxcc.nki.language`` -> ``nki.language`` (the legacy and new spellings agree)."""
    for prefix in ("neuronxcc.", "nki_"):
        if qualname.startswith(prefix) and qualname.startswith("neuronxcc."):
            return qualname[len(prefix):]
    return qualname


@dataclass(frozen=True)
class Module:
    """An imported module or a name imported from one (``qual`` is its dotted path)."""

    qual: str


def _parse_literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def read_kernel(source: str, kernel: str | None = None, *, filename: str = "<kernel>",
                shapes: Mapping[str, Sequence[int]] | None = None,
                dtypes: Mapping[str, str] | None = None,
                scalars: Mapping[str, Any] | None = None,
                binds: Mapping[str, int] | None = None,
                grid: Sequence[int] | None = None) -> KernelRead:
    """Read kernel ``kernel`` (default: the only decorated one) of ``source``.

    ``shapes`` / ``dtypes`` describe tensor parameters, ``scalars`` gives Python parameters,
    ``binds`` fixes symbols (a loop variable or ``program_id_k``) to one value, ``grid`` is the
    launch grid (program ids range over it).  Raises ``SyntaxError`` for a file that is not
    Python and ``LookupError`` when the kernel cannot be chosen.
    """
    tree = ast.parse(source, filename=filename)
    fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if kernel is None:
        names = kernel_names(tree)
        if len(names) != 1:
            found = ", ".join(names) if names else "none"
            raise LookupError(f"{filename}: choose the kernel with --kernel NAME "
                              f"(decorated kernels: {found}; functions: {', '.join(fns) or 'none'})")
        kernel = names[0]
    if kernel not in fns:
        raise LookupError(f"{filename}: no function named {kernel!r} "
                          f"(functions: {', '.join(fns) or 'none'})")
    reader = _Reader(tree, fns, kernel, dict(shapes or {}), dict(dtypes or {}),
                     dict(scalars or {}), dict(binds or {}), tuple(grid or ()))
    reader.out.source = source
    return reader.run()


# ----- the abstract interpreter ------------------------------------------------------------------

class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


_KNOWN = (bool, int, float, str, type(None), tuple, list)


def _is_sym(v: Any) -> bool:
    return isinstance(v, AffineExpr)


def _is_int(v: Any) -> bool:
    return isinstance(v, Integral) and not isinstance(v, bool) or isinstance(v, bool)


def _as_index_operand(v: Any) -> Any:
    """Symbolic ints enter TileIndex arithmetic as runtime scalars."""
    return DynamicScalar(v) if isinstance(v, AffineExpr) else v


def _const_value(v: Any) -> Any:
    """A symbolic int whose expression is a constant is that int."""
    if isinstance(v, AffineExpr) and v.op == "const":
        return v.args[0]
    return v


class _Reader:
    def __init__(self, tree: ast.Module, fns: dict[str, ast.FunctionDef], kernel: str,
                 shapes: dict[str, Sequence[int]], dtypes: dict[str, str],
                 scalars: dict[str, Any], binds: dict[str, int], grid: tuple[int, ...]) -> None:
        self.tree = tree
        self.fns = fns
        self.kernel = kernel
        self.shapes = shapes
        self.dtypes = dtypes
        self.scalars = scalars
        self.binds = binds
        self.grid = grid
        self.out = KernelRead(kernel)
        self.globals: dict[str, Any] = {}
        self.scope: list[Var] = []
        self.depth = 0
        self.instruction = 0
        self.stmt_line = 0
        self.unroll_budget = 4 * _MAX_UNROLL
        self._nki_args = 0  # > 0 while evaluating the arguments of an nl / nisa call
        self._collect: list[list[RawAccess]] = []
        self._call_masks: dict[int, tuple[TileMask, ast.keyword]] = {}

    # ----- driver ---------------------------------------------------------------------------
    def run(self) -> KernelRead:
        self._read_module()
        fn = self.fns[self.kernel]
        env = dict(self.globals)
        args = fn.args
        params = args.posonlyargs + args.args + args.kwonlyargs
        defaults = dict(zip([a.arg for a in (args.posonlyargs + args.args)][::-1],
                            list(args.defaults)[::-1]))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d})
        for name in self.shapes:
            if name not in {p.arg for p in params}:
                self._finding(fn.lineno, f"--shape {name}: the kernel has no parameter {name!r}")
        for p in params:
            env[p.arg] = self._param_value(p.arg, defaults.get(p.arg))
        try:
            self._block(fn.body, env)
        except _Return:
            pass
        return self.out

    def _param_value(self, name: str, default: ast.expr | None) -> Any:
        if name in self.shapes:
            shape = tuple(int(d) for d in self.shapes[name])
            return Tensor(name, shape, self.dtypes.get(name), "hbm")
        if name in self.scalars:
            return self.scalars[name]
        if default is not None:
            try:
                return ast.literal_eval(default)
            except ValueError:
                pass
        return Opaque(f"parameter {name!r} has no value (pass --shape {name}=D0xD1... for a "
                      f"tensor or --scalar {name}=VALUE)")

    def _read_module(self) -> None:
        for node in self.tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._import(node, self.globals)
            elif isinstance(node, ast.Assign):
                try:
                    value = self._expr(node.value, self.globals)
                    for t in node.targets:
                        self._bind(t, value, self.globals, node)
                except ReaderError:
                    pass  # module-level code outside the kernel is not analyzed
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                self.globals[node.name] = node

    @staticmethod
    def _import(node: ast.Import | ast.ImportFrom, env: dict[str, Any]) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    env[a.asname] = Module(_module_alias(a.name))
                else:
                    root = a.name.split(".")[0]
                    env[root] = Module(_module_alias(root) if root != "neuronxcc" else root)
        else:
            base = _module_alias(node.module or "")
            for a in node.names:
                env[a.asname or a.name] = Module(f"{base}.{a.name}" if base else a.name)

    def _finding(self, line: int | None, message: str, kind: str = "error") -> None:
        self.out.findings.append(Finding(line or 0, message, kind))

    # ----- statements -----------------------------------------------------------------------
    def _block(self, body: Sequence[ast.stmt], env: dict[str, Any]) -> None:
        for st in body:
            self.instruction += 1
            self.stmt_line = st.lineno
            try:
                self._stmt(st, env)
            except ReaderError as e:
                self._finding(e.line or st.lineno, e.message, e.kind)
                for name in _assigned_names(st):
                    env[name] = Opaque(f"{name!r} could not be analyzed (line {st.lineno})")

    def _stmt(self, st: ast.stmt, env: dict[str, Any]) -> None:
        if isinstance(st, ast.Expr):
            if isinstance(st.value, ast.Constant):
                return  # docstring
            self._expr(st.value, env)
        elif isinstance(st, ast.Assign):
            value = self._expr(st.value, env)
            n0 = len(self.out.accesses)
            for t in st.targets:
                self._bind(t, value, env, st)
            masked = self._call_masks.get(id(st.value))
            if masked is not None:  # the instruction's mask also bounds its destination
                for acc in self.out.accesses[n0:]:
                    if acc.mask is None:
                        acc.mask, acc.mask_node, acc.call_node = masked[0], masked[1], st.value
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self._bind(st.target, self._expr(st.value, env), env, st)
        elif isinstance(st, ast.AugAssign):
            self._augassign(st, env)
        elif isinstance(st, ast.For):
            self._for(st, env)
        elif isinstance(st, ast.If):
            self._if(st, env)
        elif isinstance(st, ast.With):
            for item in st.items:
                self._expr(item.context_expr, env)
            self._block(st.body, env)
        elif isinstance(st, ast.Try):
            self._block(st.body, env)
            self._block(st.orelse, env)
            self._block(st.finalbody, env)
        elif isinstance(st, ast.Return):
            raise _Return(self._expr(st.value, env) if st.value is not None else None)
        elif isinstance(st, (ast.Import, ast.ImportFrom)):
            self._import(st, env)
        elif isinstance(st, ast.FunctionDef):
            env[st.name] = st
        elif isinstance(st, (ast.Pass, ast.Assert, ast.Break, ast.Continue, ast.Delete,
                             ast.Global, ast.Nonlocal, ast.Raise)):
            return
        elif isinstance(st, ast.While):
            raise ReaderError("a `while` loop cannot be analyzed (expected a `for` loop over "
                              "nl.affine_range / nl.sequential_range / nl.static_range / range)", st)
        else:
            raise ReaderError(f"unsupported statement `{type(st).__name__}` (expected an "
                              "assignment, a call, a for loop, an if or a with block)", st)

    def _bind(self, target: ast.expr, value: Any, env: dict[str, Any], st: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, Tensor) and value.name.startswith("<"):
                value = value.with_shape(value.shape, target.id)
            if isinstance(value, AffineExpr):
                for v in value.free_vars:
                    if v.name.startswith("program_id_") and value == AffineExpr.var(v) \
                            and self.depth == 0 and self.out.source_names.get(v.name, "").startswith("nl."):
                        self.out.source_names[v.name] = target.id  # `row = nl.program_id(0)`
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self._unpack(value, len(target.elts), st)
            for t, v in zip(target.elts, items):
                self._bind(t, v, env, st)
        elif isinstance(target, ast.Subscript):
            self._subscript(target, env, role="dst")
        elif isinstance(target, ast.Attribute):
            return
        else:  # a starred target
            raise ReaderError("starred assignment targets are not supported", st)

    @staticmethod
    def _unpack(value: Any, n: int, node: ast.AST) -> list[Any]:
        if isinstance(value, MGrid):
            value = value.indices
        if isinstance(value, (tuple, list)):
            if len(value) != n:
                raise ReaderError(f"cannot unpack {len(value)} values into {n} names", node)
            return list(value)
        if isinstance(value, Opaque):
            return [value] * n
        raise ReaderError(f"cannot unpack a {type(value).__name__} into {n} names "
                          "(expected a tuple, a shape or nl.mgrid[...])", node)

    def _augassign(self, st: ast.AugAssign, env: dict[str, Any]) -> None:
        value = self._expr(st.value, env)
        if isinstance(st.target, ast.Name):
            cur = self._name(st.target, env)
            env[st.target.id] = self._binop(st.op, cur, value, st)
        elif isinstance(st.target, ast.Subscript):
            self._subscript(st.target, env, role="src")
            self._subscript(st.target, env, role="dst")
        # an attribute target (`obj.x += 1`) is not an access

    def _for(self, st: ast.For, env: dict[str, Any]) -> None:
        it = st.iter
        if isinstance(it, ast.Call):
            fn = self._expr(it.func, env)
            kind = fn.qual.rsplit(".", 1)[-1] if isinstance(fn, Module) else (
                "range" if fn is range else None)
            if kind in _LOOPS and (isinstance(fn, Module) and (
                    fn.qual.startswith("nki.") or fn.qual == "range") or fn is range):
                self._symbolic_loop(st, it, env)
                return
        seq = self._expr(it, env)
        if isinstance(seq, MGrid):
            seq = seq.indices
        if isinstance(seq, (tuple, list)) and len(seq) <= _MAX_UNROLL:
            for v in seq:
                self._bind(st.target, v, env, st)
                self._block(st.body, env)
            return
        raise ReaderError("a for loop must iterate over nl.affine_range / nl.sequential_range / "
                          f"nl.static_range / range or a short Python sequence, not "
                          f"`{ast.unparse(it)}`", st)

    def _symbolic_loop(self, st: ast.For, call: ast.Call, env: dict[str, Any]) -> None:
        args = [self._expr(a, env) for a in call.args]
        args = [_const_value(a) for a in args]
        if not 1 <= len(args) <= 3 or not all(_is_int(a) for a in args):
            raise ReaderError(f"loop bounds of `{ast.unparse(call)}` must be integers known "
                              "before the kernel runs (give parameters with --scalar)", call)
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (
            args[0], args[1], args[2] if len(args) == 3 else 1)
        if step == 0:
            raise ReaderError(f"loop `{ast.unparse(call)}` has a zero step", call)
        values = range(int(start), int(stop), int(step))
        if not isinstance(st.target, ast.Name):
            raise ReaderError("a loop variable must be a single name", st)
        if len(values) == 0:
            return
        name = st.target.id
        if name in self.binds:
            if int(self.binds[name]) not in values:
                raise ReaderError(f"--bind {name}={self.binds[name]} is outside the loop range "
                                  f"{min(values)}..{max(values)}", st)
            env[name] = int(self.binds[name])
            self._block(st.body, env)
            self._block(st.orelse, env)
            return
        mark = (len(self.out.accesses), len(self.out.findings), dict(self.out.symbols))
        var = self._fresh_var(name, min(values), max(values))
        self.out.steps[var.name] = abs(int(step))
        self.out.source_names[var.name] = name
        env[name] = AffineExpr.var(var)
        self.scope.append(var)
        try:
            self._block(st.body, env)
        finally:
            self.scope.pop()
        failed = any(f.kind == "error" for f in self.out.findings[mark[1]:])
        if failed and len(values) <= _MAX_UNROLL and self.unroll_budget >= len(values):
            # the body needs concrete values (min/max of the loop variable, ...): unroll it
            self.unroll_budget -= len(values)
            del self.out.accesses[mark[0]:]
            del self.out.findings[mark[1]:]
            self.out.symbols = mark[2]
            for v in values:
                env[name] = v
                self._block(st.body, env)
        self._block(st.orelse, env)

    def _fresh_var(self, name: str, lo: int, hi: int) -> Var:
        cand, k = name, 1
        while cand in self.out.symbols and (self.out.symbols[cand].lo, self.out.symbols[cand].hi) != (lo, hi):
            k += 1
            cand = f"{name}_{k}"
        var = scalar_var(cand, lo, hi)
        self.out.symbols[cand] = var
        return var

    def _if(self, st: ast.If, env: dict[str, Any]) -> None:
        cond = _const_value(self._expr(st.test, env))
        if isinstance(cond, (bool, int, float, str, tuple, type(None))):
            self._block(st.body if cond else st.orelse, env)
        else:  # undecidable before the kernel runs: both branches are analyzed
            self._block(st.body, env)
            self._block(st.orelse, env)

    # ----- expressions ----------------------------------------------------------------------
    def _expr(self, node: ast.expr, env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node, env)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, env)
        if isinstance(node, ast.BinOp):
            return self._binop(node.op, self._expr(node.left, env), self._expr(node.right, env), node)
        if isinstance(node, ast.UnaryOp):
            return self._unary(node, self._expr(node.operand, env))
        if isinstance(node, ast.Compare):
            return self._compare(node, env)
        if isinstance(node, ast.BoolOp):
            out = None
            for k, v in enumerate(node.values):
                out = _const_value(self._expr(v, env))
                if not isinstance(out, _KNOWN) or k == len(node.values) - 1:
                    if isinstance(out, TileMask):
                        return out
                    break
                if bool(out) != isinstance(node.op, ast.And):
                    return out  # short circuit: `x or default`, `flag and value`
            if isinstance(out, _KNOWN) or len(node.values) == 1 or not isinstance(out, (
                    AffineExpr, Opaque, TileMask)):
                return out
            return Opaque(f"`{ast.unparse(node)}` is not known before the kernel runs")
        if isinstance(node, (ast.Tuple, ast.List)):
            vals = []
            for e in node.elts:
                if isinstance(e, ast.Starred):
                    inner = self._expr(e.value, env)
                    if not isinstance(inner, (tuple, list)):
                        raise ReaderError(f"cannot unpack `{ast.unparse(e)}`", node)
                    vals.extend(inner)
                else:
                    vals.append(self._expr(e, env))
            return tuple(vals) if isinstance(node, ast.Tuple) else list(vals)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, env, role="src")
        if isinstance(node, ast.Call):
            return self._call(node, env)
        if isinstance(node, ast.Slice):
            return slice(*(None if p is None else _const_value(self._expr(p, env))
                           for p in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.IfExp):
            cond = _const_value(self._expr(node.test, env))
            if isinstance(cond, (bool, int, float, str, type(None), tuple)):
                return self._expr(node.body if cond else node.orelse, env)
            self._expr(node.body, env)
            self._expr(node.orelse, env)
            return Opaque(f"`{ast.unparse(node)}` depends on a value known only at run time")
        if isinstance(node, ast.Dict):
            return {self._expr(k, env) if k is not None else None: self._expr(v, env)
                    for k, v in zip(node.keys, node.values)}
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp,
                             ast.Lambda, ast.JoinedStr)):
            return Opaque(f"`{type(node).__name__}` is not analyzed")
        raise ReaderError(f"unsupported expression `{ast.unparse(node)}`", node)

    def _name(self, node: ast.Name, env: dict[str, Any]) -> Any:
        if node.id in env:
            return env[node.id]
        builtins = {"range": range, "min": min, "max": max, "len": len, "int": int,
                    "abs": abs, "float": float, "tuple": tuple, "list": list, "print": print,
                    "enumerate": enumerate, "zip": zip, "isinstance": isinstance,
                    "True": True, "False": False, "None": None, "divmod": divmod,
                    "sum": sum, "round": round, "bool": bool, "str": str,
                    "getattr": getattr, "map": map, "hasattr": hasattr, "reversed": reversed,
                    "sorted": sorted, "any": any, "all": all}
        if node.id in builtins:
            return builtins[node.id]
        raise ReaderError(f"name {node.id!r} is not defined", node)

    def _attribute(self, node: ast.Attribute, env: dict[str, Any]) -> Any:
        base = self._expr(node.value, env)
        attr = node.attr
        if isinstance(base, Module):
            qual = f"{base.qual}.{attr}"
            if base.qual.endswith("language.tile_size") or base.qual == "tile_size":
                if attr in TILE_SIZE:
                    return TILE_SIZE[attr]
            if _lang(base.qual):
                if attr in _BUFFERS:
                    return _BUFFERS[attr]
                if attr in _DTYPES:
                    return attr
            return Module(qual)
        if isinstance(base, Tensor):
            if attr == "shape":
                if base.shape is None:
                    return Opaque(f"the shape of {base.name!r} is not known")
                return base.shape
            if attr == "dtype":
                return base.dtype
            if attr in ("ndim",):
                return len(base.shape) if base.shape is not None else Opaque("unknown rank")
            return _Method(base, attr)
        if isinstance(base, _Object):
            if attr in base.attrs:
                return base.attrs[attr]
            return Opaque(f"`{ast.unparse(node)}` is not a known attribute")
        if isinstance(base, MGrid):
            names = "pxyz"
            if attr in names and names.index(attr) < len(base.indices):
                return base.indices[names.index(attr)]
            raise ReaderError(f"an mgrid of rank {len(base.indices)} has no axis .{attr} "
                              "(expected .p, .x, .y or .z)", node)
        if isinstance(base, Opaque):
            return base
        if isinstance(base, (tuple, list, int, float, str)) or base is None:
            return Opaque(f"attribute `{ast.unparse(node)}` is not analyzed")
        return Opaque(f"attribute `{ast.unparse(node)}` is not analyzed")

    def _unary(self, node: ast.UnaryOp, v: Any) -> Any:
        v = _const_value(v)
        if isinstance(node.op, ast.Not):
            return (not v) if isinstance(v, (bool, int, float, str, type(None), tuple)) else Opaque("not")
        if isinstance(node.op, ast.USub):
            if isinstance(v, (int, float, AffineExpr)):
                return -v
            if isinstance(v, TileIndex):
                return -v
            if isinstance(v, Tensor):
                return v.with_shape(v.shape, "<tile>")
            return v if isinstance(v, Opaque) else Opaque(f"-{ast.unparse(node.operand)}")
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Invert):
            return ~v if isinstance(v, int) else Opaque("~")
        return Opaque(ast.unparse(node))

    def _binop(self, op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
        a, b = _const_value(a), _const_value(b)

        def text() -> str:  # only an error message needs the source text
            return ast.unparse(node) if isinstance(node, ast.BinOp) else type(op).__name__

        py = (int, float, bool)
        if isinstance(a, (str, tuple, list)) or isinstance(b, (str, tuple, list)):
            try:
                return _PYOPS[type(op)](a, b)
            except (TypeError, KeyError, ValueError):
                return Opaque(f"`{text()}` is not analyzed")
        if isinstance(a, py) and isinstance(b, py):
            try:
                return _PYOPS[type(op)](a, b)
            except (KeyError, ZeroDivisionError, TypeError, ValueError, OverflowError):
                return Opaque(f"`{text()}` cannot be evaluated")
        if isinstance(a, Tensor) or isinstance(b, Tensor):
            shapes = [x.shape for x in (a, b) if isinstance(x, Tensor)]
            t = a if isinstance(a, Tensor) else b
            return t.with_shape(_broadcast(shapes), "<tile>")
        if isinstance(a, TileMask) and isinstance(b, TileMask) and isinstance(op, ast.BitAnd):
            return a & b
        if isinstance(op, ast.BitAnd) and (isinstance(a, TileMask) or isinstance(b, TileMask)):
            m, other = (a, b) if isinstance(a, TileMask) else (b, a)
            if other is True or other is None:  # a condition already known to hold
                return m
            if other is False:
                from egraph_tiles.nki.masks import CmpTileMask

                return CmpTileMask(AffineExpr.const(1), "<", None)  # never runs
        if isinstance(a, TileMask) or isinstance(b, TileMask):
            raise ReaderError(f"masks combine with `&` only (expected comparisons of index "
                              f"expressions joined with &), not `{text()}`", node)
        if isinstance(a, Opaque) or isinstance(b, Opaque):
            o = a if isinstance(a, Opaque) else b
            return o
        if isinstance(a, float) or isinstance(b, float):
            return Opaque(f"`{text()}` mixes a float with an index", "nonaffine")
        idx = isinstance(a, TileIndex) or isinstance(b, TileIndex)
        sym = isinstance(a, AffineExpr) or isinstance(b, AffineExpr)
        if not (idx or sym):
            return Opaque(f"`{text()}` is not analyzed")
        if isinstance(op, (ast.Add, ast.Sub)):
            if idx:
                x, y = _as_index_operand(a), _as_index_operand(b)
                if isinstance(op, ast.Add):
                    return x + y if isinstance(x, TileIndex) else y + x
                return x - y if isinstance(x, TileIndex) else (-y) + x
            return a + b if isinstance(op, ast.Add) else a - b
        if isinstance(op, ast.Mult):
            if isinstance(a, Integral):
                a, b = b, a
            if isinstance(b, Integral):
                return a * int(b)
            return Opaque(f"`{text()}` multiplies two index values: the index is not affine",
                          "nonaffine")
        if isinstance(op, (ast.FloorDiv, ast.Mod)):
            if isinstance(b, Integral) and int(b) > 0 and not isinstance(a, Integral):
                return a // int(b) if isinstance(op, ast.FloorDiv) else a % int(b)
            return Opaque(f"`{text()}`: `//` and `%` of an index need a positive integer divisor; "
                          "the index is not affine", "nonaffine")
        if isinstance(op, ast.Div):
            return Opaque(f"`{text()}`: true division of an index is not affine", "nonaffine")
        return Opaque(f"`{text()}` is not affine", "nonaffine")

    def _compare(self, node: ast.Compare, env: dict[str, Any]) -> Any:
        left = self._expr(node.left, env)
        result: Any = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self._expr(right_node, env)
            r = self._compare1(op, left, right, node)
            result = r if result is None else self._binop(ast.BitAnd(), result, r, node) \
                if isinstance(r, TileMask) else (result and r)
            left = right
        return result

    def _compare1(self, op: ast.cmpop, a: Any, b: Any, node: ast.AST) -> Any:
        a, b = _const_value(a), _const_value(b)
        sym = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
               ast.NotEq: "!="}
        if isinstance(a, TileIndex) or isinstance(b, TileIndex):
            if type(op) not in sym:
                raise ReaderError(f"unsupported mask comparison `{ast.unparse(node)}`", node)
            s = sym[type(op)]
            if not isinstance(a, TileIndex):
                a, b = b, a
                s = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[s]
            if isinstance(b, Opaque):
                raise ReaderError(f"mask `{ast.unparse(node)}`: {b.why}", node)
            if isinstance(b, Tensor):
                raise ReaderError(f"mask `{ast.unparse(node)}` compares an index with a data tile "
                                  "(expected an index expression or an integer)", node)
            b = _as_index_operand(b)
            return {"<": a.__lt__, "<=": a.__le__, ">": a.__gt__, ">=": a.__ge__,
                    "==": a.__eq__, "!=": a.__ne__}[s](b)
        if isinstance(a, Tensor) or isinstance(b, Tensor):
            t = a if isinstance(a, Tensor) else b
            return t.with_shape(_broadcast([x.shape for x in (a, b) if isinstance(x, Tensor)]),
                                "<tile>")
        if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) or not (
                isinstance(a, AffineExpr) or isinstance(b, AffineExpr)):
            try:
                return _CMPOPS[type(op)](a, b)
            except (TypeError, KeyError):
                return Opaque(f"`{ast.unparse(node)}` is not analyzed")
        if type(op) in sym and isinstance(a, (int, AffineExpr)) and isinstance(b, (int, AffineExpr)):
            # a predicate on loop variables / program ids only: usable as (part of) a mask
            from egraph_tiles.nki.masks import CmpTileMask, EQTileMask

            diff = (a - b) if isinstance(a, AffineExpr) else (-b + a)
            s_op = sym[type(op)]
            return EQTileMask(diff, None) if s_op == "==" else CmpTileMask(diff, s_op, None)
        return Opaque(f"`{ast.unparse(node)}` depends on a loop variable or program id")

    # ----- subscripts: the accesses ---------------------------------------------------------
    def _subscript(self, node: ast.Subscript, env: dict[str, Any], role: str) -> Any:
        base = self._expr(node.value, env)
        if isinstance(base, Module) and base.qual.endswith("language.mgrid"):
            return self._mgrid(node, env)
        if isinstance(base, arange):
            item = self._index_items(node.slice, env)
            try:
                return base[item if len(item) != 1 else item[0]]
            except (IndexError, ValueError, TypeError) as e:
                raise ReaderError(f"`{ast.unparse(node)}`: {e}", node) from None
        if isinstance(base, Tensor):
            return self._access(node, base, env, role)
        if isinstance(base, (tuple, list, str, dict)):
            key = self._expr(node.slice, env)
            key = _const_value(key)
            try:
                return base[key]
            except (TypeError, IndexError, KeyError):
                if isinstance(key, AffineExpr):
                    return Opaque(f"`{ast.unparse(node)}` indexes a Python sequence with a "
                                  "loop variable")
                raise ReaderError(f"cannot evaluate `{ast.unparse(node)}`", node) from None
        if isinstance(base, Opaque):
            if base.kind == "unknown" and "has no value" in base.why:
                raise ReaderError(base.why, node)
            self._index_items(node.slice, env)
            return base
        if isinstance(base, TileIndex):
            raise ReaderError(f"`{ast.unparse(node)}` subscripts an index (expected "
                              "nl.arange(n)[:, None] on the arange itself)", node)
        return Opaque(f"`{ast.unparse(node)}` is not analyzed")

    def _index_items(self, sl: ast.expr, env: dict[str, Any]) -> tuple[Any, ...]:
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        return tuple(_const_value(self._expr(e, env)) for e in elts)

    def _mgrid(self, node: ast.Subscript, env: dict[str, Any]) -> MGrid:
        items = self._index_items(node.slice, env)
        ranges = []
        for it in items:
            if not isinstance(it, slice):
                raise ReaderError(f"nl.mgrid takes slices `start:stop[:step]`, got "
                                  f"`{ast.unparse(node.slice)}`", node)
            start, stop, step = (0 if it.start is None else it.start, it.stop,
                                 1 if it.step is None else it.step)
            if isinstance(start, AffineExpr) and step == 1 and isinstance(stop, (int, AffineExpr)):
                n = _slice_count(slice(start, stop), 0)
                if n is not None and n > 0:  # a moving window of constant length
                    ranges.append((start, n))
                    continue
            if not all(_is_int(v) for v in (start, stop, step)):
                raise ReaderError(f"nl.mgrid bounds must be integers known before the kernel "
                                  f"runs: `{ast.unparse(node.slice)}`", node)
            r = range(int(start), int(stop), int(step))
            if int(step) <= 0 or len(r) == 0:
                raise ReaderError(f"nl.mgrid axis `{start}:{stop}:{step}` is empty", node)
            ranges.append(r)
        axes = partial_tile_index(tuple(len(r) if isinstance(r, range) else r[1] for r in ranges))
        out = []
        for ax, r in zip(axes, ranges):
            if isinstance(r, range):
                idx = ax * r.step if r.step != 1 else ax
                out.append(idx + r.start if r.start else idx)
            else:
                out.append(ax + DynamicScalar(r[0]))
        return MGrid(tuple(out))

    def _access(self, node: ast.Subscript, base: Tensor, env: dict[str, Any], role: str) -> Any:
        items = self._index_items(node.slice, env)
        text = node.value.id if isinstance(node.value, ast.Name) else ast.unparse(node.value)
        legacy = False
        subs: list[Any] = []
        for it in items:
            if isinstance(it, MGrid):
                raise ReaderError(f"`{ast.unparse(node)}`: index with the grid's axes "
                                  "(grid.p, grid.x) or unpack it", node)
            if isinstance(it, Opaque):
                if it.kind == "nonaffine":
                    raise ReaderError(f"non-affine index in `{ast.unparse(node)}`: {it.why}",
                                  node, "non-affine")
                raise ReaderError(f"index of `{ast.unparse(node)}` cannot be analyzed: "
                                  f"{it.why}", node)
            if isinstance(it, Tensor):
                self._finding(node.lineno, f"indirect access `{ast.unparse(node)}`: the index "
                              f"is the data tile {it.name!r} (read at run time), not inferred",
                              "indirect")
                return base.with_shape(None, "<tile>")
            if isinstance(it, TileIndex):
                legacy = True
            elif isinstance(it, float):
                raise ReaderError(f"`{ast.unparse(node)}`: a float index", node)
            elif it is None:
                raise ReaderError(f"`{ast.unparse(node)}`: `None` (new axis) in a tensor "
                                  "index is not supported", node)
            elif isinstance(it, (TileMask, arange)):
                raise ReaderError(f"`{ast.unparse(node)}`: expected an index, got "
                                  f"{type(it).__name__} (subscript the arange: "
                                  "nl.arange(n)[:, None])", node)
            elif not isinstance(it, (int, AffineExpr, slice, DynSlice, type(Ellipsis))):
                raise ReaderError(f"index of `{ast.unparse(node)}` cannot be analyzed "
                                  f"({type(it).__name__})", node)
            subs.append(it)
        if base.shape is None:
            raise ReaderError(f"the shape of {text!r} is not known (pass --shape "
                              f"{text}=D0xD1... for a parameter)", node)
        subs = _expand_ellipsis(subs, len(base.shape), node)
        for s in subs:
            if isinstance(s, slice) and any(isinstance(p, (Opaque, Tensor, TileIndex))
                                            for p in (s.start, s.stop, s.step)):
                raise ReaderError(f"slice bounds of `{ast.unparse(node)}` must be integers or "
                                  "affine loop expressions", node)
        acc = RawAccess(node.lineno, node.col_offset, node, text, base, role, tuple(subs),
                        legacy, tuple(self.scope), instruction=self.instruction,
                        stmt_line=self.stmt_line, in_helper=self.depth > 0,
                        operand=self._nki_args > 0 or role == "dst")
        self.out.accesses.append(acc)
        for c in self._collect:
            c.append(acc)
        shape = view_shape(acc.subs, base.shape)
        if shape is not None and base.buffer != "hbm" and not legacy:
            # an on-chip tile keeps a size-1 free axis where an integer indexes it
            keep = [k for k, sub in enumerate(acc.subs) if k > 0 and isinstance(sub, (int, AffineExpr))]
            if keep and len(shape) + len(keep) == len(base.shape):
                full = list(shape)
                for k in keep:
                    full.insert(k, 1)
                shape = tuple(full)
        return Tensor("<tile>", shape, base.dtype, base.buffer, id(acc))

    # ----- calls ----------------------------------------------------------------------------
    def _call(self, node: ast.Call, env: dict[str, Any]) -> Any:
        fn = self._expr(node.func, env)
        if isinstance(fn, ast.FunctionDef):
            return self._helper(fn, node, env)
        if isinstance(fn, _Method):
            return self._method(fn, node, env)
        if isinstance(fn, Module):
            return self._module_call(fn.qual, node, env)
        if fn in (min, max, abs, int, len, float, round, bool, sum, divmod):
            args = [_const_value(self._expr(a, env)) for a in node.args]
            try:
                return fn(*args)
            except TypeError:
                return Opaque(f"`{ast.unparse(node)}` is not known before the kernel runs")
        if fn in (getattr, hasattr):
            args = [self._expr(a, env) for a in node.args]
            if len(args) >= 2 and isinstance(args[0], _Object) and isinstance(args[1], str):
                return args[0].attrs.get(args[1], args[2] if len(args) > 2 else Opaque(
                    f"no attribute {args[1]!r}")) if fn is getattr else args[1] in args[0].attrs
            return Opaque(f"`{ast.unparse(node)}` is not analyzed")
        if isinstance(fn, ast.ClassDef):
            return self._instance(fn, node, env)
        if fn in (range, tuple, list, enumerate, zip, map, reversed, sorted, any, all):
            args = [self._expr(a, env) for a in node.args]
            try:
                if fn in (tuple, list):
                    return fn(args[0]) if args else fn()
                return tuple(fn(*args))
            except TypeError:
                return Opaque(f"`{ast.unparse(node)}` is not analyzed")
        for a in node.args:
            self._expr(a, env)
        return Opaque(f"`{ast.unparse(node.func)}(...)` is not analyzed")

    def _args(self, node: ast.Call, env: dict[str, Any], collect: list[RawAccess],
              dst_first: bool = False) -> tuple[list[Any], dict[str, Any]]:
        self._collect.append(collect)
        try:
            args, kwargs = [], {}
            for k, a in enumerate(node.args):
                if k == 0 and dst_first and isinstance(a, ast.Subscript):
                    args.append(self._subscript(a, env, role="dst"))
                elif isinstance(a, ast.Starred):
                    v = self._expr(a.value, env)
                    args.extend(v if isinstance(v, (tuple, list)) else [v])
                else:
                    args.append(self._expr(a, env))
            for kw in node.keywords:
                if kw.arg is None:
                    continue
                if kw.arg == "dst" and isinstance(kw.value, ast.Subscript):
                    kwargs[kw.arg] = self._subscript(kw.value, env, role="dst")
                elif kw.arg == "mask":
                    kwargs[kw.arg] = self._expr(kw.value, env)
                else:
                    kwargs[kw.arg] = self._expr(kw.value, env)
            return args, kwargs
        finally:
            self._collect.pop()

    def _module_call(self, qual: str, node: ast.Call, env: dict[str, Any]) -> Any:
        short = qual.rsplit(".", 1)[-1]
        if qual.startswith("math."):
            args = [_const_value(self._expr(a, env)) for a in node.args]
            f = getattr(math, short, None)
            if f is not None and all(isinstance(a, (int, float)) for a in args):
                try:
                    return f(*args)
                except (TypeError, ValueError):
                    pass
            return Opaque(f"`{ast.unparse(node)}` is not known before the kernel runs")
        if qual in ("numpy.prod", "np.prod") or qual.endswith(".prod") and qual.startswith("num"):
            arg = _const_value(self._expr(node.args[0], env)) if node.args else None
            if isinstance(arg, (tuple, list)) and all(_is_int(d) for d in arg):
                return math.prod(arg)
        if not qual.startswith("nki."):
            for a in node.args:
                self._expr(a, env)
            return Opaque(f"`{ast.unparse(node.func)}(...)` (another library) is not analyzed")
        lang = _lang(qual.rsplit(".", 1)[0])
        if lang and short == "arange":
            args = [_const_value(self._expr(a, env)) for a in node.args]
            if not 1 <= len(args) <= 2 or not all(_is_int(a) for a in args):
                raise ReaderError(f"`{ast.unparse(node)}`: nl.arange takes integers known "
                                  "before the kernel runs (stop, or start and stop)", node)
            try:
                return arange(*[int(a) for a in args])
            except (ValueError, TypeError) as e:
                raise ReaderError(f"`{ast.unparse(node)}`: {e}", node) from None
        if lang and short == "ds":
            args = [_const_value(self._expr(a, env)) for a in node.args]
            kw = {k.arg: _const_value(self._expr(k.value, env)) for k in node.keywords}
            args += [kw[k] for k in ("start", "size") if k in kw]
            if len(args) != 2 or not all(isinstance(a, (int, AffineExpr)) for a in args):
                raise ReaderError(f"`{ast.unparse(node)}`: nl.ds(start, size) takes an integer "
                                  "or affine loop expression start and an integer size", node)
            if not _is_int(args[1]):
                raise ReaderError(f"`{ast.unparse(node)}`: the size of nl.ds must be an integer "
                                  "known before the kernel runs", node)
            return DynSlice(args[0], int(args[1]))
        if lang and short == "program_id":
            return self._program_id(node, env)
        if lang and short == "num_programs":
            args = [_const_value(self._expr(a, env)) for a in node.args] or [0]
            k = args[0]
            if isinstance(k, int) and k < len(self.grid):
                return self.grid[k]
            return Opaque("nl.num_programs: pass the launch grid with --grid")
        if lang and short == "program_ndim":
            return len(self.grid) if self.grid else Opaque("pass the launch grid with --grid")
        if lang and short == "par_dim":
            return _const_value(self._expr(node.args[0], env))
        if lang and short in _LOOPS:
            return tuple(range(*[_const_value(self._expr(a, env)) for a in node.args])) \
                if all(_is_int(_const_value(self._expr(a, env))) for a in node.args) \
                else Opaque("a loop range outside a for statement")
        collect: list[RawAccess] = []
        self._nki_args += 1
        try:
            args, kwargs = self._args(node, env, collect, dst_first=lang and short == "store")
        finally:
            self._nki_args -= 1
        mask = kwargs.get("mask")
        if mask is not None:
            self._apply_mask(node, mask, collect, args, kwargs)
        if lang and short in _ALLOC:
            return self._alloc(node, args, kwargs)
        if lang and short in _ALLOC_LIKE:
            src = args[0] if args else kwargs.get("x")
            if isinstance(src, Tensor):
                return Tensor("<tile>", src.shape, kwargs.get("dtype", src.dtype),
                              _buffer(kwargs.get("buffer"), "sbuf"))
            return Tensor("<tile>", None)
        if lang and short == "load":
            src = args[0] if args else kwargs.get("src")
            shape = self._shape_of(src, collect)
            return Tensor("<tile>", shape, getattr(src, "dtype", None), "sbuf")
        if lang and short == "store":
            return None
        shapes = [self._shape_of(a, collect) for a in [*args, *kwargs.values()]
                  if isinstance(a, Tensor)]
        if short in ("matmul",) and len(args) >= 2:
            x, y = (self._shape_of(args[0], collect), self._shape_of(args[1], collect))
            if x and y and len(x) == 2 and len(y) == 2:
                if kwargs.get("transpose_x"):
                    x = (x[1], x[0])
                return Tensor("<tile>", (x[0], y[1]), None, "psum")
        if short == "nc_matmul" and len(args) >= 2:
            x, y = (self._shape_of(args[0], collect), self._shape_of(args[1], collect))
            if x and y and len(x) == 2 and len(y) == 2:
                return Tensor("<tile>", (x[1], y[1]), None, "psum")
        if short in ("transpose", "nc_transpose") and args:
            x = self._shape_of(args[0], collect)
            return Tensor("<tile>", tuple(reversed(x)) if x else None)
        if short in ("sum", "max", "min", "mean", "prod", "all", "any", "var",
                     "tensor_reduce") and args:
            x = self._shape_of(args[0], collect)
            return Tensor("<tile>", _reduce_shape(x, kwargs.get("axis"),
                                                  kwargs.get("keepdims", False)))
        if not shapes and not args:
            return Opaque(f"`{ast.unparse(node.func)}(...)` returns no tile")
        return Tensor("<tile>", _broadcast(shapes) if shapes else None,
                      kwargs.get("dtype"), "sbuf")

    @staticmethod
    def _shape_of(v: Any, collect: list[RawAccess]) -> tuple[int, ...] | None:
        """Shape of an operand (an access's value has its index's broadcast shape)."""
        return v.shape if isinstance(v, Tensor) else None

    def _apply_mask(self, node: ast.Call, mask: Any, collect: list[RawAccess],
                    args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None) -> None:
        kw = next(k for k in node.keywords if k.arg == "mask")
        if isinstance(mask, Opaque):
            raise ReaderError(f"mask= of `{ast.unparse(node.func)}`: {mask.why}", node)
        if not isinstance(mask, TileMask):
            if mask is None:
                return
            raise ReaderError(f"mask= of `{ast.unparse(node.func)}` must compare index "
                              "expressions (joined with &), got "
                              f"`{ast.unparse(kw.value)}`", node)
        views = {id(a) for a in collect}
        operands = [(None, v) for v in args] + [(k, v) for k, v in (kwargs or {}).items()
                                                if k not in ("mask", "value")]
        whole = tuple(sorted({v.name for _, v in operands if isinstance(v, Tensor)
                              and v.from_access not in views and not v.name.startswith("<")}))
        self.out.masked_calls.append((node, kw, whole))
        for acc in collect:
            if acc.mask is None:
                acc.mask, acc.mask_node, acc.call_node = mask, kw, node
        self._call_masks[id(node)] = (mask, kw)

    def _alloc(self, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> Tensor:
        shape = args[0] if args else kwargs.get("shape")
        if isinstance(shape, int):
            shape = (shape,)
        if node.func.attr == "shared_constant" if isinstance(node.func, ast.Attribute) else False:
            return Tensor("<tile>", None, None, "hbm")
        if not isinstance(shape, (tuple, list)) or not all(_is_int(_const_value(d)) for d in shape):
            raise ReaderError(f"`{ast.unparse(node)}`: the shape must be integers known before "
                              "the kernel runs", node)
        dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
        buf = _buffer(kwargs.get("buffer"), "sbuf")
        return Tensor("<tile>", tuple(int(_const_value(d)) for d in shape),
                      dtype if isinstance(dtype, str) else None, buf)

    def _program_id(self, node: ast.Call, env: dict[str, Any]) -> Any:
        args = [_const_value(self._expr(a, env)) for a in node.args]
        kw = {k.arg: _const_value(self._expr(k.value, env)) for k in node.keywords}
        axis = args[0] if args else kw.get("axis", 0)
        if not _is_int(axis):
            raise ReaderError(f"`{ast.unparse(node)}`: the axis must be an integer", node)
        name = f"program_id_{int(axis)}"
        if name in self.binds:
            return int(self.binds[name])
        hi = self.grid[int(axis)] - 1 if int(axis) < len(self.grid) else None
        var = self.out.symbols.get(name) or scalar_var(name, 0, hi)
        self.out.symbols[name] = var
        self.out.source_names.setdefault(name, f"nl.program_id({int(axis)})")
        if var not in self.scope:
            self.scope.insert(0, var)
        return AffineExpr.var(var)

    def _method(self, m: _Method, node: ast.Call, env: dict[str, Any]) -> Any:
        collect: list[RawAccess] = []
        args, kwargs = self._args(node, env, collect)
        t = m.tensor
        if m.name == "reshape":
            shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
            shape = kwargs.get("shape", shape)
            shape = tuple(_const_value(d) for d in shape)
            if not all(_is_int(d) for d in shape) or t.shape is None:
                raise ReaderError(f"`{ast.unparse(node)}`: reshape needs integer dimensions and "
                                  "a tensor of known shape", node)
            if math.prod(shape) != math.prod(t.shape):
                raise ReaderError(f"`{ast.unparse(node)}`: cannot reshape {t.shape} into {shape}",
                                  node)
            return Tensor(ast.unparse(node), tuple(int(d) for d in shape), t.dtype, t.buffer)
        if m.name == "broadcast_to":
            shape = args[0] if args else kwargs.get("shape")
            if isinstance(shape, (tuple, list)) and all(_is_int(_const_value(d)) for d in shape):
                return Tensor("<tile>", tuple(int(_const_value(d)) for d in shape), t.dtype, t.buffer)
        if m.name in ("view", "astype", "bitcast"):
            return t.with_shape(t.shape, "<tile>")
        if m.name == "ap":
            return t.with_shape(None, "<tile>")
        return Tensor("<tile>", None, t.dtype, t.buffer)

    def _instance(self, cls: ast.ClassDef, node: ast.Call, env: dict[str, Any]) -> _Object:
        """``Config(...)``: class-level defaults, overridden by the call's arguments."""
        attrs: dict[str, Any] = {}
        fields = []
        for st in cls.body:
            target = st.target if isinstance(st, ast.AnnAssign) else (
                st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else None)
            if isinstance(target, ast.Name):
                fields.append(target.id)
                if st.value is not None:
                    try:
                        attrs[target.id] = self._expr(st.value, self.globals)
                    except ReaderError:
                        attrs[target.id] = Opaque(f"field {target.id!r} is not analyzed")
        for name, a in zip(fields, node.args):
            attrs[name] = self._expr(a, env)
        for kw in node.keywords:
            if kw.arg is not None:
                attrs[kw.arg] = self._expr(kw.value, env)
        return _Object(cls.name, attrs)

    def _helper(self, fn: ast.FunctionDef, node: ast.Call, env: dict[str, Any]) -> Any:
        if self.depth >= _MAX_CALL_DEPTH:
            raise ReaderError(f"helper {fn.name!r} calls itself too deeply (recursion is not "
                              "analyzed)", node)
        collect: list[RawAccess] = []
        outer, self._nki_args = self._nki_args, 0
        try:
            args, kwargs = self._args(node, env, collect)
        finally:
            self._nki_args = outer
        local = dict(self.globals)
        a = fn.args
        positional = [p.arg for p in a.posonlyargs + a.args]
        defaults = dict(zip(positional[::-1], list(a.defaults)[::-1]))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d})
        for name, v in zip(positional, args):
            local[name] = v
        if a.vararg is not None:
            local[a.vararg.arg] = tuple(args[len(positional):])
        for name, v in kwargs.items():
            local[name] = v
        for p in positional + [p.arg for p in a.kwonlyargs]:
            if p not in local:
                if p in defaults:
                    local[p] = self._expr(defaults[p], self.globals)
                else:
                    raise ReaderError(f"call of helper {fn.name!r} gives no value for "
                                      f"parameter {p!r}", node)
        self.depth += 1
        outer, self._nki_args = self._nki_args, 0
        try:
            self._block(fn.body, local)
        except _Return as r:
            return r.value
        finally:
            self.depth -= 1
            self._nki_args = outer
        return None


@dataclass(eq=False)
class _Object:
    """An instance of a class of the kernel's file (a configuration object): its fields."""

    cls: str
    attrs: dict[str, Any]


@dataclass(frozen=True, eq=False)
class _Method:
    tensor: Tensor
    name: str


def view_shape(subs: Sequence[Any], tensor_shape: Sequence[int]) -> tuple[int, ...] | None:
    """Broadcast shape of an index (as ``access_exprs`` builds it), without solving anything;
    ``None`` when a slice's length depends on a loop variable."""
    from egraph_tiles.nki.combine import combine_tiles
    from egraph_tiles.nki.tile import NDTile

    owners = [k for k, s in enumerate(subs) if isinstance(s, (slice, DynSlice, TileIndex))]
    owners += list(range(len(subs), len(tensor_shape)))
    r = len(owners)
    tiles = []
    for j, k in enumerate(owners):
        s = subs[k] if k < len(subs) else slice(None)
        if isinstance(s, TileIndex):
            if s.tile is not None:
                tiles.append(s.tile)
            continue
        n = _slice_count(s, tensor_shape[k])
        if n is None or n < 1:
            return None
        shape = (1,) * j + (n,) + (1,) * (r - j - 1)
        tiles.append(NDTile(shape[:1], shape[1:]))
    return combine_tiles(*tiles).shape if tiles else ()


def _slice_count(s: Any, dim: int) -> int | None:
    if isinstance(s, DynSlice):
        return int(s.size)
    start = 0 if s.start is None else s.start
    stop = dim if s.stop is None else s.stop
    step = 1 if s.step is None else s.step
    diff = stop - start
    if isinstance(diff, AffineExpr):
        probes = [{v.name: (v.lo if v.lo is not None else 0) + k for v in diff.free_vars}
                  for k in range(3)]
        vals = {int(diff.evaluate(p)) for p in probes}
        if len(vals) != 1:
            return None
        diff = vals.pop()
    if not isinstance(step, int) or step <= 0:
        return None
    return len(range(0, int(diff), step))


def _lang(qual: str) -> bool:
    return qual in ("nki.language", "nki.isa", "nki") or qual.startswith("nki.language") \
        or qual.startswith("nki.isa")


def _buffer(v: Any, default: str) -> str:
    return v if isinstance(v, str) and v in ("sbuf", "psum", "hbm") else default


def _broadcast(shapes: Sequence[tuple[int, ...] | None]) -> tuple[int, ...] | None:
    """NKI's broadcast of tile shapes: the partition dimensions (first) and the free dimensions
    broadcast separately (a (128,) tile meets a (128, 512) one as 128 x 512)."""
    if not shapes or any(s is None for s in shapes):
        return None
    shapes = [tuple(s) for s in shapes if len(s)]  # type: ignore[arg-type]
    if not shapes:
        return ()
    out = []
    for group in ([s[:1] for s in shapes], [s[1:] for s in shapes]):
        rank = max(len(s) for s in group)
        padded = [(1,) * (rank - len(s)) + s for s in group]
        for dims in zip(*padded):
            big = {d for d in dims if d != 1}
            if len(big) > 1:
                return None
            out.append(big.pop() if big else 1)
    return tuple(out)


def _reduce_shape(shape: tuple[int, ...] | None, axis: Any, keepdims: Any
                  ) -> tuple[int, ...] | None:
    if shape is None:
        return None
    axes = axis if isinstance(axis, (tuple, list)) else (axis,) if isinstance(axis, int) else None
    if axes is None:
        return None
    axes = {a % len(shape) for a in axes if isinstance(a, int)}
    return tuple((1 if k in axes else d) for k, d in enumerate(shape)
                 if keepdims is True or k not in axes)


def _expand_ellipsis(subs: list[Any], rank: int, node: ast.AST) -> list[Any]:
    n = sum(1 for s in subs if s is Ellipsis)
    if n > 1:
        raise ReaderError(f"`{ast.unparse(node)}`: at most one `...` in an index", node)
    if n == 1:
        k = subs.index(Ellipsis)
        fill = rank - (len(subs) - 1)
        subs = subs[:k] + [slice(None)] * max(fill, 0) + subs[k + 1:]
    if len(subs) > rank:
        raise ReaderError(f"`{ast.unparse(node)}`: {len(subs)} indices for a tensor of rank "
                          f"{rank}", node)
    return subs


def _assigned_names(st: ast.stmt) -> list[str]:
    """Every name a statement (or a block nested in it) assigns."""
    out = []
    for node in ast.walk(st):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For)):
            targets = [node.target]
        for t in targets:
            out += [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]
    return out


_PYOPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a ** b, ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
}
_CMPOPS = {
    ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
    ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
