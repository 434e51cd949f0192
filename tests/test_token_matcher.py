"""The token-level matcher's API and token semantics: token references, EOS, special and empty
tokens, bitmask layout and argument errors, rollback/fork/reset, sharing between threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import gbnf_sampler as gs
from mask_helpers import assert_masks_exact, bpe_vocab, decode, mask_of

TOKENS = [bytes([i]) for i in range(128)] + [
    b"<think>",
    b"</think>",
    b"<|im_end|>",
    b"</s>",
    b"",
    b"dup",
    b"dup",
    b"hello",
    b" world",
]
THINK, END_THINK, IM_END, EOS, EMPTY, DUP1, DUP2, HELLO, WORLD = range(128, 137)


@pytest.fixture(scope="module")
def vocab() -> gs.Vocab:
    return gs.Vocab(TOKENS, eos_ids=[EOS], special_ids=[THINK, END_THINK, IM_END])


def compiled(text: str, vocab: gs.Vocab) -> gs.CompiledGrammar:
    return gs.compile(gs.Grammar.from_gbnf(text), vocab)


def test_special_tokens_only_when_named(vocab: gs.Vocab) -> None:
    m = gs.Matcher(compiled('root ::= "<think>" | [a-z<>/]+', vocab))
    allowed = assert_masks_exact(m, vocab.size)
    assert THINK not in allowed and ord("<") in allowed and HELLO in allowed
    m = gs.Matcher(compiled("root ::= <think> [a-z]* </think> [a-z ]+", vocab))
    assert assert_masks_exact(m, vocab.size) == [THINK]
    assert m.accept_token(THINK)
    allowed = assert_masks_exact(m, vocab.size)
    assert END_THINK in allowed and HELLO in allowed and IM_END not in allowed
    assert m.accept_token(HELLO) and m.accept_token(END_THINK)
    assert not m.can_terminate()
    assert m.accept_token(WORLD) and m.can_terminate()


def test_token_id_reference_and_negation(vocab: gs.Vocab) -> None:
    m = gs.Matcher(compiled(f"root ::= !<[{HELLO}]> <[{IM_END}]>", vocab))
    allowed = assert_masks_exact(m, vocab.size)
    # any non-EOS, non-empty token but HELLO, special ones included (llama.cpp's semantics)
    assert allowed == [t for t in range(vocab.size) if t not in (HELLO, EOS, EMPTY)]
    assert not m.accept_token(HELLO)
    assert m.accept_token(THINK)
    assert assert_masks_exact(m, vocab.size) == [IM_END]
    assert m.accept_token(IM_END) and m.can_terminate()
    assert assert_masks_exact(m, vocab.size) == [EOS]


def test_negated_eos_reference_keeps_eos_when_the_sentence_may_end(vocab: gs.Vocab) -> None:
    m = gs.Matcher(compiled(f'root ::= "a" (!<[{EOS}]>)?', vocab))
    assert m.accept_token(ord("a"))
    allowed = assert_masks_exact(m, vocab.size)
    assert EOS in allowed and THINK in allowed and EMPTY not in allowed


def test_token_reference_also_matches_as_text_union(vocab: gs.Vocab) -> None:
    # "hello" is a normal token: reachable through the reference and through its bytes.
    m = gs.Matcher(compiled(f'root ::= <[{HELLO}]> "!" | "hello" "?"', vocab))
    assert m.accept_token(HELLO)
    assert assert_masks_exact(m, vocab.size) == [ord("!"), ord("?")]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("root ::= <[999]>", "token_id_out_of_range"),
        ("root ::= <nope>", "unknown_token"),
        ("root ::= !<dup>", "unknown_token"),
    ],
)
def test_unresolvable_references(vocab: gs.Vocab, text: str, code: str) -> None:
    with pytest.raises(gs.GrammarError) as info:
        compiled(text, vocab)
    assert info.value.code == code
    assert info.value.line == 1 and info.value.column == 10


def test_ambiguous_reference() -> None:
    v = gs.Vocab([b"a", b"<x>", b"<x>", b"</s>"], eos_ids=[3], special_ids=[1, 2])
    with pytest.raises(gs.GrammarError) as info:
        compiled("root ::= <x>", v)
    assert info.value.code == "ambiguous_token"


def test_eos_and_termination(vocab: gs.Vocab) -> None:
    m = gs.Matcher(compiled('root ::= "a"+', vocab))
    assert not m.accept_token(EOS)
    assert EOS not in assert_masks_exact(m, vocab.size)
    assert m.accept_token(ord("a"))
    assert EOS in assert_masks_exact(m, vocab.size)
    assert m.accept_token(EOS) and m.is_terminated() and not m.can_terminate()
    assert assert_masks_exact(m, vocab.size) == []
    assert not m.accept_token(ord("a")) and not m.accept_token(EOS)
    m.rollback(1)
    assert not m.is_terminated() and m.accept_token(ord("a"))


def test_empty_token_never_allowed(vocab: gs.Vocab) -> None:
    m = gs.Matcher(compiled('root ::= "a"? "b"', vocab))
    assert not m.accept_token(EMPTY)
    assert EMPTY not in assert_masks_exact(m, vocab.size)


def test_out_of_range_token(vocab: gs.Vocab) -> None:
    m = gs.Matcher(compiled('root ::= "a"', vocab))
    with pytest.raises(ValueError):
        m.accept_token(vocab.size)
    with pytest.raises(ValueError):
        m.accept_token(-1)
    with pytest.raises(TypeError):
        m.accept_token("a")  # type: ignore[arg-type]


def test_bitmask_layout_and_errors(vocab: gs.Vocab) -> None:
    m = gs.Matcher(compiled('root ::= "hello" | "a"', vocab))
    words = (vocab.size + 31) // 32
    batch = np.full((3, words + 2), -1, dtype=np.int32)
    m.fill_mask(batch, 1)
    assert (batch[0] == -1).all() and (batch[2] == -1).all()
    assert decode(batch[1]) == [ord("a"), ord("h"), HELLO]
    assert (batch[1, words:] == 0).all()
    with pytest.raises(TypeError):
        m.fill_mask(np.zeros(words, dtype=np.int64))
    with pytest.raises(ValueError):
        m.fill_mask(np.zeros(words - 1, dtype=np.int32))
    with pytest.raises(ValueError):
        m.fill_mask(batch, 3)
    with pytest.raises(ValueError):
        m.fill_mask(np.zeros((2, 2, words), dtype=np.int32))
    with pytest.raises(TypeError):
        gs.Matcher(gs.Grammar.from_gbnf('root ::= "a"')).fill_mask(batch)


def test_rollback_fork_reset_forced(vocab: gs.Vocab) -> None:
    m = gs.Matcher(compiled('root ::= "hello world" | "help"', vocab))
    start = mask_of(m, vocab.size)
    assert m.accept_token(HELLO)
    assert m.forced_bytes() == b" world"
    f = m.fork()
    assert f.accept_token(WORLD) and f.can_terminate() and not m.can_terminate()
    m.rollback(1)
    assert mask_of(m, vocab.size) == start
    assert m.accept_bytes(b"hel")
    assert mask_of(m, vocab.size) == [ord("l"), ord("p")]
    m.reset()
    assert mask_of(m, vocab.size) == start


def test_threads_share_one_compiled_grammar() -> None:
    v = bpe_vocab()
    cg = compiled(r'root ::= "{\"" [a-z]+ "\":" (" true" | [0-9]+) ("," [a-z ]*)* "}"', v)
    steps = [b'{"', b"ab", b'":', b" true", b",", b"a", b"}"]
    table = {t: i for i, t in reversed(list(enumerate(v.tokens())))}

    def run() -> list[list[int]]:
        m = gs.Matcher(cg)
        out = [list(m.allowed_tokens())]
        for piece in steps:
            assert m.accept_token(table[piece])
            out.append(list(m.allowed_tokens()))
        return out

    expected = run()
    results: list[list[list[int]]] = []
    threads = [threading.Thread(target=lambda: results.append(run())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 8


def test_compile_cache_returns_shared_object(vocab: gs.Vocab) -> None:
    g = gs.Grammar.from_gbnf('root ::= "a"')
    assert gs.compile(g, vocab) is gs.compile(gs.Grammar.from_gbnf('root ::= "a"'), vocab)
    assert gs.compile(g, vocab, cache=False) is not gs.compile(g, vocab)


def test_compile_cache_limit(vocab: gs.Vocab) -> None:
    from gbnf_sampler import compiled as cmod

    assert cmod.DEFAULT_CACHE_LIMIT_BYTES == 256 << 20
    g = gs.Grammar.from_gbnf('root ::= "b"+')
    try:
        cmod.set_cache_limit_bytes(0)
        assert gs.compile(g, vocab) is not gs.compile(g, vocab)
        cmod.set_cache_limit_bytes(1 << 20)
        first = gs.compile(g, vocab)
        gs.Matcher(first).allowed_tokens()  # fills some mask cache
        assert first.cache_bytes > 0 and first.cached_states > 0
        assert gs.compile(g, vocab) is first
        with pytest.raises(ValueError):
            cmod.set_cache_limit_bytes(-1)
    finally:
        cmod.set_cache_limit_bytes(cmod.DEFAULT_CACHE_LIMIT_BYTES)


@pytest.mark.parametrize("limit", ["max_state_size", "max_rollback", "max_history_bytes"])
def test_token_level_matcher_limits_belong_to_compile(vocab: gs.Vocab, limit: str) -> None:
    grammar = gs.Grammar.from_gbnf('root ::= "ab"+')
    with pytest.raises(TypeError, match=f"{limit}.*gs.compile"):
        gs.Matcher(gs.compile(grammar, vocab), **{limit: 8})


def test_compile_limits_take_effect_on_its_matchers(vocab: gs.Vocab) -> None:
    grammar = gs.Grammar.from_gbnf("root ::= [a-z]*")
    m = gs.Matcher(gs.compile(grammar, vocab, max_rollback=2))
    for _ in range(3):
        assert m.accept_token(vocab.find_by_text(b"a")[0])
    assert m.rollback_available == 2
    with pytest.raises(ValueError, match="max_rollback"):
        m.rollback(3)
    # A byte-level matcher takes the same limits directly.
    byte_level = gs.Matcher(grammar, max_rollback=1)
    assert byte_level.accept_bytes(b"a") and byte_level.accept_bytes(b"b")
    assert byte_level.rollback_available == 1
