"""The :class:`~egraph_tiles.egraph.encode.Encoder`'s statements of a call's operands: the use
each operand that is a window or a valid_shape / drop_dims slice gets, read from the registry
or, for one of the program's own functions, from what that function does with the tile
(``egraph.calls``), and the writes such a function makes into its arguments.
"""

from __future__ import annotations

from ..ir import ops
from ..ir.effects import Share, call_of, call_operands, operand_index, param_position
from ..ir.exprs import Call, Const, TupleItem, Var, VarRef, const_shape
from ..ir.frames import framed_operand
from ..ir.stmts import AssignStmt, Stmt
from ..ir.types import TileType
from .calls import (call_result_returned_written, call_result_written, callee_name, own_uses, param_uses, part_of_window,
                    framed_result, passed_window, returned_param, returned_whole, role_of)
from .encode_facts import operand_context
from .encoding import RawSliceUse, WriteSite

#: what a program function that reads a tile as one of its own needs of a value passed to it
#: (``rules.calls`` ``CallValueRow``): dense and aligned, or (a col_expand use only) dense
_VALUE_NEEDS = {ops.Role.CALL: "both", ops.Role.HAND_BACK: "both", ops.Role.COLX: "identity"}

#: a use context not read yet (:meth:`CallUses.context`; None is a context: no use)
_UNKNOWN = object()


class CallUses:
    """The call methods of :class:`~egraph_tiles.egraph.encode.Encoder` (a mixin: they read and
    state through the encoder's own tables)."""

    def call_kind(self, op: str) -> tuple[bool, bool, bool]:
        """Whether a call of ``op`` calls a program function; whether its operands are checked
        as vector uses (a VECTOR-family op, or one the registry cannot classify); whether the
        registry cannot classify it.  Read once per op name."""
        kind = self._kinds.get(op)
        if kind is None:
            d = ops.lookup(op)
            unclassified = not ops.classified(op)
            kind = self._kinds[op] = (
                self.program is not None and callee_name(op) is not None,
                d is not None and d.family is ops.Family.VECTOR or unclassified, unclassified)
        return kind

    def call_uses(self, stmt: Stmt, call: Call) -> bool:
        """State the operand uses and memory effects of ``call``; whether it calls a program
        function."""
        # the operands :meth:`use` has anything to state about: a window, or a valid_shape /
        # drop_dims slice (or a view of one)
        window_of, raw_view, contexts = self.enc.window_of, self._raw_view, self._contexts
        i = 0  # (counted by hand: ``enumerate`` costs ~0.1 us more per operand)
        mat_named = self._mat_named
        for a in call.args:
            if type(a) is VarRef and (a.var in window_of or raw_view and a.var in raw_view
                                      or mat_named and a.var in mat_named):
                ctx = contexts.get((call.op, i), _UNKNOWN)  # (:meth:`context` inline)
                self.use(stmt, ("arg", i), a, self.context(call.op, i) if ctx is _UNKNOWN else ctx)
            i += 1
        for k, v in call.kwargs:
            if type(v) is VarRef and (v.var in window_of or raw_view and v.var in raw_view
                                      or mat_named and v.var in mat_named):
                idx = operand_index(call, k)
                self.use(stmt, ("kwarg", k), v, self.context(call.op, idx))
        program_call, vector, unclassified = self._kinds.get(call.op) or self.call_kind(call.op)
        if program_call:
            self.raw_call_uses(stmt, call)
            self.call_writes(stmt, call)
            self.call_values(stmt, call)
        elif vector and raw_view:  # (both state only operands that are such slices)
            # an unclassified op gets a valid_shape / drop_dims slice as a view too (#1789) ...
            self.raw_vec_uses(stmt, call)
            if unclassified:
                # ... and may materialize it as a col_expand op does
                self.raw_colx_uses(stmt, call)
        if stmt in self._effects_at:
            self.effects(stmt)
        return program_call

    def raw_use(self, table: str, stmt: Stmt, var: Var, op: str) -> None:
        """State operand ``var`` of ``stmt`` (a call of ``op``) as a use ``(table n k)`` of every
        valid_shape / drop_dims slice ``k`` it may name (``RawVecRow`` / ``RawColxRow``); the
        rows are written by :meth:`finish`, once every slice has its number."""
        vec = table == "RawVecRow"
        uses = self.enc.raw_vec if vec else self.enc.raw_colx
        fx = self.fx
        for raw in (self._raw_view if vec else self._raw_kept).get(var, ()):
            if var not in self.raw_reach(raw):
                continue  # (only through windows functions hand back: checked at the call)
            n = self.number()
            self._raw_pending.append((table, n, raw))
            uses.append(RawSliceUse(n, fx.stmt_at(fx.defs[raw][0]), var, stmt, op))  # type: ignore[arg-type]

    def raw_vec_uses(self, stmt: Stmt, call: Call) -> None:
        """State each operand of a VECTOR-family call that is a valid_shape / drop_dims slice (or
        a view of one) as ``(RawVecRow n k)`` for ``rules.checks``."""
        if not self._raw_view:
            return
        for a in [*call.args, *(v for _, v in call.kwargs)]:
            if isinstance(a, VarRef) and a.var in self._raw_view:
                self.raw_use("RawVecRow", stmt, a.var, call.op)

    def raw_colx_uses(self, stmt: Stmt, call: Call, keys=None) -> None:
        """State each operand that is a valid_shape / drop_dims slice (or a view of one) as a
        col_expand use ``(RawColxRow n k)``: its lazy materialization must be an identity copy
        (#1640 / #2010)."""
        if not self._raw_kept:
            return
        for k, a in call_operands(call):
            if not isinstance(a, VarRef) or a.var not in self._raw_kept \
                    or keys is not None and k not in keys:
                continue
            self.raw_use("RawColxRow", stmt, a.var, call.op)

    # ------------------------------------------------------------------ program functions
    def is_program_call(self, op: str) -> bool:
        return self.call_kind(op)[0]

    def callee_uses(self, op: str, k: int | str) -> frozenset[str]:
        """What the program function ``op`` does with operand ``k`` (egraph.calls; summarized
        once per operand, not once per call)."""
        if self.program is None:
            return frozenset({"opaque"})
        uses = self._callee.get((op, k))
        if uses is None:
            uses = self._callee[op, k] = param_uses(self.program, op, k)
        return uses

    def arg_uses(self, op: str, k: int | str) -> frozenset[str]:
        """What the program function ``op`` does with operand ``k`` that the argument itself must
        allow: of a function returning the tile itself (alone or in a tuple), only what it does
        (the caller's uses of the result are the argument's, checked where they are)."""
        if self.program is not None and returned_whole(self.program, op, k):
            return own_uses(self.program, op, k) - {"colx-part"}
        return self.callee_uses(op, k)

    def returned_param(self, op: str) -> int | None:
        """The parameter the program function ``op`` returns (egraph.calls; once per op)."""
        if op not in self._returned:
            self._returned[op] = returned_param(self.program, op)  # type: ignore[arg-type]
        return self._returned[op]

    def context(self, op: str, index: int | str | None) -> ops.Role | None:
        """The use context of operand ``index`` of a call of ``op`` (:meth:`find_context`, read
        once per operand of each op)."""
        try:
            return self._contexts[op, index]
        except KeyError:
            ctx = self._contexts[op, index] = self.find_context(op, index)
            return ctx

    def find_context(self, op: str, index: int | str | None) -> ops.Role | None:
        """The use context of an operand.  For a program function, what it does with the tile
        decides (egraph.calls): a matmul operand ``CUBE_CALL``; windows taken of it, an opaque
        use, or a col_expand use together with a vector use or write ``CALL`` (dense and
        aligned), or ``HAND_BACK`` when all it does is hand one window of the tile back; a col_expand
        use ``COLX``; anything else (vector use, write, reads) ``ORD``.  Of a function that
        returns the tile itself, only what it does with it counts."""
        if not self.is_program_call(op) or index is None:  # (a keyword the registry lacks: None)
            return operand_context(op, index if isinstance(index, int) else None)
        if self.framed(op, index):
            return None  # (the function judges its windows where the argument lies: passed as it is)
        uses = self.callee_uses(op, index)
        if returned_whole(self.program, op, index):  # type: ignore[arg-type]
            # (it returns the tile itself, alone or in a tuple: the caller's uses of the result
            # are uses of the window there, checked where they are; only what the function
            # itself does counts)
            uses = own_uses(self.program, op, index) - {"colx-part"}  # type: ignore[arg-type]
            if not uses:
                return None  # (it does nothing with it: the window is passed as it is)
        if not uses:
            return None  # (nothing is done with the tile: passed as it is)
        role = role_of(uses)
        if role in (ops.Role.CALL, ops.Role.ORD, ops.Role.COLX) \
                and passed_window(self.program, op, index) is not None:
            return ops.Role.HAND_BACK  # (it only hands a window of the tile back)
        return role

    def position(self, op: str, index: int | str) -> int | str:
        """The parameter position operand ``index`` of a call of program function ``op`` binds
        (a keyword argument: its parameter's, by name)."""
        if isinstance(index, int) or self.program is None:
            return index
        try:
            fn = self.program.function(callee_name(op))  # type: ignore[arg-type]
        except KeyError:
            return index
        return param_position([p.var.name for p in fn.params], index)

    def program_operand(self, call: Call, k: int) -> Var | None:
        """The variable passed for parameter ``k`` of a program function call (positionally or
        by keyword)."""
        return next((a.var for i, a in call_operands(call)  # type: ignore[attr-defined]
                     if type(a) is VarRef and self.position(call.op, i) == k), None)

    def framed(self, op: str, index: int | str) -> bool:
        """Whether operand ``index`` of a call of ``op`` binds a parameter its calls frame
        (``ir.frames``; read once per operand)."""
        got = self._framed.get((op, index))
        if got is None:
            got = self._framed[op, index] = framed_operand(self.program, op, index)
        return got

    def raw_call_uses(self, stmt: Stmt, call: Call) -> None:
        """A valid_shape / drop_dims slice passed to a program function is checked for what the
        function does with it: a col_expand use needs the identity copy, a vector use, an
        in-place write or windows taken of it the alignment (the callee addresses the tile
        through the argument's own addresses); an opaque use both."""
        # (a function that only hands a window of it back: what that window needs where it
        # lies is checked by :meth:`call_values`)
        handed = {k for k, a in call_operands(call) if self.framed(call.op, k)
                  or self.value_checked(call, k, a)
                  and self.context(call.op, k if isinstance(k, int) else None) is ops.Role.HAND_BACK}
        colx = {k for k, _ in call_operands(call) if k not in handed
                and self.arg_uses(call.op, k) & {"colx", "opaque"}}
        vec = {k for k, _ in call_operands(call) if k not in handed
               and self.arg_uses(call.op, k) & {"vector", "write", "sliced", "opaque"}}
        self.raw_colx_uses(stmt, call, colx)
        for k, a in call_operands(call):
            if isinstance(a, VarRef) and a.var in self._raw_view and k in vec:
                self.raw_use("RawVecRow", stmt, a.var, call.op)

    def pass_context(self, stmt: Stmt, var: Var, window: int) -> ops.Role:
        """The context of window operand ``var`` (tile term ``window``) of ``stmt``, a call of a
        program function that only hands a window of the tile back (``HAND_BACK``): the window
        handed back stated at its real address, ``(PassWin w n)`` (``rules.calls``), or
        ``CALL`` when another call already handed back another window of the same window (the
        ``Use`` of a window in a context is one term for every such use)."""
        call = call_of(stmt)
        k = next(k for k, a in call_operands(call) if isinstance(a, VarRef) and a.var is var)  # type: ignore[arg-type]
        k = k if isinstance(k, int) else operand_index(call, k)  # type: ignore[arg-type]
        got = passed_window(self.program, call.op, k) if isinstance(k, int) else None  # type: ignore[union-attr, arg-type]
        if got is None:
            return ops.Role.CALL
        (h, wd), (r, c), need = got
        prev = self._passed.get(window)
        if prev is not None:
            return ops.Role.HAND_BACK if prev == got else ops.Role.CALL
        self._passed[window] = got
        n = self.number()
        self.row("WinRow", n, window, self.idx(Const(r)), self.idx(Const(c)), h, wd)
        self._rows["PassWinRow"].append((window, n, need))
        return ops.Role.HAND_BACK

    def call_values(self, stmt: Stmt, call: Call) -> None:
        """Each tile operand of a program function call that is no window but names part of one
        (:func:`part_of_window`) and that the function reads as a tile of its own (CALL /
        HAND_BACK, or COLX: windows of it col_expanded) is stated as a full-extent window of its own leaf, ``(CallValueRow k n)``, and,
        for HAND_BACK, the window handed back of it, ``(CallHandedRow k p)`` (``rules.calls``)."""
        for k, a in call_operands(call):
            if not self.value_checked(call, k, a) or self.framed(call.op, k):
                continue
            idx = k if isinstance(k, int) else operand_index(call, k)
            ctx = self.context(call.op, idx if isinstance(idx, int) else None)
            if ctx is not ops.Role.HAND_BACK and a.var in self._raw:  # type: ignore[attr-defined]
                continue  # (a valid_shape / drop_dims slice itself: raw_call_uses)
            dims = const_shape(a.var.type)
            if ctx not in _VALUE_NEEDS or dims is None or len(dims) != 2:
                continue
            if ctx is ops.Role.COLX:
                own = own_uses(self.program, call.op, idx)  # type: ignore[arg-type]
                # (its col_expand uses are the callers' of the tile it returns; the tile itself
                # col_expanded is materialized lazily only if it may still be a slice, not a
                # transpose_view of one: ir.storage kept_origins)
                if "colx" not in own or "colx-part" not in own \
                        and not self.storage.kept_origins.get(a.var):  # type: ignore[union-attr]
                    continue
            leaf = self.base(a.var)
            zero = self.idx(Const(0))
            n = self.number()
            self.row("WinRow", n, leaf, zero, zero, dims[0], dims[1])
            key = self.number()
            self._rows["CallValueRow"].append((key, n, _VALUE_NEEDS[ctx]))
            got = passed_window(self.program, call.op, idx) \
                if ctx is ops.Role.HAND_BACK and isinstance(idx, int) else None  # type: ignore[arg-type]
            if got is not None:
                (h, wd), (r, c), need = got
                m = self.number()
                self.row("WinRow", m, leaf, self.idx(Const(r)), self.idx(Const(c)), h, wd)
                self._rows["CallHandedRow"].append((key, m, need))
                self.enc.call_handed.add(key)
            self.enc.call_values.append(WriteSite(key, stmt, a.var, call.op))

    def raw_reach(self, raw: Var) -> set[Var]:
        """The values that may name the valid_shape / drop_dims slice ``raw`` other than only
        through a window a program function hands back of it (a ``CALL`` edge of a call that
        gives the argument the HAND_BACK context, whose window :meth:`call_values` checks where it
        lies for what the callers' uses need)."""
        got = self._raw_reach.get(raw)
        if got is None:
            by_src: dict[Var, list] = {}
            for e in self.fx.edges:
                if e.kind is not Share.SLICE and not self.handed_back_edge(e):
                    by_src.setdefault(e.src, []).append(e.dst)
            got = {raw}
            todo = [raw]
            while todo:
                for d in by_src.get(todo.pop(), ()):
                    if d not in got:
                        got.add(d)
                        todo.append(d)
            self._raw_reach[raw] = got
        return got

    def call_results(self, stmt: Stmt, var: Var) -> list[Var]:
        """The values a program function call ``stmt`` hands back of its operand ``var``'s
        storage: its result, and the elements read of a returned tuple (their ``CALL`` edges,
        ``ir.effects``)."""
        if not isinstance(stmt, AssignStmt) or call_of(stmt) is None:
            return []
        items = self._items.get(stmt.target)
        if items is None:
            items = self._items[stmt.target] = {
                t for t in self.fx.stmts if isinstance(t, AssignStmt)
                and isinstance(t.value, TupleItem) and isinstance(t.value.value, VarRef)
                and t.value.value.var is stmt.target}
        return [e.dst for e in self.storage.out_edges.get(var, ())  # type: ignore[union-attr]
                if e.kind is Share.CALL and (e.stmt is stmt or e.stmt in items)]

    def framed_edge(self, e) -> bool:
        """Whether storage edge ``e`` is a program function call's result sharing an argument
        that binds a framed parameter (``egraph.calls.framed_result``)."""
        return self.program is not None and framed_result(self.program, e)

    def handed_back_edge(self, e) -> bool:
        """Whether storage edge ``e`` is a program function call's result sharing an argument
        the call gives the HAND_BACK context and :meth:`call_values` checks."""
        if e.kind is not Share.CALL:
            return False
        call = call_of(e.stmt)
        if call is None or not self.is_program_call(call.op):
            return False
        for k, a in call_operands(call):
            if type(a) is VarRef and a.var is e.src:
                if self.framed(call.op, k):
                    return True  # (the function judges the windows it hands back where they lie)
                idx = k if isinstance(k, int) else operand_index(call, k)
                return isinstance(idx, int) and self.value_checked(call, k, a) \
                    and self.context(call.op, idx) is ops.Role.HAND_BACK
        return False

    def value_checked(self, call: Call, k: int | str, a) -> bool:
        """Whether operand ``a`` (slot ``k``) of ``call`` is a tile that is no window but names
        part of one (:func:`part_of_window`), or a valid_shape / drop_dims slice: passed to a
        program function as a tile of its own, it is checked by :meth:`call_values`."""
        if type(a) is not VarRef or a.var in self.enc.window_of:
            return False
        parts = self._parts
        if parts is None:
            parts = self._parts = part_of_window(self.fx)
        return a.var in parts or a.var in self._raw

    def call_keep(self, stmt: Stmt, slot: tuple, var: Var) -> str | None:
        """Whether the operand ``var`` at ``slot`` of ``stmt``, a call of a program function,
        must stay the view itself (``rules.calls``): the function writes it, or the call's
        result shares its storage and the caller writes through the result (or reads it after
        writing the window) — a copy passed in its place would take the write, or miss it.
        The write in words, else None."""
        call = call_of(stmt)
        if call is None or not self.is_program_call(call.op):
            return None
        k = slot[1] if slot[0] == "arg" else operand_index(call, slot[1])
        if self.callee_uses(call.op, k) & {"write", "acc", "opaque"}:
            return f"{call.op} may write it in place"
        how = call_result_written(self.fx, stmt, var, self._edges.get(stmt, ()))
        if how is None and self.program is not None and self.function is not None:
            how = call_result_returned_written(self.program, self.function, self.fx, stmt, var,
                                               self._edges.get(stmt, ()))
        return how

    def call_writes(self, stmt: Stmt, call: Call) -> None:
        """A program function that writes a tile operand in place (or accumulates into it): the
        write lands in the argument's storage (rules.checks ``written``), so the argument must
        stay a view — a copy would take the write and lose it."""
        for k, a in call_operands(call):
            if isinstance(a, VarRef) and isinstance(a.var.type, TileType) \
                    and self.callee_uses(call.op, k) & {"write", "acc"}:
                n = self.number()  # (before tile() may number a new leaf)
                if self.framed(call.op, k):
                    # the function proves each window it writes where it lies: the write is
                    # only tracked here, as a scalar store's (no view proof asked of the argument)
                    self.row("ScalarWriteRow", n, self.tile(a.var))
                    continue
                self.row("WriteRow", n, self.tile(a.var))
                self.enc.writes.append(WriteSite(n, stmt, a.var, call.op))
