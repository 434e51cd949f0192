"""The native llama.cpp sampler's apply and draft planning on a small vocabulary, through
llama.cpp's own ``llama_sampler_apply`` / ``llama_sampler_accept`` (no model needed).

apply keeps the allowed candidates, in their order, and shrinks the array to them; for
``llama_sampler_sample``'s layout (data[i].id == i over the whole vocabulary) it visits only the
allowed tokens. Every case is checked against the token-level Matcher's own mask."""

from __future__ import annotations

import ctypes
import math
import random
from typing import Any

import pytest

import gbnf_sampler as gs
from gbnf_sampler.llama.native_sampler import GrammarSampler, address_of

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed")

# 71 tokens (three mask words): letters, pairs, a few longer ones, and EOS last.
TOKENS = [bytes([c]) for c in b"abcdefghij "] + [
    a + b for a in (b"a", b"b", b"c", b"d", b"e") for b in (b"a", b"b", b"c", b"d", b"e", b" ")
]
TOKENS += [b"abc", b"abcd", b"hello", b"he", b"hel", b"hell", b" world", b"wor", b"ld", b"l"]
TOKENS += [b"llo", b"o", b"r", b"w"] + [b"x" * (i + 1) for i in range(16)] + [b"</s>"]
EOS = len(TOKENS) - 1
GRAMMAR = 'root ::= "hello world" | [a-e]+ " " [a-e]'


@pytest.fixture(scope="module")
def compiled() -> gs.CompiledGrammar:
    vocab = gs.Vocab(TOKENS, eos_ids=[EOS])
    return gs.compile(gs.Grammar.from_gbnf(GRAMMAR), vocab)


def _candidates(ids: list[int], selected: int = -1) -> tuple[Any, Any]:
    data = (llama_cpp.llama_token_data * len(ids))()
    for i, token in enumerate(ids):
        data[i].id = token
        data[i].logit = 0.5 * token - 3.0  # distinct, finite
        data[i].p = 0.0
    array = llama_cpp.llama_token_data_array(
        data=ctypes.cast(data, ctypes.POINTER(llama_cpp.llama_token_data)),
        size=len(ids),
        selected=selected,
        sorted=False,
    )
    return data, array


def _apply(sampler: GrammarSampler, ids: list[int], selected: int = -1) -> tuple[list[Any], Any]:
    data, array = _candidates(ids, selected)
    llama_cpp.llama_sampler_apply(sampler.pointer, ctypes.byref(array))
    return [(data[i].id, data[i].logit) for i in range(array.size)], array


def _allowed(matcher: gs.Matcher) -> set[int]:
    return {int(t) for t in matcher.allowed_tokens()}


def _expected(ids: list[int], allowed: set[int]) -> list[tuple[int, float]]:
    return [(t, 0.5 * t - 3.0) for t in ids if t in allowed]


def _finite(kept: list[tuple[int, float]], allowed: set[int]) -> list[tuple[int, float]]:
    """The candidates apply left possible; a refused one may stay only with a -inf logit (a
    mask allowing most tokens marks the refused ones rather than moving the others)."""
    assert all(t in allowed or logit == -math.inf for t, logit in kept)
    return [(t, logit) for t, logit in kept if logit != -math.inf]


def _walk(compiled: gs.CompiledGrammar, text: list[int]) -> tuple[GrammarSampler, gs.Matcher]:
    """A sampler and a reference matcher after accepting ``text``."""
    matcher = gs.Matcher(compiled)
    sampler = GrammarSampler(matcher)
    for token in text:
        assert matcher.accept_token(token)
        llama_cpp.llama_sampler_accept(sampler.pointer, token)
    assert not sampler.error
    return sampler, matcher


HE, HELLO, A, B, SPACE = TOKENS.index(b"he"), TOKENS.index(b"hello"), 0, 1, 10
WORLD = TOKENS.index(b" world")


@pytest.mark.parametrize("text", [[], [HE], [HELLO], [A], [A, B], [A, B, SPACE]])
def test_identity_layout_keeps_exactly_the_allowed_tokens(
    compiled: gs.CompiledGrammar, text: list[int]
) -> None:
    sampler, matcher = _walk(compiled, text)
    ids = list(range(len(TOKENS)))
    kept, array = _apply(sampler, ids)
    allowed = _allowed(matcher)
    assert _finite(kept, allowed) == _expected(ids, allowed)
    assert len(kept) == (len(ids) if 2 * len(allowed) > len(ids) else len(allowed))
    assert array.selected == -1
    sampler.close()


@pytest.mark.parametrize("seed", range(5))
def test_any_layout_keeps_the_allowed_tokens_in_order(
    compiled: gs.CompiledGrammar, seed: int
) -> None:
    rng = random.Random(seed)
    sampler, matcher = _walk(compiled, [A])
    ids = list(range(len(TOKENS)))
    rng.shuffle(ids)
    if seed == 0:  # own places everywhere but one swapped pair: not the fast path
        ids = list(range(len(TOKENS)))
        ids[B], ids[40] = ids[40], ids[B]
    if seed == 1:  # a part of the vocabulary
        ids = sorted(rng.sample(range(len(TOKENS)), 20))
    kept, _ = _apply(sampler, ids)
    assert _finite(kept, _allowed(matcher)) == _expected(ids, _allowed(matcher))
    sampler.close()


def test_selected_candidate_follows_its_entry(compiled: gs.CompiledGrammar) -> None:
    sampler, matcher = _walk(compiled, [A])
    allowed = sorted(_allowed(matcher))
    ids = list(range(len(TOKENS)))
    kept, array = _apply(sampler, ids, selected=allowed[1])
    assert kept[array.selected][0] == allowed[1]
    disallowed = next(t for t in ids if t not in allowed)
    _, array = _apply(sampler, ids, selected=disallowed)
    assert array.selected == -1
    sampler.close()


def test_no_allowed_candidate_leaves_the_size_and_allows_nothing(
    compiled: gs.CompiledGrammar,
) -> None:
    sampler, matcher = _walk(compiled, [A])
    refused = [t for t in range(len(TOKENS)) if t not in _allowed(matcher)][:5]
    data, array = _candidates(refused)
    llama_cpp.llama_sampler_apply(sampler.pointer, ctypes.byref(array))
    assert array.size == len(refused)
    assert all(math.isinf(data[i].logit) and data[i].logit < 0 for i in range(len(refused)))
    sampler.close()


def test_after_a_failure_nothing_is_allowed(compiled: gs.CompiledGrammar) -> None:
    sampler, _ = _walk(compiled, [A])
    llama_cpp.llama_sampler_accept(sampler.pointer, HELLO)  # refused after "a"
    assert "outside the grammar" in sampler.error
    data, array = _candidates(list(range(len(TOKENS))))
    llama_cpp.llama_sampler_apply(sampler.pointer, ctypes.byref(array))
    assert array.size == len(TOKENS)
    assert all(data[i].logit == -math.inf for i in range(len(TOKENS)))
    sampler.close()


def test_mask_follows_every_accept(compiled: gs.CompiledGrammar) -> None:
    """The mask is cached per state: a second apply reuses it, an accept renews it."""
    matcher = gs.Matcher(compiled)
    sampler = GrammarSampler(matcher)
    ids = list(range(len(TOKENS)))
    for token in (A, B, SPACE, A):
        for _ in range(2):
            kept, _ = _apply(sampler, ids)
            assert _finite(kept, _allowed(matcher)) == _expected(ids, _allowed(matcher))
        assert matcher.accept_token(token)
        llama_cpp.llama_sampler_accept(sampler.pointer, token)
    kept, _ = _apply(sampler, ids)
    assert [t for t, _ in kept] == [EOS]
    llama_cpp.llama_sampler_reset(sampler.pointer)
    kept, _ = _apply(sampler, ids)
    fresh = _allowed(gs.Matcher(compiled))
    assert _finite(kept, fresh) == _expected(ids, fresh)
    sampler.close()


@pytest.mark.parametrize("text", [[], [HE], [HELLO], [A], [A, B], [A, B, SPACE], [HELLO, WORLD]])
def test_allowed_count_is_the_size_of_the_mask(
    compiled: gs.CompiledGrammar, text: list[int]
) -> None:
    """allowed_count fills the mask the next apply uses: the apply after it keeps the same
    tokens as one without it."""
    sampler, matcher = _walk(compiled, text)
    assert sampler.allowed_count() == len(_allowed(matcher))
    ids = list(range(len(TOKENS)))
    kept, _ = _apply(sampler, ids)
    assert _finite(kept, _allowed(matcher)) == _expected(ids, _allowed(matcher))
    sampler.close()


def test_allowed_count_after_a_failure_is_zero(compiled: gs.CompiledGrammar) -> None:
    sampler, _ = _walk(compiled, [A])
    llama_cpp.llama_sampler_accept(sampler.pointer, HELLO)  # refused after "a"
    assert sampler.allowed_count() == 0
    sampler.close()


def _reference_plan(compiled: gs.CompiledGrammar, text: list[int], draft: list[int]) -> list[bool]:
    matcher = gs.Matcher(compiled)
    for token in text:
        assert matcher.accept_token(token)
    only = []
    for token in draft:
        allowed = _allowed(matcher)
        if token not in allowed or not matcher.accept_token(token):
            break
        only.append(allowed == {token})
    return only


@pytest.mark.parametrize(
    ("text", "draft"),
    [
        ([], [HE, TOKENS.index(b"ld"), TOKENS.index(b" world")]),  # "held...": refused
        ([], [HELLO, TOKENS.index(b" world")]),
        ([HELLO], [TOKENS.index(b" world"), EOS]),
        ([HELLO], [TOKENS.index(b" "), TOKENS.index(b"wor"), TOKENS.index(b"ld")]),
        ([A], [B, SPACE, A, EOS]),
        ([A], [HELLO]),
        ([], [len(TOKENS) + 5]),  # outside the vocabulary: an empty plan, no error
    ],
)
def test_plan_draft_matches_the_matcher(
    compiled: gs.CompiledGrammar, text: list[int], draft: list[int]
) -> None:
    sampler, _ = _walk(compiled, text)
    assert sampler.plan_draft(draft) == _reference_plan(compiled, text, draft)
    assert sampler.acceptable_prefix(draft) == len(sampler.plan_draft(draft))
    sampler.close()


def test_plan_draft_marks_tokens_allowed_alone(compiled: gs.CompiledGrammar) -> None:
    sampler, _ = _walk(compiled, [HELLO, TOKENS.index(b" world")])
    assert sampler.plan_draft([EOS]) == [True]  # the grammar ended: EOS is all there is
    sampler.close()


# llama_get_logits_ith with the logits at a fixed address (ctypes callbacks return plain types).
LOGITS_ITH = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)


def _chain(compiled: gs.CompiledGrammar, sampling: bool, seed: int) -> tuple[Any, GrammarSampler]:
    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    sampler = GrammarSampler(gs.Matcher(compiled))
    sampler.add_to(chain)
    if sampling:
        for s in (
            llama_cpp.llama_sampler_init_top_k(8),
            llama_cpp.llama_sampler_init_top_p(0.9, 1),
            llama_cpp.llama_sampler_init_min_p(0.01, 1),
            llama_cpp.llama_sampler_init_temp(1.5),
            llama_cpp.llama_sampler_init_dist(seed),
        ):
            llama_cpp.llama_sampler_chain_add(chain, s)
    else:
        llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_greedy())
    return chain, sampler


def _reference_sample(chain: Any, logits: list[float]) -> int:
    """What llama_sampler_sample does: the whole vocabulary in id order, apply, accept."""
    data, array = _candidates(list(range(len(logits))))
    for i, value in enumerate(logits):
        data[i].logit = value
    llama_cpp.llama_sampler_apply(chain, ctypes.byref(array))
    token = int(array.data[array.selected].id)
    llama_cpp.llama_sampler_accept(chain, token)
    return token


@pytest.mark.parametrize("sampling", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_sample_draws_what_llama_sampler_sample_draws(
    compiled: gs.CompiledGrammar, sampling: bool, seed: int
) -> None:
    """GrammarSampler.sample (candidates of the allowed tokens only) against the whole-vocabulary
    path through the same kind of chain, step by step until the grammar ends."""
    rng = random.Random(seed)
    logits = (ctypes.c_float * len(TOKENS))()
    callback = LOGITS_ITH(lambda context, row: ctypes.addressof(logits))
    ours, sampler = _chain(compiled, sampling, seed)
    reference, _ = _chain(compiled, sampling, seed)
    sampler._sample_api = (address_of(callback), *sampler._sample_api[1:])
    picked: list[int] = []
    while not picked or picked[-1] != EOS:
        for i in range(len(TOKENS)):
            logits[i] = rng.gauss(0.0, 2.0)
        token = sampler.sample(address_of(ours), 1, -1)
        assert token == _reference_sample(reference, list(logits)), picked
        assert not sampler.error
        picked.append(token)
        assert len(picked) < 40
    text = b"".join(TOKENS[t] for t in picked[:-1])
    matcher = gs.Matcher(gs.Grammar.from_gbnf(GRAMMAR))
    assert matcher.accept_bytes(text) and matcher.can_terminate()
    for chain in (ours, reference):
        llama_cpp.llama_sampler_free(chain)


def test_sample_reports_a_failed_constraint(compiled: gs.CompiledGrammar) -> None:
    logits = (ctypes.c_float * len(TOKENS))()
    callback = LOGITS_ITH(lambda context, row: ctypes.addressof(logits))
    no_logits = LOGITS_ITH(lambda context, row: None)
    chain, sampler = _chain(compiled, False, 0)
    sampler._sample_api = (address_of(no_logits), *sampler._sample_api[1:])
    assert sampler.sample(address_of(chain), 1, 3) == -1
    assert "no logits" in sampler.error
    chain2, sampler2 = _chain(compiled, False, 0)
    sampler2._sample_api = (address_of(callback), *sampler2._sample_api[1:])
    llama_cpp.llama_sampler_accept(chain2, HELLO)
    llama_cpp.llama_sampler_accept(chain2, HELLO)  # refused: the constraint failed
    assert sampler2.sample(address_of(chain2), 1, -1) == -1
    assert "outside the grammar" in sampler2.error
    for c in (chain, chain2):
        llama_cpp.llama_sampler_free(c)
