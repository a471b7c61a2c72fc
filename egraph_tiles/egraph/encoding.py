"""What encoding one function yields (:func:`egraph.encode.encode_function`): the load-table rows
and the sites they number — windows, uses, escapes, writes — that the checks, the decoder and the
cost model read back by those numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import ops
from ..ir.exprs import Const, Expr, Var
from ..ir.storage import Storage
from ..ir.stmts import AssignStmt, Stmt


@dataclass(eq=False, slots=True)
class Window:
    """A canonical 3-argument ``tile.slice`` statement and its ``Win`` term."""

    key: str
    var: Var
    stmt: AssignStmt
    src: Var
    rows: int
    cols: int
    parent: "Window | None"
    #: its own (row, column) offset expressions and the numbers ``k`` of their ``(NI k)`` terms
    offsets: tuple[Expr, Expr] = (Const(0), Const(0))
    offset_terms: tuple[int, int] = (0, 0)

    def chain(self) -> list["Window"]:
        """The windows from the root slice (over a non-slice base) down to this one."""
        out = [self]
        while out[-1].parent is not None:
            out.append(out[-1].parent)
        return out[::-1]

    @property
    def root(self) -> "Window":
        """The root slice of :meth:`chain` (by the parent links, without building the chain)."""
        w = self
        while w.parent is not None:
            w = w.parent
        return w


@dataclass(eq=False, slots=True)
class UseSite:
    """One operand of one statement that resolves to a window, in a registry context."""

    key: str
    stmt: Stmt
    slot: tuple  # ("arg", i) | ("kwarg", name) | ("alias",) | ("init", i) | ("yield", i)
    var: Var
    window: Window
    ctx: ops.Role
    #: (HAND_BACK only) the window the called function hands back of it: ``((rows, cols), (row
    #: offset, column offset))`` in the operand
    passed: tuple | None = None


@dataclass(eq=False, slots=True)
class ExtSite:
    """A ``tile.extract`` statement whose source resolves to a window."""

    key: str
    stmt: AssignStmt
    window: Window


@dataclass(eq=False, slots=True)
class RawSliceUse:
    """An operand that is a ``tile.slice`` with valid_shape / drop_dims (not a window the pass
    rewrites; checked by ``rules.checks``): a col_expand operand (``Encoding.raw_colx``), or an
    operand of an ordinary vector op (registry family VECTOR), directly or through a view of it
    such as set_validshape (``Encoding.raw_vec``: its address must be proven aligned, #1789)."""

    key: int
    slice_stmt: AssignStmt
    var: Var
    consumer: Stmt
    op: str


@dataclass(eq=False, slots=True)
class WriteSite:
    """An operand a registered op writes back into (registry ``reuses_arg``): write ``key``
    lands in ``var``'s storage (checked by ``rules.checks``, never rewritten)."""

    key: int
    stmt: Stmt
    var: Var
    op: str


@dataclass
class Encoding:
    #: rows of the load tables (rules.sorts.LOAD turns them into terms and facts)
    rows: dict[str, list[tuple]] = field(default_factory=dict)
    windows: list[Window] = field(default_factory=list)
    uses: list[UseSite] = field(default_factory=list)
    exts: list[ExtSite] = field(default_factory=list)
    #: Sym / Leaf key -> what it names (a Var, or an opaque scalar expression)
    syms: dict[str, Expr] = field(default_factory=dict)
    leaves: dict[str, Var] = field(default_factory=dict)
    #: number ``k`` of the ``(NT k)`` tile term of each tile var
    tile_of: dict[Var, int] = field(default_factory=dict)
    window_of: dict[Var, Window] = field(default_factory=dict)
    #: scalar var -> its SSA definition expression
    scalar_defs: dict[Var, Expr] = field(default_factory=dict)
    raw_colx: list[RawSliceUse] = field(default_factory=list)
    writes: list[WriteSite] = field(default_factory=list)
    #: tile operands of ops the registry cannot classify (they may write them)
    unclassified: list[WriteSite] = field(default_factory=list)
    raw_vec: list[RawSliceUse] = field(default_factory=list)
    #: (("R" | "RT", k), the Window / UseSite / ExtSite it belongs to), in program order
    roots: list[tuple[tuple[str, int], object]] = field(default_factory=list)
    #: an escape use (loop initializer, yield, same-layout view operand) whose context the
    #: value's later consumers decided (:meth:`Encoder.escape_context`): use key -> (the value
    #: it flows into, the consumer statement, the operand there)
    escapes: dict[int, tuple[Var, Stmt, Var]] = field(default_factory=dict)
    #: the escape uses that must stay a view (what they flow into is written: ``KeepOnlyRow``)
    keep_only: set[int] = field(default_factory=set)
    #: the ordinary escape uses that must stay a view (what they flow into is read after the
    #: window's storage is written: ``StaleEscapeRow``)
    stale: set[int] = field(default_factory=set)
    #: the escape uses that must stay a view because windows of what they flow into are judged
    #: at the window's address as written (``ViewOnlyRow``): use key -> the value it flows into
    view_only: dict[int, Var] = field(default_factory=dict)
    #: the program-function call operands that must stay a view (the callee writes the tile, or
    #: the caller writes through the call's result: ``CallKeepRow``): use key -> the write, in
    #: words (``rules.calls``)
    call_keep: dict[int, str] = field(default_factory=dict)
    #: the program-function call operands that are no window but name part of one, checked to
    #: be the dense, aligned tile the function assumes (``CallValueRow``, ``rules.calls``)
    call_values: list[WriteSite] = field(default_factory=list)
    #: those of :attr:`call_values` whose function only hands a window of them back
    call_handed: set[int] = field(default_factory=set)
    #: the function's storage facts (``ir.storage``): the messages name a value's route
    storage: Storage | None = None
