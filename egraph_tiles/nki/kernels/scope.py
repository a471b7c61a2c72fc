"""Parameters and the kernel's own modules, read for the kernel reader (a part of
:class:`~egraph_tiles.nki.kernels.reader.Reader`): a parameter's value as given (text parsed for
that parameter, configuration objects built from their class), the module-level names of the
kernel file and of the modules it imports (resolved by
:class:`~egraph_tiles.nki.kernels.modules.ModuleFinder`, read with ``ast``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from egraph_tiles.nki.kernels.modules import ParameterError, is_str_param, parse_value
from egraph_tiles.nki.kernels.values import (
    Class,
    ConfigCall,
    Func,
    Module,
    Object,
    Opaque,
    ParamText,
    PyModule,
    ReaderError,
    Tensor,
    module_alias,
)

__all__ = ["ParameterScope"]


class ParameterScope:
    """Parameter values and module scopes (mixed into the reader)."""

    def _param_value(self, p: ast.arg, default: ast.expr | None) -> Any:
        name = p.arg
        if name in self.shapes:
            shape = tuple(int(d) for d in self.shapes[name])
            return Tensor(name, shape, self.dtypes.get(name), "hbm")
        if name in self.scalars:
            return self._given(name, self.scalars[name], is_str_param(p, default))
        if default is not None:
            try:
                return self.expr(default, self.globals)
            except ReaderError:
                pass
        return Opaque(f"parameter {name!r} has no value (pass --shape {name}=D0xD1... for a "
                      f"tensor or --scalar {name}=VALUE)")

    def _given(self, name: str, v: Any, text_ok: bool) -> Any:
        """A parameter value as given: text parsed for this parameter, configurations built."""
        if isinstance(v, ParamText):
            value = parse_value(v.text)
            if text_ok and not (isinstance(value, str) and v.text.strip()[:1] in "'\""):
                return v.text
            if isinstance(value, ParamText):
                raise ParameterError(
                    f"--scalar {name}={v.text}: not a Python literal (expected a number, a "
                    "tuple or list such as (3, 4), true / false / null, a quoted string, or a "
                    "configuration such as Config(field=value))")
            v = value
        if isinstance(v, ConfigCall):
            cls = self.globals.get(v.cls)
            if not isinstance(cls, Class):
                raise ParameterError(f"--scalar {name}: no class {v.cls!r} in the kernel's file "
                                     "or the modules it imports")
            args = [self._given(name, a, False) for a in v.args]
            kwargs = {k: self._given(name, a, False) for k, a in v.kwargs}
            return self._build(cls, args, kwargs, None)
        if isinstance(v, (tuple, list)):
            return type(v)(self._given(name, x, False) for x in v)
        if isinstance(v, dict):
            return {k: self._given(name, x, False) for k, x in v.items()}
        return v

    def _read_module(self, tree: ast.Module, env: dict[str, Any], home: Path | None) -> None:
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._import(node, env, home)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                try:
                    value = self.expr(node.value, env)
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                        self._bind(t, value, env, node)
                except ReaderError:
                    pass  # module-level code outside the kernel is not analyzed
            elif isinstance(node, ast.FunctionDef):
                env[node.name] = Func(node, env)
            elif isinstance(node, ast.ClassDef):
                env[node.name] = Class(node, env)

    def _load_module(self, path: Path) -> PyModule:
        key = path.resolve()
        if key not in self.modules:
            mod = self.modules[key] = PyModule(path.stem, {})
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            except (OSError, SyntaxError, UnicodeDecodeError):
                return mod
            outer = self.stmt_line, self.instruction
            self._read_module(tree, mod.env, path.parent)
            self.stmt_line, self.instruction = outer
        return self.modules[key]

    def _import(self, node: ast.Import | ast.ImportFrom, env: dict[str, Any],
                home: Path | None) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                local = self.finder.find(a.name, 0, home)
                if local is not None:
                    mod = self._load_module(local)
                    env[a.asname or a.name.split(".")[0]] = mod
                elif a.asname:
                    env[a.asname] = Module(module_alias(a.name))
                else:
                    root = a.name.split(".")[0]
                    env[root] = Module(module_alias(root) if root != "neuronxcc" else root)
            return
        local = self.finder.find(node.module, node.level, home)
        base = module_alias(node.module or "")
        for a in node.names:
            if a.name == "*":
                if local is not None:
                    env.update(self._load_module(local).env)
                continue
            if local is not None:
                members = self._load_module(local).env
                if a.name in members:
                    env[a.asname or a.name] = members[a.name]
                    continue
                sub = self.finder.find(a.name, 1, local.parent) if local.name == "__init__.py" \
                    else None
                env[a.asname or a.name] = self._load_module(sub) if sub is not None else Opaque(
                    f"{a.name!r} is not defined in {local.name}")
                continue
            if node.level == 0:
                env[a.asname or a.name] = Module(f"{base}.{a.name}" if base else a.name)
            else:
                env[a.asname or a.name] = Opaque(f"module `{'.' * node.level}{node.module or ''}"
                                                 "` was not found next to the kernel file")

    def _build(self, cls: Class, args: Sequence[Any], kwargs: Mapping[str, Any],
               node: ast.AST | None) -> Object:
        """``Config(...)``: class-level defaults (or a dataclass's field defaults), overridden
        by the call's arguments."""
        attrs: dict[str, Any] = {}
        fields = []
        for st in cls.node.body:
            target = st.target if isinstance(st, ast.AnnAssign) else (
                st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else None)
            if isinstance(target, ast.Name):
                fields.append(target.id)
                if st.value is not None:
                    try:
                        attrs[target.id] = self.expr(st.value, cls.env)
                    except ReaderError:
                        attrs[target.id] = Opaque(f"field {target.id!r} is not analyzed")
        for name, v in zip(fields, args):
            attrs[name] = v
        for name, v in kwargs.items():
            if fields and name not in fields and node is None:
                raise ParameterError(f"class {cls.node.name!r} has no field {name!r} (fields: "
                                     f"{', '.join(fields)})")
            attrs[name] = v
        return Object(cls.node.name, attrs)

