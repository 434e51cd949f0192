"""JSON Schema -> grammar: fuzzer-built schemas (dicts) and raw JSON text, strict and relaxed.
Only SchemaError, GrammarError and GrammarTooComplexError may escape; a grammar that compiles is
then matched against a few bytes (and its forced bytes must be accepted)."""

from __future__ import annotations

import json
import warnings
from typing import Any

from byte_reader import ByteReader
from schema_values import json_value, schema

import gbnf_sampler as gs
from gbnf_sampler.schema import SchemaWarning

EXPECTED = (gs.SchemaError, gs.GrammarError, gs.GrammarTooComplexError)
WHITESPACE = ["flexible", "compact", "indent"]


def _source(r: ByteReader) -> Any:
    mode = r.int_in(0, 3)
    if mode == 0:
        return r.rest()  # raw bytes as JSON text
    if mode == 3:
        return json.dumps(json_value(r, 4))  # any JSON value as schema text
    built = schema(r, 4)
    return json.dumps(built) if mode == 2 else built


def run_one(data: bytes) -> None:
    r = ByteReader(data)
    options = {"strict": r.flag(), "whitespace": r.choice(WHITESPACE)}
    source = _source(r)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        try:
            grammar = gs.Grammar.from_json_schema(source, **options)
        except EXPECTED:
            return
    matcher = gs.Matcher(grammar, max_state_size=20_000)
    try:
        forced = matcher.forced_bytes()
        assert matcher.fork().accept_bytes(forced), "forced bytes refused"
        matcher.accept_bytes(r.raw(16))
        matcher.accept_bytes(b'{"a": [1, "x", null, true]}')
    except gs.GrammarTooComplexError:
        pass
