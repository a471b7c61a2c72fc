"""The ``load`` rules (``rules.sorts``) turn rows into terms and facts: a leaf's single
``FreshLeafRow`` states exactly what its ``LeafRow``, ``PitchRow``, ``PitchIdxRow``,
``UnitColRow`` and ``FreshRow`` state."""

from egraph_tiles.egraph import schedule
from egraph_tiles.egraph.bindings import eb
from egraph_tiles.rules import sorts

LEAF = {"IdxLitRow": [(2, 64)]}


def _loaded(rows: dict[str, list[tuple]]) -> tuple[eb.EGraph, dict[str, int]]:
    """A prepared e-graph with ``rows`` loaded, and the tuples of each table but the rows'."""
    eg = schedule.new_egraph()
    schedule.load_tables(eg, {**LEAF, **rows})
    loaded = {sorts.TAGGED.get(t, (t,))[0] for t in {**LEAF, **rows}}  # (the relations they fill)
    sizes = {name: n for out in eg.run_program(eb.PrintSize(schedule.SPAN, None))
             for name, n in getattr(out, "sizes", []) if n and name not in loaded}
    return eg, sizes


def test_one_fresh_leaf_row_states_every_fact_of_the_four_leaf_rows():
    one, one_sizes = _loaded({"FreshLeafRow": [(1, "t1", "Vec", 32, 64, 2)]})
    four, four_sizes = _loaded({"LeafRow": [(1, "t1", "Vec", 32)], "PitchRow": [(1, 64)],
                                "PitchIdxRow": [(1, 2)], "FreshRow": [(1,)], "UnitColRow": [(1,)]})
    try:
        assert one_sizes == four_sizes
        assert {"Leaf", "MemOf", "Bits", "Pitch", "PitchIdx", "FreshAlloc", "UnitCols"} <= set(one_sizes)
        facts = ('(check (= (NT 1) (Leaf "t1")) (MemOf (NT 1) "Vec") (= (Bits (NT 1)) 32)'
                 ' (= (Pitch (NT 1)) 64) (PitchIdx (NT 1) (Lit 64)) (FreshAlloc (NT 1)) (UnitCols (NT 1)))')
        for eg in (one, four):
            eg.run_program(*eg.parse_program(facts))  # (a fact missing raises)
    finally:
        schedule.release(one)
        schedule.release(four)


def test_two_integer_tables_sharing_a_relation_state_only_their_own_facts():
    # StableRow and HoistRoomRow are both rows of In_ii, told apart by their tags
    eg, _ = _loaded({"StableRow": [(1, 7)], "HoistRoomRow": [(2, 7)]})
    try:
        assert sorts.TAGGED["StableRow"][0] == sorts.TAGGED["HoistRoomRow"][0] == "In_ii"
        eg.run_program(*eg.parse_program("(check (Stable (NT 1) 7) (HoistRoom (NT 2) 7))"))
        eg.run_program(*eg.parse_program("(fail (check (Stable (NT 2) 7)))"
                                         " (fail (check (HoistRoom (NT 1) 7)))"))
    finally:
        schedule.release(eg)



def test_index_tables_of_one_column_signature_share_a_relation_and_state_their_own_terms():
    # k = 5 + 3, k - 3, k * 3 and a loop variable are rows of In_iii, the literals and an SSA
    # alias rows of In_ii (as the pitch facts); IdxSymRow, alone in its signature, is its own table
    rows = {"IdxLitRow": [(3, 5), (4, 3)], "IdxAddRow": [(5, 3, 4)], "IdxSubRow": [(6, 5, 4)],
            "IdxMulRow": [(7, 5, 4)], "SymDefRow": [(8, 7)], "IdxSymRow": [(9, "v")],
            "LoopRow": [(9, 3, 4)]}
    assert {sorts.TAGGED[t][0] for t in ("IdxAddRow", "IdxSubRow", "IdxMulRow", "LoopRow")} == {
        "In_iii"}
    assert sorts.TAGGED["IdxLitRow"][0] == sorts.TAGGED["SymDefRow"][0] == "In_ii"
    assert "IdxSymRow" not in sorts.TAGGED
    eg = schedule.new_egraph()
    try:
        schedule.load_tables(eg, rows)
        eg.run_program(*eg.parse_program(
            "(check (= (NI 5) (Add (Lit 5) (Lit 3))) (= (NI 6) (Sub (NI 5) (Lit 3)))"
            " (= (NI 8) (Mul (NI 5) (Lit 3))) (= (NI 9) (Sym \"v\"))"
            " (LoopVar (Sym \"v\") (Lit 5) (Lit 3)))"))
        # each row states only its own table's term: no sum is a difference or a product
        eg.run_program(*eg.parse_program("(fail (check (= (NI 5) (NI 6))))"
                                         " (fail (check (= (NI 5) (NI 7))))"
                                         " (fail (check (= (NI 6) (NI 7))))"))
    finally:
        schedule.release(eg)


def test_row_tables_of_one_column_signature_share_a_relation_and_a_lone_table_keeps_its_own():
    tables = {"A": "i64 i64", "B": "i64 String", "C": "i64  i64", "D": "i64 i64 i64"}
    tagged = sorts.shared_relations(tables, "X_")
    assert tagged == {"A": ("X_ii", 1), "C": ("X_ii", 2)}
    assert sorts.shared_declarations(tables, tagged) == "(relation X_ii (i64 i64 i64))\n"
