"""Numbers in every spelling the README promises. Integers: plain digits, ``-0`` beside negative
values; a ``type: number`` with an integral ``multipleOf`` also with one zero fraction digit
(``4.0``, as json.dumps writes a float). Bounded numbers: every spelling with a
bound of 0 on one side only; otherwise the plain ones, ``-0`` beside negative values, and
json.dumps' forms below 1e-4 (``5e-05``). jsonschema is the oracle, with the draft the schema's
``$schema`` names: a spelling is accepted exactly when it is valid, except the forms the README
lists as refused (``1.0`` and ``1e2`` for ``type: integer``, ``4.00``, ``0.1e1`` within
``[0, 1]``, a ``-0`` where no value is negative), which must be refused."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs

DRAFT4 = "http://json-schema.org/draft-04/schema#"
DRAFT7 = "http://json-schema.org/draft-07/schema#"

# The integer spellings accepted (when valid): digits; for a number, one zero fraction digit.
INTEGER_FORM = re.compile(r"-?(0|[1-9][0-9]*)")
NUMBER_MULTIPLE_FORM = re.compile(r"-?(0|[1-9][0-9]*)(\.0)?")


def negatives_allowed(schema: dict[str, Any]) -> bool:
    """Whether some negative value is valid (else a "-0" is refused by design)."""
    return any(valid(schema, t) for t in ("-1e-05", "-0.5", "-1", "-2", "-3", "-4", "-5", "-9"))


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
    form = NUMBER_MULTIPLE_FORM if schema.get("type") == "number" else INTEGER_FORM
    if not form.fullmatch(text):
        return False
    if text.startswith("-0") and not negatives_allowed(schema):
        return False
    return valid(schema, text)


def misjudged(
    schema: dict[str, Any], spellings: list[str], oracle: Callable[[dict[str, Any], str], bool]
) -> list[str]:
    """The spellings the schema's grammar accepts or refuses against the oracle's answer."""
    grammar = gs.Grammar.from_json_schema(schema)
    return [t for t in spellings if accepts(grammar, t) != oracle(schema, t)]


@pytest.mark.parametrize("schema", SCHEMAS, ids=json.dumps)
def test_spellings_follow_jsonschema(schema: dict[str, Any]) -> None:
    assert misjudged(schema, SPELLINGS, expected) == []


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ({"type": "integer"}, "-0"),
        ({"type": "integer", "minimum": -3, "maximum": 3}, "-0"),
        ({"type": "number", "multipleOf": 4}, "8.0"),
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
    assert accepts(gs.Grammar.from_json_schema(schema), text) == expected(schema, text)


def test_distinct_integer_items_have_no_fraction_dead_end() -> None:
    # With 1 taken, "1." could only become 1 again: integers are written in plain digits, so
    # the "." is refused, not a dead end.
    schema = {"type": "array", "uniqueItems": True, "items": {"type": "integer", "minimum": 1}}
    grammar = gs.Grammar.from_json_schema(schema)
    assert not gs.Matcher(grammar).accept_bytes(b"[1,1.")
    assert accepts(grammar, "[1,2,10]")
    assert not accepts(grammar, "[1,1]")


NUMBER_SCHEMAS: list[dict[str, Any]] = [
    {"type": "number", "minimum": 0},
    {"type": "number", "exclusiveMinimum": 0},
    {"type": "number", "maximum": 0},
    {"type": "number", "exclusiveMaximum": 0},
    {"type": "number", "minimum": 0, "maximum": 1},
    {"type": "number", "minimum": -1, "maximum": 1},
    {"type": "number", "minimum": -5, "exclusiveMaximum": 0},
    {"type": "number", "exclusiveMinimum": 0, "maximum": 0.00005},
    {"type": "number", "minimum": 0.5},
    {"$schema": DRAFT4, "type": "number", "minimum": 0, "exclusiveMinimum": True},
]

NUMBER_SPELLINGS = [
    "0", "-0", "-0.0", "0.000", "0e3", "-0e-2", "1", "-1", "0.5", "-0.5", "1.0", "2", "-2",
    "1e-05", "5E-7", "9.99e-5", "1.5e-06", "-1e-05", "-2.5e-07", "1e-0005", "00", "-", "1e",
    "1e300", "1e301", "2e-300", "2e-301", "1e-1000", "0.5e1", "0e-1000", "-7E+2",
]  # fmt: skip

# The exponent forms accepted: with a lone bound of 0, after a mantissa of 0 or of at least 1
# (exponent within +-300); with other bounds, json.dumps' forms below 1e-4 (exponent -5 to -300).
EXP_5_TO_300 = r"[5-9]|[1-9][0-9]|[12][0-9]{2}|300"
LONE_ZERO_EXPONENT_FORM = (
    r"-?(0(\.0+)?[eE][+-]?[0-9]+|[1-9][0-9]*(\.[0-9]+)?[eE][+-]?0*([0-9]{1,2}|[12][0-9]{2}|300))"
)


def number_expected(schema: dict[str, Any], text: str) -> bool:
    lone_zero_bound = {k: v for k, v in schema.items() if k not in ("type", "$schema")} in (
        {"minimum": 0},
        {"exclusiveMinimum": 0},
        {"maximum": 0},
        {"exclusiveMaximum": 0},
        {"minimum": 0, "exclusiveMinimum": True},  # draft 4's spelling of exclusiveMinimum: 0
    )
    small_form = re.fullmatch(rf"-?[1-9](\.[0-9]+)?[eE]-0*({EXP_5_TO_300})", text)
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    if text.startswith("-"):  # every negative magnitude below 1e-4 must be in the interval
        family = (hi is None or hi >= 0) and (lo is None or lo <= -1e-4)
    else:
        family = (lo is None or lo <= 0) and (hi is None or hi >= 1e-4)
    if text.startswith("-0") and not negatives_allowed(schema):
        return False
    if "e" in text.lower():
        in_family = (
            bool(re.fullmatch(LONE_ZERO_EXPONENT_FORM, text))
            if lone_zero_bound
            else bool(small_form) and family
        )
        if not in_family:
            return False
    return valid(schema, text)


@pytest.mark.parametrize("schema", NUMBER_SCHEMAS, ids=json.dumps)
def test_bounded_number_spellings_follow_jsonschema(schema: dict[str, Any]) -> None:
    assert misjudged(schema, NUMBER_SPELLINGS, number_expected) == []


@settings(max_examples=80, deadline=None)
@given(
    lo=st.none() | st.decimals(-3, 3, places=2),
    width=st.none() | st.decimals(0, 4, places=2),
    mantissa=st.decimals(-9, 9, places=3),
    exponent=st.integers(-9, 3),
)
def test_bounded_numbers_never_accept_an_invalid_spelling(
    lo: Any, width: Any, mantissa: Any, exponent: int
) -> None:
    schema: dict[str, Any] = {"type": "number"}
    if lo is not None:
        schema["minimum"] = float(lo)
    if width is not None:
        schema["maximum"] = float((lo or 0) + width)
    if len(schema) == 1:
        schema["maximum"] = 0
    text = f"{mantissa}e{exponent}"
    if accepts(gs.Grammar.from_json_schema(schema), text):
        assert valid(schema, text), (schema, text)


def test_python_small_floats_within_a_unit_interval() -> None:
    schema = {"type": "number", "minimum": 0, "maximum": 1}
    grammar = gs.Grammar.from_json_schema(schema)
    for value in [0.00001, 2.5e-7, 1e-300, 0.0001, 0.5, 1.0, 0.0]:
        assert accepts(grammar, json.dumps(value)), value
    assert not accepts(grammar, json.dumps(-1e-05))


def test_distinct_items_keep_enum_numbers_to_one_spelling() -> None:
    # 1.0 beside open integers: written "1" inside items kept distinct, so that "1." (which
    # could only become 1 again once 1 is taken) never starts.
    schema = {
        "type": "array",
        "uniqueItems": True,
        "items": {"anyOf": [{"type": "integer", "minimum": 1}, {"enum": [1.0, 2]}]},
    }
    grammar = gs.Grammar.from_json_schema(schema)
    assert not gs.Matcher(grammar).accept_bytes(b"[1,1.")
    assert accepts(grammar, "[1,2,3]")


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ({"type": "integer"}, "1.0"),  # valid from draft 6 on, but it reads as a float
        ({"type": "integer", "minimum": 0, "maximum": 9}, "-0"),  # "-" could only become 0
        ({"type": "number", "multipleOf": 2}, "4.00"),  # one zero only: no run of zeros
    ],
)
def test_valid_spellings_refused_by_design(schema: dict[str, Any], text: str) -> None:
    assert valid(schema, text)
    assert not accepts(gs.Grammar.from_json_schema(schema), text)
