"""The e-graph vocabulary of the tile-slice canonicalization (egglog text).

Sorts
-----
``Idx``   scalar index expressions: ``(Lit 16)``, ``(Sym "v12")`` (a parameter, loop variable or
          opaque scalar, named by its encoder key), ``Add`` / ``Sub`` / ``Mul`` and the
          quasi-affine ``FloorDiv`` / ``Mod`` (``//`` / ``%``, rounding toward -inf like Python;
          ``rules.multiples`` states what is known of them whatever the rounding).  Scalar SSA
          definitions and plain aliases are *unioned* with what they name, so every proof sees
          through them.  The project's one integer sort: the Acc-window check states its offsets
          in it too (``rules.windows``), and the NKI layer's syntax (``rules.arith.Num``) is this
          sort with the same ``Lit`` / ``Add`` / ``Sub`` / ``Mul``, plus constructors only the NKI
          e-graph builds (a keyed ``Var``, ``Neg``, ``OfLin``).  Each
          client composes the rulesets it needs: the tile pass ``offsets`` + ``multiples``, the
          Acc windows the same plus its own, the NKI layer the normal form of ``rules.arith``
          with substitution and bounds (``rules.affine``).
``Tile``  tile values: ``(Leaf "v3")`` for a non-window value a window is taken of (facts: memory,
          pitch, storage bits, address multiple) and ``(Win base row col rows cols)`` for a
          canonical 3-argument ``tile.slice(base, [rows, cols], [row, col])``.  Any other tile
          (the other end of a storage edge, a written tile) is only its name ``(NT k)``: the
          rules read a leaf's facts only through a window over it (``egraph.encode``).  ``(CopyBuf k)`` is the copy a Vec window
          ``k`` got at its definition (a fresh aligned buffer, pitch = the window's column count);
          it enters the e-graph only through a gate fact of the second round (``rules.slices``).
``Real``  how one use of a tile is realized in the output program:
          ``(Use tile ctx)`` is the use site itself (never extracted); rules make it equal to
          ``(Keep tile ctx)`` (pass the value as is — a zero-copy view for a window) or
          ``(Copy tile mem ctx)`` (a fresh ``tile.extract(base, r, c, shape, target_memory=mem)``).
          Both carry the context: a term shared by two contexts would merge their use classes,
          and a view proven for one context would leak into the other.  The decoder still
          emits one copy per (window, memory).
          ``(Ext src row col)`` is an existing ``tile.extract`` statement's source and indices.
``Roots`` a balanced tree of everything to extract for one function (never a Vec root), nodes of
          :data:`ROOT_ARITY` children: ``RPR`` over uses and extract terms (``Real``), ``RPT``
          over windows (``Tile``), ``RU`` over nodes; a node short of children repeats its last
          one (``extract.RootTree`` says how many are its own).  No wrapper per root and no
          union naming it as a root: a node holds the roots' own classes (``(NR k)`` /
          ``(NT k)``), uses and windows in nodes of their own (``extract.root_terms`` puts them
          back in the program's order).  The declaration order is for egglog's extractor,
          which relaxes every row of every reachable constructor, pass after pass
          until no cost changes, taking the sorts in the order a breadth-first walk from the root
          sort first meets them and a sort's constructors in their declared order: ``RI`` (an
          ``Idx`` root, never built) first makes it meet ``Idx``, then ``Tile``, ``Real``
          (children before the terms built over them); the nodes over roots before ``RU`` cost
          every node before the nodes over it (a node over roots is rewritten, moved to its
          table's end, whenever its roots' classes merge).  So one pass costs every term: 3
          passes, the last finding nothing to lower, instead of 6 at 1,000 statements.

``NT`` / ``NR`` / ``NRoot`` name terms by number (never extracted).  They replace global ``let``
bindings, each of which is a table of its own in egglog: thousands of them made loading and
saturation quadratic in time and memory.

Contexts (``ir.ops.Role``, read from the op registry, never op names; rules interpolate
``Role.X.egg``): ``ORD`` an ordinary call operand and the SSA escapes (alias, loop init, yield),
``COLX`` a ``Family.COL_EXPAND`` operand, ``LEFT`` / ``RIGHT`` a matmul-family ``left_arg`` /
``right_arg`` operand.

Costs: a window node is expensive (1000) so a folded / peeled form with one statement fewer wins;
``Copy`` gets its byte cost (rows * cols * storage bits / 8) from the ``cost_table_Copy`` table set
by the rule that creates it, raised to bytes × executions by ``rules.hoist`` (merge: max); ``Keep`` costs 0 bytes; ``CopyBuf`` costs 2 (one more than a
``Leaf``), so on a tie the form reading the source wins.
"""

from collections.abc import Callable

#: children of one node of the extraction root tree (``egraph.schedule.root_tree``): a wide
#: tree has few inner nodes (at 1,000 statements ~72 instead of ~500 for a binary one)
ROOT_ARITY = 8

#: The integer sort every client shares: the tile pass (``rules.offsets``, ``rules.multiples``) and
#: the Acc-window check (``rules.windows``, which composes those rulesets with its own).
IDX_SCHEMA = """
(datatype Idx
  (NI i64 :unextractable)
  (Lit i64)
  (Sym String :cost 2)
  (Add Idx Idx)
  (Sub Idx Idx)
  (Mul Idx Idx)
  (FloorDiv Idx Idx)
  (Mod Idx Idx))
"""

SCHEMA = IDX_SCHEMA + f"""
(datatype Tile
  (NT i64 :unextractable)
  (Leaf String)
  (CopyBuf i64 :cost 2)
  (Win Tile Idx Idx i64 i64 :cost 1000))
(datatype Real
  (NR i64 :unextractable)
  (Keep Tile String)
  (Copy Tile String String)
  (Ext Tile Idx Idx)
  (Use Tile String :unextractable))
(datatype Roots
  (NRoot i64 :unextractable)
  (RI Idx)
  (RPT {" ".join(["Tile"] * ROOT_ARITY)})
  (RPR {" ".join(["Real"] * ROOT_ARITY)})
  (RU {" ".join(["Roots"] * ROOT_ARITY)}))
(function cost_table_Copy (Tile String String) i64 :merge (max old new))
"""

#: The index operators with an ``Idx`` constructor of their own (the DSL's spelling -> the
#: constructor); each arrives as rows of the table ``Idx<constructor>Row`` (:func:`idx_table`)
#: and the decoder spells a constructor back with the same table.  Any other operator is opaque.
IDX_OPS = {"+": "Add", "-": "Sub", "*": "Mul", "//": "FloorDiv", "%": "Mod"}


def idx_table(op: str) -> str:
    """The row table of index operator ``op`` (a key of :data:`IDX_OPS`)."""
    return f"Idx{IDX_OPS[op]}Row"


#: Index expressions arrive as rows of primitive tables (bulk-loaded with egglog's ``input``):
#: each index table with its column types.
IDX_TABLES = {"IdxLitRow": "i64 i64", "IdxSymRow": "i64 String",
              **{idx_table(op): "i64 i64 i64" for op in IDX_OPS}, "SymDefRow": "i64 i64",
              "LoopRow": "i64 i64 i64"}


def _idx_load(read: Callable[[str], str]) -> str:
    """The rules stating the index rows as ``Idx`` terms, logical table ``T`` read as
    ``(read(T) ...)``."""
    operators = "".join(
        f'(rule (({read(idx_table(op))} k a b)) ((union (NI k) ({c} (NI a) (NI b)))) '
        f':ruleset load :name "load-{c.lower()}")\n' for op, c in IDX_OPS.items())
    return f"""
(ruleset load)
(rule (({read("IdxLitRow")} k c)) ((union (NI k) (Lit c))) :ruleset load :name "load-literal")
(rule (({read("IdxSymRow")} k s)) ((union (NI k) (Sym s))) :ruleset load :name "load-symbol")
{operators}; a scalar SSA definition or alias is unioned with what it names
(rule (({read("SymDefRow")} s d)) ((union (NI s) (NI d))) :ruleset load :name "load-ssa-definition")
(rule (({read("LoopRow")} v s t)) ((LoopVar (NI v) (NI s) (NI t))) :ruleset load :name "load-loop-var")
"""


#: The index tables and the rules stating them as ``Idx`` terms (ruleset ``load``; every client
#: of ``Idx`` loads its integers through them, after ``rules.multiples`` declared ``LoopVar``):
#: each table declared as itself.  The Acc-window check loads renamed copies of these tables
#: (``rules.windows``); the tile pass reads them from its tagged relations (:data:`TILE_IDX_LOAD`).
IDX_LOAD = "".join(f"(relation {t} ({cols}))\n" for t, cols in IDX_TABLES.items()) + _idx_load(str)

def shared_relations(tables: dict[str, str], prefix: str) -> dict[str, tuple[str, int]]:
    """The row tables (name -> column types, ``"i64 String"``) that share their column types
    with another: ``(relation, tag)``, one relation per column signature named ``prefix`` + the
    signature (``i`` an integer column, ``s`` a string one), whose first column is the tag (1,
    2, ... in the order given).  A table alone in its signature is not listed: nothing to share.
    The engine's row tables (:data:`TAGGED`) and the Acc-window check's (``rules.windows``) are
    grouped by this one rule."""
    groups: dict[str, list[str]] = {}
    for name, cols in tables.items():
        groups.setdefault(" ".join(cols.split()), []).append(name)
    return {name: (prefix + "".join("i" if t == "i64" else "s" for t in cols.split()), tag)
            for cols, names in groups.items() if len(names) > 1
            for tag, name in enumerate(names, 1)}


def shared_declarations(tables: dict[str, str], tagged: dict[str, tuple[str, int]]) -> str:
    """The declarations of the relations ``tagged`` (from :func:`shared_relations`) reads
    ``tables`` from: the tag column, then the tables' columns."""
    relations = {tagged[t][0]: " ".join(cols.split()) for t, cols in tables.items() if t in tagged}
    return "".join(f"(relation {r} (i64 {cols}))\n" for r, cols in relations.items())


#: The engine's row tables of primitive columns, with their column types.  Those that share
#: their column types share one relation per column signature (:func:`shared_relations`:
#: ``In_ii``, ``In_iii``), whose first column names the logical table (its tag).  A function's
#: rows of all the tables of a signature are one ``input`` command, and the prepared e-graph
#: declares one table for them (an ``input`` costs ~15 µs whatever its size, and push
#: + pop copy every declared table, ~8-16 µs each).  Rows are not padded to a wider relation: the
#: tables keep their own widths, so the e-graph holds exactly the tuples the separate tables
#: held.  The encoders still state the logical tables (``PitchRow``, ...); ``schedule.load_tables``
#: maps each to its ``(relation, tag)`` with :data:`TAGGED`, and a rule reads logical table ``T``
#: as ``({row("T")} a b)``.  Not ``RootNodeRow`` (uncounted: ``schedule.ROOT_TABLES``); the tables
#: alone in their signature (``IdxSymRow``, ``WinRow``, ``UseRow``, ...) stay as they are.
ROW_TABLES = {**{t: "i64 i64" for t in (
    "PitchRow", "PitchIdxRow", "MemrefRow",  # leaf facts (LOAD below)
    "UseLoopRow", "UseWeightRow", "LoopWeightRow", "StableRow", "SymStableRow",  # rules.hoist
    "HoistRoomRow",
    "RawColxRow", "WriteRow", "ScalarWriteRow", "ViewEdgeRow", "RawVecRow", "MayWriteRow",
    "AsIsWriteRow", "FramedEdgeRow")},  # rules.checks
    "ArmEdgeRow": "i64 i64 i64",  # rules.checks
    **IDX_TABLES}
TAGGED = shared_relations(ROW_TABLES, "In_")


def row(table: str) -> str:
    """The head of an atom reading logical row table ``table``: ``In_ii 3`` for a table of
    :data:`TAGGED`, else the table itself."""
    relation, tag = TAGGED.get(table, (table, None))
    return relation if tag is None else f"{relation} {tag}"


#: :data:`IDX_LOAD` as the tile pass's program holds it (what ``schedule.load_tables`` fills from
#: the logical index tables): the shared relations and the index tables alone in their signature
#: declared, the same rules reading each table through :func:`row`
TILE_IDX_LOAD = shared_declarations(ROW_TABLES, TAGGED) + "".join(
    f"(relation {t} ({cols}))\n" for t, cols in IDX_TABLES.items() if t not in TAGGED
) + _idx_load(row)


_KIDS = " ".join(f"a{i}" for i in range(ROOT_ARITY))


def _kids(name: str) -> str:
    return " ".join(f"({name} {a})" for a in _KIDS.split())


#: The rest of the program arrives the same way: tiles, uses and roots as terms and leaf facts —
#: one pass, no decision made here.  Each row is one rule match and a few tuples, so a
#: leaf (a window's base) that is a 2-d tile with a constant row pitch in a fresh buffer (nearly
#: every leaf) is one ``FreshLeafRow`` stating all its facts; any other leaf is a ``LeafRow`` plus
#: a row per fact it has.  The extraction root tree's nodes (``(NRoot n)``, negative numbers,
#: never a term number) come from ``schedule.root_tree``, over the roots' own terms.
LOAD = TILE_IDX_LOAD + f"""
(relation LeafRow (i64 String String i64))
(relation FreshLeafRow (i64 String String i64 i64 i64))
(relation FreshRow (i64))
(relation UnitColRow (i64))
(relation WinRow (i64 i64 i64 i64 i64 i64))
(relation UseRow (i64 i64 String))
(relation ExtRow (i64 i64 i64 i64))
(relation RootNodeRow ({" ".join(["i64"] * (ROOT_ARITY + 2))}))
(rule ((LeafRow k key mem bits)) ((union (NT k) (Leaf key)) (MemOf (NT k) mem) (set (Bits (NT k)) bits))
      :ruleset load :name "load-leaf")
; the facts of LeafRow, PitchRow (constant pitch c), PitchIdxRow (pitch index e) and FreshRow in one
(rule ((FreshLeafRow k key mem bits c e))
      ((union (NT k) (Leaf key)) (MemOf (NT k) mem) (set (Bits (NT k)) bits) (set (Pitch (NT k)) c)
       (PitchIdx (NT k) (NI e)) (FreshAlloc (NT k)) (UnitCols (NT k)))
      :ruleset load :name "load-fresh-leaf")
; a leaf whose storage is known row-major (``ir.storage``): one element between its columns
(rule ((UnitColRow k)) ((UnitCols (NT k))) :ruleset load :name "load-unit-columns")
(rule (({row("PitchRow")} k c)) ((set (Pitch (NT k)) c)) :ruleset load :name "load-pitch")
(rule (({row("PitchIdxRow")} k e)) ((PitchIdx (NT k) (NI e))) :ruleset load :name "load-pitch-index")
(rule ((FreshRow k)) ((FreshAlloc (NT k))) :ruleset load :name "load-fresh-allocation")
(rule (({row("MemrefRow")} k e)) ((MemrefBytes (NT k) (NI e))) :ruleset load :name "load-memref")
(rule ((WinRow k b r c h w)) ((union (NT k) (Win (NT b) (NI r) (NI c) h w)))
      :ruleset load :name "load-window")
(rule ((UseRow k t ctx)) ((union (NR k) (Use (NT t) ctx)))
      :ruleset load :name "load-use")
(rule ((ExtRow k t i j)) ((union (NR k) (Ext (NT t) (NI i) (NI j))))
      :ruleset load :name "load-extract")
; a node of the root tree: over uses and extract terms (0), over windows (1), over nodes (2)
(rule ((RootNodeRow 0 n {_KIDS})) ((union (NRoot n) (RPR {_kids("NR")})))
      :ruleset load :name "load-root-use-node")
(rule ((RootNodeRow 1 n {_KIDS})) ((union (NRoot n) (RPT {_kids("NT")})))
      :ruleset load :name "load-root-window-node")
(rule ((RootNodeRow 2 n {_KIDS})) ((union (NRoot n) (RU {_kids("NRoot")})))
      :ruleset load :name "load-root-upper-node")
"""
