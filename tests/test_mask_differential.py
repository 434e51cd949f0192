"""Differential test against llama.cpp, the reference semantics of GBNF: at every step of a
document replay, our mask equals the mask of llama.cpp's native grammar sampler (through
llama-cpp-python's low-level API) on every token except the ones llama.cpp treats by quirk:
special/control tokens (llama.cpp matches them as text), EOS, empty tokens, tokens starting with
NUL and tokens holding bytes that never occur in UTF-8 (0xF5-0xFF, 0xC0, 0xC1)."""

from __future__ import annotations

import ctypes
import importlib.util
from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs
from assets import llama_cpp_assets, require, vocab_gguf
from mask_documents import documents
from mask_helpers import decode

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="needs llama-cpp-python (pip install 'gbnf-sampler[llama]')",
)
STEPS = 30  # llama.cpp's sampler takes tens of ms a step on a 128k vocabulary


def _quirk(token: bytes, tid: int, vocab: gs.Vocab) -> bool:
    return (
        vocab.is_special(tid)
        or vocab.is_eos(tid)
        or not token
        or token[0] == 0
        or any(b >= 0xF5 or b in (0xC0, 0xC1) for b in token)
    )


def _llama_mask(lc: Any, smpl: Any, data: Any, arr: Any, template: bytes, n: int) -> set[int]:
    ctypes.memmove(data, template, len(template))
    arr.size, arr.selected, arr.sorted = n, -1, False
    lc.llama_sampler_apply(smpl, ctypes.byref(arr))
    # llama_token_data is {int32 id; float logit; float p}: the logit is float 1 of 3.
    pointer = ctypes.cast(data, ctypes.POINTER(ctypes.c_float))
    floats = np.ctypeslib.as_array(pointer, shape=(n * 3,))
    return set(np.flatnonzero(np.isfinite(floats[1::3])).tolist())


@pytest.fixture(scope="module")
def model() -> tuple[Any, gs.Vocab]:
    from gbnf_sampler.llama.vocab import load_vocab_only

    path = require(lambda: vocab_gguf("llama-bpe"))
    llm = load_vocab_only(path)
    return llm, gs.Vocab.from_llama(llm)


@pytest.fixture(scope="module")
def docs() -> list[tuple[str, str, str]]:
    return documents(require(llama_cpp_assets) / "grammars")


def test_masks_equal_llama_cpp(
    model: tuple[Any, gs.Vocab], docs: list[tuple[str, str, str]]
) -> None:
    import llama_cpp as lc

    llm, vocab = model
    n = vocab.size
    toks = vocab.tokens()
    checked = {t for t in range(n) if not _quirk(toks[t], t, vocab)}
    data = (lc.llama_token_data * n)()
    for i in range(n):
        data[i].id = i
    template = ctypes.string_at(data, n * ctypes.sizeof(lc.llama_token_data))
    arr = lc.llama_token_data_array(
        data=ctypes.cast(data, ctypes.POINTER(lc.llama_token_data)),
        size=n,
        selected=-1,
        sorted=False,
    )
    lvocab = lc.llama_model_get_vocab(llm.model)
    row = np.zeros((n + 31) // 32, dtype=np.int32)
    for name, grammar, doc in docs:
        tokens = llm.tokenize(doc.encode(), add_bos=False, special=False)[:STEPS]
        smpl = lc.llama_sampler_init_grammar(lvocab, grammar.encode(), b"root")
        assert smpl, name
        try:
            m = gs.Matcher(gs.compile(gs.Grammar.from_gbnf(grammar), vocab))
            for step, tid in enumerate(tokens):
                theirs = _llama_mask(lc, smpl, data, arr, template, n) & checked
                m.fill_mask(row)
                ours = set(decode(row)) & checked
                assert ours == theirs, (name, step, sorted(ours ^ theirs)[:10])
                lc.llama_sampler_accept(smpl, tid)
                assert m.accept_token(tid)
        finally:
            lc.llama_sampler_free(smpl)
