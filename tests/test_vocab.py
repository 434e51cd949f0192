"""gs.Vocab: construction, validation, lookups, fingerprint."""

from __future__ import annotations

import pickle
import struct

import pytest

import gbnf_sampler as gs
from gbnf_sampler import _core
from vocab_fixtures import (
    BPE_EMPTY_ID,
    BPE_EOS,
    BPE_IM_END,
    BPE_THINK,
    BYTE_EOS_ID,
    bpe_id,
    bpe_tokens,
    bpe_vocab,
    byte_tokens,
    byte_vocab,
)


def reference_fingerprint(tokens: list[bytes], eos: list[int], special: list[int]) -> str:
    """The documented serialization of fingerprint.cc, hashed with 64-bit FNV-1a."""

    def u64(v: int) -> bytes:
        return struct.pack("<Q", v)

    data = bytearray(b"gbnf-vocab-v1") + u64(len(tokens))
    for t in tokens:
        data += u64(len(t)) + t
    for ids in (sorted(set(eos)), sorted(set(special))):
        data += u64(len(ids)) + b"".join(u64(i) for i in ids)
    h = 0xCBF29CE484222325
    for c in data:
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def test_basic_accessors() -> None:
    v = gs.Vocab([b"a", b"\x00b", b"\xff", b"", b"<eos>"], eos_ids=[4, 4], special_ids=[4, 3])
    assert v.size == len(v) == 5
    assert v.token_bytes(1) == b"\x00b"
    assert v.token_bytes(2) == b"\xff"
    assert v.token_bytes(3) == b""
    assert v.eos_ids == [4]
    assert v.special_ids == [3, 4]
    assert v.is_eos(4) and not v.is_eos(0)
    assert v.is_special(3) and not v.is_special(0)
    assert v.max_token_length == 5
    assert v.tokens() == [b"a", b"\x00b", b"\xff", b"", b"<eos>"]


def test_default_special_ids_and_iterables() -> None:
    v = gs.Vocab((b"x", b"y"), eos_ids=(1,))
    assert v.special_ids == []
    assert v.eos_ids == [1]


def test_byte_vocab_fixture() -> None:
    v = byte_vocab()
    assert v.size == 257
    assert all(v.token_bytes(i) == bytes([i]) for i in range(256))
    assert v.eos_ids == [BYTE_EOS_ID]


def test_bpe_vocab_fixture() -> None:
    v = bpe_vocab()
    assert v.token_bytes(bpe_id(b" true")) == b" true"
    assert v.token_bytes(BPE_EMPTY_ID) == b""
    assert v.eos_ids == [BPE_EOS, BPE_IM_END]
    assert BPE_THINK in v.special_ids


@pytest.mark.parametrize(
    ("tokens", "eos", "special", "exc"),
    [
        ([], [], [], ValueError),
        ([b"a", "b"], [], [], TypeError),
        ([b"a", bytearray(b"b")], [], [], TypeError),
        (b"ab", [], [], TypeError),
        ("ab", [], [], TypeError),
        (None, [], [], TypeError),
        ([b"a"], [1], [], ValueError),
        ([b"a"], [-1], [], ValueError),
        ([b"a"], [], [5], ValueError),
        ([b"a"], ["0"], [], TypeError),
        ([b"a"], [0.0], [], TypeError),
        ([b"a"], [True], [], TypeError),
        ([b"a"], 0, [], TypeError),
    ],
)
def test_invalid_input(tokens: object, eos: object, special: object, exc: type) -> None:
    with pytest.raises(exc):
        gs.Vocab(tokens, eos, special)  # type: ignore[arg-type]


def test_out_of_range_message_names_id_and_size() -> None:
    with pytest.raises(ValueError, match=r"7.*size 3"):
        gs.Vocab([b"a", b"b", b"c"], eos_ids=[7])
    v = gs.Vocab([b"a", b"b", b"c"], eos_ids=[])
    for bad in (3, -1):
        with pytest.raises(ValueError, match=r"size 3"):
            v.token_bytes(bad)
    with pytest.raises(TypeError):
        v.token_bytes("1")  # type: ignore[arg-type]


def test_core_validates_too() -> None:
    with pytest.raises(ValueError, match="empty"):
        _core.Vocab([], [], [])
    with pytest.raises(ValueError, match=r"special id 9 is out of range.*size 1"):
        _core.Vocab([b"a"], [], [9])
    with pytest.raises(ValueError, match="token id 1 is out of range"):
        _core.Vocab([b"a"], [], []).token_bytes(1)


def test_find_by_text() -> None:
    v = bpe_vocab()
    assert v.find_by_text(b"<|im_end|>") == [BPE_IM_END]
    assert v.find_by_text("<think>") == [BPE_THINK]
    assert v.find_by_text(b"\xc3") == [5 + 0xC3, bpe_id(b"\xc3")]
    assert v.find_by_text(b"not a token") == []
    with pytest.raises(TypeError):
        v.find_by_text(3)  # type: ignore[arg-type]


def test_fingerprint_matches_reference_and_is_pinned() -> None:
    tokens, eos, special = [b"a", b"\x00", b"\xff\xfe", b""], [3], [3, 2]
    v = gs.Vocab(tokens, eos, special)
    assert v.fingerprint == reference_fingerprint(tokens, eos, special)
    assert v.fingerprint == "4e3bfe0bff35b599"  # pinned: must not change across runs/platforms
    b = bpe_vocab()
    assert b.fingerprint == reference_fingerprint(bpe_tokens(), b.eos_ids, b.special_ids)


def test_fingerprint_sensitivity() -> None:
    base = byte_vocab()
    same = gs.Vocab(byte_tokens(), [BYTE_EOS_ID, BYTE_EOS_ID], [BYTE_EOS_ID])
    assert base.fingerprint == same.fingerprint and base == same
    assert hash(base) == hash(same)
    variants = [
        gs.Vocab(byte_tokens(), [BYTE_EOS_ID], []),
        gs.Vocab(byte_tokens(), [], [BYTE_EOS_ID]),
        gs.Vocab([*byte_tokens()[:-1], b"<eos"], [BYTE_EOS_ID], [BYTE_EOS_ID]),
        gs.Vocab(byte_tokens()[::-1], [0], [0]),
        gs.Vocab([b"ab", b"c"], []),
        gs.Vocab([b"a", b"bc"], []),
    ]
    prints = {v.fingerprint for v in variants} | {base.fingerprint}
    assert len(prints) == len(variants) + 1
    assert all(len(p) == 16 and int(p, 16) >= 0 for p in prints)


def test_pickle_round_trip() -> None:
    v = bpe_vocab()
    w = pickle.loads(pickle.dumps(v))
    assert w == v and w.tokens() == v.tokens() and w.special_ids == v.special_ids


def test_repr() -> None:
    assert "size=257" in repr(byte_vocab())
