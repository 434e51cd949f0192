"""``property_order="any"``: every order of an object's members, each key at most once, required
keys present, undeclared members anywhere, member counts respected; ``"schema"`` keeps the
schema's order. Checked on tables and exhaustively against jsonschema on small objects."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler.cli import main as cli_main
from gbnf_sampler.cli.status import EXIT_INVALID, EXIT_OK
from gbnf_sampler.limits import MAX_ANY_ORDER_STATES
from gbnf_sampler.schema import SchemaWarning, response_format_to_gbnf, schema_to_gbnf
from schema_helpers import accepts

SHAPES = {
    "type": "object",
    "properties": {"dimensions": {"type": "object"}, "shape": {"enum": ["circle", "square"]}},
}

# (schema, accepted in any order, rejected in any order)
CASES: list[tuple[dict[str, Any], list[str], list[str]]] = [
    (
        SHAPES,
        [
            '{"shape": "circle", "dimensions": {"radius": 5}}',
            '{"dimensions": {}, "shape": "square"}',
            '{"other": 1, "shape": "circle", "more": [2]}',
            "{}",
        ],
        ['{"shape": "circle", "shape": "square"}', '{"shape": "oval"}'],
    ),
    (
        {
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {}},
            "required": ["a", "c"],
            "additionalProperties": False,
        },
        ['{"c": null, "a": 1}', '{"b": "x", "c": 2, "a": 3}', '{"a": 1, "b": "", "c": []}'],
        ['{"b": "x", "a": 1}', '{"a": 1, "c": 1, "a": 2}', '{"c": 1, "a": 1, "d": 0}', "{}"],
    ),
    (
        {
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "patternProperties": {"^x": {"type": "string"}},
            "additionalProperties": False,
            "minProperties": 2,
            "maxProperties": 3,
        },
        ['{"x1": "s", "a": 1}', '{"b": 2, "x": "", "a": 1}', '{"xa": "1", "xb": "2", "xc": "3"}'],
        [
            '{"a": 1}',
            '{"x1": 1, "a": 1}',
            '{"a": 1, "b": 2, "x": "", "xx": ""}',
            '{"y": "1", "a": 1}',
        ],
    ),
    (
        {"const": {"name": "x", "tags": [1, {"p": 1, "q": 2}]}},
        [
            '{"tags": [1, {"q": 2, "p": 1}], "name": "x"}',
            '{"name": "x", "tags": [1, {"p": 1, "q": 2}]}',
        ],
        ['{"name": "x"}', '{"tags": [1, {"q": 2, "p": 1}], "name": "x", "name": "x"}'],
    ),
]


@pytest.mark.parametrize(("schema", "good", "bad"), CASES)
def test_any_order_table(schema: dict[str, Any], good: list[str], bad: list[str]) -> None:
    grammar = gs.Grammar.from_json_schema(schema, property_order="any")
    for text in good:
        assert jsonschema.validate(json.loads(text), schema) is None
        assert accepts(grammar, text), text
        assert accepts(grammar, json.dumps(json.loads(text), indent=2)), text
    for text in bad:
        assert not accepts(grammar, text), text


def test_schema_order_is_the_default() -> None:
    grammar = gs.Grammar.from_json_schema(SHAPES)
    assert accepts(grammar, '{"dimensions": {"radius": 5}, "shape": "circle"}')
    assert not accepts(grammar, '{"shape": "circle", "dimensions": {"radius": 5}}')
    assert gs.Grammar.from_json_schema(SHAPES, property_order="schema").to_gbnf() == (
        grammar.to_gbnf()
    )


def _members(keys: tuple[str, ...]) -> str:
    values = {"a": "1", "b": '"s"', "c": "true", "x": '"u"', "y": "2"}
    return "{" + ", ".join(f'"{k}": {values[k]}' for k in keys) + "}"


SMALL = [
    {"properties": {"a": {}, "b": {}, "c": {}}},
    {"properties": {"a": {}, "b": {}, "c": {}}, "required": ["b"], "additionalProperties": False},
    {"properties": {"a": {}, "b": {}}, "required": ["a"], "minProperties": 2, "maxProperties": 3},
    {
        "properties": {"a": {}, "b": {}, "c": {}},
        "patternProperties": {"^x$": {}},
        "additionalProperties": False,
        "maxProperties": 2,
    },
    {"properties": {"a": {}, "b": {}}, "required": ["a", "b", "c"], "minProperties": 4},
]


@pytest.mark.parametrize("schema", SMALL)
def test_any_order_exhaustive(schema: dict[str, Any]) -> None:
    """Every key sequence of up to 5 members over declared and undeclared names: accepted
    exactly when its keys are distinct and the object is valid. (A repeated undeclared key is
    outside the contract: distinct keys from an infinite set are not context-free.)"""
    grammar = gs.Grammar.from_json_schema(schema, property_order="any")
    declared = set(schema["properties"]) | set(schema.get("required", []))
    validator = jsonschema.Draft202012Validator(schema)
    for n in range(6):
        for keys in itertools.product("abcxy", repeat=n):
            text = _members(keys)
            repeated = {k for k in keys if keys.count(k) > 1}
            if repeated and not repeated & declared:
                continue
            valid = not repeated and validator.is_valid(json.loads(text))
            assert accepts(grammar, text) == valid, (schema, text)


@settings(max_examples=40, deadline=None)
@given(st.permutations(list("abcdefgh")), st.lists(st.booleans(), min_size=8, max_size=8))
def test_any_order_random_subsets(order: list[str], keep: list[bool]) -> None:
    schema = {
        "type": "object",
        "properties": {k: {"type": "integer"} for k in "abcdefgh"},
        "required": ["c", "f"],
    }
    grammar = _cached(json.dumps(schema))
    keys = [k for k, on in zip(order, keep, strict=True) if on or k in "cf"]
    text = json.dumps({k: i for i, k in enumerate(keys)})
    assert accepts(grammar, text)
    assert not accepts(grammar, json.dumps({k: 1 for k in keys if k != "f"}))


_GRAMMARS: dict[str, gs.Grammar] = {}


def _cached(schema: str) -> gs.Grammar:
    if schema not in _GRAMMARS:
        _GRAMMARS[schema] = gs.Grammar.from_json_schema(schema, property_order="any")
    return _GRAMMARS[schema]


def _wide(n: int) -> dict[str, Any]:
    return {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(n)}}


def test_any_order_bound_strict_and_relaxed() -> None:
    n = MAX_ANY_ORDER_STATES.bit_length()  # one property past the bound
    assert 2 ** (n - 1) == MAX_ANY_ORDER_STATES
    gs.Grammar.from_json_schema(_wide(n - 1), property_order="any")
    with pytest.raises(gs.SchemaError) as err:
        schema_to_gbnf({"properties": {"o": _wide(n)}}, property_order="any")
    assert err.value.path == "/properties/o"
    assert "MAX_ANY_ORDER_STATES" in err.value.message
    with pytest.warns(SchemaWarning, match="any order"):
        text = schema_to_gbnf(_wide(n), property_order="any", strict=False)
    doc = {f"p{i}": i for i in range(n)}
    assert accepts(text, json.dumps(doc))  # the schema's order
    assert not accepts(text, json.dumps(dict(reversed(doc.items()))))
    # A small maxProperties keeps the subsets few: allowed past twelve properties.
    gs.Grammar.from_json_schema({**_wide(n + 4), "maxProperties": 3}, property_order="any")


def test_any_order_nested_and_in_arrays() -> None:
    schema = {
        "type": "array",
        "items": {
            "properties": {"k": {"type": "string"}, "v": {"properties": {"p": {}, "q": {}}}},
            "required": ["k"],
        },
    }
    grammar = gs.Grammar.from_json_schema(schema, property_order="any", whitespace="compact")
    assert accepts(grammar, '[{"v":{"q":1,"p":2},"k":"a"},{"k":"b"}]')
    assert not accepts(grammar, '[{"v":{"q":1,"q":2},"k":"a"}]')
    assert not accepts(grammar, '[{"v":{}}]')


def test_property_order_option_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shuffled = '{"shape": "circle", "dimensions": {}}'
    fmt = {"type": "json_schema", "json_schema": {"schema": SHAPES}}
    assert accepts(response_format_to_gbnf(fmt, property_order="any"), shuffled)
    assert not accepts(response_format_to_gbnf(fmt), shuffled)
    assert accepts(gs.Grammar.from_response_format(fmt, property_order="any"), shuffled)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SHAPES))
    assert cli_main(["convert", "--property-order", "any", str(path)]) == EXIT_OK
    assert accepts(capsys.readouterr().out, shuffled)
    with pytest.raises(SystemExit):
        cli_main(["convert", "--property-order", "sorted", str(path)])
    capsys.readouterr()
    path.write_text(json.dumps(_wide(20)))
    assert cli_main(["convert", "--property-order", "any", str(path)]) == EXIT_INVALID
    with pytest.raises(ValueError, match="property_order"):
        schema_to_gbnf(SHAPES, property_order="sorted")


def test_any_order_indent_and_compact() -> None:
    schema = {"properties": {"a": {}, "b": {"type": "array"}}, "additionalProperties": False}
    doc = {"b": [1, {"z": 2}], "a": {"y": None}}
    for mode, text in (
        ("indent", json.dumps(doc, indent=2)),
        ("compact", json.dumps(doc, separators=(",", ":"))),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            grammar = gs.Grammar.from_json_schema(schema, property_order="any", whitespace=mode)
        assert accepts(grammar, text), mode
