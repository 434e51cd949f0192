"""Completeness over the SchemaStore corpus: valid documents must be accepted.

    python bench/schema_completeness.py [--limit N] [--only NAME] [--generated 5]
                                        [--examples 20] [--property-order schema|any]

For every schema (and, for examples, the subschema each example belongs to) that compiles
without a ``SchemaWarning``: every ``examples``/``default`` value that jsonschema (format checker
on) finds valid, and every document hypothesis-jsonschema generates for the whole schema (schemas
with references to other documents are left out: it would fetch them), must be accepted by the
grammar (integral floats written as integers, patterns matched where Python's ``re`` and
ECMA-262 agree: see ``tests/schema_corpus.py``). With ``--property-order schema`` a document
that the ``"any"`` grammar accepts but the ``"schema"`` grammar refuses differs from the
schema's order only, and is counted apart ("order"). A (sub)schema the converter calls
unsatisfiable must have no valid example and no valid generated document (counted as "valid
documents of schemas called unsatisfiable"). Exits 1 when a valid document is rejected for
another reason or belongs to a schema called unsatisfiable.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import gbnf_sampler as gs
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import schema_corpus as corpus_lib


def compile_exact(schema: Any, documents: dict[str, Any], order: str) -> gs.Grammar | bool:
    """The exact grammar, else whether the converter called the schema unsatisfiable."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", SchemaWarning)
            text = schema_to_gbnf(schema, documents=documents, property_order=order)
        grammar = gs.Grammar.from_gbnf(text)
        grammar.automaton()  # too large an automaton: the grammar is of no use to a Matcher
        return grammar
    except gs.SchemaError as err:
        return err.message == corpus_lib.EMPTY
    except gs.GrammarTooComplexError as err:
        TOO_COMPLEX.append(str(err)[:100])
        return False
    except (SchemaWarning, gs.GrammarError, RecursionError):
        return False


TOO_COMPLEX: list[str] = []  # exact grammars whose automaton is over the size limit


class Tally:
    def __init__(self, order: str) -> None:
        self.order = order
        self.checked = {"example": 0, "generated": 0}
        self.order_only = 0
        self.undetermined = 0
        self.rejected: list[str] = []
        self.false_empty: list[str] = []

    def check(self, kind: str, label: str, value: Any, compile_for: Any) -> None:
        grammar = compile_for(self.order)
        if not isinstance(grammar, gs.Grammar):
            if grammar is True:  # called unsatisfiable
                text = json.dumps(value)[:160]
                self.false_empty.append(f"{label} (called unsatisfiable): {text}")
            return
        self.checked[kind] += 1
        if corpus_lib.accepts(grammar, value):
            return
        if self.order == "schema":
            other = compile_for("any")
            if not isinstance(other, gs.Grammar):
                self.undetermined += 1  # no "any" grammar (too many properties) to tell
                return
            if corpus_lib.accepts(other, value):
                self.order_only += 1
                return
        self.rejected.append(f"{label}: {json.dumps(value)[:160]}")


def run_schema(
    name: str, schema: Any, documents: dict[str, Any], tally: Tally, args: argparse.Namespace
) -> None:
    cache: dict[tuple[str | None, str], gs.Grammar | bool] = {}

    def grammar_for(pointer: str | None) -> Any:
        def compile_for(order: str) -> gs.Grammar | bool:
            if (pointer, order) not in cache:
                if pointer is None:
                    cache[(pointer, order)] = compile_exact(schema, documents, order)
                else:
                    sub = corpus_lib.subschema(schema, pointer)
                    docs = corpus_lib.documents_for(schema, documents)
                    cache[(pointer, order)] = compile_exact(sub, docs, order)
            return cache[(pointer, order)]

        return compile_for

    reg = corpus_lib.registry(corpus_lib.documents_for(schema, documents))
    for pointer, value in list(corpus_lib.example_instances(schema))[: args.examples]:
        sub = corpus_lib.subschema(schema, pointer)
        value = corpus_lib.normalized(value)
        if corpus_lib.is_valid_where_readings_agree(sub, value, reg, draft_of=schema):
            tally.check("example", f"{name} {pointer or '/'}", value, grammar_for(pointer))
    if args.generated and grammar_for(None)(args.property_order) is not False:
        for doc in corpus_lib.generated_documents(schema, args.generated) or []:
            doc = corpus_lib.normalized(doc)
            if corpus_lib.is_valid_where_readings_agree(schema, doc, reg):
                tally.check("generated", f"{name} (generated)", doc, grammar_for(None))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--generated", type=int, default=5)
    parser.add_argument("--examples", type=int, default=20, help="examples per schema")
    parser.add_argument("--property-order", choices=("schema", "any"), default="schema")
    args = parser.parse_args(argv)
    corpus, documents = corpus_lib.load()
    sys.setrecursionlimit(20000)
    tally = Tally(args.property_order)
    names = args.only or sorted(corpus)[: args.limit or None]
    for name in names:
        before = len(TOO_COMPLEX)
        run_schema(name, corpus[name], documents, tally, args)
        if len(TOO_COMPLEX) > before:
            print(f"{name}: exact grammar, automaton too large ({TOO_COMPLEX[-1]})", flush=True)
    print(
        f"property_order={args.property_order}: valid examples checked "
        f"{tally.checked['example']}, generated documents checked {tally.checked['generated']}, "
        f"rejected {len(tally.rejected)}"
        + (
            f", refused for key order only {tally.order_only}"
            if args.property_order == "schema"
            else ""
        )
    )
    for line in tally.rejected[:30]:
        print("   ", line)
    print(f"valid documents of schemas called unsatisfiable: {len(tally.false_empty)}")
    for line in tally.false_empty[:30]:
        print("   ", line)
    return 1 if tally.rejected or tally.false_empty else 0


if __name__ == "__main__":
    sys.exit(main())
