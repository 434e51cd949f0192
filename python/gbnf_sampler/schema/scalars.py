"""Grammars for the scalar JSON Schema types: strings, integers and numbers."""

from __future__ import annotations

import functools
import json
import math
from decimal import Decimal, InvalidOperation
from typing import Any

from ..limits import MAX_MULTIPLE_OF_STATES
from ..regex import assertions, automata, parser, tree
from ..regex.tree import Chars, Node
from . import number_ranges
from .emit import Rules, any_number, any_string, dfa_string_rule, regex_string
from .format_grammars import format_rule
from .formats import COMPACT, EVERY_DRAFT, FORMATS, GRAMMAR_FORMATS, REGULAR_SUBSETS
from .refs import escape_pointer

ANY_CHAR = Chars(((0, tree.MAX_CODEPOINT),))


class Unsupported(Exception):
    """A keyword (at ``path``) that cannot be compiled exactly; the converter decides whether
    to raise or relax."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


def kw_int(schema: dict[str, Any], key: str, path: str, default: int | None = None) -> int | None:
    """A non-negative integer keyword (``minLength``...)."""
    value = schema.get(key, default)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Unsupported(f"{key} must be a non-negative integer", f"{path}/{key}")
    return value


def kw_number(schema: dict[str, Any], key: str, path: str) -> Decimal | None:
    value = schema.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Unsupported(f"{key} must be a number", f"{path}/{key}")
    try:
        out = Decimal(str(value))
    except InvalidOperation:
        raise Unsupported(f"{key} must be a finite number", f"{path}/{key}") from None
    if not out.is_finite():
        raise Unsupported(f"{key} must be a finite number", f"{path}/{key}")
    return out


def regex_node(pattern: Any, path: str, search: bool, reading: str = "both") -> Node:
    """``pattern`` as a tree (``reading``: see :data:`parser.READINGS`)."""
    if not isinstance(pattern, str):
        raise Unsupported("pattern must be a string", path)
    try:
        return _compiled_pattern(pattern, search, reading)
    except parser.RegexSyntaxError as err:
        raise Unsupported(f"pattern {pattern!r}: {err}", path) from None


# Schemas repeat their patterns and formats (Prometheus' config: 9,500 string rules, 3,000
# regex compilations of a few dozen patterns); trees are immutable, so one per pattern serves all.
@functools.lru_cache(maxsize=1024)
def _compiled_pattern(pattern: str, search: bool, reading: str) -> Node:
    return assertions.compile_pattern(parser.parse(pattern, reading), search, reading)


def constrain_length(node: Node, lo: int, hi: int | None, path: str) -> Node:
    """``node`` restricted to matches of lo..hi characters, where that is simple to express."""
    n_lo, n_hi = tree.length_bounds(node)
    if n_lo >= lo and (hi is None or (n_hi is not None and n_hi <= hi)):
        return node
    if isinstance(node, tree.Rep) and isinstance(node.item, Chars):
        return _bounded_rep(node, 0, lo, hi)
    if isinstance(node, tree.Seq):
        variable = [
            i
            for i, item in enumerate(node.items)
            if tree.length_bounds(item)[0] != tree.length_bounds(item)[1]
        ]
        if len(variable) == 1 and isinstance(node.items[variable[0]], tree.Rep):
            rep_node = node.items[variable[0]]
            assert isinstance(rep_node, tree.Rep)
            if isinstance(rep_node.item, Chars):
                fixed = (
                    sum(tree.length_bounds(i)[0] for i in node.items)
                    - tree.length_bounds(rep_node)[0]
                )
                items = list(node.items)
                items[variable[0]] = _bounded_rep(rep_node, fixed, lo, hi)
                return tree.seq(*items)
    raise Unsupported(
        "pattern or format combined with minLength/maxLength in a way that cannot be expressed",
        path,
    )  # path: the length keyword


def _bounded_rep(node: tree.Rep, fixed: int, lo: int, hi: int | None) -> Node:
    new_lo = max(node.min, lo - fixed)
    highs = [h for h in (node.max, None if hi is None else hi - fixed) if h is not None]
    new_hi = min(highs) if highs else None
    if new_hi is not None and new_hi < new_lo:
        return tree.NEVER
    return tree.rep(node.item, new_lo, new_hi)


# What ``string_rule`` reads of a schema: equal values give the same rule.
_STRING_KEYWORDS = (
    "minLength",
    "maxLength",
    "pattern",
    "__patterns__",
    "format",
    "__formats__",
    "__not_in__",
    "__not_strings__",
)


def string_rule(rules: Rules, schema: dict[str, Any], path: str, hint: str) -> str | None:
    """The rule for a string schema; made once per set of string keywords (large schemas
    repeat the same pattern or format in hundreds of places)."""
    key = json.dumps([schema.get(k) for k in _STRING_KEYWORDS], sort_keys=True, default=repr)
    if key not in rules.strings:
        rules.strings[key] = _new_string_rule(rules, schema, path, hint)
    return rules.strings[key]


def _new_string_rule(rules: Rules, schema: dict[str, Any], path: str, hint: str) -> str | None:
    lo = kw_int(schema, "minLength", path, 0) or 0
    hi = kw_int(schema, "maxLength", path)
    if hi is not None and hi < lo:
        return None
    grammar_format = _grammar_format(schema, lo, hi, path)
    if grammar_format is not None:
        return format_rule(rules, grammar_format, nonempty=lo == 1)
    excluded = schema.get("__not_in__", [])
    excluded_languages = schema.get("__not_strings__", [])
    patterns = schema.get("__patterns__", [schema["pattern"]] if "pattern" in schema else [])
    shared = len(patterns) + len(formats_of(schema)) > 1
    compact = bool(lo or hi is not None or excluded or excluded_languages or shared)
    nodes = _string_constraints(schema, path, compact)
    if excluded or excluded_languages:
        others = [widest_language(s, pointer(path, "__not_strings__")) for s in excluded_languages]
        return _automaton_string(rules, nodes, lo, hi, path, hint, excluded, others)
    if any(isinstance(n, tree.Lang) for n in nodes):  # lookaheads: only an automaton says it
        return _automaton_string(rules, nodes, lo, hi, path, hint)
    if not nodes:
        if lo == 0 and hi is None:
            return any_string(rules)
        node: Node = tree.rep(ANY_CHAR, lo, hi)
    else:
        keyword = "maxLength" if hi is not None else "minLength"
        try:
            if len(nodes) > 1:
                raise Unsupported("several patterns", path)
            node = constrain_length(nodes[0], lo, hi, pointer(path, keyword))
        except Unsupported:
            return _automaton_string(rules, nodes, lo, hi, path, hint)
    node = tree.without(node, tree.SURROGATES)  # never in a JSON string (see json_chars)
    if node == tree.NEVER:
        return None
    return regex_string(rules, node, hint)


def _automaton_string(
    rules: Rules,
    nodes: list[Node],
    lo: int,
    hi: int | None,
    path: str,
    hint: str,
    excluded: list[str] | None = None,
    excluded_languages: list[list[Node]] | None = None,
) -> str | None:
    """Several patterns/formats, length bounds and excluded values or languages at once: the
    intersection automaton."""
    if lo or hi is not None:
        nodes = [*nodes, tree.rep(ANY_CHAR, lo, hi)]
    try:
        dfa = automata.from_regex(nodes[0] if nodes else tree.Rep(ANY_CHAR, 0, None))
        for node in nodes[1:]:
            dfa = automata.intersect(dfa, automata.from_regex(node))
        if excluded:
            words = tree.alt(*(tree.literal(w) if w else tree.EMPTY for w in excluded))
            dfa = automata.intersect(dfa, automata.complement(automata.from_regex(words)))
        for parts in excluded_languages or []:
            other = automata.from_regex(parts[0])
            for node in parts[1:]:
                other = automata.intersect(other, automata.from_regex(node))
            dfa = automata.intersect(dfa, automata.complement(other))
    except automata.TooLarge as err:
        keyword = "maxLength" if hi is not None else "minLength" if lo else "pattern"
        raise Unsupported(
            f"pattern/format/length combination needs too large an automaton ({err})",
            pointer(path, keyword),
        ) from None
    return dfa_string_rule(rules, dfa, hint)


def widest_language(schema: Any, path: str) -> list[Node]:
    """A string schema of patterns, lengths and formats (an excluded one, see ``logic``) read
    as widely as ECMA-262 or Python could read it, so that excluding it is sound: the
    languages whose intersection it accepts."""
    if not isinstance(schema, dict):
        raise Unsupported("malformed excluded string schema", path)
    patterns = schema.get("__patterns__", [schema["pattern"]] if "pattern" in schema else [])
    parts = [regex_node(p, path, search=True, reading="either") for p in patterns]
    for fmt in formats_of(schema):
        if fmt not in EVERY_DRAFT:  # its checker may accept strings outside the automaton
            raise Unsupported(f"format {fmt!r} cannot be excluded exactly", path)
        parts.append(regex_node(FORMATS[fmt], path, search=False))
    lo = kw_int(schema, "minLength", path, 0) or 0
    hi = kw_int(schema, "maxLength", path)
    if lo or hi is not None:
        parts.append(tree.rep(ANY_CHAR, lo, hi))
    return parts or [tree.rep(ANY_CHAR, 0, None)]


def formats_of(schema: dict[str, Any]) -> list[str]:
    """The ``format`` values of a (merged) string schema."""
    formats = schema.get("__formats__", [schema["format"]] if "format" in schema else [])
    return [f for f in dict.fromkeys(formats) if isinstance(f, str)]


def _grammar_format(schema: dict[str, Any], lo: int, hi: int | None, path: str) -> str | None:
    """The context-free format (``regex``, host names) when nothing but ``minLength`` <= 1
    constrains the string besides it; None when there is none, or when a host name meets other
    constraints (its regular part does, see ``format_nodes``); raises Unsupported otherwise."""
    formats = formats_of(schema)
    found = [f for f in formats if f in GRAMMAR_FORMATS]
    if not found:
        return None
    others = [
        k for k in ("pattern", "__patterns__", "__not_in__", "__not_strings__") if k in schema
    ]
    if len(formats) == 1 and not others and lo <= 1 and hi is None:
        return found[0]
    if all(f in REGULAR_SUBSETS for f in found):
        return None
    raise Unsupported(
        f"format {found[0]!r} (a context-free grammar, not an automaton) combined with "
        "another format, a pattern or a length cannot be expressed",
        pointer(path, "format"),
    )


def format_nodes(schema: dict[str, Any], path: str, compact: bool = False) -> list[Node]:
    """The regular formats of a string schema, as full-match trees (Unsupported for a
    context-free one). ``compact``: the variants meant to meet other constraints."""
    nodes: list[Node] = []
    for fmt in formats_of(schema):
        where = pointer(path, "format")
        if fmt in REGULAR_SUBSETS:
            nodes.append(regex_node(REGULAR_SUBSETS[fmt], where, search=False))
        elif fmt in GRAMMAR_FORMATS:
            raise Unsupported(
                f"format {fmt!r} (context-free) combined with other string constraints cannot "
                "be expressed",
                where,
            )
        elif compact and fmt in COMPACT:
            nodes.append(regex_node(COMPACT[fmt], where, search=False))
        elif fmt in FORMATS:
            nodes.append(regex_node(FORMATS[fmt], where, search=False))
    return nodes


def _string_constraints(schema: dict[str, Any], path: str, compact: bool) -> list[Node]:
    nodes: list[Node] = []
    patterns = schema.get("__patterns__", [schema["pattern"]] if "pattern" in schema else [])
    for pattern in dict.fromkeys(patterns):
        nodes.append(regex_node(pattern, f"{path}/pattern", search=True))
    return nodes + format_nodes(schema, path, compact)


# --- numbers -------------------------------------------------------------------------------------


def _bounds(schema: dict[str, Any], path: str) -> tuple[Decimal | None, bool, Decimal | None, bool]:
    lo, lo_inc = kw_number(schema, "minimum", path), True
    ex_lo = kw_number(schema, "exclusiveMinimum", path)
    if ex_lo is not None and (lo is None or ex_lo >= lo):
        lo, lo_inc = ex_lo, False
    hi, hi_inc = kw_number(schema, "maximum", path), True
    ex_hi = kw_number(schema, "exclusiveMaximum", path)
    if ex_hi is not None and (hi is None or ex_hi <= hi):
        hi, hi_inc = ex_hi, False
    return lo, lo_inc, hi, hi_inc


def _int_bounds(schema: dict[str, Any], path: str) -> tuple[int | None, int | None]:
    lo, lo_inc, hi, hi_inc = _bounds(schema, path)
    ilo = (
        None
        if lo is None
        else (math.floor(lo) + 1 if not lo_inc and lo == lo.to_integral() else math.ceil(lo))
    )
    ihi = (
        None
        if hi is None
        else (math.ceil(hi) - 1 if not hi_inc and hi == hi.to_integral() else math.floor(hi))
    )
    return ilo, ihi


def integer_rule(
    rules: Rules, schema: dict[str, Any], path: str, hint: str, fractions: bool, plain: bool
) -> str | None:
    """Integers in the schema's bounds that are multiples of its ``multipleOf``. ``fractions``:
    also spelled with a zero fraction (``4.0``: for a ``number``); ``plain``: not (see
    ``Converter.plain_numbers``)."""
    zero_tail = fractions and not plain
    lo, hi = _int_bounds(schema, path)
    if lo is not None and hi is not None and lo > hi:
        return None
    k = _integer_multiple(schema, path)
    if k is None or k == 1:
        node = number_ranges.integer_spellings(lo, hi, zero_tail)
        return rules.add(hint, tree.to_gbnf(node))
    tail = f" {number_ranges.zero_tail_gbnf()}" if zero_tail else ""
    values = None if lo is None or hi is None else number_ranges.small_multiples(k, lo, hi)
    if values is not None:
        if not values:
            return None
        negative_zero = 0 in values and values[0] < 0
        spelled = [f'"{v}"' for v in values] + (['"-0"'] if negative_zero else [])
        return rules.add(hint, f"({' | '.join(spelled)}){tail}")
    if k > MAX_MULTIPLE_OF_STATES:
        raise Unsupported(f"multipleOf above {MAX_MULTIPLE_OF_STATES}", f"{path}/multipleOf")
    if lo is not None or hi is not None:
        return _bounded_multiples(rules, k, lo, hi, f"{path}/multipleOf", hint, tail)
    prefix = rules.reserve(f"{hint}-mod")
    expr, extra = number_ranges.multiple_of_rules(k, prefix)
    rules.define(prefix, f"{expr}{tail}")
    for name, body in extra.items():
        rules.define(name, body)
    return prefix


def _bounded_multiples(
    rules: Rules, k: int, lo: int | None, hi: int | None, path: str, hint: str, tail: str
) -> str | None:
    """The multiples of k in a range too wide to list: the range's spellings intersected
    with the remainder automaton, printed as rules (one per state)."""
    try:
        spellings = automata.from_regex(number_ranges.integer_spellings(lo, hi, False))
        dfa = automata.minimize(automata.intersect(spellings, number_ranges.multiples_dfa(k)))
    except automata.TooLarge:
        raise Unsupported("multipleOf with this range needs too large an automaton", path) from None
    if dfa.is_empty():
        return None
    start = automata.to_rules(dfa, tree.raw_chars_gbnf, rules.define, rules.reserve, '""', hint)
    return rules.add(hint, f"{start}{tail}")


def _integer_multiple(schema: dict[str, Any], path: str) -> int | None:
    m = kw_number(schema, "multipleOf", path)
    if m is None:
        return None
    if m <= 0:
        raise Unsupported("multipleOf must be positive", f"{path}/multipleOf")
    if m == m.to_integral():
        return int(m)
    inverse = 1 / m
    if inverse == inverse.to_integral():
        return 1  # every integer is a multiple of 1/n
    raise Unsupported(f"multipleOf {m} on integers", f"{path}/multipleOf")


def number_rule(
    rules: Rules, schema: dict[str, Any], path: str, hint: str, plain: bool
) -> str | None:
    """Numbers in the schema's bounds (``multipleOf``: integral, or 10^-n without bounds);
    ``plain``: integral multiples without a zero fraction (see ``Converter.plain_numbers``)."""
    m = kw_number(schema, "multipleOf", path)
    if schema.get("__non_integral__"):
        if m is not None:
            raise Unsupported("multipleOf beside a negated integer type", f"{path}/multipleOf")
        return _non_integral_rule(rules, schema, path, hint)
    if m is not None and m == m.to_integral():
        return integer_rule(rules, schema, path, hint, fractions=True, plain=plain)
    lo, lo_inc, hi, hi_inc = _bounds(schema, path)
    if m is not None:
        return _decimal_multiple(rules, m, lo, hi, path, hint)
    if lo is None and hi is None:
        return any_number(rules)
    node = number_ranges.bounded_number(lo, lo_inc, hi, hi_inc)
    if node == tree.NEVER:
        return None
    return rules.add(hint, tree.to_gbnf(node))


def _non_integral_rule(rules: Rules, schema: dict[str, Any], path: str, hint: str) -> str | None:
    """Numbers in the schema's bounds that are not integers (``__non_integral__``: a negated
    ``type: integer``), in the spellings of :data:`number_ranges.NON_INTEGRAL`."""
    lo, lo_inc, hi, hi_inc = _bounds(schema, path)
    spelled = number_ranges.NUMBER
    if lo is not None or hi is not None:
        spelled = number_ranges.bounded_number(lo, lo_inc, hi, hi_inc)
    if spelled == tree.NEVER:
        return None
    dfa = automata.intersect(
        automata.from_regex(spelled), automata.from_regex(number_ranges.NON_INTEGRAL)
    )
    if dfa.is_empty():
        return None
    dfa = automata.minimize(dfa)
    return automata.to_rules(dfa, tree.raw_chars_gbnf, rules.define, rules.reserve, '""', hint)


def _decimal_multiple(
    rules: Rules, m: Decimal, lo: Decimal | None, hi: Decimal | None, path: str, hint: str
) -> str:
    places = -m.normalize().as_tuple().exponent  # type: ignore[operator]
    if m.normalize() != Decimal(1).scaleb(-places) or lo is not None or hi is not None:
        raise Unsupported(
            f"multipleOf {m} on numbers (only 10^-n without bounds)", f"{path}/multipleOf"
        )
    frac = f'("." [0-9]{{1,{places}}} "0"*)?'
    return rules.add(hint, f'"-"? ("0" | [1-9] [0-9]*) {frac}')


def pointer(path: str, *tokens: str | int) -> str:
    return path + "".join("/" + escape_pointer(str(t)) for t in tokens)
