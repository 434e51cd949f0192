"""The GBNF parser and printer against random grammars: text -> tree and tree -> text -> tree.

``to_gbnf_text`` writes each random tree in a deliberately odd but equivalent spelling (escapes,
comments, newlines inside parentheses and after '|', CRLF, redundant parentheses, every
repetition form), so parsing it back must give exactly the same tree.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler import syntax as gast
from reference import Reference
from strategies import gbnf_texts, grammar_cases, grammars, to_gbnf_text

ROUNDTRIP = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

Case = tuple[dict[str, gast.Node], str, str]


@st.composite
def grammar_texts(draw: st.DrawFn) -> Case:
    rules, root = draw(grammars())
    return rules, root, draw(gbnf_texts(rules, root))


@ROUNDTRIP
@given(grammar_texts())
def test_parse_random_spelling_gives_the_tree(case: Case) -> None:
    rules, root, text = case
    grammar = gs.Grammar.from_gbnf(text, root=root)
    assert grammar.root == root
    assert grammar.rules == rules
    assert list(grammar.rules) == list(rules)  # definition order


@ROUNDTRIP
@given(st.data())
def test_parse_token_references(data: st.DataObject) -> None:
    rules, root = data.draw(grammars(tokens=True))
    text = data.draw(gbnf_texts(rules, root))
    grammar = gs.Grammar.from_gbnf(text, root=root)
    assert grammar.rules == rules
    assert gs.Grammar.from_gbnf(grammar.to_gbnf(), root=root) == grammar


@ROUNDTRIP
@given(grammars())
def test_parse_plain_spelling_gives_the_tree(case: tuple[dict[str, gast.Node], str]) -> None:
    rules, root = case
    assert gs.Grammar.from_gbnf(to_gbnf_text(rules, root), root=root).rules == rules


@ROUNDTRIP
@given(grammar_texts())
def test_printer_roundtrip(case: Case) -> None:
    _, root, text = case
    grammar = gs.Grammar.from_gbnf(text, root=root)
    printed = grammar.to_gbnf()
    again = gs.Grammar.from_gbnf(printed, root=root)
    assert again == grammar
    assert again.rules == grammar.rules
    assert again.to_gbnf() == printed  # the canonical form is a fixed point


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammar_cases(max_rules=3, max_depth=2))
def test_parsed_grammar_has_the_same_language(
    case: tuple[dict[str, gast.Node], str, str, bytes],
) -> None:
    _, root, text, sentence = case
    assert Reference.from_grammar(gs.Grammar.from_gbnf(text, root=root)).accepts(sentence)


def test_equal_grammars_compare_equal_and_different_ones_do_not() -> None:
    a = gs.Grammar.from_gbnf('root ::= "a" | x\nx ::= [b-c]+\n')
    b = gs.Grammar.from_gbnf('root ::= ("a")|x # same\r\nx ::= [\\x62-\\u0063]{1,}')
    c = gs.Grammar.from_gbnf('root ::= "a" | x\nx ::= [b-c]*\n')
    assert a == b
    assert a != c
    assert hash(a) == hash(b)
