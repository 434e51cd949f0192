"""``Vocab``: a tokenizer vocabulary (token id -> exact bytes, EOS and special ids).

A thin, validating wrapper around the C++ ``_core.Vocab``. The vocabulary is immutable; its
token trie (the tokens sorted by bytes, used by the mask engine) is built once, on first use.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import _core
from .limits import DEFAULT_JSON_MAX_WHITESPACE
from .validation import as_id

# Loaders from other runtimes, registered by their layers (gbnf_sampler.llama registers "llama"
# and "gguf", gbnf_sampler.hf registers "hf") so that this core module imports none of them.
VocabLoader = Callable[..., "Vocab"]
_LOADERS: dict[str, VocabLoader] = {}


def register_loader(name: str, loader: VocabLoader) -> None:
    """Makes ``Vocab.from_<name>`` call ``loader`` (used by the runtime layers)."""
    _LOADERS[name] = loader


def _loader(name: str, layer: str) -> VocabLoader:
    loader = _LOADERS.get(name)
    if loader is None:
        raise RuntimeError(f"Vocab.from_{name} needs the {layer} layer: import {layer}")
    return loader


def _check_ids(ids: Iterable[int], name: str, size: int) -> list[int]:
    if isinstance(ids, (bytes, str)) or not isinstance(ids, Iterable):
        raise TypeError(f"{name} must be a sequence of ints, got {type(ids).__name__}")
    out: list[int] = []
    for value in ids:
        i = as_id(value, name)
        if i < 0 or i >= size:
            raise ValueError(
                f"{name}: token id {i} is out of range for a vocabulary of size {size}"
            )
        out.append(i)
    return out


def _check_tokens(tokens: Sequence[bytes]) -> list[bytes]:
    if isinstance(tokens, (bytes, str)) or not isinstance(tokens, Iterable):
        raise TypeError(f"tokens must be a list of bytes, got {type(tokens).__name__}")
    out = list(tokens)
    for i, t in enumerate(out):
        if not isinstance(t, bytes):
            raise TypeError(f"tokens[{i}] must be bytes, got {type(t).__name__} ({t!r})")
    if not out:
        raise ValueError("the vocabulary is empty (size 0)")
    return out


class Vocab:
    """A tokenizer vocabulary.

    ``tokens[i]`` is the exact byte string of token ``i`` (partial UTF-8, NUL and empty tokens
    allowed). ``eos_ids`` are the end-of-generation tokens (allowed exactly when the grammar can
    end), ``special_ids`` the control tokens that are never allowed unless a grammar names them
    with a token reference (``<[id]>`` or ``<text>``). Logits wider than ``size`` (padded) are
    handled by the mask engine: the extra ids are always masked out.
    """

    __slots__ = ("_native",)

    def __init__(
        self,
        tokens: Sequence[bytes],
        eos_ids: Iterable[int],
        special_ids: Iterable[int] = (),
    ) -> None:
        toks = _check_tokens(tokens)
        eos = _check_ids(eos_ids, "eos_ids", len(toks))
        special = _check_ids(special_ids, "special_ids", len(toks))
        self._native: _core.Vocab = _core.Vocab(toks, eos, special)

    @classmethod
    def _from_native(cls, native: _core.Vocab) -> Vocab:
        self = cls.__new__(cls)
        self._native = native
        return self

    def prepare(self) -> Vocab:
        """Builds the token trie now: the one-time preprocessing that every grammar compiled for
        this vocabulary shares (otherwise the first mask builds it, about 70 ms for a 262k-token
        vocabulary); also the token filter of JSON Schema grammars' default whitespace bound
        (``limits.DEFAULT_JSON_MAX_WHITESPACE``), which their first compile would build (a few
        ms). Returns ``self``."""
        self._native.build_trie()
        self._native.build_whitespace_filter(DEFAULT_JSON_MAX_WHITESPACE)
        return self

    @classmethod
    def from_llama(cls, llm: Any) -> Vocab:
        """The vocabulary of a loaded ``llama_cpp.Llama`` (``vocab_only=True`` is enough)."""
        return _loader("llama", "gbnf_sampler.llama")(llm)

    @classmethod
    def from_gguf(cls, path: str | os.PathLike[str]) -> Vocab:
        """The vocabulary of a GGUF file, read through llama-cpp-python (vocabulary only)."""
        return _loader("gguf", "gbnf_sampler.llama")(path)

    @classmethod
    def from_hf(
        cls,
        tokenizer: Any,
        *,
        vocab_size: int | None = None,
        eos_ids: int | Iterable[int] | None = None,
    ) -> Vocab:
        """The vocabulary of a fast Hugging Face tokenizer (``transformers`` or ``tokenizers``):
        exact bytes for byte-level BPE, SentencePiece byte-fallback and plain vocabularies.

        ``vocab_size``: the model's logits width when it exceeds ``len(tokenizer)`` (padded
        embeddings); the extra ids are never allowed. ``eos_ids``: end-of-generation ids besides
        ``tokenizer.eos_token_id`` (e.g. ``model.generation_config.eos_token_id``). See
        :mod:`gbnf_sampler.hf.vocab`."""
        return _loader("hf", "gbnf_sampler.hf")(tokenizer, vocab_size=vocab_size, eos_ids=eos_ids)

    @property
    def size(self) -> int:
        return int(self._native.size)

    def __len__(self) -> int:
        return int(self._native.size)

    @property
    def fingerprint(self) -> str:
        """64-bit content hash as 16 hex digits; equal vocabularies give equal fingerprints on
        every run and platform."""
        return str(self._native.fingerprint_hex)

    @property
    def eos_ids(self) -> list[int]:
        """End-of-generation ids, ascending and unique."""
        return list(self._native.eos_ids)

    @property
    def special_ids(self) -> list[int]:
        """Special (control) ids, ascending and unique."""
        return list(self._native.special_ids)

    @property
    def max_token_length(self) -> int:
        return int(self._native.max_token_length)

    def token_bytes(self, token_id: int) -> bytes:
        return bytes(self._native.token_bytes(self._check_id(token_id)))

    def is_eos(self, token_id: int) -> bool:
        return bool(self._native.is_eos(self._check_id(token_id)))

    def is_special(self, token_id: int) -> bool:
        return bool(self._native.is_special(self._check_id(token_id)))

    def find_by_text(self, text: bytes | str) -> list[int]:
        """Every id whose bytes equal ``text`` (str is UTF-8 encoded), ascending."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        if not isinstance(data, bytes):
            raise TypeError(f"text must be bytes or str, got {type(text).__name__}")
        return list(self._native.find_by_text(data))

    def tokens(self) -> list[bytes]:
        return [bytes(self._native.token_bytes(i)) for i in range(self.size)]

    def _check_id(self, token_id: int) -> int:
        i = as_id(token_id, "token id")
        if i < 0 or i >= self.size:
            raise ValueError(f"token id {i} is out of range for a vocabulary of size {self.size}")
        return i

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocab):
            return NotImplemented
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return (
            f"Vocab(size={self.size}, eos_ids={self.eos_ids[:8]}, "
            f"special={len(self.special_ids)}, fingerprint={self.fingerprint})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (Vocab, (self.tokens(), self.eos_ids, self.special_ids))
