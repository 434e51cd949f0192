"""Long repetitions built by replication (csrc/automaton/nfa_builder.cc, shifted_copies.cc): the
NFA builder builds three copies of a count's item, checks that the third is the second shifted by
one copy's states and keeps the rest as replicas of it (states, and edges read through the third
copy's); the assembler then emits the copies past the second by shifting the edges of the state
one copy earlier, as far as the closures of copy 1 show that holds.

Exact: the rule's FSM (states, edges, final kinds, twins) is the one built copy by copy, for
every grammar here and for random counts; and the fast paths are taken where they should be."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler import _core
from gbnf_sampler.errors import GrammarTooComplexError
from gbnf_sampler.schema import schema_to_gbnf

DEPTH = 64
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

JSON_STRING = schema_to_gbnf({"type": "string", "maxLength": 300})

# name: (GBNF, rule, whether copies are emitted by shifting, whether copies are replicas)
GRAMMARS = {
    "optional copies": ('root ::= "<" [a-z]{0,100} ">"', "root", True, True),
    "mandatory copies": ('root ::= "<" [a-z]{100} ">"', "root", True, True),
    "both": ('root ::= ("ab" | "c"){20,50} "x"', "root", True, True),
    "count ends the rule": ('root ::= "<" [a-z]{12,60}', "root", True, True),
    # The inner counts replicate with edges (the outer copies' template holds them).
    "nested counts": ('root ::= ("x" [0-9]{10}){0,300}', "root", True, True),
    "utf-8 class": ('root ::= [^"\\\\]{100}', "root", True, True),
    "json maxLength": (JSON_STRING, "value-schema", True, True),
    "inlined rule in the item": ('root ::= item{40}\nitem ::= "a" [0-9]', "root", True, True),
    "called rule in the item": (
        'root ::= item{40} "."\nitem ::= "(" root? ")" | [a-z]',
        "root",
        True,
        True,
    ),
    "token in the item": ('root ::= (<[7]> "a"){30}', "root", True, True),
    "count in a loop": ('root ::= ("<" [a-z]{0,20} ">")*', "root", True, True),
    "recursive": ('root ::= ("a" root "b"){0,12} | "c"', "root", True, True),
    # Closures that run through every later copy: nothing can be shifted, all built from the
    # replicas' edges.
    "nullable item": ('root ::= ("a"?){0,50} "b"', "root", False, True),
    "star item": ('root ::= ([a-z]*){0,30} "b"', "root", False, True),
    "empty item": ('root ::= (""){0,1000} "a"', "root", False, False),
    "few copies": ('root ::= [a-z]{0,7} "b"', "root", False, False),
    # Closures that leave the count and come back to its first copy.
    "count in a nullable loop": ('root ::= ([a-z]{0,20} ";"?)* "."', "root", False, True),
}


def assembled(text: str, rule: str, replicate: bool) -> tuple[list[object], int, int]:
    grammar = gs.Grammar.from_gbnf(text)
    states, shifted, replicas = _core._assembled_rule(grammar._core, rule, DEPTH, replicate)
    return list(states), shifted, replicas


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_replicated_copies_build_the_same_rule(name: str) -> None:
    text, rule, shifts, replicates = GRAMMARS[name]
    fast, shifted, replicas = assembled(text, rule, True)
    reference, none, no_replicas = assembled(text, rule, False)
    assert none == 0 and no_replicas == 0
    assert fast == reference
    assert (shifted > 0) == shifts, shifted
    assert (replicas > 0) == replicates, replicas


def test_a_long_json_string_is_mostly_shifted() -> None:
    states, shifted, replicas = assembled(JSON_STRING, "value-schema", True)
    # 300 copies: all but the first three are replicas, all but the first two and the last few
    # are shifted.
    assert replicas == 297
    assert shifted >= 0.95 * len(states)


@st.composite
def counted_items(draw: st.DrawFn) -> str:
    atoms = ['"a"', "[0-9]", '"xy"', "[^\\x00-\\x7f]", '"q"?', "[a-c]+", '("k" | "lm")']
    item = " ".join(draw(st.lists(st.sampled_from(atoms), min_size=1, max_size=3)))
    lo = draw(st.integers(0, 12))
    hi = lo + draw(st.integers(0, 30))
    after = draw(st.sampled_from(['"."', "", '"." root?', '[a-z]{0,9} ";"']))
    return f"root ::= ({item}){{{lo},{hi}}} {after}".rstrip()


@SETTINGS
@given(text=counted_items())
def test_random_counts_replicate_exactly(text: str) -> None:
    assert assembled(text, "root", True)[0] == assembled(text, "root", False)[0]


def test_a_count_past_the_budget_is_still_refused() -> None:
    # 40,000 copies of 3 states and 4 edges: the up-front bound (5 per copy) lets a budget of
    # 210,000 through, the replicated copies pass it.
    grammar = gs.Grammar.from_gbnf('root ::= "<" ("ab" [0-9]){0,40000} ">"')
    with pytest.raises(GrammarTooComplexError) as info:
        _core.Automaton.build(grammar._core, 210_000, DEPTH).num_states  # noqa: B018 (builds)
    assert info.value.limit == "max_automaton_size"
    assert "expands to at least" not in str(info.value)  # not refused up front
    assert _core.Automaton.build(grammar._core, 1 << 22, DEPTH).num_states > 120_000
