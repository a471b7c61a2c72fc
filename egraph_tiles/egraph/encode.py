"""Encode one function into egglog commands: tile values, index expressions, use sites, roots.

The encoder only *states* the program: terms, unions of scalar SSA definitions and aliases, and
leaf facts read from the types (memory, storage bits, pitch, memref).  Every decision is made by
the rules in ``egraph_tiles.rules`` and the extractor.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from ..ir import ops
from ..ir.effects import (Edge, Effects, Share, Write, branch_arm, call_of, call_operands, function_effects)
from ..ir.exprs import (BinOp, Call, Const, Expr, ListExpr, TupleItem, Var, VarRef, const_int,
                        const_shape)
from ..ir.mutator import StmtVisitor
from ..ir.storage import Storage, storage_of
from ..ir.summaries import call_summaries
from ..ir.stmts import (AssignStmt, EvalStmt, ForStmt, Function, IfStmt, Program, ReturnStmt, Stmt,
                        WhileStmt, YieldStmt)
from ..ir.types import MemorySpace, ScalarType, TileType, Type
from ..rules.sorts import IDX_OPS, idx_table
from .calls import result_uses, result_windowed, result_written, role_of, whole_source
from .encode_calls import CallUses
from .encode_facts import (by_stmt, canonical_slice, constant_idx, framed_arguments, judged_from_storage,
                           mat_named, raw_origins, raw_slice_parts, reached_back, stated, written_edges)
from .encoding import Encoding, ExtSite, UseSite, Window, WriteSite

#: :meth:`Encoder.leaf_facts`: a tile in a fresh buffer (no memref, or the planning sentinel)
_FRESH = object()

#: the index operators with a term of their own, and its row table
_IDX_ROWS = {op: idx_table(op) for op in IDX_OPS}

# enum members read once: reading one off its class costs ~0.15 us in Python 3.11, and these
# are read per statement, operand or storage edge
_ORD, _COLX, _PASS = ops.Role.ORD, ops.Role.COLX, ops.Role.PASS
_DENSE, _DENSE_PASS = ops.Role.DENSE, ops.Role.DENSE_PASS
_LEFT, _RIGHT = ops.Role.LEFT, ops.Role.RIGHT
#: the consumer roles that read a value as a matmul operand, or materialize it as col_expand does
_CUBE = frozenset((ops.Role.LEFT, ops.Role.RIGHT, ops.Role.CUBE_CALL))
_COLX_LIKE = frozenset((ops.Role.COLX, ops.Role.CALL, ops.Role.HAND_BACK))
#: the use slots of a call's operands
_ARGS = frozenset(("arg", "kwarg"))
_DENSE_LIKE = frozenset((ops.Role.DENSE,))
#: the use slots through which a window flows into another value (an alias is the window itself)
_ESCAPES = frozenset(("init", "yield", "arg", "kwarg"))
_CARRIES = frozenset(("init", "yield"))
_VIEW = Share.VIEW
#: the storage edges of a loop's entry, a loop's end and an if statement (:meth:`Encoder.edges`)
_LOOP_INIT, _LOOP_ENDS = (Share.LOOP_INIT,), (Share.LOOP_BACK, Share.LOOP_RESULT)
_IF_RESULT = (Share.IF_RESULT,)


#: what writes a returned window a caller writes through (the rejection names it)
_RETURNED = ("the return (a caller writes through the returned view, or reads it after writing "
             "the argument)")


def _in_place_view(op: ops.OpDef) -> bool:
    """Whether ``op`` is a view that leaves every element where it is, touching none
    (``set_validshape``, ``transpose_view``), unlike a slice (a window) or a reshape (the
    elements laid out densely from the first)."""
    return op.family is ops.Family.VIEW and op.window is None and op.relayout is None


def _row_pitch(t: TileType, strides: tuple[int, ...]) -> int | None:
    """The elements between the rows of a 2-d tile of type ``t`` laid out with ``strides`` (bits),
    when its columns are one element apart (row-major); None otherwise."""
    bits = t.dtype.storage_bits
    if t.rank != 2 or len(strides) != 2:
        return None
    stride_r, stride_c = strides
    dims = const_shape(t)
    if dims is not None and dims[1] == 1:
        stride_c = bits  # (one column: its stride is never taken; a column's rows are dense)
    return stride_r // bits if stride_c == bits and stride_r % bits == 0 else None


class Encoder(CallUses, StmtVisitor):
    def __init__(self, fx: Effects, program: Program | None = None,
                 storage: Storage | None = None) -> None:
        self.enc = Encoding()
        self._rows: defaultdict[str, list[tuple]] = defaultdict(list)
        self.fx = fx
        #: every value's storage facts (ir.storage): a window's base that is not a root of its
        #: own states its layout from there, never from its own type
        self.storage = storage
        #: tile var -> the roles of the operands it is passed as (:meth:`demand`, built once)
        self._roles_of: dict[Var, set[ops.Role]] | None = None
        #: the tile vars read or written as a whole (:meth:`accessed`, built with ``_roles_of``)
        self._accessed: set[Var] = set()
        #: the tile vars some statement may write in place (:meth:`written_after`, built once)
        self._written_vars: set[Var] | None = None
        #: tile var -> the statements reading it (:meth:`reads_of`, built once)
        self._reads: defaultdict[Var, list[Stmt]] | None = None
        #: the program, for what a called program function does with a tile (egraph.calls)
        self.program = program
        #: the name of the function encoded (its callers decide what its returned windows need)
        self.function: str | None = None
        #: its parameters
        self.params: set[Var] = set()
        edges, writes = stated(fx)
        self._edges: dict[Stmt, list[Edge]] = by_stmt(edges)
        self._writes: dict[Stmt, list[Write]] = by_stmt(writes)
        #: the statements with writes or storage edges (:meth:`effects`)
        self._effects_at = self._writes.keys() | self._edges.keys()
        #: the if merges taking their value on one arm of a condition: (result, value, arm)
        self._arm_edges: list[tuple[int, int, tuple[str, int]]] = []
        self._n = 0
        self._sym_of: dict[Var, int] = {}
        self._lit: dict[int, int] = {}
        #: valid_shape / drop_dims slice var -> (its tile number, its statement)
        self._raw: dict[Var, tuple[int, AssignStmt]] = {}
        #: value -> the valid_shape / drop_dims slices it may name, itself, through views (set_validshape,
        #: ...), aliases, write-backs, loop carries and if merges (ir.storage origins): the
        #: vector-op checks (any view of the window shares its addresses)
        self._raw_view: dict[Var, list[Var]] = raw_origins(fx, storage) if storage else {}
        #: the same, only through edges that keep the value the slice itself (not a
        #: transpose_view or a reshape of it): the col_expand check (the lazy materialization
        #: runs only on the slice's own subview)
        self._raw_kept: dict[Var, list[Var]] = \
            raw_origins(fx, storage, kept=True) if storage else {}
        #: the values other than a slice or its alias that may name a Mat window (ir.storage
        #: origins): a matmul operand among them may fold into an extract (:meth:`cube_fold`)
        self._mat_named: set[Var] = mat_named(fx, storage) if storage else set()
        #: the values some window is judged by the storage of, as written (:meth:`use`)
        framed = framed_arguments(fx, program)
        self._judged: set[Var] = judged_from_storage(fx, storage, framed) if storage else set()
        #: the values a framed parameter gets (ir.frames), and the plain aliases they are of:
        #: an alias escape of a window among them is passed on as it is (:meth:`visit_AssignStmt`)
        self._framed_aliases: set[Var] = reached_back(fx, framed, Share.ALIAS) if framed else set()
        #: the raw-slice uses stated before their slice's number is known (a loop's yield can
        #: carry a slice defined after the use): (table, use number, raw slice var), in order
        self._raw_pending: list[tuple[str, int, Var]] = []
        #: op name -> :meth:`call_kind`; (op, operand) -> :meth:`callee_uses`; op name ->
        #: :meth:`returned_param`; (op, operand) -> :meth:`context` (read once per op,
        #: not once per call)
        self._kinds: dict[str, tuple[bool, bool, bool]] = {}
        self._callee: dict[tuple[str, int | str], frozenset[str]] = {}
        self._returned: dict[str, int | None] = {}
        self._contexts: dict[tuple[str, int | str | None], ops.Role | None] = {}
        #: (op, operand) -> whether it binds a framed parameter (:meth:`framed`)
        self._framed: dict[tuple[str, int | str], bool] = {}
        #: a program function call's result -> the statements reading its tuple elements
        self._items: dict[Var, set] = {}
        #: the windows returned to callers that take windows of the result (:meth:`use`)
        self._keep_returned: set[Var] = set()
        #: frame -> the start of a parameter it frames, when the calls disagree on it
        self._frame_starts: dict = {}
        #: window tile term -> the window a program function hands back of it (HAND_BACK context:
        #: :meth:`pass_context`)
        self._passed: dict[int, tuple] = {}
        #: the values that name part of a window other than through an escape
        #: (egraph.calls ``part_of_window``, built once a program function call needs them)
        self._parts: set[Var] | None = None
        #: valid_shape / drop_dims slice -> the values naming it not only through a window a
        #: function hands back (:meth:`raw_reach`)
        self._raw_reach: dict[Var, set[Var]] = {}
        #: id of a type -> (the type, :meth:`leaf_facts`)
        #: id of a type -> (the type, :meth:`leaf_facts`, the numbers of the index terms of
        #: its pitch and buffer start once :meth:`leaf` took them and taking them again would
        #: give the same numbers and state nothing: a constant or nothing, else None)
        self._types: dict[int, tuple[Type | None, tuple, tuple | None]] = {}
        #: leaf number -> its variable, :meth:`leaf_facts` and the numbers of the index terms of
        #: its pitch and buffer start; the leaves that are a window's base (:meth:`finish`)
        self._leaf_rows: dict[int, tuple[Var, tuple, int | None, int | None]] = {}
        #: the visit method of each statement kind but an assignment (:meth:`visit_body`; the
        #: class's functions, not bound methods: no reference cycle through ``self``)
        cls = type(self)
        self._kinds_visit = {YieldStmt: cls.visit_YieldStmt, ForStmt: cls.visit_ForStmt,
                             WhileStmt: cls.visit_WhileStmt, IfStmt: cls.visit_IfStmt,
                             EvalStmt: cls.visit_EvalStmt, ReturnStmt: cls.visit_ReturnStmt}
        self._bases: set[int] = set()

    def fresh(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def number(self) -> int:
        """The next term number (:meth:`fresh` without a key)."""
        self._n += 1
        return self._n

    def row(self, table: str, *values: object) -> None:
        self._rows[table].append(values)

    def finish(self) -> Encoding:
        """The encoding, its rows a plain dict (a table is there once it has a row).

        A leaf's rows (``Leaf`` term, memory, bits, pitch, buffer start) are stated only for the
        base of a window: the rules read a leaf's facts only through a window over it
        (``rules.layout`` gives the window its base's memory, bits, pitch and address;
        ``rules.legality`` / ``rules.checks`` match ``(Win (Leaf s) ...)``), and only a
        window's base is part of an extracted term.  Any other leaf — the other end of a
        storage edge, a written tile — stays its bare number ``(NT k)`` (two thirds
        of the leaves at 1,000 statements, with their derived layout facts)."""
        rows, leaves, leaf_rows = self._rows, self.enc.leaves, self._leaf_rows
        for k in sorted(self._bases):  # (in number order; a base may be a window)
            leaf = leaf_rows.get(k)
            if leaf is None:
                continue
            var, facts, pitch_k, start_k = leaf
            key = f"t{k}"
            leaves[key] = var
            mem, bits, pitch, cols, start = facts
            if cols is not None and start is _FRESH:
                rows["FreshLeafRow"].append((k, key, mem, bits, cols, pitch_k))
                continue
            rows["LeafRow"].append((k, key, mem, bits))
            frame = self.storage.frames.get(var) if self.storage is not None else None
            if frame is not None:  # (each call's own frame, where the calls disagree)
                rows["CallFrameRow"] += [(k, *call) for call in frame.calls]
            if pitch is not None:
                rows["UnitColRow"].append((k,))  # row-major: one element between columns
                if cols is not None:
                    rows["PitchRow"].append((k, cols))
                rows["PitchIdxRow"].append((k, pitch_k))
            if start is _FRESH:
                rows["FreshRow"].append((k,))
            elif start is not None:
                rows["MemrefRow"].append((k, start_k))
        for table, n, raw in self._raw_pending:
            known = self._raw.get(raw)
            if known is not None:
                rows[table].append((n, known[0]))
        if "ViewEdgeRow" in rows or self._arm_edges:
            rows["ViewEdgeRow"], rows["ArmEdgeRow"] = written_edges(rows, self._arm_edges)
        self.enc.rows = dict(rows)
        return self.enc

    # ------------------------------------------------------------------ scalars
    def scalar_sym(self, var: Var) -> int:
        k = self._sym_of.get(var)
        if k is None:
            self._n = k = self._sym_of[var] = self._n + 1
            key = f"s{k}"
            self.enc.syms[key] = VarRef(var)
            self._rows["IdxSymRow"].append((k, key))
        return k

    def idx(self, e: Expr) -> int:
        """The number ``k`` of the ``(NI k)`` index term of ``e``."""
        t = type(e)
        if t is Const:
            c = e.value if type(e.value) is int else const_int(e)  # type: ignore[attr-defined]
            if c is not None:
                k = self._lit.get(c)
                if k is None:
                    self._n = k = self._lit[c] = self._n + 1
                    self._rows["IdxLitRow"].append((k, c))
                return k
        elif t is VarRef:
            return self.scalar_sym(e.var)  # type: ignore[attr-defined]
        elif t is BinOp and e.op in _IDX_ROWS:  # type: ignore[attr-defined]
            a, b = self.idx(e.lhs), self.idx(e.rhs)  # type: ignore[attr-defined]
            self._n = k = self._n + 1
            self._rows[_IDX_ROWS[e.op]].append((k, a, b))  # type: ignore[attr-defined]
            return k
        # anything else (negation, calls, ...) is an opaque symbol
        name = self.fresh("o")
        self.enc.syms[name] = e
        self.row("IdxSymRow", self._n, name)
        return self._n

    # ------------------------------------------------------------------ tiles
    def tile(self, var: Var) -> int:
        # (a term number is never 0)
        return self.enc.tile_of.get(var) or self.leaf(var)

    def leaf(self, var: Var) -> int:
        """A new ``(NT k)`` leaf for ``var``.  Its key ``t<k>`` and rows wait for :meth:`finish`
        (stated only for a window's base, see there); the index terms they name are numbered
        now, in program order."""
        self._n = k = self._n + 1
        self.enc.tile_of[var] = k
        if self.storage is not None and (var in self.storage.layouts or var in self.storage.frames):
            # a view, carry, merge, ... (or a parameter its calls frame, ir.frames): its layout
            # is its storage's, not its own type's
            frame = self.storage.frames.get(var)
            facts = self.view_facts(var) if frame is None else self.frame_facts(var, frame)
            pitch, start = facts[2], facts[4]
            self._leaf_rows[k] = (var, facts,
                                  self.idx(pitch) if pitch is not None else None,
                                  self.idx(start) if start is not None and start is not _FRESH
                                  else None)
            return k
        t = var.type
        if var in self.params and isinstance(t, TileType) and t.memref is not None:
            # (a parameter is the dense, aligned tile its callers make it, or where its calls
            # frame it: a MemRef its type names is not where a call puts it)
            t = replace(t, memref=None)
        known = self._types.get(id(t))  # (the entry holds ``t``: its id is not reused)
        if known is None or known[0] is not t:
            self.leaf_facts(t)
            known = self._types[id(t)]
        facts, terms = known[1], known[2]
        if terms is None:
            pitch, start = facts[2], facts[4]
            terms = (self.idx(pitch) if pitch is not None else None,
                     self.idx(start) if start is not None and start is not _FRESH else None)
            if constant_idx(pitch) and (start is _FRESH or constant_idx(start)):
                self._types[id(t)] = (t, facts, terms)
        self._leaf_rows[k] = (var, facts, *terms)
        return k

    def base(self, var: Var) -> int:
        """The tile number of the source ``var`` of a window (its leaf's rows are stated)."""
        k = self.tile(var)
        self._bases.add(k)
        return k

    def leaf_facts(self, t: Type | None) -> tuple[str, int, Expr | None, int | None, object]:
        """What a leaf of type ``t`` states: its memory (``?`` unknown), storage bits, row pitch
        (the extent of dim 1 of a 2-d tile, and as an int when constant) and buffer start
        (``_FRESH`` a fresh buffer, a byte-offset index expression, or None: unknown).  Read once
        per type object (kept in ``_types``: values of one shape share theirs)."""
        if not isinstance(t, TileType):
            facts: tuple[str, int, Expr | None, int | None, object] = ("?", 0, None, None, None)
        else:
            pitch = t.shape[1] if t.rank == 2 else None
            m = t.memref
            if m is None or m.is_sentinel:
                start: object = _FRESH
            elif isinstance(m.byte_offset, int):
                start = Const(m.byte_offset) if m.byte_offset >= 0 else None
            else:
                start = m.byte_offset
            facts = (t.memory.value if t.memory is not None else "?", t.dtype.storage_bits,
                     pitch, const_int(pitch) if pitch is not None else None, start)
        self._types[id(t)] = (t, facts, None)
        return facts

    def view_facts(self, var: Var) -> tuple[str, int, Expr | None, int | None, object]:
        """:meth:`leaf_facts` of a value that is not a root of its own (``ir.storage``): its
        memory and storage bits from its type; its row pitch and buffer start from its layout —
        only when that is known and row-major (one element between columns), else none (nothing
        can be proven about it: the conservative outcome)."""
        t = var.type
        if not isinstance(t, TileType):
            return ("?", 0, None, None, None)
        mem, bits = t.memory.value if t.memory is not None else "?", t.dtype.storage_bits
        lay = self.storage.layout(var)  # type: ignore[union-attr]
        pitch = _row_pitch(t, lay.strides) if lay is not None else None
        if pitch is None:
            return (mem, bits, None, None, None)
        frame = self.storage.frames.get(lay.root)  # type: ignore[union-attr]
        root = self.leaf_facts(lay.root.type)[4] if frame is None else self.frame_start(frame)
        off = lay.offset_bytes()
        if off is None or root is None:
            start: object = None
        elif lay.is_zero:
            start = root
        elif root is _FRESH:
            start = off
        else:
            start = BinOp("+", root, off)  # type: ignore[arg-type]
        return (mem, bits, Const(pitch), pitch, start)

    def frame_facts(self, var: Var, frame) -> tuple[str, int, Expr | None, int | None, object]:
        """:meth:`leaf_facts` of a parameter its calls frame (``ir.frames``): its row pitch and
        start as the frame says, a multiple of an unknown where the calls disagree — none
        when its columns are not one element apart (a transposed argument)."""
        t = var.type
        assert isinstance(t, TileType)
        mem, bits = t.memory.value if t.memory is not None else "?", t.dtype.storage_bits
        rows = _row_pitch(t, frame.strides)
        if rows is None:
            return (mem, bits, None, None, None)
        if frame.row_exact:
            return (mem, bits, Const(rows), rows, self.frame_start(frame, var.name))
        pitch = BinOp("*", VarRef(Var(f"{var.name}_pitch")), Const(rows))  # (a multiple of rows)
        return (mem, bits, pitch, None, self.frame_start(frame, var.name))

    def frame_start(self, frame, name: str = "param") -> Expr:
        """The byte a framed parameter starts at: exact, or a multiple of the calls' common
        divisor (of an unknown, one per frame)."""
        if frame.start_exact:
            return Const(frame.start)
        got = self._frame_starts.get(frame)
        if got is None:
            got = self._frame_starts[frame] = BinOp("*", VarRef(Var(f"{name}_start")),
                                                    Const(frame.start))
        return got

    def window(self, stmt: AssignStmt, src: Var, rows: int, cols: int, row_off: Expr,
               col_off: Expr) -> None:
        """A canonical slice (:func:`canonical_slice`) as a ``Win`` term."""
        enc, var = self.enc, stmt.target
        base = enc.tile_of.get(src) or self.leaf(src)  # (:meth:`base` inline)
        self._bases.add(base)
        r, c = self.idx(row_off), self.idx(col_off)
        self._n = name = self._n + 1
        self._rows["WinRow"].append((name, base, r, c, rows, cols))
        w = Window(name, var, stmt, src, rows, cols, enc.window_of.get(src), (row_off, col_off),
                   (r, c))
        enc.windows.append(w)
        enc.tile_of[var] = name
        enc.window_of[var] = w
        enc.roots.append((("RT", name), w))

    def raw_slice(self, stmt: AssignStmt, src: Var, shape: ListExpr, off: ListExpr) -> None:
        """State a valid_shape / drop_dims slice for ``rules.checks``: a ``Win`` term when its
        shape is two constant dims and its offset two indices (otherwise a bare tile number,
        about which nothing can be proven).  The slice's own value stays a leaf."""
        k = self.number()
        dims = [const_int(d) for d in shape.items]
        if len(dims) == 2 and None not in dims and len(off.items) == 2:
            base = self.base(src)
            r, c = self.idx(off.items[0]), self.idx(off.items[1])
            self.row("WinRow", k, base, r, c, dims[0], dims[1])
        self._raw[stmt.target] = (k, stmt)

    # ------------------------------------------------------------------ uses
    def use(self, stmt: Stmt, slot: tuple, e: Expr, ctx: ops.Role | None) -> None:
        if ctx is None or not isinstance(e, VarRef):
            return
        # a col_expand op materializes a valid_shape / drop_dims slice lazily, also through a
        # view of it (set_validshape, ...): its identity copy is checked (rules.checks)
        if ctx is _COLX and self._raw_view and e.var in self._raw_view:
            call = call_of(stmt)
            self.raw_use("RawColxRow", stmt, e.var, call.op if call is not None else "?")
        enc, var = self.enc, e.var
        w = enc.window_of.get(var)
        if w is not None:
            tile = enc.tile_of[var]
        else:
            if ctx is not _LEFT and ctx is not _RIGHT or var not in self._mat_named:
                return
            w = self.cube_fold(var, stmt)  # a view / carry / merge naming one Mat window
            if w is None:
                return
            tile = w.key
        if ctx is ops.Role.HAND_BACK:
            ctx = self.pass_context(stmt, var, tile)
        escape = None
        if ctx is _DENSE and self.storage is not None:
            outs = self.handed_to(stmt, slot, var)
            if outs and not any(self.accessed(d) for d in outs):
                ctx = _DENSE_PASS  # (only windows are taken of the reshaped value)
        if ctx is _ORD and self.storage is not None and slot[0] in _ESCAPES \
                and (slot[0] in _CARRIES or var in self.storage.out_edges):
            ctx, escape = self.escape_context(stmt, slot, var, w)
        self._n = name = self._n + 1
        self._rows["UseRow"].append((name, tile, ctx))
        site = UseSite(name, stmt, slot, var, w, ctx,
                       self._passed.get(tile) if ctx is ops.Role.HAND_BACK else None)
        enc.uses.append(site)
        enc.roots.append((("R", name), site))
        if escape is not None:
            enc.escapes[name] = escape
            if ctx is not ops.Role.CUBE_CALL and self.written_after(escape[0]):
                # a copy here would take the writes made through what it flows into
                enc.keep_only.add(name)
                self._rows["KeepOnlyRow"].append((name,))
        elif ctx is _ORD and self.storage is not None and slot[0] in _ESCAPES:
            stale = self.stale_read(stmt, slot, var)
            if stale is not None:
                # a copy here is a snapshot, and what it flows into is read after the window's
                # storage is written: the read would miss the write
                enc.escapes[name] = stale
                enc.stale.add(name)
                self._rows["StaleEscapeRow"].append((name,))
        if escape is None and ctx is not ops.Role.CUBE_CALL and slot[0] in _ARGS:
            how = self.call_keep(stmt, slot, var)  # (a program function's operand: calls)
            if how is not None:
                enc.call_keep[name] = how
                self._rows["CallKeepRow"].append((name,))
        if slot[0] == "return" and var in self._keep_returned:
            # (its callers take windows of it where it lies: a copy would move them)
            enc.view_only[name] = var
            self._rows["ViewOnlyRow"].append((name,))
        elif ctx is not _PASS and ctx is not ops.Role.CUBE_CALL and self._judged:
            outs = self.handed_to(stmt, slot, var)
            if slot[0] in _ARGS:  # (and what a program function hands back of it)
                outs = outs + self.call_results(stmt, var)
            elif slot[0] == "alias":
                outs = [stmt.target]  # type: ignore[attr-defined]
            dst = next((d for d in outs if d in self._judged), None)
            if dst is not None:
                # windows of what it flows into are judged at its address as written: a copy
                # here would move what they name (and take their writes)
                enc.view_only[name] = dst
                self._rows["ViewOnlyRow"].append((name,))

    def escape_context(self, stmt: Stmt, slot: tuple, var: Var, w: Window
                       ) -> tuple[ops.Role, tuple[Var, Stmt, Var] | None]:
        """The context of window ``w`` escaping at ``slot`` of ``stmt`` (a loop initializer, a
        yield, the operand of a same-layout view such as ``set_validshape``, of a write-back or
        of a call whose result shares its storage: ``Storage.escapes``) into a value that
        later reaches a consumer the window itself would have met: a ``col_expand`` operand
        materializes it lazily just the same (#1640 / #2010), so it must stay an identity copy
        and an aligned view or be copied here (``CALL``: dense and aligned); a matmul operand
        would materialize a Mat window Mat->Mat, and no copy can stand in (``CUBE_CALL``: a
        rejection); a reshape reads it from its first element as a dense tile (``DENSE``: dense
        and aligned, or copied here); a program function that reads the tile as one of its own
        (windows of it at its own pitch, a reshape: ``CALL`` / ``HAND_BACK``) needs it dense and
        aligned just the same (``CALL``: the value it gets is no window, so nothing is checked
        at the call itself).  Otherwise an ordinary use."""
        t = w.var.type
        mat = isinstance(t, TileType) and t.memory is MemorySpace.Mat
        dsts = self.storage.escapes(stmt, slot, var)  # type: ignore[union-attr]
        arms = self.yield_arm(stmt, slot, var)
        for dst in dsts:
            need = self.demand(dst, arms)
            for roles, ctx, ok in ((_CUBE, ops.Role.CUBE_CALL, mat),
                                   (_COLX_LIKE, ops.Role.CALL, True),
                                   (_DENSE_LIKE, ops.Role.DENSE, True)):
                hit = next(((r, c, x) for r, c, x in need if r in roles), None)
                if hit is not None and ok:
                    return ctx, (dst, hit[1], hit[2])
        if self.hands_on(stmt, slot):
            outs = self.handed_to(stmt, slot, var)
            if outs and not any(self.accessed(d, arms) for d in outs):
                # nothing reads or writes what it flows into as a whole: only windows of it,
                # judged at their own addresses from its storage as written
                return _PASS, None
        return _ORD, None

    def yield_arm(self, stmt: Stmt, slot: tuple, var: Var) -> frozenset:
        """The branch a yield at ``slot`` of ``stmt`` hands ``var`` on by, when it ends an arm of
        an ``if`` testing a condition of the scalar parameters (``Storage.arm``): what the ``if``'s
        result then flows into is reached along that arm only."""
        if slot[0] != "yield":
            return frozenset()
        block = self.fx.points[stmt].path[-1]
        owner = self.fx.blocks[block] if block < len(self.fx.blocks) else None
        arm = branch_arm(self.fx, owner, var, slot[1]) if owner is not None else None
        return frozenset({arm}) if arm is not None else frozenset()

    def handed_to(self, stmt: Stmt, slot: tuple, var: Var) -> list[Var]:
        """The values use ``slot`` of ``stmt`` defines from ``var``'s storage without copying
        it: a loop's iter-arg (or result), an ``if`` result, a view's result (any view: a
        reshape's too) or a write-back's."""
        kind = slot[0]
        if kind in _CARRIES:
            return self.storage.escapes(stmt, slot, var)  # type: ignore[union-attr]
        if kind != "arg" and kind != "kwarg":
            return []
        return [e.dst for e in self.storage.out_edges.get(var, ())  # type: ignore[union-attr]
                if e.stmt is stmt and (e.kind is _VIEW or e.kind is Share.WRITEBACK)]

    @staticmethod
    def hands_on(stmt: Stmt, slot: tuple) -> bool:
        """Whether use ``slot`` of ``stmt`` only hands its value on without touching its bytes:
        a loop initializer, a yield, the operand of a view that keeps the elements where they
        are (``set_validshape``, ``transpose_view``; not a reshape, which reads them densely)."""
        if slot[0] in _CARRIES:
            return True
        call = call_of(stmt)
        op = ops.lookup(call.op) if call is not None else None
        return op is not None and _in_place_view(op)

    def cube_fold(self, var: Var, stmt: Stmt) -> Window | None:
        """The Mat window a matmul operand ``var`` of ``stmt`` is, when it is not the slice
        itself but a value whose storage is known to be exactly that window's (a
        ``set_validshape`` view of it, a carry or merge of it whose every incoming value agrees):
        the operand then folds into a ``tile.extract`` of the window into Left / Right as the
        slice itself would (the window must be visible there).  Otherwise None."""
        st, fx = self.storage, self.fx
        lay = st.layouts.get(var) if st is not None else None
        t = var.type
        if lay is None or not isinstance(t, TileType):
            return None
        p = fx.point(stmt)
        for o in sorted(st.origins.get(var, ()), key=lambda x: fx.defs[x][0]):  # type: ignore[union-attr]
            w = self.enc.window_of.get(o)
            if w is None or w.var is not o or not fx.visible(o, p.pos, p.path):
                continue
            ot = o.type
            if isinstance(ot, TileType) and const_shape(ot) == const_shape(t) \
                    and const_shape(t) is not None and st.layout(o) == lay:  # type: ignore[union-attr]
                return w
        return None

    def stale_read(self, stmt: Stmt, slot: tuple, var: Var) -> tuple[Var, Stmt, Var] | None:
        """A read that a copy made at this escape use (a loop initializer, a yield, a
        same-layout view's or a storage-sharing call's operand) would serve stale: a value the
        window flows into (``ir.storage`` edges of every kind, slices of it included) read by
        a statement that ``var``'s storage may be written before, after the escape — later in
        program order, or in a later iteration of a loop around both.  (The value the copy
        stands for, the consumer statement, the operand read), or None."""
        fx, st = self.fx, self.storage
        p = fx.point(stmt)
        for dst in st.escapes(stmt, slot, var):  # type: ignore[union-attr]
            seen, todo = {dst}, [dst]
            while todo:
                v = todo.pop()
                for read in self.reads_of(v):
                    q = fx.point(read)
                    if q.pos > p.pos:
                        hit = fx.written_before_use(var, p.pos, p.loops, read)
                    else:  # (reached again through a loop around both: any write in it)
                        common = [lp for lp in q.loops if lp in p.loops or lp == p.pos]
                        hit = bool(common) and fx.written_in(var, common[-1],
                                                             fx.loop_end(common[-1]))
                    if hit:
                        return dst, read, v
                for e in st.out_edges.get(v, ()):  # type: ignore[union-attr]
                    if e.dst not in seen:
                        seen.add(e.dst)
                        todo.append(e.dst)
        return None

    def reads_of(self, v: Var) -> list[Stmt]:
        """The statements reading tile ``v`` as an operand of an op or a program function, or
        returning it (built once per function)."""
        if self._reads is None:
            self._reads = reads = defaultdict(list)
            for s in self.fx.stmts:
                if s is None:
                    continue
                if isinstance(s, ReturnStmt):
                    vals = [x.var for x in s.values if type(x) is VarRef]
                else:
                    call = call_of(s)
                    vals = [] if call is None else \
                        [a.var for _k, a in call_operands(call) if type(a) is VarRef]  # type: ignore[attr-defined]
                for x in vals:
                    if isinstance(x.type, TileType):
                        reads[x].append(s)
        return self._reads.get(v, [])

    def written_after(self, dst: Var) -> bool:
        """Whether anything ``dst`` flows into may be written in place (a registry write-back, an
        op the registry cannot classify, a program function)."""
        if self._written_vars is None:
            self._written_vars = {w.var for w in self.fx.writes}
        written = self._written_vars
        return any(v in written for v in self.storage.flows_to(dst))  # type: ignore[union-attr]

    def accessed(self, dst: Var, arms: frozenset = frozenset()) -> bool:
        """Whether anything ``dst`` reaches (as :meth:`demand`) is read or written as a whole:
        an operand of any op but a slice, a same-layout view or a scalar one-element access, or
        returned to the callers."""
        self.demand(dst)
        accessed = self._accessed
        return any(v in accessed for v in self.storage.flows_to(dst, False, self._framed_call, arms))  # type: ignore[union-attr]

    def demand(self, dst: Var, arms: frozenset = frozenset()) -> list[tuple[ops.Role, Stmt, Var]]:
        """The operand roles of everything ``dst`` reaches (``ir.storage``: aliases,
        write-backs, carries, merges, same-layout views; ``arms``: reached by those branches,
        ``Storage.flows_to``), with the consumer and the operand."""
        if self._roles_of is None:
            self._roles_of = roles = {}
            self._accessed = accessed = set()
            fx = self.fx
            for s in fx.stmts:
                if type(s) is ReturnStmt:  # read by the callers, as a whole
                    accessed.update(a.var for a in s.values if type(a) is VarRef)  # type: ignore[attr-defined]
                    # (what a window handed into a returned carry, merge or view must satisfy)
                    for _, a, uses in self.returned_uses(s):
                        if uses:
                            roles.setdefault(a.var, []).append((role_of(uses), s, a.var))  # type: ignore[attr-defined]
                    continue
                call = call_of(s) if s is not None else None
                if call is None:
                    continue
                op = ops.lookup(call.op)
                for k, a in call_operands(call):
                    if type(a) is VarRef and isinstance(a.var.type, TileType):  # type: ignore[attr-defined]
                        if op is None and self.framed(call.op, k):
                            # only windows are taken of it, each judged where it lies by the
                            # function its calls frame (ir.frames)
                            continue
                        if op is None or not (op.window is not None or _in_place_view(op)
                                              or op.family is ops.Family.SCALAR):
                            # read or written as a whole (not a window taken of it, a view
                            # handing it on, or one element at its address)
                            accessed.add(a.var)  # type: ignore[attr-defined]
                        r = self.context(call.op, k)
                        if (r is _LEFT or r is _RIGHT) and self.cube_fold(a.var, s) is not None:  # type: ignore[attr-defined]
                            continue  # (folded into an extract there: the slice's own use)
                        if r is not None:
                            roles.setdefault(a.var, []).append((r, s, a.var))  # type: ignore[attr-defined]
        out: list[tuple[ops.Role, Stmt, Var]] = []
        for v in self.storage.flows_to(dst, skip=self._framed_call, arms=arms):  # type: ignore[union-attr]
            out += self._roles_of.get(v, ())
        return out

    def returned_uses(self, s: ReturnStmt) -> list[tuple[int, VarRef, frozenset[str]]]:
        """Each tile value ``s`` returns, with its position and how the callers use it
        (egraph.calls ``result_uses``; nothing for a function with no caller in the program)."""
        program, name = self.program, self.function
        known = program is not None and name is not None
        windowed = known and result_windowed(program, name)  # type: ignore[arg-type]
        return [(i, v, result_uses(program, name, i if len(s.values) > 1 else None, windowed)  # type: ignore[arg-type]
                 if known else frozenset())
                for i, v in enumerate(s.values)
                if type(v) is VarRef and isinstance(v.var.type, TileType)]  # type: ignore[attr-defined]

    def _framed_call(self, e: Edge) -> bool:
        """Whether ``e`` is a framed call's result edge (:meth:`framed_edge`): what the caller
        does with the result is the function's return to judge, where the window lies."""
        return e.kind is Share.CALL and self.framed_edge(e)

    def alias(self, dst: Var, src: Var) -> None:
        """``dst`` names ``src``'s tile: the same tile term, window and slice facts."""
        self.enc.tile_of[dst] = self.tile(src)
        w = self.enc.window_of.get(src)
        if w is not None:
            self.enc.window_of[dst] = w
        if src in self._raw_view:  # (a program function's returned parameter: ir.storage
            self._raw_view.setdefault(dst, self._raw_view[src])  # has no edge for it yet)
        if src in self._raw_kept:
            self._raw_kept.setdefault(dst, self._raw_kept[src])

    def edge(self, dst: Var, src: Var) -> None:
        """``dst`` lives in ``src``'s storage: a write into ``dst`` is a write into ``src`` (two
        tiles)."""
        tile_of = self.enc.tile_of  # (:meth:`tile` inline, ``dst`` numbered first)
        row = (tile_of.get(dst) or self.leaf(dst), tile_of.get(src) or self.leaf(src))
        self._rows["ViewEdgeRow"].append(row)  # (the table listed after its leaves' index rows)

    def edges(self, s: Stmt, kinds: tuple[Share, ...]) -> None:
        """The storage edges of ``s`` (``ir.effects``; between two tiles: :func:`stated`) of
        the given kinds, as facts.  An if merge taking its value on one arm of a condition of
        the scalar parameters (``Storage.arm``) waits for :func:`written_edges`, which states it for
        the writes whose routes take it."""
        for e in self._edges.get(s, ()):
            if e.kind in kinds:
                arm = self.storage.arm(e) if e.kind is Share.IF_RESULT and self.storage else None
                if arm is None:
                    self.edge(e.dst, e.src)
                else:
                    tile_of = self.enc.tile_of
                    self._arm_edges.append((tile_of.get(e.dst) or self.leaf(e.dst),
                                            tile_of.get(e.src) or self.leaf(e.src), arm))

    def effects(self, stmt: Stmt) -> None:
        """Memory-effect facts for ``rules.checks``: each tile operand a registered op writes
        back into, and the storage edge from a view's (or a write-back's) result to its source.
        Each tile operand of an op the registry cannot classify is stated as ``MayWriteRow``: it
        may be written, so a window it reaches stays only as a proven aligned view."""
        for w in self._writes.get(stmt, ()):  # (of tiles: :func:`stated`)
            if w.opaque and self.is_program_call(w.op):
                continue  # (a program function's writes come from its summary: call_writes)
            # (the site's key is the row's number, taken before tile() may number a new leaf)
            k = self.number()
            if w.opaque:  # an unclassified op may write it: (MayWriteRow n t), never assumed read-only
                self.row("MayWriteRow", k, self.tile(w.var))
                self.enc.unclassified.append(WriteSite(k, stmt, w.var, w.op))
            elif ops.lookup(w.op).family is ops.Family.SCALAR:  # (a registered write)
                # a scalar store (tile.write): one element, no alignment to prove, never copied
                self.row("ScalarWriteRow", k, self.tile(w.var))
            else:
                self.row("WriteRow", k, self.tile(w.var))
                self.enc.writes.append(WriteSite(k, stmt, w.var, w.op))
                if w.var.type.memory is not MemorySpace.Acc \
                        and self.context(w.op, w.index if isinstance(w.index, int) else None) is None:
                    # an operand with no use context (a matmul accumulator) is never rewritten:
                    # the write lands in the window itself (rules.checks ``WrittenAsIs``; only a
                    # Vec window needs its proof: none is stated for a declared Acc one)
                    self.row("AsIsWriteRow", k, self.tile(w.var))
        # (a call's edges are its write-back and view edges; only a view's may join a non-tile)
        for e in self._edges.get(stmt, ()):
            dst, src = e.dst, e.src
            if e.kind is Share.CALL and self.framed_edge(e):
                # (the function proved the windows it hands back where they lie: a write through
                # the result is tracked into the argument, no view proof asked of it)
                self._rows["FramedEdgeRow"].append((self.tile(dst), self.tile(src)))
                continue
            if e.kind is not _VIEW:
                self.edge(dst, src)
                continue
            if isinstance(dst.type, TileType) and isinstance(src.type, TileType):
                self.edge(dst, src)

    # ------------------------------------------------------------------ statements
    # (ir.mutator.StmtVisitor: any other statement kind has its nested bodies visited)
    def visit_EvalStmt(self, s: EvalStmt) -> None:
        self.call_uses(s, s.call)

    def visit_ForStmt(self, s: ForStmt | WhileStmt) -> None:
        window_of = self.enc.window_of  # (as :meth:`visit_YieldStmt`)
        for i, v in enumerate(s.init_values):
            if type(v) is VarRef and v.var in window_of:  # type: ignore[attr-defined]
                self.use(s, ("init", i), v, _ORD)
        self.edges(s, _LOOP_INIT)
        if isinstance(s, ForStmt):
            row = (self.scalar_sym(s.loop_var), self.idx(s.start), self.idx(s.step))
            self._rows["LoopRow"].append(row)  # (after its index terms' rows, as :meth:`row`)
        self.visit_body(s.body)
        self.edges(s, _LOOP_ENDS)

    visit_WhileStmt = visit_ForStmt

    def visit_IfStmt(self, s: IfStmt) -> None:
        self.visit_body(s.then_body)
        self.visit_body(s.else_body)
        self.edges(s, _IF_RESULT)

    def visit_YieldStmt(self, s: YieldStmt) -> None:
        window_of = self.enc.window_of  # (an ordinary use states something only of a window)
        for i, v in enumerate(s.values):
            if type(v) is VarRef and v.var in window_of:  # type: ignore[attr-defined]
                self.use(s, ("yield", i), v, _ORD)

    def visit_ReturnStmt(self, s: ReturnStmt) -> None:
        """A returned window escapes to the callers: a use in the context their uses of the
        result give it (egraph.calls ``result_uses``; an ordinary use when the function has no
        caller in the program).  When a caller writes through the result, or may write the
        result's storage after the call, the window is also written (``result_written``): it
        must stay the view itself — and so must each window a returned merge, carry or view may
        name."""
        window_of = self.enc.window_of
        written = None
        program, name = self.program, self.function
        windowed = program is not None and name is not None and result_windowed(program, name)
        for i, v, uses in self.returned_uses(s):
            # (any other tile — a merge, a carry, a view — is no use here; a write through the
            # result reaches the windows it may name through its storage edges, as one here)
            if v.var in window_of and windowed and self.param_window(v.var):  # type: ignore[attr-defined]
                # a caller takes windows of the result where it lies as written (or a function
                # its calls frame does): the window itself must be returned, asked only what
                # the callers do with the result as a whole (nothing: passed on as it is)
                self._keep_returned.add(v.var)  # type: ignore[attr-defined]
                self.use(s, ("return", i), v, role_of(uses) if uses else _PASS)
            elif v.var in window_of:  # type: ignore[attr-defined]
                self.use(s, ("return", i), v, role_of(uses))
            if written is None:
                written = program is not None and name is not None \
                    and result_written(program, name) and not windowed
            if written or uses & {"write", "acc"}:
                n = self.number()
                self.row("WriteRow", n, self.tile(v.var))  # type: ignore[attr-defined]
                self.enc.writes.append(WriteSite(n, s, v.var, _RETURNED))  # type: ignore[attr-defined]

    def param_window(self, var: Var) -> bool:
        """Whether ``var`` is known to lie in one of the function's tile parameters (its layout's
        root, ``ir.storage``): only then does a caller know where a returned ``var`` lies (the
        call's result is that window of the argument); it takes any other result for a fresh,
        dense, aligned tile, which the return must make true."""
        lay = self.storage.layout(var) if self.storage is not None else None
        return lay is not None and lay.root in self.params

    def visit_body(self, body: list[Stmt]) -> None:
        visit_assign, visit, kinds = self.visit_AssignStmt, self.visit, self._kinds_visit
        for s in body:
            if type(s) is AssignStmt:  # the common case, without the visitor's dispatch
                visit_assign(s)
            else:  # (the other kinds this class visits by exact type: no method lookup)
                method = kinds.get(type(s))
                if method is None:
                    visit(s)
                else:
                    method(self, s)

    def visit_AssignStmt(self, s: AssignStmt) -> None:
        v = s.value
        if type(v) is Call:
            if v.op == "tile.slice":
                parts = canonical_slice(v)
                if parts is not None:  # (unpacked here: a call with ``*parts`` costs ~0.2 us more)
                    src, rows, cols, row_off, col_off = parts
                    self.window(s, src, rows, cols, row_off, col_off)
                    return
                raw = raw_slice_parts(v)
                if raw is not None:
                    self.raw_slice(s, *raw)
                return
            if v.op == "tile.extract" and v.args and isinstance(v.args[0], VarRef):
                w = self.enc.window_of.get(v.args[0].var)
                if w is not None and len(v.args) >= 3:
                    i, j = self.idx(v.args[1]), self.idx(v.args[2])
                    name = self.number()
                    self.row("ExtRow", name, self.enc.tile_of[v.args[0].var], i, j)
                    site = ExtSite(name, s, w)
                    self.enc.exts.append(site)
                    self.enc.roots.append((("R", name), site))
                return
            if self.call_uses(s, v):  # a program function, which may return a parameter
                k = self.returned_param(v.op)
                a = self.program_operand(v, k) if k is not None else None
                if a is not None and isinstance(a.type, TileType):
                    # the function returns its parameter k: the result is the argument's tile
                    self.alias(s.target, a)
            return
        if type(v) is TupleItem:
            # ``pair[k]`` of a program function's result: the argument's tile itself when the
            # function returns exactly that there (its CALL edge, ir.effects), else its edges
            if s in self._effects_at:
                self.effects(s)
            src = whole_source(self._edges.get(s, ()), s.target)
            if src is not None:
                self.alias(s.target, src)
            return
        if isinstance(v, VarRef) and isinstance(v.var.type, TileType):
            # a plain alias names the same tile; it is also an escape of a window (passed on as
            # it is when a function its calls frame takes windows of it where it lies, or when
            # windows of it are judged where it lies and nothing reads or writes it whole)
            t = s.target
            self.use(s, ("alias",), v, _PASS if t in self._framed_aliases or t in self._judged
                     and not self.accessed(t) else _ORD)
            self.alias(s.target, v.var)
            return
        if isinstance(s.target.type, ScalarType) or isinstance(v, (Const, BinOp, VarRef)):
            # a scalar SSA definition or alias: unioned with what it names
            self.enc.scalar_defs[s.target] = v
            sym = self.scalar_sym(s.target)
            self.row("SymDefRow", sym, self.idx(v))


def encode_function(fn: Function, fx: Effects | None = None,
                    program: Program | None = None, storage: Storage | None = None) -> Encoding:
    """The load-table rows of ``fn`` (its memory effects ``fx`` computed when not given, and
    its storage facts (``ir.storage``); calls of ``program``'s functions are summarized by
    :mod:`egraph.calls`)."""
    fx = fx if fx is not None else function_effects(fn, call_summaries(program))
    enc = Encoder(fx, program, storage if storage is not None else storage_of(fn, fx))
    enc.function, enc.params = fn.name, {p.var for p in fn.params}
    enc.visit_body(fn.body)
    out = enc.finish()
    out.storage = enc.storage
    return out
