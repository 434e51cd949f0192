"""JSON values and JSON Schemas built from fuzzer bytes: schemas are biased towards the keywords
the converter knows, with values of the right type most of the time and of any type sometimes."""

from __future__ import annotations

from typing import Any

from byte_reader import ByteReader

KEYWORDS = [
    "type", "enum", "const", "properties", "required", "additionalProperties",
    "patternProperties", "propertyNames", "minProperties", "maxProperties", "$ref", "$defs",
    "definitions", "anyOf", "oneOf", "allOf", "not", "items", "prefixItems", "additionalItems",
    "minItems", "maxItems", "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "$id", "$anchor", "title",
    "unevaluatedProperties", "if", "then", "else", "contains", "uniqueItems", "nullable",
    "dependentRequired", "$schema", "default",
]  # fmt: skip
TYPES = ["string", "integer", "number", "boolean", "null", "object", "array"]
FORMATS = ["date", "time", "date-time", "email", "uuid", "ipv4", "ipv6", "uri", "hostname", "x"]
NAMES = ["a", "b", "id", "name", "", "a b", "é", "\ud800", "$defs", "0"]
PATTERNS = ["^a+$", "[0-9]{2,4}", "a|b", "(ab)*c?", ".", "\\d+", "[^x]", "^$", "a{3}", "x*"]
NUMBERS: list[Any] = [0, 1, -1, 2, 3, 7, 10, 100, 0.5, -2.5, 1e-3, 10**20, -(10**20), 1e300]


def json_value(r: ByteReader, depth: int) -> Any:
    kind = r.int_in(0, 7 if depth > 0 else 4)
    if kind == 0:
        return None
    if kind == 1:
        return r.flag()
    if kind == 2:
        return r.choice(NUMBERS) if r.flag() else r.int_in(-(2**31), 2**31)
    if kind in (3, 4):
        return r.choice(NAMES) if r.flag() else r.text(12)
    if kind in (5, 6):
        return [json_value(r, depth - 1) for _ in range(r.int_in(0, 3))]
    return {r.choice(NAMES): json_value(r, depth - 1) for _ in range(r.int_in(0, 3))}


def _keyword_value(r: ByteReader, key: str, depth: int, refs: list[str]) -> Any:
    if not r.int_in(0, 7):  # sometimes anything at all
        return json_value(r, depth)
    if key == "type":
        return r.choice(TYPES) if r.flag() else [r.choice(TYPES) for _ in range(r.int_in(0, 3))]
    if key in ("enum", "required"):
        return [r.choice(NAMES) if r.flag() else json_value(r, 1) for _ in range(r.int_in(0, 4))]
    if key in ("const", "default"):
        return json_value(r, depth)
    if key in ("properties", "patternProperties", "$defs", "definitions", "dependentRequired"):
        names = PATTERNS if key == "patternProperties" else NAMES
        return {r.choice(names): schema(r, depth - 1, refs) for _ in range(r.int_in(0, 3))}
    if key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        return [schema(r, depth - 1, refs) for _ in range(r.int_in(0, 3))]
    if key in ("pattern",):
        return r.choice(PATTERNS) if r.flag() else r.text(16)
    if key == "format":
        return r.choice(FORMATS)
    if key == "$ref":
        return r.choice(refs)
    if key in ("$id", "$anchor", "title", "$schema"):
        return r.choice(NAMES)
    if key.startswith(("min", "max")) and key.endswith(("Items", "Length", "Properties")):
        return r.int_in(0, 12) if r.int_in(0, 15) else r.choice(NUMBERS)
    if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
        return r.choice(NUMBERS) if r.flag() else r.int_in(-1000, 1000)
    if key in ("uniqueItems", "nullable"):
        return r.flag()
    return schema(r, depth - 1, refs)


def schema(r: ByteReader, depth: int, refs: list[str] | None = None) -> Any:
    """A schema: mostly an object of known keywords, sometimes a boolean."""
    refs = refs or ["#", "#/$defs/a", "#/$defs/b", "#/definitions/a", "#/properties/a", "#a"]
    if depth <= 0 or not r.int_in(0, 15):
        return r.flag()
    out: dict[str, Any] = {}
    for _ in range(r.int_in(0, 4)):
        key = r.choice(KEYWORDS)
        out[key] = _keyword_value(r, key, depth, refs)
    return out
