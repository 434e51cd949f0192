"""Twins among the copies of a repetition (csrc/automaton/period_twins.cc): a position inside a
long count takes the mask of the same place in an earlier copy when the automaton around the two
agrees as far as a classification reads, instead of a key of thousands of states per position.

Exact: wherever a state has a twin within a radius, the state keys of that radius are equal
(equal keys, equal classifications: the shared cache's invariant, tests/test_state_keys.py), and
masks served through twins equal the brute force at every step."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler.schema import schema_to_gbnf
from mask_helpers import (
    assert_masks_exact,
    bpe_vocab,
    byte_vocab,
    mask_of,
    normal_tokens,
    tokenize,
)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def long_token_vocab() -> gs.Vocab:
    """Single bytes, runs of ``a`` up to 24 bytes and a few words: keys up to radius 25."""
    tokens = [bytes([i]) for i in range(256)]
    tokens += [b"a" * k for k in range(2, 25)] + [b"ab", b"ba", b'a"', b'",', b"\xc3\xa9"]
    tokens.append(b"</s>")
    return gs.Vocab(tokens, eos_ids=[len(tokens) - 1])


VOCABS = {"bytes": byte_vocab(), "bpe": bpe_vocab(), "long": long_token_vocab()}

GRAMMARS = {
    "count": 'root ::= "<" [a-z]{0,60} ">"',
    "bounded below": 'root ::= "<" [a-z]{12,60} ">"',
    "count ends the rule": 'root ::= "<" [a-z]{12,60}',
    "unbounded after copies": 'root ::= "<" [a-z]{10,} ">"',
    "utf-8 item": 'root ::= "\\"" [^"\\\\]{0,40} "\\""',
    "escapes": 'root ::= "\\"" ( [^"\\\\] | "\\\\" ["\\\\/bfnrt] ){0,30} "\\""',
    "loop back": 'root ::= ("<" [a-z]{0,30} ">" ",")*',
    "item calls a rule": 'root ::= "<" item{0,30} ">"\nitem ::= [a-z] | "(" root ")"',
    "nested counts": 'root ::= ("[" [a-z]{0,10} "]"){0,12}',
    "recursive": 'root ::= "<" [a-z]{0,30} root? ">"',
    # A rule too large to inline, called right after the count: a call of a rule that cannot
    # lead back, so twins stay.
    "count then a call": 'root ::= "<" [a-z]{0,40} ">" big\nbig ::= '
    + " | ".join(f'"w{i}" [0-9]*' for i in range(60)),
    "free JSON after a maxLength": schema_to_gbnf(
        {
            "type": "object",
            "properties": {"s": {"type": "string", "maxLength": 80}, "v": {}},
            "required": ["s", "v"],
            "additionalProperties": False,
        }
    ),
    "json maxLength": schema_to_gbnf(
        {
            "type": "object",
            "properties": {"s": {"type": "string", "maxLength": 60}, "n": {"type": "integer"}},
            "required": ["s", "n"],
            "additionalProperties": False,
        }
    ),
}


def compiled_of(text: str, vocab: gs.Vocab) -> gs.CompiledGrammar:
    return gs.compile(gs.Grammar.from_gbnf(text), vocab, cache=False, precompute=False)


def twin_pairs(compiled: gs.CompiledGrammar) -> int:
    """Checks every state's twin at every ladder radius against the state keys; returns how many
    (state, radius) pairs had a twin."""
    native = compiled._native
    radii = native._key_radii
    pairs = 0
    for state in range(native.num_states):
        for level, radius in enumerate(radii):
            twin = native._twin_below(state, radius)
            if twin == state:
                continue
            assert twin < state
            pairs += 1
            key = native._state_key(state, level)
            assert key == native._state_key(twin, level), (state, twin, radius)
    return pairs


@pytest.mark.parametrize("vocab_name", sorted(VOCABS))
@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_twins_have_equal_keys_within_their_radius(name: str, vocab_name: str) -> None:
    pairs = twin_pairs(compiled_of(GRAMMARS[name], VOCABS[vocab_name]))
    # Every grammar here repeats one item at least ten times with room after it; in the
    # recursive ones a call may lead back into the count's first copy, where the shift from one
    # copy to the next is no isomorphism, and no twin is claimed.
    assert (pairs > 0) == (name not in ("item calls a rule", "recursive"))


def test_positions_far_from_the_end_of_a_count_share_one_twin() -> None:
    compiled = compiled_of('root ::= "<" [a-z]{0,200} ">"', VOCABS["long"])
    native = compiled._native
    top = native._key_radii[-1]
    lows = {native._twin_below(s, top) for s in range(native.num_states)}
    # The start, the states one item from the end of the count, and a handful of first copies.
    assert len(lows) < top + 10 < native.num_states


@st.composite
def repetition_grammars(draw: st.DrawFn) -> str:
    items = ["[a-c]", '"ab"', '( "a" | "bc" )', '[^"\\\\]', '"x"?  [a-b]', "word"]
    around = ['""', '"a"', '"<"', "[a-c]*", '"b"?']
    item = draw(st.sampled_from(items))
    lo = draw(st.integers(0, 4))
    hi = draw(st.integers(lo + 8, lo + 24))
    body = f"{draw(st.sampled_from(around))} {item}{{{lo},{hi}}} {draw(st.sampled_from(around))}"
    if draw(st.booleans()):
        body = f'( {body} "," )*'
    return f'root ::= {body}\nword ::= "w" [a-b]'


@SETTINGS
@given(text=repetition_grammars(), vocab_name=st.sampled_from(sorted(VOCABS)))
def test_random_counts_have_exact_twins(text: str, vocab_name: str) -> None:
    twin_pairs(compiled_of(text, VOCABS[vocab_name]))


def replay(compiled: gs.CompiledGrammar, tokens: list[int], exact_every: int) -> gs.Matcher:
    m = gs.Matcher(compiled)
    for i, tid in enumerate(tokens):
        if i % exact_every == 0:
            assert_masks_exact(m, compiled.vocab_size)
        else:
            assert tid in mask_of(m, compiled.vocab_size)
        assert m.accept_token(tid)
    return m


@pytest.mark.parametrize("precompute", [False, True])
def test_a_long_count_is_served_by_twins_and_stays_exact(precompute: bool) -> None:
    vocab = VOCABS["long"]
    compiled = gs.compile(
        gs.Grammar.from_gbnf('root ::= "<" [a-z]{0,300} ">"'),
        vocab,
        cache=False,
        precompute=precompute,
    )
    table = normal_tokens(vocab)
    rng = np.random.default_rng(3)
    text = b"<" + bytes(int(c) for c in rng.choice(list(b"aaaabz"), size=260)) + b">"
    tokens = tokenize(text, table, lambda fits: fits[int(rng.integers(len(fits)))])
    replay(compiled, tokens, exact_every=1)
    stats = compiled.stats()
    assert stats.twins > 0
    # One classification per place of a copy the text visits near the start, then twins, until
    # the last 25 positions (the vocabulary's top radius), which meet the end of the count.
    assert stats.classified < len(tokens) // 2


def test_twins_add_no_memory() -> None:
    vocab = VOCABS["long"]
    compiled = compiled_of('root ::= "<" [a-z]{0,300} ">"', vocab)
    m = gs.Matcher(compiled)
    for tid in [vocab.tokens().index(b"<")] + [vocab.tokens().index(b"b")] * 3:
        mask_of(m, vocab.size)
        assert m.accept_token(tid)
    before = compiled.stats()
    b = vocab.tokens().index(b"b")
    for _ in range(100):
        mask_of(m, vocab.size)
        assert m.accept_token(b)
    after = compiled.stats()
    assert after.twins >= before.twins + 100
    assert after.classified == before.classified
    assert after.bytes == before.bytes


def test_a_json_string_with_max_length_replays_exactly_through_twins() -> None:
    vocab = VOCABS["bpe"]
    schema = {
        "type": "object",
        "properties": {"body": {"type": "string", "maxLength": 400}, "n": {"type": "integer"}},
        "required": ["body", "n"],
        "additionalProperties": False,
    }
    compiled = gs.compile(gs.Grammar.from_gbnf(schema_to_gbnf(schema)), vocab, cache=False)
    text = json.dumps({"body": 'ab é \\ "q" ' * 20 + "z" * 100, "n": 7}, ensure_ascii=False)
    rng = np.random.default_rng(5)
    tokens = tokenize(text.encode(), normal_tokens(vocab), lambda f: f[int(rng.integers(len(f)))])
    m = replay(compiled, tokens, exact_every=7)
    assert m.can_terminate()
    assert compiled.stats().twins > 0


def test_a_very_long_count_takes_the_nearest_filled_twin() -> None:
    # 100,000 copies: each position takes the entry of the position filled just before it
    # (stepping down one copy), not a walk down to the first copy; masks stay exact.
    vocab = VOCABS["long"]
    compiled = compiled_of('root ::= "<" [a-z]{0,100000} ">"', vocab)
    m = gs.Matcher(compiled)
    tokens = [vocab.tokens().index(b"<")] + [vocab.tokens().index(b"b")] * 3000
    for i, tid in enumerate(tokens):
        if i % 500 == 0:
            assert_masks_exact(m, compiled.vocab_size)
        else:
            assert tid in mask_of(m, compiled.vocab_size)
        assert m.accept_token(tid)
    stats = compiled.stats()
    assert stats.twins >= len(tokens) - 10
    assert stats.classified < 10
