"""``enum``/``const`` numbers in the spellings the README promises (plain digits, trailing
fraction zeros, a zero exponent, ``-0`` for 0, json.dumps' own form), never a spelling of
another value: jsonschema (which compares numbers by value) is the oracle."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs

SPELLINGS = [
    "1", "1.0", "1.000", "1e0", "1E+00", "1.0e-0", "10e-1", "0.1e1", "-1", "-1.0", "2.5", "2.50",
    "2.5e0", "25e-1", "0", "-0", "-0.0", "0.0e0", "0e5", "1e-05", "0.00001", "0.0000100",
    "1e+20", "100000000000000000000", "100000000000000000000.0", "12", "1.01", "01", "1.",
    "+1", "1e", ".5",
]  # fmt: skip


def accepts(grammar: gs.Grammar, text: str) -> bool:
    m = gs.Matcher(grammar)
    return m.accept_bytes(text.encode()) and m.can_terminate()


def valid(schema: Any, text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return bool(jsonschema.Draft202012Validator(schema).is_valid(value))


# (schema, spellings that must be accepted: the README's forms of each value)
CASES: list[tuple[Any, list[str]]] = [
    ({"const": 1}, ["1", "1.0", "1.000", "1e0", "1E+00", "1.0e-0"]),
    ({"const": 1.0}, ["1", "1.0", "1e0"]),
    ({"enum": [2.5, -1]}, ["2.5", "2.50", "2.5e0", "-1", "-1.0"]),
    ({"const": 0}, ["0", "-0", "-0.0", "0.0e0"]),
    ({"const": 1e-05}, ["1e-05", "0.00001", "0.0000100"]),
    ({"const": 1e20}, ["1e+20", "100000000000000000000", "100000000000000000000.0"]),
    ({"const": [1, {"a": 2.5}]}, []),
]


@pytest.mark.parametrize(("schema", "required"), CASES, ids=[json.dumps(c[0]) for c in CASES])
def test_spellings(schema: Any, required: list[str]) -> None:
    grammar = gs.Grammar.from_json_schema(schema)
    for text in SPELLINGS:
        if accepts(grammar, text):
            assert valid(schema, text), text
    for text in required:
        assert accepts(grammar, text), text


def test_nested_numbers_take_their_spellings() -> None:
    grammar = gs.Grammar.from_json_schema({"const": [1, {"a": 2.5}]})
    assert accepts(grammar, '[1.0, {"a": 2.50}]')
    assert accepts(grammar, '[1,{"a":2.5e0}]')
    assert not accepts(grammar, '[1.5, {"a": 2.5}]')


_NUMBERS = st.one_of(
    st.integers(-(10**22), 10**22),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.decimals(places=4, min_value=-1000, max_value=1000, allow_nan=False).map(float),
)


@settings(max_examples=150, deadline=None)
@given(_NUMBERS, st.integers(0, 3), st.booleans())
def test_random_numbers(value: float, zeros: int, exponent: bool) -> None:
    schema = {"enum": [value, "x"]}
    grammar = gs.Grammar.from_json_schema(schema)
    dumped = json.dumps(value)
    assert accepts(grammar, dumped)
    if "e" not in dumped and "E" not in dumped:
        text = dumped + ("" if "." in dumped else ".") + "0" * zeros if zeros else dumped
        text += "e0" if exponent else ""
        assert accepts(grammar, text), text
    for other in (json.dumps(value + 1), dumped + "1", "-" + dumped.lstrip("-") + "1"):
        if accepts(grammar, other):
            assert valid(schema, other), other
