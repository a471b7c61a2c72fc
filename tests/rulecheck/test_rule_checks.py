"""Symbolic checks of the rules: each arithmetic rewrite and known-multiple / alignment
transfer function is proved with z3, and a deliberately wrong rule gets a counterexample."""

from __future__ import annotations

import pytest

from egraph_tiles.rulecheck.check import Checker, window_completeness
from egraph_tiles.rulecheck.collect import _rules_of, collect
from egraph_tiles.egraph.sexp import parse_sexps

RULES, SIGS = collect()
BY_NAME = {(r.module, r.name): r for r in RULES}


def check_text(text: str, module: str = "multiples"):
    (rule,) = _rules_of(module, parse_sexps(text))
    return Checker(SIGS).check(rule)


def test_rule_collection_reads_text_and_python_rulesets() -> None:
    modules = {r.module for r in RULES}
    assert {"offsets", "multiples", "layout", "legality", "slices", "arith"} <= modules


@pytest.mark.parametrize("name", [n for (m, n) in BY_NAME if m == "offsets"])
def test_offset_rewrite_is_an_identity(name: str) -> None:
    v = Checker(SIGS).check(BY_NAME[("offsets", name)])
    assert v.status == "proved", v


@pytest.mark.parametrize("name", ["mult-zero", "mult-symbol", "mult-add", "mult-sub", "mult-mul",
                                  "mult-loop-var"])
def test_known_multiple_transfer_function_is_sound(name: str) -> None:
    v = Checker(SIGS).check(BY_NAME[("multiples", name)])
    assert v.status == "proved", v


@pytest.mark.parametrize("name", ["peel-chained-slice", "fold-slice-into-extract",
                                  "vec-operand-extract", "matmul-left-operand-extract"])
def test_slice_rules_preserve_the_window_and_legality(name: str) -> None:
    v = Checker(SIGS).check(BY_NAME[("slices", name)])
    assert v.status == "proved", v


def test_wrong_multiple_of_a_sum_gets_a_counterexample() -> None:
    # a + b is a multiple of gcd, not of the larger multiple: 2 | 2 and 4 | 4 but 4 ∤ 6
    wrong = check_text('(rule ((= e (Add a b)) (= ma (Mult a)) (= mb (Mult b))) '
                       '((set (Mult e) (max ma mb))) :ruleset multiples :name "mult-add-wrong")')
    assert wrong.status == "counterexample", wrong
    right = check_text('(rule ((= e (Add a b)) (= ma (Mult a)) (= mb (Mult b))) '
                       '((set (Mult e) (min ma mb))) :ruleset multiples :name "mult-add-right")')
    assert right.status == "proved", right


def test_wrong_offset_identity_gets_a_counterexample() -> None:
    v = check_text('(rewrite (Sub (Lit 0) x) x :ruleset offsets :name "zero-sub-wrong")', "offsets")
    assert v.status == "counterexample" and "x=" in v.detail, v


def test_view_without_alignment_proof_is_rejected_by_the_legality_spec() -> None:
    v = check_text('(rule ((= u (Use w "ord")) (= w (Win b r c h wd)) (MemOf w "Vec")) '
                   '((union u (Keep w))) :ruleset legality :name "view-everything")', "legality")
    assert v.status == "counterexample", v


@pytest.mark.parametrize("name", ["w-noncontiguous", "w-noncontiguous-mid-block"])
def test_acc_window_rejection_is_a_window_the_nz_write_garbles(name: str) -> None:
    v = Checker(SIGS).check(BY_NAME[("windows", name)])
    assert v.status == "proved", v


def test_acc_window_rules_reject_every_window_the_nz_write_garbles() -> None:
    v = window_completeness(RULES, SIGS)
    assert v.status == "proved", v


def test_seed_rule_without_the_mid_block_tightening_misses_a_garbled_window() -> None:
    lax = [r for r in RULES if r.name != "w-noncontiguous-mid-block"]
    v = window_completeness(lax, SIGS)
    assert v.status == "counterexample" and "col=" in v.detail, v


def test_rejecting_a_block_aligned_full_row_window_gets_a_counterexample() -> None:
    v = check_text('(rule ((w_probe p rows cols c) (w_acc_parent p rows) (>= c 0) (> cols 0) '
                   '(!= (/ c 16) (/ (+ c (- cols 1)) 16))) ((w_noncontig p rows cols c)) '
                   ':ruleset windows :name "w-reject-full-rows")', "windows")
    assert v.status == "counterexample", v


def test_nki_integers_are_the_tile_idx_sort() -> None:
    # one integer sort: the NKI layer's constructors of Lit / Add / Sub / Mul are the tile pass's
    # own (same names, same signatures), so the checker gives each one meaning
    from egglog import EGraph

    from egraph_tiles.rules import sorts
    from egraph_tiles.rules.arith import Num, var
    from egraph_tiles.rulecheck.collect import Signatures

    eg = EGraph(save_egglog_string=True)
    eg.register(Num(1) + var("i") * Num(2) - var("j"))
    nki, tile = Signatures(), Signatures()
    nki.add_decls(parse_sexps(eg.as_egglog_string))
    tile.add_decls(parse_sexps(sorts.IDX_SCHEMA))
    for ctor in ("Lit", "Add", "Sub", "Mul"):
        assert (nki.args[ctor], nki.out[ctor]) == (tile.args[ctor], tile.out[ctor]) == \
            (tile.args[ctor], "Idx"), ctor


def test_tile_offset_rules_fold_nki_built_terms() -> None:
    # the tile pass's offsets ruleset runs unchanged over terms the NKI layer builds:
    # (i*16 + 8) - 8 = i*16 (collect-add-sub, add-zero-r)
    from egglog import EGraph, eq

    from egraph_tiles.rules import offsets
    from egraph_tiles.rules.arith import Num, var

    eg = EGraph()
    i = var("i")
    before, after = (i * Num(16) + Num(8)) - Num(8), i * Num(16)
    eg.register(before, after)
    raw = eg._state.egraph
    raw.run_program(*raw.parse_program(offsets.RULES + "(run-schedule (saturate (run offsets)))"))
    eg.check(eq(before).to(after))


def test_rules_serving_several_clients_are_checked_once() -> None:
    # the tile pass and the Acc windows both compose offsets / multiples: one check per rule
    from egraph_tiles.rulecheck.check import clients

    used = clients()
    assert used["offsets"] == used["multiples"] == "tile pass, Acc windows"
    assert used["windows"] == "Acc windows" and used["arith"] == used["affine"] == "NKI layer"
    names = [r.name for r in RULES if r.module in ("offsets", "multiples", "windows")]
    assert len(names) == len(set(names))
    assert not [n for n in names if n.startswith(("w-mult", "w-fold", "w-add-zero"))]
