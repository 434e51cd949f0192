"""The doctor's positioned source read from the core's parse (``source_of_grammar``, the
parser's source layout) against the position-recording Python parser it replaces
(``parse_source``, kept as the reference): the same definitions, trees, node spans,
parentheses counts and spelling events, on odd spellings, random grammars in random spellings,
llama.cpp's grammars and a 5,000-rule grammar."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler import syntax
from gbnf_sampler.doctor.source import ParsedSource, parse_source, source_of_grammar
from gbnf_sampler.doctor.tree import children
from strategies import gbnf_texts, grammars

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from bench_parse import generated_grammar


def _nodes(node: syntax.Node) -> list[syntax.Node]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(reversed(children(current)))
    return out


def _layout(parsed: ParsedSource) -> list[object]:
    """Everything a reader of ``parsed`` can see, with node identities replaced by walk order."""
    out: list[object] = [parsed.events]
    for rule in parsed.definitions:
        nodes = _nodes(rule.body)
        out.append((rule.name, rule.start, rule.end, rule.body))
        out.append([rule.spans.get(id(n)) for n in nodes])
        out.append([rule.groups.get(id(n), 0) for n in nodes])
        assert all(id(n) in rule.spans for n in nodes)
    return out


def _check(text: str, root: str = "root") -> gs.Grammar:
    grammar = gs.Grammar.from_gbnf(text, root=root)
    assert _layout(source_of_grammar(grammar, text)) == _layout(parse_source(text, events=True))
    return grammar


SPELLINGS = {
    "bom and continuation lines": '\ufeffroot ::= "a"\n  | "b" # c\n\n|  "c"\n',
    "nested and empty groups": 'root ::= ((("a")) ("b" "c")) | () | ( | "d")\n',
    "empty alternatives": 'root ::= "a" | | "b" x\nx ::= "q" |  # at the end',
    "braces": 'root ::= "a"{,3} "b"{ 2 } "c"{1,} ("d" "e"){0,2}? x\nx ::= "x"*+?\n',
    "nul and any class": 'root ::= "\\x00" | [\\x00-a] | [^] | [^\\x00] ("\\u0000")\n',
    "non-ascii": 'root ::= "é" x_y "日本" [α-ω]+\nx_y ::= ("ü" | "\\U0001F600")\n',
    "redefinition": 'root ::= a\na ::= "1"\nroot ::= a a_b\na_b ::= "2"\n',
    "token references": "root ::= <[12]> !<[3]> <think> !<x>\n",
    "comments and crlf": 'root ::= ( # open\r\n  "a" # a\r\n  | "b"\r\n) # done\r\n',
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_odd_spellings(name: str) -> None:
    _check(SPELLINGS[name])


def test_the_rules_become_the_positioned_trees() -> None:
    text = SPELLINGS["redefinition"]
    grammar = gs.Grammar.from_gbnf(text)
    parsed = source_of_grammar(grammar, text)
    last = parsed.rules()
    rules = grammar.rules
    assert list(rules) == ["a", "root", "a_b"]  # the core's order: by last definition
    assert all(rules[name] is last[name].body for name in rules)
    assert rules == gs.Grammar.from_gbnf(text).rules


def test_another_text_is_parsed_again() -> None:
    grammar = gs.Grammar.from_gbnf('root ::= "a" | "b"\n')
    text = grammar.to_gbnf() + 'x ::= "c"\n'
    parsed = source_of_grammar(grammar, text)
    assert [r.name for r in parsed.definitions] == ["root", "x"]
    assert _layout(parsed) == _layout(parse_source(text, events=True))


def test_llama_cpp_grammars(llama_grammars: dict[str, Path]) -> None:
    for path in llama_grammars.values():
        text = path.read_text(encoding="utf-8")
        _check(text)


def test_generated_grammar() -> None:
    _check(generated_grammar(400))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_grammars_in_random_spellings(data: st.DataObject) -> None:
    rules, root = data.draw(grammars())
    _check(data.draw(gbnf_texts(rules, root)), root)
