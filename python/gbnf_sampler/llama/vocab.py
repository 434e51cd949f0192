"""Exact vocabularies from llama.cpp models, through llama-cpp-python's low-level API.

Token bytes are llama.cpp's ``llama_token_to_piece(..., lstrip=0, special=True)``: the exact
bytes the model emits (SPM ``▁`` already turned into a space, byte-fallback tokens ``<0xC3>``
as the single raw byte, control tokens as their text such as ``<|im_end|>``).

Classification, from llama.cpp's token attributes:

* EOS: every end-of-generation token (``llama_vocab_is_eog``: eos, eot, ``<|im_end|>``, ...).
* special: tokens with the CONTROL, UNKNOWN or UNUSED attribute (bos/eos/pad, chat markers,
  ``<unk>``, reserved and unused slots): never produced as text, only through a grammar token
  reference. USER_DEFINED tokens (added tokens that are plain text, e.g. Gemma's runs of
  spaces or newlines) stay normal text tokens, as in llama.cpp's own grammar sampler.
  Note that llama.cpp also counts some text-looking tokens as end of generation (e.g. ``</s>``
  in Qwen2's and Gemma's vocabularies); being EOS, they are left out of the token trie.

Speed: :func:`native_vocab` reads the vocabulary in C++ through the C addresses of llama.cpp's
functions (taken from llama-cpp-python's ctypes bindings): ~60-150 ms for 128k-262k tokens.
:func:`extract_vocab` is the reference, one ctypes call per token (~10x slower); it is used
when the addresses are not available.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core
from ..vocab import Vocab, register_loader

if TYPE_CHECKING:
    import llama_cpp  # type: ignore[import-not-found, unused-ignore]

INSTALL_HINT = "pip install 'gbnf-sampler[llama]'  (or: pip install llama-cpp-python==0.3.36)"
_BUF_SIZE = 256


def import_llama_cpp() -> Any:
    try:
        import llama_cpp  # type: ignore[import-not-found, unused-ignore]
    except ImportError as e:
        raise ImportError(f"this needs llama-cpp-python; install it with: {INSTALL_HINT}") from e
    return llama_cpp


def load_vocab_only(path: str | os.PathLike[str]) -> llama_cpp.Llama:
    """Opens a GGUF file with its vocabulary only (no weights), quietly."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"GGUF file not found: {p}")
    lc = import_llama_cpp()
    llm: llama_cpp.Llama = lc.Llama(model_path=str(p), vocab_only=True, verbose=False)
    return llm


def _piece(lc: Any, vocab: Any, token: int, buf: Any) -> bytes:
    n = lc.llama_token_to_piece(vocab, token, buf, len(buf), 0, True)
    if n < 0:  # the piece is longer than the buffer: -n is its length
        big = ctypes.create_string_buffer(-n)
        n = lc.llama_token_to_piece(vocab, token, big, len(big), 0, True)
        return ctypes.string_at(big, n)
    return ctypes.string_at(buf, n)


def _special_mask(lc: Any) -> int:
    return int(
        lc.LLAMA_TOKEN_ATTR_CONTROL | lc.LLAMA_TOKEN_ATTR_UNKNOWN | lc.LLAMA_TOKEN_ATTR_UNUSED
    )


def _address(fn: Any) -> int | None:
    """The C address of a ctypes foreign function, or None for anything else."""
    if not isinstance(fn, ctypes._CFuncPtr):  # type: ignore[attr-defined]
        return None
    return ctypes.cast(fn, ctypes.c_void_p).value


def native_vocab(llm: llama_cpp.Llama) -> _core.Vocab | None:
    """The vocabulary read in C++ through llama.cpp's function addresses (fast: no Python call
    per token); None when llama_cpp's functions are not plain ctypes functions."""
    lc = import_llama_cpp()
    fns = (
        lc.llama_vocab_n_tokens,
        lc.llama_token_to_piece,
        lc.llama_vocab_get_attr,
        lc.llama_vocab_is_eog,
    )
    addresses = [_address(f) for f in fns]
    if any(a is None for a in addresses):
        return None
    vocab = lc.llama_model_get_vocab(llm.model)
    if not vocab:
        raise ValueError("the model has no vocabulary")
    n_tokens, to_piece, get_attr, is_eog = (int(a or 0) for a in addresses)
    return _core._vocab_from_llama(
        int(vocab), n_tokens, to_piece, get_attr, is_eog, _special_mask(lc)
    )


def extract_vocab(llm: llama_cpp.Llama) -> tuple[list[bytes], list[int], list[int]]:
    """(token bytes by id, EOS ids, special ids) of a loaded ``llama_cpp.Llama``, one ctypes
    call per token (the slow reference of :func:`native_vocab`)."""
    lc = import_llama_cpp()
    vocab = lc.llama_model_get_vocab(llm.model)
    if not vocab:
        raise ValueError("the model has no vocabulary")
    n = int(lc.llama_vocab_n_tokens(vocab))
    buf = ctypes.create_string_buffer(_BUF_SIZE)
    mask = _special_mask(lc)
    tokens: list[bytes] = []
    eos: list[int] = []
    special: list[int] = []
    for tid in range(n):
        tokens.append(_piece(lc, vocab, tid, buf))
        if lc.llama_vocab_is_eog(vocab, tid):
            eos.append(tid)
        if int(lc.llama_vocab_get_attr(vocab, tid)) & mask:
            special.append(tid)
    return tokens, eos, special


def vocab_from_llama(llm: llama_cpp.Llama) -> Vocab:
    """``Vocab.from_llama``: the fast native read when possible, else the reference."""
    native = native_vocab(llm)
    if native is not None:
        return Vocab._from_native(native)
    tokens, eos, special = extract_vocab(llm)
    return Vocab(tokens, eos, special)


def vocab_from_gguf(path: str | os.PathLike[str]) -> Vocab:
    """``Vocab.from_gguf``: the vocabulary of a GGUF file (loaded vocabulary-only)."""
    llm = load_vocab_only(path)
    try:
        return vocab_from_llama(llm)
    finally:
        llm.close()


register_loader("llama", vocab_from_llama)
register_loader("gguf", vocab_from_gguf)
