"""Bad grammars: each gives a GrammarError with the right code and position, never a crash."""

from __future__ import annotations

import pickle

import pytest

import gbnf_sampler as gs

# (grammar text, code, line, column). Columns count code points, 1-based.
BAD: list[tuple[str | bytes, str, int, int]] = [
    ('root ::= "abc', "unterminated_literal", 1, 10),
    ('root ::= "a\\', "unterminated_literal", 1, 10),
    ("root ::= [a-z", "unterminated_class", 1, 10),
    ('root ::= "\\q"', "unknown_escape", 1, 11),
    ("root ::= [\\d]", "unknown_escape", 1, 11),
    ('root ::= "\\x4"', "bad_escape", 1, 11),
    ('root ::= "\\uZZZZ"', "bad_escape", 1, 11),
    ('root ::= "\\U00110000"', "codepoint_out_of_range", 1, 11),
    ('root ::= "a" ;', "unexpected_character", 1, 14),
    ("root ::= 'a'", "unexpected_character", 1, 10),
    ('root ::= "a" )', "unexpected_character", 1, 14),
    ('root ::= ("a"', "unclosed_group", 1, 10),
    ('root ::= ("a" ]', "unexpected_character", 1, 15),
    ('root = "a"', "missing_assign", 1, 6),
    ('root "a"', "missing_assign", 1, 6),
    ('root ::= "a"\n  "b"', "unexpected_character", 2, 3),
    ('root ::= "a" x ::= "b"', "unexpected_definition", 1, 14),
    ('| "a"', "unexpected_character", 1, 1),
    ("root ::= *", "dangling_operator", 1, 10),
    ('root ::= valu\nvalue ::= "x"', "undefined_rule", 1, 10),
    ('root ::= "x"\n\n  ws ::= [ ]\nroot2 ::= nope', "undefined_rule", 4, 11),
    ('start ::= "a"', "missing_root", 0, 0),
    ("", "missing_root", 0, 0),
    ("# only a comment\n", "missing_root", 0, 0),
    ("root ::= [z-a]", "inverted_range", 1, 11),
    ('root ::= "a"{3,1}', "bad_repetition_bounds", 1, 13),
    ('root ::= "a"{}', "bad_repetition", 1, 13),
    ('root ::= "a"{,}', "bad_repetition", 1, 13),
    ('root ::= "a"{2', "bad_repetition", 1, 13),
    ('root ::= "a"{x}', "bad_repetition", 1, 13),
    ('root ::= "a"{99999999999}', "repetition_too_large", 1, 13),
    ("root ::= []", "empty_class", 1, 10),
    ("root ::= [^\\x00-\\U0010FFFF]", "empty_class", 1, 10),
    ('root ::= root "a"', "unproductive_rule", 1, 1),
    ('root ::= "a" x\nx ::= "b" x | x x', "unproductive_rule", 2, 1),
    ("root ::= “a”", "typographic_quote", 1, 10),
    ("root ::= ‘a’", "typographic_quote", 1, 10),
    ("root ::= ＂a＂", "typographic_quote", 1, 10),
    ('root ::= "é" “a”', "typographic_quote", 1, 14),
    ('root ::= "a"\n日本 ::= "b"', "unexpected_character", 2, 1),
    (b'root ::= "\xff"', "invalid_utf8", 1, 11),
    (b'root ::= "\xc3\xa9\xed\xa0\x80"', "invalid_utf8", 1, 12),
    (b"# caf\xc3\xa9 \xc3(\n", "invalid_utf8", 1, 8),
    ("root ::= <[12", "bad_token_ref", 1, 10),
    ("root ::= <[]>", "bad_token_ref", 1, 10),
    ("root ::= <[99999999999]>", "bad_token_ref", 1, 10),
    ("root ::= <abc", "bad_token_ref", 1, 10),
    ("root ::= <>", "bad_token_ref", 1, 10),
    ("root ::= !x", "bad_token_ref", 1, 10),
    ("root ::= " + "(" * 300 + '"a"' + ")" * 300, "nesting_too_deep", 1, 10 + 256),
    ('root ::= "a"' + "*" * 300, "nesting_too_deep", 1, 13 + 256),
    ('root ::= "a"\n\troot ::= "b" ]', "unexpected_character", 2, 15),
]


@pytest.mark.parametrize(("text", "code", "line", "column"), BAD)
def test_bad_grammar_reports_code_and_position(
    text: str | bytes, code: str, line: int, column: int
) -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf(text)
    err = info.value
    assert (err.code, err.line, err.column) == (code, line, column)
    assert err.diagnostics[0].severity == "error"
    assert isinstance(err, ValueError)


def test_message_renders_like_a_compiler() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf('root ::= "a"\nitem ::= "x"\nlist ::= "[" itme "]"\n', root="list")
    err = info.value
    assert err.code == "undefined_rule"
    assert (err.line, err.column) == (3, 14)
    assert err.snippet == 'list ::= "[" itme "]"'
    assert err.hint == 'did you mean "item"?'
    lines = str(err).splitlines()
    assert lines[0].startswith("line 3, column 14: ")
    assert lines[1] == ' 3 | list ::= "[" itme "]"'
    assert lines[2] == "   |              ^^^^"


def test_all_undefined_rules_are_reported() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf("root ::= a b c\nb ::= [b]")
    assert [(d.code, d.column) for d in info.value.diagnostics] == [
        ("undefined_rule", 10),
        ("undefined_rule", 14),
    ]


def test_missing_root_names_the_asked_root_and_suggests() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf('rot ::= "a"')
    assert '"root"' in info.value.diagnostics[0].message
    assert info.value.hint == 'did you mean "rot"? or pass root="rot"'
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf('main ::= "a"', root="start")
    assert '"start"' in info.value.diagnostics[0].message
    assert 'root="main"' in info.value.hint


def test_typographic_quote_hint_says_use_ascii() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf("root ::= “yes” | “no”")
    assert '"' in info.value.hint and "ASCII" in info.value.hint


def test_line_break_in_a_rule_body_explains_the_fix() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf('root ::= "{"\n    "}"')
    assert "( ... )" in info.value.hint


def test_errors_keep_warnings_found_before_them() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf('root ::= "a"\nroot ::= "b"\nroot ::= [')
    assert [w.code for w in info.value.warnings] == ["redefined_rule"]


def test_grammar_error_pickles_with_its_fields() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf("root ::= [z-a]")
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.code, copy.line, copy.column, copy.snippet) == (
        "inverted_range",
        1,
        11,
        "root ::= [z-a]",
    )
    assert str(copy) == str(info.value)


def test_text_size_limit() -> None:
    limits = gs.GrammarLimits(max_text_bytes=100)
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf('root ::= "' + "a" * 200 + '"', limits=limits)
    assert info.value.code == "text_too_large"


def test_rule_count_limit() -> None:
    text = "root ::= r0\n" + "".join(f'r{i} ::= "x" r{i + 1}\n' for i in range(20)) + 'r20 ::= "y"'
    gs.Grammar.from_gbnf(text, limits=gs.GrammarLimits(max_rules=22))
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf(text, limits=gs.GrammarLimits(max_rules=10))
    assert info.value.code == "too_many_rules"


def test_node_count_limit() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf("root ::= " + '"a" ' * 50, limits=gs.GrammarLimits(max_nodes=20))
    assert info.value.code == "grammar_too_large"


def test_lone_surrogate_in_str_is_an_error_not_a_crash() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf('root ::= "\ud800"')
    assert (info.value.code, info.value.column) == ("invalid_utf8", 11)


@pytest.mark.parametrize("bad", [None, 42, ["root ::= 'a'"]])
def test_wrong_argument_types(bad: object) -> None:
    with pytest.raises(TypeError):
        gs.Grammar.from_gbnf(bad)  # type: ignore[arg-type]


def test_invalid_limits_are_rejected() -> None:
    with pytest.raises(ValueError):
        gs.GrammarLimits(max_rules=-1)
