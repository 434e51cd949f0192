"""Pruned ``anyOf`` products (``schema.branch_pairs``): a pair is dropped only when no JSON value
satisfies it, so chains of ``if``/``then`` on a discriminating property compile exactly, without
the relaxation that a product of 2^k branches needed."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler.schema import SchemaWarning
from gbnf_sampler.schema.branch_pairs import compatible_pairs
from schema_helpers import assert_decides
from test_json_schema import is_valid

# --- the proof against a brute-force search ----------------------------------------------------

_ATOMS: list[Any] = [None, 1, 1.0, "x", "y", True]
_ABSENT = object()
# Every object over keys a, b with values from _ATOMS (a key may be absent), plus other kinds:
# the domain where schemas built from _ATOMS are told apart.
_DOMAIN: list[Any] = [
    {k: v for k, v in zip("ab", values, strict=True) if v is not _ABSENT}
    for values in itertools.product([_ABSENT, *_ATOMS], repeat=2)
] + [*_ATOMS, [], [1], "a"]

_VALUE_SCHEMAS = st.recursive(
    st.one_of(
        st.builds(lambda v: {"const": v}, st.sampled_from(_ATOMS)),
        st.builds(
            lambda vs: {"enum": vs}, st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=3)
        ),
        st.sampled_from([{}, {"type": "string"}, False, True]),
    ),
    lambda inner: st.builds(
        lambda parts: {"allOf": parts}, st.lists(inner, min_size=1, max_size=3)
    ),
    max_leaves=4,
)


def _schema(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keywords = st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["object", "string", ["object", "null"], "number"]),
            "required": st.lists(st.sampled_from("ab"), max_size=2, unique=True),
            "properties": st.dictionaries(st.sampled_from("ab"), _VALUE_SCHEMAS, max_size=2),
            "const": st.sampled_from(_ATOMS),
            "enum": st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=3),
            "allOf": st.lists(children, min_size=1, max_size=2),
            "anyOf": st.lists(children, min_size=1, max_size=2),
            "$ref": st.just("#/$defs/any"),
        },
    )
    return keywords | st.booleans()


_SCHEMAS = st.recursive(_schema(st.just({})), _schema, max_leaves=4)


def _valid(schema: Any, value: Any) -> bool:
    return bool(jsonschema.Draft202012Validator({"$defs": {"any": {}}, **schema}).is_valid(value))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    xs=st.lists(_SCHEMAS, min_size=1, max_size=3),
    ys=st.lists(_SCHEMAS, min_size=1, max_size=3),
    context=st.lists(_SCHEMAS, max_size=2),
)
def test_dropped_pairs_have_no_value(xs: list[Any], ys: list[Any], context: list[Any]) -> None:
    kept = compatible_pairs(xs, ys, context)
    assert kept == [(x, y) for x in xs for y in ys if (x, y) in kept]  # product order
    for x, y in itertools.product(xs, ys):
        if (x, y) in kept:
            continue
        together = {"allOf": [*context, x, y]}
        witness = [v for v in _DOMAIN if _valid(together, v)]
        assert not witness, f"dropped a satisfiable pair: {x} and {y} in {context}: {witness[0]}"


def _name(value: str) -> dict[str, Any]:
    return {"properties": {"name": {"const": value}}}


def test_discriminator_chain_pairs() -> None:
    base = {"type": "object", "required": ["name"]}
    ifs = [{"allOf": [_name(v), {"$ref": f"#/{v}"}]} for v in "abc"]
    kept = compatible_pairs(ifs, ifs, [base])
    assert kept == [(x, x) for x in ifs]
    # Not required, or not surely an object: an object without "name", or a string, is a witness.
    assert len(compatible_pairs(ifs, ifs, [{"type": "object"}])) == 9
    assert len(compatible_pairs(ifs, ifs, [{"required": ["name"]}])) == 9
    # Values compared as JSON Schema does: 1 and 1.0 are one value.
    ones = [_name(1), _name(1.0)]  # type: ignore[arg-type]
    assert len(compatible_pairs(ones, ones, [base])) == 4
    # A forbidden required property, and a type no branch allows.
    gone = {"properties": {"name": False}}
    assert compatible_pairs([gone], [{}], [base]) == []
    assert compatible_pairs([{"type": "string"}], [{"type": "number"}], []) == []


# --- end to end: a chain of conditions compiles exactly -----------------------------------------

_KINDS = ["add", "copy", "delete", "rename", "replace", "move", "merge", "split", "sort", "trim"]


def _chain_schema() -> dict[str, Any]:
    """A rule list in the style of Yippee-Ki-JSON's configuration: ten rule kinds, each with its
    own required parameter, chosen by ``if``/``then`` on ``name``."""
    conditions = [
        {
            "if": {"properties": {"name": {"const": kind}}},
            "then": {"$ref": f"#/$defs/{kind}"},
        }
        for kind in _KINDS
    ]
    defs = {
        kind: {
            "properties": {"name": {"const": kind}, f"{kind}_by": {"type": "integer"}},
            "required": [f"{kind}_by"],
        }
        for kind in _KINDS
    }
    return {
        "$defs": defs,
        "type": "object",
        "properties": {"name": {"enum": _KINDS}},
        "required": ["name"],
        "allOf": conditions,
    }


def test_condition_chain_compiles_exactly() -> None:
    schema = _chain_schema()
    valid = [{"name": k, f"{k}_by": i} for i, k in enumerate(_KINDS)]
    invalid: list[Any] = [
        {"name": "add"},
        {"name": "add", "copy_by": 1},
        {"name": "copy", "copy_by": "1"},
        {"name": "other", "other_by": 1},
        {"copy_by": 1},
        [],
    ]
    for instance in valid:
        assert is_valid(schema, instance), instance
    for instance in invalid:
        assert not is_valid(schema, instance), instance
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchemaWarning)  # before: 2^10 pairs, relaxed with a warning
        grammar = gs.Grammar.from_json_schema(schema)
    assert_decides(grammar, valid, invalid)


def test_product_past_the_limit_still_reported() -> None:
    """Pairs that no fact tells apart still count against MAX_ANYOF_BRANCHES."""
    schema = {
        "allOf": [{"anyOf": [{"required": [f"k{i}"]}, {"required": [f"m{i}"]}]} for i in range(10)]
    }
    with pytest.raises(gs.SchemaError, match="anyOf/oneOf combinations"):
        gs.Grammar.from_json_schema(schema)
    with pytest.warns(SchemaWarning, match="anyOf/oneOf combinations"):
        gs.Grammar.from_json_schema(schema, strict=False)
