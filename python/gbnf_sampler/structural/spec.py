"""Reading structural-tag specs: typed field access with errors that name the JSON path.

Every accessor raises :class:`~gbnf_sampler.errors.StructuralTagError` whose ``path`` is a JSON
pointer into the spec (``/format/elements/1/begin``) and whose message says what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import StructuralTagError

_MISSING = object()


def pointer(path: str, key: str | int) -> str:
    """``path`` extended by one key (JSON pointer escaping ``~`` and ``/``)."""
    text = str(key).replace("~", "~0").replace("/", "~1")
    return f"{path}/{text}"


def fail(path: str, message: str) -> StructuralTagError:
    return StructuralTagError(message, path)


def check_keys(fmt: Mapping[str, Any], allowed: tuple[str, ...], path: str) -> None:
    """Unknown keys are errors (a typo must not silently drop a constraint)."""
    for key in fmt:
        if key not in allowed and key != "type":
            hint = ", ".join(k for k in allowed) or "none"
            raise fail(pointer(path, key), f"unknown field {key!r} (fields here: type, {hint})")


def get(fmt: Mapping[str, Any], key: str, path: str, default: Any = _MISSING) -> Any:
    if key in fmt:
        return fmt[key]
    if default is _MISSING:
        kind = fmt.get("type", "format")
        raise fail(path, f"{kind!r} needs the field {key!r}")
    return default


def get_str(fmt: Mapping[str, Any], key: str, path: str, default: Any = _MISSING) -> str:
    value = get(fmt, key, path, default)
    if not isinstance(value, str):
        raise fail(pointer(path, key), f"{key!r} must be a string, got {type(value).__name__}")
    return value


def get_bool(fmt: Mapping[str, Any], key: str, path: str, default: bool) -> bool:
    value = get(fmt, key, path, default)
    if not isinstance(value, bool):
        raise fail(pointer(path, key), f"{key!r} must be true or false, got {value!r}")
    return value


def get_int(fmt: Mapping[str, Any], key: str, path: str, low: int) -> int:
    value = get(fmt, key, path)
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise fail(pointer(path, key), f"{key!r} must be an integer >= {low}, got {value!r}")
    return value


def get_list(fmt: Mapping[str, Any], key: str, path: str, default: Any = _MISSING) -> list[Any]:
    value = get(fmt, key, path, default)
    if not isinstance(value, (list, tuple)):
        raise fail(pointer(path, key), f"{key!r} must be a list, got {type(value).__name__}")
    return list(value)


def get_strings(fmt: Mapping[str, Any], key: str, path: str, *, nonempty: bool) -> list[str]:
    values = get_list(fmt, key, path, [])
    for i, v in enumerate(values):
        if not isinstance(v, str) or (nonempty and not v):
            raise fail(pointer(pointer(path, key), i), "must be a non-empty string")
    return values


def format_object(value: Any, path: str) -> Mapping[str, Any]:
    """A format object: a dict with a string ``type``."""
    if not isinstance(value, Mapping):
        raise fail(path, f"a format must be an object with a 'type', got {type(value).__name__}")
    kind = value.get("type")
    if not isinstance(kind, str):
        raise fail(path, "a format needs a string 'type' (e.g. 'tag', 'sequence', 'any_text')")
    return value


def unwrap(spec: Any) -> tuple[Mapping[str, Any], str]:
    """The root format of a spec and its path: ``{"type": "structural_tag", "format": F}`` (also
    as OpenAI's ``response_format``), the older ``{"structures": [...], "triggers": [...]}``
    form, or a format object itself."""
    if not isinstance(spec, Mapping):
        raise fail("", f"a structural tag must be an object, got {type(spec).__name__}")
    if spec.get("type") == "structural_tag":
        if "format" in spec:
            check_keys(spec, ("format",), "")
            return format_object(spec["format"], "/format"), "/format"
        if "structures" in spec:
            return _legacy(spec), ""
        raise fail("", "a 'structural_tag' needs 'format' (or the older 'structures'/'triggers')")
    if "structures" in spec and "type" not in spec:
        return _legacy(spec), ""
    return format_object(spec, ""), ""


def _legacy(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """xgrammar's first structural-tag form: ``structures`` (begin, schema, end) and ``triggers``
    (and SGLang's ``at_least_one``, sent for ``tool_choice: "required"``) becomes one
    ``triggered_tags``."""
    check_keys(spec, ("structures", "triggers", "at_least_one"), "")
    tags = []
    for i, item in enumerate(get_list(spec, "structures", "")):
        at = pointer("/structures", i)
        if not isinstance(item, Mapping):
            raise fail(at, "a structure must be an object with begin, schema, end")
        check_keys(item, ("begin", "schema", "end"), at)
        tags.append(
            {
                "type": "tag",
                "begin": get_str(item, "begin", at),
                "content": {"type": "json_schema", "json_schema": get(item, "schema", at)},
                "end": get_str(item, "end", at),
            }
        )
    triggers = get_strings(spec, "triggers", "", nonempty=True)
    at_least_one = get_bool(spec, "at_least_one", "", False)
    return {
        "type": "triggered_tags",
        "triggers": triggers,
        "tags": tags,
        "at_least_one": at_least_one,
    }


__all__ = [
    "check_keys",
    "fail",
    "format_object",
    "get",
    "get_bool",
    "get_int",
    "get_list",
    "get_str",
    "get_strings",
    "pointer",
    "unwrap",
]
