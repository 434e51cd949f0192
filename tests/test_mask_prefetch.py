"""Prefetch: after an accept, a background worker classifies the mask-cache entries the next fill
needs, so that the model's step between accept and fill hides the work. The fill then finds the
entry done or joins the classification in flight; masks stay exact either way (compared with
brute force: fork the matcher, try every token)."""

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


def test_an_accept_fills_the_next_entry_in_the_background() -> None:
    # After "{" the matcher holds one item, in the loop over [a-z]: its entry is new.
    compiled = gs.compile(
        gs.Grammar.from_gbnf('root ::= "{" [a-z]* "}"'),
        bpe_vocab(),
        cache=False,
        precompute=False,
        prefetch=True,
    )
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
        compiled = gs.compile(
            gs.Grammar.json(), vocab, cache=False, precompute=False, prefetch=True
        )
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
    compiled = gs.compile(
        gs.Grammar.from_gbnf('root ::= "{" [a-z]* "}"'),
        bpe_vocab(),
        cache=False,
        precompute=False,
        prefetch=True,
    )
    m = gs.Matcher(compiled)
    assert m.accept_bytes(b"{ab")
    (state,) = set(m._core.item_states())
    wait_until(lambda: compiled._native._state_filled(state))
    assert compiled.stats().prefetched == 1


def test_a_grammar_dropped_with_prefetch_queued() -> None:
    for _ in range(20):
        compiled = gs.compile(
            gs.Grammar.json(), bpe_vocab(), cache=False, precompute=False, prefetch=True
        )
        m = gs.Matcher(compiled)
        assert m.accept_bytes(b'{"key": [1, "')
        del m, compiled  # the queued work holds the grammar's cache weakly: it is skipped
        gc.collect()
    compiled = gs.compile(gs.Grammar.json(), bpe_vocab(), cache=False, precompute=False)
    assert_masks_exact(gs.Matcher(compiled), compiled.vocab_size)
