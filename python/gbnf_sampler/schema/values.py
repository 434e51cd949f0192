"""JSON values and types as JSON Schema compares them."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")


def value_key(value: Any) -> str:
    """A key under which JSON values that JSON Schema considers equal compare equal."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return repr(value)
        return "n:" + format(Decimal(str(value)).normalize(), "f")
    if isinstance(value, list):
        return "[" + ",".join(value_key(v) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted((k, value_key(v)) for k, v in value.items())
        return "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in items) + "}"
    return json.dumps(value)


def type_set(schema: dict[str, Any]) -> set[str] | None:
    """The ``type`` keyword as a set (None when absent). ``number`` includes ``integer``."""
    raw = schema.get("type")
    if raw is None:
        return None
    names = [raw] if isinstance(raw, str) else list(raw)
    out = {t for t in names if t in TYPES}
    if "number" in out:
        out.add("integer")
    if "any" in names:
        out = set(TYPES)
    return out


__all__ = ["TYPES", "type_set", "value_key"]
