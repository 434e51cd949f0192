"""First and warm replays of real documents, for A/B runs of two builds (bench/ab_builds.py).

    python bench/first_replay.py [--vocab llama-bpe] [--reps 2] [--step-ms 0] [--no-prefetch]
                                 [--json out.json]
    python bench/ab_builds.py --base OTHER/bin/python --rounds 3 -- bench/first_replay.py

The documents of tests/mask_documents.py (with llama.cpp's grammars) and one JSON Schema object
with long ``maxLength`` strings (a 1.3 KB document: prose, non-ASCII text, escapes), each
replayed token by token as bench/mask_latency.py's "ours" (cold: a fresh compile with the shared
mask cache emptied, background precompute running as for a user) and "ours-warm" (the same
grammar again, cache warm) engines do, ``--reps`` times each. Prints and writes (``--json``)
p50/p90/p99/max of the fill times in microseconds per mode and document, and pooled per mode.
Exits 1 when a replay refuses the document's own token.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import gbnf_sampler as gs
import mask_latency as ml
from assets import llama_cpp_grammars
from gbnf_sampler.schema import schema_to_gbnf
from mask_documents import documents

MAXLEN_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 300},
        "body": {"type": "string", "maxLength": 2000},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 40}},
    },
    "required": ["title", "body", "tags"],
    "additionalProperties": False,
}


def maxlen_document() -> str:
    body = (
        "Grammar-constrained decoding keeps a model's output parseable. " * 8
        + 'Unicode: café, naïve, 日本語, emoji 😀. Quotes "inside" and a\nnewline, tab\t, '
        + "backslash \\. "
    ) * 2
    value = {"title": "On masks at first sight — a note", "body": body, "tags": ["a", "b"]}
    return json.dumps(value, ensure_ascii=False, indent=2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", default="llama-bpe")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--json", help="write {mode-document: {p50, p90, p99, max}} here")
    ap.add_argument(
        "--step-ms", type=float, default=0.0, help="model time after each accept (asleep)"
    )
    ap.add_argument(
        "--no-prefetch", action="store_true", help="cold replays compiled with prefetch=False"
    )
    args = ap.parse_args()
    ml.step_seconds = args.step_ms / 1e3
    grammars_dir = Path(next(iter(llama_cpp_grammars().values()))).parent
    docs = [*documents(grammars_dir), ("maxlen", schema_to_gbnf(MAXLEN_SCHEMA), maxlen_document())]
    llm = ml.load_model(args.vocab)
    vocab = gs.Vocab.from_llama(llm)
    # The vocabulary's one-time preprocessing, outside the timings (as bench/mask_latency.py).
    keep_alive = gs.compile(gs.Grammar.from_gbnf('root ::= "a"'), vocab, cache=False)
    gs.Matcher(keep_alive).fill_mask(np.zeros((vocab.size + 31) // 32, dtype=np.int32))
    summary: dict[str, dict[str, Any]] = {}
    violations = 0
    cold = functools.partial(ml.run_ours, prefetch=not args.no_prefetch)
    for mode, run in (("cold", cold), ("warm", ml.run_ours_warm)):
        pooled: list[float] = []
        for name, grammar, text in docs:
            tokens = llm.tokenize(text.encode(), add_bos=False, special=False)
            res = ml.Result()
            for _ in range(args.reps):
                run(vocab, grammar, tokens, res)
            violations += res.violations
            pooled += res.steps
            summary[f"{mode}-{name}"] = ml.percentiles(res.steps)
        summary[f"{mode}-pooled"] = ml.percentiles(pooled)
    for group, p in summary.items():
        print(
            f"{group:18s} p50={p['p50']:9.1f} p90={p['p90']:9.1f} p99={p['p99']:9.1f} "
            f"max={p['max']:9.1f} us"
        )
    if args.json:
        metrics = ("p50", "p90", "p99", "max")
        out = {g: {k: p[k] for k in metrics} for g, p in summary.items()}
        Path(args.json).write_text(json.dumps(out))
    if violations:
        print(f"FAILED: {violations} replays refused the document's own token")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
