"""Emptiness is only claimed when proved, and enum/const values are checked exactly.

A table in the style of the JSON-Schema-Test-Suite (schema, instances): jsonschema (format checker
on) is the oracle for every instance. For each schema the converter either compiles it without a
warning, and then the grammar accepts exactly the valid instances (in both property orders), or
says that no value satisfies it, and then no instance is valid, or reports it as unsupported
(SchemaError, not an emptiness claim). ``MUST_COMPILE`` lists the schemas that used to be called
unsatisfiable (issue #19) and the shapes around them."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

import gbnf_sampler as gs
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf
from schema_helpers import accepts

EMPTY = "no JSON value satisfies the schema"

OBJ_BAR_FOO = {"bar": "quux", "foo": "baz"}
# (name, schema, instances)
CASES: list[tuple[str, Any, list[Any]]] = [
    (
        "enum object, not (bar integer and foo string)",
        {
            "allOf": [
                {"enum": [OBJ_BAR_FOO]},
                {
                    "not": {
                        "allOf": [
                            {"properties": {"bar": {"type": "integer"}}, "required": ["bar"]},
                            {"properties": {"foo": {"type": "string"}}, "required": ["foo"]},
                        ]
                    }
                },
            ]
        },
        [OBJ_BAR_FOO, {"bar": 1, "foo": "baz"}, {"foo": "baz"}, "quux"],
    ),
    (
        "enum object under not not anyOf",
        {
            "allOf": [
                {"enum": [{"bar": 2}, {"bar": "x"}]},
                {"not": {"not": {"anyOf": [{"properties": {"bar": {"type": "integer"}}}]}}},
            ]
        },
        [{"bar": 2}, {"bar": "x"}, {"bar": 3}],
    ),
    (
        "const object with patternProperties and not const",
        {
            "patternProperties": {"^f": {"type": "string"}},
            "not": {"const": {"foo": 1}},
            "const": {"foo": "x"},
        },
        [{"foo": "x"}, {"foo": 1}, {"foo": "y"}],
    ),
    (
        "const object against patternProperties it breaks",
        {"patternProperties": {"^f": {"type": "integer"}}, "const": {"foo": "x"}},
        [{"foo": "x"}, {"foo": 1}],
    ),
    (
        "enum of numbers with multipleOf and not",
        {"enum": [1, 2, 3, 4.5, 6], "multipleOf": 1.5, "not": {"minimum": 5}},
        [1, 3, 4.5, 6, 1.5],
    ),
    (
        "enum with if/then/else",
        {"enum": ["a", "bb", "ccc", 1], "if": {"type": "string"}, "then": {"maxLength": 2}},
        ["a", "bb", "ccc", 1],
    ),
    (
        "enum with oneOf branches that overlap",
        {
            "enum": [1, 2, 3, "x"],
            "oneOf": [{"type": "integer"}, {"minimum": 2}],
        },
        [1, 2, 3, "x"],
    ),
    (
        "const array with contains and uniqueItems",
        {
            "enum": [[1, 2], [1, 1], ["a"], []],
            "contains": {"type": "integer"},
            "uniqueItems": True,
        },
        [[1, 2], [1, 1], ["a"], []],
    ),
    (
        "enum object with dependencies and propertyNames",
        {
            "$schema": "http://json-schema.org/draft-07/schema#",  # dependencies: draft 7
            "enum": [{"a": 1}, {"a": 1, "b": 2}, {"bb": 1}],
            "dependencies": {"a": ["b"]},
            "propertyNames": {"maxLength": 1},
        },
        [{"a": 1}, {"a": 1, "b": 2}, {"bb": 1}],
    ),
    (
        "enum under a $ref with siblings",
        {
            "$defs": {"e": {"enum": ["red", "green", 3]}},
            "allOf": [{"$ref": "#/$defs/e"}, {"type": "string"}],
        },
        ["red", "green", 3, "blue"],
    ),
    (
        "enum values with a format",
        {"enum": ["2020-01-31", "2020-02-30", "x"], "format": "date"},
        ["2020-01-31", "2020-02-30", "x"],
    ),
    (
        "enum values with a pattern",
        {"enum": ["ab", "ba", 1], "pattern": "^a"},
        ["ab", "ba", 1],
    ),
    (
        "required property that must not exist",
        {"required": ["a"], "properties": {"a": False}, "type": "object"},
        [{"a": 1}, {}],
    ),
    (
        "required property forbidden by propertyNames",
        {"type": "object", "required": ["abc"], "propertyNames": {"maxLength": 2}},
        [{"abc": 1}, {}],
    ),
    ("type conflict", {"allOf": [{"type": "string"}, {"type": "integer"}]}, ["a", 1]),
    ("empty enum intersection", {"allOf": [{"enum": [1, 2]}, {"enum": [3]}]}, [1, 3]),
    ("minLength above maxLength", {"type": "string", "minLength": 3, "maxLength": 2}, ["ab"]),
    ("not true", {"not": {}}, [1, "a", None]),
    ("integer range empty", {"type": "integer", "minimum": 1.5, "maximum": 1.9}, [1, 2]),
    (
        "maxProperties below required",
        {"type": "object", "required": ["a", "b"], "maxProperties": 1},
        [{"a": 1, "b": 2}, {"a": 1}],
    ),
    (
        "items false with minItems",
        {"type": "array", "items": False, "minItems": 1},
        [[], [1]],
    ),
    ("anyOf of empty branches", {"anyOf": [{"not": {}}, {"enum": []}]}, [1, None]),
    (
        "oneOf of identical types",
        {"oneOf": [{"type": "string"}, {"type": "string"}]},
        ["a", 1],
    ),
    (
        "if/then/else that leaves nothing",
        {"type": "integer", "if": {"minimum": 0}, "then": {"maximum": -1}, "else": {"minimum": 0}},
        [0, -1, 5],
    ),
    (
        "not of an enum of strings",
        {"type": "string", "enum": ["a", "b"], "not": {"enum": ["a", "b"]}},
        ["a", "b", "c"],
    ),
    (
        "satisfiable through one anyOf branch",
        {"anyOf": [{"type": "string", "minLength": 5, "maxLength": 1}, {"const": None}]},
        [None, "abcdef"],
    ),
    (
        "two long enums that overlap, and numbers equal as JSON",
        {
            "allOf": [
                {"enum": [f"v{i}" for i in range(300)] + [1, 2.5]},
                {"enum": [f"v{i}" for i in range(150, 400)] + [1.0, 2.5, "w"]},
            ]
        },
        ["v0", "v149", "v150", "v299", "v300", 1, 1.0, 2.5, "w", None],
    ),
]

MUST_COMPILE = {
    "enum object, not (bar integer and foo string)",
    "enum object under not not anyOf",
    "const object with patternProperties and not const",
    "enum of numbers with multipleOf and not",
    "enum with if/then/else",
    "enum with oneOf branches that overlap",
    "const array with contains and uniqueItems",
    "enum object with dependencies and propertyNames",
    "enum under a $ref with siblings",
    "enum values with a format",
    "enum values with a pattern",
    "satisfiable through one anyOf branch",
    "two long enums that overlap, and numbers equal as JSON",
}


def valid(schema: Any, instance: Any) -> bool:
    cls = jsonschema.validators.validator_for(schema)
    return bool(cls(schema, format_checker=cls.FORMAT_CHECKER).is_valid(instance))


@pytest.mark.parametrize(("name", "schema", "instances"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("order", ["schema", "any"])
def test_emptiness_claims_and_enum_values(
    name: str, schema: Any, instances: list[Any], order: str
) -> None:
    verdicts = [valid(schema, x) for x in instances]
    try:
        text = schema_to_gbnf(schema, property_order=order)
    except gs.SchemaError as err:
        assert name not in MUST_COMPILE, err
        if err.message == EMPTY:
            assert not any(verdicts), f"{name}: called unsatisfiable, but an instance is valid"
        return
    grammar = gs.Grammar.from_gbnf(text)
    for instance, ok in zip(instances, verdicts, strict=True):
        assert accepts(grammar, json.dumps(instance)) == ok, (name, instance, ok)


def test_the_issue_examples_accept_their_instances() -> None:
    for name, schema, instances in CASES[:3]:
        grammar = gs.Grammar.from_json_schema(schema)
        assert accepts(grammar, json.dumps(instances[0])), name


def test_unsatisfiable_cases_are_reported_as_such() -> None:
    reported = []
    for name, schema, instances in CASES:
        try:
            schema_to_gbnf(schema)
        except gs.SchemaError as err:
            if err.message == EMPTY:
                reported.append(name)
                assert not any(valid(schema, x) for x in instances)
    assert "type conflict" in reported
    assert "not true" in reported
    assert "required property that must not exist" in reported


def test_undecidable_enum_value_is_reported_not_dropped() -> None:
    # "\u0661" is a digit to Python's re, not to ECMA-262: which reading is right is not ours to
    # guess, so the value is neither kept silently nor dropped.
    schema = {"enum": ["\u0661", "1"], "pattern": "^\\d$"}
    with pytest.raises(gs.SchemaError) as err:
        schema_to_gbnf(schema)
    assert "cannot decide" in err.value.message
    with pytest.warns(SchemaWarning):
        text = schema_to_gbnf(schema, strict=False)
    assert accepts(text, '"1"')
