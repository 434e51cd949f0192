"""The formats that are context-free, not regular: ``regex`` (nested groups) and the host names
(a 253-character total over labels of at most 63, counted by rules rather than by an automaton
of 253 x 63 states). See :mod:`.formats` for what each accepts.

A grammar is written as rules of alternatives; each alternative is a sequence of parts, either a
regex in our dialect (a full match, printed with JSON string escaping) or ``@name``, a reference
to another rule of the same grammar. :func:`format_rule` emits the rules once per conversion and
returns the rule of the JSON string (quotes included).
"""

from __future__ import annotations

import functools

from ..regex import parser, tree
from .emit import Rules

Grammar = dict[str, list[list[str]]]

# --- regex: the syntax ECMA-262 (u flag) and Python's re both accept ----------------------------
_SYNTAX = r"\^$\\.*+?()\[\]{}|"
_INT = r"(?:0|[1-9][0-9]{0,3})"
# {m,n} with m <= n: both one digit (enumerated), or n longer than m (n without a leading 0).
_PAIRS = "|".join(f"{m},[{m}-9]" for m in range(10))
_LONGER = "|".join(f"(?:0|[1-9][0-9]{{{k - 1}}}),[1-9][0-9]{{{k},3}}" for k in range(1, 4))
_COUNT = rf"\{{(?:{_INT},?|{_PAIRS}|{_LONGER})\}}"
_ESCAPE = rf"\\(?:[dDwWsSnrtfv]|x[0-9A-Fa-f]{{2}}|u[0-9A-Fa-f]{{4}}|[{_SYNTAX}/])"
_CLASS_ESCAPE = rf"\\(?:[dDwWsSnrtfvb]|x[0-9A-Fa-f]{{2}}|u[0-9A-Fa-f]{{4}}|[{_SYNTAX}/\-])"
_RANGES = "|".join(
    f"{re_char}-[{re_char}-{last}]"
    for first, last in (("0", "9"), ("a", "z"), ("A", "Z"))
    for re_char in (chr(c) for c in range(ord(first), ord(last) + 1))
)
# A smaller part of the same syntax that is a regular language (groups one level deep, simple
# classes and counts), for where the format meets another constraint (an automaton is needed
# there, and a small one).
_S_ITEM = r"(?:[^\\\]\[\-&~|^]|\\[dDwWs\]\[\\\-]|a-z|A-Z|0-9)"
_S_ATOM = rf"(?:[^{_SYNTAX}]|\.|\\[dDwWsS.\\/()\[\]{{}}|*+?^$]|\[\^?{_S_ITEM}+\])"
_S_QUANT = rf"(?:(?:[*+?]|\{{[0-9],?\}}|\{{(?:{_PAIRS}|[0-9],[1-9][0-9])\}})\??)?"
_S_ASSERT = r"(?:[\^$]|\\[bB])"
_S_FLAT = rf"(?:{_S_ATOM}{_S_QUANT}|{_S_ASSERT})*"
_S_ALT = rf"{_S_FLAT}(?:\|{_S_FLAT})*"
_S_SEQ = rf"(?:(?:{_S_ATOM}|\((?:\?:)?{_S_ALT}\)){_S_QUANT}|{_S_ASSERT}|\(\?[=!]{_S_ALT}\))*"
REGEX_FLAT = rf"{_S_SEQ}(?:\|{_S_SEQ})*"
REGEX_SYNTAX: Grammar = {
    "pattern": [["@alt", "@alts"]],
    "nonempty": [["@term", "@alt", "@alts"], [r"\|", "@alt", "@alts"]],
    "alts": [[""], [r"\|", "@alt", "@alts"]],
    "alt": [[""], ["@term", "@alt"]],
    "term": [
        [r"[\^$]|\\[bB]"],
        [r"\(\?[=!]", "@pattern", r"\)"],
        ["@atom", rf"(?:(?:[*+?]|{_COUNT})\??)?"],
    ],
    "atom": [
        [rf"[^{_SYNTAX}]|\.|{_ESCAPE}"],
        [r"\[\^?", "@item", "@items", r"\]"],
        [r"\((?:\?:)?", "@pattern", r"\)"],
    ],
    "items": [[""], ["@item", "@items"]],
    "item": [[rf"[^\\\]\[\-&~|^]|{_CLASS_ESCAPE}|{_RANGES}"]],
}


# --- host names: labels of 1-63 letters, digits and hyphens, 253 characters in all ---------------
# The total is counted in units of 8 characters: a label of length L costs ceil((L + 1) / 8)
# units (its dot included) and 31 units (248 characters) are available; so a name is refused
# only when it is near the 253-character limit.
_UNIT = 8
_BUDGET = 254 // _UNIT
_LD = "[A-Za-z0-9]"
_LDH = "[A-Za-z0-9-]"


def _label(lo: int, hi: int, idn: bool) -> str:
    """Labels of lo..hi characters (IDNA: no ``--`` in the 3rd and 4th place)."""
    parts = [_LD] if lo == 1 else []
    if hi >= 2 and (not idn or lo < 5):
        a, b = max(lo, 2), hi if not idn else min(hi, 4)
        parts.append(f"{_LD}{_LDH}{{{a - 2},{b - 2}}}{_LD}")
    if idn and hi >= 5:
        a = max(lo, 5)
        parts.append(f"{_LD}{_LDH}(?:{_LD}{_LDH}|-{_LD}){_LDH}{{{a - 5},{hi - 5}}}{_LD}")
    return "|".join(parts)


def _host_grammar(idn: bool) -> Grammar:
    costs = range(1, 64 // _UNIT + 1)  # cost c: labels of (c - 1) * 8 .. c * 8 - 1 characters
    grammar: Grammar = {"host": [[f"@h{_BUDGET}", r"\.?"]]}
    for cost in costs:
        grammar[f"l{cost}"] = [[_label(max(1, (cost - 1) * _UNIT), cost * _UNIT - 1, idn)]]
    for units in range(1, _BUDGET + 1):
        options: list[list[str]] = []
        for cost in costs:
            if cost <= units:
                options.append([f"@l{cost}"])
            if cost < units:
                options.append([f"@l{cost}", r"\.", f"@h{units - cost}"])
        grammar[f"h{units}"] = options
    return grammar


@functools.lru_cache(maxsize=4)
def _grammar(name: str) -> Grammar:
    if name == "regex":
        return REGEX_SYNTAX
    return _host_grammar(name == "idn-hostname")


_TOP = {"regex": "pattern", "hostname": "host", "host-name": "host", "idn-hostname": "host"}


def _part(rules: Rules, text: str, names: dict[str, str]) -> str:
    if text.startswith("@"):
        return names[text[1:]]
    if not text:
        return '""'
    node = tree.without(parser.anchor(parser.parse(text), search=False), tree.SURROGATES)
    return tree.to_gbnf(node, rules.json_chars, top=False)


def format_rule(rules: Rules, name: str, nonempty: bool = False) -> str:
    """The rule for JSON strings in format ``name`` (one of ``GRAMMAR_FORMATS``; ``nonempty``:
    without the empty string, which only ``regex`` has)."""
    key = name + ("+" if nonempty else "")
    if key in rules.formats:
        return rules.formats[key]
    grammar = _grammar("hostname" if name == "host-name" else name)
    prefix = "fmt-" + name.replace("-", "")
    names = {rule: rules.reserve(f"{prefix}-{rule}") for rule in grammar}
    for rule, options in grammar.items():
        body = " | ".join(" ".join(_part(rules, p, names) for p in seq) for seq in options)
        rules.define(names[rule], body)
    start = "nonempty" if nonempty and name == "regex" else _TOP[name]
    top = rules.add(prefix, f'"\\"" {names[start]} "\\""')
    rules.formats[key] = top
    return top


__all__ = ["REGEX_FLAT", "REGEX_SYNTAX", "format_rule"]
