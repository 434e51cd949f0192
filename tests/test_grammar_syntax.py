"""Every GBNF syntax feature: parse to the expected tree, print, reparse to the same tree."""

from __future__ import annotations

import pytest

import gbnf_sampler as gs
from gbnf_sampler.syntax import (
    Alternation,
    AnyChar,
    CharClass,
    Literal,
    Repeat,
    RuleRef,
    Sequence,
    TokenRef,
)


def lit(text: str) -> Literal:
    return Literal(tuple(ord(c) for c in text))


INF = None

# (grammar text, expected body of root). Expected trees are written by hand.
CASES: list[tuple[str, object]] = [
    ('root ::= "abc"', lit("abc")),
    ('root ::= ""', lit("")),
    ('root ::= "a" "b"', Sequence((lit("a"), lit("b")))),
    ('root ::= "a" | "b"', Alternation((lit("a"), lit("b")))),
    ('root ::= "a" | "b" | "c"', Alternation((lit("a"), lit("b"), lit("c")))),
    # Escapes: \x, \u and \U name code points; the short escapes their characters.
    (r'root ::= "\x41\u00e9\U0001F600"', Literal((0x41, 0xE9, 0x1F600))),
    (r'root ::= "\n\r\t\\\"\[\]\-"', lit('\n\r\t\\"[]-')),
    ('root ::= "é日😀"', lit("é日😀")),
    ("root ::= [a-z]", CharClass(((97, 122),))),
    ("root ::= [^a-z0-9_]", CharClass(((97, 122), (48, 57), (95, 95)), True)),
    (r"root ::= [\]\-\\\x00-\x1F]", CharClass(((93, 93), (45, 45), (92, 92), (0, 31)))),
    ("root ::= [-a]", CharClass(((45, 45), (97, 97)))),
    ("root ::= [a-]", CharClass(((97, 97), (45, 45)))),
    ("root ::= [^]", CharClass((), True)),
    ("root ::= [é-ü]", CharClass(((0xE9, 0xFC),))),
    ("root ::= .", AnyChar()),
    ('root ::= ("a" "b")', Sequence((lit("a"), lit("b")))),
    ('root ::= ("a")', lit("a")),
    ("root ::= ()", Sequence(())),
    ('root ::= "a" | ', Alternation((lit("a"), Sequence(())))),
    ('root ::= | "a"', Alternation((Sequence(()), lit("a")))),
    ('root ::= "a"*', Repeat(lit("a"), 0, INF)),
    ('root ::= "a"+', Repeat(lit("a"), 1, INF)),
    ('root ::= "a"?', Repeat(lit("a"), 0, 1)),
    ('root ::= "a"{3}', Repeat(lit("a"), 3, 3)),
    ('root ::= "a"{3,}', Repeat(lit("a"), 3, INF)),
    ('root ::= "a"{2,5}', Repeat(lit("a"), 2, 5)),
    ('root ::= "a"{,5}', Repeat(lit("a"), 0, 5)),
    ('root ::= "a"{ 2 , 5 }', Repeat(lit("a"), 2, 5)),
    ('root ::= "a"{0,100000}', Repeat(lit("a"), 0, 100000)),
    ('root ::= "a"{250000}', Repeat(lit("a"), 250000, 250000)),
    ('root ::= "a"**', Repeat(Repeat(lit("a"), 0, INF), 0, INF)),
    ('root ::= "a" *', Repeat(lit("a"), 0, INF)),
    (
        'root ::= ("a" | "b")+ "c"',
        Sequence((Repeat(Alternation((lit("a"), lit("b"))), 1, INF), lit("c"))),
    ),
    ("root ::= <[42]>", TokenRef(42, None, False)),
    ("root ::= !<[42]>", TokenRef(42, None, True)),
    ("root ::= <think>", TokenRef(None, "<think>", False)),
    ("root ::= !<|im_end|>", TokenRef(None, "<|im_end|>", True)),
    (
        "root ::= <think> .* </think>",
        Sequence(
            (TokenRef(None, "<think>"), Repeat(AnyChar(), 0, INF), TokenRef(None, "</think>"))
        ),
    ),
    # Comments, and newlines inside parentheses, after ::= and after |.
    ('root ::= "a" # comment "b"', lit("a")),
    ('root ::=\n  "a"', lit("a")),
    ('root ::= "a" |\n  "b"', Alternation((lit("a"), lit("b")))),
    ('root ::= (\n  "a"\n  | "b"\n)', Alternation((lit("a"), lit("b")))),
    # A continuation line starting with '|' (an extension over llama.cpp).
    ('root ::= "a"\n  | "b"\n\n  # comment\n  | "c"', Alternation((lit("a"), lit("b"), lit("c")))),
    ('root ::= "a"\r\n  | "b"\r\n', Alternation((lit("a"), lit("b")))),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_parses_to_expected_tree(text: str, expected: object) -> None:
    grammar = gs.Grammar.from_gbnf(text)
    assert grammar.rules["root"] == expected


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_printed_grammar_parses_back_to_the_same_tree(text: str, expected: object) -> None:
    grammar = gs.Grammar.from_gbnf(text)
    printed = grammar.to_gbnf()
    again = gs.Grammar.from_gbnf(printed)
    assert again == grammar
    assert again.rules == grammar.rules
    assert again.to_gbnf() == printed


def test_rule_names_with_digits_dashes_and_underscores() -> None:
    g = gs.Grammar.from_gbnf('root ::= my-rule_2 x\nmy-rule_2 ::= "a"\nx ::= [0-9]')
    assert list(g.rules) == ["root", "my-rule_2", "x"]
    assert g.rules["root"] == Sequence((RuleRef("my-rule_2"), RuleRef("x")))


def test_rules_keep_definition_order_even_when_referenced_first() -> None:
    g = gs.Grammar.from_gbnf('root ::= b a\na ::= "a"\nb ::= "b"')
    assert list(g.rules) == ["root", "a", "b"]


def test_left_recursion_is_a_valid_grammar() -> None:
    g = gs.Grammar.from_gbnf('root ::= root "+" term | term\nterm ::= [0-9]')
    assert g.rules["root"] == Alternation(
        (Sequence((RuleRef("root"), lit("+"), RuleRef("term"))), RuleRef("term"))
    )
    assert g.warnings == []


def test_crlf_and_lf_files_give_the_same_grammar() -> None:
    lf = 'root ::= a b\na ::= "x" |\n  "y"\nb ::= ( "z"\n)\n'
    assert gs.Grammar.from_gbnf(lf.replace("\n", "\r\n")) == gs.Grammar.from_gbnf(lf)


def test_redefinition_last_wins_with_a_warning() -> None:
    g = gs.Grammar.from_gbnf('root ::= "a"\nroot ::= "b"')
    assert g.rules["root"] == lit("b")
    [warning] = g.warnings
    assert (warning.code, warning.line, warning.column) == ("redefined_rule", 2, 1)


def test_unused_and_unreachable_rules_are_warnings() -> None:
    g = gs.Grammar.from_gbnf('root ::= "a"\nlonely ::= "b"\nisland ::= helper\nhelper ::= "c"')
    codes = {(w.code, w.line) for w in g.warnings}
    assert codes == {("unused_rule", 2), ("unused_rule", 3), ("unreachable_rule", 4)}
    assert all(w.severity == "warning" for w in g.warnings)


def test_custom_root() -> None:
    g = gs.Grammar.from_gbnf('start ::= "a"', root="start")
    assert g.root == "start"
    assert gs.Grammar.from_gbnf(g.to_gbnf(), root="start") == g


def test_bytes_and_str_input_agree() -> None:
    text = 'root ::= "é" [^"]'
    assert gs.Grammar.from_gbnf(text) == gs.Grammar.from_gbnf(text.encode())


def test_utf8_byte_order_mark_is_ignored() -> None:
    assert gs.Grammar.from_gbnf('\ufeffroot ::= "a"') == gs.Grammar.from_gbnf('root ::= "a"')


def test_nul_in_literal_is_data() -> None:
    g = gs.Grammar.from_gbnf('root ::= "a\x00b" | "\\x00"')
    assert g.rules["root"] == Alternation((Literal((97, 0, 98)), Literal((0,))))
    assert gs.Grammar.from_gbnf(g.to_gbnf()) == g


def test_printer_escapes_what_would_read_differently() -> None:
    g = gs.Grammar.from_gbnf(r'root ::= [\x5E\]\-\\] "\"\\\n\x7F" [\uD800]')
    printed = g.to_gbnf()
    assert gs.Grammar.from_gbnf(printed) == g
    assert "[^" not in printed  # a leading literal ^ must not become negation


def test_grammar_equality_and_inequality() -> None:
    a = gs.Grammar.from_gbnf('root ::= "a" x\nx ::= "b"')
    b = gs.Grammar.from_gbnf('root ::= "a"   x   # same\nx ::= "b"')
    c = gs.Grammar.from_gbnf('root ::= "a" x\nx ::= "c"')
    assert a == b
    assert a != c
    assert hash(a) == hash(b)


def test_limits_are_configurable() -> None:
    limits = gs.GrammarLimits(max_repetition_bound=10)
    assert gs.Grammar.from_gbnf('root ::= "a"{10}', limits=limits)
    with pytest.raises(gs.GrammarError) as e:
        gs.Grammar.from_gbnf('root ::= "a"{11}', limits=limits)
    assert e.value.code == "repetition_too_large"


def test_deep_nesting_within_the_limit() -> None:
    depth = 200
    text = "root ::= " + "(" * depth + '"a" | "b"' + ")" * depth
    g = gs.Grammar.from_gbnf(text)
    assert g.rules["root"] == Alternation((lit("a"), lit("b")))
    chained = "root ::= " + '("x" ' * depth + '"a"' + ")" * depth
    g2 = gs.Grammar.from_gbnf(chained)
    assert gs.Grammar.from_gbnf(g2.to_gbnf()) == g2
