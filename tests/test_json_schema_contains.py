"""``contains`` (with ``minContains``/``maxContains``): the grammar accepts exactly the arrays
``jsonschema`` validates (tables checked against jsonschema first); combinations it cannot
express are reported at ``contains``."""

from __future__ import annotations

import itertools
import json
import warnings
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
    "contains": (
        {"type": "array", "contains": {"type": "integer"}},
        [[1], ["a", 2], [1, "b", 3], [None, None, 0]],
        [[], ["a"], [None, "x"], [1.5]],
    ),
    "contains-untyped": (
        {"contains": {"const": "x"}},
        [["x"], ["y", "x"], "not an array", 3, {"a": 1}],
        [[], ["y"]],
    ),
    "min-contains": (
        {
            "type": "array",
            "items": {"type": "integer"},
            "contains": {"minimum": 5},
            "minContains": 2,
        },
        [[5, 6], [1, 5, 2, 7, 3], [9, 9]],
        [[5], [1, 2], [], [5, "a", 6]],
    ),
    "max-contains": (
        {"type": "array", "contains": {"const": "x"}, "maxContains": 2},
        [["x"], ["x", "y", "x"], [1, "x"]],
        [[], ["x", "x", "x"], ["y"]],
    ),
    "min-contains-zero": (
        {"type": "array", "contains": {"const": "x"}, "minContains": 0, "maxContains": 1},
        [[], ["x"], ["y", 1]],
        [["x", "x"], ["x", 1, "x"]],
    ),
    "max-contains-zero": (
        {"type": "array", "contains": {"const": "x"}, "minContains": 0, "maxContains": 0},
        [[], ["y", 1]],
        [["x"], ["y", "x"]],
    ),
    "contains-true": (
        {"type": "array", "contains": True},
        [[1], [None, "a"]],
        [[]],
    ),
    "contains-with-min-items": (
        {"type": "array", "contains": {"type": "integer"}, "minItems": 1},
        [[1], ["a", 2]],
        [[], ["a"]],
    ),
    "contains-bounds-without-contains-ignored": (
        {"allOf": [{"contains": {"type": "integer"}}, {"minContains": 3}], "type": "array"},
        [[1], ["a", 2]],
        [[], ["b"]],
    ),
    "contains-twice-equal": (
        {
            "type": "array",
            "allOf": [{"contains": {"const": "a"}}, {"contains": {"const": "a"}, "maxContains": 1}],
        },
        [["a"], [1, "a"]],
        [[], ["a", "a"], [1]],
    ),
    "contains-nested": (
        {"type": "array", "items": {"type": "array"}, "contains": {"contains": {"const": 0}}},
        [[[0]], [[], [1, 0]]],
        [[], [[]], [[1], [2]], [0]],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_contains_cases(name: str) -> None:
    assert_exact_on_table(*CASES[name])


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_contains_sentences_validate(name: str, data: st.DataObject) -> None:
    schema = CASES[name][0]
    grammar = gs.Grammar.from_json_schema(schema)
    text = data.draw(sentences(grammar.rules, grammar.root)).decode("utf-8")
    assert is_valid(schema, json.loads(text)), text


COUNTED = [
    {"type": "array", "contains": {"const": 1}},
    {"type": "array", "contains": {"const": 1}, "minContains": 2},
    {"type": "array", "contains": {"const": "a"}, "maxContains": 1},
    {"type": "array", "contains": {"type": "integer"}, "maxContains": 1},
    {"type": "array", "contains": {"const": 1}, "maxItems": 3},
    {"type": "array", "contains": {"const": 1}, "minItems": 3},
    {"type": "array", "contains": {"const": 1}, "minItems": 2, "maxItems": 4, "minContains": 2},
    {"type": "array", "contains": {"const": "a"}, "minItems": 1, "maxItems": 3, "maxContains": 1},
    {
        "type": "array",
        "contains": {"const": "a"},
        "maxItems": 2,
        "minContains": 0,
        "maxContains": 1,
    },
    {"type": "array", "contains": {"const": 1}, "maxItems": 0, "minContains": 0},
    {"type": "array", "items": {"enum": [1, "a"]}, "contains": {"const": 1}, "minItems": 4},
]
_SMALL_ARRAYS = [list(t) for n in range(5) for t in itertools.product([1, "a", None], repeat=n)]


@pytest.mark.parametrize("schema", COUNTED, ids=[json.dumps(s) for s in COUNTED])
def test_every_small_array_decided_as_jsonschema_does(schema: dict[str, Any]) -> None:
    """Every array of up to four items over 1, "a" and null (121 arrays)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchemaWarning)
        grammar = schema_to_gbnf(schema)
    wrong = [v for v in _SMALL_ARRAYS if accepts(grammar, json.dumps(v)) != is_valid(schema, v)]
    assert not wrong


def test_unsatisfiable_contains_is_reported() -> None:
    schema = {"type": "array", "items": {"type": "string"}, "contains": {"type": "integer"}}
    with pytest.raises(gs.SchemaError, match="no JSON value"):
        schema_to_gbnf(schema)


UNSUPPORTED = {
    "too-many-counting-rules": (
        {"type": "array", "contains": {"const": 1}, "maxItems": 2000},
        "/contains",
        [[2]],
    ),
    "beside-prefix-items": (
        {"type": "array", "prefixItems": [{"type": "string"}], "contains": {"const": 1}},
        "/contains",
        [["a"]],
    ),
    "beside-unique-items": (
        {"type": "array", "uniqueItems": True, "contains": {"const": 1}},
        "/contains",
        [["a"]],
    ),
    "max-contains-of-unique-arrays": (  # not uniqueItems has no grammar
        {"type": "array", "contains": {"type": "array", "uniqueItems": True}, "maxContains": 1},
        "/maxContains",
        [[[1, 2], [3, 4]]],
    ),
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_combinations(name: str) -> None:
    """Strict: a SchemaError at the keyword. Relaxed: a warning, and the contains keywords
    dropped (the grammar accepts the arrays the rest of the schema allows)."""
    schema, where, relaxed_accepts = UNSUPPORTED[name]
    with pytest.raises(gs.SchemaError) as info:
        schema_to_gbnf(schema)
    assert info.value.path == where
    with pytest.warns(SchemaWarning, match="contains"):
        grammar = schema_to_gbnf(schema, strict=False)
    for instance in relaxed_accepts:
        assert not is_valid(schema, instance)
        assert accepts(grammar, json.dumps(instance))
