"""How much of a document a compile-time precompute budget covers: the requests of
tests/engine_helpers.py (a JSON schema, any JSON, a structural tag) on the Llama-3 vocabulary.

    python bench/precompute_coverage.py [--budgets-ms 20 50]

For each request and budget: a fresh compile (empty caches, no background workers), then
``CompiledGrammar.precompute(budget)`` on this thread (the precompute plan, as the engine
adapters run it at compile time), then a replay of the request's document, fill by fill. Prints
the states the budget classified, and the replay's steps whose fill still had to classify a
state (a cold step in a decoding loop) with the time of all the replay's fills.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import gbnf_sampler as gs
from engine_helpers import REQUESTS, hf_tokenizer, tokenize
from gbnf_sampler.engines import EngineGrammars

CASES = [REQUESTS[0], REQUESTS[1], REQUESTS[6]]  # person schema, any JSON, structural tag


def replay(grammars: EngineGrammars, kind: str, spec: str, doc: str, budget_s: float) -> str:
    gs.compiled.clear_cache()
    compiled = gs.compile(grammars.grammar(kind, spec), grammars.vocab, precompute=False)
    start = time.perf_counter()
    compiled.precompute(budget_s)
    spent = time.perf_counter() - start
    planned = compiled.stats().filled
    m = gs.Matcher(compiled)
    row = np.zeros(int(m._core.mask_words), dtype=np.int32)
    tokens = tokenize(grammars.vocab, doc)
    cold, fills = 0, 0.0
    for tid in tokens:
        before = compiled.stats().classified
        start = time.perf_counter()
        m.fill_mask(row)
        fills += time.perf_counter() - start
        cold += compiled.stats().classified > before
        if not m.accept_token(tid):
            raise SystemExit(f"{kind}: the document's token {tid} was refused")
    return (
        f"| {kind} | {budget_s * 1e3:.0f} | {planned} in {spent * 1e3:.0f} ms | "
        f"{cold} of {len(tokens)} | {fills * 1e3:.1f} |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budgets-ms", type=float, nargs="+", default=[20.0, 50.0])
    args = ap.parse_args()
    tokenizer = hf_tokenizer("llama-bpe")
    grammars = EngineGrammars.from_tokenizer(tokenizer, vocab_size=len(tokenizer), precompute_ms=0)
    grammars.vocab.prepare()  # the trie, before any clock
    print("| request | budget ms | states classified | replay steps that classify | fills ms |")
    print("|---|---|---|---|---|")
    for budget in args.budgets_ms:
        for kind, spec, doc in CASES:
            print(replay(grammars, kind, spec, doc, budget / 1e3), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
