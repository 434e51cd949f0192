"""Hugging Face tokenizers built in memory for the tests (no hub download): a byte-level BPE
(GPT-2 style), a SentencePiece-style BPE with byte fallback (Llama style), and tokenizers rebuilt
from llama.cpp's vocab-only GGUF files. Import only after ``tokenizers`` and ``transformers``."""

from __future__ import annotations

import json
from typing import Any

from tokenizers import (
    AddedToken,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    trainers,
)
from transformers import PreTrainedTokenizerFast

# Text with multi-byte characters, so that merges make tokens that end inside a UTF-8 sequence.
CORPUS = [
    '{"name": "Ada", "ok": true, "n": 12}',
    '{"name": "Bob", "ok": false, "n": 7}',
    "hello world, héllo wörld",
    "日本語のテキスト and emoji 🙂🙂",
    "yes no maybe",
] * 4

EOS, PAD = "<|endoftext|>", "<pad>"
SPM_SPECIALS = ["<unk>", "<s>", "</s>"]
SPM_DECODER = [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()]
# llama.cpp token types (GGUF tokenizer.ggml.token_type)
UNKNOWN, CONTROL, USER_DEFINED, UNUSED = 2, 3, 4, 5


def byte_level_tokenizer(vocab_size: int = 400, *, odd_added_tokens: bool = True) -> Tokenizer:
    """A byte-level BPE trained on CORPUS, with EOS and PAD; ``odd_added_tokens`` adds a special
    token and plain added tokens, some spelled in the byte-level alphabet, some not (encoding
    text that contains them is not lossless: "é" decodes to the single byte 0xE9)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[EOS, PAD],
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    if not odd_added_tokens:
        return tok
    tok.add_special_tokens([AddedToken("<|im_start|>", special=True, normalized=False)])
    plain = [" Hi é", "\u0120x", "é", "ĠĠ"]  # outside, inside, inside (one byte), inside
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in plain])
    return tok


def _merges(model: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for merge in model["merges"]:
        a, b = merge if isinstance(merge, list) else merge.split(" ", 1)
        out.append((a, b))
    return out


def sentencepiece_tokenizer(decoder: Any = None) -> Tokenizer:
    """A Llama-style BPE: ``▁`` for spaces, ``<0xNN>`` byte-fallback tokens (ids 3-258) for
    characters the merges do not cover, <unk> <s> </s> as special tokens (ids 0-2)."""
    normalizer = normalizers.Sequence(
        [normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")]
    )
    learner = Tokenizer(models.BPE())
    learner.normalizer = normalizer
    learner.train_from_iterator(
        CORPUS[:3], trainers.BpeTrainer(vocab_size=200, show_progress=False)
    )
    learned = json.loads(learner.to_str())["model"]
    vocab = {t: i for i, t in enumerate(SPM_SPECIALS + [f"<0x{b:02X}>" for b in range(256)])}
    for piece in sorted(learned["vocab"], key=learned["vocab"].__getitem__):
        vocab.setdefault(piece, len(vocab))
    tok = Tokenizer(models.BPE(vocab, _merges(learned), unk_token="<unk>", byte_fallback=True))
    tok.normalizer = normalizer
    tok.decoder = decoder if decoder is not None else decoders.Sequence(SPM_DECODER)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPM_SPECIALS])
    return tok


def wrap(tok: Tokenizer, **kwargs: Any) -> PreTrainedTokenizerFast:
    return PreTrainedTokenizerFast(tokenizer_object=tok, **kwargs)


def tokenizer_from_gguf(meta: dict[str, Any]) -> PreTrainedTokenizerFast:
    """The Hugging Face tokenizer of a llama.cpp vocabulary (GGUF metadata): byte-level BPE for
    ``gpt2`` vocabularies, a byte-fallback Unigram with Llama's decoder for ``llama`` ones.
    Control, unknown and unused tokens become special added tokens, user-defined ones plain
    added tokens, as in the original tokenizers."""
    tokens: list[str] = meta["tokenizer.ggml.tokens"]
    types: list[int] = meta["tokenizer.ggml.token_type"]
    if meta["tokenizer.ggml.model"] == "gpt2":
        tok = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, []))
        tok.decoder = decoders.ByteLevel()
    else:
        pieces = list(zip(tokens, meta["tokenizer.ggml.scores"], strict=True))
        unk = int(meta.get("tokenizer.ggml.unknown_token_id", 0))
        tok = Tokenizer(models.Unigram(pieces, unk_id=unk, byte_fallback=True))
        tok.decoder = decoders.Sequence([*SPM_DECODER, decoders.Strip(" ", 1, 0)])
    added = [
        AddedToken(text, special=kind in (UNKNOWN, CONTROL, UNUSED), normalized=False)
        for text, kind in zip(tokens, types, strict=True)
        if kind in (UNKNOWN, CONTROL, USER_DEFINED, UNUSED)
    ]
    tok.add_tokens(added)
    eos = tokens[int(meta["tokenizer.ggml.eos_token_id"])]
    return wrap(tok, eos_token=eos)
