"""``oneOf`` made exact: branches rewritten so that no JSON value matches two of them.

``oneOf`` accepts a value matched by exactly one branch; a grammar can only say "one of these
alternatives" (``anyOf``). The two agree when the branches are disjoint. The analysis goes one JSON
kind at a time (:mod:`gbnf_sampler.schema.kinds`), since most branches differ by kind, and for
each kind and pair of branches that both admit it:

* proves the pair disjoint (different enum values, required property with disjoint values or
  forbidden by the other branch, string patterns and exact formats whose automata do not
  intersect, numeric ranges, item or property counts...); or
* drops the kind from both when both accept every value of it (e.g. ``{"type": "string"}`` twice:
  no string matches exactly one); or
* excludes the other branch from this one with :func:`negate_kind` (``A and not B``).

When none of this works the ``oneOf`` is not exact: :func:`exclusive_alternatives` answers None
and the converter reports it. Proofs only ever ignore constraints (which can only make a pair look
overlapping), so "disjoint" is always true of jsonschema's own reading.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ..errors import SchemaError
from ..limits import (
    MAX_ANYOF_BRANCHES,
    MAX_ONEOF_BRANCHES,
    MAX_OVERLAP_PROOF_DEPTH,
    MAX_REPEAT,
)
from ..regex import automata, tree
from .formats import EVERY_DRAFT, format_dfa
from .kinds import KINDS, Cannot, Flatten, restrict
from .logic import negate_kind
from .refs import merge
from .scalars import Unsupported, formats_of, regex_node
from .values import value_key

_Bound = tuple[Decimal, bool] | None


class _Analysis:
    def __init__(self, flatten: Flatten) -> None:
        self.flatten = flatten
        self.languages: dict[str, automata.Dfa | None] = {}

    def restrict(self, schema: Any, kind: str) -> Any:
        return restrict(schema, kind, self.flatten)

    # --- disjointness -----------------------------------------------------------------------
    def disjoint(self, a: Any, b: Any, kind: str, depth: int = 0) -> bool:
        """True when no value of ``kind`` satisfies both restricted schemas."""
        if a is False or b is False:
            return True
        if depth > MAX_OVERLAP_PROOF_DEPTH or a == {} or b == {}:
            return False
        for x, y in ((a, b), (b, a)):
            for key in ("anyOf", "oneOf"):  # oneOf matches fewer values than anyOf
                if key in x:
                    rest = {k: v for k, v in x.items() if k != key}
                    try:
                        parts = [merge(rest, branch, "") for branch in x[key]]
                    except SchemaError:  # too many combinations: cannot tell
                        return False
                    return all(self.disjoint(p, y, kind, depth + 1) for p in parts)
        if self.values_disjoint(a, b, kind):
            return True
        check = {
            "string": self.strings_disjoint,
            "number": _numbers_disjoint,
            "object": self.objects_disjoint,
            "array": self.arrays_disjoint,
        }.get(kind)
        return check is not None and bool(check(a, b, depth))

    def disjoint_any(self, x: Any, y: Any, depth: int) -> bool:
        """True when no JSON value satisfies both (unrestricted) schemas."""
        try:
            return all(
                self.disjoint(self.restrict(x, k), self.restrict(y, k), k, depth + 1) for k in KINDS
            )
        except Cannot:
            return False

    def values_disjoint(self, a: dict[str, Any], b: dict[str, Any], kind: str) -> bool:
        va, vb = a.get("enum"), b.get("enum")
        if va is not None and vb is not None:
            return not ({value_key(v) for v in va} & {value_key(v) for v in vb})
        if va is not None:
            return all(self.rejects(v, b, kind) for v in va)
        if vb is not None:
            return all(self.rejects(v, a, kind) for v in vb)
        return False

    def rejects(self, value: Any, schema: dict[str, Any], kind: str) -> bool:
        """True when the restricted ``schema`` surely rejects ``value``."""
        if "enum" in schema and value_key(value) not in {value_key(v) for v in schema["enum"]}:
            return True
        if kind == "string":
            lo, hi = _length(schema, "minLength", "maxLength")
            if len(value) < lo or (hi is not None and len(value) > hi):
                return True
            if value in schema.get("__not_in__", []):
                return True
            language = self.language(schema)
            return language is not None and not language.matches(value)
        if kind == "number":
            if schema.get("type") == "integer" and not float(value).is_integer():
                return True
            return not _in_range(Decimal(str(value)), _range(schema))
        if kind == "object":
            required = schema.get("required", [])
            return any(isinstance(r, str) and r not in value for r in required)
        if kind == "array":
            lo, hi = _length(schema, "minItems", "maxItems")
            return len(value) < lo or (hi is not None and len(value) > hi)
        return False

    def language(self, schema: dict[str, Any], reading: str = "either") -> automata.Dfa | None:
        """The strings the patterns of ``schema`` may match (``reading="either"``: the widest
        reading, with the formats whose automaton is exactly what jsonschema's checker accepts
        in every draft; "both": the strings the patterns surely match), or None (neither, or
        too large)."""
        patterns = schema.get("__patterns__", [schema["pattern"]] if "pattern" in schema else [])
        formats = [f for f in formats_of(schema) if f in EVERY_DRAFT] if reading == "either" else []
        if not patterns and not formats:
            return None
        key = "\x00".join([reading, *map(str, patterns), "\x01", *formats])
        if key not in self.languages:
            try:
                nodes = [regex_node(p, "", search=True, reading=reading) for p in patterns]
                found = [format_dfa(f) for f in formats]
                if None in found:
                    raise automata.TooLarge
                dfas = [automata.from_regex(node) for node in nodes]
                dfas += [d for d in found if d is not None]
                dfa = dfas[0]
                for other in dfas[1:]:
                    dfa = automata.intersect(dfa, other)
                self.languages[key] = dfa
            except (Unsupported, automata.TooLarge):
                self.languages[key] = None
        return self.languages[key]

    def strings_disjoint(self, a: dict[str, Any], b: dict[str, Any], depth: int) -> bool:
        la, ha = _length(a, "minLength", "maxLength")
        lb, hb = _length(b, "minLength", "maxLength")
        if (ha is not None and ha < lb) or (hb is not None and hb < la):
            return True
        da, db = self.language(a), self.language(b)
        if da is None or db is None:
            return False
        try:
            both = automata.intersect(da, db)
            lo, hi = max(la, lb), min(x for x in (ha, hb, MAX_REPEAT) if x is not None)
            if lo or hi != MAX_REPEAT:
                both = automata.intersect(
                    both, automata.from_regex(tree.rep(tree.Chars(automata.ALL), lo, hi))
                )
            return both.is_empty()
        except automata.TooLarge:
            return False

    def objects_disjoint(self, a: dict[str, Any], b: dict[str, Any], depth: int) -> bool:
        la, ha = _length(a, "minProperties", "maxProperties")
        lb, hb = _length(b, "minProperties", "maxProperties")
        if (ha is not None and ha < lb) or (hb is not None and hb < la):
            return True
        for x, y in ((a, b), (b, a)):
            for name in _required(x):
                mine, theirs = self.member_schemas(x, name), self.member_schemas(y, name)
                if any(self.unsatisfiable(s) for s in theirs):
                    return True
                if any(self.disjoint_any(s, t, depth) for s in mine for t in theirs):
                    return True
        return False

    def member_schemas(self, schema: dict[str, Any], name: str) -> list[Any]:
        """Schemas that the value of property ``name`` surely has to satisfy, if present."""
        props = _properties(schema)
        out = [props[name]] if name in props else []
        matched = unsure = False
        for pattern, sub in (schema.get("patternProperties") or {}).items():
            narrow = self.language({"pattern": pattern}, "both")
            wide = self.language({"pattern": pattern})
            if narrow is not None and narrow.matches(name):
                out.append(sub)
                matched = True
            elif wide is None or wide.matches(name):
                unsure = True  # may match: neither its schema nor additionalProperties is sure
        if name not in props and not matched and not unsure:
            out.append(schema.get("additionalProperties", True))
        return out

    def unsatisfiable(self, schema: Any) -> bool:
        try:
            return all(self.restrict(schema, k) is False for k in KINDS)
        except Cannot:
            return False

    def arrays_disjoint(self, a: dict[str, Any], b: dict[str, Any], depth: int) -> bool:
        la, ha = _length(a, "minItems", "maxItems")
        lb, hb = _length(b, "minItems", "maxItems")
        if (ha is not None and ha < lb) or (hb is not None and hb < la):
            return True
        at_least = max(la, lb)
        prefix_a, prefix_b = a.get("prefixItems", []), b.get("prefixItems", [])
        for i in range(at_least):
            item_a = _item(prefix_a, a, i)
            item_b = _item(prefix_b, b, i)
            if (
                item_a is not True
                and item_b is not True
                and self.disjoint_any(item_a, item_b, depth)
            ):
                return True
            if i >= max(len(prefix_a), len(prefix_b)):
                break  # later positions all see the same two item schemas
        return False

    def items_only_disjoint(self, mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
        """Both constrain arrays by ``items`` (and counts) only, with disjoint item schemas."""
        plain = {"items", "minItems", "maxItems"}
        if set(mine) - plain or set(theirs) - plain or "items" not in mine or "items" not in theirs:
            return False
        return self.disjoint_any(mine["items"], theirs["items"], 0)

    # --- the rewrite ------------------------------------------------------------------------
    def alternatives(self, branches: list[Any], own: list[Any]) -> list[Any] | None:
        parts = [[self.restrict(b, k) for k in KINDS] for b in branches]
        self.own = own
        n = len(branches)
        plain: list[list[str]] = [[] for _ in branches]
        excluding: list[dict[str, list[int]]] = [{} for _ in branches]
        for ki, kind in enumerate(KINDS):
            members = [i for i in range(n) if parts[i][ki] is not False]
            if sum(1 for i in members if parts[i][ki] == {}) >= 2:
                continue  # two branches take every value of this kind: none passes oneOf
            overlapping: dict[int, list[int]] = {i: [] for i in members}
            for x, i in enumerate(members):
                for j in members[x + 1 :]:
                    if not self.disjoint(parts[i][ki], parts[j][ki], kind):
                        overlapping[i].append(j)
                        overlapping[j].append(i)
            for i in members:
                others = overlapping[i]
                if any(parts[j][ki] == {} for j in others):
                    continue  # every value of this kind that i takes, j takes too
                if others:
                    excluding[i][kind] = others
                else:
                    plain[i].append(kind)
        return self.build(branches, parts, plain, excluding)

    def build(
        self,
        branches: list[Any],
        parts: list[list[Any]],
        plain: list[list[str]],
        excluding: list[dict[str, list[int]]],
    ) -> list[Any] | None:
        out: list[Any] = []
        for i, branch in enumerate(branches):
            admitted = [k for ki, k in enumerate(KINDS) if parts[i][ki] is not False]
            if plain[i] == admitted:
                out.append(branch)
            elif plain[i]:
                out.append({"allOf": [branch, {"type": plain[i]}]})
            for kind, others in excluding[i].items():
                ki = KINDS.index(kind)
                negations = [self.exclusion(parts[i][ki], j, kind) for j in others]
                if any(neg is None for neg in negations):
                    return None
                if _options_product(negations) > MAX_ANYOF_BRANCHES:
                    # Their conjunction has more branches than an anyOf may, before pruning: the
                    # oneOf is called inexact at once (merging and pruning them took seconds,
                    # then mostly passed the limit anyway).
                    return None
                if all(neg is not False for neg in negations):
                    out.append({"allOf": [branch, {"type": kind}, *negations]})
        return out

    def exclusion(self, mine: dict[str, Any], j: int, kind: str) -> Any:
        """``not own[j]`` for the values of ``kind`` that ``mine`` accepts (the keywords all
        branches share need no negation; those ``mine`` already has are left out too)."""
        theirs = self.restrict(self.own[j], kind)
        if not isinstance(theirs, dict):
            return negate_kind(theirs, kind, self.flatten)
        if kind == "array" and self.items_only_disjoint(mine, theirs):
            # Every item of mine is outside theirs: they share the empty array at most.
            return {"type": "array", "minItems": 1}
        extra: list[Any] = []
        if kind == "object" and _closed(theirs) and _closed(mine):
            # Inside closed ``mine``, "not closed to theirs" is "has one of mine's other keys".
            others = [q for q in _properties(mine) if q not in _properties(theirs)]
            extra = [{"type": "object", "required": [q]} for q in others]
            theirs = {k: v for k, v in theirs.items() if k != "additionalProperties"}
        if kind == "object" and _closed(mine) and "properties" in theirs:
            # properties mine never has need no negation
            kept = {n: v for n, v in _properties(theirs).items() if n in _properties(mine)}
            theirs = {k: v for k, v in theirs.items() if k != "properties"}
            if kept:
                theirs["properties"] = kept
        theirs = {k: v for k, v in theirs.items() if not _implied(k, mine, theirs)}
        negation = negate_kind(theirs, kind, self.flatten)
        if negation is None or not extra:
            return negation
        options = extra if negation is False else [negation, *extra]
        return options[0] if len(options) == 1 else {"anyOf": options}


def _options_product(negations: list[Any]) -> int:
    """How many branches the conjunction of these negations has before pruning."""
    out = 1
    for neg in negations:
        if isinstance(neg, dict) and isinstance(neg.get("anyOf"), list):
            out *= max(1, len(neg["anyOf"]))
    return out


_MISSING = object()
# Keywords whose meaning depends on others of the same schema.
_CONTEXT = {
    "additionalProperties": ("properties", "patternProperties"),
    "unevaluatedProperties": ("properties", "patternProperties", "additionalProperties"),
    "items": ("prefixItems",),
}


def _implied(key: str, mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Whether ``mine`` has ``theirs[key]`` with the same meaning (so it holds inside mine)."""
    return all(
        mine.get(k, _MISSING) == theirs.get(k, _MISSING) for k in (key, *_CONTEXT.get(key, ()))
    )


def _closed(schema: dict[str, Any]) -> bool:
    """Only the declared properties are allowed."""
    return schema.get("additionalProperties", True) is False and not schema.get("patternProperties")


def _length(schema: dict[str, Any], low: str, high: str) -> tuple[int, int | None]:
    lo, hi = schema.get(low, 0), schema.get(high)
    lo = lo if isinstance(lo, int) and not isinstance(lo, bool) else 0
    hi = hi if isinstance(hi, int) and not isinstance(hi, bool) else None
    return lo, hi


def _range(schema: dict[str, Any]) -> tuple[_Bound, _Bound]:
    def bound(key: str, inclusive: bool) -> _Bound:
        value = schema.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return Decimal(str(value)), inclusive

    lows = [b for b in (bound("minimum", True), bound("exclusiveMinimum", False)) if b]
    highs = [b for b in (bound("maximum", True), bound("exclusiveMaximum", False)) if b]
    low = max(lows, key=lambda b: (b[0], not b[1])) if lows else None
    high = min(highs, key=lambda b: (b[0], b[1])) if highs else None
    return low, high


def _in_range(x: Decimal, bounds: tuple[_Bound, _Bound]) -> bool:
    low, high = bounds
    if low is not None and (x < low[0] or (x == low[0] and not low[1])):
        return False
    return not (high is not None and (x > high[0] or (x == high[0] and not high[1])))


def _numbers_disjoint(a: dict[str, Any], b: dict[str, Any], depth: int) -> bool:
    (low_a, high_a), (low_b, high_b) = _range(a), _range(b)
    for high, low in ((high_a, low_b), (high_b, low_a)):
        if high is None or low is None:
            continue
        if high[0] < low[0] or (high[0] == low[0] and not (high[1] and low[1])):
            return True
    return False


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _required(schema: dict[str, Any]) -> list[str]:
    required = schema.get("required")
    return [r for r in required if isinstance(r, str)] if isinstance(required, list) else []


def _item(prefix: Any, schema: dict[str, Any], i: int) -> Any:
    if isinstance(prefix, list) and i < len(prefix):
        return prefix[i]
    return schema.get("items", True)


def exclusive_alternatives(
    branches: list[Any], flatten: Flatten, own: list[Any] | None = None
) -> list[Any] | None:
    """Schemas, pairwise disjoint, whose union is exactly ``oneOf: branches``; None when the
    analysis cannot make them so. ``own``: the branches without the keywords they all share
    (the ``oneOf``'s siblings, merged into ``branches``), which is all that must be negated."""
    if len(branches) > MAX_ONEOF_BRANCHES:
        return None
    try:
        return _Analysis(flatten).alternatives(branches, own if own is not None else branches)
    except Cannot:
        return None


__all__ = ["exclusive_alternatives"]
