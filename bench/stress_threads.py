"""Thread stress: many threads share compiled grammars and drive their own matchers through JSON
documents (fill_mask, accept_token, rollback, fork, batch fill_masks / accept_tokens) for a fixed
time; every transcript is checked against the one a single thread computed first. Also run
under ThreadSanitizer by scripts/test-tsan.sh.

    python bench/stress_threads.py [--threads 8] [--seconds 20] [--vocab toy|llama3|PATH.gguf]

Prints iterations per thread and exits 1 on the first mismatch (or any exception).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

import gbnf_sampler as gs

SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string", "maxLength": 40},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c d"]}},
        "nested": {"type": "object", "properties": {"x": {"type": "number"}}},
    },
    "required": ["id", "name"],
}
DOCUMENTS = [
    {"id": 1, "name": "stress", "tags": ["a", "c d"], "nested": {"x": -1.25}},
    {"id": 123456, "name": "caf\u00e9 \u4e2d", "tags": []},
    {"id": -7, "name": "", "nested": {}},
]


def load_vocab(spec: str) -> gs.Vocab:
    if spec == "toy":
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from vocab_fixtures import bpe_vocab

        return bpe_vocab()
    if spec == "llama3":
        from assets import llama_cpp_assets

        return gs.Vocab.from_gguf(llama_cpp_assets() / "models" / "ggml-vocab-llama-bpe.gguf")
    return gs.Vocab.from_gguf(spec)


def tokenize(data: bytes, vocab: gs.Vocab) -> list[int]:
    """Greedy longest-match over the vocabulary's normal tokens."""
    skip = set(vocab.eos_ids) | set(vocab.special_ids)
    table: dict[bytes, int] = {}
    for i, t in enumerate(vocab.tokens()):
        if t and i not in skip:
            table.setdefault(t, i)
    longest = min(max(len(t) for t in table), 32)
    out, i = [], 0
    while i < len(data):
        for j in range(min(len(data), i + longest), i, -1):
            if data[i:j] in table:
                out.append(table[data[i:j]])
                i = j
                break
        else:
            raise ValueError(f"no token for byte {data[i]:#x}")
    return out


def transcript(compiled: gs.CompiledGrammar, tokens: list[int], seed: int) -> list[Any]:
    rng = random.Random(seed)
    m = gs.Matcher(compiled)
    row = gs.allocate_bitmask(1, compiled.vocab_size)
    out: list[Any] = []
    i = 0
    while i < len(tokens):
        m.fill_mask(row)
        out.append(hash(row.tobytes()))
        if not m.accept_token(tokens[i]):
            raise AssertionError(f"token {i} refused")
        i += 1
        if rng.random() < 0.2 and m.rollback_available:
            n = rng.randint(1, min(3, m.rollback_available))
            m.rollback(n)
            i -= n
        if rng.random() < 0.05:
            m = m.fork()
    out.append(m.can_terminate())
    return out


def batch_transcript(compiled: gs.CompiledGrammar, streams: list[list[int]]) -> list[int]:
    matchers = [gs.Matcher(compiled) for _ in streams]
    bitmask = gs.allocate_bitmask(len(streams), compiled.vocab_size)
    out = []
    for step in range(max(len(s) for s in streams)):
        gs.fill_masks(matchers, bitmask)
        out.append(hash(bitmask.tobytes()))
        live = [i for i, s in enumerate(streams) if step < len(s)]
        if not all(gs.accept_tokens([matchers[i] for i in live], [streams[i][step] for i in live])):
            raise AssertionError(f"batch step {step} refused")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--vocab", default="toy", help="toy, llama3 or a GGUF path")
    args = parser.parse_args()

    vocab = load_vocab(args.vocab)
    grammars = [gs.Grammar.json(), gs.Grammar.from_json_schema(SCHEMA)]
    streams = [tokenize(json.dumps(d).encode(), vocab) for d in DOCUMENTS]
    jobs = [
        (g, s, seed) for g in range(len(grammars)) for s in range(len(streams)) for seed in (1, 2)
    ]
    reference = [gs.compile(g, vocab, cache=False) for g in grammars]
    expected = {job: transcript(reference[job[0]], streams[job[1]], job[2]) for job in jobs}
    expected_batch = [batch_transcript(c, streams) for c in reference]

    failures: list[str] = []
    counts = [0] * args.threads
    deadline = time.monotonic() + args.seconds
    state = {"shared": [gs.compile(g, vocab, cache=False) for g in grammars]}

    def worker(t: int) -> None:
        rng = random.Random(t)
        try:
            while time.monotonic() < deadline and not failures:
                shared = state["shared"]
                if rng.random() < 0.2:
                    g = rng.randrange(len(grammars))
                    if batch_transcript(shared[g], streams) != expected_batch[g]:
                        failures.append(f"thread {t}: batch transcript differs (grammar {g})")
                else:
                    job = rng.choice(jobs)
                    if transcript(shared[job[0]], streams[job[1]], job[2]) != expected[job]:
                        failures.append(f"thread {t}: transcript differs for {job}")
                if t == 0 and rng.random() < 0.05:  # fresh grammars: the caches fill again
                    state["shared"] = [gs.compile(g, vocab, cache=False) for g in grammars]
                counts[t] += 1
        except Exception as e:  # reported by the main thread
            failures.append(f"thread {t}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(args.threads)]
    start = time.monotonic()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    elapsed = time.monotonic() - start
    print(
        f"{args.threads} threads, {elapsed:.1f}s, vocab {args.vocab} ({vocab.size} tokens): "
        f"{sum(counts)} transcripts ({np.mean(counts):.0f} per thread)"
    )
    for f in failures[:10]:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
