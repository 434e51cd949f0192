"""``not``, ``if``/``then``/``else`` and dependencies, rewritten as ``anyOf`` where exact.

``if C then T else E`` is ``anyOf[allOf[C, T], allOf[not C, E]]`` (the branches are disjoint),
``dependentRequired {a: [b]}`` is ``anyOf[{a absent}, {required: [a, b]}]`` and
``dependentSchemas {a: S}`` is ``anyOf[{a absent}, allOf[{required: [a]}, S]]``. That needs
``not C``: :func:`negate` builds it one JSON kind at a time (:mod:`gbnf_sampler.schema.kinds`):
a kind the schema rejects entirely is allowed, one it accepts entirely is left out, and in between
the keywords are negated one by one (``not (a and b)`` is ``not a or not b``): ``type: integer``
(numbers that are not integers: ``__non_integral__``), enums of strings and
booleans (beside other keywords: the values those reject too), string patterns, lengths and
the formats asserted exactly in every draft (as the complement automaton), excluded strings
(``__not_in__``: one of them), numeric bounds, item and
property counts, required and declared properties (recursively), ``additionalProperties`` (some
undeclared member with a value it rejects: ``__some_member__``), ``items`` (some item outside
it: ``contains``) and ``contains`` (every item outside it), ``anyOf``, ``oneOf`` (no branch, or
two at once) and nested ``not``. Anything else gives up (None), leaving the keyword to be
reported as unsupported.

A negation may accept less than the true complement (a string pattern is read the widest way
Python's ``re`` or ECMA-262 could read it before it is excluded): never more, so a grammar built
from it stays sound.
"""

from __future__ import annotations

import math
from itertools import combinations, pairwise
from typing import Any

from ..limits import MAX_DEPENDENCIES, MAX_NEGATED_ONEOF_BRANCHES, MAX_NEGATION_DEPTH
from .branch_pairs import pairwise_disjoint
from .formats import EVERY_DRAFT
from .kinds import KINDS, Cannot, Flatten, restrict, status
from .refs import merge, normalize
from .scalars import formats_of

_KIND_TYPE = {k: k for k in KINDS}
# String keywords whose language can be excluded exactly. Formats only when jsonschema's checker
# accepts exactly the grammar's format automaton in every draft (``formats.EVERY_DRAFT``);
# elsewhere the regexes only approximate its own code from inside.
_NEGATABLE_STRING = frozenset(
    {"pattern", "__patterns__", "minLength", "maxLength", "format", "__formats__"}
)
_BOUND_NEGATIONS = {
    "minimum": "exclusiveMaximum",
    "exclusiveMinimum": "maximum",
    "maximum": "exclusiveMinimum",
    "exclusiveMaximum": "minimum",
}
_CONTAINS_BOUNDS = {"minContains", "maxContains"}
_COUNT_NEGATIONS = {
    "object": ("minProperties", "maxProperties"),
    "array": ("minItems", "maxItems"),
}


def plain_flatten(schema: Any) -> Any:
    """A schema with its ``allOf`` merged in (no ``$ref`` resolution)."""
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        raise Cannot("reference outside a converter")
    out: Any = normalize({k: v for k, v in schema.items() if k != "allOf"})
    parts = schema.get("allOf", [])
    if not isinstance(parts, list):
        raise Cannot("allOf must be an array")
    for part in parts:
        out = merge(out, plain_flatten(part), "")
    return out


def negate(schema: Any, flatten: Flatten = plain_flatten) -> Any:
    """A schema for (a subset of) the values ``schema`` rejects; None when not expressible."""
    try:
        return _negate(schema, flatten, 0)
    except Cannot:
        return None


def negate_kind(part: Any, kind: str, flatten: Flatten = plain_flatten) -> Any:
    """A schema for (a subset of) the values of ``kind`` that ``part`` (a :func:`restrict`
    result) rejects: False when there are none, None when not expressible."""
    if part is False:
        return {"type": _KIND_TYPE[kind]}
    if part == {}:
        return False
    try:
        options = _negate_kind(part, kind, flatten, 0)
    except Cannot:
        return None
    if not options:
        return False
    return options[0] if len(options) == 1 else {"anyOf": options}


def _negate(schema: Any, flatten: Flatten, depth: int) -> Any:
    if depth > MAX_NEGATION_DEPTH:
        raise Cannot("negation nested too deep")
    rejected: list[str] = []
    options: list[Any] = []
    for kind in KINDS:
        part = restrict(schema, kind, flatten)
        if status(part) == "none":
            rejected.append(_KIND_TYPE[kind])
        elif status(part) == "some":
            options += _negate_kind(part, kind, flatten, depth)
    if rejected:
        options.insert(0, {"type": rejected[0] if len(rejected) == 1 else rejected})
    if not options:
        return False
    return options[0] if len(options) == 1 else {"anyOf": options}


def _negate_kind(part: dict[str, Any], kind: str, flatten: Flatten, depth: int) -> list[Any]:
    """Options (each a schema of ``kind``) whose union is the kind's values ``part`` rejects."""
    typed = {"type": _KIND_TYPE[kind]}
    rest = dict(part)
    options: list[Any] = []
    for key in ("not", "__nots__"):
        if key in rest:  # not (R and not N) = not R or N
            for inner in rest.pop(key) if key == "__nots__" else [rest.pop(key)]:
                options.append({"allOf": [inner, typed]})
    if "anyOf" in rest:  # not (R and (X or Y)) = not R or (not X and not Y)
        negs = [_negate_kind(b, kind, flatten, depth + 1) for b in rest.pop("anyOf")]
        if all(negs):
            parts = [n[0] if len(n) == 1 else {"anyOf": n} for n in negs]
            options.append(parts[0] if len(parts) == 1 else {"allOf": parts})
    if "oneOf" in rest:
        options += _negate_one_of(rest.pop("oneOf"), kind, flatten, depth)
    if rest.pop("type", None) == "integer":  # not (integer and R) = non-integral or not R
        options.append({"type": "number", "__non_integral__": [True]})
    if rest:
        options += _negate_keywords(rest, kind, flatten, depth)
    return options


def _negate_one_of(branches: list[Any], kind: str, flatten: Flatten, depth: int) -> list[Any]:
    """``not oneOf``: no branch holds, or two hold at once (pairs proved disjoint left out)."""
    if len(branches) > MAX_NEGATED_ONEOF_BRANCHES:
        raise Cannot(f"not oneOf: more than {MAX_NEGATED_ONEOF_BRANCHES} branches")
    typed = {"type": _KIND_TYPE[kind]}
    options: list[Any] = []
    negs = [_negate_kind(b, kind, flatten, depth + 1) for b in branches]
    if all(negs):
        parts = [n[0] if len(n) == 1 else {"anyOf": n} for n in negs]
        options.append(parts[0] if len(parts) == 1 else {"allOf": parts})
    for i, j in combinations(range(len(branches)), 2):
        if not pairwise_disjoint([branches[i], branches[j]]):
            options.append({"allOf": [branches[i], branches[j], typed]})
    return options


def _negate_keywords(rest: dict[str, Any], kind: str, flatten: Flatten, depth: int) -> list[Any]:
    keys = set(rest)
    if "enum" in keys:
        options = _negate_enum(rest["enum"], kind)
        others = {k: v for k, v in rest.items() if k != "enum"}
        if others:
            # not (E and R) = not E, or a value of E that R rejects: the converter lists an
            # enum's values checking each, so "not R" need not be built as a grammar here.
            options.append({"type": _KIND_TYPE[kind], "enum": rest["enum"], "not": others})
        return options
    if kind == "string":
        return _negate_string(rest)
    if kind == "number" and keys <= set(_BOUND_NEGATIONS):
        out = []
        for key, value in rest.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise Cannot(f"{key} must be a number")
            out.append({"type": "number", _BOUND_NEGATIONS[key]: value})
        return out
    if kind in ("object", "array"):
        return _negate_container(rest, kind, flatten, depth)
    raise Cannot(f"cannot negate {sorted(keys)[0]}")


def _negate_string(rest: dict[str, Any]) -> list[Any]:
    """``not (R and not in L)`` = ``not R``, or one of L; ``not R`` is the complement of R's
    patterns, lengths and formats (those asserted exactly in every draft)."""
    rest = dict(rest)
    options: list[Any] = []
    excluded = rest.pop("__not_in__", None)
    if excluded is not None:
        listed = [v for v in _as_list(excluded) if isinstance(v, str)]
        if listed:
            options.append({"type": "string", "enum": listed})
    if rest:
        unknown = set(rest) - _NEGATABLE_STRING
        inexact = [f for f in formats_of(rest) if f not in EVERY_DRAFT]
        if unknown or inexact:
            what = sorted(unknown)[0] if unknown else f"format {inexact[0]!r}"
            raise Cannot(f"cannot negate {what}")
        options.append({"type": "string", "__not_strings__": [rest]})
    return options


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _negate_enum(values: list[Any], kind: str) -> list[Any]:
    if kind == "string":
        return [{"type": "string", "__not_in__": values}]
    if kind == "boolean":
        remaining = [b for b in (True, False) if b not in values]
        return [{"enum": remaining}] if remaining else []
    if kind == "number":
        return _numbers_between(values)
    raise Cannot(f"cannot negate an enum of {kind} values")


def _numbers_between(values: list[Any]) -> list[Any]:
    """The numbers other than ``values``: the open intervals around and between them (an
    exclusive bound excludes the value in every spelling: ``1``, ``1.0``, ``1e0``)."""
    if (
        not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in values
        )
        or not values
    ):
        raise Cannot("cannot negate an enum of numbers that are not all finite")
    points = sorted(set(values))
    out: list[Any] = [{"type": "number", "exclusiveMaximum": points[0]}]
    for low, high in pairwise(points):
        out.append({"type": "number", "exclusiveMinimum": low, "exclusiveMaximum": high})
    out.append({"type": "number", "exclusiveMinimum": points[-1]})
    return out


def _negate_container(rest: dict[str, Any], kind: str, flatten: Flatten, depth: int) -> list[Any]:
    out: list[Any] = []
    low, high = _COUNT_NEGATIONS[kind]
    for key, value in rest.items():
        if key in (low, high):
            if isinstance(value, bool) or not isinstance(value, int):
                raise Cannot(f"{key} must be an integer")
            if key == low:
                out.append({"type": kind, high: value - 1})
            else:
                out.append({"type": kind, low: value + 1})
        elif kind == "object" and key in ("required", "properties"):
            if key == "properties" or "properties" not in rest:
                out += _negate_members(rest, flatten, depth)
        elif kind == "object" and key == "additionalProperties" and "patternProperties" not in rest:
            out += _negate_additional(value, list(rest.get("properties") or {}), flatten, depth)
        elif kind == "array" and key == "items" and "prefixItems" not in rest:
            neg = _negate(value, flatten, depth + 1)  # some item is outside ``items``
            if neg is not False:
                out.append({"type": "array", "contains": neg})
        elif kind == "array" and key == "contains" and not set(rest) & _CONTAINS_BOUNDS:
            neg = _negate(value, flatten, depth + 1)  # every item is outside ``contains``
            out.append({"type": "array", "items": neg})
        else:
            raise Cannot(f"cannot negate {key}")
    return out


def _negate_members(rest: dict[str, Any], flatten: Flatten, depth: int) -> list[Any]:
    """``not (required and properties)``: a required key absent, or a declared one present
    with a value its schema rejects. For a key both required and declared the two are one
    option, ``properties: {key: not schema}`` (absent, or present with such a value): one
    option per key keeps the negations of many such objects from multiplying when they are
    met together (``oneOf`` branches told apart by the key each requires)."""
    required = rest.get("required", [])
    props = rest.get("properties", {})
    if not isinstance(required, list) or not isinstance(props, dict):
        raise Cannot("required must be an array and properties an object")
    out: list[Any] = []
    for name in dict.fromkeys([r for r in required if isinstance(r, str)] + list(props)):
        neg = _negate(props[name], flatten, depth + 1) if name in props else False
        if name in required:
            out.append({"type": "object", "properties": {name: neg}})
        elif neg is not False:
            out.append({"type": "object", "required": [name], "properties": {name: neg}})
    return out


def _negate_additional(value: Any, declared: list[str], flatten: Flatten, depth: int) -> list[Any]:
    """``not additionalProperties``: some key outside ``declared`` has a value it rejects
    (``__some_member__``, which the converter compiles, see ``containers``)."""
    neg = True if value is False else _negate(value, flatten, depth + 1)
    if neg is False:
        return []
    return [{"type": "object", "__some_member__": [{"outside": declared, "value": neg}]}]


def conditional_conjuncts(
    flat: dict[str, Any], flatten: Flatten = plain_flatten
) -> tuple[dict[str, Any], list[Any]]:
    """``flat`` without the conditional keywords it could rewrite, and the schemas (mostly
    ``anyOf``s) that replace them and must also hold."""
    out = dict(flat)
    extra: list[Any] = []
    if "if" in out:
        neg = negate(out["if"], flatten)
        if neg is not None:
            cond = out.pop("if")
            then, other = out.pop("then", True), out.pop("else", True)
            extra.append({"anyOf": [{"allOf": [cond, then]}, {"allOf": [neg, other]}]})
    elif "then" in out or "else" in out:
        out.pop("then", None)
        out.pop("else", None)
    if "not" in out:
        neg = negate(out["not"], flatten)
        if neg is not None:
            out.pop("not")
            extra.append(neg)
    extra += _dependencies(out)
    return out, extra


def _dependencies(out: dict[str, Any]) -> list[Any]:
    pairs: list[tuple[str, Any]] = []
    for key in ("dependencies", "dependentRequired", "dependentSchemas"):
        value = out.get(key)
        if isinstance(value, dict) and len(pairs) + len(value) <= MAX_DEPENDENCIES:
            pairs += list(value.items())
            out.pop(key)
    extra: list[Any] = []
    for name, dep in pairs:
        absent = {"properties": {name: False}}
        if isinstance(dep, list):
            extra.append({"anyOf": [absent, {"required": [name, *dep]}]})
        else:
            extra.append({"anyOf": [absent, {"allOf": [{"required": [name]}, dep]}]})
    return extra


__all__ = ["conditional_conjuncts", "negate", "negate_kind", "plain_flatten"]
