"""Read a legacy NKI kernel with ``ast`` (never executing it) into its indexed accesses.

The reader is a small abstract interpreter over the kernel's syntax tree; the values it tracks
are in :mod:`~egraph_tiles.nki.kernels.values`, the ``nl.*`` / ``nisa.*`` calls it knows in the
table of :mod:`~egraph_tiles.nki.kernels.calls`, and how parameter values and the kernel's own
modules are read in :mod:`~egraph_tiles.nki.kernels.modules`.  What is known before the kernel
runs is evaluated (constants, shapes, parameters, ``isinstance`` / ``type(x) is`` / ``is None``
tests, ``len``, unpacking, ``assert``); an ``if`` on such a value takes its branch.

Every ``tensor[index]`` evaluated on a :class:`Tensor` is recorded as a :class:`RawAccess` (line,
tensor text, role, the evaluated subscripts, the call's ``mask=``).  A statement the reader
cannot analyze records a :class:`Finding` naming its line and what was expected; the statement's
targets become opaque and the rest of the kernel is still read.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from egraph_tiles.nki.index.expr import AffineExpr, Var, scalar_var
from egraph_tiles.nki.index.masks import TileMask
from egraph_tiles.nki.kernels.calls import method_result
from egraph_tiles.nki.kernels.modules import (
    ModuleFinder,
    ParameterError,
)
from egraph_tiles.nki.kernels.instructions import Instructions
from egraph_tiles.nki.kernels.scope import ParameterScope
from egraph_tiles.nki.kernels.subscripts import Subscripts
from egraph_tiles.nki.kernels.values import (
    ARRAY_ATTRS,
    ARRAY_METHODS,
    BUFFERS,
    DTYPES,
    KERNEL_DECORATORS,
    KNOWN,
    LOOPS,
    MAX_CALL_DEPTH,
    MAX_UNROLL,
    TILE_SIZE,
    Class,
    Finding,
    Func,
    CallRecord,
    KernelRead,
    Method,
    MGrid,
    Module,
    Object,
    Opaque,
    PyModule,
    RawAccess,
    ReaderError,
    Return,
    Tensor,
    assigned_names,
    binop,
    compare1,
    const_value,
    is_int,
    is_lang,
    known_array,
    unary,
)

__all__ = ["Finding", "KernelRead", "Opaque", "ParameterError", "RawAccess", "Reader",
           "ReaderError", "Tensor", "kernel_names", "read_kernel"]


def is_kernel_decorator(dec: ast.expr) -> bool:
    d = dec.func if isinstance(dec, ast.Call) else dec
    name = d.attr if isinstance(d, ast.Attribute) else d.id if isinstance(d, ast.Name) else ""
    return name in KERNEL_DECORATORS


def kernel_names(tree: ast.Module) -> list[str]:
    """Names of the module's decorated kernels (``@nki.jit``, ``@nki.trace``, ...)."""
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef)
            and any(is_kernel_decorator(d) for d in n.decorator_list)]


def read_kernel(source: str, kernel: str | None = None, *, filename: str = "<kernel>",
                shapes: Mapping[str, Sequence[int]] | None = None,
                dtypes: Mapping[str, str] | None = None,
                scalars: Mapping[str, Any] | None = None,
                binds: Mapping[str, int] | None = None,
                grid: Sequence[int] | None = None,
                paths: Sequence[str | Path] = ()) -> KernelRead:
    """Read kernel ``kernel`` (default: the only decorated one) of ``source``.

    ``shapes`` / ``dtypes`` describe tensor parameters, ``scalars`` gives Python parameters
    (values, or :class:`~egraph_tiles.nki.kernels.values.ParamText` / ``ConfigCall`` as a user
    types them), ``binds`` fixes symbols (a loop variable or ``program_id_k``) to one value,
    ``grid`` is the launch grid (program ids range over it), ``paths`` are package roots for
    the kernel's imports (besides the kernel file's folder).  Raises ``SyntaxError`` for a file
    that is not Python and ``LookupError`` when the kernel cannot be chosen or a parameter value
    does not fit (:class:`ParameterError`).
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
    reader = Reader(tree, fns, kernel, dict(shapes or {}), dict(dtypes or {}),
                    dict(scalars or {}), dict(binds or {}), tuple(grid or ()),
                    ModuleFinder(filename, paths))
    reader.out.source = source
    reader.out.tree = tree
    return reader.run()


# ----- the abstract interpreter ------------------------------------------------------------------

def _literal(v: Any) -> bool:
    """Whether ``v`` is a plain Python literal that may shape the kernel's control flow or
    indices (integers, text, booleans, None, tuples and lists of them; not a float, which
    scales values): a value a migrated kernel can assert it was specialised to."""
    if v is None or isinstance(v, (bool, int, str)):
        return True
    return isinstance(v, (tuple, list)) and all(_literal(x) for x in v)


class Reader(ParameterScope, Subscripts, Instructions):
    """The abstract interpreter of one kernel (statements, expressions, calls)."""

    def __init__(self, tree: ast.Module, fns: dict[str, ast.FunctionDef], kernel: str,
                 shapes: dict[str, Sequence[int]], dtypes: dict[str, str],
                 scalars: dict[str, Any], binds: dict[str, int], grid: tuple[int, ...],
                 finder: ModuleFinder | None = None) -> None:
        self.tree = tree
        self.fns = fns
        self.kernel = kernel
        self.shapes = shapes
        self.dtypes = dtypes
        self.scalars = scalars
        self.binds = binds
        self.grid = grid
        self.finder = finder or ModuleFinder("<kernel>")
        self.modules: dict[Path, PyModule] = {}
        self.out = KernelRead(kernel)
        self.globals: dict[str, Any] = {}
        self.scope: list[Var] = []
        self.depth = 0
        self.instruction = 0
        self.stmt_line = 0
        self.unroll_budget = 16 * MAX_UNROLL
        self._nki_args = 0  # > 0 while evaluating the arguments of an nl / nisa call
        self._collect: list[list[RawAccess]] = []
        self._call_masks: dict[int, tuple[TileMask, ast.keyword]] = {}
        self._records: dict[int, CallRecord] = {}
        self.unrolled: list[tuple[str, int]] = []  # (loop variable, value) of unrolled loops
        self.local_names: list[dict[str, str] | None] = []  # per helper call: symbol -> param  # id(call node) -> its latest evaluation

    # ----- driver ---------------------------------------------------------------------------
    def run(self) -> KernelRead:
        self._read_module(self.tree, self.globals, self.finder.home)
        fn = self.fns[self.kernel]
        env = dict(self.globals)
        args = fn.args
        params = args.posonlyargs + args.args + args.kwonlyargs
        defaults = dict(zip([a.arg for a in (args.posonlyargs + args.args)][::-1],
                            list(args.defaults)[::-1]))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d})
        names = {p.arg for p in params}
        for name in [*self.shapes, *self.scalars]:
            if name not in names:
                flag = "--shape" if name in self.shapes else "--scalar"
                self._finding(fn.lineno, f"{flag} {name}: the kernel has no parameter {name!r}")
        for p in params:
            env[p.arg] = self._param_value(p, defaults.get(p.arg))
            v = env[p.arg]
            if isinstance(v, Tensor) and p.arg in self.shapes:
                self.out.given[p.arg] = ("shape", v.shape)
            elif p.arg in self.scalars and _literal(v):
                self.out.given[p.arg] = ("value", v)
        try:
            self._block(fn.body, env)
        except Return:
            pass
        return self.out

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
                for name in assigned_names(st):
                    env[name] = Opaque(f"{name!r} could not be analyzed (line {st.lineno})")

    def _stmt(self, st: ast.stmt, env: dict[str, Any]) -> None:
        if isinstance(st, ast.Expr):
            if isinstance(st.value, ast.Constant):
                return  # docstring
            self.expr(st.value, env)
        elif isinstance(st, ast.Assign):
            value = self.expr(st.value, env)
            n0 = len(self.out.accesses)
            for t in st.targets:
                self._bind(t, value, env, st)
            masked = self._call_masks.get(id(st.value))
            if masked is not None:  # the instruction's mask also bounds its destination
                for acc in self.out.accesses[n0:]:
                    if acc.mask is None:
                        acc.mask, acc.mask_node, acc.call_node = masked[0], masked[1], st.value
                        acc.record = self._records.get(id(st.value))
            self._written(st.value, value, n0)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self._bind(st.target, self.expr(st.value, env), env, st)
        elif isinstance(st, ast.AugAssign):
            self._augassign(st, env)
        elif isinstance(st, ast.For):
            self._for(st, env)
        elif isinstance(st, ast.If):
            self._if(st, env)
        elif isinstance(st, ast.With):
            for item in st.items:
                self.expr(item.context_expr, env)
            self._block(st.body, env)
        elif isinstance(st, ast.Try):
            self._block(st.body, env)
            self._block(st.orelse, env)
            self._block(st.finalbody, env)
        elif isinstance(st, ast.Return):
            raise Return(self.expr(st.value, env) if st.value is not None else None)
        elif isinstance(st, (ast.Import, ast.ImportFrom)):
            self._import(st, env, self.finder.home)
        elif isinstance(st, ast.FunctionDef):
            env[st.name] = Func(st, env)  # reads the kernel's names when called (a closure)
        elif isinstance(st, ast.ClassDef):
            env[st.name] = Class(st, env)
        elif isinstance(st, ast.Assert):
            self._assert(st, env)
        elif isinstance(st, (ast.Pass, ast.Break, ast.Continue, ast.Delete,
                             ast.Global, ast.Nonlocal, ast.Raise)):
            return
        elif isinstance(st, ast.While):
            raise ReaderError("a `while` loop cannot be analyzed (expected a `for` loop over "
                              "nl.affine_range / nl.sequential_range / nl.static_range / range)", st)
        else:
            raise ReaderError(f"unsupported statement `{type(st).__name__}` (expected an "
                              "assignment, a call, a for loop, an if or a with block)", st)

    def _assert(self, st: ast.Assert, env: dict[str, Any]) -> None:
        """An ``assert`` on values known before the kernel runs must hold: a failing one is a
        finding naming the parameters it reads."""
        cond = const_value(self.expr(st.test, env))
        if not isinstance(cond, KNOWN) or cond:
            return
        fn = self.fns[self.kernel]
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        read = sorted({n.id for n in ast.walk(st.test) if isinstance(n, ast.Name)} & params)
        msg = f" ({ast.unparse(st.msg)})" if st.msg is not None else ""
        about = f" with parameter(s) {', '.join(read)}" if read else ""
        self._finding(st.lineno, f"assertion `{ast.unparse(st.test)}` fails{about} as given"
                      f"{msg}", "assert")

    def _bind(self, target: ast.expr, value: Any, env: dict[str, Any], st: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, Tensor) and value.name.startswith("<"):
                value = value.renamed(target.id)
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
        value = self.expr(st.value, env)
        if isinstance(st.target, ast.Name):
            cur = self._name(st.target, env)
            env[st.target.id] = binop(st.op, cur, value, st)
        elif isinstance(st.target, ast.Subscript):
            n0 = len(self.out.accesses)
            self._subscript(st.target, env, role="src")
            self._subscript(st.target, env, role="dst")
            self._written(st.value, value, n0)
        # an attribute target (`obj.x += 1`) is not an access

    def _for(self, st: ast.For, env: dict[str, Any]) -> None:
        it = st.iter
        if isinstance(it, ast.Call):
            fn = self.expr(it.func, env)
            kind = fn.qual.rsplit(".", 1)[-1] if isinstance(fn, Module) else (
                "range" if fn is range else None)
            if kind in LOOPS and (isinstance(fn, Module) and (
                    fn.qual.startswith("nki.") or fn.qual == "range") or fn is range):
                self._symbolic_loop(st, it, env)
                return
        seq = self.expr(it, env)
        if isinstance(seq, MGrid):
            seq = seq.indices
        if isinstance(seq, (tuple, list)) and len(seq) <= MAX_UNROLL:
            for v in seq:
                self._bind(st.target, v, env, st)
                self._block(st.body, env)
            return
        raise ReaderError("a for loop must iterate over nl.affine_range / nl.sequential_range / "
                          f"nl.static_range / range or a short Python sequence, not "
                          f"`{ast.unparse(it)}`", st)

    def _symbolic_loop(self, st: ast.For, call: ast.Call, env: dict[str, Any]) -> None:
        args = [self.expr(a, env) for a in call.args]
        args = [const_value(a) for a in args]
        if not 1 <= len(args) <= 3 or not all(is_int(a) for a in args):
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
        mark = (len(self.out.accesses), len(self.out.findings), dict(self.out.symbols),
                len(self.out.calls), len(self.out.masked_calls))
        var = self._fresh_var(name, min(values), max(values))
        self.out.steps[var.name] = abs(int(step))
        self.out.source_names[var.name] = name
        if self.local_names and self.local_names[-1] is not None:
            self.local_names[-1][var.name] = name  # a loop of the helper: its own name
        env[name] = AffineExpr.var(var)
        self.scope.append(var)
        try:
            self._block(st.body, env)
        finally:
            self.scope.pop()
        failed = any(f.kind == "error" for f in self.out.findings[mark[1]:])
        if failed and len(values) <= MAX_UNROLL and self.unroll_budget >= len(values):
            # the body needs concrete values (min/max of the loop variable, ...): unroll it
            self.unroll_budget -= len(values)
            del self.out.accesses[mark[0]:]
            del self.out.findings[mark[1]:]
            self.out.symbols = mark[2]
            del self.out.calls[mark[3]:]
            del self.out.masked_calls[mark[4]:]
            for v in values:
                env[name] = v
                self.unrolled.append((name, v))
                try:
                    self._block(st.body, env)
                finally:
                    self.unrolled.pop()
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
        cond = const_value(self.expr(st.test, env))
        if isinstance(cond, (bool, int, float, str, tuple, type(None))):
            self._block(st.body if cond else st.orelse, env)
        else:  # undecidable before the kernel runs: both branches are analyzed
            self._block(st.body, env)
            self._block(st.orelse, env)

    # ----- expressions ----------------------------------------------------------------------
    def expr(self, node: ast.expr, env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node, env)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, env)
        if isinstance(node, ast.BinOp):
            a, b = self.expr(node.left, env), self.expr(node.right, env)
            value = binop(node.op, a, b, node)
            if isinstance(value, Tensor):  # tile arithmetic: an elementwise instruction
                whole = [(n, v) for n, v in ((node.left, a), (node.right, b))
                         if isinstance(v, Tensor)]
                rec = CallRecord(node, "", self.instruction, [a, b], {}, whole, value,
                                 local_names=self.local_names[-1] if self.local_names else None,
                                 in_helper=self.depth > 0)
                self.out.calls.append(rec)
                value.producer = rec
            return value
        if isinstance(node, ast.UnaryOp):
            v = self.expr(node.operand, env)
            self.escape(v)
            return unary(node, v)
        if isinstance(node, ast.Compare):
            return self._compare(node, env)
        if isinstance(node, ast.BoolOp):
            out = None
            for k, v in enumerate(node.values):
                out = const_value(self.expr(v, env))
                if not isinstance(out, KNOWN) or k == len(node.values) - 1:
                    if isinstance(out, TileMask):
                        return out
                    break
                if bool(out) != isinstance(node.op, ast.And):
                    return out  # short circuit: `x or default`, `flag and value`
            if isinstance(out, KNOWN) or len(node.values) == 1 or not isinstance(out, (
                    AffineExpr, Opaque, TileMask)):
                return out
            return Opaque(f"`{ast.unparse(node)}` is not known before the kernel runs")
        if isinstance(node, (ast.Tuple, ast.List)):
            vals = []
            for e in node.elts:
                if isinstance(e, ast.Starred):
                    inner = self.expr(e.value, env)
                    if not isinstance(inner, (tuple, list)):
                        raise ReaderError(f"cannot unpack `{ast.unparse(e)}`", node)
                    vals.extend(inner)
                else:
                    vals.append(self.expr(e, env))
            return tuple(vals) if isinstance(node, ast.Tuple) else list(vals)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, env, role="src")
        if isinstance(node, ast.Call):
            return self._call(node, env)
        if isinstance(node, ast.Slice):
            return slice(*(None if p is None else const_value(self.expr(p, env))
                           for p in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.IfExp):
            cond = const_value(self.expr(node.test, env))
            if isinstance(cond, (bool, int, float, str, type(None), tuple)):
                return self.expr(node.body if cond else node.orelse, env)
            self.expr(node.body, env)
            self.expr(node.orelse, env)
            return Opaque(f"`{ast.unparse(node)}` depends on a value known only at run time")
        if isinstance(node, ast.Dict):
            return {self.expr(k, env) if k is not None else None: self.expr(v, env)
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
                    "sorted": sorted, "any": any, "all": all, "type": type,
                    "dict": dict, "set": set}
        if node.id in builtins:
            return builtins[node.id]
        raise ReaderError(f"name {node.id!r} is not defined", node)

    def _attribute(self, node: ast.Attribute, env: dict[str, Any]) -> Any:
        base = self.expr(node.value, env)
        attr = node.attr
        if isinstance(base, Module):
            qual = f"{base.qual}.{attr}"
            if base.qual.endswith("language.tile_size") or base.qual == "tile_size":
                if attr in TILE_SIZE:
                    return TILE_SIZE[attr]
            if is_lang(base.qual):
                if attr in BUFFERS:
                    return BUFFERS[attr]
                if attr in DTYPES:
                    return attr
            return Module(qual)
        if isinstance(base, Tensor):
            if attr != "dtype":
                self.escape(base)
            if attr == "shape":
                if base.shape is None:
                    return Opaque(f"the shape of {base.name!r} is not known")
                return base.shape
            if attr == "dtype":
                return base.dtype
            if attr in ("ndim",):
                return len(base.shape) if base.shape is not None else Opaque("unknown rank")
            return Method(base, attr)
        if isinstance(base, PyModule):
            if attr in base.env:
                return base.env[attr]
            raise ReaderError(f"module {base.name!r} has no name {attr!r}", node)
        if isinstance(base, Object):
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
        if known_array(base) and attr in ARRAY_ATTRS:
            v = getattr(base, attr)
            return tuple(int(d) for d in v) if isinstance(v, tuple) else int(v)
        if known_array(base) and attr in ARRAY_METHODS:
            return getattr(base, attr)  # called in _call on known arguments
        return Opaque(f"attribute `{ast.unparse(node)}` is not analyzed")

    def _compare(self, node: ast.Compare, env: dict[str, Any]) -> Any:
        left = self.expr(node.left, env)
        result: Any = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node, env)
            if not isinstance(op, (ast.Is, ast.IsNot)):
                self.escape(left, right)
            r = compare1(op, left, right, node)
            result = r if result is None else binop(ast.BitAnd(), result, r, node) \
                if isinstance(r, TileMask) else (result and r)
            left = right
        return result

    # ----- calls ----------------------------------------------------------------------------
    def _call(self, node: ast.Call, env: dict[str, Any]) -> Any:
        fn = self.expr(node.func, env)
        if isinstance(fn, Func):
            return self._helper(fn, node, env)
        if isinstance(fn, Method):
            self.escape(fn.tensor)
            collect: list[RawAccess] = []
            args, kwargs = self._args(node, env, collect)
            return method_result(fn.tensor, fn.name, node, args, kwargs)
        if isinstance(fn, Module):
            return self._module_call(fn.qual, node, env)
        if isinstance(fn, Class):
            args = [self.expr(a, env) for a in node.args]
            kwargs = {k.arg: self.expr(k.value, env) for k in node.keywords if k.arg}
            return self._build(fn, args, kwargs, node)
        if fn in (isinstance, type):
            return self._type_test(fn, node, env)
        if known_array(getattr(fn, "__self__", None)):  # `spans.max()` of a known array
            args = [const_value(self.expr(a, env)) for a in node.args]
            kwargs = {k.arg: const_value(self.expr(k.value, env)) for k in node.keywords
                      if k.arg and k.arg != "dtype"}
            try:
                out = fn(*args, **kwargs) if fn.__name__ != "astype" else fn.__self__
            except (TypeError, ValueError):
                return Opaque(f"`{ast.unparse(node)}` is not known before the kernel runs")
            return const_value(out)
        if fn in (min, max, abs, int, len, float, round, bool, sum, divmod):
            args = [const_value(self.expr(a, env)) for a in node.args]
            if fn is len and len(args) == 1 and isinstance(args[0], Tensor) \
                    and args[0].shape is not None:
                return args[0].shape[0]
            try:
                return fn(*args)
            except TypeError:
                return Opaque(f"`{ast.unparse(node)}` is not known before the kernel runs")
        if fn in (getattr, hasattr):
            args = [self.expr(a, env) for a in node.args]
            if len(args) >= 2 and isinstance(args[0], Object) and isinstance(args[1], str):
                return args[0].attrs.get(args[1], args[2] if len(args) > 2 else Opaque(
                    f"no attribute {args[1]!r}")) if fn is getattr else args[1] in args[0].attrs
            return Opaque(f"`{ast.unparse(node)}` is not analyzed")
        if fn in (range, tuple, list, enumerate, zip, map, reversed, sorted, any, all):
            args = [self.expr(a, env) for a in node.args]
            try:
                if fn in (tuple, list):
                    return fn(args[0]) if args else fn()
                return tuple(fn(*args))
            except TypeError:
                return Opaque(f"`{ast.unparse(node)}` is not analyzed")
        for a in node.args:
            self.expr(a, env)
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
                    v = self.expr(a.value, env)
                    args.extend(v if isinstance(v, (tuple, list)) else [v])
                else:
                    args.append(self.expr(a, env))
            for kw in node.keywords:
                if kw.arg is None:
                    continue
                if kw.arg == "dst" and isinstance(kw.value, ast.Subscript):
                    kwargs[kw.arg] = self._subscript(kw.value, env, role="dst")
                elif kw.arg == "mask":
                    kwargs[kw.arg] = self.expr(kw.value, env)
                else:
                    kwargs[kw.arg] = self.expr(kw.value, env)
            return args, kwargs
        finally:
            self._collect.pop()

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

    def _helper(self, fn: Func, node: ast.Call, env: dict[str, Any]) -> Any:
        if self.depth >= MAX_CALL_DEPTH:
            raise ReaderError(f"helper {fn.node.name!r} calls itself too deeply (recursion is "
                              "not analyzed)", node)
        collect: list[RawAccess] = []
        outer, self._nki_args = self._nki_args, 0
        try:
            args, kwargs = self._args(node, env, collect)
        finally:
            self._nki_args = outer
        local = dict(fn.env)  # the defining scope as it is now (a closure reads current values)
        a = fn.node.args
        positional = [p.arg for p in a.posonlyargs + a.args]
        defaults = dict(zip(positional[::-1], list(a.defaults)[::-1]))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d})
        given = dict(zip(positional, args))
        if a.vararg is not None:
            given[a.vararg.arg] = tuple(args[len(positional):])
        given.update(kwargs)
        for p in positional + [p.arg for p in a.kwonlyargs]:
            if p not in given:
                if p not in defaults:
                    raise ReaderError(f"call of helper {fn.node.name!r} gives no value for "
                                      f"parameter {p!r}", node)
                given[p] = self.expr(defaults[p], fn.env)
        local.update(given)
        closure = fn.env is not self.globals and (not self.local_names
                                                  or self.local_names[-1] is None)
        rebound = {n for st in fn.node.body for n in assigned_names(st)}
        names = None if closure else {v.args[0].name: p for p, v in given.items()
                                      if isinstance(v, AffineExpr) and v.op == "var"
                                      and p not in rebound}
        self.local_names.append(names)
        self.depth += 1
        outer, self._nki_args = self._nki_args, 0
        try:
            self._block(fn.node.body, local)
        except Return as r:
            return r.value
        finally:
            self.depth -= 1
            self._nki_args = outer
            self.local_names.pop()
        return None
