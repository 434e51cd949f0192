"""Matcher.plan_draft (a jump-forward draft checked against the grammar) and the server's draft
mask fill, against plain matcher operations on the Llama-3 vocabulary."""

from __future__ import annotations

import numpy as np
import pytest

import gbnf_sampler as gs
from assets import require, vocab_gguf
from gbnf_sampler.llama.lookup import ContextLookup
from gbnf_sampler.llama.speculative import ENDS, GUESSED, INSIDE, Draft, plan_draft
from gbnf_sampler.serve.drafts import SlotDraft, fill_draft_masks, fill_one

GRAMMAR = r"""
root ::= "{\"name\": \"" [a-z]+ "\", \"kind\": " ("\"cat\"" | "\"dog\"") "}"
"""


@pytest.fixture(scope="module")
def vocab() -> gs.Vocab:
    return gs.Vocab.from_gguf(require(lambda: vocab_gguf("llama-bpe")))


@pytest.fixture(scope="module")
def compiled(vocab: gs.Vocab) -> gs.CompiledGrammar:
    return gs.compile(gs.Grammar.from_gbnf(GRAMMAR), vocab)


def _tokens(vocab: gs.Vocab, text: bytes) -> list[int]:
    """A greedy longest-match spelling of ``text`` in the vocabulary (any spelling will do)."""
    by_bytes = {vocab.token_bytes(i): i for i in range(vocab.size) if vocab.token_bytes(i)}
    out, i = [], 0
    while i < len(text):
        j = max(k for k in range(i + 1, len(text) + 1) if text[i:k] in by_bytes)
        out.append(by_bytes[text[i:j]])
        i = j
    return out


def _reference(matcher: gs.Matcher, tokens: list[int]) -> list[bool]:
    probe, only = matcher.fork(), []
    for token in tokens:
        allowed = probe.allowed_tokens()
        if token not in allowed or not probe.accept_token(token):
            break
        only.append(len(allowed) == 1)
    return only


@pytest.mark.parametrize(
    "prefix, draft",
    [
        (b"", b'{"name": "'),
        (b'{"name": "ab', b'", "kind": "cat"}'),
        (b'{"name": "ab", "kind": "', b"dog}"),
        (b'{"name": "ab", "kind": "', b"cow"),  # refused part-way
        (b'{"name": "ab", "kind": "dog', b'"}'),
    ],
)
def test_plan_draft_matches_the_matcher_step_by_step(
    vocab: gs.Vocab, compiled: gs.CompiledGrammar, prefix: bytes, draft: bytes
) -> None:
    matcher = gs.Matcher(compiled)
    assert matcher.accept_bytes(prefix)
    tokens = _tokens(vocab, draft)
    before = matcher.allowed_tokens()
    only = matcher.plan_draft(tokens)
    assert only == _reference(matcher, tokens)
    assert np.array_equal(matcher.allowed_tokens(), before)  # state unchanged


def test_plan_draft_finds_tokens_the_grammar_allows_alone(vocab: gs.Vocab) -> None:
    # After "x", only "y" may follow, and no token spells "y" with more.
    compiled = gs.compile(gs.Grammar.from_gbnf('root ::= "x" "y" [0-9]'), vocab)
    matcher = gs.Matcher(compiled)
    assert matcher.accept_bytes(b"x")
    assert list(matcher.allowed_tokens()) == _tokens(vocab, b"y")
    assert matcher.plan_draft(_tokens(vocab, b"y")) == [True]


def test_plan_draft_rejects_bad_ids(compiled: gs.CompiledGrammar) -> None:
    matcher = gs.Matcher(compiled)
    with pytest.raises(ValueError, match="out of range"):
        matcher.plan_draft([compiled.vocab_size])
    with pytest.raises(TypeError):
        matcher.plan_draft([1.5])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="token-level"):
        gs.Matcher(gs.Grammar.from_gbnf(GRAMMAR)).plan_draft([1])


def _slot(matcher: gs.Matcher, vocab: gs.Vocab, text: bytes, rows: list[int]) -> SlotDraft:
    tokens = _tokens(vocab, text)
    only = matcher.plan_draft(tokens)
    assert len(only) == len(tokens)
    return SlotDraft(Draft(tokens, only, [INSIDE] * len(tokens)), rows)


def test_draft_masks_are_the_masks_along_the_draft(
    vocab: gs.Vocab, compiled: gs.CompiledGrammar
) -> None:
    first, second = gs.Matcher(compiled), gs.Matcher(compiled)
    assert second.accept_bytes(b'{"name": "ab", "kind": ')
    third = gs.Matcher(gs.compile(gs.Grammar.from_gbnf('root ::= "x" "y" [0-9]'), vocab))
    assert third.accept_bytes(b"x")
    matchers = [first, second, third]
    drafts = [
        _slot(first, vocab, b'{"name": "', []),
        _slot(second, vocab, b'"cat"}', []),
        _slot(third, vocab, b"y", []),
    ]
    assert drafts[2].draft.only[-1]  # "y" after "x": allowed alone
    # Rows in batch order: the first sequence's rows, then the second's; -1 where the grammar
    # allows the token alone (no logits there).
    row = 0
    for slot in drafts:
        for alone in [*slot.draft.only, False]:
            slot.rows.append(-1 if alone else row)
            row += 0 if alone else 1
    references = [m.fork() for m in matchers]
    bitmask = gs.allocate_bitmask(row, vocab.size)
    fill_draft_masks(matchers, drafts, bitmask)
    for matcher, reference, slot in zip(matchers, references, drafts, strict=True):
        for j, r in enumerate(slot.rows):
            if r >= 0:
                expected = gs.allocate_bitmask(1, vocab.size)
                reference.fill_mask(expected)
                assert np.array_equal(bitmask[r], expected[0]), j
            if j < len(slot.draft):
                assert reference.accept_token(slot.draft.tokens[j])
        assert slot.accepted == len(slot.draft)
        assert np.array_equal(matcher.allowed_tokens(), reference.allowed_tokens())
    # The one-by-one fill after a failure starts again from before the draft.
    again = gs.allocate_bitmask(row, vocab.size)
    for matcher, slot in zip(matchers, drafts, strict=True):
        fill_one(matcher, slot, again)
    assert np.array_equal(again, bitmask)


def _plan(
    matcher: gs.Matcher, vocab: gs.Vocab, limit: int, context: bytes | None
) -> tuple[list[bytes], list[bool], list[int]]:
    lookup = ContextLookup(context) if context is not None else None
    draft = plan_draft(matcher, lambda t: _tokens(vocab, t), vocab.token_bytes, limit, lookup)
    return [vocab.token_bytes(t) for t in draft.tokens], draft.only, draft.kinds


FEW_SHOT = b'Example: {"name": "rex", "kind": "dog"}\nNow: '


def test_a_draft_is_the_forced_text_then_the_guess(
    vocab: gs.Vocab, compiled: gs.CompiledGrammar
) -> None:
    matcher = gs.Matcher(compiled)
    forced, _, kinds = _plan(matcher, vocab, 6, None)
    assert b"".join(forced) == matcher.forced_bytes() == b'{"name": "'
    assert kinds[-1] == ENDS and set(kinds[:-1]) <= {INSIDE}
    # The example goes on with "rex": a guess the grammar accepts ([a-z]+), after the forced
    # text; the last token of the guessed text is left out (it may be cut).
    tokens, only, kinds = _plan(matcher, vocab, 8, FEW_SHOT)
    text = b"".join(tokens)
    assert text.startswith(b'{"name": "') and len(text) > len(b'{"name": "')
    assert b'{"name": "rex", "kind": "dog"}'.startswith(text)
    assert kinds[-1] == GUESSED and kinds.count(GUESSED) == len(tokens) - len(forced)
    assert only == _reference(matcher, _tokens(vocab, text))


def test_a_guess_stops_where_the_grammar_refuses_it(
    vocab: gs.Vocab, compiled: gs.CompiledGrammar
) -> None:
    matcher = gs.Matcher(compiled)
    assert matcher.accept_bytes(b'{"name": "ab", "kind": "')
    context = b'{"name": "ab", "kind": "cow", "name": "ab", "kind": "'  # "cow" is refused
    tokens, _, kinds = _plan(matcher, vocab, 6, context)
    assert tokens == [] and kinds == []
    context = b'{"name": "ab", "kind": "cat"}, {"name": "ab", "kind": "'
    tokens, only, kinds = _plan(matcher, vocab, 6, context)
    assert b"".join(tokens) in (b"cat", b'cat"')  # cut before its last, maybe partial, token
    assert only == _reference(matcher, _tokens(vocab, b"".join(tokens)))
    assert set(kinds) == {GUESSED}


def test_no_guess_after_a_forced_text_cut_at_the_limit(vocab: gs.Vocab) -> None:
    literal = b"abcdefghij" * 5
    grammar = gs.Grammar.from_gbnf(f'root ::= "{literal.decode()}" [0-9]')
    matcher = gs.Matcher(gs.compile(grammar, vocab))
    tokens, _, kinds = _plan(matcher, vocab, 2, literal + b"7\n")
    assert literal.startswith(b"".join(tokens)) and GUESSED not in kinds
    tokens, _, kinds = _plan(matcher, vocab, 0, literal + b"7\n")
    assert tokens == []
