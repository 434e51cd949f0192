"""A bitset cache entry is written over the mask row by runs: long stretches of all-zero or
all-one words are stored, the words between them copied. The row must be bit for bit the mask,
wherever the runs fall: at the start of the row, between mixed words, up to the vocabulary's
last partial word, and past it (padding words zeroed); from a freshly classified entry and from
one loaded from a cache file (memory-mapped words)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

import gbnf_sampler as gs
from mask_helpers import decode, mask_words

GRAMMAR = gs.Grammar.from_gbnf("root ::= [a-p]*")  # an all-letters text, the empty one included
LETTERS = "abcdefghijklmnop"


def letter_tokens(n: int, length: int) -> list[bytes]:
    words = ("".join(p).encode() for p in itertools.product(LETTERS, repeat=length))
    return list(itertools.islice(words, n))


def digit_tokens(n: int, start: int) -> list[bytes]:
    return [f"{start + i:06d}".encode() for i in range(n)]


def layout_vocab() -> tuple[gs.Vocab, set[int]]:
    """Blocks of token ids, each tens of thousands of tokens long: allowed letters (all-ones
    words), refused digits (all-zero words), letters and digits alternating (mixed words),
    letters up to a vocabulary size that is not a multiple of 32; 197k tokens in all, so that
    the row is large enough to be written by runs (TokenSet::kMinRunSearchWords). Returns the
    vocabulary and the ids the grammar allows, from the token texts alone."""
    letters = iter(letter_tokens(130_000, 5))
    digits = iter(digit_tokens(80_000, 0))
    tokens: list[bytes] = []
    tokens += [next(letters) for _ in range(32768)]  # ones from word 0
    tokens += [next(digits) for _ in range(24000)]  # zeros, ending inside a word
    tokens += [next(letters) if i % 3 else next(digits) for i in range(20000)]  # mixed
    tokens += [next(letters) for _ in range(48000)]  # ones
    tokens += [next(digits) for _ in range(40000)]  # zeros
    tokens += [next(letters) for _ in range(32771)]  # ones up to a partial last word
    eos = len(tokens)
    tokens.append(b"</s>")
    assert mask_words(len(tokens)) >= 6144
    allowed = {i for i, t in enumerate(tokens) if t.isalpha() and i != eos}
    return gs.Vocab(tokens, eos_ids=[eos]), allowed | {eos}


@pytest.fixture(scope="module")
def layout() -> tuple[gs.Vocab, set[int]]:
    return layout_vocab()


def row_of(m: gs.Matcher, size: int, pad: int, index: int = 0) -> set[int]:
    rows = np.full((2, mask_words(size) + pad), -1, dtype=np.int32)  # garbage in every word
    m.fill_mask(rows, index)
    ids = decode(rows[index])
    assert all(i < size for i in ids), "bits past the vocabulary"
    return set(ids)


def test_runs_at_every_place_of_the_row_write_the_exact_mask(
    layout: tuple[gs.Vocab, set[int]],
) -> None:
    vocab, allowed = layout
    compiled = gs.compile(GRAMMAR, vocab, cache=False, precompute=False)
    m = gs.Matcher(compiled)
    assert row_of(m, vocab.size, pad=0) == allowed  # cold: the entry is classified here
    assert row_of(m, vocab.size, pad=3, index=1) == allowed  # warm, padding words zeroed
    reference = np.zeros(mask_words(vocab.size), dtype=np.int32)
    m._fill_mask_reference(reference)
    assert set(decode(reference)) == allowed
    assert m.accept_token(0)  # "aaaa": the same state again, EOS still allowed
    assert row_of(m, vocab.size, pad=1) == allowed


def test_runs_of_an_entry_loaded_from_a_cache_file(
    layout: tuple[gs.Vocab, set[int]], tmp_path: Path
) -> None:
    vocab, allowed = layout
    gs.compiled.clear_cache()
    first = gs.compile(GRAMMAR, vocab, cache=False, precompute=False, cache_dir=tmp_path)
    assert row_of(gs.Matcher(first), vocab.size, pad=1) == allowed
    first.save_cache()
    gs.compiled.clear_cache()
    loaded = gs.compile(GRAMMAR, vocab, cache=False, precompute=False, cache_dir=tmp_path)
    assert row_of(gs.Matcher(loaded), vocab.size, pad=2) == allowed
    stats = loaded.stats()
    assert stats.loaded > 0 and stats.classified == 0  # the row came from the mapped entry


def test_timed_fill_writes_the_same_row(layout: tuple[gs.Vocab, set[int]]) -> None:
    """The benches' in-extension clock fills the row like fill_mask and returns nanoseconds."""
    vocab, allowed = layout
    m = gs.Matcher(gs.compile(GRAMMAR, vocab, cache=False, precompute=False))
    row = np.full(mask_words(vocab.size), -1, dtype=np.int32)
    ns = m._core._fill_mask_ns(row, 0)
    assert isinstance(ns, float) and ns > 0
    assert set(decode(row)) == allowed
