r"""Differential tests against jsonschema (format checker on) on a fixed sample of SchemaStore
(``bench/schema_soundness.py`` and ``bench/schema_completeness.py`` run the whole corpus).

For every sampled schema that compiles without a warning, in both property orders:

* no false emptiness: a (sub)schema the converter calls unsatisfiable has no valid example
  instance and no valid generated document;

* sound: random documents drawn from the grammar are valid;
* complete: every ``examples``/``default`` value that jsonschema finds valid for its subschema,
  and every document hypothesis-jsonschema generates for the schema, is accepted (integral
  floats written as integers; patterns matched where Python's ``re`` and ECMA-262 agree: a
  string whose match depends on the reading, such as a non-ASCII digit for ``\d``, does not
  count, see ``schema_corpus.is_valid_where_readings_agree``). In
  ``property_order="schema"`` a document the ``"any"`` grammar accepts but the ``"schema"``
  grammar refuses differs from the schema's order only: it is not counted there.
"""

from __future__ import annotations

import functools
import json
import warnings
from typing import Any

import pytest

import gbnf_sampler as gs
import schema_corpus as corpus_lib
from assets import require
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf

SAMPLE_EVERY = 19  # one schema in 19 of the sorted corpus (about 30 schemas)
SAMPLES = 3
EXAMPLES = 6
GENERATED = 4


@functools.lru_cache(maxsize=1)
def corpus() -> tuple[dict[str, Any], dict[str, Any]]:
    return corpus_lib.load()


def _names() -> list[str]:
    try:
        schemas, _ = corpus()
    except corpus_lib.AssetUnavailable:
        return ["(corpus unavailable)"]
    return sorted(schemas)[::SAMPLE_EVERY]


@functools.lru_cache(maxsize=256)
def _outcome(name: str, order: str, pointer: str | None = None) -> gs.Grammar | bool:
    """The exact grammar of a schema (or of its subschema at ``pointer``), else whether the
    converter called it unsatisfiable."""
    schemas, documents = corpus()
    schema = schemas[name]
    if pointer is not None:
        documents = corpus_lib.documents_for(schema, documents)
        schema = corpus_lib.subschema(schema, pointer)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", SchemaWarning)
            text = schema_to_gbnf(schema, documents=documents, property_order=order)
    except gs.SchemaError as err:
        return err.message == corpus_lib.EMPTY
    except (SchemaWarning, RecursionError):
        return False
    return gs.Grammar.from_gbnf(text)


def _grammar(name: str, order: str, pointer: str | None = None) -> gs.Grammar | None:
    outcome = _outcome(name, order, pointer)
    return outcome if isinstance(outcome, gs.Grammar) else None


def _claims_empty(name: str, order: str, pointer: str | None = None) -> bool:
    return _outcome(name, order, pointer) is True


def _rejected(name: str, order: str, value: Any, pointer: str | None = None) -> bool:
    """Whether the grammar refuses ``value`` for a reason other than key order (a schema called
    unsatisfiable refuses every value)."""
    grammar = _grammar(name, order, pointer)
    if grammar is None:
        return _claims_empty(name, order, pointer)
    if corpus_lib.accepts(grammar, value):
        return False
    if order == "schema":
        # Refused for key order only when the "any" grammar accepts it; when that grammar
        # cannot be built (too many properties for property_order="any"), nothing is known.
        other = _grammar(name, "any", pointer)
        return other is not None and not corpus_lib.accepts(other, value)
    return True


@pytest.mark.parametrize("name", _names())
@pytest.mark.parametrize("order", ["schema", "any"])
def test_corpus_sample(name: str, order: str) -> None:
    schemas, documents = require(corpus)
    schema = schemas[name]
    reg = corpus_lib.registry(documents)
    grammar = _grammar(name, order)
    problems: list[str] = []
    if grammar is not None:
        # Only rules the root reaches (the converter leaves out what dropped branches made).
        problems += [f"{w.code}: {w.message}" for w in grammar.warnings]
        for data in corpus_lib.sample_documents(grammar, SAMPLES):
            doc = json.loads(data)
            if corpus_lib.is_valid(schema, doc, reg) is False:
                problems.append(f"invalid sentence: {data[:200]!r}")
    if grammar is not None or _claims_empty(name, order):
        for doc in corpus_lib.generated_documents(schema, GENERATED) or []:
            doc = corpus_lib.normalized(doc)
            if corpus_lib.is_valid_where_readings_agree(schema, doc, reg) and _rejected(
                name, order, doc
            ):
                problems.append(f"generated document rejected: {json.dumps(doc)[:200]}")
    base_docs = corpus_lib.documents_for(schema, documents)
    base_reg = corpus_lib.registry(base_docs)
    for pointer, value in list(corpus_lib.example_instances(schema))[:EXAMPLES]:
        sub = corpus_lib.subschema(schema, pointer)
        value = corpus_lib.normalized(value)
        if corpus_lib.is_valid_where_readings_agree(
            sub, value, base_reg, draft_of=schema
        ) and _rejected(name, order, value, pointer):
            problems.append(f"example at {pointer or '/'} rejected: {json.dumps(value)[:200]}")
    assert not problems, problems
