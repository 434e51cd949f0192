"""One CompiledGrammar shared by many threads, each driving its own matchers through documents
(fill_mask, accept_token, rollback, fork), and batch calls from several threads at once: every
transcript must equal the one a sequential run gives. Each run starts from a freshly compiled
grammar, so the lazy mask cache is filled by the threads racing for it."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs
from mask_helpers import normal_tokens, tokenize
from vocab_fixtures import bpe_vocab

THREADS = 8
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "score": {"type": "number"},
        "ok": {"type": "boolean"},
    },
    "required": ["name", "ok"],
}
DOCUMENTS = [
    {"name": "hello world", "tags": ["a", "b c"], "score": 1.5, "ok": True},
    {"name": "caf\u00e9", "ok": False},
    {"name": "x\ny", "tags": [], "score": -12, "ok": True},
    {"name": "\u4e2d\U0001f600", "tags": ["null"], "ok": False},
]
GRAMMARS = {"json": gs.Grammar.json(), "schema": gs.Grammar.from_json_schema(SCHEMA)}


@pytest.fixture(scope="module")
def vocab() -> gs.Vocab:
    return bpe_vocab()


def token_streams(vocab: gs.Vocab) -> list[list[int]]:
    table = normal_tokens(vocab)
    streams = []
    for i, doc in enumerate(DOCUMENTS):
        data = json.dumps(doc, indent=2 if i % 2 else None).encode()
        # longest match for some documents, shortest for others: different token paths
        streams.append(tokenize(data, table, (lambda f: f[-1]) if i % 2 else (lambda f: f[0])))
    return streams


def transcript(compiled: gs.CompiledGrammar, tokens: list[int], seed: int) -> list[Any]:
    """Drives one matcher through ``tokens`` with rollbacks and forks at seeded points; returns
    every mask and answer on the way."""
    rng = np.random.default_rng(seed)
    m = gs.Matcher(compiled)
    row = gs.allocate_bitmask(1, compiled.vocab_size)
    out: list[Any] = []
    i = 0
    while i < len(tokens):
        m.fill_mask(row)
        out.append(row.tobytes())
        assert m.accept_token(tokens[i]), f"token {i} of the document refused"
        i += 1
        roll = int(rng.integers(0, 4))
        if roll and rng.random() < 0.3 and roll <= m.rollback_available:
            m.rollback(roll)
            i -= roll
            out.append(("rollback", roll))
        if rng.random() < 0.1:
            m = m.fork()
            out.append("fork")
    out.append((m.can_terminate(), m.accept_eos(), m.is_terminated()))
    return out


def run_threads(jobs: list[Callable[[], Any]]) -> list[Any]:
    """Runs the jobs on their own threads, released together; re-raises the first error."""
    results: list[Any] = [None] * len(jobs)
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(jobs))

    def work(i: int) -> None:
        try:
            barrier.wait()
            results[i] = jobs[i]()
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


@pytest.mark.parametrize("grammar_name", sorted(GRAMMARS))
def test_threads_sharing_a_compiled_grammar_match_a_sequential_run(
    vocab: gs.Vocab, grammar_name: str
) -> None:
    grammar = GRAMMARS[grammar_name]
    streams = token_streams(vocab)
    work = [(streams[t % len(streams)], t) for t in range(THREADS)]
    sequential = gs.compile(grammar, vocab, cache=False)
    expected = [transcript(sequential, tokens, seed) for tokens, seed in work]
    shared = gs.compile(grammar, vocab, cache=False)  # empty mask cache: threads fill it
    got = run_threads([lambda w=w: transcript(shared, *w) for w in work])
    assert got == expected
    assert shared.cached_states == sequential.cached_states


def batch_transcript(compiled: gs.CompiledGrammar, streams: list[list[int]]) -> list[bytes]:
    """Matchers for every stream advanced in lockstep with gs.fill_masks / gs.accept_tokens."""
    matchers = [gs.Matcher(compiled) for _ in streams]
    bitmask = gs.allocate_bitmask(len(streams), compiled.vocab_size)
    out = []
    for step in range(max(len(s) for s in streams)):
        gs.fill_masks(matchers, bitmask)
        out.append(bitmask.tobytes())
        live = [i for i, s in enumerate(streams) if step < len(s)]
        accepted = gs.accept_tokens([matchers[i] for i in live], [streams[i][step] for i in live])
        assert all(accepted)
    return out


def test_fill_masks_from_several_threads_at_once(vocab: gs.Vocab) -> None:
    streams = token_streams(vocab)
    expected = batch_transcript(gs.compile(GRAMMARS["json"], vocab, cache=False), streams)
    shared = gs.compile(GRAMMARS["json"], vocab, cache=False)
    got = run_threads([lambda: batch_transcript(shared, streams) for _ in range(4)])
    assert got == [expected] * 4


def test_compile_from_several_threads_shares_one_cached_object(vocab: gs.Vocab) -> None:
    grammar = gs.Grammar.from_gbnf('root ::= "concurrent" [0-9]+')
    gs.compiled.clear_cache()
    got = run_threads([lambda: gs.compile(grammar, vocab) for _ in range(THREADS)])
    assert all(c is got[0] for c in got)
    assert gs.Matcher(got[0]).accept_token(vocab.find_by_text(b"c")[0])


def test_one_matcher_hammered_by_two_threads_errors_cleanly(vocab: gs.Vocab) -> None:
    """Misuse (a matcher is one thread's): calls that overlap raise RuntimeError, never crash;
    the calls that ran leave the matcher consistent."""
    compiled = gs.compile(GRAMMARS["json"], vocab)
    m = gs.Matcher(compiled)
    tokens = token_streams(vocab)[0]
    row = gs.allocate_bitmask(1, vocab.size)
    refused: list[str] = []

    def hammer() -> None:
        for _ in range(300):
            try:
                m.fill_mask(row.copy())
                m.accept_token(tokens[0])
                m.reset()
            except RuntimeError as e:
                assert "in use by another thread" in str(e)
                refused.append(str(e))

    run_threads([hammer, hammer])
    m.reset()
    assert all(m.accept_token(t) for t in tokens)


def test_second_thread_is_refused_while_the_first_holds_the_matcher() -> None:
    """Deterministic refusal: while one thread is inside a long accept_bytes (GIL released),
    every call from another thread on the same matcher raises RuntimeError."""
    m = gs.Matcher(gs.Grammar.from_gbnf("root ::= [a-z]*"))
    data = b"a" * 20_000_000  # long enough that the call spans many polls of the other thread
    started = threading.Event()
    finished = threading.Event()
    results: list[bool] = []

    def holder() -> None:
        started.set()
        results.append(m.accept_bytes(data))
        finished.set()

    thread = threading.Thread(target=holder)
    thread.start()
    started.wait()
    refusals = 0
    while not finished.is_set():
        try:
            m.can_terminate()
        except RuntimeError as e:
            assert "in use by another thread" in str(e)
            refusals += 1
    thread.join()
    assert results == [True]
    assert refusals > 0
    assert m.can_terminate()  # the guard is released once the holder's call returns
