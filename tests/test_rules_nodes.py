"""``Grammar.rules`` as the core builds it (syntax objects made directly, without a tree of
tuples in between) against the reference: the core's tuple tree converted in Python."""

from __future__ import annotations

import dataclasses
import gc
import sys
import weakref
from pathlib import Path

import pytest
from hypothesis import given, settings

import gbnf_sampler as gs
from gbnf_sampler import syntax
from gbnf_sampler.doctor.tree import walk
from gbnf_sampler.grammar import _convert
from strategies import spelled_grammars

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from bench_parse import generated_grammar


def _reference(grammar: gs.Grammar) -> dict[str, syntax.Node]:
    return {name: _convert(body) for name, body in grammar._core.rules_ast()}


def _assert_same(grammar: gs.Grammar) -> None:
    built, reference = grammar.rules, _reference(grammar)
    assert list(built) == list(reference)  # definition order
    for name, node in built.items():
        assert node == reference[name], name
        assert repr(node) == repr(reference[name])
        assert hash(node) == hash(reference[name])


@settings(max_examples=300, deadline=None)
@given(spelled_grammars())
def test_random_grammars(case: tuple[str, str]) -> None:
    text, root = case
    _assert_same(gs.Grammar.from_gbnf(text, root=root))


def test_llama_cpp_grammars(llama_grammars: dict[str, Path]) -> None:
    for path in llama_grammars.values():
        _assert_same(gs.Grammar.from_gbnf(path.read_text(encoding="utf-8")))


def test_every_construct_of_a_generated_grammar() -> None:
    _assert_same(gs.Grammar.from_gbnf(generated_grammar(400)))


@pytest.mark.parametrize(
    "text",
    [
        'root ::= ""',
        "root ::= [^a-c\\x00] . <[12]> !<[3]> <think> !<|end|>",
        'root ::= ("a" | "b")* "c"{2,} [x]{0,3} "d"? "e"+ ' + "(" * 150 + '"f"' + ")" * 150,
    ],
)
def test_odd_nodes(text: str) -> None:
    _assert_same(gs.Grammar.from_gbnf(text))


def test_nodes_are_the_frozen_syntax_classes() -> None:
    rules = gs.Grammar.from_gbnf('root ::= "ab" [c-d]* x\nx ::= . | <[7]>').rules
    node = rules["root"]
    assert type(node) is syntax.Sequence
    assert [type(item) for item in node.items] == [syntax.Literal, syntax.Repeat, syntax.RuleRef]
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.items = ()  # type: ignore[misc]
    assert dataclasses.asdict(rules["x"]) == {
        "items": ({}, {"token_id": 7, "text": None, "negated": False})
    }
    assert rules["x"] == syntax.Alternation((syntax.AnyChar(), syntax.TokenRef(7)))


def test_trees_are_left_out_of_the_cyclic_collector() -> None:
    """A syntax tree holds no cycle: the core leaves its nodes and tuples out of the collector
    (whose passes over a large grammar's fresh tree cost more than the doctor's checks), and
    reference counting still frees them."""
    grammar = gs.Grammar.from_gbnf('root ::= ("ab" | [c-d]{2,3})* x\nx ::= . | <[7]> | "" x\n')
    rules = grammar.rules
    nodes = [n for body in rules.values() for n in walk(body)]
    assert len(nodes) > 10
    for node in nodes:
        assert not gc.is_tracked(node), node
        for value in vars(node).values():
            assert not gc.is_tracked(value), (node, value)
    leaf = weakref.ref(rules["x"].items[1])
    del grammar, rules, nodes, node, value
    assert leaf() is None


def test_rules_on_demand_convert_each_rule_when_first_looked_up() -> None:
    text = generated_grammar(60)
    grammar = gs.Grammar.from_gbnf(text)
    lazy = grammar._rules_on_demand()
    assert list(lazy) == list(grammar.rules) and len(lazy) == len(grammar.rules)
    first = next(iter(lazy))
    assert lazy[first] is lazy[first]  # built once, kept
    assert len(lazy._built) == 1  # type: ignore[attr-defined]
    assert "no such rule" not in lazy
    with pytest.raises(KeyError):
        lazy["no such rule"]
    assert dict(lazy.items()) == grammar.rules
    # Trees taken from another reader (the doctor's positioned source) are served as they are.
    adopted = gs.Grammar.from_gbnf(text)
    trees = dict(grammar.rules)
    adopted._adopt_rules(trees)
    assert adopted._rules_on_demand() is trees
