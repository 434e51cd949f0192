"""Token masks equal the brute-force mask (fork the matcher, try every token) on toy
vocabularies, for states reached by tokenized random sentences of random grammars. Both the
cached fill (``fill_mask``) and the whole-trie walk (the reference) are checked."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from mask_helpers import (
    assert_masks_exact,
    bpe_vocab,
    byte_vocab,
    normal_tokens,
    tokenize,
)
from strategies import grammars, sentences, to_gbnf_text
from vocab_fixtures import bpe_vocab as shared_bpe_vocab

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VOCABS = {"bytes": byte_vocab(), "bpe": bpe_vocab(), "shared_bpe": shared_bpe_vocab()}


@st.composite
def replays(draw: st.DrawFn, vocab_name: str) -> tuple[gs.CompiledGrammar, list[int]]:
    rules, root = draw(grammars())
    grammar = gs.Grammar.from_gbnf(to_gbnf_text(rules, root), root=root)
    vocab = VOCABS[vocab_name]
    sentence = draw(sentences(rules, root))
    table = normal_tokens(vocab)
    ids = tokenize(sentence, table, lambda fits: draw(st.sampled_from(fits)))
    return gs.compile(grammar, vocab), ids


def replay_exact(compiled: gs.CompiledGrammar, ids: list[int]) -> None:
    size = compiled.vocab_size
    m = gs.Matcher(compiled)
    eos = compiled.vocab.eos_ids[0]
    for tid in ids:
        allowed = assert_masks_exact(m, size)
        assert tid in allowed
        assert m.accept_token(tid)
    allowed = assert_masks_exact(m, size)
    assert eos in allowed and m.can_terminate()
    assert m.accept_token(eos)
    assert m.is_terminated()
    assert assert_masks_exact(m, size) == []


@pytest.mark.parametrize("vocab_name", sorted(VOCABS))
@SETTINGS
@given(data=st.data())
def test_mask_equals_brute_force_on_sentences(vocab_name: str, data: st.DataObject) -> None:
    compiled, ids = data.draw(replays(vocab_name))
    replay_exact(compiled, ids)


@SETTINGS
@given(data=st.data())
def test_mask_after_rollback_and_fork(data: st.DataObject) -> None:
    compiled, ids = data.draw(replays("bpe"))
    m = gs.Matcher(compiled)
    for tid in ids:
        assert m.accept_token(tid)
    back = data.draw(st.integers(0, len(ids)))
    m.rollback(back)
    assert_masks_exact(m, compiled.vocab_size)
    f = m.fork()
    if back:
        assert f.accept_token(ids[len(ids) - back])
        assert_masks_exact(f, compiled.vocab_size)
    assert_masks_exact(m, compiled.vocab_size)


TABLE = [
    # (grammar, token byte sequences to accept first)
    ('root ::= "a" [b-c]* "x"', [b"a", b"b"]),
    (r'root ::= "{\"" [a-z]+ "\":" (" true" | "1") "}"', [b'{"', b"ab"]),
    (r'root ::= "\"" ( [^"\\] | "\\" ["\\n] )* "\"" ws' + "\n" + r"ws ::= [ \n]*", [b'"', b"ab"]),
    ('root ::= [\\u00e9]+ "!"', [b"\xc3"]),
    ('root ::= [\\u00e9]+ "!"', [b"\xc3\xa9"]),
    ('root ::= x x\nx ::= x "a" | "b"', [b"b"]),
    ('root ::= ("ab" | "a" "b" "c") "a"?', []),
    ('root ::= [0-9]+ ("." [0-9]+)? ", " root | "end"', [b"12", b"0."]),
    ("root ::= [\\x00-\\xff]*", [b"\xc3", b"\xa9", b"\x00a"]),
    ('root ::= ( "ab" | [a-c] )* "\\n  "', [b"ab", b"abc"]),
]


@pytest.mark.parametrize("vocab_name", sorted(VOCABS))
@pytest.mark.parametrize(("text", "prefix"), TABLE)
def test_mask_table(vocab_name: str, text: str, prefix: list[bytes]) -> None:
    vocab = VOCABS[vocab_name]
    compiled = gs.compile(gs.Grammar.from_gbnf(text), vocab)
    table = normal_tokens(vocab)
    m = gs.Matcher(compiled)
    assert_masks_exact(m, vocab.size)
    for piece in prefix:
        for tid in tokenize(piece, table, lambda fits: fits[-1]):
            assert m.accept_token(tid)
            assert_masks_exact(m, vocab.size)
