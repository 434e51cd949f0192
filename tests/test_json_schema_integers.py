"""Integers in every spelling the README promises: plain digits, ``-0`` for zero, and (draft 6
on, or any ``type: number`` with an integral ``multipleOf``) a zero fraction and a zero exponent
(``1.0``, ``3.00E+0``). jsonschema is the oracle, with the draft the schema's ``$schema`` names:
a spelling is accepted exactly when it is valid, except the exponent forms the README lists as
refused (``1e2``, ``15e-1``), which must be refused and valid only by the oracle's reading."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs

DRAFT4 = "http://json-schema.org/draft-04/schema#"
DRAFT7 = "http://json-schema.org/draft-07/schema#"

# A spelling whose exponent is not zero: refused by design (documented), whatever its value.
NONZERO_EXPONENT = re.compile(r".*[eE][+-]?0*[1-9][0-9]*")

SCHEMAS: list[dict[str, Any]] = [
    {"type": "integer"},
    {"type": "integer", "minimum": 0, "maximum": 100},
    {"type": "integer", "minimum": -5},
    {"type": "integer", "exclusiveMinimum": 0},
    {"type": "integer", "maximum": -1},
    {"type": "integer", "multipleOf": 3},
    {"type": "integer", "multipleOf": 5, "minimum": 0, "maximum": 20},
    {"type": "integer", "multipleOf": 5, "minimum": 1, "maximum": 20},
    {"type": "number", "multipleOf": 2},
    {"type": ["integer", "string"]},
    {"$schema": DRAFT7, "type": "integer", "minimum": 0},
    {"$schema": DRAFT4, "type": "integer"},
    {"$schema": DRAFT4, "type": "integer", "multipleOf": 2},
    {"$schema": DRAFT4, "type": "integer", "multipleOf": 5, "minimum": -10, "maximum": 10},
    {"$schema": DRAFT4, "type": "number", "multipleOf": 2},
]

SPELLINGS = [
    "0", "-0", "1", "-1", "1.0", "-1.00", "1e0", "1.0E+00", "1E-0", "0.0", "-0.0", "0e0",
    "-0.0e+000", "3", "3.0", "5", "5.000", "-5.0", "6", "6.0", "10", "10.0e0", "15", "20",
    "20.0", "21", "99", "100", "100.0", "101", "1.5", "1.05", "1e2", "15e-1", "1.", "01",
    "-", "+1", "1.0e", "1.0e+", ".0",
]  # fmt: skip


def accepts(grammar: gs.Grammar, text: str) -> bool:
    m = gs.Matcher(grammar)
    return bool(m.accept_bytes(text.encode())) and bool(m.can_terminate())


def valid(schema: dict[str, Any], text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return bool(jsonschema.validators.validator_for(schema)(schema).is_valid(value))


def expected(schema: dict[str, Any], text: str) -> bool:
    return valid(schema, text) and not NONZERO_EXPONENT.fullmatch(text)


@pytest.mark.parametrize("schema", SCHEMAS, ids=json.dumps)
def test_spellings_follow_jsonschema(schema: dict[str, Any]) -> None:
    grammar = gs.Grammar.from_json_schema(schema)
    wrong = [t for t in SPELLINGS if accepts(grammar, t) != expected(schema, t)]
    assert wrong == []


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ({"type": "integer"}, "1.0"),
        ({"type": "integer"}, "-0"),
        ({"type": "integer", "minimum": 0, "maximum": 3}, "-0.0"),
        ({"type": "integer", "multipleOf": 4}, "8.00"),
        ({"$schema": DRAFT4, "type": "number", "multipleOf": 2}, "4.0"),
    ],
)
def test_valid_integer_spellings_accepted(schema: dict[str, Any], text: str) -> None:
    assert valid(schema, text)
    assert accepts(gs.Grammar.from_json_schema(schema), text)


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ({"$schema": DRAFT4, "type": "integer"}, "1.0"),
        ({"$schema": DRAFT4, "type": "integer", "multipleOf": 2}, "4.0"),
        ({"type": "integer", "minimum": 1}, "-0"),
        ({"type": "integer"}, "1.01"),
    ],
)
def test_invalid_integer_spellings_refused(schema: dict[str, Any], text: str) -> None:
    assert not valid(schema, text)
    assert not accepts(gs.Grammar.from_json_schema(schema), text)


@settings(max_examples=60, deadline=None)
@given(
    lo=st.none() | st.integers(-30, 30),
    width=st.integers(0, 40),
    value=st.integers(-80, 80),
    zeros=st.integers(0, 3),
    exponent=st.sampled_from(["", "e0", "E+00", "e-0"]),
    draft=st.sampled_from([None, DRAFT4]),
)
def test_ranges_with_zero_tails(
    lo: int | None, width: int, value: int, zeros: int, exponent: str, draft: str | None
) -> None:
    schema: dict[str, Any] = {"type": "integer"}
    if lo is not None:
        schema |= {"minimum": lo, "maximum": lo + width}
    if draft is not None:
        schema["$schema"] = draft
    text = str(value) + ("." + "0" * zeros if zeros else "") + exponent
    assert accepts(gs.Grammar.from_json_schema(schema), text) == valid(schema, text)


def test_distinct_integer_items_have_no_fraction_dead_end() -> None:
    # With 1 taken, "1." could only become 1 again: inside items kept distinct at run time,
    # integers are written in plain digits, so the "." is refused, not a dead end.
    schema = {"type": "array", "uniqueItems": True, "items": {"type": "integer", "minimum": 1}}
    grammar = gs.Grammar.from_json_schema(schema)
    assert not gs.Matcher(grammar).accept_bytes(b"[1,1.")
    assert accepts(grammar, "[1,2,10]")
    assert not accepts(grammar, "[1,1]")
    # Outside such arrays the same items take a zero fraction.
    plain = gs.Grammar.from_json_schema({"type": "array", "items": schema["items"]})
    assert accepts(plain, "[1,1.0,2.00]")


@pytest.mark.parametrize("distinct_first", [False, True])
def test_shared_integer_schema_inside_and_outside_distinct_items(distinct_first: bool) -> None:
    # One $ref'd integer used by a plain member and by items kept distinct: each use gets its
    # own spelling, whichever the converter meets first.
    members = [
        ("a", {"$ref": "#/$defs/n"}),
        ("b", {"type": "array", "uniqueItems": True, "items": {"$ref": "#/$defs/n"}}),
    ]
    schema = {
        "$defs": {"n": {"type": "integer", "minimum": 1}},
        "type": "object",
        "properties": dict(reversed(members) if distinct_first else members),
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    grammar = gs.Grammar.from_json_schema(schema, whitespace="compact", property_order="any")
    assert accepts(grammar, '{"a":1.0,"b":[1,2]}')
    assert not accepts(grammar, '{"a":1,"b":[1,2.0]}')
