"""The automaton operations (``regex.automata``) against their definitions, on random trees
over a small alphabet whose character sets are split into many ranges (as Unicode classes
are): a product accepts what both automata accept, a complement what one refuses."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnf_sampler.limits import MAX_DFA_STATES
from gbnf_sampler.regex import automata, tree
from gbnf_sampler.regex.other_words import other_words

ALPHABET = "abcdefgh"


def _chars(picked: list[str]) -> tree.Node:
    # one range per letter, never merged with its neighbour: many ranges per set
    return tree.Chars(tree.normalize((ord(c), ord(c)) for c in sorted(set(picked))))


LEAVES = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=6).map(_chars)
TREES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: tree.seq(*xs)),
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: tree.alt(*xs)),
        st.tuples(inner, st.integers(0, 2), st.sampled_from([None, 0, 1, 3])).map(
            lambda t: tree.rep(t[0], t[1], None if t[2] is None else t[1] + t[2])
        ),
    ),
    max_leaves=6,
)
TEXTS = st.lists(st.text(ALPHABET, max_size=7), min_size=1, max_size=25)


@settings(max_examples=300, deadline=None)
@given(a=TREES, b=TREES, texts=TEXTS)
def test_product_accepts_what_both_accept(a: tree.Node, b: tree.Node, texts: list[str]) -> None:
    da, db = automata.from_regex(a), automata.from_regex(b)
    both = automata.intersect(da, db)
    for text in texts:
        assert both.matches(text) == (da.matches(text) and db.matches(text)), text
    # the product is deterministic: no code point leaves a state twice
    for row in both.trans:
        points = sorted(r for ranges in row.values() for r in ranges)
        assert all(x[1] < y[0] for x, y in itertools.pairwise(points))


@settings(max_examples=200, deadline=None)
@given(a=TREES, b=TREES, texts=TEXTS)
def test_product_with_a_complement(a: tree.Node, b: tree.Node, texts: list[str]) -> None:
    da, db = automata.from_regex(a), automata.from_regex(b)
    minus = automata.intersect(da, automata.complement(db))
    for text in texts:
        assert minus.matches(text) == (da.matches(text) and not db.matches(text)), text


def test_product_past_the_state_limit_fails() -> None:
    def cycle(n: int) -> automata.Dfa:  # runs of "a" whose length is a multiple of n
        return automata.from_regex(tree.rep(tree.literal("a" * n), 0, None))

    small = automata.intersect(cycle(3), cycle(5))
    assert small.matches("a" * 15) and not small.matches("a" * 5)
    assert small.matches("a" * 30) and not small.matches("a" * 10)
    try:
        automata.intersect(cycle(149), cycle(151))  # 22,499 product states
    except automata.TooLarge:
        pass
    else:
        raise AssertionError("TooLarge expected")


def _same_language(a: automata.Dfa, b: automata.Dfa) -> bool:
    return (
        automata.intersect(a, automata.complement(b)).is_empty()
        and automata.intersect(b, automata.complement(a)).is_empty()
    )


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.text("ab\u00e9\U0001f600", max_size=5), max_size=8),
    texts=st.lists(st.text("ab\u00e9\U0001f600c", max_size=6), max_size=20),
)
def test_other_words_is_the_complement_of_the_words(words: list[str], texts: list[str]) -> None:
    # Built from the trie, it must be the complement of the words' subset construction.
    built = other_words(words)
    if words:
        literals = tree.alt(*(tree.literal(w) if w else tree.EMPTY for w in words))
        assert _same_language(built, automata.complement(automata.from_regex(literals)))
    for text in [*texts, *words]:
        assert built.matches(text) is (text not in words), text


def test_other_words_shares_the_ends_and_keeps_the_state_limit() -> None:
    # "ab", "cd", "e": one state for the ends nothing continues; the root, "a", "c"; the sink.
    assert len(other_words(["ab", "cd", "e"]).trans) == 5
    with pytest.raises(automata.TooLarge):
        other_words(f"{i:05d}ab" for i in range(MAX_DFA_STATES))  # two states of its own each
