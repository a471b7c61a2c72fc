"""An extracted term dag as nested tuples (``extract.termdag_to_tuple``): every node built from its
finished children, whatever its number of arguments, literals unwrapped, shared subterms equal."""

from egraph_tiles.egraph.bindings import eb
from egraph_tiles.egraph.extract import termdag_to_tuple


def test_term_dag_becomes_nested_tuples_of_any_arity():
    td = eb.TermDag()
    three, name = td.lit(eb.Int(3)), td.lit(eb.String("t1"))
    leaf = td.app("Leaf", [name])  # one argument
    win = td.app("Win", [leaf, three, three, three])  # four
    pair = td.app("RP", [win, leaf])  # two, the leaf shared with the window
    root = td.app("Roots", [pair])
    assert termdag_to_tuple(td, root) == (
        "Roots", ("RP", ("Win", ("Leaf", "t1"), 3, 3, 3), ("Leaf", "t1")))


def test_a_nullary_node_is_a_one_element_tuple():
    td = eb.TermDag()
    unit = td.app("Nil", [])
    assert termdag_to_tuple(td, td.app("Cons", [unit, unit])) == ("Cons", ("Nil",), ("Nil",))
