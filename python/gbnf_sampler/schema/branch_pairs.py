"""The branch pairs of two ``anyOf``/``oneOf`` lists that can hold together.

Merging ``allOf: [{anyOf: A}, {anyOf: B}]`` gives ``anyOf`` over the pairs of A x B. A chain of
``if``/``then`` on one discriminating property (``if: {properties: {name: {const: "add"}}}``,
then the same for twenty other names) becomes one two-branch ``anyOf`` per condition, so the
product has 2^k pairs, of which all but k + 1 name two different values for one required
property: no JSON value satisfies them. Dropping those pairs while merging keeps the product
linear (Yippee-Ki-JSON's configuration: 28,000 merged branches down to a few hundred).

The proofs read only what a schema states inline (``type``, ``required``, ``enum``/``const`` of
the value and of its properties, through ``allOf``); ``$ref``, ``anyOf`` and every other keyword
are ignored, which can only make a pair look satisfiable. A pair is dropped only when no value
can satisfy it, so the product means exactly what the unpruned one did.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from .values import type_set, value_key

# How deep a property's ``allOf`` members are read for its values; deeper ones are ignored
# (sound, see above).
_MAX_DEPTH = 12
# Facts remembered per thread (schemas are read-only once built; a thread's own cache needs no
# lock), cleared when full and after each conversion (see forget_facts). cloudify merges 50,000
# schemas: with room for 4,096 the chains of products were read again from their start (its
# conversion took 7.2 s, 3.2 s with this room, one run each).
_REMEMBERED_FACTS = 1 << 16
_remembered = threading.local()


def forget_facts() -> None:
    """Drops this thread's remembered facts (and the schemas they keep alive)."""
    _remembered.__dict__.pop("facts", None)


@dataclass
class _Facts:
    """What every value satisfying a schema surely has (None: no constraint known)."""

    types: set[str] | None = None
    values: set[str] | None = None  # value keys the value itself is among
    required: set[str] = field(default_factory=set)
    absent: set[str] = field(default_factory=set)  # properties whose schema is false
    members: dict[str, set[str]] = field(default_factory=dict)  # property -> value keys
    empty: bool = False  # a part is ``false``

    def add(self, other: _Facts) -> None:
        self.empty |= other.empty
        self.types = _both(self.types, other.types)
        self.values = _both(self.values, other.values)
        self.required |= other.required
        self.absent |= other.absent
        for name, keys in other.members.items():
            self.members[name] = _both(self.members.get(name), keys) or set()

    def impossible(self) -> bool:
        if self.empty or self.types == set() or self.values == set():
            return True
        if self.types != {"object"}:
            return False  # required and properties say nothing about other kinds
        return any(name in self.absent or self.members.get(name) == set() for name in self.required)


def _both(a: set[str] | None, b: set[str] | None) -> set[str] | None:
    if a is None:
        return None if b is None else set(b)
    return set(a) if b is None else a & b


def _value_keys(schema: Any, depth: int = 0) -> set[str] | None:
    """The value keys a value satisfying ``schema`` is among (its ``const``/``enum``, and those
    of its ``allOf`` members), or None when unknown."""
    if schema is False:
        return set()
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    keys: set[str] | None = None
    if "const" in schema:
        keys = {value_key(schema["const"])}
    if isinstance(schema.get("enum"), list):
        keys = _both(keys, {value_key(v) for v in schema["enum"]})
    for part in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        keys = _both(keys, _value_keys(part, depth + 1))
    return keys


def facts(schema: Any) -> _Facts:
    """What every value satisfying ``schema`` surely has. Remembered per schema object: the
    branches of a product are ``allOf`` pairs of the previous product's branches, so reading
    each from scratch cost the depth of the chain per branch (cloudify: 1.3 million calls)."""
    if not isinstance(schema, dict):
        return _Facts(empty=schema is False)
    known: dict[int, tuple[Any, _Facts]] = _remembered.__dict__.setdefault("facts", {})
    entry = known.get(id(schema))
    if entry is not None and entry[0] is schema:  # (the entry keeps its schema alive)
        return entry[1]
    out = _read_facts(schema)
    if len(known) >= _REMEMBERED_FACTS:
        known.clear()
    known[id(schema)] = (schema, out)
    return out


def _read_facts(schema: dict[str, Any]) -> _Facts:
    out = _Facts()
    types = type_set(schema)
    out.types = None if types is None else set(types)
    out.values = _value_keys({k: schema[k] for k in ("const", "enum") if k in schema})
    required = schema.get("required")
    if isinstance(required, list):
        out.required = {r for r in required if isinstance(r, str)}
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            if sub is False:
                out.absent.add(name)
            keys = _value_keys(sub)
            if keys is not None:
                out.members[name] = keys
    parts = schema.get("allOf")
    for part in parts if isinstance(parts, list) else []:
        out.add(facts(part))
    return out


def compatible_pairs(xs: list[Any], ys: list[Any], context: list[Any]) -> list[tuple[Any, Any]]:
    """The pairs of ``xs`` x ``ys`` (in product order) that some value satisfying every schema
    of ``context`` might satisfy; the others are proved empty."""
    shared = _Facts()
    for schema in context:
        shared.add(facts(schema))
    mine = [facts(x) for x in xs]
    theirs = [facts(y) for y in ys]
    return [
        (x, y)
        for x, fx in zip(xs, mine, strict=True)
        for y, fy in zip(ys, theirs, strict=True)
        if not _impossible_together(shared, fx, fy)
    ]


def pairwise_disjoint(branches: list[Any]) -> bool:
    """True when no JSON value satisfies two of the branches (a ``oneOf`` that is an ``anyOf``:
    its exclusion analysis can be skipped)."""
    known = [facts(b) for b in branches]
    return all(_impossible_together(fi, fj) for i, fi in enumerate(known) for fj in known[i + 1 :])


def _impossible_together(*parts: _Facts) -> bool:
    together = _Facts()
    for part in parts:
        together.add(part)
    return together.impossible()


__all__ = ["compatible_pairs", "facts", "pairwise_disjoint"]
