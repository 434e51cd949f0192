"""Prefetch: after an accept, a background worker classifies the mask-cache entries the next fill
needs and, when that fill is more than a copy of cached entries, fills the whole next mask on a
fork, so that the model's step between accept and fill hides the work. The fill then takes the
mask, finds the entries done or joins the work in flight; masks stay exact either way (compared
with brute force: fork the matcher, try every token)."""

from __future__ import annotations

import gc
import random
import time

import gbnf_sampler as gs
from mask_helpers import assert_masks_exact, bpe_vocab, normal_tokens, tokenize

JSON_TEXT = b'{"name": "Ada", "tags": ["x", "caf\xc3\xa9"], "n": -12.5, "ok": [true, null]}'


def wait_until(condition, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the background worker did not get there"
        time.sleep(0.005)


def prefetching(grammar: gs.Grammar, vocab: gs.Vocab) -> gs.CompiledGrammar:
    """A fresh compile with prefetch alone in the background (no precompute plan)."""
    return gs.compile(grammar, vocab, cache=False, precompute=False, prefetch=True)


def test_an_accept_fills_the_next_entry_in_the_background() -> None:
    # After "{" the matcher holds one item, in the loop over [a-z]: its entry is new.
    compiled = prefetching(gs.Grammar.from_gbnf('root ::= "{" [a-z]* "}"'), bpe_vocab())
    m = gs.Matcher(compiled)
    assert_masks_exact(m, compiled.vocab_size)
    before = compiled.stats()
    assert before.prefetched == 0
    assert m.accept_token(ord("{"))
    (state,) = set(m._core.item_states())
    wait_until(lambda: compiled._native._state_filled(state))
    stats = compiled.stats()
    assert stats.prefetched == 1 and stats.classified == before.classified + 1
    mask = assert_masks_exact(m, compiled.vocab_size)
    assert ord("a") in mask and ord("}") in mask and ord("{") not in mask
    assert compiled.stats().classified == stats.classified  # the fill classified nothing


def test_no_prefetch_when_switched_off() -> None:
    for kwargs in ({"precompute": False, "prefetch": False}, {"precompute": False}):
        compiled = gs.compile(gs.Grammar.json(), bpe_vocab(), cache=False, **kwargs)
        m = gs.Matcher(compiled)
        for tid in tokenize(JSON_TEXT, normal_tokens(compiled.vocab), lambda fits: fits[-1]):
            m.allowed_tokens()
            assert m.accept_token(tid)
        time.sleep(0.05)
        assert compiled.stats().prefetched == 0


def test_fills_racing_prefetch_stay_exact() -> None:
    # Fills right after the accept (joining the worker's job, or taking it first) and fills after
    # a pause (the worker done): every mask equals brute force.
    rng = random.Random(5)
    for round_ in range(3):
        vocab = bpe_vocab()  # a fresh shared cache: every state classified at first sight
        compiled = prefetching(gs.Grammar.json(), vocab)
        m = gs.Matcher(compiled)
        for tid in tokenize(JSON_TEXT, normal_tokens(vocab), lambda fits: fits[-1]):
            assert tid in assert_masks_exact(m, compiled.vocab_size)
            assert m.accept_token(tid)
            if round_ > 0 and rng.random() < 0.5:
                time.sleep(0.002)
        assert m.can_terminate()
        stats = compiled.stats()
        assert stats.classified >= stats.prefetched
        if round_ > 0:  # a pause after some accepts: the worker got there first at least once
            assert stats.prefetched >= 1


def test_accept_bytes_prefetches_too() -> None:
    compiled = prefetching(gs.Grammar.from_gbnf('root ::= "{" [a-z]* "}"'), bpe_vocab())
    m = gs.Matcher(compiled)
    assert m.accept_bytes(b"{ab")
    (state,) = set(m._core.item_states())
    wait_until(lambda: compiled._native._state_filled(state))
    assert compiled.stats().prefetched == 1


def test_a_grammar_dropped_with_prefetch_queued() -> None:
    for _ in range(20):
        compiled = prefetching(gs.Grammar.json(), bpe_vocab())
        m = gs.Matcher(compiled)
        assert m.accept_bytes(b'{"key": [1, "')
        del m, compiled  # the queued work holds the grammar's cache weakly: it is skipped
        gc.collect()
    compiled = gs.compile(gs.Grammar.json(), bpe_vocab(), cache=False, precompute=False)
    assert_masks_exact(gs.Matcher(compiled), compiled.vocab_size)


# Nested brackets: inside a word, a token that ends it with ")" or "]" depends on the stack (the
# word's rule is recursive, so it is not inlined per caller): 1,352 context-dependent tokens, past
# the 256 a matcher walks itself.
BRACKETS = 'root ::= e\ne ::= "(" e ")" | "[" e "]" | [a-z]+'
LETTERS = [bytes([c]) for c in range(ord("a"), ord("z") + 1)]
WORD_ENDS = [a + b + end for a in LETTERS for b in LETTERS for end in (b")", b"]")]


def bracket_vocab() -> gs.Vocab:
    tokens = [bytes([i]) for i in range(256)] + WORD_ENDS
    return gs.Vocab([*tokens, b"<eos>"], eos_ids=[len(tokens)])


def test_a_fill_takes_the_mask_filled_ahead() -> None:
    # Timing decides whether the worker is done before the fill: over a few tries with growing
    # pauses it is, at least once; every mask is exact whoever filled it.
    taken = 0
    for attempt in range(6):
        compiled = prefetching(gs.Grammar.from_gbnf(BRACKETS), bracket_vocab())
        m = gs.Matcher(compiled)
        assert m.accept_bytes(b"([ab")
        time.sleep(0.02 * 2**attempt)
        mask = assert_masks_exact(m, compiled.vocab_size)
        assert 256 + WORD_ENDS.index(b"ab]") in mask and 256 + WORD_ENDS.index(b"ab)") not in mask
        taken += compiled.stats().masks_filled_ahead
        if taken:
            break
    assert taken == 1


def test_no_mask_filled_ahead_for_a_copy_of_cached_entries() -> None:
    compiled = prefetching(gs.Grammar.from_gbnf('root ::= "{" [a-z]* "}"'), bpe_vocab())
    text = b"{abcab}"
    first = gs.Matcher(compiled)
    for byte in text:
        first.allowed_tokens()
        assert first.accept_bytes(bytes([byte]))
    first.allowed_tokens()  # every entry of the text filled
    before = compiled.stats()
    second = gs.Matcher(compiled)
    for byte in text:
        assert_masks_exact(second, compiled.vocab_size)
        assert second.accept_bytes(bytes([byte]))
        time.sleep(0.005)
    after = compiled.stats()
    assert after.masks_filled_ahead == before.masks_filled_ahead
    assert after.classified == before.classified


def test_a_mask_filled_ahead_is_dropped_when_the_state_moves() -> None:
    # Rollback, reset or another accept between the accept and the fill: the mask filled for the
    # old state is never used.
    for change in ("rollback", "reset", "accept"):
        compiled = prefetching(gs.Grammar.from_gbnf(BRACKETS), bracket_vocab())
        m = gs.Matcher(compiled)
        assert m.accept_bytes(b"(ab")
        assert m.accept_bytes(b"c")
        time.sleep(0.05)
        if change == "rollback":
            m.rollback(1)
        elif change == "reset":
            m.reset()
        else:
            assert m.accept_bytes(b")")
        assert_masks_exact(m, compiled.vocab_size)  # a mask for "(abc" would fail after ")"
        if change != "accept":  # (an accept fills the new state's mask ahead in turn)
            assert compiled.stats().masks_filled_ahead == 0


def test_replays_with_masks_filled_ahead_stay_exact() -> None:
    rng = random.Random(11)
    vocab = bracket_vocab()
    text = b"(([(abc)]))"
    for round_ in range(4):
        compiled = prefetching(gs.Grammar.from_gbnf(BRACKETS), vocab)
        m = gs.Matcher(compiled)
        for byte in text:
            assert byte in assert_masks_exact(m, compiled.vocab_size)
            assert m.accept_bytes(bytes([byte]))
            if round_ > 0 and rng.random() < 0.5:
                time.sleep(0.003)
        assert m.can_terminate()
