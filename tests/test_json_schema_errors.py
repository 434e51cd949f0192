"""Unsupported or invalid schemas: SchemaError with the exact JSON pointer when strict, a
SchemaWarning and a relaxed grammar when ``strict=False``."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import gbnf_sampler as gs
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf
from schema_helpers import accepts

UNSUPPORTED: list[tuple[Any, str]] = [
    (
        {"type": "object", "properties": {"a": {"if": {"multipleOf": 3}, "then": {}}}},
        "/properties/a/if",
    ),
    ({"type": "array", "contains": {"type": "integer"}, "uniqueItems": True}, "/contains"),
    (
        {
            "type": "array",
            "items": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": 65535},  # could run out
                "uniqueItems": True,
            },
        },
        "/items/uniqueItems",
    ),
    (
        {"$defs": {"x": {"dependentRequired": {c: ["b"] for c in "acdefgh"}}}, "$ref": "#/$defs/x"},
        "/$defs/x/dependentRequired",
    ),
    ({"anyOf": [{"type": "string"}, {"not": {"multipleOf": 3}}]}, "/anyOf/1/not"),
    (
        {"type": "object", "properties": {"p~/q": {"type": "string", "pattern": "b(?=(?<=a)c)"}}},
        "/properties/p~0~1q/pattern",
    ),
    ({"type": "string", "pattern": "(a+)\\1"}, "/pattern"),
    ({"type": "string", "pattern": "x(?=\\by)"}, "/pattern"),
    ({"type": "string", "pattern": "[z-a]"}, "/pattern"),
    ({"type": "string", "pattern": "a(b"}, "/pattern"),
    ({"type": "integer", "multipleOf": 1009, "minimum": 0}, "/multipleOf"),  # 1,009 remainders
    (
        {
            "type": "object",
            "patternProperties": {f"^{c}": {"maxLength": i} for i, c in enumerate("abcde")},
        },
        "/patternProperties",
    ),
    ({"type": "string", "pattern": "(a|b)*a(a|b){12}", "maxLength": 99}, "/maxLength"),
    (
        {
            "$defs": {"a": {"type": "object", "allOf": [{"$ref": "#/$defs/a"}]}},
            "allOf": [{"$ref": "#/$defs/a"}],
        },
        "/$defs/a/allOf/0",
    ),
]


@pytest.mark.parametrize(("schema", "path"), UNSUPPORTED)
def test_unsupported_keyword_strict(schema: Any, path: str) -> None:
    with pytest.raises(gs.SchemaError) as info:
        schema_to_gbnf(schema)
    assert info.value.path == path
    assert info.value.message


@pytest.mark.parametrize(("schema", "path"), UNSUPPORTED)
def test_unsupported_keyword_relaxed(schema: Any, path: str) -> None:
    with pytest.warns(SchemaWarning) as record:
        text = schema_to_gbnf(schema, strict=False)
    assert any(str(w.message).startswith(path or "/") for w in record)
    gs.Grammar.from_gbnf(text)


def test_unique_items_over_too_many_values() -> None:
    items = {"enum": [[i] for i in range(11)]}  # containers: subset rules only
    with pytest.raises(gs.SchemaError) as info:
        schema_to_gbnf({"type": "array", "items": items, "uniqueItems": True})
    assert info.value.path == "/uniqueItems"
    grammar = schema_to_gbnf({"type": "array", "items": items, "uniqueItems": True, "maxItems": 2})
    assert accepts(grammar, "[[10], [3]]")
    assert not accepts(grammar, "[[3], [3]]")
    assert not accepts(grammar, "[[1], [2], [3]]")
    # Scalars are kept apart by the matcher, and refused once they have run out.
    eleven = {"type": "array", "items": {"enum": list(range(11))}, "uniqueItems": True}
    grammar = schema_to_gbnf(eleven, whitespace="compact")
    assert accepts(grammar, "[10,3,1]")
    assert not accepts(grammar, "[3,1,3]")
    every = "[" + ",".join(map(str, range(11)))
    assert accepts(grammar, every + "]")
    assert not gs.Matcher(gs.Grammar.from_gbnf(grammar)).accept_bytes(every.encode() + b",")


def test_relaxed_grammar_accepts_more() -> None:
    items = {"type": "integer", "minimum": 0, "maximum": 65535}
    schema = {"type": "array", "items": items, "uniqueItems": True}
    with pytest.warns(SchemaWarning):
        grammar = schema_to_gbnf(schema, strict=False)
    assert accepts(grammar, "[1, 1]")
    assert not accepts(grammar, '["a"]')


def test_relaxed_pattern_properties_keep_their_keys() -> None:
    """Dropping a patternProperties that cannot be compiled must not leave its keys to
    ``additionalProperties: false``: that made ioBroker's manifest "unsatisfiable"."""
    schema = {
        "type": "object",
        "required": ["x"],
        "patternProperties": {"a[ab]{15}$": {"type": "string"}},  # 2^16 DFA states
        "additionalProperties": False,
    }
    for options in ({}, {"additional_properties": False}):
        with pytest.warns(SchemaWarning, match="/patternProperties"):
            grammar = schema_to_gbnf(schema, strict=False, **options)
        assert accepts(grammar, '{"x": 1}')
        assert accepts(grammar, '{"x": 1, "' + "a" * 16 + '": "s"}')
        assert not accepts(grammar, "{}")


INVALID: list[tuple[Any, str]] = [
    ({"$ref": "#/$defs/missing"}, "/$ref"),
    ({"properties": {"a": {"$ref": "other.json#/x"}}}, "/properties/a/$ref"),
    ({"type": "string", "minLength": -1}, "/minLength"),
    ({"allOf": {"type": "string"}}, "/allOf"),
    ({"anyOf": [{"type": "string"}, 3]}, "/anyOf/1"),
    ({"type": "string", "maxLength": 1, "minLength": 2}, ""),
    ({"type": "object", "required": ["a"], "additionalProperties": False}, ""),
    ({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}, "/$defs/a/allOf/0"),
    ({"type": "integer", "minimum": 5, "maximum": 4}, ""),
    (False, ""),
]


@pytest.mark.parametrize(("schema", "path"), INVALID)
def test_invalid_schema(schema: Any, path: str) -> None:
    with pytest.raises(gs.SchemaError) as info:
        schema_to_gbnf(schema)
    assert info.value.path == path


def test_invalid_json_text() -> None:
    with pytest.raises(gs.SchemaError) as info:
        schema_to_gbnf('{"type": ')
    assert info.value.path == ""


def test_schema_error_pickles() -> None:
    with pytest.raises(gs.SchemaError) as info:
        schema_to_gbnf({"type": "array", "contains": {}, "uniqueItems": True})
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.path, copy.message) == ("/contains", info.value.message)


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="whitespace"):
        schema_to_gbnf({}, whitespace="wide")
    with pytest.raises(TypeError):
        schema_to_gbnf(42)


def test_reference_to_a_non_schema_inside_one_of() -> None:
    schema = {"$defs": {"l": [1, 2]}, "oneOf": [{"$ref": "#/$defs/l"}, {"type": "string"}]}
    with pytest.raises(gs.SchemaError):
        schema_to_gbnf(schema)
    with pytest.warns(SchemaWarning):
        grammar = schema_to_gbnf(schema, strict=False)
    assert accepts(grammar, "[1]")


def test_unresolvable_reference_relaxed_to_any_value() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.com/x.json"}}}
    with pytest.warns(SchemaWarning) as record:
        grammar = schema_to_gbnf(schema, strict=False)
    assert any(str(w.message).startswith("/properties/a/$ref") for w in record)
    assert accepts(grammar, '{"a": [true]}')
    assert not accepts(grammar, "[]")
