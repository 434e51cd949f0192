"""oneOf made exact, ``not`` and ``if``/``then``/``else`` through negation: the grammar accepts
exactly the instances ``jsonschema`` validates (tables checked against jsonschema first)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf
from schema_helpers import accepts
from strategies import sentences
from test_json_schema import assert_exact_on_table, is_valid

CASES: dict[str, tuple[Any, list[Any], list[Any]]] = {
    "one-of-required-untyped": (
        {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        [{"a": 1}, {"b": 1}, {"a": 1, "c": 2}],
        [{"a": 1, "b": 2}, {}, "x", 1, None, [1]],
    ),
    "one-of-arrays-of-disjoint-items": (
        {
            "oneOf": [
                {"type": "boolean"},
                {"type": "array", "items": {"enum": ["top", "left"]}},
                {"type": "array", "items": {"enum": ["vertical", "horizontal"]}},
            ]
        },
        [True, ["top"], ["left", "top"], ["vertical"]],
        [[], ["top", "vertical"], ["x"], "top"],
    ),
    "one-of-string-and-pattern": (
        {"oneOf": [{"type": "string"}, {"type": "string", "pattern": "^\\$\\{"}]},
        ["abc", "", "x${"],
        ["${x}", "${", 1],
    ),
    "one-of-closed-objects": (
        {
            "oneOf": [
                {"type": "object", "additionalProperties": False, "properties": {"a": {}}},
                {"type": "object", "additionalProperties": False, "properties": {"b": {}}},
            ]
        },
        [{"a": 1}, {"b": [2]}],
        [{}, {"a": 1, "b": 1}, {"c": 1}],
    ),
    "one-of-number-ranges": (
        {"oneOf": [{"type": "number", "minimum": 0}, {"type": "number", "maximum": 10}]},
        [-5, 11, 10.5, -0.5],
        [5, 0, 10, 2.5, "1"],
    ),
    "one-of-enum-and-length": (
        {"oneOf": [{"enum": ["a", "bb", 3]}, {"type": "string", "minLength": 2}]},
        ["a", "ccc", 3],
        ["bb", "", 4, None],
    ),
    "one-of-tagged-untyped": (
        {
            "oneOf": [
                {"properties": {"k": {"const": "a"}}, "required": ["k"]},
                {"properties": {"k": {"const": "b"}}, "required": ["k"]},
            ]
        },
        [{"k": "a"}, {"k": "b", "x": 1}],
        [{"k": "c"}, {}, "x", 1],
    ),
    "one-of-tag-optional-in-other": (
        {
            "oneOf": [
                {"type": "object", "properties": {"k": {"enum": ["a"]}}, "required": ["k"]},
                {"type": "object", "properties": {"k": {"enum": ["b"]}, "v": {}}},
            ]
        },
        [{"k": "a"}, {"k": "b"}, {"v": 1}, {}],
        [{"k": "c"}],
    ),
    "one-of-kind-taken-twice": (
        {"oneOf": [{"type": ["string", "integer"]}, {"type": "string"}]},
        [1, -3],
        ["x", None, 1.5],
    ),
    "one-of-siblings-closed": (
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
        },
        [{"a": 1}, {"b": 2}],
        [{"a": 1, "b": 2}, {}, {"a": "1"}],
    ),
    "one-of-arrays-by-items": (
        {
            "oneOf": [
                {"type": "array", "items": {"type": "integer"}, "minItems": 1},
                {"type": "array", "items": {"type": "string"}, "minItems": 1},
            ]
        },
        [[1, 2], ["a"]],
        [[], [1, "a"], [None]],
    ),
    "one-of-nested-one-of": (
        {
            "oneOf": [
                {"type": "object", "required": ["a"]},
                {"type": "object", "oneOf": [{"required": ["b"]}, {"required": ["c"]}]},
            ]
        },
        [{"a": 1}, {"b": 1}, {"c": 1}, {"a": 1, "b": 1, "c": 1}],
        [{"a": 1, "b": 1}, {}, {"b": 1, "c": 1}, 1],
    ),
    "one-of-items-overlap": (
        {
            "oneOf": [
                {"type": "array", "items": {"type": "string"}},
                {"type": "array", "items": {"enum": ["a", "b"]}},
            ]
        },
        [["c"], ["a", "c"], ["c", "b"]],
        [[], ["a"], ["a", "b"], [1], ["a", 1]],
    ),
    "not-one-of-numbers": (
        {"type": "integer", "not": {"oneOf": [{"minimum": 3}, {"maximum": 5}]}},
        [3, 4, 5],
        [2, 6, -1],
    ),
    "not-one-of-patterns": (
        {"type": "string", "not": {"oneOf": [{"pattern": "^a"}, {"pattern": "b$"}]}},
        ["ab", "x", "", "axb"],
        ["a", "b", "ax", "xb"],
    ),
    "not-items": (
        {"type": "array", "not": {"items": {"type": "string"}}},
        [[1], ["a", None], [["a"]]],
        [[], ["a", "b"]],
    ),
    "not-contains": (
        {"type": "array", "not": {"contains": {"type": "string"}}},
        [[], [1, None], [["a"]]],
        [["a"], [1, "b"]],
    ),
    "not-closed-object": (
        {"type": "object", "not": {"properties": {"a": {}}, "additionalProperties": False}},
        [{"b": 1}, {"a": 1, "b": 2}, {"c": None}],
        [{}, {"a": 1}],
    ),
    "not-additional-schema": (
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {}},
            "not": {"properties": {"a": {}}, "additionalProperties": {"type": "string"}},
        },
        [{"b": 1}, {"a": "x", "b": []}, {"c": 1}, {"a": "x", "b": "y", "c": None}],
        [{}, {"a": "x"}, {"b": "s"}, {"a": "x", "c": "y"}],
    ),
    "not-closed-object-enum": (
        {
            "anyOf": [
                {"enum": [{"a": 1}, {"b": 1}, {"a": 1, "c": 2}, 3]},
                {"type": "object", "required": ["d"]},
            ],
            "not": {"properties": {"a": {}}, "additionalProperties": False},
        },
        [{"b": 1}, {"a": 1, "c": 2}, {"d": 1}],
        [{"a": 1}, {}, 3, {"a": 2}],
    ),
    "one-of-open-and-closed-objects": (
        {
            "oneOf": [
                {"type": "object", "required": ["a"]},
                {"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": False},
            ]
        },
        [{"a": 1, "c": 2}, {"b": 1}, {}],
        [{"a": 1}, {"a": 1, "b": 2}, {"c": 1}],
    ),
    "one-of-closed-items-deep": (
        {
            "oneOf": [
                {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}},
                {
                    "type": "object",
                    "properties": {
                        "a": {},
                        "b": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"x": {}},
                                "additionalProperties": False,
                            },
                        },
                    },
                },
            ]
        },
        [{"a": "s", "b": [{"y": 1}]}, {"a": 1}, {"b": [{"x": 1}]}, {"a": "s", "b": 1}],
        [{"a": "s"}, {"a": "s", "b": [{"x": 1}]}, {"b": [{"y": 1}]}],
    ),
    "one-of-ten-keys": (  # one option per negated key: 2^9 combinations otherwise
        {
            "oneOf": [
                {
                    "type": "object",
                    "required": [f"k{i}"],
                    "properties": {
                        f"k{i}": {
                            "type": "object",
                            "properties": {"x": {"type": "string"}},
                            "additionalProperties": False,
                        }
                    },
                }
                for i in range(10)
            ]
        },
        [{"k0": {"x": "1"}}, {"k3": {}, "k5": {"y": 1}}, {"k9": {}, "z": 1}],
        [{"k0": {}, "k1": {}}, {}, {"k2": {"y": 1}}, {"k4": {"x": 1}}],
    ),
    "not-integer": (
        {"type": "number", "not": {"type": "integer"}},
        [1.5, -0.25, 1e-05, 10.01, -2.5e-07],
        [1, 0, -3, 1.0, 100],
    ),
    "not-integer-bounded": (
        {"type": "number", "minimum": 0, "maximum": 10, "not": {"type": "integer"}},
        [1.5, 9.99, 0.5, 1e-05],
        [1, 10, 10.5, -0.5, 0],
    ),
    "one-of-integer-and-number": (
        {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]},
        [-3, 1.5, 0.25],
        [3, 0, -1.5, "1"],
    ),
    "not-object-keywords-untyped": (
        {"not": {"required": ["a"]}},
        [{}, {"b": 1}],
        [{"a": 1}, "x", 1, None, []],
    ),
    "not-pattern": (
        {"type": "string", "not": {"pattern": "^x"}},
        ["ab", "", "ax"],
        ["xa", "x"],
    ),
    "not-pattern-python-reading": (
        {"type": "string", "not": {"pattern": "^\\d+$"}},
        ["a", "1a", ""],
        ["12", "\u0663", "12\n"],
    ),
    "not-minimum": (
        {"type": "number", "not": {"minimum": 3}},
        [2, -1, 2.5],
        [3, 4, 3.5],
    ),
    "not-counts": (
        {"type": "array", "not": {"minItems": 2}},
        [[], [1]],
        [[1, 2], [1, 2, 3]],
    ),
    "if-string-length": (
        {
            "type": "string",
            "if": {"minLength": 3},
            "then": {"pattern": "^a"},
            "else": {"maxLength": 1},
        },
        ["abc", "a", "", "aaaa"],
        ["bcd", "ab", "xy"],
    ),
    "if-number-range": (
        {"type": "integer", "if": {"maximum": 9}, "then": {"minimum": 0}, "else": {"maximum": 99}},
        [0, 9, 10, 99],
        [-1, 100],
    ),
    # Formats whose automaton is what jsonschema's checker accepts in every draft take part in
    # the proofs and negations.
    "one-of-date-time-and-date-pattern": (
        {
            "oneOf": [
                {"type": "string", "format": "date-time"},
                {
                    "type": "string",
                    "pattern": "^(19|20)\\d\\d-(0?[1-9]|1[012])-(0?[1-9]|[12]\\d|3[01])$",
                },
            ]
        },
        ["2020-1-5", "2020-01-05", "1999-12-31T23:59:59+01:00"],
        ["1899-01-01", "2020-01-05T00:00:00", "x"],
    ),
    "not-date-time": (
        {"type": "string", "not": {"format": "date-time"}},
        ["x", "2024-01-01", "2024-01-01T10:00:00"],
        ["2024-01-01T10:00:00Z", "1999-12-31t23:59:59.5+01:00"],
    ),
    "not-enum-and-pattern": (
        {"type": "string", "not": {"enum": ["ab", "b", "c"], "pattern": "b"}},
        ["x", "c", ""],
        ["ab", "b"],
    ),
    "not-excluded-strings": (
        {"not": {"anyOf": [{"type": "number"}, {"type": "string", "not": {"enum": ["a", "b"]}}]}},
        ["a", "b", None, True, [], {}],
        ["c", "", 1, 2.5],
    ),
    # Numbers outside an enum: the open ranges around and between its values.
    "integer-not-zero": (
        {"type": "integer", "not": {"enum": [0]}},
        [1, -1, 7, 10**20],
        [0, -0, 0.0, 0.5, "1", None],
    ),
    "number-not-enum": (
        {"type": "number", "not": {"enum": [1, 2.5, -3]}},
        [0, 1.5, 2.4, 2.51, -3.5, -2, 10],
        [1, 1.0, 2.5, -3, "2"],
    ),
    "not-numbers-and-strings": (
        {"not": {"enum": [0, "a", 2]}},
        [1, 3, -1, 0.5, "b", None, []],
        [0, 2, 2.0, "a"],
    ),
    # Unknown keys are annotations: schemas that differ only in them merge without conflict.
    "all-of-unknown-keys": (
        {"allOf": [{"x-note": "a", "type": "string"}, {"x-note": "b", "minLength": 2}]},
        ["ab", "abc"],
        ["a", "", 12],
    ),
    "one-of-closed-objects-with-notes": (
        {
            "x-note": "outer",
            "oneOf": [
                {"type": "string"},
                {
                    "x-note": "inner",
                    "type": "object",
                    "properties": {"main": {"type": "string"}},
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "required": ["file"],
                    "properties": {"file": {"type": "string"}},
                    "additionalProperties": False,
                },
            ],
        },
        ["s", {}, {"main": "m"}, {"file": "f"}],
        [{"file": "f", "main": "m"}, {"other": 1}, {"main": 1}, 1],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_logic_cases(name: str) -> None:
    assert_exact_on_table(*CASES[name])


OVERLAPPING = {  # not uniqueItems has no grammar
    "oneOf": [
        {"type": "array", "items": {"type": "integer"}},
        {"type": "array", "uniqueItems": True},
    ]
}


def test_many_conditionals_on_one_property_stay_exact() -> None:
    # 24 conditionals on one property merge into one flat allOf: each enum value is checked
    # against it, not given up past a nesting depth ("cannot decide", relaxed). Not in CASES:
    # its grammar is too large for the sampled-sentence tests' time.
    n = 24
    schema = {
        "type": "object",
        "properties": {"type": {"type": "string", "enum": [f"k{i}" for i in range(n)]}},
        "required": ["type"],
        "allOf": [
            {
                "if": {"properties": {"type": {"const": f"k{i}"}}},
                "then": {
                    "properties": {"type": True, f"p{i}": {"type": "integer"}},
                    "additionalProperties": False,
                },
            }
            for i in range(n)
        ],
    }
    valid = [{"type": "k0"}, {"type": "k3", "p3": 1}, {"type": "k23", "p23": -2}]
    invalid = [{"type": "k3", "p4": 1}, {"type": "k3", "p3": "x"}, {"type": "zz"}, {"p0": 1}]
    assert_exact_on_table(schema, valid, invalid)


def test_formats_of_some_drafts_prove_nothing() -> None:
    # Draft 4's checker does not assert "date": there a date-time string matches both branches
    # and the oneOf rejects it. The converter does not read $schema, so "date" proves no
    # branches apart, whatever the draft.
    schema = {
        "oneOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}]
    }
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", **schema}
    assert not is_valid(draft4, "2024-01-01T10:00:00Z")
    assert is_valid(schema, "2024-01-01T10:00:00Z")
    with pytest.raises(gs.SchemaError, match="oneOf branches may overlap"):
        gs.Grammar.from_json_schema(draft4)


def test_undeclared_member_beside_property_counts_is_reported() -> None:
    """A negated additionalProperties met with minProperties: strict, an error at the object;
    relaxed, the object without it (accepts an object the schema rejects)."""
    schema = {
        "type": "object",
        "properties": {"a": {}},
        "minProperties": 1,
        "not": {"properties": {"a": {}}, "additionalProperties": False},
    }
    with pytest.raises(gs.SchemaError, match="undeclared member") as info:
        schema_to_gbnf(schema)
    assert info.value.path == ""
    with pytest.warns(SchemaWarning, match="undeclared member"):
        grammar = schema_to_gbnf(schema, strict=False)
    assert not is_valid(schema, {"a": 1})
    assert accepts(grammar, '{"a": 1}')
    assert accepts(grammar, '{"b": 1}')


def test_overlapping_one_of_is_an_error_when_strict() -> None:
    with pytest.raises(gs.SchemaError) as info:
        schema_to_gbnf({"properties": {"xs": OVERLAPPING}})
    assert info.value.path == "/properties/xs/oneOf"


def test_overlapping_one_of_relaxed_to_any_of() -> None:
    with pytest.warns(SchemaWarning) as record:
        grammar = schema_to_gbnf(OVERLAPPING, strict=False)
    assert any(str(w.message).startswith("/oneOf:") for w in record)
    assert accepts(grammar, "[1, 2]")  # matches both branches: the relaxed grammar accepts it
    assert accepts(grammar, "[1, 1]")
    assert not accepts(grammar, '{"a": 1}')


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_logic_sentences_validate(name: str, data: st.DataObject) -> None:
    schema = CASES[name][0]
    grammar = gs.Grammar.from_json_schema(schema)
    text = data.draw(sentences(grammar.rules, grammar.root)).decode("utf-8")
    assert is_valid(schema, json.loads(text)), text


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.sampled_from([2.5, -0.5, 10.5]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "k", "v"]), inner, max_size=3)
    ),
    max_leaves=5,
) | st.text("ax$1{", max_size=4)


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_VALUES)
def test_logic_random_values_sound(name: str, value: Any) -> None:
    """Accepted random values are valid (completeness is the tables' job: members of a valid
    value must come in the schema's order to be accepted)."""
    schema = CASES[name][0]
    grammar = gs.Grammar.from_json_schema(schema)
    if accepts(grammar, json.dumps(value)):
        assert is_valid(schema, value), json.dumps(value)
