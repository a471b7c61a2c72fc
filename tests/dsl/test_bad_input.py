"""Malformed DSL text gives a DslError with file, line, column and what was expected."""

import random
import string
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seed_kernels import SEED_KERNELS
from strategies import program_texts

import egraph_tiles as et
from egraph_tiles import DslError
import dslkit

PARAMS = "x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX]"
HEAD = dslkit.kernel(PARAMS, """
t = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
""")


def kernel(*lines: str) -> str:
    return dslkit.extended(HEAD, *lines)


def parse_error(text: str) -> DslError:
    with pytest.raises(DslError) as info:
        et.parse_program(text, filename="bad.py")
    err = info.value
    assert err.file == "bad.py"
    assert str(err).startswith(f"bad.py:{err.line}:{err.col}: ")
    return err


def test_empty_file_is_rejected_at_line_1():
    err = parse_error("")
    assert (err.line, err.col) == (1, 1)
    assert "@pl.program" in err.message


def test_whitespace_only_file_is_rejected():
    assert "empty input" in parse_error("\n   \n\t\n").message


def test_unbalanced_bracket_reports_where_it_opened():
    err = parse_error(kernel("u = pl.tile.muls(t, 0.5"))
    assert err.line == 8
    assert "never closed" in err.message


def test_unknown_pl_op_suggests_the_close_match():
    err = parse_error(kernel("u = pl.tile.mulss(t, 0.5)"))
    assert (err.line, err.col) == (8, 13)
    assert "pl.tile.muls" in err.message


def test_unknown_pl_loop_construct_is_rejected():
    err = parse_error(kernel("for i in pl.loop(4):", "    u = pl.tile.muls(t, 0.5)"))
    assert err.line == 8 and "pl.range" in err.message


def test_unknown_dtype_suggests_the_close_match():
    err = parse_error(kernel("c = pl.tile.create([16, 16], pl.FP33)"))
    assert "pl.FP32" in err.message


def test_unknown_memory_space_lists_the_valid_ones():
    err = parse_error(kernel("c = pl.tile.create([16, 16], pl.FP32, target_memory=pl.Mem.L2)"))
    assert "pl.Mem.Vec" in err.message


def test_loop_with_more_carried_names_than_init_values_is_rejected():
    err = parse_error(kernel("for i, (a, b) in pl.range(4, init_values=(t,)):",
                             "    c = pl.yield_(a)"))
    assert "mismatched carries" in err.message and err.line == 8


def test_yield_arity_differing_from_the_loop_carries_is_rejected():
    err = parse_error(kernel("for i, (a,) in pl.range(4, init_values=(t,)):",
                             "    c, d = pl.yield_(a, a)"))
    assert "mismatched carries" in err.message and err.line == 9


def test_loop_with_carries_but_no_yield_is_rejected():
    err = parse_error(kernel("for i, (a,) in pl.range(4, init_values=(t,)):",
                             "    u = pl.tile.muls(a, 0.5)"))
    assert "pl.yield_" in err.message


def test_string_where_a_shape_is_expected_is_rejected():
    err = parse_error(kernel('s = pl.tile.slice(t, "16x8", [0, 0])'))
    assert err.line == 8 and "shape" in err.message


def test_string_in_a_parameter_shape_is_rejected():
    text = HEAD.replace("pl.Tensor[[16, 64], pl.FP32]", 'pl.Tensor[[16, "64"], pl.FP32]')
    err = parse_error(text)
    assert err.line == 6 and "shape" in err.message


def test_use_of_an_undefined_name_is_rejected():
    err = parse_error(kernel("u = pl.tile.muls(missing, 0.5)"))
    assert (err.line, err.col) == (8, 26)
    assert "'missing'" in err.message


def test_name_defined_inside_a_loop_is_not_visible_after_it():
    err = parse_error(kernel("for i in pl.range(4):", "    u = pl.tile.muls(t, 0.5)",
                             "v = pl.tile.muls(u, 0.5)"))
    assert err.line == 10


def test_annotation_disagreeing_with_the_inferred_shape_is_rejected():
    err = parse_error(kernel("s: pl.Tile[[16, 4], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, 0])"))
    assert "disagrees" in err.message and "[16, 4]" in err.message


def test_annotation_disagreeing_with_the_inferred_dtype_is_rejected():
    err = parse_error(kernel("u: pl.Tile[[16, 64], pl.FP16, pl.Mem.Vec] = pl.tile.muls(t, 0.5)"))
    assert "FP16" in err.message


def test_ill_typed_op_call_names_the_op():
    err = parse_error(kernel("s = pl.tile.slice(t, [16, 8], [0, 0])", "u = pl.tile.add(t, s)"))
    assert err.line == 9 and "pl.tile.add" in err.message


def test_tuple_unpacking_assignment_is_rejected():
    err = parse_error(kernel("a, b = pl.tile.muls(t, 0.5)"))
    assert "single variable name" in err.message


def test_if_with_a_yield_in_only_one_arm_is_rejected():
    err = parse_error(kernel("if n > 0:", "    r = pl.yield_(t)", "else:", "    pass"))
    assert "only one arm" in err.message


def test_yield_outside_a_loop_or_if_is_rejected():
    assert "only allowed" in parse_error(kernel("r = pl.yield_(t)")).message


def test_cond_outside_a_while_body_is_rejected():
    assert "pl.while_" in parse_error(kernel("pl.cond(n < 2)")).message


def test_while_without_a_leading_cond_is_rejected():
    err = parse_error(kernel("for (a,) in pl.while_(init_values=(n,)):", "    b = a + 1",
                             "    c = pl.yield_(b)"))
    assert "pl.cond" in err.message


def test_python_while_loop_is_rejected_with_the_dsl_spelling():
    assert "pl.while_" in parse_error(kernel("while n < 3:", "    pass")).message


def test_arithmetic_on_a_tile_is_rejected():
    assert "pl.tile" in parse_error(kernel("u = t * 2")).message


def test_parameter_without_annotation_is_rejected():
    text = HEAD.replace("n: pl.Scalar[pl.INDEX]", "n")
    err = parse_error(text)
    assert err.line == 6 and "annotation" in err.message


def test_program_class_without_decorator_is_rejected():
    text = HEAD.replace("@pl.program\n", "")
    assert "@pl.program" in parse_error(text).message


def test_arbitrary_module_code_is_rejected_in_text():
    text = "import os\nos.system('echo hi')\n" + HEAD
    err = parse_error(text)
    assert err.line == 2


def test_deeply_nested_expression_gives_a_dsl_error():
    deep = "-(" * 150 + "n" + ")" * 150
    err = parse_error(kernel(f"k = {deep}"))
    assert err.line == 8 and "nested too deeply" in err.message


def test_nesting_beyond_the_python_tokenizer_limit_gives_a_dsl_error():
    deep = "[" * 1000 + "]" * 1000
    assert parse_error(kernel(f"k = {deep}")).line == 8


def test_very_long_flat_expression_gives_a_dsl_error():
    err = parse_error(kernel("k = " + " + ".join(["n"] * 5000)))
    assert "deep" in err.message


def test_nul_byte_is_rejected():
    assert "NUL" in parse_error(kernel("u = pl.tile.muls(t, 0.5)\x00")).message


def test_five_megabytes_of_noise_is_rejected_quickly():
    rnd = random.Random(0)
    noise = "".join(rnd.choice(string.printable) for _ in range(5_000_000))
    start = time.perf_counter()
    parse_error(noise)
    assert time.perf_counter() - start < 10


def test_input_over_the_size_limit_is_rejected_before_parsing():
    err = parse_error("x = 1\n" * 2_000_000)
    assert "at most" in err.message


def _parse_or_reject(text: str) -> None:
    try:
        et.verify_program(et.parse_program(text, filename="fuzz.py"))
    except DslError as e:
        assert e.line >= 1 and e.col >= 1
    except ValueError:
        pass


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_random_text_gives_a_program_or_a_clean_error(text):
    _parse_or_reject(text)


@st.composite
def mutated_programs(draw):
    base = draw(st.sampled_from(sorted(SEED_KERNELS)))
    text = SEED_KERNELS[base] if draw(st.booleans()) else draw(program_texts(max_stmts=8))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, max(0, len(text) - 1)))
        kind = draw(st.integers(0, 3))
        if kind == 0:  # delete a span
            text = text[:i] + text[i + draw(st.integers(1, 12)):]
        elif kind == 1:  # insert characters
            text = text[:i] + draw(st.text(alphabet="()[],.:=+-*/ \n\tplx0123456789_'\"", max_size=6)) + text[i:]
        elif kind == 2:  # duplicate a line
            lines = text.splitlines(keepends=True)
            j = draw(st.integers(0, len(lines) - 1))
            lines.insert(j, lines[j])
            text = "".join(lines)
        else:  # swap a token
            a, b = draw(st.sampled_from([("16", "17"), ("Vec", "Mat"), ("FP32", "BF16"),
                                         ("0", "n"), ("slice", "extract"), ("Left", "Acc")]))
            text = text.replace(a, b, 1)
    return text


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(mutated_programs())
def test_mutated_programs_give_a_program_or_a_clean_error(text):
    _parse_or_reject(text)


def test_reading_a_name_rebound_inside_a_loop_after_the_loop_is_rejected():
    err = parse_error(kernel("u = pl.tile.muls(t, 0.5)", "for i in pl.range(4):",
                             "    u = pl.tile.muls(u, 0.5)", "w = pl.tile.muls(u, 2.0)"))
    assert err.line == 11 and "line 10" in err.message and "pl.yield_" in err.message


def test_reading_a_name_rebound_in_an_if_arm_after_the_if_is_rejected():
    err = parse_error(kernel("u = pl.tile.muls(t, 0.5)", "if n > 0:", "    u = pl.tile.muls(u, 0.5)",
                             "w = pl.tile.muls(u, 2.0)"))
    assert err.line == 11 and "'u'" in err.message


def test_name_rebound_by_the_loop_yield_is_readable_after_the_loop():
    prog = et.parse_program(kernel("for i, (c,) in pl.range(4, init_values=(t,)):",
                                   "    t = pl.tile.muls(c, 0.5)", "    t = pl.yield_(t)",
                                   "w = pl.tile.muls(t, 2.0)"))
    loop, w = prog.functions[0].body[1:]
    assert w.value.args[0].var is loop.return_vars[0]
