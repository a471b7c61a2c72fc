"""Our real-program corpus in PyPTO's printed form (``tests/corpus/pypto/*.py``, one kernel per
file, written for this project in the shapes real models use) goes through parse -> optimize ->
print -> parse unchanged in meaning, and both the printing and the pass are idempotent."""

from pathlib import Path

import pytest

import egraph_tiles as et

CORPUS = sorted((Path(__file__).parent / "pypto").glob("*.py"))
#: programs the verifier rejects today although PyPTO accepts them at this pipeline point
VERIFIER_GAPS: dict[str, str] = {}


def test_the_corpus_has_the_shapes_real_models_use():
    names = {p.name for p in CORPUS}
    assert {"nd_load_flattened.py", "assemble_accumulator.py", "split_kernel_func_attr.py",
            "memref_after_alloc.py", "batch_matmul_unrolled.py", "scalar_min_bounds.py"} <= names


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_parse_optimize_print_parse(path):
    prog = et.parse_program(path.read_text(), filename=str(path))
    opt = et.optimize(prog)
    printed = et.print_program(opt)
    again = et.parse_program(printed, filename="printed.py")
    et.assert_structural_equal(again, opt)
    assert et.print_program(again) == printed
    assert et.print_program(et.optimize(again)) == printed  # nothing left to rewrite


@pytest.mark.parametrize("path", [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=VERIFIER_GAPS[p.name]))
    if p.name in VERIFIER_GAPS else p for p in CORPUS], ids=lambda p: p.stem)
def test_the_verifier_accepts_the_program_and_its_optimized_form(path):
    prog = et.parse_program(path.read_text(), filename=str(path))
    et.verify_program(prog)
    et.verify_program(et.optimize(prog))
