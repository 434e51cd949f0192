"""Whether one concrete JSON value satisfies a schema: True, False, or None (cannot tell).

The converter writes ``enum``/``const`` values as literals, and keeps exactly the values the rest
of their schema allows: that is this check, a small JSON Schema validator over the keywords the
converter knows (all the assertion keywords of drafts 4 to 2020-12, plus the converter's own
``__...__`` keys of merged schemas). Three-valued so that nothing is guessed: a pattern that
Python's ``re`` and ECMA-262 read differently on the value, a ``format`` compiled only
approximately, a reference that does not resolve, ``unevaluated*`` next to combinators, or
``$dynamicRef`` answer None, and the converter reports the value (SchemaError when strict) instead
of dropping it, so that "no value satisfies the schema" is never a guess.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from ..limits import MAX_SCHEMA_LOGIC_DEPTH
from ..regex import automata
from .formats import format_verdict
from .kinds import kind_of
from .refs import normalize
from .scalars import Unsupported, regex_node
from .values import value_key

Verdict = bool | None
Resolve = Callable[[str], Any]  # an absolute $ref -> its schema (raises LookupError if unknown)

_NUMBER_CHECKS: dict[str, Callable[[Decimal, Decimal], bool]] = {
    "minimum": operator.ge,
    "maximum": operator.le,
    "exclusiveMinimum": operator.gt,
    "exclusiveMaximum": operator.lt,
}


def all_of(verdicts: Iterable[Verdict]) -> Verdict:
    out: Verdict = True
    for v in verdicts:
        if v is False:
            return False
        if v is None:
            out = None
    return out


def any_of(verdicts: Iterable[Verdict]) -> Verdict:
    out: Verdict = False
    for v in verdicts:
        if v is True:
            return True
        if v is None:
            out = None
    return out


def _not(v: Verdict) -> Verdict:
    return None if v is None else not v


def _one_of(verdicts: list[Verdict]) -> Verdict:
    sure = verdicts.count(True)
    if sure > 1:
        return False
    if None in verdicts:
        return None
    return sure == 1


class InstanceChecker:
    """Checks values against schemas; ``resolve`` follows ``$ref``s (absolute URIs)."""

    def __init__(self, resolve: Resolve) -> None:
        self.resolve = resolve
        self.patterns: dict[tuple[str, str], automata.Dfa | None] = {}
        # enum list (by identity, kept alive here) -> its values' keys: checking each value of
        # a long enum against the schema that holds it would otherwise key the list each time
        self._enum_keys: dict[int, tuple[Any, frozenset[str]]] = {}

    def check(self, value: Any, schema: Any, depth: int = 0) -> Verdict:
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, dict) or depth > MAX_SCHEMA_LOGIC_DEPTH:
            return None
        schema = normalize(schema)
        parts = [
            self._generic(value, schema, depth),
            self._by_kind(value, schema, depth),
        ]
        return all_of(parts)

    def _keys_of(self, values: Any) -> frozenset[str]:
        cached = self._enum_keys.get(id(values))
        if cached is None or cached[0] is not values:
            cached = (values, frozenset(value_key(v) for v in _list(values)))
            self._enum_keys[id(values)] = cached
        return cached[1]

    # --- keywords about every kind ------------------------------------------------------------
    def _generic(self, value: Any, schema: dict[str, Any], depth: int) -> Verdict:
        out: list[Verdict] = []
        if "type" in schema:
            out.append(_type_ok(value, schema["type"]))
        if "enum" in schema:
            out.append(value_key(value) in self._keys_of(schema["enum"]))
        if "const" in schema:
            out.append(value_key(value) == value_key(schema["const"]))
        if any(k in schema for k in ("__conflicts__", "__too_many__", "$dynamicRef")):
            out.append(None)
        if "$recursiveRef" in schema:
            out.append(None)
        if isinstance(schema.get("$ref"), str):
            out.append(self._ref(value, schema["$ref"], depth))
        out += self._combinators(value, schema, depth)
        return all_of(out)

    def _ref(self, value: Any, uri: str, depth: int) -> Verdict:
        try:
            target = self.resolve(uri)
        except LookupError:
            return None
        return self.check(value, target, depth + 1)

    def _combinators(self, value: Any, schema: dict[str, Any], depth: int) -> list[Verdict]:
        out: list[Verdict] = []
        sub = depth + 1
        for part in _list(schema.get("allOf")):
            out.append(self.check(value, part, sub))
        if "anyOf" in schema:
            out.append(any_of(self.check(value, b, sub) for b in _list(schema["anyOf"])))
        if "oneOf" in schema:
            out.append(_one_of([self.check(value, b, sub) for b in _list(schema["oneOf"])]))
        nots = _list(schema.get("__nots__")) + ([schema["not"]] if "not" in schema else [])
        out += [_not(self.check(value, n, sub)) for n in nots]
        if "if" in schema:
            cond = self.check(value, schema["if"], sub)
            branch = schema.get("then", True) if cond else schema.get("else", True)
            out.append(None if cond is None else self.check(value, branch, sub))
        return out

    def _by_kind(self, value: Any, schema: dict[str, Any], depth: int) -> Verdict:
        kind = kind_of(value)
        if kind == "string":
            return self._string(value, schema)
        if kind == "number":
            return _number(value, schema)
        if kind == "array":
            return self._array(value, schema, depth)
        if kind == "object":
            return self._object(value, schema, depth)
        return True

    # --- strings ------------------------------------------------------------------------------
    def _string(self, value: str, schema: dict[str, Any]) -> Verdict:
        out: list[Verdict] = [_length(len(value), schema, "minLength", "maxLength")]
        out += [self.pattern(p, value) for p in _patterns(schema)]
        formats = _list(schema.get("__formats__")) or [schema.get("format")]
        out += [format_verdict(f, value) for f in formats if isinstance(f, str)]
        excluded = _list(schema.get("__not_in__"))
        if value in excluded:
            out.append(False)
        for other in _list(schema.get("__not_strings__")):
            out.append(_not(self._string(value, other) if isinstance(other, dict) else None))
        return all_of(out)

    def pattern(self, pattern: Any, value: str) -> Verdict:
        """Whether ``pattern`` finds a match in ``value`` under both Python's ``re`` and
        ECMA-262 (True), under neither (False), or they disagree / it cannot compile (None)."""
        narrow = self._language(pattern, "both")
        if narrow is not None and narrow.matches(value):
            return True
        wide = self._language(pattern, "either")
        if wide is not None and not wide.matches(value):
            return False
        return None

    def _language(self, pattern: Any, reading: str) -> automata.Dfa | None:
        key = (str(pattern), reading)
        if key not in self.patterns:
            try:
                node = regex_node(pattern, "", search=True, reading=reading)
                self.patterns[key] = automata.from_regex(node)
            except (Unsupported, automata.TooLarge):
                self.patterns[key] = None
        return self.patterns[key]

    # --- arrays -------------------------------------------------------------------------------
    def _array(self, value: list[Any], schema: dict[str, Any], depth: int) -> Verdict:
        sub = depth + 1
        out: list[Verdict] = [_length(len(value), schema, "minItems", "maxItems")]
        prefix = _list(schema.get("prefixItems"))
        for item, item_schema in zip(value, prefix, strict=False):
            out.append(self.check(item, item_schema, sub))
        if "items" in schema:
            out += [self.check(x, schema["items"], sub) for x in value[len(prefix) :]]
        if schema.get("uniqueItems") is True:
            out.append(len({value_key(x) for x in value}) == len(value))
        if "contains" in schema:
            hits = [self.check(x, schema["contains"], sub) for x in value]
            lo, hi = schema.get("minContains", 1), schema.get("maxContains")
            sure, maybe = hits.count(True), hits.count(None)
            if sure >= lo and (hi is None or sure + maybe <= hi):
                out.append(True)
            elif sure + maybe < lo or (hi is not None and sure > hi):
                out.append(False)
            else:
                out.append(None)
        if schema.get("unevaluatedItems", True) not in (True, {}):
            out.append(None)
        return all_of(out)

    # --- objects ------------------------------------------------------------------------------
    def _object(self, value: dict[str, Any], schema: dict[str, Any], depth: int) -> Verdict:
        sub = depth + 1
        out: list[Verdict] = [_length(len(value), schema, "minProperties", "maxProperties")]
        out += [r in value for r in _list(schema.get("required")) if isinstance(r, str)]
        for need in _list(schema.get("__some_member__")):
            outside = set(need["outside"])
            members = [m for name, m in value.items() if name not in outside]
            out.append(any_of(self.check(m, need["value"], sub) for m in members))
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        patterns = schema.get("patternProperties")
        patterns = patterns if isinstance(patterns, dict) else {}
        additional = schema.get("additionalProperties", True)
        if "unevaluatedProperties" in schema:
            if _has_combinators(schema):
                return None
            additional = schema["unevaluatedProperties"]
        for name, member in value.items():
            if name in props:
                out.append(self.check(member, props[name], sub))
            matched: list[Verdict] = []
            for pattern, pattern_schema in patterns.items():
                hit = self.pattern(pattern, name)
                matched.append(hit)
                if hit is not False:
                    verdict = self.check(member, pattern_schema, sub)
                    out.append(verdict if hit else (None if verdict is False else True))
            if name not in props and additional not in (True, {}):
                applies = _not(any_of(matched))
                if applies is not False:
                    verdict = self.check(member, additional, sub)
                    out.append(verdict if applies else (None if verdict is False else True))
            if "propertyNames" in schema:
                out.append(self.check(name, schema["propertyNames"], sub))
        out += self._dependencies(value, schema, sub)
        return all_of(out)

    def _dependencies(
        self, value: dict[str, Any], schema: dict[str, Any], sub: int
    ) -> list[Verdict]:
        out: list[Verdict] = []
        for key in ("dependencies", "dependentRequired", "dependentSchemas"):
            table = schema.get(key)
            if not isinstance(table, dict):
                continue
            for name, dep in table.items():
                if name not in value:
                    continue
                if isinstance(dep, list):
                    out.append(all(isinstance(d, str) and d in value for d in dep))
                else:
                    out.append(self.check(value, dep, sub))
        return out


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _patterns(schema: dict[str, Any]) -> list[Any]:
    return _list(schema.get("__patterns__")) or ([schema["pattern"]] if "pattern" in schema else [])


def _has_combinators(schema: dict[str, Any]) -> bool:
    keys = ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "dependentSchemas", "__nots__")
    return any(k in schema for k in keys)


def _type_ok(value: Any, types: Any) -> Verdict:
    names = [types] if isinstance(types, str) else _list(types)
    kind = kind_of(value)
    for name in names:
        if name in (kind, "any") or (name == "integer" and kind == "number" and _integral(value)):
            return True
    return False


def _integral(value: Any) -> bool:
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _count(schema: dict[str, Any], key: str) -> Decimal | None:
    bound = schema.get(key)
    if isinstance(bound, bool) or not isinstance(bound, (int, float)):
        return None
    return Decimal(str(bound))


def _length(n: int, schema: dict[str, Any], low: str, high: str) -> Verdict:
    lo, hi = _count(schema, low), _count(schema, high)
    return (lo is None or n >= lo) and (hi is None or n <= hi)


def _number(value: Any, schema: dict[str, Any]) -> Verdict:
    try:
        x = Decimal(str(value))
    except InvalidOperation:
        return None
    if schema.get("__non_integral__") and x == x.to_integral_value():
        return False
    for key, ok in _NUMBER_CHECKS.items():
        bound = _count(schema, key)
        if bound is not None and not ok(x, bound):
            return False
    step = _count(schema, "multipleOf")
    if step is None or step <= 0:
        return True
    try:
        return x % step == 0
    except InvalidOperation:  # the quotient has too many digits for the decimal context
        return None


__all__ = ["InstanceChecker", "Verdict", "all_of", "any_of"]
