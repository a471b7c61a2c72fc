"""The e-graph vocabulary of the tile-slice canonicalization (egglog text).

Sorts
-----
``Idx``   scalar index expressions: ``(Lit 16)``, ``(Sym "v12")`` (a parameter, loop variable or
          opaque scalar, named by its encoder key), ``Add`` / ``Sub`` / ``Mul``.  Scalar SSA
          definitions and plain aliases are *unioned* with what they name, so every proof sees
          through them.
``Tile``  tile values: ``(Leaf "v3")`` for any non-window value (facts: memory, pitch, storage bits,
          address multiple) and ``(Win base row col rows cols)`` for a canonical 3-argument
          ``tile.slice(base, [rows, cols], [row, col])``.
``Real``  how one use of a tile is realized in the output program:
          ``(Use tile ctx)`` is the use site itself (never extracted); rules make it equal to
          ``(Keep tile)`` (pass the value as is — a zero-copy view for a window) or
          ``(Copy tile mem)`` (a fresh ``tile.extract(base, r, c, shape, target_memory=mem)``).
          ``(Ext src row col)`` is an existing ``tile.extract`` statement's source and indices.
``Roots`` a balanced binary tree of everything to extract for one function (never a Vec root).

``NT`` / ``NR`` / ``NRoot`` name terms by number (never extracted).  They replace global ``let``
bindings, each of which is a table of its own in egglog: thousands of them made loading and
saturation quadratic in time and memory.

Contexts (from the op registry, never op names): ``"ord"`` ordinary call operand and the SSA
escapes (alias, loop init, yield), ``"colx"`` a ``Family.COL_EXPAND`` operand, ``"left"`` /
``"right"`` a matmul-family ``left_arg`` / ``right_arg`` operand.

Costs: a window node is expensive (1000) so a folded / peeled form with one statement fewer wins;
``Copy`` gets its byte cost (rows * cols * storage bits / 8) from the ``cost_table_Copy`` table set
by the rule that creates it; ``Keep`` costs 0 bytes.
"""

CAP = 1 << 30  # known multiples are capped here (powers of two; products stay inside i64)

SCHEMA = """
(datatype Idx
  (Lit i64)
  (Sym String :cost 2)
  (Add Idx Idx)
  (Sub Idx Idx)
  (Mul Idx Idx))
(datatype Tile
  (NT i64 :unextractable)
  (Leaf String)
  (Win Tile Idx Idx i64 i64 :cost 1000))
(datatype Real
  (NR i64 :unextractable)
  (Keep Tile)
  (Copy Tile String)
  (Ext Tile Idx Idx)
  (Use Tile String :unextractable))
(datatype Roots
  (NRoot i64 :unextractable)
  (R Real)
  (RT Tile)
  (RI Idx)
  (RP Roots Roots))
(function cost_table_Copy (Tile String) i64 :merge (min old new))
"""
