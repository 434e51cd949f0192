"""Exact vocabularies from Hugging Face tokenizers (``Vocab.from_hf``).

A fast tokenizer (``transformers`` ``PreTrainedTokenizerFast``, or a ``tokenizers.Tokenizer``)
carries a decoder that says how token strings become text. We replay that decoder on each token
alone, so a token's bytes are the bytes it adds to the text when the model samples it:

* ``ByteLevel`` (GPT-2 style byte-level BPE): each character of the token stands for one byte
  (GPT-2's byte-to-unicode alphabet); a token with a character outside that alphabet passes
  through as UTF-8, as the decoder does (added tokens such as ``"<|im_end|>"``).
* SentencePiece style: ``Replace("▁", " ")`` or ``Metaspace`` turn U+2581 into a space, and
  ``ByteFallback`` turns ``<0xNN>`` into the single raw byte (often half a UTF-8 character).
* ``BPEDecoder`` (a word-end suffix such as ``</w>``) becomes a space.
* No decoder: plain vocabularies, token text as UTF-8.

Steps that only trim the start or end of the whole text (``Strip`` after ``Fuse``,
``Metaspace``'s first-word space) are not per-token and are left out, as llama.cpp does (its
token pieces keep the leading space). ``WordPiece`` and ``CTC`` decoders (encoder and speech
tokenizers) put text between tokens that depends on the neighbours, so they are refused.

Classification: special ids are the added tokens marked special plus the tokenizer's
``all_special_ids`` (never matchable as text, only through a grammar token reference); EOS ids are
``tokenizer.eos_token_id`` plus the ``eos_ids`` given (e.g. the model's
``generation_config.eos_token_id``). Ids without a token (holes, or padding up to
``vocab_size``) get empty bytes, which no grammar accepts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from ..vocab import Vocab, register_loader

Piece = str | bytes  # text until a decoder step turns it into raw bytes

_BYTE_FALLBACK = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_UNSUPPORTED_DECODERS = {
    "WordPiece": "WordPiece decoders (BERT-style) insert spaces that depend on the next token",
    "CTC": "CTC decoders (speech models) merge repeated tokens",
}


def _byte_level_alphabet() -> dict[str, int]:
    """GPT-2's byte-to-unicode map, inverted: character -> byte. Printable Latin-1 bytes stand
    for themselves; the other 68 bytes take the code points 256, 257, ... in byte order."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    alphabet = {chr(b): b for b in printable}
    others = [b for b in range(256) if chr(b) not in alphabet]
    alphabet.update({chr(256 + n): b for n, b in enumerate(others)})
    return alphabet


_ALPHABET = _byte_level_alphabet()
# Character -> chr(byte), for str.translate followed by a Latin-1 encode (fast, no Python loop).
_TO_LATIN1 = str.maketrans({c: chr(b) for c, b in _ALPHABET.items()})
_OUTSIDE_ALPHABET = re.compile("[^" + "".join(re.escape(c) for c in _ALPHABET) + "]")


def byte_level_bytes(piece: str) -> bytes:
    """The bytes a ByteLevel decoder makes of one token."""
    if _OUTSIDE_ALPHABET.search(piece):
        return piece.encode("utf-8")
    return piece.translate(_TO_LATIN1).encode("latin-1")


def _on_text(fn: Callable[[str], Piece]) -> Callable[[Piece], Piece]:
    """A text step: raw-byte pieces (already decoded) pass through unchanged."""
    return lambda piece: piece if isinstance(piece, bytes) else fn(piece)


def _byte_fallback(piece: str) -> Piece:
    found = _BYTE_FALLBACK.fullmatch(piece)
    return bytes([int(found.group(1), 16)]) if found else piece


def _replace_step(spec: dict[str, Any]) -> Callable[[str], Piece]:
    pattern = spec.get("pattern") or {}
    content = str(spec.get("content", ""))
    if "String" in pattern:
        old = str(pattern["String"])
        return lambda piece: piece.replace(old, content)
    if "Regex" in pattern:
        regex = re.compile(str(pattern["Regex"]))
        return lambda piece: regex.sub(lambda _: content, piece)
    raise ValueError(f"Replace decoder without a pattern: {spec}")


def _strip_step(spec: dict[str, Any]) -> Callable[[str], Piece]:
    content, start, stop = str(spec.get("content", "")), int(spec["start"]), int(spec["stop"])

    def strip(piece: str) -> Piece:
        for _ in range(start):
            if not piece.startswith(content) or not content:
                break
            piece = piece[len(content) :]
        for _ in range(stop):
            if not piece.endswith(content) or not content:
                break
            piece = piece[: -len(content)]
        return piece

    return strip


def _steps(spec: dict[str, Any] | None) -> list[Callable[[Piece], Piece]]:
    """The per-token steps of a decoder (its JSON description), in order."""
    if spec is None:
        return []
    kind = str(spec.get("type"))
    if kind == "Sequence":
        steps: list[Callable[[Piece], Piece]] = []
        fused = False
        for inner in spec.get("decoders", []):
            if inner.get("type") == "Fuse":
                fused = True  # later steps see the whole text, not one token
            elif not (fused and inner.get("type") == "Strip"):
                steps.extend(_steps(inner))
        return steps
    if kind in _UNSUPPORTED_DECODERS:
        raise ValueError(
            f"Vocab.from_hf: {_UNSUPPORTED_DECODERS[kind]}, so tokens have no bytes of their own; "
            "build gs.Vocab(tokens, eos_ids, special_ids) yourself for this tokenizer"
        )
    if kind == "ByteLevel":
        return [_on_text(byte_level_bytes)]
    if kind == "ByteFallback":
        return [_on_text(_byte_fallback)]
    if kind == "Replace":
        return [_on_text(_replace_step(spec))]
    if kind == "Metaspace":
        marker = str(spec.get("replacement", "\u2581"))
        return [_on_text(lambda piece: piece.replace(marker, " "))]
    if kind == "BPEDecoder":
        suffix = str(spec.get("suffix", "</w>"))
        return [_on_text(lambda piece: piece.replace(suffix, " "))]
    if kind == "Strip":
        return [_on_text(_strip_step(spec))]
    if kind == "Fuse":
        return []
    raise ValueError(
        f"Vocab.from_hf: unknown tokenizer decoder type {kind!r}; build "
        "gs.Vocab(tokens, eos_ids, special_ids) yourself for this tokenizer"
    )


def backend_of(tokenizer: Any) -> Any:
    """The ``tokenizers.Tokenizer`` behind a fast transformers tokenizer (or the object itself)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None and hasattr(tokenizer, "get_added_tokens_decoder"):
        backend = tokenizer
    if backend is None or not hasattr(backend, "get_vocab"):
        raise TypeError(
            "Vocab.from_hf needs a fast Hugging Face tokenizer (transformers "
            "PreTrainedTokenizerFast, e.g. AutoTokenizer.from_pretrained(..., use_fast=True)) or "
            f"a tokenizers.Tokenizer, got {type(tokenizer).__name__}"
        )
    return backend


def tokenizer_size(tokenizer: Any) -> int:
    """Token ids the tokenizer can produce: ``len(tokenizer)`` (added tokens included)."""
    backend = backend_of(tokenizer)
    size = int(backend.get_vocab_size(with_added_tokens=True))
    if backend is not tokenizer:
        size = max(size, len(tokenizer))
    return size


def _decoder_spec(backend: Any) -> dict[str, Any] | None:
    decoder = backend.decoder
    if decoder is None:
        return None
    spec: dict[str, Any] = json.loads(decoder.__getstate__())
    return spec


def _as_ids(value: int | Iterable[int] | None, name: str) -> list[int]:
    if value is None:
        return []
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be an int or a sequence of ints, got {type(value).__name__}")
    return [int(v) for v in value]


def extract_hf_vocab(
    tokenizer: Any,
    *,
    vocab_size: int | None = None,
    eos_ids: int | Iterable[int] | None = None,
) -> tuple[list[bytes], list[int], list[int]]:
    """(token bytes by id, EOS ids, special ids) of a fast tokenizer; see the module docstring.
    ``vocab_size`` (e.g. the model's ``config.vocab_size``) pads the vocabulary with empty
    tokens when the model's logits are wider than the tokenizer."""
    backend = backend_of(tokenizer)
    size = tokenizer_size(tokenizer)
    if vocab_size is not None:
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
            raise ValueError(f"vocab_size must be a positive int, got {vocab_size!r}")
        size = max(size, vocab_size)

    steps = _steps(_decoder_spec(backend))
    tokens = [b""] * size
    for piece, token_id in backend.get_vocab(with_added_tokens=True).items():
        if not 0 <= token_id < size:
            continue
        out: Piece = piece
        for step in steps:
            out = step(out)
        tokens[token_id] = out if isinstance(out, bytes) else out.encode("utf-8")

    special = {i for i, t in backend.get_added_tokens_decoder().items() if t.special}
    special.update(_as_ids(getattr(tokenizer, "all_special_ids", None), "all_special_ids"))
    eos = set(_as_ids(getattr(tokenizer, "eos_token_id", None), "eos_token_id"))
    eos.update(_as_ids(eos_ids, "eos_ids"))
    for name, ids in (("eos_ids", eos), ("special ids", special)):
        outside = sorted(i for i in ids if not 0 <= i < size)
        if outside:
            raise ValueError(
                f"Vocab.from_hf: {name} {outside} are outside the vocabulary of size {size}"
            )
    return tokens, sorted(eos), sorted(special)


def vocab_from_hf(
    tokenizer: Any, *, vocab_size: int | None = None, eos_ids: int | Iterable[int] | None = None
) -> Vocab:
    """``Vocab.from_hf``: see :func:`extract_hf_vocab`."""
    tokens, eos, special = extract_hf_vocab(tokenizer, vocab_size=vocab_size, eos_ids=eos_ids)
    return Vocab(tokens, eos, special)


register_loader("hf", vocab_from_hf)
