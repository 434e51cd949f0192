"""The doctor's rule facts from the core (``Facts(rules, root, core)``, csrc/grammar/doctor_facts.h)
against the Python definitions in doctor/facts.py, which stay the reference: the reference
graph, reachability, the strongly connected components in Tarjan's order, recursion, nullable
rules, invisible-only rules, rules with token references, the cycles ambiguous_growth measures
and the shortest derivations must be equal, as values and in order. The core's survey of
choices (csrc/grammar/choice_survey.h) must give shadow.py's duplicates for every choice it
lists, list every choice where the Python search finds anything, and so leave
shadowed_alternative's findings unchanged."""

from __future__ import annotations

import sys
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import assume, given, settings

import gbnf_sampler as gs
from gbnf_sampler import syntax
from gbnf_sampler.doctor import facts as facts_module
from gbnf_sampler.doctor import growth, shadow, tree
from gbnf_sampler.doctor.facts import INVISIBLE, Facts
from gbnf_sampler.doctor.locate import Locator
from gbnf_sampler.doctor.sample import INF, shortest
from gbnf_sampler.errors import GrammarError
from strategies import atom_grammars, spelled_grammars

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from bench_parse import generated_grammar

FIELDS = (
    "graph",
    "users",
    "reachable",
    "components",
    "component_of",
    "recursive",
    "nullable_rules",
    "invisible_rules",
    "token_rules",
)


def _assert_same(grammar: gs.Grammar) -> Facts:
    rules = grammar.rules
    reference = Facts(rules, grammar.root)
    with mock.patch.object(facts_module, "reference_graph", side_effect=AssertionError):
        core = Facts(rules, grammar.root, grammar._core)  # not through the Python walks
    for field in FIELDS:
        assert getattr(core, field) == getattr(reference, field), field
    # Order matters where the checks iterate: components and each rule's references.
    assert [list(c) for c in core.components] == reference.components
    assert list(core.graph.items()) == list(reference.graph.items())
    assert core.shortest(list(rules)) == shortest(rules) == reference.shortest(list(rules))
    reached = tree.reachable(reference.graph, grammar.root)  # a part closed under references
    part = {name: body for name, body in rules.items() if name in reached}
    assert core.shortest([grammar.root]) == shortest(part) == reference.shortest([grammar.root])
    for name in rules:
        assert core.reached_from(name) == reference.reached_from(name), name
    assert reference.growth_candidates is None
    assert core.growth_candidates == growth.candidates(reference)
    _assert_same_choices(grammar, reference, core)
    return core


def _assert_same_choices(grammar: gs.Grammar, reference: Facts, core: Facts) -> None:
    survey = {(rule, ordinal): duplicates for rule, ordinal, duplicates in core.choice_survey()}
    for rule, body in grammar.rules.items():
        choices = [n for n in tree.walk(body) if isinstance(n, syntax.Alternation)]
        for ordinal, choice in enumerate(choices):
            expected = shadow._duplicates(choice.items, None)
            listed = survey.pop((rule, ordinal), None)
            if listed is not None:
                assert listed == expected, (rule, ordinal)
            else:  # not listed: the Python search finds nothing there
                assert not shadow._covered(choice.items, reference), (rule, ordinal)
    assert not survey  # every listed choice exists
    text = grammar.to_gbnf()
    loc = Locator(text, grammar.rules)
    found = [(f.line, f.column, f.message, f.fix) for f in shadow.check_shadowed(core, loc)]
    assert found == [
        (f.line, f.column, f.message, f.fix) for f in shadow.check_shadowed(reference, loc)
    ]


# Atoms that exercise every kind of terminal, visible or not, references among five rules, and
# choices with duplicates and shadowed alternatives (one-character sets, literals).
ATOMS = [
    '"ab"',
    '"a"',
    "[a-c]",
    "[a-c]+",
    "<x>",
    '" "',
    '"x"',
    '"\\t\\n"',
    '""',
    "[ \\t]",
    "[^a]",
    "[\\u2000-\\u200D]",
    "[\\u2000-\\u200E]",
    '"\\u200B"',
    '"\\uFEFF"',
    ".",
    "<[3]>",
    "<[4]>",
    "!<[3]>",
    "a",
    "b",
    "c",
    "d",
    "root",
]
SUFFIXES = ["", "", "*", "?", "+", "{2}"]


@settings(max_examples=300, deadline=None)
@given(atom_grammars(ATOMS, SUFFIXES, ("root", "a", "b", "c", "d")))
def test_random_reference_graphs(text: str) -> None:
    try:
        grammar = gs.Grammar.from_gbnf(text)
    except GrammarError:
        assume(False)
        raise
    _assert_same(grammar)


@settings(max_examples=150, deadline=None)
@given(spelled_grammars())
def test_random_grammars(case: tuple[str, str]) -> None:
    text, root = case
    _assert_same(gs.Grammar.from_gbnf(text, root=root))


def test_llama_cpp_and_generated_grammars(llama_grammars: dict[str, Path]) -> None:
    texts = [path.read_text(encoding="utf-8") for path in llama_grammars.values()]
    for text in [*texts, generated_grammar(400)]:
        _assert_same(gs.Grammar.from_gbnf(text))


def test_schema_grammar() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 5},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "child": {"$ref": "#"},
        },
    }
    _assert_same(gs.Grammar.from_json_schema(schema))


def test_distinct_items_grammar() -> None:
    """No parser facts are kept for it: the core analyses the rules itself."""
    text = (
        "#@ distinct-items items\n"
        'root ::= "[" items "]"\n'
        'items ::= ("a" | "b") ("," ("a" | "b"))*\n'
    )
    _assert_same(gs.Grammar.from_gbnf(text))


@pytest.mark.parametrize(("lo", "hi"), INVISIBLE)
def test_every_invisible_range_edge(lo: int, hi: int) -> None:
    """Each range of the table, its ends and the code points just outside, in literals and
    classes (a class inside the range, one reaching one past it)."""
    rules = {
        "lo": f'"\\U{lo:08X}"',
        "hi": f'"\\U{hi:08X}"',
        "below": f'"\\U{lo - 1:08X}"',
        "above": f'"\\U{hi + 1:08X}"',
        "inside": f"[\\U{lo:08X}-\\U{hi:08X}]",
        "wider": f"[\\U{lo:08X}-\\U{hi + 1:08X}]",
        "negated": f"[^\\U{lo:08X}-\\U{hi:08X}]",
        "uses": "lo hi inside",
    }
    lines = ["root ::= " + " | ".join(rules)]
    lines += [f"{name} ::= {body}" for name, body in rules.items()]
    facts = _assert_same(gs.Grammar.from_gbnf("\n".join(lines) + "\n"))
    assert {"lo", "hi", "inside", "uses"} <= facts.invisible_rules
    assert not {"above", "wider", "negated", "root"} & facts.invisible_rules
    assert ("below" in facts.invisible_rules) == any(a <= lo - 1 <= b for a, b in INVISIBLE)


@pytest.mark.parametrize(
    "text",
    [
        'root ::= "a" | [a-c] | "x"',
        'root ::= "abc" | [a-c]+ | "abd" ("e" | [d-f] | "e")',
        'root ::= [^a] | . | "b" | [^a]',
        'root ::= x | "ab" | "zz" | x\nx ::= [a-z]*',
        'root ::= ("a" | "a") "b" | "c" | "c" | ("a" | "a") "b"',
        'root ::= (("ab" | [a-b]+) | "q") | ("q") | <[1]> | <[1]> | <t> | <t> | !<[1]>',
        'root ::= "a"{2,5} | "a"{2,5} | "a"{2,} | "a"{2,4} | x | x\nx ::= "a"',
    ],
)
def test_choices_by_hand(text: str) -> None:
    grammar = gs.Grammar.from_gbnf(text + "\n")
    _assert_same(grammar)
    assert Facts(grammar.rules, grammar.root, grammar._core).choice_survey()


def test_shortest_derivations_past_the_largest_length() -> None:
    """Lengths at and past sample.INF (2^60) count as no derivation, as in Python's integers."""
    lines = ['root ::= r7 | "z"', 'r0 ::= "aa" | r0 "b"']
    lines += [f"r{k} ::= r{k - 1}{{1000}}" for k in range(1, 8)]
    core = _assert_same(gs.Grammar.from_gbnf("\n".join(lines) + "\n"))
    table = core.shortest(list(core.rules))
    assert table["r5"] == (2 * 1000**5, 5)
    assert INF <= 2 * 1000**6 and "r6" not in table and "r7" not in table
    assert table["root"] == (1, 0)


def test_rules_from_elsewhere_use_the_reference() -> None:
    """Rules that are not the core grammar's (another order, other names) are analysed in
    Python, not matched up with the core's by accident."""
    grammar = gs.Grammar.from_gbnf('root ::= a b\na ::= "x" | a "y"\nb ::= " "*\n')
    reordered = dict(reversed(list(grammar.rules.items())))
    facts = Facts(reordered, grammar.root, grammar._core)
    assert list(facts.graph) == ["b", "a", "root"]
    assert facts.components == [["b"], ["a"], ["root"]]


@pytest.mark.parametrize(
    "text",
    [
        'root ::= e\ne ::= e "+" e | "a"\n',
        'root ::= x\nx ::= x x | "a" | "b"\n',
        'root ::= "[" v "]"\nv ::= v "," v | s\ns ::= "x" | "(" v ")" | n\nn ::= [0-9]+\n',
        'root ::= l\nl ::= l "+" n | n\nn ::= [0-9]+\n',
        'root ::= "(" root ")" root | ""\n',
        'root ::= t | "q"\nt ::= t t <[5]> | "a"\n',
    ],
)
def test_growth_measured_on_the_rooted_automaton(text: str) -> None:
    """ambiguous_growth measured on the diagnosed grammar's automaton started at the cycle (the
    core's facts) finds what the measurement on a grammar of the cycle's own rules finds."""
    grammar = gs.Grammar.from_gbnf(text)
    loc = Locator(text, grammar.rules)
    reference = Facts(grammar.rules, grammar.root)
    core = Facts(grammar.rules, grammar.root, grammar._core)
    assert core.core is not None and reference.core is None
    with mock.patch.object(growth, "_own_grammar", side_effect=AssertionError):
        found = [(f.line, f.column, f.message, f.fix) for f in growth.check_growth(core, loc)]
    assert found == [
        (f.line, f.column, f.message, f.fix) for f in growth.check_growth(reference, loc)
    ]


def test_growth_measured_apart_when_the_grammars_automaton_is_refused() -> None:
    """A rule the root reaches is too large for any automaton: the cycle is measured on a
    grammar of the rules it reaches, as before."""
    text = 'root ::= e | big\ne ::= e "+" e | "a"\nbig ::= (("x"{1000}){1000}){1000}\n'
    grammar = gs.Grammar.from_gbnf(text)
    with pytest.raises(gs.GrammarTooComplexError):
        grammar.automaton()
    facts = Facts(grammar.rules, grammar.root, grammar._core)
    with mock.patch.object(growth, "_own_grammar", wraps=growth._own_grammar) as own:
        [finding] = growth.check_growth(facts, Locator(text, grammar.rules))
    assert own.call_count == 1 and finding.code == "ambiguous_growth" and finding.rule == "e"
