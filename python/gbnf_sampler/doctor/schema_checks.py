"""``endless_extras``: schema objects and arrays whose size nothing bounds.

A model writing a JSON document under a schema stops an object or array only when it chooses
to: when the schema allows any number of extra properties (``additionalProperties`` not false,
no ``maxProperties``) or items (no ``maxItems``), a small model can keep adding keys or elements
until it runs out of tokens. This check walks the schema (properties, items, definitions,
combinators; not ``not`` or ``if``, whose schemas do not generate) and reports each such object
or array with the keyword that bounds it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .findings import Finding, LineIndex, make_finding
from .jsonpos import escape_pointer, json_positions

_OBJECT_WORDS = (
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "required",
    "minProperties",
    "maxProperties",
    "propertyNames",
)
_ARRAY_WORDS = ("items", "prefixItems", "additionalItems", "minItems", "maxItems", "contains")
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SINGLES = ("additionalProperties", "unevaluatedProperties", "additionalItems", "contains")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_MISSING = object()


def _types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def _subschemas(schema: dict[str, Any], pointer: str) -> Iterator[tuple[Any, str]]:
    for word in _MAPS:
        value = schema.get(word)
        if isinstance(value, dict):
            for key, sub in value.items():
                yield sub, f"{pointer}/{word}/{escape_pointer(key)}"
    for word in _SINGLES:
        if word in schema:
            yield schema[word], f"{pointer}/{word}"
    for word in _LISTS:
        value = schema.get(word)
        if isinstance(value, list):
            for i, sub in enumerate(value):
                yield sub, f"{pointer}/{word}/{i}"
    items = schema.get("items")
    if isinstance(items, list):
        for i, sub in enumerate(items):
            yield sub, f"{pointer}/items/{i}"
    elif items is not None:
        yield items, f"{pointer}/items"


def _object_problem(schema: dict[str, Any], default_extra: bool | None) -> tuple[str, str] | None:
    if "maxProperties" in schema:
        return None
    extra = schema.get("additionalProperties", schema.get("unevaluatedProperties", _MISSING))
    if extra is _MISSING and default_extra is False:
        extra = False
    if extra is False:
        if schema.get("patternProperties"):
            return (
                "accepts any number of properties matching its patternProperties",
                'set "maxProperties": N there',
            )
        return None
    if extra is _MISSING:
        return (
            "accepts any number of extra properties (additionalProperties is not false and "
            "maxProperties is not set)",
            'add "additionalProperties": false there (or convert with '
            "additional_properties=False / --no-additional-properties, which does it wherever a "
            'schema says nothing), or set "maxProperties": N',
        )
    return (
        "accepts any number of extra properties (additionalProperties allows them and "
        "maxProperties is not set)",
        'set "maxProperties": N there, or "additionalProperties": false',
    )


def _array_problem(schema: dict[str, Any]) -> tuple[str, str] | None:
    if "maxItems" in schema:
        return None
    items = schema.get("items", _MISSING)
    if items is False and "prefixItems" in schema:
        return None
    if isinstance(items, list) and schema.get("additionalItems") is False:
        return None
    return "accepts any number of items (maxItems is not set)", 'set "maxItems": N there'


def _problems(schema: Any, default_extra: bool | None) -> Iterator[tuple[str, str, str]]:
    """(pointer, what, fix) for every unbounded object or array, in document order."""
    work: list[tuple[Any, str]] = [(schema, "")]
    while work:
        node, pointer = work.pop()
        if not isinstance(node, dict):
            continue
        types = _types(node)
        no_type = "type" not in node
        if "object" in types or (no_type and any(w in node for w in _OBJECT_WORDS)):
            found = _object_problem(node, default_extra)
            if found:
                yield pointer, f"the object at {pointer or '/'} {found[0]}", found[1]
        if "array" in types or (no_type and any(w in node for w in _ARRAY_WORDS)):
            found = _array_problem(node)
            if found:
                yield pointer, f"the array at {pointer or '/'} {found[0]}", found[1]
        work.extend(reversed(list(_subschemas(node, pointer))))


def _as_document(schema: Any) -> Any:
    if isinstance(schema, (str, bytes)):
        return json.loads(schema)
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        return schema.model_json_schema()
    return schema


def check_endless_extras(
    schema: Any, text: str | None, additional_properties: bool | None
) -> list[Finding]:
    """The findings for ``schema`` (dict, JSON text or Pydantic model class); positions point
    into ``text`` (the schema file) when given. ``additional_properties``: the converter
    option (False forbids extras wherever the schema says nothing)."""
    problems = list(_problems(_as_document(schema), additional_properties))
    if not problems:
        return []
    spans: dict[str, tuple[int, int]] = {}
    keys: dict[str, int] = {}
    index = None
    if text is not None:
        try:
            spans, keys = json_positions(text)
            index = LineIndex(text)
        except ValueError:
            index = None
    out = []
    for pointer, message, fix in problems:
        message += ": a model may keep adding to it until it runs out of tokens"
        start = keys.get(pointer, spans.get(pointer, (0, 0))[0])
        end = spans.get(pointer, (start, start + 1))[1]
        where = index if pointer in spans else None
        out.append(
            make_finding(
                "endless_extras", message, fix, index=where, start=start, end=end, pointer=pointer
            )
        )
    return out


__all__ = ["check_endless_extras"]
