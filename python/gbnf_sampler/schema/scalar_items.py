"""Scalar items that the matcher keeps distinct by searching (``uniqueItems``).

At the top level of a ``#@ distinct-items`` array the matcher searches, at every byte of a
string or number item, for a completion that no earlier item has (csrc/matcher/matcher.cc,
``StringItemCanBeNew``, ``NumberItemCanBeNew``), checks ``true``/``false``/``null`` at their
first letter, and refuses a ``,`` when no new item can follow. Scalar items are therefore exact
however few completions a prefix has (a uuid's last digit, an integer's ``0``); what the
converter must still know is that the values do not run out within any array the matcher can
hold (:func:`many_scalars`: at least 2^32 of them), or that they are few enough to be counted.
"""

from __future__ import annotations

import math
from typing import Any

from ..limits import MAX_SCHEMA_KIND_DEPTH
from ..regex import automata, tree
from .context import SubschemaCompiler
from .formats import ASSERTED, GRAMMAR_FORMATS, format_dfa
from .keywords import keywords_of
from .scalars import Unsupported, formats_of, kw_int, pointer, regex_node
from .values import type_set

# More values than items any array can hold (the matcher's text is under 4 GiB): a scalar
# item can always be new.
INEXHAUSTIBLE = 2**32
_STRING_KEYS = frozenset({"type", "minLength", "maxLength", "pattern", "format"})


def integer_bound(flat: dict[str, Any], key: str, exclusive: str, step: int) -> int | None:
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


def many_scalars(conv: SubschemaCompiler, schema: Any, path: str, depth: int = 0) -> bool:
    """Scalar items (strings, numbers, ``true``/``false``/``null``) with at least 2^32 values.
    Such items may come down to few completions on the way (a uuid's last digit, the last
    character under ``maxLength``, an integer's ``0``), but the matcher searches for a
    completion that is no copy at every byte of a string or number item (csrc/matcher/
    matcher.cc, ``StringItemCanBeNew``, ``NumberItemCanBeNew``) and checks a literal at its
    first letter, and with that many values an array never runs out of new ones."""
    if depth > MAX_SCHEMA_KIND_DEPTH:
        return False
    flat = conv.flatten(schema, path, ())
    return (
        isinstance(flat, dict)
        and only_scalars(conv, flat, path, depth)
        and _inexhaustible(conv, flat, path, depth)
    )


_SCALAR_TYPES = frozenset({"string", "integer", "number", "null", "boolean"})
_NUMBER_BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


def only_scalars(conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int) -> bool:
    """Every value the schema allows is a scalar: its types, else its values, else those of
    every branch of its union."""
    types = type_set(flat)
    if types is not None:
        return types <= _SCALAR_TYPES
    if "const" in flat or "enum" in flat:
        values = [flat["const"]] if "const" in flat else flat["enum"]
        return isinstance(values, list) and not any(isinstance(v, (dict, list)) for v in values)
    for word in ("anyOf", "oneOf"):
        branches = flat.get(word)
        if isinstance(branches, list) and branches:
            return all(
                isinstance(b := conv.flatten(branch, pointer(path, word, i), ()), dict)
                and depth < MAX_SCHEMA_KIND_DEPTH
                and only_scalars(conv, b, pointer(path, word, i), depth + 1)
                for i, branch in enumerate(branches)
            )
    return False


def _inexhaustible(conv: SubschemaCompiler, flat: dict[str, Any], path: str, depth: int) -> bool:
    """The schema has at least 2^32 values: strings or numbers free enough, or a branch of its
    ``anyOf`` that has (a union has at least the values of each branch, with the keywords
    beside it)."""
    if isinstance(flat.get("anyOf"), list):
        rest = {k: v for k, v in flat.items() if k != "anyOf"}
        return any(
            many_scalars(conv, {"allOf": [rest, branch]}, pointer(path, "anyOf", i), depth + 1)
            for i, branch in enumerate(flat["anyOf"])
        )
    types = type_set(flat)
    if types is None:
        return False
    allowed = {"type"} | _STRING_KEYS | _NUMBER_BOUNDS
    if not keywords_of(flat) <= allowed:
        return False
    if types & {"integer", "number"} and _many_numbers(flat, types):
        return True
    return "string" in types and _many_strings(flat, path)


def _many_numbers(flat: dict[str, Any], types: set[str]) -> bool:
    """Numbers within the bounds: infinitely many unless the bounds meet, integers counted."""
    if "number" in types:

        def given(*keys: str) -> list[float]:  # (a draft-4 boolean exclusive bound is no bound)
            values = [flat.get(k) for k in keys]
            return [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]

        lows, highs = given("minimum", "exclusiveMinimum"), given("maximum", "exclusiveMaximum")
        return not lows or not highs or min(highs) > max(lows)
    low_int = integer_bound(flat, "minimum", "exclusiveMinimum", 1)
    high_int = integer_bound(flat, "maximum", "exclusiveMaximum", -1)
    # (+2: a draft-4 boolean exclusive bound, which integer_bound ignores, takes one value each)
    return low_int is None or high_int is None or high_int - low_int + 1 >= INEXHAUSTIBLE + 2


def _many_strings(flat: dict[str, Any], path: str) -> bool:
    """Strings under the schema's length bounds and its one pattern or asserted format have at
    least 2^32 values."""
    lo = kw_int(flat, "minLength", path, 0) or 0
    hi = kw_int(flat, "maxLength", path)
    patterns = [flat["pattern"]] if "pattern" in flat else []
    asserted = [f for f in formats_of(flat) if f in ASSERTED]
    if not patterns and not asserted:
        return hi is None or hi >= max(lo, 2)  # over a million characters: 10^12 of length 2
    if len(patterns) + len(asserted) > 1:
        return False
    if asserted and asserted[0] in GRAMMAR_FORMATS:
        # Infinitely many regexes; hostnames of up to 253 characters: far more than 2^32.
        return hi is None and lo <= 64
    try:
        if asserted:
            dfa = format_dfa(asserted[0])
        else:
            node = regex_node(patterns[0], pointer(path, "pattern"), search=True)
            if isinstance(node, tree.Lang):
                dfa = automata.language_dfa(node)
            else:
                dfa = automata.from_regex(tree.without(node, tree.SURROGATES))
        if dfa is not None and (lo > 0 or hi is not None):
            dfa = automata.intersect(dfa, automata.length_dfa(lo, hi))
    except (Unsupported, automata.TooLarge):
        return False
    return dfa is not None and automata.size_at_least(dfa, INEXHAUSTIBLE)


__all__ = ["INEXHAUSTIBLE", "integer_bound", "many_scalars", "only_scalars"]
