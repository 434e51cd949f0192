"""A server's stream of new JSON Schemas: first-sight masks, with and without the shared cache.

    python bench/schema_stream.py [--vocab llama-bpe] [--schemas 60] [--every 5] [--json out]
    python bench/ab_builds.py --base OTHER/bin/python --rounds 3 -- bench/schema_stream.py

Takes ``--schemas`` SchemaStore schemas (every ``--every``-th of those that convert, converted as
bench/first_mask.py does, cached) and one document per schema sampled from its grammar (the
longest of 8 derivations by tests/schema_corpus.py's ``sample_documents``; cached too),
tokenized by the vocabulary and cut at 256 tokens. Each schema is compiled anew (compile cache
off, background precompute on as for a user) and its document replayed token by token, timing
every ``fill_mask`` (the calling thread's CPU time: a classification that a background worker
ran while the caller waited is not counted). Mode "stream": the schemas one after the other
with the shared mask cache kept, as a server that gets a new schema per request; mode
"isolated": the shared cache emptied before each schema. Prints and writes (``--json``)
p50/p90/p99/max of the fills in microseconds and their total in milliseconds, and the share of
the entries filled from the shared cache, per mode. Exits 1 when a replay
refuses its document's own token.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import gbnf_sampler as gs
import mask_latency as ml
from assets import cache_dir
from first_mask import converted_corpus, converter_hash
from gbnf_sampler.compiled import clear_cache
from gbnf_sampler.schema import output_whitespace_bound
from schema_corpus import sample_documents

MAX_TOKENS = 256


def stream(every: int, count: int) -> list[tuple[str, str, bytes]]:
    """(name, GBNF, a sampled document) per schema, cached by the converter's hash."""
    path = cache_dir() / "schema-stream" / f"{converter_hash()}-every{every}-n{count}-longest8.json"
    if path.exists():
        rows = json.loads(path.read_text())
        return [(name, text, doc.encode("latin-1")) for name, text, doc in rows]
    rows = []
    for name, text in sorted(converted_corpus(1).items())[::every]:
        try:
            grammar = gs.Grammar.from_gbnf(text)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                docs = sample_documents(grammar, 8, seed=0)
        except (gs.GrammarError, gs.GrammarTooComplexError, RecursionError):
            continue
        if docs:  # the longest of a few derivations (the first ones are the smallest)
            rows.append((name, text, max(docs, key=len).decode("latin-1")))
        if len(rows) == count:
            break
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows))
    return [(name, text, doc.encode("latin-1")) for name, text, doc in rows]


def replay(llm: Any, vocab: gs.Vocab, text: str, doc: bytes, steps: list[float]) -> tuple[int, int]:
    """Replays one document on a fresh compile; (entries filled, from the shared cache), or
    (-1, 0) when a token is refused."""
    compiled = gs.compile(
        gs.Grammar.from_gbnf(text), vocab, cache=False, max_whitespace=output_whitespace_bound()
    )
    matcher = gs.Matcher(compiled)
    row = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    for token in llm.tokenize(doc, add_bos=False, special=False)[:MAX_TOKENS]:
        t0 = time.thread_time_ns()
        matcher.fill_mask(row)
        steps.append((time.thread_time_ns() - t0) / 1e3)
        if not matcher.accept_token(token):
            return -1, 0
    stats = compiled.stats()
    return stats.filled, stats.shared


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", default="llama-bpe")
    ap.add_argument("--schemas", type=int, default=60)
    ap.add_argument("--every", type=int, default=5, help="take every n-th converted schema")
    ap.add_argument("--json", help="write {mode: {p50, p90, p99, max, total_ms, shared}} here")
    args = ap.parse_args()
    sys.setrecursionlimit(10_000)
    docs = stream(args.every, args.schemas)
    llm = ml.load_model(args.vocab)
    vocab = gs.Vocab.from_llama(llm)
    vocab.prepare()
    summary: dict[str, dict[str, float]] = {}
    refused = 0
    for mode in ("stream", "isolated"):
        clear_cache()
        steps: list[float] = []
        filled = shared = 0
        for _name, text, doc in docs:
            if mode == "isolated":
                clear_cache()
            got, hits = replay(llm, vocab, text, doc, steps)
            refused += got < 0
            filled += max(got, 0)
            shared += hits
        p = ml.percentiles(steps)
        summary[mode] = {k: p[k] for k in ("p50", "p90", "p99", "max")}
        summary[mode]["total_ms"] = sum(steps) / 1e3
        summary[mode]["shared"] = shared / max(filled, 1)
        print(
            f"{mode:9s} {len(docs)} schemas, {len(steps)} masks: p50={p['p50']:8.1f} "
            f"p90={p['p90']:8.1f} p99={p['p99']:8.1f} max={p['max']:8.1f} us, "
            f"total {sum(steps) / 1e3:.1f} ms; {shared} of {filled} entries from the shared cache"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(summary))
    if refused:
        print(f"FAILED: {refused} replays refused the document's own token")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
