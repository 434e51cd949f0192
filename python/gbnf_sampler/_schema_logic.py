"""``not``, ``if``/``then``/``else`` and dependencies, rewritten as ``anyOf`` where exact.

``if C then T else E`` is ``anyOf[allOf[C, T], allOf[not C, E]]`` (the branches are disjoint),
``dependentRequired {a: [b]}`` is ``anyOf[{a absent}, {required: [a, b]}]`` and
``dependentSchemas {a: S}`` is ``anyOf[{a absent}, allOf[{required: [a]}, S]]``. That needs
``not C``: :func:`negate` builds it for the schemas conditions are usually made of (types,
constant strings/booleans/null, required, properties of such, anyOf/allOf of such) and gives up
(None) otherwise, leaving the keyword to be reported as unsupported.
"""

from __future__ import annotations

from typing import Any

from ._schema_refs import ANNOTATIONS, TYPES, type_set

MAX_DEPENDENCIES = 6
_OBJECT_KEYS = {"properties", "required", "type"}


def _core(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in ANNOTATIONS}


def _negate_type(types: set[str]) -> Any:
    if "integer" in types and "number" not in types:
        return None  # not(integer) = non-integral numbers: no grammar for it here
    return {"type": [t for t in TYPES if t not in types]}


def _negate_values(values: list[Any]) -> Any:
    if not all(isinstance(v, (str, bool)) or v is None for v in values):
        return None
    strings = [v for v in values if isinstance(v, str)]
    bools = {v for v in values if isinstance(v, bool)}
    options: list[Any] = [{"type": ["object", "array", "number"]}]
    options.append({"type": "string", "__not_in__": strings} if strings else {"type": "string"})
    if None not in values:
        options.append({"type": "null"})
    remaining = [b for b in (True, False) if b not in bools]
    if remaining:
        options.append({"enum": remaining})
    return {"anyOf": options}


def _negate_object(schema: dict[str, Any]) -> Any:
    props = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(props, dict) or not isinstance(required, list):
        return None
    if type_set(schema) not in (None, {"object"}):
        return None
    options: list[Any] = [{"type": [t for t in TYPES if t not in ("object", "integer")]}]
    for name in required:
        options.append({"type": "object", "properties": {name: False}})
    for name, sub in props.items():
        neg = negate(sub)
        if neg is None:
            return None
        if neg is not False:
            options.append({"type": "object", "required": [name], "properties": {name: neg}})
    return {"anyOf": options}


def negate(schema: Any) -> Any:
    """A schema for exactly the values ``schema`` rejects (None when not expressible)."""
    if isinstance(schema, bool):
        return not schema
    if not isinstance(schema, dict):
        return None
    core = _core(schema)
    if not core:
        return False
    keys = set(core)
    if keys == {"type"}:
        return _negate_type(type_set(core) or set())
    if keys <= {"const", "enum"} and len(keys) == 1:
        return _negate_values([core["const"]] if "const" in core else list(core["enum"]))
    if keys <= _OBJECT_KEYS and keys & {"properties", "required"}:
        return _negate_object(core)
    if keys == {"anyOf"} and isinstance(core["anyOf"], list):
        parts = [negate(s) for s in core["anyOf"]]
        return None if any(p is None for p in parts) else {"allOf": parts}
    if keys == {"allOf"} and isinstance(core["allOf"], list):
        parts = [negate(s) for s in core["allOf"]]
        return None if any(p is None for p in parts) else {"anyOf": parts}
    if len(keys) > 1 and "type" in keys and keys - {"type"} <= {"const", "enum"}:
        split = [{"type": core["type"]}, {k: core[k] for k in keys - {"type"}}]
        return negate({"allOf": split})
    return None


def conditional_conjuncts(flat: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """``flat`` without the conditional keywords it could rewrite, and the schemas (mostly
    ``anyOf``s) that replace them and must also hold."""
    out = dict(flat)
    extra: list[Any] = []
    if "if" in out:
        neg = negate(out["if"])
        if neg is not None:
            cond = out.pop("if")
            then, other = out.pop("then", True), out.pop("else", True)
            extra.append({"anyOf": [{"allOf": [cond, then]}, {"allOf": [neg, other]}]})
    elif "then" in out or "else" in out:
        out.pop("then", None)
        out.pop("else", None)
    if "not" in out:
        neg = negate(out["not"])
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
