"""Type checks of keyword values, before the converter relies on them: a keyword whose value has
the wrong JSON type makes the schema invalid (SchemaError at the keyword), whatever ``strict``
says. Keywords the converter never reads are not checked. Values of the right type but out of
range (``minLength: 1.5``) are left to the converter, which may relax them when not strict."""

from __future__ import annotations

from typing import Any

from ..errors import SchemaError

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMAS = (
    "additionalProperties", "unevaluatedProperties", "propertyNames", "items", "additionalItems",
    "not", "contains", "if", "then", "else",
)  # fmt: skip
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_NUMBERS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
_STRINGS = ("pattern", "format")


def _is_schema(value: Any) -> bool:
    return isinstance(value, (dict, bool))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _problem(key: str, value: Any) -> str | None:
    """What is wrong with ``value`` as the value of ``key`` (None: nothing)."""
    # Containers only: their elements are checked as subschemas (see KeywordChecker).
    if key in _SCHEMA_MAPS:
        if not isinstance(value, dict):
            return f"{key} must be an object"
    elif key in _SCHEMAS:
        if not (_is_schema(value) or (key == "items" and isinstance(value, list))):
            return f"{key} must be a schema (an object or a boolean)"
    elif key in _SCHEMA_LISTS:
        if not isinstance(value, list):
            return f"{key} must be an array"
    elif key == "type":
        names = value if isinstance(value, list) else [value]
        if not all(isinstance(n, str) for n in names):
            return "type must be a string or an array of strings"
    elif key == "enum" and not isinstance(value, list):
        return "enum must be an array"
    elif key == "required":
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            return "required must be an array of strings"
    elif key in _NUMBERS and not _is_number(value):
        if not (key.startswith("exclusive") and isinstance(value, bool)):  # draft-4 flags
            return f"{key} must be a number"
    elif key in _COUNTS and not _is_number(value):
        return f"{key} must be a non-negative integer"
    elif key in _STRINGS and not isinstance(value, str):
        return f"{key} must be a string"
    elif key.startswith("__") and key.endswith("__") and not isinstance(value, list):
        return f"{key} is reserved"  # the converter's own bookkeeping keys hold lists
    return None


def _subschemas(schema: dict[str, Any], path: str) -> list[tuple[Any, str]]:
    """The direct subschemas of a (type-checked) schema, with their paths."""
    out: list[tuple[Any, str]] = []
    for key, value in schema.items():
        sub = f"{path}/{_escape(key)}"
        if key in _SCHEMA_MAPS:
            out += [(v, f"{sub}/{_escape(k)}") for k, v in value.items()]
        elif key in _SCHEMA_LISTS or (key == "items" and isinstance(value, list)):
            out += [(v, f"{sub}/{i}") for i, v in enumerate(value)]
        elif key in _SCHEMAS:
            out.append((value, sub))
    return out


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class KeywordChecker:
    """Checks schemas and all their subschemas, each object once (by identity). A value in a
    schema's place that is no schema at all is an error only when ``strict``: relaxed, the
    converter reads it as any value (with a warning) if it ever reaches it."""

    def __init__(self, strict: bool = True) -> None:
        self._strict = strict
        self._seen: set[int] = set()
        self._keep: list[Any] = []  # checked objects stay alive, so their ids are not reused

    def check(self, schema: Any, path: str) -> None:
        stack = [(schema, path)]
        while stack:
            node, where = stack.pop()
            if not _is_schema(node):
                if not self._strict:
                    continue
                raise SchemaError("a schema must be an object or a boolean", where)
            if isinstance(node, bool) or id(node) in self._seen:
                continue
            self._seen.add(id(node))
            self._keep.append(node)
            for key, value in node.items():
                problem = _problem(key, value)
                if problem is not None:
                    raise SchemaError(problem, f"{where}/{_escape(key)}")
            stack += _subschemas(node, where)
