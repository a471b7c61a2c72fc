"""The ``load`` rules (``rules.sorts``) turn rows into terms and facts: a leaf's single
``FreshLeafRow`` states exactly what its ``LeafRow``, ``PitchRow``, ``PitchIdxRow`` and
``FreshRow`` state."""

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
                                "PitchIdxRow": [(1, 2)], "FreshRow": [(1,)]})
    try:
        assert one_sizes == four_sizes
        assert {"Leaf", "MemOf", "Bits", "Pitch", "PitchIdx", "FreshAlloc"} <= set(one_sizes)
        facts = ('(check (= (NT 1) (Leaf "t1")) (MemOf (NT 1) "Vec") (= (Bits (NT 1)) 32)'
                 ' (= (Pitch (NT 1)) 64) (PitchIdx (NT 1) (Lit 64)) (FreshAlloc (NT 1)))')
        for eg in (one, four):
            eg.run_program(*eg.parse_program(facts))  # (a fact missing raises)
    finally:
        schedule.release(one)
        schedule.release(four)


def test_two_integer_tables_sharing_a_relation_state_only_their_own_facts():
    # StableRow and HoistRoomRow are both rows of sorts.PAIRS, told apart by their tags
    eg, _ = _loaded({"StableRow": [(1, 7)], "HoistRoomRow": [(2, 7)]})
    try:
        assert sorts.TAGGED["StableRow"][0] == sorts.TAGGED["HoistRoomRow"][0] == sorts.PAIRS
        eg.run_program(*eg.parse_program("(check (Stable (NT 1) 7) (HoistRoom (NT 2) 7))"))
        eg.run_program(*eg.parse_program("(fail (check (Stable (NT 2) 7)))"
                                         " (fail (check (HoistRoom (NT 1) 7)))"))
    finally:
        schedule.release(eg)

