"""Object keys beyond the declared properties: ``patternProperties``, ``additionalProperties``
and ``propertyNames``, made exact with automata.

The keys an object may have besides its declared properties are split into regions: for every
non-empty set S of ``patternProperties`` groups, the keys matching exactly the patterns in S
(their value must satisfy all of S's schemas), and the keys matching no pattern (their value
follows ``additionalProperties``). Every region excludes the declared names (those are written
as declared members) and keeps only names ``propertyNames`` allows.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..limits import MAX_PATTERN_GROUPS
from ..regex import automata, tree
from ..regex.other_words import other_words
from .context import SubschemaCompiler
from .emit import any_string, dfa_string_rule
from .keywords import is_keyword, keywords_of
from .scalars import Unsupported, format_nodes, kw_int, pointer, regex_node

_STRING_KEYWORDS = {
    "type",
    "pattern",
    "minLength",
    "maxLength",
    "enum",
    "const",
    "format",
    "__patterns__",
    "__formats__",
}


def trivial(schema: Any) -> bool:
    return schema is True or (isinstance(schema, dict) and not any(is_keyword(k) for k in schema))


def _literals(names: list[str]) -> tree.Node:
    return tree.alt(*(tree.literal(n) if n else tree.EMPTY for n in names)) if names else tree.NEVER


def string_dfa(conv: SubschemaCompiler, schema: Any, path: str) -> automata.Dfa | None:
    """The strings a string schema allows, as an automaton (None: every string)."""
    flat = conv.flatten(schema, path, ())
    if flat is True or trivial(flat):
        return None
    if flat is False:
        return automata.from_regex(tree.NEVER)
    unknown = keywords_of(flat) - _STRING_KEYWORDS
    if unknown:
        raise Unsupported(f"propertyNames with {sorted(unknown)[0]}", path)
    parts: list[tree.Node] = []
    if "const" in flat or "enum" in flat:
        values = [flat["const"]] if "const" in flat else flat["enum"]
        parts.append(_literals([v for v in values if isinstance(v, str)]))
    for pattern in flat.get("__patterns__", [flat["pattern"]] if "pattern" in flat else []):
        parts.append(regex_node(pattern, pointer(path, "pattern"), search=True))
    parts += format_nodes(flat, path, compact=True)
    lo, hi = kw_int(flat, "minLength", path, 0) or 0, kw_int(flat, "maxLength", path)
    if lo or hi is not None:
        parts.append(tree.rep(tree.Chars(automata.ALL), lo, hi))
    return _intersect_all([to_dfa(p, path) for p in parts])


def to_dfa(node: tree.Node, path: str) -> automata.Dfa:
    try:
        return automata.from_regex(node)
    except automata.TooLarge as err:
        raise Unsupported(f"pattern automaton too large ({err})", path) from None


def _intersect_all(dfas: list[automata.Dfa]) -> automata.Dfa | None:
    if not dfas:
        return None
    out = dfas[0]
    for d in dfas[1:]:
        out = automata.intersect(out, d)
    return out


class KeySpace:
    """The non-declared keys of one object schema and what their values must satisfy."""

    def __init__(self, conv: SubschemaCompiler, flat: dict[str, Any], path: str) -> None:
        self.conv = conv
        self.flat = flat
        self.path = path
        names_schema = flat.get("propertyNames", True)
        names_path = pointer(path, "propertyNames")
        self.allowed = None if trivial(names_schema) else string_dfa(conv, names_schema, names_path)
        self.groups = self._groups()

    def _groups(self) -> list[tuple[list[str], automata.Dfa]]:
        """Per distinct schema: its patterns and the keys they match under either reading
        (ECMA-262 or Python's ``re``, which jsonschema uses: ``n$`` also matches "xn\\n"
        there), so that a key's region requires every schema jsonschema applies to it."""
        by_schema: dict[str, list[str]] = {}
        for pattern, schema in (self.flat.get("patternProperties") or {}).items():
            by_schema.setdefault(repr(schema), []).append(pattern)
        if len(by_schema) > MAX_PATTERN_GROUPS:
            raise Unsupported(
                f"more than {MAX_PATTERN_GROUPS} patternProperties schemas",
                pointer(self.path, "patternProperties"),
            )
        out = []
        for patterns in by_schema.values():
            nodes = [
                regex_node(
                    p, pointer(self.path, "patternProperties", p), search=True, reading="either"
                )
                for p in patterns
            ]
            out.append(
                (patterns, to_dfa(tree.alt(*nodes), pointer(self.path, "patternProperties")))
            )
        return out

    def name_allowed(self, name: str) -> bool:
        return self.allowed is None or self.allowed.matches(name)

    def pattern_schemas(self, name: str) -> list[Any]:
        """The patternProperties schemas a declared property name must also satisfy."""
        props = self.flat.get("patternProperties") or {}
        return [props[ps[0]] for ps, dfa in self.groups if dfa.matches(name)]

    def members(self, declared: list[str], additional: Any, depth: int) -> str | None:
        """GBNF for one non-declared member (key, colon, value), or None if none may appear."""
        base: list[automata.Dfa] = []
        # Without patterns or propertyNames the other keys depend on the declared names alone:
        # objects with the same names share one key rule (AWS CloudFormation: 6,634 objects,
        # 3,262 name sets).
        shared = None if self.groups or self.allowed is not None else tuple(sorted(set(declared)))
        if declared and (shared is None or shared not in self.conv.rules.other_keys):
            try:
                base.append(other_words(declared))
            except automata.TooLarge as err:
                raise Unsupported(f"key automaton too large ({err})", self.path) from None
        if self.allowed is not None:
            base.append(self.allowed)
        options: list[str] = []
        props = self.flat.get("patternProperties") or {}
        try:
            for size in range(1, len(self.groups) + 1):
                for chosen in itertools.combinations(range(len(self.groups)), size):
                    schemas = [props[self.groups[i][0][0]] for i in chosen]
                    sub = pointer(self.path, "patternProperties", self.groups[chosen[0]][0][0])
                    value = schemas[0] if len(schemas) == 1 else {"allOf": schemas}
                    self._option(options, base, set(chosen), value, sub, depth)
            if additional is not False:
                sub = pointer(self.path, "additionalProperties")
                self._option(options, base, set(), additional, sub, depth, shared)
        except automata.TooLarge as err:
            raise Unsupported(
                f"key automaton too large ({err})", pointer(self.path, "patternProperties")
            ) from None
        return " | ".join(options) if options else None

    def _option(
        self,
        options: list[str],
        base: list[automata.Dfa],
        chosen: set[int],
        schema: Any,
        path: str,
        depth: int,
        shared: tuple[str, ...] | None = None,
    ) -> None:
        """Adds the option for the keys of the region ``chosen`` names (its patterns' groups),
        unless no key is left there; ``shared``: the declared names, when they alone make the
        region (its key rule is then made once per conversion)."""
        known = self.conv.rules.other_keys
        if shared is not None and shared in known:
            key = known[shared]
        else:
            parts = list(base)
            for i, (_, dfa) in enumerate(self.groups):
                parts.append(dfa if i in chosen else automata.complement(dfa))
            region = _intersect_all(parts)
            key = (
                any_string(self.conv.rules)
                if region is None
                else dfa_string_rule(self.conv.rules, region, "key")
            )
            if shared is not None:
                known[shared] = key
        if key is None:
            return
        value = self.conv.value(schema, path, depth + 1)
        if value is not None:
            options.append(f"{key} {self.conv.layout.colon()} {value}")
