"""The core's growth measurement (``DoctorAnalysis.measure_growth``, csrc/matcher/growth_probe.h)
and its sentence sampler (csrc/grammar/sentence_sampler.h) against growth.py's ``_measure`` and
sample.py's ``Sampler``, which stay the reference: from the same seed the same sentences, byte
for byte (favoured cycles or none, every kind of terminal, surrogates, negated classes, token
references), and the same measurement of every cycle ambiguous_growth measures."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings

import gbnf_sampler as gs
from assets import llama_cpp_grammars, require
from gbnf_sampler import _core
from gbnf_sampler.doctor import growth
from gbnf_sampler.doctor.facts import Facts
from gbnf_sampler.doctor.sample import Sampler, SplitMix64, shortest
from gbnf_sampler.errors import GrammarError
from gbnf_sampler.schema import schema_to_gbnf
from strategies import atom_grammars, spelled_grammars

TARGETS = [0, 3, 24, 96, 24, 384]


def test_splitmix64_gives_the_published_sequence() -> None:
    rng = SplitMix64(0)  # the first outputs of Vigna's splitmix64.c from state 0
    assert [rng.next() for _ in range(3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]
    rng = SplitMix64(1234567)
    assert rng.next() == 6457827717110365317
    assert all(0 <= rng.below(n) < n for n in (1, 2, 3, 7, 1 << 40) for _ in range(50))


def _reference(
    grammar: gs.Grammar, root: str, cycle: list[str], seed: int
) -> list[bytes | None] | None:
    rules = grammar.rules
    favour = growth.cycle_favour(set(cycle)) if cycle else None
    sampler = Sampler(rules, seed=seed, favour=favour, minimums=shortest(rules))
    out: list[bytes | None] = []
    for target in TARGETS:
        try:
            text = sampler.sentence(root, target)
        except ValueError:  # a token reference: no byte-level sentence
            return None
        out.append(None if text is None else text.encode("utf-8", "surrogatepass"))
    return out


def _assert_same_sentences(grammar: gs.Grammar, roots: list[str], cycles: list[list[str]]) -> int:
    analysis = _core.DoctorAnalysis(grammar._core)
    compared = 0
    for root in roots:
        for cycle in [[], *cycles]:
            for seed in (0, 11):
                expected = _reference(grammar, root, cycle, seed)
                got = analysis.sample_sentences(root, TARGETS, cycle, growth.WIND_DOWN, seed)
                assert got == expected, (root, cycle, seed)
                compared += expected is not None
    return compared


# Every kind of terminal, visible or not, surrogates named in literals and classes (encoded as
# they are), negated classes, tokens, and references among four rules.
ATOMS = [
    '"ab"',
    '"\\u00e9\\U0001F600"',
    "[a-c]",
    "[a-c]+",
    "[\\uD7F0-\\uE010]",
    '"\\uD800"',
    "[^a]",
    "[^ -~]",
    ".",
    "<[3]>",
    '""',
    "a",
    "b",
    "c",
    "root",
]
SUFFIXES = ["", "", "*", "?", "+", "{2,4}"]


@settings(max_examples=300, deadline=None)
@given(atom_grammars(ATOMS, SUFFIXES, ("root", "a", "b", "c"), 4, '"z"'))
def test_same_sentences_on_random_reference_graphs(text: str) -> None:
    try:
        grammar = gs.Grammar.from_gbnf(text)
    except GrammarError:
        assume(False)
    facts = Facts(grammar.rules, grammar.root)
    cycles = [c for c in facts.components if set(c) & facts.recursive]
    _assert_same_sentences(grammar, list(grammar.rules), cycles)


@settings(max_examples=150, deadline=None)
@given(spelled_grammars(max_rules=4, max_depth=3))
def test_same_sentences_on_random_grammars(case: tuple[str, str]) -> None:
    text, root = case
    grammar = gs.Grammar.from_gbnf(text, root=root)
    facts = Facts(grammar.rules, grammar.root)
    cycles = [c for c in facts.components if set(c) & facts.recursive]
    _assert_same_sentences(grammar, [root], cycles)


def _known_grammars() -> dict[str, gs.Grammar]:
    out = {
        name: gs.Grammar.from_gbnf(p.read_text()) for name, p in require(llama_cpp_grammars).items()
    }
    tree = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "kids": {"type": "array", "items": {"$ref": "#"}},
        },
        "anyOf": [{"required": ["name"]}, {"required": ["kids"]}],
    }
    out["schema"] = gs.Grammar.from_gbnf(schema_to_gbnf(tree, strict=False))
    out["ambiguous"] = gs.Grammar.from_gbnf('root ::= e\ne ::= e "+" e | "a"\n')
    out["nested"] = gs.Grammar.from_gbnf('root ::= e\ne ::= e "+" e | "(" e ")" | [a-z]\n')
    return out


@pytest.mark.parametrize(
    "name", ["arithmetic", "c", "json", "json_arr", "schema", "ambiguous", "nested"]
)
def test_same_sentences_and_measurements_on_known_grammars(name: str) -> None:
    grammar = _known_grammars()[name]
    facts = Facts(grammar._rules_on_demand(), grammar.root, grammar._core)
    found = growth.candidates(facts)
    assert found, name
    assert _assert_same_sentences(grammar, [c[0] for c in found], found) > 0
    for component in found:
        root = component[0]
        measured = growth._rooted(facts, root)
        assert measured is not None
        _, automaton = measured
        expected = growth._measure(
            automaton, grammar.rules, root, set(component), facts.shortest([root])
        )
        assert facts.analysis is not None
        got = facts.analysis.measure_growth(automaton, root, component, growth._SETTINGS)
        assert got is not None and growth.Measurement(*got) == expected, (name, root)


def test_the_ambiguous_grammar_grows_in_both() -> None:
    grammar = _known_grammars()["ambiguous"]
    facts = Facts(grammar._rules_on_demand(), grammar.root, grammar._core)
    [component] = growth.candidates(facts)
    measured = growth._rooted(facts, component[0])
    assert measured is not None and facts.analysis is not None
    got = facts.analysis.measure_growth(measured[1], "e", component, growth._SETTINGS)
    assert got is not None and growth.Measurement(*got).grows
    assert [f.code for f in gs.doctor.diagnose(grammar.to_gbnf()).findings] == ["ambiguous_growth"]


def test_a_rule_that_needs_a_token_has_no_sentence() -> None:
    grammar = gs.Grammar.from_gbnf('root ::= "a" <[3]> | "b" x\nx ::= "c" <[4]>\n')
    analysis = _core.DoctorAnalysis(grammar._core)
    assert analysis.sample_sentences("root", [0, 50], [], growth.WIND_DOWN) == [None, None]
    assert Sampler(grammar.rules).sentence("root", 50) is None
    with pytest.raises(KeyError):
        analysis.sample_sentences("nope", [1], [], growth.WIND_DOWN)
