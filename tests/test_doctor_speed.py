"""The doctor's faster paths give what the simple definitions give: shapes (hash-consing) are
equal exactly when the subtrees are ``==``, ``reference_graph`` lists what ``references`` walks,
``shortest`` with the facts' graph and components equals ``shortest`` computing its own, and the
dialect check gives the same findings with the default checks' facts as without them."""

from __future__ import annotations

import itertools

import pytest

import gbnf_sampler as gs
from assets import llama_cpp_grammars, require
from gbnf_sampler import syntax
from gbnf_sampler.doctor.dialect import check_llama_cpp
from gbnf_sampler.doctor.facts import Facts
from gbnf_sampler.doctor.locate import Locator
from gbnf_sampler.doctor.sample import INF, shortest
from gbnf_sampler.doctor.shadow import SHAPED_BUCKET, Shapes, _covered, check_shadowed
from gbnf_sampler.doctor.tree import reachable, reference_graph, references, walk

GRAMMARS = {
    "dups": 'root ::= a | b | a | "x" | "x" | [a-c] | [a-c]\na ::= "q" b* | ("q" b*)\nb ::= "q"',
    "nested": 'root ::= ("a" | "b")+ | ("a" | "b")+ | ("a" | "c")+ | x{2,3} | x{2,4} | x{2,3}\n'
    "x ::= [^a] | [a] | x",
    "recursive": 'root ::= e\ne ::= e "+" e | n | "(" e ")"\nn ::= [0-9]+ | "-" n',
    "tokens": 'root ::= <think> t | t | <think> t\nt ::= "a" t | "b"',
}


def _sources() -> dict[str, str]:
    out = dict(GRAMMARS)
    try:
        paths = llama_cpp_grammars()
    except Exception:
        return out
    for name, path in paths.items():
        out[f"llama-{name}"] = path.read_text(encoding="utf-8")
    return out


def _all_nodes(rules: dict[str, syntax.Node]) -> list[syntax.Node]:
    return [n for body in rules.values() for n in walk(body)]


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_shapes_equal_exactly_when_subtrees_are_equal(name: str) -> None:
    rules = gs.Grammar.from_gbnf(GRAMMARS[name]).rules
    nodes = _all_nodes(rules)
    shapes = Shapes()
    equal_pairs = 0
    for a, b in itertools.combinations(nodes, 2):
        assert (shapes.of(a) == shapes.of(b)) == (a == b), (a, b)
        equal_pairs += a == b
    assert equal_pairs > 0  # the table has duplicates to find


def test_shapes_on_shared_llama_cpp_grammars() -> None:
    paths = require(llama_cpp_grammars)
    for path in paths.values():
        rules = gs.Grammar.from_gbnf(path.read_text(encoding="utf-8")).rules
        alternatives = [n for n in _all_nodes(rules) if isinstance(n, syntax.Alternation)]
        shapes = Shapes()
        for node in alternatives:
            for a, b in itertools.combinations(node.items, 2):
                assert (shapes.of(a) == shapes.of(b)) == (a == b)


def test_shadowed_duplicates_are_found_by_shape() -> None:
    text = GRAMMARS["dups"]
    grammar = gs.Grammar.from_gbnf(text)
    facts = Facts(grammar.rules, grammar.root)
    found = check_shadowed(facts, Locator(text, grammar.rules))
    # root: alternative 3 (a) = 1, 5 ("x") = 4, 7 ([a-c]) = 6; a: alternative 2 = 1 (a group).
    pairs = sorted((f.line, f.column) for f in found)
    assert pairs == [(1, 18), (1, 28), (1, 42), (2, 16)]


@pytest.mark.parametrize("name", sorted(_sources()))
def test_reference_graph_matches_references(name: str) -> None:
    rules = gs.Grammar.from_gbnf(_sources()[name]).rules
    graph = reference_graph(rules)
    for rule, body in rules.items():
        assert graph[rule] == list(dict.fromkeys(r for r in references(body) if r in rules))


@pytest.mark.parametrize("name", sorted(_sources()))
def test_shortest_with_shared_graph_is_the_same(name: str) -> None:
    grammar = gs.Grammar.from_gbnf(_sources()[name])
    facts = Facts(grammar.rules, grammar.root)
    for start in grammar.rules:
        needed = reachable(facts.graph, start)
        part = {n: b for n, b in grammar.rules.items() if n in needed}
        assert shortest(part, facts.graph, facts.components) == shortest(part)


@pytest.mark.parametrize("name", sorted(_sources()))
def test_dialect_findings_with_shared_facts_are_the_same(name: str) -> None:
    text = _sources()[name]
    grammar = gs.Grammar.from_gbnf(text)
    facts = Facts(grammar.rules, grammar.root)
    shared = [f.rendered for f in check_llama_cpp(text, grammar, facts)]
    alone = [f.rendered for f in check_llama_cpp(text, grammar)]
    assert shared == alone


def _naive_minimum(node: syntax.Node, table: dict[str, tuple[int, int]]) -> tuple[int, int]:
    if isinstance(node, syntax.Literal):
        return len(node.codepoints), 0
    if isinstance(node, (syntax.CharClass, syntax.AnyChar)):
        return 1, 0
    if isinstance(node, syntax.TokenRef):
        return INF, INF
    if isinstance(node, syntax.RuleRef):
        length, height = table.get(node.name, (INF, INF))
        return (length, height + 1) if length < INF else (INF, INF)
    if isinstance(node, syntax.Sequence):
        parts = [_naive_minimum(i, table) for i in node.items]
        if any(p[0] >= INF for p in parts):
            return INF, INF
        return sum(p[0] for p in parts), max((p[1] for p in parts), default=0)
    if isinstance(node, syntax.Alternation):
        return min(_naive_minimum(i, table) for i in node.items)
    assert isinstance(node, syntax.Repeat)
    if node.min == 0:
        return 0, 0
    length, height = _naive_minimum(node.item, table)
    return (length * node.min, height) if length < INF else (INF, INF)


@pytest.mark.parametrize("name", sorted(_sources()))
def test_shortest_is_the_naive_fixpoint(name: str) -> None:
    """Whole passes over every rule until nothing improves: the definition, slowly."""
    rules = gs.Grammar.from_gbnf(_sources()[name]).rules
    table: dict[str, tuple[int, int]] = {}
    changed = True
    while changed:
        changed = False
        for rule, body in rules.items():
            value = _naive_minimum(body, table)
            if value < table.get(rule, (INF, INF)):
                table[rule], changed = value, True
    assert shortest(rules) == {n: v for n, v in table.items() if v[0] < INF}


def test_large_buckets_find_the_first_equal_alternative() -> None:
    """More alternatives of one fingerprint than SHAPED_BUCKET: shapes decide, as == would."""
    keys = [f'"k{i}" "v"' for i in range(SHAPED_BUCKET + 6)]
    keys += [keys[3], keys[SHAPED_BUCKET + 2], keys[3], '("k5" "v")']
    grammar = gs.Grammar.from_gbnf("root ::= " + " | ".join(keys))
    body = grammar.rules["root"]
    assert isinstance(body, syntax.Alternation)
    facts = Facts(grammar.rules, grammar.root)
    items = body.items
    naive = {
        j: next(i for i in range(j) if items[i] == items[j])
        for j in range(len(items))
        if any(items[i] == items[j] for i in range(j))
    }
    n = SHAPED_BUCKET + 6
    assert naive == {n: 3, n + 1: SHAPED_BUCKET + 2, n + 2: 3, n + 3: 5}
    assert _covered(items, facts) == naive
