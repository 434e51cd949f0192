"""Vocab.from_llama against a fake llama_cpp module: exact bytes (long pieces, NUL, partial
UTF-8), EOG ids and the attribute-based special classification, without llama-cpp-python."""

from __future__ import annotations

import ctypes
import sys
from types import SimpleNamespace
from typing import Any

import pytest

import gbnf_sampler as gs

NORMAL, UNKNOWN, UNUSED, CONTROL, USER_DEFINED, BYTE = 4, 1, 2, 8, 16, 32
# (piece with special=True, attributes, is end of generation)
FAKE = [
    (b"<unk>", UNKNOWN, False),
    (b"<s>", CONTROL, False),
    (b"</s>", CONTROL, True),
    (b"<|eot_id|>", CONTROL, True),
    (b"\xc3", BYTE, False),
    (b"\x00", BYTE, False),
    (b" hello", NORMAL, False),
    (b"x" * 1000, NORMAL, False),  # longer than the extraction buffer
    (b"\n\n\n", USER_DEFINED, False),
    (b"<unused0>", UNUSED, False),
    (b"", NORMAL, False),
]


def fake_llama_cpp() -> Any:
    def to_piece(vocab: str, tid: int, buf: Any, length: int, lstrip: int, special: bool) -> int:
        assert vocab == "V" and lstrip == 0 and special is True
        piece = FAKE[tid][0]
        if len(piece) > length:
            return -len(piece)
        ctypes.memmove(buf, piece, len(piece))
        return len(piece)

    return SimpleNamespace(
        LLAMA_TOKEN_ATTR_UNKNOWN=UNKNOWN,
        LLAMA_TOKEN_ATTR_UNUSED=UNUSED,
        LLAMA_TOKEN_ATTR_CONTROL=CONTROL,
        llama_model_get_vocab=lambda model: "V" if model == "M" else None,
        llama_vocab_n_tokens=lambda vocab: len(FAKE),
        llama_token_to_piece=to_piece,
        llama_vocab_is_eog=lambda vocab, tid: FAKE[tid][2],
        llama_vocab_get_attr=lambda vocab, tid: FAKE[tid][1],
    )


def test_from_llama_with_fake_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", fake_llama_cpp())
    v = gs.Vocab.from_llama(SimpleNamespace(model="M"))  # type: ignore[arg-type]
    assert v.tokens() == [t for t, _, _ in FAKE]
    assert v.eos_ids == [2, 3]
    assert v.special_ids == [0, 1, 2, 3, 9]  # control, unknown, unused; not byte/user-defined
    assert v._native.trie_excluded_ids() == [0, 1, 2, 3, 9, 10]


def test_from_llama_without_vocabulary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", fake_llama_cpp())
    with pytest.raises(ValueError, match="no vocabulary"):
        gs.Vocab.from_llama(SimpleNamespace(model="other"))  # type: ignore[arg-type]
