"""The mask fill writes the row in one pass (the first cached bitset copied, the other entries,
the EOS and token-reference bits added after it) and stays exact: on real vocabularies (Llama-3,
Qwen2, Gemma 3) the fast fill of a triggered grammar equals the full-trie reference walk at every
step of its free stretch, at every token split of the trigger and inside the body, cold (the
step that classifies a state) and warm; plain grammars and token references (a negated one whose
excluded token the text also allows) keep their masks; padding words come back zero whatever the
row held."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs
from gbnf_sampler.compiled import clear_cache
from mask_helpers import assert_masks_exact, bpe_vocab, decode, mask_of, mask_words
from structural_fixtures import VOCABS, load_vocab, tokenize

TRIGGER = "<tool_call>"
BODY = 'root ::= "\\n{" [a-z]+ "}\\n</tool_call>"'
FREE = "Hi! 3 < 4, a <tool and a <tool_cal are text; émoji 🌤️ too.\n"


@pytest.fixture(scope="module", params=VOCABS)
def real(request: pytest.FixtureRequest) -> tuple[Any, gs.Vocab]:
    return load_vocab(request.param)


def fresh(grammar: gs.Grammar, vocab: gs.Vocab) -> gs.Matcher:
    """A matcher over a fresh compile with an empty mask cache (no precompute): each state's
    entry is classified by the first fill that meets it."""
    clear_cache()
    return gs.Matcher(gs.compile(grammar, vocab, cache=False, precompute=False))


def assert_fast_equals_reference(m: gs.Matcher, size: int, where: object) -> list[int]:
    """The fast fill twice (cold, then warm), on rows holding garbage, equals the reference."""
    expected = mask_of(m, size, reference=True, pad=2)
    assert mask_of(m, size, pad=2) == expected, where
    assert mask_of(m, size, pad=0) == expected, where
    return expected


def replay(m: gs.Matcher, tokens: list[int], size: int, label: str) -> None:
    for step, tid in enumerate(tokens):
        allowed = assert_fast_equals_reference(m, size, (label, step))
        assert tid in allowed, (label, step)
        assert m.accept_token(tid)


def test_triggered_free_stretch_and_body_fill_exactly(real: tuple[Any, gs.Vocab]) -> None:
    llm, vocab = real
    m = fresh(gs.Grammar.triggered(gs.Grammar.from_gbnf(BODY), TRIGGER), vocab)
    free = tokenize(llm, FREE)
    replay(m, free + tokenize(llm, TRIGGER + "\n{abc}\n</tool_call>"), vocab.size, "document")
    assert m.can_terminate()
    # the free stretch's row is nearly all ones: the case the one-pass copy is for
    m2 = gs.Matcher(m.compiled)
    assert m2.accept_token(free[0])
    assert len(mask_of(m2, vocab.size)) > vocab.size * 0.9


def test_trigger_at_every_cut_between_tokens(real: tuple[Any, gs.Vocab]) -> None:
    """The text is cut at each byte of the trigger and each side tokenized on its own, so the
    trigger is split between tokens at each place (and runs into the body at the last)."""
    llm, vocab = real
    grammar = gs.Grammar.triggered(gs.Grammar.from_gbnf(BODY), TRIGGER)
    start = fresh(grammar, vocab)
    lead = tokenize(llm, "Sure. ")
    for tid in lead:
        assert start.accept_token(tid)
    for cut in range(len(TRIGGER) + 1):
        m = start.fork()
        rest = tokenize(llm, TRIGGER[cut:] + "\n{ab}\n</tool_call>")
        replay(m, tokenize(llm, TRIGGER[:cut]) + rest[:2], vocab.size, f"cut {cut}")


def test_token_trigger_free_stretch_fills_exactly(real: tuple[Any, gs.Vocab]) -> None:
    """A token trigger is a token reference offered in every free state."""
    llm, vocab = real
    eos = set(vocab.eos_ids)
    special = next(t for t in range(vocab.size) if vocab.is_special(t) and t not in eos)
    grammar = gs.Grammar.triggered(gs.Grammar.from_gbnf(BODY), gs.Trigger.token(special))
    m = fresh(grammar, vocab)
    for step, tid in enumerate(tokenize(llm, "Plain text, then the token.")):
        allowed = assert_fast_equals_reference(m, vocab.size, step)
        assert special in allowed and tid in allowed
        assert m.accept_token(tid)
    assert m.accept_token(special)
    assert_fast_equals_reference(m, vocab.size, "after the token")


def test_plain_json_grammar_fills_as_before(real: tuple[Any, gs.Vocab]) -> None:
    llm, vocab = real
    m = fresh(gs.Grammar.json(), vocab)
    replay(m, tokenize(llm, '{"a": [1, 2.5, "x y"], "b": {"c": null}}'), vocab.size, "json")
    assert m.can_terminate()


@pytest.mark.parametrize(
    ("text", "expect_ab"),
    [
        # the excluded token is also allowed as text: it stays allowed
        ('root ::= !<[AB]> | "ab"', True),
        ('root ::= !<[AB]> | "a"', False),
        # a bitset entry (any byte) copied first, then the negation's exclusion
        ('root ::= !<[AB]> | [^\\x00]* "!"', True),
        ('root ::= !<[AB]> <[AB]> | "x"', False),
    ],
)
def test_negated_token_reference_with_text(text: str, expect_ab: bool) -> None:
    vocab = bpe_vocab()
    ab = vocab.find_by_text(b"ab")
    ab_normal = next(t for t in ab if not vocab.is_special(t))
    m = fresh(gs.Grammar.from_gbnf(text.replace("AB", str(ab_normal))), vocab)
    allowed = assert_masks_exact(m, vocab.size)
    assert (ab_normal in allowed) == expect_ab


def test_rows_wider_than_the_vocabulary_are_zero_past_it() -> None:
    vocab = bpe_vocab()
    m = fresh(gs.Grammar.from_gbnf('root ::= [^\\x00]* "!"'), vocab)
    row = np.full(mask_words(vocab.size) + 3, -1, dtype=np.int32)
    m.fill_mask(row)
    assert not row[mask_words(vocab.size) :].any()
    assert decode(row) == mask_of(m, vocab.size, reference=True)
