"""``uniqueItems`` over a small finite item language, as a grammar.

Distinct items are not context-free in general, but when the items can only be one of k values
(an ``enum``/``const``, ``boolean``, ``null``, integers within bounds of at most
:data:`~gbnf_sampler.limits.MAX_UNIQUE_DOMAIN` values) the arrays of distinct items are a finite
language: one rule per set S of values already written, ``S ::= "," v S+{v} | ...`` for every
v not in S.
That is 2^k rules at most (fewer with ``maxItems``), so k is capped by :data:`MAX_UNIQUE_STATES`.
When the items are open-ended instead (:func:`open_ended`: any value, free strings, unbounded
numbers, arrays, objects that take any further key, closed objects that settle, and unions of
them), or scalars with at least 2^32 values (:func:`~.scalar_items.many_scalars`: strings,
numbers), or unions of those with open-ended ones (:func:`_searched_union`), or enums of
scalars too large for subset rules, the array rule is an ordinary one marked by a
``#@ distinct-items`` directive, and the matcher refuses the byte that would close an item
equal to an earlier one, or that leaves the item nothing but copies to become, or a ``,`` when
no new item can follow (csrc/matcher/distinct_items.h, matcher.cc). What the converter checks
is what keeps that exact: a prefix the matcher accepts can always be finished with an item
that is new. Elsewhere ``uniqueItems`` is reported (SchemaError when strict, dropped with a
warning otherwise).
"""

from __future__ import annotations

from math import comb
from typing import Any

from ..limits import MAX_SCHEMA_KIND_DEPTH, MAX_UNIQUE_DOMAIN, MAX_UNIQUE_STATES
from ..regex import automata, tree
from .context import SubschemaCompiler
from .emit import NEVER, elements, wrap
from .formats import ASSERTED, format_never_ends
from .keywords import keywords_of
from .scalar_items import integer_bound, many_scalars, only_scalars
from .scalars import Unsupported, formats_of, kw_int, pointer, regex_node
from .values import type_set, value_key


def finite_values(
    conv: SubschemaCompiler, schema: Any, path: str, depth: int = 0
) -> list[Any] | None:
    """The values an item schema allows when they are few and known (else None; ``depth``:
    of nested unions, bounded for a union that refers back to itself)."""
    if depth > MAX_SCHEMA_KIND_DEPTH:
        return None
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
            candidates = _union_values(conv, flat, path, depth)
        if candidates is None:
            return None
        verdicts = [conv.instances.check(v, flat) for v in candidates]
        if None in verdicts:
            return None
        kept = [v for v, ok in zip(candidates, verdicts, strict=True) if ok]
    return list({value_key(v): v for v in kept}.values())


def _union_values(
    conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int
) -> list[Any] | None:
    """The values of an ``anyOf``/``oneOf`` whose branches each allow few known values: their
    union, a superset that the caller checks value by value against the whole schema."""
    for word in ("anyOf", "oneOf"):
        branches = flat.get(word)
        if isinstance(branches, list) and branches:
            out: list[Any] = []
            for i, branch in enumerate(branches):
                values = finite_values(conv, branch, pointer(path, word, i), depth + 1)
                if values is None:
                    return None
                out += values
            return out
    return None


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
            integer_bound(flat, "minimum", "exclusiveMinimum", 1),
            integer_bound(flat, "maximum", "exclusiveMaximum", -1),
        )
        if lo is None or hi is None or hi - lo + 1 > MAX_UNIQUE_DOMAIN:
            return None
        out += list(range(lo, hi + 1))
    return out


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
        items_path = pointer(path, "items")
        items = flat.get("items", True)
        if (
            open_ended(conv, items, items_path)
            or many_scalars(conv, items, items_path)
            or _searched_union(conv, items, items_path)
        ):
            return _distinct(conv, flat, path, depth)
        raise Unsupported(
            "uniqueItems is exact only when the items are a small finite set (enum, const, "
            "boolean, null, integers within a small minimum/maximum range), scalars with at "
            "least 2^32 values (strings, numbers), or open-ended (any value, arrays, objects "
            "that take any further key, closed objects whose last open member is followed only "
            "by required constants)",
            where,
        )
    lo = kw_int(flat, "minItems", path, 0) or 0
    hi = min(len(values), kw_int(flat, "maxItems", path) or len(values))
    if sum(comb(len(values), i) for i in range(hi + 1)) > MAX_UNIQUE_STATES:
        if not any(isinstance(v, (dict, list)) for v in values):
            # The matcher keeps scalar items apart, and refuses a "," once they have run out.
            return None if lo > hi else _distinct(conv, flat, path, depth)
        raise Unsupported(
            f"uniqueItems over {len(values)} values needs more than {MAX_UNIQUE_STATES} "
            "rules (at most 10 values, or a smaller maxItems, or no objects or arrays)",
            where,
        )
    if lo > hi:
        return None
    return _UniqueArrays(conv, values, lo, hi, depth, path).rule()


# Keywords that leave an open-ended value open-ended, per type (the others may bound it; the
# numeric bounds are checked apart).
_OPEN_STRING_KEYS = frozenset({"type", "minLength", "pattern", "format"})
_OPEN_OBJECT_KEYS = frozenset(
    {
        "type",
        "properties",
        "required",
        "minProperties",
        "additionalProperties",
        "patternProperties",  # only when each takes any value (_takes_any_key)
        "dependentRequired",
    }
)
# (A format asserts nothing about a number: the checkers look at strings only.)
_OPEN_NUMBER_KEYS = frozenset({"type", "minimum", "exclusiveMinimum", "format"})
_OPEN_ARRAY_KEYS = frozenset({"type", "minItems", "items", "uniqueItems"})
_INFINITE_TYPES = frozenset({"string", "object", "number", "integer", "array"})
_ALL_TYPES = _INFINITE_TYPES | {"boolean", "null"}


def open_ended(conv: SubschemaCompiler, schema: Any, path: str, depth: int = 0) -> bool:
    """Every proper prefix of an item's JSON text can still be finished in infinitely many ways,
    or (a literal, checked at its first letter) in exactly one: the item is any value, a string
    without maxLength (a pattern or an asserted format only when its automaton never ends,
    :func:`automata.never_ends`), an object that accepts any number of further keys, an array
    without maxItems whose items are free, a number without bounds, an integer of at least 1
    with no upper bound, ``true``/``false``/``null``, or a choice among those (finitely many
    other values may join or leave the choice: they change no prefix's infinity); a closed
    object only when the rest is forced once its last open member ends
    (:func:`_closed_object_settles`). Bounded numbers and bounded strings are not (string
    items have their own rule, :func:`_many_strings`). ``depth``: of the schemas looked into,
    bounded for a schema that contains itself (a tree of arrays): deeper, not open-ended."""
    if depth > MAX_SCHEMA_KIND_DEPTH:
        return False
    flat = conv.flatten(schema, path, ())
    if not isinstance(flat, dict):
        return flat is True
    keys = keywords_of(flat)
    for word in ("anyOf", "oneOf"):
        if keys == {word} and isinstance(flat[word], list) and flat[word]:
            return _open_union(conv, flat[word], pointer(path, word), word == "oneOf", depth)
    types = type_set(flat)
    if types is None:
        types = set(_ALL_TYPES)
    if not types & _INFINITE_TYPES:
        return False  # only true/false/null: finitely many values
    if types == {"object"} and not _takes_any_key(conv, flat, path, depth):
        return _closed_object_settles(conv, flat, path, depth)
    if types == {"object"}:
        # Branches that only require members leave an object that takes any key as open: it
        # can always take one more key that no branch names.
        keys -= {w for w in ("anyOf", "oneOf") if w in keys and _only_requirements(flat[w])}
    allowed = frozenset().union(
        *(
            keys_of
            for type_names, keys_of in (
                ({"string"}, _OPEN_STRING_KEYS),
                ({"object"}, _OPEN_OBJECT_KEYS),
                ({"number", "integer"}, _OPEN_NUMBER_KEYS),
                ({"array"}, _OPEN_ARRAY_KEYS),
            )
            if types & type_names
        ),
        {"type"},
    )
    if not keys <= allowed:
        return False  # maxLength, maxProperties, propertyNames, anything else that may bound it
    if "string" in types and not _string_never_ends(flat, path):
        return False
    if "object" in types and not _takes_any_key(conv, flat, path, depth):
        return False
    if "array" in types and not _array_never_ends(conv, flat, path, depth):
        return False
    return "integer" not in types or _numbers_never_end(flat, types)


def _array_never_ends(conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int) -> bool:
    """An array without maxItems can always take one more item when its items have a value
    (infinitely many distinct ones under ``uniqueItems``)."""
    items = flat.get("items", True)
    where = pointer(path, "items")
    if items is True or items == {}:
        return True
    if open_ended(conv, items, where, depth + 1):
        return True
    if flat.get("uniqueItems") is True:
        return False
    return bool(finite_values(conv, items, where))


def _takes_any_key(conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int) -> bool:
    """The object can always take one more key: any further key whose schema has a value
    (``additionalProperties`` absent, true, or a schema with a value), or any key that matches a
    pattern with infinitely many matches (``^x-``), where no pattern restricts values (the
    grammar writes such keys after the declared ones, as many as wanted)."""
    patterns = flat.get("patternProperties", {})
    if not isinstance(patterns, dict) or any(v is not True and v != {} for v in patterns.values()):
        return False
    extra = flat.get("additionalProperties", conv.options.additional_properties is not False)
    if extra is True or extra == {}:
        return True
    where = pointer(path, "additionalProperties")
    if isinstance(extra, dict) and (
        open_ended(conv, extra, where, depth + 1) or finite_values(conv, extra, where)
    ):
        return True
    where = pointer(path, "patternProperties")
    return any(isinstance(p, str) and _pattern_never_ends(p, where) for p in patterns)


_CLOSED_OBJECT_KEYS = frozenset(
    {"type", "properties", "required", "additionalProperties", "anyOf", "oneOf"}
)


def _closed_object_settles(
    conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int
) -> bool:
    """A closed object (no further keys) whose members come in the schema's order, where the
    last member that can take infinitely many values is open-ended and every member after it
    is required with a single value, spelled one way: each prefix still has infinitely many
    completions until that member's value ends, and exactly one after it (the matcher walks
    that forced rest when the value ends, csrc/matcher/distinct_items.h). ``anyOf``/``oneOf``
    branches that only list ``required`` members change neither, as long as a ``oneOf`` names
    only members before the open one (else writing one could forbid it)."""
    if not keywords_of(flat) <= _CLOSED_OBJECT_KEYS:
        return False
    props = flat.get("properties") or {}
    required = flat.get("required") or []
    if not isinstance(props, dict) or not isinstance(required, list):
        return False
    if conv.options.property_order != "schema" and len(props) > 1:
        return False  # any order: the members after the open one are not forced
    if any(r not in props for r in required):
        return False  # a required name the object cannot hold
    names = list(props)
    for i in range(len(names) - 1, -1, -1):
        where = pointer(path, "properties", names[i])
        if open_ended(conv, props[names[i]], where, depth + 1):
            return _only_required_choices(flat, names, i)
        values = finite_values(conv, props[names[i]], where)
        if names[i] not in required or values is None or len(values) != 1:
            return False
        if not _one_spelling(values[0]):
            return False  # 1, 1.0, 1e0...: the walk would stop at the choice
    return False


def _only_required_choices(flat: dict[str, Any], names: list[str], open_index: int) -> bool:
    """Every ``anyOf``/``oneOf`` branch only lists required members (a ``oneOf`` only members
    before ``names[open_index]``)."""
    for word, allowed in (("anyOf", names), ("oneOf", names[:open_index])):
        branches = flat.get(word, [])
        if not isinstance(branches, list):
            return False
        for b in branches:
            if not isinstance(b, dict) or keywords_of(b) != {"required"}:
                return False
            if not isinstance(b["required"], list) or any(r not in allowed for r in b["required"]):
                return False
    return True


def _only_requirements(branches: Any) -> bool:
    return isinstance(branches, list) and all(
        isinstance(b, dict)
        and keywords_of(b) == {"required"}
        and isinstance(b["required"], list)
        and all(isinstance(r, str) for r in b["required"])
        for b in branches
    )


def _one_spelling(value: Any) -> bool:
    """The grammar writes ``value`` one way only: no number inside (a constant number may be
    written with trailing zeros or a zero exponent)."""
    if isinstance(value, dict):
        return all(_one_spelling(v) for v in value.values())
    if isinstance(value, list):
        return all(_one_spelling(v) for v in value)
    return value is None or isinstance(value, (bool, str))


def _searched_union(conv: SubschemaCompiler, schema: Any, path: str) -> bool:
    """An ``anyOf`` (or a ``oneOf`` of branches of different types) whose branches are each
    open-ended or scalars: at the items' top level every prefix of a scalar is searched, so
    such a branch needs no more than a value that is new, which the open-ended branches
    (infinitely many values) or the scalar ones with at least 2^32 values always have."""
    flat = conv.flatten(schema, path, ())
    if not isinstance(flat, dict):
        return False
    for word in ("anyOf", "oneOf"):
        branches = flat.get(word)
        if keywords_of(flat) != {word} or not isinstance(branches, list) or not branches:
            continue
        where = [pointer(path, word, i) for i in range(len(branches))]
        flats = [conv.flatten(b, w, ()) for b, w in zip(branches, where, strict=True)]
        if word == "oneOf" and not _disjoint_types(flats):
            return False
        opened = [open_ended(conv, b, w, 1) for b, w in zip(branches, where, strict=True)]
        for b, w, is_open in zip(flats, where, opened, strict=True):
            if not is_open and not (isinstance(b, dict) and only_scalars(conv, b, w, 1)):
                return False
        return any(opened) or any(
            many_scalars(conv, b, w, 1) for b, w in zip(branches, where, strict=True)
        )
    return False


def _numbers_never_end(flat: dict[str, Any], types: set[str]) -> bool:
    """Every prefix of a number grows into infinitely many values: any number without bounds
    (``0`` can become ``0.5``), an integer only when it cannot be 0 (``0`` and ``-0`` end it):
    a lower bound of at least 1."""
    if "number" in types:
        return "minimum" not in flat and "exclusiveMinimum" not in flat
    low = integer_bound(flat, "minimum", "exclusiveMinimum", 1)
    return low is not None and low >= 1


def _open_union(
    conv: SubschemaCompiler, branches: list[Any], path: str, exclusive: bool, depth: int
) -> bool:
    """An ``anyOf``/``oneOf`` is open-ended when its open-ended branches accept every value of
    the others, each a small finite set (``anyOf: [{type: string}, {enum: [...]}]``): the union
    is then the open-ended branches' union, less finitely many values for a ``oneOf``. A
    ``oneOf`` of open-ended branches that may overlap is not (what it leaves out may be
    infinite)."""
    open_flats: list[Any] = []
    finite: list[list[Any]] = []
    for i, sub in enumerate(branches):
        where = pointer(path, i)
        if open_ended(conv, sub, where, depth + 1):
            open_flats.append(conv.flatten(sub, where, ()))
            continue
        values = finite_values(conv, sub, where)
        if values is None:
            return False
        finite.append(values)
    if not open_flats or (exclusive and not _disjoint_types(open_flats)):
        return False
    return all(
        any(conv.instances.check(v, f) is True for f in open_flats)
        for values in finite
        for v in values
    )


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


def _disjoint_types(flats: list[Any]) -> bool:
    """No two of these schemas share a JSON type (so no value matches two of them)."""
    seen: set[str] = set()
    for flat in flats:
        types = type_set(flat) if isinstance(flat, dict) else None
        if types is None or types & seen:
            return False
        seen |= types
    return True


def _distinct(conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int) -> str | None:
    """The array rule with a ``#@ distinct-items`` directive: the items' grammar as for any
    array; the matcher keeps them pairwise distinct."""
    with conv.plain_numbers():
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
