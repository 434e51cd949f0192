"""Batch fills and accepts on the thread pool equal the one-by-one results."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import gbnf_sampler as gs
from mask_helpers import bpe_vocab, normal_tokens, tokenize

GRAMMAR = r"""root ::= "{" ws pair ("," ws pair)* ws "}"
pair ::= "\"" [a-z ]+ "\":" ws (number | "true" | "\"" [^"]* "\"")
number ::= [0-9]+ ("." [0-9]+)?
ws ::= [ \n]*
"""
DOCS = [b'{"a": 12, "bc":true}', b'{ "ab c":"x y"}', b'{"x":1.5,\n  "y": "z"}', b'{"q":0}']


@pytest.fixture(scope="module")
def compiled() -> gs.CompiledGrammar:
    return gs.compile(gs.Grammar.from_gbnf(GRAMMAR), bpe_vocab())


def test_fill_masks_equals_fill_mask(compiled: gs.CompiledGrammar) -> None:
    table = normal_tokens(compiled.vocab)
    docs = [tokenize(d, table, lambda fits: fits[-1]) for d in DOCS]
    matchers = [gs.Matcher(compiled) for _ in docs]
    words = (compiled.vocab_size + 31) // 32
    for step in range(max(map(len, docs))):
        batch = np.full((len(matchers) + 1, words + 1), -1, dtype=np.int32)
        gs.fill_masks(matchers, batch)
        for i, m in enumerate(matchers):
            one = np.zeros(words + 1, dtype=np.int32)
            m.fill_mask(one)
            assert (batch[i] == one).all()
        assert (batch[-1] == -1).all()
        ids = [d[step] if step < len(d) else compiled.vocab.eos_ids[0] for d in docs]
        expected = [m.fork().accept_token(t) for m, t in zip(matchers, ids, strict=True)]
        assert gs.accept_tokens(matchers, ids) == expected


def test_batch_errors(compiled: gs.CompiledGrammar) -> None:
    m = gs.Matcher(compiled)
    words = (compiled.vocab_size + 31) // 32
    with pytest.raises(ValueError):
        gs.fill_masks([m, m], np.zeros((2, words), dtype=np.int32))
    with pytest.raises(ValueError):
        gs.fill_masks([m, m.fork()], np.zeros((1, words), dtype=np.int32))
    with pytest.raises(TypeError):
        gs.fill_masks(
            [gs.Matcher(gs.Grammar.from_gbnf('root ::= "a"'))], np.zeros((1, words), dtype=np.int32)
        )
    with pytest.raises(ValueError):
        gs.accept_tokens([m], [1, 2])
    with pytest.raises(ValueError):
        gs.accept_tokens([m], [compiled.vocab_size])


def test_batches_from_many_threads(compiled: gs.CompiledGrammar) -> None:
    words = (compiled.vocab_size + 31) // 32
    expected = np.zeros((4, words), dtype=np.int32)
    gs.fill_masks([gs.Matcher(compiled) for _ in range(4)], expected)
    failures: list[int] = []

    def run() -> None:
        for _ in range(20):
            out = np.zeros((4, words), dtype=np.int32)
            gs.fill_masks([gs.Matcher(compiled) for _ in range(4)], out)
            if not (out == expected).all():
                failures.append(1)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
