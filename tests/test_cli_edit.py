"""Source-preserving rewriting: `optimize` edits only the statements the pass changes.

Every other byte of the user's file stays as written (comments, docstrings, blank lines,
module constants, annotations, names); the edited text reads back as the pass's output; and
optimizing it again changes nothing."""

import difflib
from pathlib import Path

import pytest
from hypothesis import given, settings
from strategies import program_texts

import egraph_tiles as et
from benchmarks.corpus import FAMILIES, MIXED, generate
from egraph_tiles.cli import main
from egraph_tiles.dsl.edit import EditError, edit_source

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))

COMMENTED = '''"""A kernel with the things a reprint would lose."""

import pypto.language as pl

ROWS = 16
COLS = 16


@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
               out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        """Scale column 1, double the right half."""
        local = pl.tile.load(x, [0, 0], [ROWS, COLS], target_memory=pl.Mem.Vec)  # whole tile

        # column 1 starts 4 bytes in: not aligned
        head = pl.tile.slice(local, [ROWS, 1], [0, 1])
        scaled = pl.tile.muls(head, 0.5)
        aligned = pl.tile.slice(local, [ROWS, 8], [0, 8])   # 32 bytes in: a view
        doubled = pl.tile.muls(aligned, 2.0)
        out = pl.store(doubled, [0, 0], out)
        return out
'''

EDITED = COMMENTED.replace(
    "        head = pl.tile.slice(local, [ROWS, 1], [0, 1])\n"
    "        scaled = pl.tile.muls(head, 0.5)\n",
    # ROWS and COLS are both 16: which one a 16 means is ambiguous, so it stays a literal
    "        head_ext = pl.tile.extract(local, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)\n"
    "        scaled = pl.tile.muls(head_ext, 0.5)\n")

VIEW_ONLY = COMMENTED.replace(
    "        # column 1 starts 4 bytes in: not aligned\n"
    "        head = pl.tile.slice(local, [ROWS, 1], [0, 1])\n"
    "        scaled = pl.tile.muls(head, 0.5)\n", "")


def optimized(text: str, name: str = "k.py") -> tuple[et.Program, str]:
    before = et.parse_program(text, name)
    after = et.optimize(before)
    return after, edit_source(text, before, after, name)


def test_a_copy_is_written_in_place_of_its_slice_and_the_operand_renamed():
    assert optimized(COMMENTED)[1] == EDITED


def test_in_place_keeps_every_comment_docstring_constant_and_blank_line(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(COMMENTED)
    assert main(["optimize", str(f), "--in-place"]) == 0
    assert f.read_text() == EDITED


def test_in_place_keeps_every_comment_line_of_the_rmsnorm_example(tmp_path, capsys):
    src = (ROOT / "examples" / "rmsnorm_heads.py").read_text()
    f = tmp_path / "rmsnorm_heads.py"
    f.write_text(src)
    assert main(["optimize", str(f), "--in-place"]) == 0
    out = f.read_text()
    comments = [line for line in src.splitlines() if line.strip().startswith("#")]
    assert len(comments) >= 4 and all(c in out.splitlines() for c in comments)
    assert out.startswith('"""RMSNorm of one attention head') and "\nHEAD_DIM = 32\n" in out


def test_check_passes_a_kernel_whose_only_slice_stays_a_view(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(VIEW_ONLY)
    assert main(["optimize", str(f), "--check"]) == 0


def test_check_fails_a_kernel_the_pass_would_change(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(COMMENTED)
    assert main(["optimize", str(f), "--check"]) == 1
    assert f.read_text() == COMMENTED


def test_canonical_flag_reprints_the_whole_program(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(COMMENTED)
    assert main(["optimize", str(f), "--canonical"]) == 0
    out = capsys.readouterr().out
    assert out == et.print_program(et.optimize(et.parse_program(COMMENTED)))
    assert "# column 1" not in out and "ROWS" not in out


def test_a_dropped_slice_leaving_a_body_empty_leaves_pass():
    text = COMMENTED.replace(
        "        out = pl.store(doubled, [0, 0], out)\n",
        "        for i in pl.range(4):\n"
        "            dead = pl.tile.slice(local, [ROWS, 1], [0, 1])\n"
        "        out = pl.store(doubled, [0, 0], out)\n")
    after, out = optimized(text)
    assert "            pass\n" in out and "dead" not in out
    assert et.structural_equal(et.parse_program(out), after)


def test_a_new_name_the_function_already_uses_gets_a_fresh_one():
    text = COMMENTED.replace("doubled", "head_ext")
    after, out = optimized(text)
    assert "head_ext_1 = pl.tile.extract(local, 0, 1" in out
    assert "scaled = pl.tile.muls(head_ext_1, 0.5)" in out
    assert et.structural_equal(et.parse_program(out), after)


def test_a_copy_read_through_a_plain_alias_takes_the_alias_line_and_keeps_its_comment():
    text = COMMENTED.replace(
        "        scaled = pl.tile.muls(head, 0.5)\n",
        "        h = head  # the first column\n"
        "        scaled = pl.tile.muls(h, 0.5)\n")
    after, out = optimized(text)
    assert "head = pl.tile.slice" not in out and "head_ext" not in out
    assert ("        h = pl.tile.extract(local, 0, 1, shape=[16, 1], target_memory=pl.Mem.Vec)"
            "  # the first column\n        scaled = pl.tile.muls(h, 0.5)\n") in out
    assert et.structural_equal(et.parse_program(out), after)


def test_an_edit_that_would_not_read_back_falls_back_to_the_canonical_printer(tmp_path):
    # two statements on one line: no whole-line edit removes one of them
    text = COMMENTED.replace(
        "        head = pl.tile.slice(local, [ROWS, 1], [0, 1])\n",
        "        head = pl.tile.slice(local, [ROWS, 1], [0, 1]); z = pl.tile.muls(local, 1.0)\n")
    with pytest.raises(EditError):
        optimized(text)
    f = tmp_path / "k.py"
    f.write_text(text)
    res, = et.optimize_files(str(f), jobs=1)
    assert res.ok and res.written == "canonical" and "one statement" in res.note


def _corpus():
    for f in EXAMPLES:
        yield pytest.param(f.read_text(), id=f.name)
    for fam in [*FAMILIES, MIXED]:
        k = generate(fam, 30, 0)
        yield pytest.param(k.text, id=k.name)


def _changed_lines(text: str, out: str) -> set[int]:
    sm = difflib.SequenceMatcher(a=text.splitlines(), b=out.splitlines(), autojunk=False)
    return {i + 1 for tag, i1, i2, _, _ in sm.get_opcodes() if tag != "equal"
            for i in range(i1, i2)}


@pytest.mark.parametrize("text", list(_corpus()))
def test_untouched_lines_stay_byte_identical_and_the_edit_reads_back_as_the_pass_output(text):
    before = et.parse_program(text, "k.py")
    after = et.optimize(before)
    out = edit_source(text, before, after, "k.py")
    assert et.structural_equal(et.parse_program(out, "k.py"), after)
    # only lines of statements the pass did not keep are touched
    kept = {id(s) for f in after.functions for s in et.ir.stmts.walk(f.body)}
    own = set()  # a statement's lines; a loop or if: its header line only
    for f in before.functions:
        for s in et.ir.stmts.walk(f.body):
            if id(s) not in kept:
                own.add(s.span.line)
    assert _changed_lines(text, out) <= own | {0}


@pytest.mark.parametrize("text", list(_corpus()))
def test_optimizing_the_edited_file_changes_nothing(text):
    _, out = optimized(text)
    assert optimized(out)[1] == out


# --------------------------------------------------------------------------- property


def _with_comments(text: str) -> str:
    """``text`` with a comment line before and a trailing comment after every statement of
    its function bodies (what a reprint would lose)."""
    out = []
    for line in text.splitlines():
        body = line.startswith("        ") and not line.strip().startswith(("@", "def "))
        if body and not line.rstrip().endswith(":"):
            ind = line[:len(line) - len(line.lstrip())]
            out += [f"{ind}# note", f"{line}  # why"]
        else:
            out.append(line)
    return "\n".join(out) + "\n"


@settings(max_examples=25)
@given(program_texts(max_stmts=10))
def test_random_programs_edit_only_what_changes_read_back_and_are_stable(text):
    text = _with_comments(text)
    try:
        before = et.parse_program(text, "k.py")
        after = et.optimize(before)
    except ValueError:  # a program the optimizer rejects has nothing to edit
        return
    out = edit_source(text, before, after, "k.py")
    assert et.structural_equal(et.parse_program(out, "k.py"), after)
    assert out.count("# note\n") == text.count("# note\n")  # no comment line lost
    assert optimized(out)[1] == out
