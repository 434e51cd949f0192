"""Regular expressions (the ECMA-262 dialect of JSON Schema ``pattern``) -> GBNF.

``regex_to_gbnf(pattern)`` gives a grammar for the strings that *fully* match ``pattern`` (``^``
and ``$`` at the ends are accepted and change nothing). Code points are matched one by one, as
with the ``u`` flag: ``.`` is any code point except line terminators, ``\\d \\w \\s`` have their
ECMA-262 (ASCII for ``\\d \\w``) meaning. Lookaheads ``(?=...)``/``(?!...)`` compile exactly into
an automaton (see ``lookaround``), except inside unbounded repetitions; lookbehinds, ``\\b``/``\\B``
and anchors in the middle of a pattern too (see ``assertions``), but not next to a lookahead.
Unsupported (``SchemaError`` with path ``""`` and the position in the message): backreferences.
"""

from __future__ import annotations

from typing import Any

from ..errors import SchemaError
from . import assertions, automata, parser, tree


def regex_to_gbnf(pattern: str, **options: Any) -> str:
    """GBNF (root rule ``root``) for the strings that fully match ``pattern``.

    Options: ``search=True`` gives JSON Schema semantics instead (an unanchored search: the
    strings that *contain* a match, unless the pattern is anchored with ``^``/``$``).
    """
    search = bool(options.pop("search", False))
    if options:
        raise TypeError(f"unknown option(s): {', '.join(sorted(options))}")
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be str, not {type(pattern).__name__}")
    try:
        node = assertions.compile_pattern(parser.parse(pattern), search)
        if not isinstance(node, tree.Lang):
            node = tree.without(node, ())  # empty classes ([], [^\s\S]) match nothing
    except parser.RegexSyntaxError as err:
        raise SchemaError(f"regex {pattern!r}: {err}", "") from None
    except RecursionError:  # a backstop: MAX_GROUP_DEPTH stops realistic patterns first
        raise SchemaError(f"regex {pattern[:80]!r}...: too deeply nested to convert", "") from None
    if node == tree.NEVER or (isinstance(node, tree.Lang) and node.dfa.is_empty()):
        raise SchemaError(f"regex {pattern!r} matches nothing", "")
    if isinstance(node, tree.Lang):
        return _automaton_gbnf(automata.language_dfa(node))
    return f"root ::= {tree.to_gbnf(node)}\n"


def _automaton_gbnf(dfa: automata.Dfa) -> str:
    """One right-recursive rule per automaton state (``root`` first)."""
    lines: list[str] = []

    def chars(ranges: tree.Ranges) -> str:
        usable = tree.subtract(ranges, ((0xD800, 0xDFFF),))  # GBNF text is UTF-8: no surrogates
        return tree.raw_chars_gbnf(usable) if usable else ""

    def define(name: str, body: str) -> str:
        lines.append(f"{name} ::= {body}")
        return name

    start = automata.to_rules(dfa, chars, define, lambda hint: hint, '""', "s")
    return f"root ::= {start}\n" + "\n".join(lines) + "\n"


__all__ = ["regex_to_gbnf"]
