"""``uniqueItems`` over a small finite item language, as a grammar.

Distinct items are not context-free in general, but when the items can only be one of k values
(an ``enum``/``const``, ``boolean``, ``null``, integers within bounds of at most
:data:`~gbnf_sampler.limits.MAX_UNIQUE_DOMAIN` values) the arrays of distinct items are a finite
language: one rule per set S of values already written, ``S ::= "," v S+{v} | ...`` for every
v not in S.
That is 2^k rules at most (fewer with ``maxItems``), so k is capped by :data:`MAX_UNIQUE_STATES`.
When the items are open-ended instead (:func:`open_ended`: free strings, objects that take
any further key, and unions of them), the array rule is an ordinary one marked by a
``#@ distinct-items`` directive, and the matcher refuses the byte that would close an item equal
to an earlier one (csrc/matcher/distinct_items.h). Open-endedness is what keeps that exact: until
its last byte, an item can still become infinitely many values, so a prefix the matcher accepts
can always be finished with an item that is new. Elsewhere ``uniqueItems`` is reported
(SchemaError when strict, dropped with a warning otherwise).
"""

from __future__ import annotations

import math
from math import comb
from typing import Any

from ..limits import MAX_UNIQUE_DOMAIN, MAX_UNIQUE_STATES
from ..regex import automata, tree
from .context import SubschemaCompiler
from .emit import NEVER, elements, wrap
from .formats import ASSERTED, format_never_ends
from .refs import type_set, value_key
from .scalars import Unsupported, formats_of, kw_int, pointer, regex_node


def finite_values(conv: SubschemaCompiler, schema: Any, path: str) -> list[Any] | None:
    """The values an item schema allows when they are few and known (else None)."""
    flat = conv.flatten(schema, path, ())
    if not isinstance(flat, dict):
        return None
    if "const" in flat or "enum" in flat:
        values = [flat["const"]] if "const" in flat else flat["enum"]
        if not isinstance(values, list):
            return None
        verdicts = [conv.instances.check(v, flat) for v in values]
        if None in verdicts:
            return None
        kept = [v for v, ok in zip(values, verdicts, strict=True) if ok]
    else:
        candidates = _small_domain(flat)
        if candidates is None:
            return None
        verdicts = [conv.instances.check(v, flat) for v in candidates]
        if None in verdicts:
            return None
        kept = [v for v, ok in zip(candidates, verdicts, strict=True) if ok]
    return list({value_key(v): v for v in kept}.values())


def _small_domain(flat: dict[str, Any]) -> list[Any] | None:
    """Every value of a schema typed null, boolean or integer within bounds of at most
    :data:`MAX_UNIQUE_DOMAIN` integers (the other keywords are then checked value by value)."""
    types = type_set(flat)
    if types is None or not types <= {"boolean", "null", "integer"}:
        return None
    out: list[Any] = ([True, False] if "boolean" in types else []) + (
        [None] if "null" in types else []
    )
    if "integer" in types:
        lo, hi = (
            _bound(flat, "minimum", "exclusiveMinimum", 1),
            _bound(flat, "maximum", "exclusiveMaximum", -1),
        )
        if lo is None or hi is None or hi - lo + 1 > MAX_UNIQUE_DOMAIN:
            return None
        out += list(range(lo, hi + 1))
    return out


def _bound(flat: dict[str, Any], key: str, exclusive: str, step: int) -> int | None:
    """The tightest integer bound from ``key`` (inclusive) and ``exclusive`` (None: none)."""
    found: list[int] = []
    for name, strict in ((key, False), (exclusive, True)):
        value = flat.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        exact = math.ceil(value) if step > 0 else math.floor(value)
        if strict and exact == value:
            exact += step
        found.append(exact)
    if not found:
        return None
    return max(found) if step > 0 else min(found)


_NOTES = frozenset({"title", "description", "default", "examples", "$comment"})


def unique_array_rule(
    conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int
) -> str | None:
    """The arrays of distinct items (``uniqueItems: true``) when the items are a small finite
    set; raises :class:`Unsupported` otherwise."""
    where = pointer(path, "uniqueItems")
    if flat.get("prefixItems"):
        raise Unsupported("uniqueItems with prefixItems cannot be expressed as a grammar", where)
    values = finite_values(conv, flat.get("items", True), pointer(path, "items"))
    if values is None:
        if open_ended(conv, flat.get("items", True), pointer(path, "items")):
            return _distinct(conv, flat, path, depth)
        raise Unsupported(
            "uniqueItems is exact only when the items are a small finite set (enum, const, "
            "boolean, null, integers within a small minimum/maximum range) or open-ended "
            "(strings without maxLength, whose pattern or format if any lets every match grow; "
            "objects that take any further key)",
            where,
        )
    lo = kw_int(flat, "minItems", path, 0) or 0
    hi = min(len(values), kw_int(flat, "maxItems", path) or len(values))
    if sum(comb(len(values), i) for i in range(hi + 1)) > MAX_UNIQUE_STATES:
        raise Unsupported(
            f"uniqueItems over {len(values)} values needs more than {MAX_UNIQUE_STATES} "
            "rules (at most 10 values, or a smaller maxItems)",
            where,
        )
    if lo > hi:
        return None
    return _UniqueArrays(conv, values, lo, hi, depth, path).rule()


# Keywords that leave an open-ended string or object open-ended (the others may bound it).
_OPEN_STRING_KEYS = frozenset({"type", "minLength", "pattern", "format"})
_OPEN_OBJECT_KEYS = frozenset(
    {"type", "properties", "required", "minProperties", "additionalProperties", "dependentRequired"}
)


def open_ended(conv: SubschemaCompiler, schema: Any, path: str) -> bool:
    """Every proper prefix of an item's JSON text can still be finished in infinitely many ways:
    the item is a string without maxLength (a pattern or an asserted format only when its
    automaton never ends, :func:`automata.never_ends`), or an object that accepts any number of
    further keys, or a choice among those. Numbers are not (the byte that ends one may be read
    by another rule), nor are literals and closed objects."""
    flat = conv.flatten(schema, path, ())
    if not isinstance(flat, dict):
        return False
    if set(flat) - _NOTES == {"anyOf"} and isinstance(flat["anyOf"], list) and flat["anyOf"]:
        return all(
            open_ended(conv, sub, pointer(path, "anyOf", i)) for i, sub in enumerate(flat["anyOf"])
        )
    types = type_set(flat)
    if not types or not types <= {"string", "object"}:
        return False
    if not set(flat) - _NOTES <= _OPEN_STRING_KEYS | _OPEN_OBJECT_KEYS:
        return False  # maxLength, maxProperties, propertyNames, anything else that may bound it
    if "string" in types and not _string_never_ends(flat, path):
        return False
    if "object" in types:
        extra = flat.get("additionalProperties", conv.options.additional_properties is not False)
        if extra is not True and extra != {}:
            return False
    return True


def _string_never_ends(flat: dict[str, Any], path: str) -> bool:
    """A string's ``pattern`` or asserted ``format`` (one at most) lets every match grow in
    infinitely many ways; formats that are annotations only constrain nothing."""
    patterns = [flat["pattern"]] if "pattern" in flat else []
    asserted = [f for f in formats_of(flat) if f in ASSERTED]
    if len(patterns) + len(asserted) > 1:
        return False
    if patterns:
        return _pattern_never_ends(patterns[0], path)
    return not asserted or format_never_ends(asserted[0])


def _pattern_never_ends(pattern: Any, path: str) -> bool:
    """Every prefix of a string matching ``pattern`` can be finished in infinitely many ways."""
    try:
        node = regex_node(pattern, pointer(path, "pattern"), search=True)
        if isinstance(node, tree.Lang):
            dfa = automata.language_dfa(node)
        else:
            dfa = automata.from_regex(tree.without(node, tree.SURROGATES))
    except (Unsupported, automata.TooLarge):
        return False
    return automata.never_ends(dfa)


def _distinct(conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int) -> str | None:
    """The array rule with a ``#@ distinct-items`` directive: the items' grammar as for any
    array; the matcher keeps them pairwise distinct."""
    item = conv.value(flat.get("items", True), pointer(path, "items"), depth + 1)
    lo = kw_int(flat, "minItems", path, 0) or 0
    hi = kw_int(flat, "maxItems", path)
    if hi is not None and hi < lo:
        return None
    if item is None:
        return None if lo > 0 else wrap(conv.rules, conv.layout, NEVER, "[]", True, depth, "array")
    sep = conv.layout.sep(conv.layout.depth(depth))
    body = elements([], item, 0, max(lo, 1), hi, sep)
    hint = (path.rsplit("/", 1)[-1] or "array") + "-distinct"
    return wrap(conv.rules, conv.layout, body, "[]", lo == 0, depth, hint, distinct=True)


class _UniqueArrays:
    def __init__(
        self, conv: SubschemaCompiler, values: list[Any], lo: int, hi: int, depth: int, path: str
    ) -> None:
        self.conv = conv
        self.items = [conv.literal_value(v, depth + 1) for v in values]
        self.lo, self.hi = lo, hi
        self.depth = depth
        self.sep = conv.layout.sep(conv.layout.depth(depth))
        self.hint = (path.rsplit("/", 1)[-1] or "array") + "-unique"
        self.names: dict[int, str] = {}

    def rule(self) -> str | None:
        first = [f"{item} {self.state(1 << i)}" for i, item in enumerate(self.items)]
        body = "(" + " | ".join(first) + ")" if self.hi > 0 else NEVER
        return wrap(
            self.conv.rules, self.conv.layout, body, "[]", self.lo == 0, self.depth, self.hint
        )

    def state(self, used: int) -> str:
        """The rest of an array whose items so far are the set ``used`` (a bit mask)."""
        if used not in self.names:
            name = self.conv.rules.reserve(f"{self.hint}-{used}")
            self.names[used] = name
            count = used.bit_count()
            options = ['""'] if count >= self.lo else []
            if count < self.hi:
                for i, item in enumerate(self.items):
                    if not used & (1 << i):
                        options.append(f"{self.sep} {item} {self.state(used | (1 << i))}")
            self.conv.rules.define(name, " | ".join(options))
        return self.names[used]


__all__ = ["unique_array_rule"]
