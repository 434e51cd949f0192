"""The per-rule facts the automaton builder starts from (csrc/grammar/rule_facts.cc): which rules
derive some string, which derive the empty string, which are inlined, how deep each body is.
The core computes all four in one pass over the rules' components; here each is computed the
slow, obvious way (fixpoints by repetition, recursion by reachability, costs by recursion) on
random grammars with cycles and nullable rules, llama.cpp's grammars and schema grammars. (The
parser refuses rules that derive nothing, so every parsed rule is productive.)"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from assets import llama_cpp_assets
from gbnf_sampler import _core
from gbnf_sampler import syntax as gast
from gbnf_sampler.limits import MAX_AUTOMATON_NESTING
from reference import class_ranges
from strategies import Draw, literals, to_gbnf_text

INLINE_BUDGET = 128  # kInlineBudget: expanded AST nodes of an inlined rule
COST_CAP = 1 << 30

Facts = dict[str, tuple[bool, bool, bool, int]]


def _children(node: gast.Node) -> tuple[gast.Node, ...]:
    if isinstance(node, (gast.Sequence, gast.Alternation)):
        return node.items
    if isinstance(node, gast.Repeat):
        return (node.item,)
    return ()


def _derives(node: gast.Node, known: Mapping[str, bool], empty: bool) -> bool:
    """Whether ``node`` derives some string (``empty``: the empty string), given the rules'."""
    if isinstance(node, gast.RuleRef):
        return known[node.name]
    if isinstance(node, gast.Sequence):
        return all(_derives(c, known, empty) for c in node.items)
    if isinstance(node, gast.Alternation):
        return any(_derives(c, known, empty) for c in node.items)
    if isinstance(node, gast.Repeat):
        return node.min == 0 or node.max == 0 or _derives(node.item, known, empty)
    if isinstance(node, gast.Literal):
        return not node.codepoints if empty else True
    if isinstance(node, gast.CharClass):
        return False if empty else bool(class_ranges(node))
    return not empty  # AnyChar, TokenRef


def _least_fixpoint(rules: Mapping[str, gast.Node], empty: bool) -> dict[str, bool]:
    known = dict.fromkeys(rules, False)
    changed = True
    while changed:
        changed = False
        for name, body in rules.items():
            if not known[name] and _derives(body, known, empty):
                known[name] = changed = True
    return known


def _references(node: gast.Node) -> set[str]:
    if isinstance(node, gast.RuleRef):
        return {node.name}
    return set().union(*(_references(c) for c in _children(node)))


def _height(node: gast.Node) -> int:
    return max((1 + _height(c) for c in _children(node)), default=0)


def reference_facts(grammar: gs.Grammar, max_depth: int) -> Facts:
    rules = grammar.rules
    productive = _least_fixpoint(rules, empty=False)
    nullable = _least_fixpoint(rules, empty=True)
    calls = {name: _references(body) for name, body in rules.items()}

    def recursive(name: str) -> bool:
        seen: set[str] = set()
        todo = list(calls[name])
        while todo:
            r = todo.pop()
            if r == name:
                return True
            if r not in seen:
                seen.add(r)
                todo.extend(calls[r])
        return False

    distinct = set(grammar._core.distinct_item_rules())

    @functools.cache
    def inlinable(name: str) -> bool:
        return not recursive(name) and name not in distinct and cost(name) <= INLINE_BUDGET

    @functools.cache
    def cost(name: str) -> int:  # only asked of rules outside recursion
        return node_cost(rules[name], 0)

    def node_cost(node: gast.Node, depth: int) -> int:
        if depth > max_depth:
            return COST_CAP
        if isinstance(node, gast.RuleRef):
            return 1 + cost(node.name) if inlinable(node.name) else 1
        total = 1 + sum(node_cost(c, depth + 1) for c in _children(node))
        if isinstance(node, gast.Repeat):
            total *= max(node.min, 1) if node.max is None else max(node.max, 1)
        return min(total, COST_CAP)

    return {
        name: (productive[name], nullable[name], inlinable(name), min(_height(body), max_depth + 1))
        for name, body in rules.items()
    }


SIZE_BUDGET = 1 << 20  # NFAs past it are not built for the size check


def assert_facts_match(grammar: gs.Grammar, max_depth: int = MAX_AUTOMATON_NESTING) -> None:
    assert _core._rule_facts(grammar._core, max_depth) == reference_facts(grammar, max_depth)
    # The size bound must hold for the NFA the builder really makes (it refuses rules up front).
    for name, (bound, size) in _core._rule_sizes(grammar._core, max_depth, SIZE_BUDGET).items():
        assert size is None or bound <= size, name
    assert_parsed_facts_reused_exactly(grammar, max_depth)


def assert_parsed_facts_reused_exactly(grammar: gs.Grammar, max_depth: int) -> None:
    """The automaton takes the parser's facts instead of walking the tree again: only when they
    equal what a fresh analysis with its nesting limit gives."""
    reused, facts = _core._automaton_facts(grammar._core, max_depth, True)
    fresh = _core._automaton_facts(grammar._core, max_depth, False)[1]
    assert facts == fresh
    # Their size bounds count inlined callees in full, which the limit must allow.
    deepest = max(f[6] for f in fresh.values())
    assert reused == (deepest <= max_depth)


# -- random grammars: cycles, nullable rules, repetitions past the budget ------------------------

NAMES = ("root", "a", "b", "c", "d", "e")


@st.composite
def _nodes(draw: Draw, names: tuple[str, ...], depth: int) -> gast.Node:
    leaves = st.one_of(
        literals(),
        st.just(gast.Literal(())),
        st.just(gast.Sequence(())),
        st.just(gast.CharClass(((0x61, 0x7A),))),
        st.just(gast.CharClass(((0x01, 0x10FFFF),), negated=True)),  # only U+0000: productive
        st.just(gast.AnyChar()),
        st.sampled_from(names).map(gast.RuleRef),
    )
    if depth == 0:
        return draw(leaves)
    inner = _nodes(names, depth - 1)
    kind = draw(st.sampled_from(("leaf", "leaf", "seq", "alt", "repeat")))
    if kind == "leaf":
        return draw(leaves)
    if kind == "repeat":
        low = draw(st.sampled_from((0, 1, 2, 5, 40)))
        high = draw(st.sampled_from((None, 0, low, low + 1, 3 * low + 2, 200)))
        return gast.Repeat(draw(inner), low, high if high is None or high >= low else low)
    items = tuple(draw(st.lists(inner, min_size=2, max_size=3)))
    return gast.Sequence(items) if kind == "seq" else gast.Alternation(items)


@st.composite
def random_grammars(draw: Draw) -> str:
    names = NAMES[: draw(st.integers(1, len(NAMES)))]
    rules = {name: draw(_nodes(names, draw(st.integers(0, 4)))) for name in names}
    return to_gbnf_text(rules, "root")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_grammars(), st.sampled_from((MAX_AUTOMATON_NESTING, 1, 2, 4)))
def test_random_grammars(text: str, max_depth: int) -> None:
    try:
        grammar = gs.Grammar.from_gbnf(text)
    except gs.GrammarError:  # a root that matches nothing, say
        return
    assert_facts_match(grammar, max_depth)


def test_hand_picked_cases() -> None:
    grammar = gs.Grammar.from_gbnf(
        "root ::= loop | chain | wide | maybe\n"
        'loop ::= "x" loop | ""\n'  # self-recursive: never inlined
        "chain ::= ping\n"
        'ping ::= "p" pong?\n'  # ping and pong recurse through each other
        'pong ::= ping "q"\n'
        "wide ::= [a-z]{200}\n"  # over the inline budget
        'maybe ::= ("a" | "")*\n'
        'first ::= second | "f" first\n'  # nullable only once second is known to be
        'second ::= "" | "s" first\n'
    )
    facts = _core._rule_facts(grammar._core, MAX_AUTOMATON_NESTING)
    assert facts["loop"][:3] == (True, True, False)
    assert facts["chain"][:3] == (True, False, True)  # a call of a recursive rule costs 1
    assert facts["ping"][2] is False and facts["pong"][2] is False
    assert facts["wide"][2] is False
    assert facts["maybe"][:3] == (True, True, True)
    assert facts["first"][:3] == (True, True, False) and facts["second"][:3] == (True, True, False)
    assert_facts_match(grammar)


def test_llama_cpp_grammars() -> None:
    paths = sorted((llama_cpp_assets() / "grammars").glob("*.gbnf"))
    assert paths
    for path in paths:
        assert_facts_match(gs.Grammar.from_gbnf(Path(path).read_text()))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "string"}, "uniqueItems": True},  # distinct items
        {
            "type": "object",
            "properties": {"name": {"type": "string"}, "tags": {"$ref": "#"}},
            "required": ["name"],
        },
    ],
)
def test_schema_grammars(schema: dict[str, object]) -> None:
    assert_facts_match(gs.Grammar.from_json_schema(schema))


# -- the size bound: a lower bound on each rule's NFA, close enough to refuse huge rules --------


def test_size_bound_of_repetitions_and_alternatives() -> None:
    grammar = gs.Grammar.from_gbnf(
        "root ::= rep | nested | words | classes | star | call | empty\n"
        'rep ::= "ab"{1000}\n'
        'nested ::= ("x" [0-9]{10}){0,300}\n'
        'words ::= ("alpha" | "beta" | "gamma" | [a-z]{20}){50}\n'
        'classes ::= [^"\\\\]{100}\n'
        'star ::= ("abc")+ ("d"{5})*\n'
        "call ::= rep{3} small{100}\n"
        'small ::= "s"\n'
        'empty ::= ""{0,1000} ("a"){0}\n'
    )
    sizes = _core._rule_sizes(grammar._core, MAX_AUTOMATON_NESTING, SIZE_BUDGET)
    for name, (bound, size) in sizes.items():
        assert size is not None and bound <= size, name
        # Tight within a small factor where repetitions dominate (what the refusal relies on).
        if name in ("rep", "nested", "words", "classes", "call"):
            assert 4 * bound >= size, (name, bound, size)
    assert sizes["empty"][0] == 0


def test_size_bound_counts_inlined_rules_in_full() -> None:
    # A JSON string's character rule is inlined into each copy of a count: the bound counts its
    # body there, not the call it would be (which made the bound of `text` 57x too low).
    grammar = gs.Grammar.from_gbnf(
        "root ::= text | shallow\n"
        'text ::= "\\"" char{0,500} "\\""\n'
        'char ::= [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})\n'
        "shallow ::= ab{50}\n"
        'ab ::= "a" | "b"\n'
    )
    sizes = _core._rule_sizes(grammar._core, MAX_AUTOMATON_NESTING, SIZE_BUDGET)
    for name in ("text", "shallow"):
        bound, size = sizes[name]
        assert size is not None and bound <= size <= 4 * bound, (name, bound, size)
    # Where the nesting limit leaves no room to inline, the references stay calls: a call's size.
    shallow = _core._rule_sizes(grammar._core, 2, SIZE_BUDGET)["shallow"]
    assert shallow[1] is not None and shallow[0] <= shallow[1] < sizes["shallow"][1]


def test_facts_of_deep_grammars_are_not_reused_and_distinct_ones_are_kept_exact() -> None:
    deep = gs.Grammar.from_gbnf("root ::= " + "(" * 6 + '"a"' + ")*" * 6)
    assert _core._automaton_facts(deep._core, 4, True)[0] is False  # deeper than the limit
    assert _core._automaton_facts(deep._core, MAX_AUTOMATON_NESTING, True)[0] is True
    assert_parsed_facts_reused_exactly(deep, 4)
    # Distinct-items rules are never inlined: the facts kept are computed with them known.
    distinct = gs.Grammar.from_json_schema(
        {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    )
    assert distinct._core.distinct_item_rules()
    assert_parsed_facts_reused_exactly(distinct, MAX_AUTOMATON_NESTING)
    inlined = gs.Grammar.from_gbnf('root ::= "[" items "]"\nitems ::= "a" ("," "a")*\n')
    marked = gs.Grammar.from_gbnf(
        '#@ distinct-items items\nroot ::= "[" items "]"\nitems ::= "a" ("," "a")*\n'
    )
    _, plain = _core._automaton_facts(inlined._core, MAX_AUTOMATON_NESTING, True)
    reused, facts = _core._automaton_facts(marked._core, MAX_AUTOMATON_NESTING, True)
    assert reused and plain["items"][2] is True and facts["items"][2] is False


def test_size_bound_saturates() -> None:
    grammar = gs.Grammar.from_gbnf('root ::= (((("ab"){100000}){100000}){100000}){100000}')
    bound = _core._rule_sizes(grammar._core, MAX_AUTOMATON_NESTING, 1 << 12)["root"][0]
    assert bound == 1 << 62  # kSizeCap: no overflow past it
