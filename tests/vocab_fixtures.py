"""Toy vocabularies for everyone's tests (import: ``from vocab_fixtures import ...``).

* :func:`byte_vocab`: the 256 single bytes (id = byte value) plus one EOS token.
* :func:`bpe_vocab`: a BPE-like vocabulary: control tokens, the 256 single bytes, and multi-byte
  tokens as a real tokenizer has them (``{"``, ``":``, `` true``, ``\\n  ``, whole and partial
  UTF-8 sequences, a token that duplicates another's bytes, an empty token, a NUL token).
"""

from __future__ import annotations

import gbnf_sampler as gs

BYTE_EOS_ID = 256

# Control tokens of the BPE-like vocabulary (ids 0-4): all special; </s> and <|im_end|> are EOS.
BPE_UNK, BPE_BOS, BPE_EOS, BPE_IM_END, BPE_THINK = 0, 1, 2, 3, 4
BPE_CONTROL = [b"<unk>", b"<s>", b"</s>", b"<|im_end|>", b"<think>"]
BPE_BYTE_BASE = len(BPE_CONTROL)  # ids 5..260: the single bytes 0x00..0xFF
BPE_MULTI = [
    b'{"',
    b'":',
    b'",',
    b'"',
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"{\n",
    b"\n",
    b"\n  ",
    b"\n    ",
    b"  ",
    b" ",
    b' "',
    b'"name"',
    b"name",
    b"value",
    b"true",
    b" true",
    b"false",
    b" false",
    b"null",
    b" null",
    b"0",
    b"1",
    b"12",
    b"123",
    b"-",
    b".",
    b"e+",
    b'\\"',
    b"\\n",
    b"\\u",
    b"hello",
    b" world",
    b"hello world",
    b"\xc3\xa9",  # é (whole)
    b"\xc3",  # first byte of é (duplicates the single-byte token 0xC3)
    b"\xa9",  # continuation byte (duplicates 0xA9)
    b"caf\xc3",  # ends inside a UTF-8 sequence
    b"\xa9s",  # starts inside one
    b"\xe4\xb8",  # partial CJK 中 (E4 B8 AD)
    b"\xad",
    b"\xf0\x9f",
    b"\x98\x80",  # halves of 😀 (F0 9F 98 80)
    b"\xff\xfe",  # never valid UTF-8
    b"\x00\x00",
    b"",  # an empty token (never in the trie)
]
BPE_EMPTY_ID = BPE_BYTE_BASE + 256 + len(BPE_MULTI) - 1


def byte_tokens() -> list[bytes]:
    return [bytes([b]) for b in range(256)] + [b"<eos>"]


def byte_vocab() -> gs.Vocab:
    """Token i < 256 is the byte i; token 256 is ``<eos>`` (EOS and special)."""
    return gs.Vocab(byte_tokens(), [BYTE_EOS_ID], [BYTE_EOS_ID])


def bpe_tokens() -> list[bytes]:
    return BPE_CONTROL + [bytes([b]) for b in range(256)] + BPE_MULTI


def bpe_vocab() -> gs.Vocab:
    return gs.Vocab(
        bpe_tokens(),
        eos_ids=[BPE_EOS, BPE_IM_END],
        special_ids=[BPE_UNK, BPE_BOS, BPE_EOS, BPE_IM_END, BPE_THINK],
    )


def bpe_id(token: bytes) -> int:
    """The id of ``token`` in the BPE-like vocabulary (the multi-byte one when duplicated)."""
    toks = bpe_tokens()
    if token in BPE_MULTI:
        return BPE_BYTE_BASE + 256 + BPE_MULTI.index(token)
    return toks.index(token)
