"""A long function body is read piece by piece (egraph_tiles.dsl.chunked) with exactly the result
and the errors of one whole-text parse: same program, same statement spans, same DslError."""

import pytest

import egraph_tiles as et
from egraph_tiles import DslError
from egraph_tiles.dsl import chunked
from egraph_tiles.ir import walk
import dslkit

PARAMS = "x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX]"
HEAD = dslkit.kernel(PARAMS, """
t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
""")

BLOCK = """        u{k}: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 8], [0, 8])
        if n > 0:
            y{k}: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(u{k}, 0.5)
        else:
            y{k}: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.muls(
                u{k},
        1.0)

        # a comment at the body's indentation
        for i{k} in pl.range(0, 4, 1):
            z{k}: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.adds(u{k}, 1.0)
"""


def kernel(blocks: int, extra: str = "") -> str:
    return HEAD + "".join(BLOCK.format(k=k) for k in range(blocks)) + extra


@pytest.fixture
def small_pieces(monkeypatch):
    monkeypatch.setattr(chunked, "MIN_LINES", 20)
    monkeypatch.setattr(chunked, "PIECE_LINES", 7)


def whole(text: str):
    old = chunked.MIN_LINES
    chunked.MIN_LINES = 10**9
    try:
        return et.parse_program(text)
    finally:
        chunked.MIN_LINES = old


def spans(prog):
    return [(type(s).__name__, s.span) for f in prog.functions for s in walk(f.body)]


def test_a_long_body_read_in_pieces_equals_the_whole_text_parse(small_pieces):
    text = kernel(30)
    module = chunked.parse(text, "<input>")
    body = module.body[1].body[0].body
    assert isinstance(body, chunked.LazyBody)
    assert len(list(body)) == 1 + 3 * 30  # read in pieces, no fallback (cuts inside brackets joined)
    got, want = et.parse_program(text), whole(text)
    assert et.print_program(got) == et.print_program(want)
    assert spans(got) == spans(want)


def test_an_error_in_a_late_piece_is_the_whole_text_parses_error(small_pieces):
    text = kernel(30, "        w = pl.tile.muls(missing, 1.0)\n")
    with pytest.raises(DslError) as got:
        et.parse_program(text)
    with pytest.raises(DslError) as want:
        whole(text)
    assert (got.value.line, got.value.col, str(got.value)) == \
        (want.value.line, want.value.col, str(want.value))


def test_a_syntax_error_in_a_late_piece_is_the_whole_text_parses_error(small_pieces):
    text = kernel(30, "        w = pl.tile.muls(t, 1.0\n")
    with pytest.raises(DslError) as got:
        et.parse_program(text)
    with pytest.raises(DslError) as want:
        whole(text)
    assert str(got.value) == str(want.value)


def test_text_with_a_triple_quoted_string_is_parsed_whole(small_pieces):
    text = kernel(30).replace("class K:\n", 'class K:\n    """doc"""\n')
    assert chunked.parse(text, "<input>") is None
    assert et.print_program(et.parse_program(text)) == et.print_program(whole(text))


class _NoWholeParse:
    """Stands in for ``ast`` in the parser module: the whole-text parse must not be needed."""

    def __getattr__(self, name):
        import ast

        if name == "parse":
            raise AssertionError("fell back to the whole-text parse")
        return getattr(ast, name)


def test_parse_program_reads_a_long_body_without_the_whole_text_parse(small_pieces, monkeypatch):
    from egraph_tiles.dsl import parser

    text = kernel(30)
    want = et.print_program(whole(text))
    monkeypatch.setattr(parser, "ast", _NoWholeParse())
    assert et.print_program(et.parse_program(text)) == want


def test_a_long_abstract_body_reads_in_pieces_like_the_whole_text(small_pieces, monkeypatch):
    from egraph_tiles.dsl import parser

    text = kernel(30, "        ...\n")
    want = whole(text)
    monkeypatch.setattr(parser, "ast", _NoWholeParse())
    got = et.parse_program(text)
    assert et.print_program(got) == et.print_program(want)
    assert spans(got) == spans(want)
