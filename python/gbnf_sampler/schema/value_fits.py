"""Whether an ``enum``/``const`` value surely satisfies the other keywords of its schema.

Used to drop enum values a schema's other keywords exclude. The check is conservative: a value
it cannot decide here (a subschema to check a member against, a pattern it cannot compile) is
reported as not fitting, and leaving it out keeps the grammar sound.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ..regex import automata
from .formats import FORMATS
from .kinds import ARRAY_KEYWORDS, OBJECT_KEYWORDS, restrict_keyword
from .refs import type_set, value_key
from .scalars import Unsupported, regex_node, widest_language


def value_fits(v: Any, flat: dict[str, Any]) -> bool:
    """Whether an enum/const value surely satisfies the other keywords of its schema (False
    when it cannot be checked here: leaving the value out keeps the grammar sound)."""
    if "not" in flat or "__nots__" in flat:
        return False
    types = type_set(flat)
    if types is not None and _json_type(v) not in types:
        return False
    if isinstance(v, str):
        return _string_fits(v, flat)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return _number_fits(Decimal(str(v)), flat)
    if isinstance(v, list):
        return _array_fits(v, flat)
    if isinstance(v, dict):
        return _object_fits(v, flat)
    return True


def _array_fits(v: list[Any], flat: dict[str, Any]) -> bool:
    if not flat.get("minItems", 0) <= len(v) <= flat.get("maxItems", len(v)):
        return False
    if flat.get("uniqueItems") is True and len({value_key(x) for x in v}) < len(v):
        return False
    others = ARRAY_KEYWORDS - _COUNTS - {"uniqueItems"}
    return not any(restrict_keyword(flat, k, "array") for k in others)


def _object_fits(v: dict[str, Any], flat: dict[str, Any]) -> bool:
    required = flat.get("required", [])
    if not all(r in v for r in required if isinstance(r, str)):
        return False
    if not flat.get("minProperties", 0) <= len(v) <= flat.get("maxProperties", len(v)):
        return False
    props = flat.get("properties") or {}
    for name in v:
        sub = props.get(name, flat.get("additionalProperties", True))
        if sub is False or (sub is not True and sub != {}):
            return False  # a subschema to check the member against: not done here
    others = OBJECT_KEYWORDS - _COUNTS - {"required", "properties", "additionalProperties"}
    return not any(restrict_keyword(flat, k, "object") for k in others)


_COUNTS = frozenset({"minItems", "maxItems", "minProperties", "maxProperties"})


def _string_fits(v: str, flat: dict[str, Any]) -> bool:
    if v in flat.get("__not_in__", []):
        return False
    if len(v) < flat.get("minLength", 0) or len(v) > flat.get("maxLength", len(v)):
        return False
    patterns = flat.get("__patterns__", [flat["pattern"]] if "pattern" in flat else [])
    formats = flat.get("__formats__", [flat["format"]] if "format" in flat else [])
    try:
        nodes = [regex_node(p, "", search=True) for p in patterns]
        nodes += [regex_node(FORMATS[f], "", search=False) for f in formats if f in FORMATS]
        if not all(automata.from_regex(n).matches(v) for n in nodes):
            return False
        for excluded in flat.get("__not_strings__", []):
            parts = widest_language(excluded, "")
            if all(automata.from_regex(n).matches(v) for n in parts):
                return False
        return True
    except (Unsupported, automata.TooLarge):
        return False  # cannot check the value: leaving it out keeps the grammar sound


_NUMBER_CHECKS: dict[str, Callable[[Decimal, Decimal], bool]] = {
    "minimum": operator.ge,
    "maximum": operator.le,
    "exclusiveMinimum": operator.gt,
    "exclusiveMaximum": operator.lt,
    "multipleOf": lambda x, b: b <= 0 or x % b == 0,
}


def _number_fits(x: Decimal, flat: dict[str, Any]) -> bool:
    for key, ok in _NUMBER_CHECKS.items():
        bound = flat.get(key)
        numeric = isinstance(bound, (int, float)) and not isinstance(bound, bool)
        if numeric and not ok(x, Decimal(str(bound))):
            return False
    return True


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


__all__ = ["value_fits"]
