"""JSON Schema -> grammar, keyword by keyword: the grammar accepts exactly the instances
``jsonschema`` validates (each instance serialized in every whitespace style the mode allows)."""

from __future__ import annotations

import json
import warnings
from typing import Any

import jsonschema
import pytest

import gbnf_sampler as gs
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf
from schema_helpers import accepts, assert_decides, dumps_styles

DRAFT7 = "http://json-schema.org/draft-07/schema#"
DRAFT4 = "http://json-schema.org/draft-04/schema#"


def is_valid(schema: Any, instance: Any) -> bool:
    cls = jsonschema.validators.validator_for(schema)
    return bool(cls(schema, format_checker=cls.FORMAT_CHECKER).is_valid(instance))


def assert_exact_on_table(schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    """The table agrees with jsonschema, the schema compiles without a SchemaWarning, and its
    grammar decides every row as the table does."""
    for instance in valid:
        assert is_valid(schema, instance), f"table error: {instance!r} should be valid"
    for instance in invalid:
        assert not is_valid(schema, instance), f"table error: {instance!r} should be invalid"
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchemaWarning)
        grammar = gs.Grammar.from_json_schema(schema)
    assert_decides(grammar, valid, invalid)


# (schema, valid instances, invalid instances); instances list properties in schema order.
CASES: dict[str, tuple[Any, list[Any], list[Any]]] = {
    "type-null": ({"type": "null"}, [None], [0, False, "null", []]),
    "type-boolean": ({"type": "boolean"}, [True, False], [None, 1, "true"]),
    "type-integer": ({"type": "integer"}, [0, -7, 123456789012345], [1.5, "1", None]),
    "type-number": ({"type": "number"}, [0, -1.5, 2.5e-8, 1e300, 7], ["1", None, [1]]),
    "type-string": ({"type": "string"}, ["", 'a"b\\c', "é\n\u2028", "😀"], [1, None]),
    "type-list": ({"type": ["string", "null"]}, ["x", None], [1, True, {}]),
    "nullable": ({"type": ["integer", "null"]}, [None, 3], ["3", 1.5]),
    "openapi-nullable-ignored": ({"type": "integer", "nullable": True}, [3], [None]),
    "no-type": ({}, [None, 1, "x", [1, {"a": []}], {"b": {}}], []),
    "enum": (
        {"enum": ["red", 1, None, [1, 2], {"a": True}]},
        ["red", 1, None, [1, 2], {"a": True}],
        ["blue", 2, [2, 1], {"a": False}],
    ),
    "enum-typed": ({"type": "string", "enum": ["a", 1, "b"]}, ["a", "b"], [1, "c"]),
    "const": ({"const": {"x": [1, "é"]}}, [{"x": [1, "é"]}], [{"x": [1]}, {"y": [1, "é"]}]),
    "const-string": ({"const": 'a"\n'}, ['a"\n'], ["a", 'a"\n ']),
    "min-max-length": (
        {"type": "string", "minLength": 2, "maxLength": 4},
        ["ab", "abcd", "é😀", "\n\t"],
        ["a", "abcde", ""],
    ),
    "pattern-unanchored": (
        {"type": "string", "pattern": "[0-9]{3}"},
        ["123", "ab123cd", "x9999"],
        ["12", "ab12c3"],
    ),
    "pattern-anchored": (
        {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$"},
        ["abc", "a-b-c"],
        ["", "a-", "-a", "Abc", "ab c"],
    ),
    "pattern-start-only": ({"type": "string", "pattern": "^ab"}, ["ab", "abc"], ["cab", "a"]),
    "pattern-alternation-anchors": (
        {"type": "string", "pattern": "^a|b$"},
        ["a", "axx", "xxb", "b"],
        ["xa", "bx"],
    ),
    "pattern-length": (
        {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
        ["a", "abc"],
        ["", "abcd", "A"],
    ),
    "pattern-length-automaton": (
        {"type": "string", "pattern": "^a+b+$", "minLength": 3, "maxLength": 4},
        ["aab", "abbb", "aaab"],
        ["ab", "aabbb", "ba"],
    ),
    "several-patterns": (
        {
            "type": "string",
            "allOf": [{"pattern": "a"}, {"pattern": "^[a-c]+$"}, {"format": "hostname"}],
        },
        ["a", "cab", "ba"],
        ["", "bc", "ax", "a.b"],
    ),
    "pattern-escapes": (
        {"type": "string", "pattern": "^\\d+\\.\\d\\s?\\w*$"},
        ["1.5", "12.0 ab_c", "3.3\t"],
        ["1.", "a.5", "1.5  "],
    ),
    "integer-range": (
        {"type": "integer", "minimum": -15, "maximum": 120},
        [-15, 0, 7, 99, 120],
        [-16, 121, 1000, -100],
    ),
    "integer-exclusive": (
        {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
        [1, 9],
        [0, 10, -1],
    ),
    "integer-min-only": ({"type": "integer", "minimum": 18}, [18, 19, 100, 123456], [17, 0, -18]),
    "integer-max-only": ({"type": "integer", "maximum": -3}, [-3, -10, -1000], [-2, 0, 5]),
    "integer-float-bounds": (
        {"type": "integer", "minimum": 1.5, "maximum": 4.5},
        [2, 3, 4],
        [1, 5],
    ),
    "integer-draft4-exclusive": (
        {"$schema": DRAFT4, "type": "integer", "minimum": 5, "exclusiveMinimum": True},
        [6, 7],
        [5, 4],
    ),
    "number-range": (
        {"type": "number", "minimum": -1.25, "maximum": 3.5},
        [-1.25, -1, 0, 0.001, 3.5, 2.75],
        [-1.26, 3.51, 4, -2],
    ),
    "number-exclusive": (
        {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        [0.5, 0.001, 0.999],
        [0, 1, -0.1, 1.01],
    ),
    "number-min-only": ({"type": "number", "minimum": 0.5}, [0.5, 0.75, 1, 100.125], [0.49, 0, -3]),
    "multiple-of-int": ({"type": "integer", "multipleOf": 7}, [0, 7, -14, 700], [1, 8, -13]),
    "multiple-of-int-range": (
        {"type": "integer", "multipleOf": 5, "minimum": 3, "maximum": 21},
        [5, 10, 20],
        [0, 3, 25, 7],
    ),
    # Ranges too wide to list (257 multiples here) or open on one side: the range's spellings
    # intersected with the remainder automaton.
    "multiple-of-int-wide-range": (
        {"type": "integer", "multipleOf": 16, "minimum": 0, "maximum": 4096},
        [0, 16, 2048, 4096],
        [4112, 17, -16, 8],
    ),
    "multiple-of-int-lower-bound": (
        {"type": "integer", "multipleOf": 7, "minimum": -5},
        [0, 7, 700014],
        [-7, 8, -14],
    ),
    "multiple-of-number-upper-bound": (
        {"type": "number", "multipleOf": 3, "maximum": 100},
        [99, -3, 0, 3.0, -300],
        [102, 100, 1.5, 4],
    ),
    "multiple-of-decimal": (
        {"type": "number", "multipleOf": 0.01},
        [1, 1.5, 2.25, -0.5],
        [1.005, 0.123],
    ),
    "format-date": (
        {"type": "string", "format": "date"},
        ["2024-02-29", "2023-12-31", "0001-01-01", "2000-02-29"],
        ["2023-02-29", "2023-04-31", "2023-13-01", "0000-01-01", "1900-02-29", "2023-1-01"],
    ),
    "format-time": (
        {"type": "string", "format": "time"},
        ["23:59:59Z", "00:00:00.123+05:30", "12:00:00z"],
        ["24:00:00Z", "12:00:00", "12:60:00Z", "12:00:00+24:00"],
    ),
    "format-date-time": (
        {"type": "string", "format": "date-time"},
        ["2024-01-15T10:20:30Z", "2024-01-15t10:20:30.5-01:00"],
        ["2024-01-15 10:20:30Z", "2024-01-32T10:20:30Z"],
    ),
    "format-ipv4": (
        {"type": "string", "format": "ipv4"},
        ["0.0.0.0", "192.168.1.255"],
        ["256.1.1.1", "01.1.1.1", "1.1.1"],
    ),
    "format-ipv6": (
        {"type": "string", "format": "ipv6"},
        ["::", "::1", "fe80::1:2", "2001:db8:0:0:0:0:2:1", "::ffff:1.2.3.4", "1:2:3:4:5:6:7:8"],
        ["1:2:3:4:5:6:7:8:9", ":::", "1::2::3", "12345::", "fe80::1%eth0"],
    ),
    "format-uuid": (
        {"type": "string", "format": "uuid"},
        ["123e4567-e89b-12d3-a456-426614174000", "ABCDEF01-2345-6789-abcd-ef0123456789"],
        ["123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g"],
    ),
    "format-email": ({"type": "string", "format": "email"}, ["a.b+c@example.com"], ["no-at-sign"]),
    "format-unknown-ignored": ({"type": "string", "format": "x-custom"}, ["anything"], [1]),
    "array-items": (
        {"type": "array", "items": {"type": "integer"}},
        [[], [1], [1, 2, 3]],
        [[1, "2"], [None], {}],
    ),
    "array-min-max": (
        {"type": "array", "minItems": 2, "maxItems": 3},
        [[1, 2], [1, "a", None]],
        [[], [1], [1, 2, 3, 4]],
    ),
    "array-large-bounds": (
        {"type": "array", "items": {"type": "boolean"}, "minItems": 3, "maxItems": 100000},
        [[True] * 3, [False] * 40],
        [[True] * 2],
    ),
    "prefix-items": (
        {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
        [[], ["a"], ["a", 1]],
        [[1], ["a", "b"], ["a", 1, 2]],
    ),
    "prefix-items-rest": (
        {
            "type": "array",
            "prefixItems": [{"type": "string"}],
            "items": {"type": "null"},
            "minItems": 2,
        },
        [["a", None], ["a", None, None]],
        [["a"], ["a", 1], [None, None]],
    ),
    "draft4-tuple": (
        {
            "$schema": DRAFT4,
            "type": "array",
            "items": [{"type": "boolean"}, {"type": "string"}],
            "additionalItems": {"type": "integer"},
        },
        [[], [True], [True, "x", 1, 2]],
        [["x"], [True, "x", "y"]],
    ),
    "object-properties": (
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}},
        [{}, {"a": 1}, {"b": "x"}, {"a": 1, "b": "x"}, {"a": 1, "zz": None}],
        [{"a": "1"}, {"b": 2}, {"a": 1, "b": None}, []],
    ),
    "object-required": (
        {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["b"]},
        [{"b": 1}, {"a": 1, "b": None}],
        [{}, {"a": 1}],
    ),
    "object-required-undeclared": (
        {"type": "object", "required": ["id"], "additionalProperties": {"type": "integer"}},
        [{"id": 3}, {"id": 3, "x": 4}],
        [{}, {"id": "3"}],
    ),
    "additional-false": (
        {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
        [{}, {"a": 1}],
        [{"b": 1}, {"a": 1, "b": 2}],
    ),
    "additional-schema": (
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "additionalProperties": {"type": "string"},
        },
        [{"a": 1, "b": "x"}, {"c": "y"}, {"ab": "z"}, {"": "e"}],
        [{"b": 1}, {"a": "x"}],
    ),
    "additional-excludes-declared": (
        {"type": "object", "properties": {"age": {"type": "integer"}}},
        [{"agex": "s"}, {"ag": "s"}],
        [{"age": "s"}],
    ),
    "pattern-properties": (
        {
            "type": "object",
            "patternProperties": {"^x-": {"type": "integer"}},
            "additionalProperties": False,
        },
        [{}, {"x-a": 1, "x-b": 2}],
        [{"y": 1}, {"x-a": "1"}],
    ),
    # SchemaStore's ioBroker manifest: an unanchored alternation of language codes, each a
    # substring search (once "automaton too large", relaxed into an unsatisfiable schema).
    "pattern-properties-words": (
        {
            "type": "object",
            "required": ["en"],
            "patternProperties": {"en|de|ru|pt|nl|fr|it|es|pl|zh-cn": {"type": "string"}},
            "additionalProperties": False,
        },
        [{"en": "a"}, {"en": "a", "zh-cn": "b", "xfrx": "c"}, {"en": "", "den": ""}],
        [{}, {"de": "a"}, {"en": "a", "zh": "b"}, {"en": 1}, {"en": "a", "xx": "b"}],
    ),
    "pattern-properties-open": (
        {
            "type": "object",
            "properties": {"x-id": {"type": "string"}},
            "patternProperties": {
                "^x-": {"type": "integer"},
                "n$": {"type": "integer", "minimum": 5},
            },
        },
        [{}, {"x-a": 1, "b": "any"}, {"an": 5, "x-n": 7}, {"q": [None]}],
        [{"x-a": "1"}, {"an": 4}, {"x-n": 4}, {"x-id": 1}, {"x-id": "s"}, {"b": 1, "x-a": "1"}],
    ),
    "pattern-properties-declared-match": (
        {
            "type": "object",
            "properties": {"x-a": {"maximum": 3}},
            "patternProperties": {"^x-": {"type": "integer"}},
            "additionalProperties": False,
        },
        [{"x-a": 3}, {"x-a": 1, "x-b": 9}, {"x-b": 100}],
        [{"x-a": 4}, {"x-a": "s"}, {"y": 1}],
    ),
    "property-names-with-declared": (
        {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "BAD": {}},
            "propertyNames": {"pattern": "^[a-z]+$"},
        },
        [{"id": 1}, {"id": 1, "zz": "q"}, {"other": 2}],
        [{"BAD": 1}, {"Zz": 1}, {"id": "1"}],
    ),
    "property-names": (
        {"type": "object", "propertyNames": {"pattern": "^[a-z]+$", "maxLength": 3}},
        [{}, {"abc": 1, "d": [2]}],
        [{"ABC": 1}, {"abcd": 1}],
    ),
    "min-max-properties": (
        {
            "type": "object",
            "properties": {"a": {}, "b": {}, "c": {}},
            "minProperties": 1,
            "maxProperties": 2,
        },
        [{"a": 1}, {"b": 1, "c": 2}, {"a": 1, "zz": 2}],
        [{}, {"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 2, "zz": 3}],
    ),
    "ref-defs": (
        {
            "$defs": {"pos": {"type": "integer", "minimum": 1}},
            "type": "array",
            "items": {"$ref": "#/$defs/pos"},
        },
        [[1, 2]],
        [[0], ["1"]],
    ),
    "ref-definitions-escaped": (
        {
            "definitions": {"a/b": {"type": "string"}, "c~d": {"type": "null"}},
            "anyOf": [{"$ref": "#/definitions/a~1b"}, {"$ref": "#/definitions/c~0d"}],
        },
        ["x", None],
        [1],
    ),
    "ref-recursive": (
        {
            "type": "object",
            "properties": {"v": {"type": "integer"}, "next": {"$ref": "#"}},
            "additionalProperties": False,
        },
        [{"v": 1}, {"v": 1, "next": {"v": 2, "next": {}}}],
        [{"next": {"v": "x"}}, {"w": 1}],
    ),
    "ref-id-relative": (
        {
            "$id": "https://example.com/root.json",
            "$defs": {"x": {"$id": "item.json", "type": "integer"}},
            "type": "array",
            "items": {"$ref": "item.json"},
        },
        [[1, 2]],
        [["a"]],
    ),
    "ref-recursive-with-siblings": (
        {
            "type": "object",
            "properties": {"v": {"type": "integer"}, "sub": {"$ref": "#", "required": ["v"]}},
            "additionalProperties": False,
        },
        [{}, {"sub": {"v": 1, "sub": {"v": 2}}}],
        [{"sub": {}}, {"sub": {"v": 1, "sub": {"v": "x"}}}],
    ),
    "ref-anchor": (
        {
            "$defs": {"x": {"$anchor": "flag", "type": "boolean"}},
            "properties": {"f": {"$ref": "#flag"}},
            "type": "object",
        },
        [{"f": True}],
        [{"f": 1}],
    ),
    "ref-with-siblings": (
        {
            "$defs": {"o": {"type": "object", "properties": {"a": {}}}},
            "$ref": "#/$defs/o",
            "required": ["a"],
        },
        [{"a": 1}],
        [{}],
    ),
    "any-of": (
        {"anyOf": [{"type": "string", "maxLength": 1}, {"type": "integer"}]},
        ["", "a", 5],
        ["ab", 1.5, None],
    ),
    "one-of-disjoint": (
        {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"k": {"const": "a"}, "x": {"type": "integer"}},
                    "required": ["k"],
                },
                {
                    "type": "object",
                    "properties": {"k": {"const": "b"}, "y": {"type": "string"}},
                    "required": ["k"],
                },
            ]
        },
        [{"k": "a", "x": 1}, {"k": "b", "y": "s"}],
        [{"k": "a", "x": "s"}, {"k": "c"}],
    ),
    "any-of-with-siblings": (
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
        },
        [{"a": 1}, {"b": 2}, {"a": 1, "b": 2}],
        [{}, {"c": 1}],
    ),
    "one-of-overlapping": (
        {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        [{"a": 1}, {"b": 2}, {"a": 1, "c": 3}],
        [{"a": 1, "b": 2}, {}],
    ),
    "all-of": (
        {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                {"properties": {"a": {"minimum": 5}, "b": {"type": "string"}}},
            ]
        },
        [{"a": 5}, {"a": 9, "b": "x"}],
        [{"a": 4}, {}, {"a": 6, "b": 1}],
    ),
    "all-of-additional-false": (
        {
            "allOf": [
                {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
                {"properties": {"b": {}}},
            ]
        },
        [{}, {"a": 1}],
        [{"b": 1}, {"a": 1, "b": 1}],
    ),
    "if-then-else": (
        {
            "type": "object",
            "properties": {"kind": {"enum": ["a", "b"]}, "n": {}},
            "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
            "then": {"properties": {"n": {"type": "integer"}}},
            "else": {"properties": {"n": {"type": "string"}}},
        },
        [{"kind": "a", "n": 1}, {"kind": "b", "n": "x"}, {"n": "y"}, {}],
        [{"kind": "a", "n": "x"}, {"kind": "b", "n": 1}, {"n": 2}],
    ),
    "if-then-only": (
        {"if": {"type": "string"}, "then": {"maxLength": 2}},
        ["ab", 5, None],
        ["abc"],
    ),
    "not-const": ({"type": "string", "not": {"enum": ["no", ""]}}, ["yes", "n", "noo"], ["no", ""]),
    "not-required": (
        {"type": "object", "not": {"required": ["secret"]}},
        [{}, {"a": 1}],
        [{"secret": 1}],
    ),
    "dependent-required": (
        {
            "type": "object",
            "properties": {"card": {}, "billing": {}},
            "dependentRequired": {"card": ["billing"]},
        },
        [{}, {"billing": 1}, {"card": 1, "billing": 2}],
        [{"card": 1}],
    ),
    "dependencies-draft7": (
        {
            "$schema": DRAFT7,
            "type": "object",
            "properties": {"a": {}, "b": {}},
            "dependencies": {"a": {"properties": {"b": {"type": "integer"}}}},
        },
        [{"a": 1, "b": 2}, {"b": "x"}],
        [{"a": 1, "b": "x"}],
    ),
    "not-type": ({"not": {"type": ["string", "null"]}}, [1, [], {}], ["x", None]),
    "unevaluated-false": (
        {"type": "object", "properties": {"a": {}}, "unevaluatedProperties": False},
        [{"a": 1}],
        [{"b": 1}],
    ),
    "helper-named-defs": (
        {
            "$defs": {"boolean": {"type": "boolean"}, "string": {"type": "integer"}},
            "type": "array",
            "prefixItems": [{"$ref": "#/$defs/boolean"}, {"$ref": "#/$defs/string"}],
        },
        [[True, 1], [False]],
        [["true"], [True, "x"]],
    ),
    "impossible-optional-property": (
        {"type": "object", "properties": {"a": {"type": "array", "minItems": 1, "items": False}}},
        [{}, {"b": 1}],
        [{"a": []}, {"a": [1]}],
    ),
    "bool-schemas": (
        {"type": "object", "properties": {"a": True, "b": False}},
        [{"a": [1]}],
        [{"b": 1}],
    ),
    "unique-items-union-of-enums": (  # a oneOf of enums: few known values too
        {
            "type": "array",
            "items": {"type": "string", "oneOf": [{"enum": ["a"]}, {"enum": ["b", "c"]}]},
            "uniqueItems": True,
        },
        [[], ["a", "b"], ["c", "a", "b"]],
        [["a", "a"], ["d"], ["b", "c", "b"], [1]],
    ),
    "unique-items-enum": (
        {"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True},
        [[], ["a"], ["b", "a"], ["a", "b", "c"], ["c", "a", "b"]],
        [["a", "a"], ["a", "b", "a"], ["d"], ["c", "b", "c"]],
    ),
    "unique-items-bounds": (
        {
            "type": "array",
            "items": {"enum": ["a", "b", "c"]},
            "uniqueItems": True,
            "minItems": 2,
            "maxItems": 2,
        },
        [["a", "b"], ["c", "a"]],
        [["a"], ["a", "b", "c"], ["b", "b"], []],
    ),
    "unique-items-boolean": (
        {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True},
        [[], [True], [False, True]],
        [[True, True], [False, True, False]],
    ),
    "unique-items-equal-numbers": (
        {"type": "array", "items": {"enum": [1, 1.0, 2, None]}, "uniqueItems": True},
        [[1], [2, 1], [None, 1]],
        [[1, 1.0], [1, 1], [2, 2]],
    ),
    "unique-items-enum-of-arrays": (
        {"enum": [[1, 2], [1, 1]], "uniqueItems": True},
        [[1, 2]],
        [[1, 1], [2]],
    ),
    "unique-items-integer-range": (
        {
            "type": "array",
            "items": {"type": ["integer", "null"], "minimum": 1, "exclusiveMaximum": 5},
            "uniqueItems": True,
        },
        [[], [1, 2, 3, 4], [None, 4, 1], [2]],
        [[1, 1], [5], [0], [None, None], [1.5]],
    ),
    "unique-items-objects-enum": (
        {
            "type": "array",
            "items": {"enum": [{"a": 1, "b": 2}, {"a": 2}], "not": {"required": ["b"]}},
            "uniqueItems": True,
        },
        [[], [{"a": 2}]],
        [[{"a": 2}, {"a": 2}], [{"a": 1, "b": 2}]],
    ),
    "unique-items-trivial": (
        {"type": "array", "uniqueItems": True, "maxItems": 1},
        [[], [1]],
        [[1, 2]],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_keyword_cases(name: str) -> None:
    schema, valid, invalid = CASES[name]
    for instance in valid:
        assert is_valid(schema, instance), f"table error: {instance!r} should be valid"
    for instance in invalid:
        assert not is_valid(schema, instance), f"table error: {instance!r} should be invalid"
    grammar = gs.Grammar.from_json_schema(schema)
    assert_decides(grammar, valid, invalid)


@pytest.mark.parametrize("whitespace", ["compact", "indent", "flexible"])
def test_whitespace_modes(whitespace: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "array"},
            "b": {"type": "object"},
            "c": {"enum": [[1, {"x": None}]]},
        },
    }
    grammar = schema_to_gbnf(schema, whitespace=whitespace)
    doc = {"a": [1, [2, {"q": []}]], "b": {"k": {}}, "c": [1, {"x": None}]}
    for text in dumps_styles(doc, whitespace):
        assert accepts(grammar, text), text
    others = {
        "compact": json.dumps(doc),
        "indent": json.dumps(doc),
        "flexible": json.dumps(doc, indent=2).replace("\n", "\n\n"),
    }
    assert not accepts(grammar, others[whitespace])


def test_max_whitespace_bounds_runs() -> None:
    grammar = schema_to_gbnf({"type": "array"}, max_whitespace=2)
    assert accepts(grammar, "[  1,  2  ]")
    assert not accepts(grammar, "[   1]")
    assert not accepts(grammar, "[\n\n1]")


def test_additional_properties_option() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    strict = schema_to_gbnf(schema, additional_properties=False)
    assert accepts(strict, '{"a": 1}')
    assert not accepts(strict, '{"a": 1, "b": 2}')
    explicit = {**schema, "additionalProperties": True}
    assert accepts(schema_to_gbnf(explicit, additional_properties=False), '{"a": 1, "b": 2}')


def test_property_order_follows_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"z": {}, "a": {}},
        "required": ["z", "a"],
        "additionalProperties": False,
    }
    grammar = schema_to_gbnf(schema)
    assert accepts(grammar, '{"z": 1, "a": 2}')
    assert not accepts(grammar, '{"a": 2, "z": 1}')


def test_schema_as_json_text_and_escaped_keys() -> None:
    grammar = schema_to_gbnf(
        json.dumps(
            {
                "type": "object",
                "properties": {'é"': {"const": 1}},
                "required": ['é"'],
                "additionalProperties": False,
            }
        )
    )
    assert accepts(grammar, '{"é\\"": 1}')
    assert accepts(grammar, '{"\\u00e9\\"": 1}')
    assert not accepts(grammar, '{"e\\"": 1}')


def test_large_max_items_stays_small() -> None:
    text = schema_to_gbnf(
        {"type": "array", "items": {"type": "integer"}, "minItems": 500, "maxItems": 1000000}
    )
    assert len(text) < 2000
    assert "{499,999999}" in text


def test_every_case_parses_as_gbnf() -> None:
    for schema, _, _ in CASES.values():
        for whitespace in ("flexible", "compact", "indent"):
            gs.Grammar.from_gbnf(schema_to_gbnf(schema, whitespace=whitespace))


def test_documents_registry_for_external_refs() -> None:
    other = {
        "$defs": {
            "pos": {"type": "integer", "minimum": 1},
            "list": {"type": "array", "items": {"$ref": "#/$defs/pos"}},
        }
    }
    schema = {
        "type": "object",
        "properties": {"xs": {"$ref": "https://example.com/defs.json#/$defs/list"}},
        "additionalProperties": False,
    }
    grammar = schema_to_gbnf(schema, documents={"https://example.com/defs.json": other})
    assert accepts(grammar, '{"xs": [1, 2]}')
    assert not accepts(grammar, '{"xs": [0]}')
    with pytest.raises(gs.SchemaError) as info:
        schema_to_gbnf(schema)
    assert info.value.path == "/properties/xs/$ref"
