"""Shared helpers of the token-mask tests: toy vocabularies, the brute-force mask, bitmask
decoding and a random tokenizer over a vocabulary's normal tokens."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import gbnf_sampler as gs

BPE_EXTRA = [
    b'{"',
    b'":',
    b" true",
    b"\n  ",
    b"\xc3",
    b"\xa9",
    b"\xc3\xa9",
    b'"}',
    b'",',
    b"ab",
    b"abc",
    b"ba",
    b"  ",
    b"\x00a",
    b"\xff",
    b"true",
    b"[1",
    b"12",
    b"0.",
]


def byte_vocab() -> gs.Vocab:
    """Every single byte, then EOS ``</s>``."""
    tokens = [bytes([i]) for i in range(256)] + [b"</s>"]
    return gs.Vocab(tokens, eos_ids=[256])


def bpe_vocab() -> gs.Vocab:
    """Single bytes plus BPE-like multi-byte tokens, partial UTF-8, an empty token, EOS and two
    special tokens (one spelled like plain text)."""
    tokens = [bytes([i]) for i in range(256)] + BPE_EXTRA
    eos = len(tokens)
    tokens += [b"<|eot|>", b"<|im_end|>", b"ab", b""]
    return gs.Vocab(tokens, eos_ids=[eos], special_ids=[eos + 1, eos + 2])


# Pieces of the dense vocabulary: ASCII words and punctuation, whole UTF-8 characters (2, 3 and
# 4 bytes), and broken pieces of them (a lone lead byte, lone continuation bytes, a 3-byte
# character cut after 2 bytes), so that string bodies, identifiers, comments and free text meet
# every case of the subtree jumps.
DENSE_PIECES = [
    *"abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_",
    " ",
    "  ",
    "\n",
    "\t",
    '"',
    "\\",
    "'",
    "{",
    "}",
    "(",
    ")",
    ",",
    ":",
    ";",
    "-",
    "+",
    "*",
    "/",
    "<",
    ">",
    "=",
    ".",
    "!",
    "#",
    "\x00",
    "\x1f",
    "\x7f",
    "é",
    "ß",
    "中",
    "文",
    "€",
    "😀",
    "ab",
    "the",
    "ing",
    "tool",
    "call",
]
DENSE_BROKEN = [b"\xc3", b"\xa9", b"\xe4\xb8", b"\x80\x80", b"\xf0\x9f", b"\xff", b"\xed\xa0\x80"]


def dense_vocab(size: int = 6000, seed: int = 7) -> gs.Vocab:
    """A vocabulary of `size` tokens with deep shared prefixes (like a BPE vocabulary's): every
    single byte, then random concatenations of 1-4 pieces (DENSE_PIECES, sometimes a broken
    UTF-8 piece), EOS last."""
    import random

    rng = random.Random(seed)
    pieces = [p.encode() for p in DENSE_PIECES]
    tokens: dict[bytes, None] = {bytes([i]): None for i in range(256)}
    while len(tokens) < size - 1:
        parts = [rng.choice(pieces) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.08:
            parts.insert(rng.randint(0, len(parts)), rng.choice(DENSE_BROKEN))
        tokens.setdefault(b"".join(parts), None)
    listed = [*tokens, b"</s>"]
    return gs.Vocab(listed, eos_ids=[len(listed) - 1])


def mask_words(vocab_size: int) -> int:
    return (vocab_size + 31) // 32


def decode(bitmask_row: np.ndarray) -> list[int]:
    bits = np.unpackbits(bitmask_row.view(np.uint8), bitorder="little")
    return [int(i) for i in np.flatnonzero(bits)]


def mask_of(m: gs.Matcher, vocab_size: int, reference: bool = False, pad: int = 1) -> list[int]:
    """The mask as a sorted id list, checking that padding words come back zeroed."""
    row = np.full(mask_words(vocab_size) + pad, -1, dtype=np.int32)
    (m._fill_mask_reference if reference else m.fill_mask)(row)
    ids = decode(row)
    assert all(i < vocab_size for i in ids), "bits past the vocabulary"
    return ids


def brute_force(m: gs.Matcher, vocab_size: int) -> list[int]:
    """Every token a fork of ``m`` accepts."""
    return [t for t in range(vocab_size) if m.fork().accept_token(t)]


def assert_masks_exact(m: gs.Matcher, vocab_size: int) -> list[int]:
    expected = brute_force(m, vocab_size)
    assert mask_of(m, vocab_size, reference=True) == expected
    assert mask_of(m, vocab_size) == expected
    assert list(m.allowed_tokens()) == expected
    return expected


def normal_tokens(vocab: gs.Vocab) -> dict[bytes, int]:
    out: dict[bytes, int] = {}
    special = set(vocab.special_ids) | set(vocab.eos_ids)
    for i, t in enumerate(vocab.tokens()):
        if t and i not in special:
            out.setdefault(t, i)
    return out


def tokenize(data: bytes, table: dict[bytes, int], choose: Callable[[list[int]], int]) -> list[int]:
    """A segmentation of ``data`` into normal tokens; ``choose`` picks among the tokens that fit
    at each point (the vocabularies hold every single byte, so one always does)."""
    longest = max(len(t) for t in table)
    out: list[int] = []
    i = 0
    while i < len(data):
        fits = [
            table[data[i:j]]
            for j in range(i + 1, min(len(data), i + longest) + 1)
            if data[i:j] in table
        ]
        tid = choose(fits)
        out.append(tid)
        i += len(table_bytes(table, tid))
    return out


def table_bytes(table: dict[bytes, int], tid: int) -> bytes:
    for k, v in table.items():
        if v == tid:
            return k
    raise KeyError(tid)
