"""A schema seen one JSON kind at a time (null, boolean, object, array, string, number).

Every JSON Schema keyword constrains values of one kind only (``minLength`` says nothing about
numbers), except the generic ones (``enum``, ``anyOf``, ``not``...). :func:`restrict` gives the
schema that says exactly what ``schema`` says about values of one kind: ``False`` when it rejects
them all, ``{}`` when it accepts them all, otherwise the keywords that matter. That is what the
``oneOf`` analysis (:mod:`gbnf_sampler.schema.overlap`) and negation
(:mod:`gbnf_sampler.schema.logic`) work on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..limits import MAX_SCHEMA_KIND_DEPTH
from .keywords import ALL_KIND_KEYWORDS, KIND_KEYWORDS, is_keyword
from .refs import merge
from .values import type_set, value_key

KINDS = ("null", "boolean", "object", "array", "string", "number")
# The types of each kind (``number`` includes ``integer``).
KIND_TYPES = {k: {k} for k in KINDS} | {"number": {"number", "integer"}}

# Keyword values that constrain nothing.
_NEUTRAL: dict[str, tuple[Any, ...]] = {
    "minLength": (0,),
    "minItems": (0,),
    "minProperties": (0,),
    "required": ([],),
    "properties": ({},),
    "patternProperties": ({},),
    "additionalProperties": (True, {}),
    "items": (True, {}),
    "propertyNames": (True, {}),
    "uniqueItems": (False,),
    "__not_in__": ([],),
}

Flatten = Callable[[Any], Any]


class Cannot(Exception):
    """The analysis cannot say (an unresolvable reference, too deep a nesting)."""


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def restrict(schema: Any, kind: str, flatten: Flatten, depth: int = 0) -> Any:
    """What ``schema`` says about values of ``kind``: ``False`` (none pass), ``{}`` (all pass),
    or a dict of the keywords that apply (``type: integer`` kept for integer-only numbers).
    ``flatten`` resolves ``$ref``/``allOf`` (the converter's); raises :class:`Cannot`."""
    if depth > MAX_SCHEMA_KIND_DEPTH:
        raise Cannot("nesting too deep")
    if isinstance(schema, bool):
        return {} if schema else False
    flat = flatten(schema)
    if isinstance(flat, bool):
        return {} if flat else False
    if not isinstance(flat, dict) or "$ref" in flat or "allOf" in flat:
        raise Cannot("unresolved schema")
    types = type_set(flat)
    if types is not None and not (types & KIND_TYPES[kind]):
        return False
    out: dict[str, Any] = {}
    if kind == "number" and types is not None and "number" not in types:
        out["type"] = "integer"
    pending: list[Any] = []
    for key, value in flat.items():
        if key == "type" or not is_keyword(key) or value in _NEUTRAL.get(key, ()):
            continue
        if key in ALL_KIND_KEYWORDS and key not in KIND_KEYWORDS[kind]:
            continue
        if key in ("enum", "const"):
            values = _kind_values([value] if key == "const" else value, kind)
            if not values:
                return False
            if not _all_values(values, kind):
                out["enum"] = values
        elif key in ("anyOf", "oneOf"):
            parts = _combinator(key, value, kind, flatten, depth)
            if parts is False:
                return False
            if parts is not True:
                if len(parts) == 1:
                    pending.append(parts[0])
                else:
                    out[key] = parts
        else:
            out[key] = value
    return _merge_all(out, pending)


def _kind_values(values: Any, kind: str) -> list[Any]:
    if not isinstance(values, list):
        raise Cannot("enum must be an array")
    return [v for v in values if kind_of(v) == kind]


def _all_values(values: list[Any], kind: str) -> bool:
    """Whether ``values`` are all the values of ``kind`` (null; both booleans)."""
    keys = {value_key(v) for v in values}
    return (kind == "null") or (kind == "boolean" and len(keys) == 2)


def _combinator(key: str, branches: Any, kind: str, flatten: Flatten, depth: int) -> Any:
    """The branches restricted to ``kind``: a list, True (always satisfied) or False (never)."""
    if not isinstance(branches, list):
        raise Cannot(f"{key} must be an array")
    parts = [restrict(b, kind, flatten, depth + 1) for b in branches]
    live = [p for p in parts if p is not False]
    unconstrained = sum(1 for p in live if p == {})
    if not live or (key == "oneOf" and unconstrained > 1):
        return False
    if key == "anyOf" and unconstrained:
        return True
    if key == "oneOf" and unconstrained == 1 and len(live) == 1:
        return True
    return live


def _merge_all(out: dict[str, Any], pending: list[Any]) -> Any:
    result: Any = out
    for part in pending:
        result = merge(result, part, "")
        if result is False:
            return False
    if isinstance(result, dict) and "__conflicts__" in result:
        raise Cannot("conflicting keywords")
    return result


def restrict_keyword(schema: dict[str, Any], key: str, kind: str) -> bool:
    """Whether ``schema`` has ``key`` with a value that constrains values of ``kind``."""
    return key in schema and key in KIND_KEYWORDS[kind] and schema[key] not in _NEUTRAL.get(key, ())


def status(restricted: Any) -> str:
    """``none``, ``all`` or ``some`` for a :func:`restrict` result."""
    if restricted is False:
        return "none"
    return "all" if restricted == {} else "some"


__all__ = [
    "KINDS",
    "KIND_TYPES",
    "Cannot",
    "kind_of",
    "restrict",
    "restrict_keyword",
    "status",
]
