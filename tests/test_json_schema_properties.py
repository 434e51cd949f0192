"""Property tests: random sentences of schema grammars validate (soundness); generated valid
instances are accepted (completeness); random JSON values are accepted only when valid."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from schema_helpers import accepts, dumps_styles
from strategies import sentences
from test_json_schema import CASES, is_valid

# jsonschema checks multipleOf with float division (0.07 / 0.01 != 7), the grammar in decimal.
_FLOAT_ARITHMETIC = {"multiple-of-decimal"}
SOUNDNESS = sorted(set(CASES) - _FLOAT_ARITHMETIC)


@pytest.mark.parametrize("name", SOUNDNESS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_sentences_validate(name: str, data: st.DataObject) -> None:
    schema = CASES[name][0]
    grammar = gs.Grammar.from_json_schema(schema)
    text = data.draw(sentences(grammar.rules, grammar.root)).decode("utf-8")
    instance = json.loads(text)
    assert is_valid(schema, instance), text


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-200, 200)
    | st.floats(-1e3, 1e3, allow_nan=False)
    | st.text("ab-_é", max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "k", "v", "x-a", "age"]), inner, max_size=3)
    ),
    max_leaves=6,
)

RANDOM_VALUE_SCHEMAS = [
    "type-list",
    "enum",
    "const",
    "min-max-length",
    "integer-range",
    "number-range",
    "array-min-max",
    "prefix-items",
    "object-properties",
    "object-required",
    "additional-false",
    "additional-schema",
    "additional-excludes-declared",
    "pattern-properties",
    "min-max-properties",
    "any-of",
    "one-of-disjoint",
    "all-of",
    "not-type",
    "ref-recursive",
]


@pytest.mark.parametrize("name", RANDOM_VALUE_SCHEMAS)
@settings(max_examples=40, deadline=None)
@given(value=_JSON)
def test_random_values_accepted_only_if_valid(name: str, value: Any) -> None:
    schema = CASES[name][0]
    grammar = gs.Grammar.from_json_schema(schema)
    text = json.dumps(value)
    if accepts(grammar, text):
        assert is_valid(schema, value), text


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 8},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "height": {"type": "number", "exclusiveMinimum": 0, "maximum": 2.5},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
        "email": {"type": "string", "format": "email"},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}

_PERSON_FIELDS = {
    "name": st.text(min_size=1, max_size=8).filter(
        lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)
    ),
    "age": st.integers(0, 130),
    "height": st.decimals("0.001", "2.5", places=3).map(float).filter(lambda x: x > 0),
    "tags": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
    "email": st.from_regex(r"\A[a-z0-9.+]{1,5}@[a-z]{1,5}\.(com|org)\Z").filter(
        lambda s: ".." not in s and not s.startswith(".") and ".@" not in s
    ),
}


@st.composite
def persons(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, strategy in _PERSON_FIELDS.items():
        if key in PERSON["required"] or draw(st.booleans()):
            out[key] = draw(strategy)
    return out


@settings(max_examples=60, deadline=None)
@given(person=persons())
def test_generated_valid_instances_accepted(person: dict[str, Any]) -> None:
    assert is_valid(PERSON, person)
    grammar = gs.Grammar.from_json_schema(PERSON)
    for text in dumps_styles(person):
        assert accepts(grammar, text), text


def test_pattern_property_keys_read_as_python_does() -> None:
    """jsonschema matches patterns with Python's ``re``, where ``$`` also matches before a final
    newline: a key "xn\\n" falls under ``n$`` there, so its value must be that schema's (found
    by test_sentences_validate: the grammar let it follow additionalProperties)."""
    schema = {
        "type": "object",
        "patternProperties": {"^x-": {"type": "integer"}, "n$": {"type": "integer", "minimum": 5}},
    }
    grammar = gs.Grammar.from_json_schema(schema)
    for value in ({"xn\n": 0}, {"xn\n": 7}, {"xn": 0}, {"xn": 7}, {"q": "s"}, {"x-n\n": 3}):
        assert accepts(grammar, json.dumps(value)) == is_valid(schema, value), value
