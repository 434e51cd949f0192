"""``Vocab.from_hf``: token bytes against the tokenizer's own decoder, on tokenizers built in
memory and on real vocabularies (llama.cpp's vocab-only GGUF files rebuilt as Hugging Face
tokenizers, compared with ``Vocab.from_gguf``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tokenizers", reason="tokenizers is optional (pip install gbnf-sampler[hf])")
pytest.importorskip(
    "transformers", reason="transformers is optional (pip install gbnf-sampler[hf])"
)

from tokenizers import Tokenizer, decoders, models

import gbnf_sampler as gs
from assets import llama_cpp_assets, require
from gguf_metadata import read_metadata
from hf_fixtures import (
    CORPUS,
    EOS,
    PAD,
    byte_level_tokenizer,
    sentencepiece_tokenizer,
    tokenizer_from_gguf,
    wrap,
)

TEXTS = [*CORPUS, "naïve café ☕ — “quotes” ∑ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "tabs\tand\nnewlines\r\n", "x" * 40]


def _decoded_alone(tok: Any, anchor: int, token_ids: list[int]) -> list[str]:
    """What each token adds to the text after ``anchor``: decode([anchor, t]) minus
    decode([anchor]), which keeps the leading space that decoders strip at the start."""
    head = tok.decode([anchor], skip_special_tokens=False)
    pairs = tok.batch_decode([[anchor, t] for t in token_ids], skip_special_tokens=False)
    assert all(p.startswith(head) for p in pairs)
    return [p[len(head) :] for p in pairs]


def _check_against_decoder(tok: Any, vocab: gs.Vocab, anchor: int) -> int:
    """Every token whose bytes are valid UTF-8 decodes to exactly those bytes; returns how many
    tokens were compared."""
    ids, expected = [], []
    for i in range(len(tok)):
        try:
            expected.append(vocab.token_bytes(i).decode("utf-8"))
        except UnicodeDecodeError:  # half a character: the decoder shows U+FFFD, not the bytes
            continue
        ids.append(i)
    got = _decoded_alone(tok, anchor, ids)
    mismatches = [(i, e, g) for i, e, g in zip(ids, expected, got, strict=True) if e != g]
    assert not mismatches, mismatches[:10]
    return len(ids)


# --- tokenizers built in memory ---


@pytest.fixture(scope="module")
def byte_level() -> Any:
    return wrap(byte_level_tokenizer(), eos_token=EOS, pad_token=PAD)


@pytest.fixture(scope="module")
def spm() -> Any:
    return wrap(sentencepiece_tokenizer(), eos_token="</s>", unk_token="<unk>", bos_token="<s>")


def test_byte_level_tokens_decode_to_their_bytes(byte_level: Any) -> None:
    vocab = gs.Vocab.from_hf(byte_level)
    assert vocab.size == len(byte_level)
    anchor = byte_level.convert_tokens_to_ids("a")
    compared = _check_against_decoder(byte_level, vocab, anchor)
    # The rest are half characters: the corpus makes merges that end inside a UTF-8 sequence.
    assert 0.5 * vocab.size < compared < vocab.size - 128


def test_byte_level_alphabet_and_added_tokens(byte_level: Any) -> None:
    vocab = gs.Vocab.from_hf(byte_level)
    by_piece = byte_level.convert_tokens_to_ids
    assert vocab.token_bytes(by_piece("\u0120")) == b" "  # Ġ
    assert vocab.token_bytes(by_piece("\u010a")) == b"\n"  # Ċ
    assert vocab.token_bytes(by_piece("Ã")) == b"\xc3"  # half of a two-byte character
    # Added tokens go through the decoder too: whole when in the alphabet, as UTF-8 when not.
    assert vocab.token_bytes(by_piece(" Hi é")) == " Hi é".encode()
    assert vocab.token_bytes(by_piece("\u0120x")) == b" x"
    assert vocab.token_bytes(by_piece("é")) == b"\xe9"
    assert vocab.token_bytes(by_piece("<|im_start|>")) == b"<|im_start|>"


@pytest.mark.parametrize("text", TEXTS)
def test_byte_level_sequences_are_exact(text: str) -> None:
    # Concatenated token bytes give the text back exactly, even where single tokens are
    # half characters (the byte-level round trip is lossless).
    tok = byte_level_tokenizer(odd_added_tokens=False)
    vocab = gs.Vocab.from_hf(tok)
    ids = tok.encode(text, add_special_tokens=False).ids
    assert b"".join(vocab.token_bytes(i) for i in ids) == text.encode()


def test_byte_level_special_and_eos(byte_level: Any) -> None:
    vocab = gs.Vocab.from_hf(byte_level, eos_ids=[byte_level.pad_token_id])
    ids = byte_level.convert_tokens_to_ids
    assert vocab.eos_ids == sorted([ids(EOS), ids(PAD)])
    assert set(vocab.special_ids) == {ids(EOS), ids(PAD), ids("<|im_start|>")}
    for plain in (" Hi é", "\u0120x", "é"):
        assert not vocab.is_special(ids(plain))


def test_sentencepiece_tokens_decode_to_their_bytes(spm: Any) -> None:
    vocab = gs.Vocab.from_hf(spm)
    anchor = spm.convert_tokens_to_ids("a")
    assert _check_against_decoder(spm, vocab, anchor) > 0.5 * vocab.size
    assert vocab.token_bytes(spm.convert_tokens_to_ids("\u2581")) == b" "
    for b in (0x00, 0x0A, 0x41, 0xC3, 0xFF):
        assert vocab.token_bytes(spm.convert_tokens_to_ids(f"<0x{b:02X}>")) == bytes([b])
    assert vocab.special_ids == [0, 1, 2] and vocab.eos_ids == [2]


@pytest.mark.parametrize("text", TEXTS)
def test_sentencepiece_sequences_are_exact(spm: Any, text: str) -> None:
    # The normalizer puts ▁ before the text; characters the merges lack come as raw bytes.
    vocab = gs.Vocab.from_hf(spm)
    ids = spm.encode(text, add_special_tokens=False)
    assert 0 not in ids  # no <unk>: byte fallback covers everything
    assert b"".join(vocab.token_bytes(i) for i in ids) == b" " + text.encode()


def test_metaspace_decoder_matches_replace() -> None:
    replace = gs.Vocab.from_hf(sentencepiece_tokenizer())
    meta = sentencepiece_tokenizer(
        decoders.Sequence([decoders.Metaspace(), decoders.ByteFallback()])
    )
    assert gs.Vocab.from_hf(meta, eos_ids=[2]).tokens() == replace.tokens()


def test_plain_vocabulary_without_decoder() -> None:
    pieces = ["yes", "no", " ", "{", "日本", "<eos>"]
    tok = Tokenizer(models.WordLevel({p: i for i, p in enumerate(pieces)}, unk_token="<eos>"))
    vocab = gs.Vocab.from_hf(tok, eos_ids=5)
    assert vocab.tokens() == [p.encode() for p in pieces]
    assert vocab.eos_ids == [5] and vocab.special_ids == []
    assert [tok.decode([i]) for i in range(len(pieces))] == pieces


def test_bpe_suffix_decoder() -> None:
    pieces = ["ab</w>", "cd", "e</w>", "x"]
    tok = Tokenizer(models.WordLevel({p: i for i, p in enumerate(pieces)}, unk_token="x"))
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    vocab = gs.Vocab.from_hf(tok)
    assert vocab.tokens() == [b"ab ", b"cd", b"e ", b"x"]
    for i in range(3):  # a last token loses its suffix space, so decode each before "x"
        assert tok.decode([i, 3]).encode() == vocab.token_bytes(i) + b"x"


def test_padded_vocabulary(byte_level: Any) -> None:
    vocab = gs.Vocab.from_hf(byte_level, vocab_size=len(byte_level) + 37)
    assert vocab.size == len(byte_level) + 37
    assert vocab.tokens()[len(byte_level) :] == [b""] * 37
    assert gs.Vocab.from_hf(byte_level, vocab_size=10).size == len(byte_level)


def test_raw_tokenizers_object_equals_wrapped(byte_level: Any) -> None:
    raw = gs.Vocab.from_hf(byte_level.backend_tokenizer, eos_ids=byte_level.eos_token_id)
    wrapped = gs.Vocab.from_hf(byte_level)
    assert raw.tokens() == wrapped.tokens() and raw.eos_ids == wrapped.eos_ids


@pytest.mark.parametrize(
    ("make", "kwargs", "exc", "match"),
    [
        (lambda: object(), {}, TypeError, "fast Hugging Face tokenizer"),
        (lambda: "gpt2", {}, TypeError, "fast Hugging Face tokenizer"),
        (byte_level_tokenizer, {"eos_ids": [10**6]}, ValueError, "outside the vocabulary"),
        (byte_level_tokenizer, {"eos_ids": "x"}, TypeError, "eos_ids"),
        (byte_level_tokenizer, {"vocab_size": 0}, ValueError, "vocab_size"),
        (byte_level_tokenizer, {"vocab_size": 3.5}, ValueError, "vocab_size"),
    ],
)
def test_bad_arguments(make: Any, kwargs: dict[str, Any], exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        gs.Vocab.from_hf(make(), **kwargs)


def test_wordpiece_decoder_is_refused() -> None:
    tok = Tokenizer(models.WordLevel({"a": 0, "##b": 1}, unk_token="a"))
    tok.decoder = decoders.WordPiece()
    with pytest.raises(ValueError, match="WordPiece") as err:
        gs.Vocab.from_hf(tok)
    assert "gs.Vocab(tokens" in str(err.value)


# --- real vocabularies: llama.cpp's GGUF files rebuilt as Hugging Face tokenizers ---

GGUF_VOCABS = ["gpt-2", "qwen2", "llama-spm", "phi-3"]  # byte-level BPE x2, SentencePiece x2


@pytest.fixture(scope="module")
def gguf_models() -> Path:
    return require(llama_cpp_assets) / "models"


@pytest.mark.parametrize("name", GGUF_VOCABS)
def test_real_vocabulary_equals_llama_cpp(gguf_models: Path, name: str) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python reads the reference vocabulary")
    path = gguf_models / f"ggml-vocab-{name}.gguf"
    hf = tokenizer_from_gguf(read_metadata(path))
    ours = gs.Vocab.from_hf(hf)
    theirs = gs.Vocab.from_gguf(path)
    assert ours.size == theirs.size
    assert ours.tokens() == theirs.tokens()
    # llama.cpp also ends generation on text-looking tokens such as "</s>" (and leaves them out
    # of the text), so its EOS set is larger; the rest of the classification is the same.
    assert set(ours.eos_ids) <= set(theirs.eos_ids)
    assert set(ours.special_ids) - set(theirs.eos_ids) == set(theirs.special_ids) - set(
        theirs.eos_ids
    )


@pytest.mark.parametrize("name", ["gpt-2", "llama-spm"])
def test_real_vocabulary_decodes_to_its_bytes(gguf_models: Path, name: str) -> None:
    hf = tokenizer_from_gguf(read_metadata(gguf_models / f"ggml-vocab-{name}.gguf"))
    vocab = gs.Vocab.from_hf(hf)
    anchor = hf.convert_tokens_to_ids("a")
    assert _check_against_decoder(hf, vocab, anchor) > 0.99 * vocab.size - 256
