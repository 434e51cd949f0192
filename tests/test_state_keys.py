"""The shared mask cache's keys are exact: a classification is stored under the key of the
smallest ladder radius that covers what its walk read, and any state whose key of that radius is
equal, in any grammar over the same vocabulary, has the same classification (the reference
walk on both). The keys reach only as far as the walk read, so states whose near futures agree
share a classification though their grammars differ further on."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler.compiled import clear_cache
from mask_helpers import bpe_vocab, byte_vocab
from strategies import grammars, to_gbnf_text
from vocab_fixtures import bpe_vocab as shared_bpe_vocab

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VOCABS = {"bytes": byte_vocab(), "bpe": bpe_vocab(), "shared_bpe": shared_bpe_vocab()}


def compiled_of(text: str, vocab: gs.Vocab, root: str = "root") -> gs.CompiledGrammar:
    return gs.compile(gs.Grammar.from_gbnf(text, root=root), vocab, cache=False, precompute=False)


def reference(compiled: gs.CompiledGrammar, state: int) -> tuple[list[int], list[int]]:
    return compiled._native._classify(state, True, 1)  # type: ignore[no-any-return]


def stored_groups(compiled: gs.CompiledGrammar) -> dict[tuple[int, bytes], list[int]]:
    groups: dict[tuple[int, bytes], list[int]] = {}
    for state in range(compiled._native.num_states):
        stored = compiled._native._stored_state_key(state)
        if stored is not None:
            groups.setdefault(stored, []).append(state)
    return groups


def assert_lookups_exact(grammars: list[gs.CompiledGrammar]) -> None:
    """As the cache looks entries up: every state of every grammar, keyed at the level of each
    stored entry, has that entry's classification when its key is the entry's."""
    stored: dict[tuple[int, bytes], tuple[list[int], list[int]]] = {}
    for compiled in grammars:
        for (level, key), states in stored_groups(compiled).items():
            stored.setdefault((level, key), reference(compiled, states[0]))
    for compiled in grammars:
        for level in sorted({level for level, _ in stored}):
            for state in range(compiled._native.num_states):
                key = compiled._native._state_key(state, level)
                if key is not None and (level, key) in stored:
                    assert reference(compiled, state) == stored[(level, key)], (level, state)


@SETTINGS
@given(data=st.data())
def test_a_state_whose_key_equals_a_stored_key_has_its_classification(
    data: st.DataObject,
) -> None:
    vocab = VOCABS[data.draw(st.sampled_from(sorted(VOCABS)))]
    pair = []
    for _ in range(2):
        rules, root = data.draw(grammars(max_rules=4))
        pair.append(compiled_of(to_gbnf_text(rules, root), vocab, root=root))
    assert_lookups_exact(pair)


def test_keys_reach_as_far_as_the_walk_read() -> None:
    # After "a" and after "b" the futures agree for k bytes; tokens of k + 1 bytes tell them
    # apart, so a key that reaches less far would serve one state the other's classification.
    tails = [b"x" * j + end for j in range(16) for end in (b"", b"1", b"2")]
    vocab = gs.Vocab([bytes([b]) for b in range(256)] + tails[1:], eos_ids=[0])
    for k in range(1, 14):
        compiled = compiled_of(f'root ::= "a" "x"{{{k}}} "1" | "b" "x"{{{k}}} "2"', vocab)
        assert_lookups_exact([compiled])


def test_keys_reach_as_far_as_twins_vouched_for_a_count() -> None:
    # A position of a long count takes its class's tokens by chain links the twins vouch for
    # (LoopFinder::TwinLinks), without walking them; that holds only as far as the count goes
    # on, so its key must not be shared with a count that ends within a token's length (the
    # same automaton near the position).
    runs = [b"a" * k for k in range(2, 31)]
    vocab = gs.Vocab([bytes([b]) for b in range(256)] + runs + [b"!" * 50], [0])
    pair = [compiled_of(f'root ::= "<" [a-z]{{0,{n}}} ">"', vocab) for n in (60, 25)]
    assert_lookups_exact(pair)


def test_keys_of_a_smaller_radius_are_prefixes() -> None:
    compiled = compiled_of(
        'root ::= "{" ws "\\"a\\":" ws num ("," ws num)* "}"\nws ::= [ \\n]{0,6}\nnum ::= [0-9]+',
        VOCABS["bpe"],
    )
    for state in range(compiled._native.num_states):
        keys = [compiled._native._state_key(state, level) for level in range(8)]
        for smaller, larger in itertools.pairwise(keys):
            assert smaller is not None and larger is not None
            assert larger.startswith(smaller)


def test_isomorphic_tails_share_a_key() -> None:
    # The two digit loops are distinct states of one rule with isomorphic futures.
    compiled = compiled_of('root ::= "a" [0-9]+ | "b" [0-9]+', VOCABS["bpe"])
    assert any(len(states) >= 2 for states in stored_groups(compiled).values())


@pytest.mark.parametrize("vocab_name", sorted(VOCABS))
@pytest.mark.parametrize(
    "text",
    [
        r'root ::= "\"" [a-c]{0,900} "\""',
        r'root ::= "\"" ( [^"\\] | "\\" ["\\nu] ){0,300} "\"" [0-9]{2,60}',
        'root ::= item{0,700} "."\nitem ::= "a" | "b" item "c"',
    ],
)
def test_long_repetitions_share_keys_beyond_the_longest_token(vocab_name: str, text: str) -> None:
    # A walk reads no further than the longest token (plus one byte): positions of a long
    # bounded repetition with more left than that share one key, and states with equal keys
    # still have equal classifications.
    compiled = compiled_of(text, VOCABS[vocab_name])
    groups = stored_groups(compiled)
    assert any(len(states) >= 3 for states in groups.values())
    for states in groups.values():
        first = reference(compiled, states[0])
        for state in states[1:]:
            assert reference(compiled, state) == first, (text, state)


@pytest.mark.parametrize("vocab_name", sorted(VOCABS))
def test_string_bodies_with_the_same_near_future_share_one_classification(
    vocab_name: str,
) -> None:
    # Two string bodies of one rule, each followed by the same 8 bytes, then by different text:
    # the walks from the bodies read no further than those bytes, so one classification serves
    # both (a key as far as the longest token reaches, 11 bytes here, would tell them apart).
    vocab = VOCABS[vocab_name]
    common = "x" * 8
    text = f'root ::= "<" [a-z ]* ">{common}A1<" [a-z ]* ">{common}B22;"'
    compiled = compiled_of(text, vocab)
    groups = stored_groups(compiled)
    assert any(len(states) >= 2 for states in groups.values())
    # Through the cache as a user meets it: the second body is served by the first one's entry.
    clear_cache()
    compiled = compiled_of(text, vocab)
    matcher = gs.Matcher(compiled)
    bitmask = gs.allocate_bitmask(1, vocab.size)
    expected = gs.allocate_bitmask(1, vocab.size)
    for byte in f"<ab c>{common}A1<de f>{common}B22;".encode():
        matcher.fill_mask(bitmask)
        matcher._fill_mask_reference(expected)  # the per-token walk, no cache
        assert np.array_equal(bitmask, expected), byte
        assert matcher.accept_bytes(bytes([byte]))
    assert compiled.stats().shared >= 1
