"""Printing GBNF: literals and character classes from Python strings, and a whole grammar's rules
under a name prefix (so that several grammars can live in one: a JSON schema inside a tag).
Every character that GBNF could read as syntax is written as a ``\\u`` escape."""

from __future__ import annotations

from collections.abc import Iterable

from .. import syntax
from ..grammar import Grammar

_PLAIN = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _,.:;!?=+*/()'{}<>@#$%&|~`"
)


def _escape(cp: int, plain: frozenset[str]) -> str:
    c = chr(cp)
    if c in plain:
        return c
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def literal(text: str) -> str:
    """A GBNF string literal matching ``text`` exactly (``""`` for the empty string)."""
    return '"' + "".join(_escape(ord(c), _PLAIN) for c in text) + '"'


def _class_item(lo: int, hi: int) -> str:
    plain = _PLAIN - {"-", "^"}
    first = _escape(lo, plain)
    return first if lo == hi else f"{first}-{_escape(hi, plain)}"


def char_class(chars: Iterable[str], *, negated: bool = False) -> str:
    """A character class of the given characters (or, ``negated``, of every other one)."""
    items = "".join(_class_item(ord(c), ord(c)) for c in sorted(set(chars)))
    return f"[{'^' if negated else ''}{items}]"


def _node(node: syntax.Node, prefix: str) -> str:
    if isinstance(node, syntax.Literal):
        return '"' + "".join(_escape(cp, _PLAIN) for cp in node.codepoints) + '"'
    if isinstance(node, syntax.CharClass):
        items = "".join(_class_item(lo, hi) for lo, hi in node.ranges)
        return f"[{'^' if node.negated else ''}{items}]"
    if isinstance(node, syntax.AnyChar):
        return "."
    if isinstance(node, syntax.RuleRef):
        return prefix + node.name
    if isinstance(node, syntax.TokenRef):
        ref = f"<[{node.token_id}]>" if node.token_id is not None else str(node.text)
        return ("!" if node.negated else "") + ref
    if isinstance(node, syntax.Repeat):
        upper = "" if node.max is None else str(node.max)
        return f"({_node(node.item, prefix)}){{{node.min},{upper}}}"
    if isinstance(node, syntax.Sequence):
        if not node.items:
            return '""'
        return "(" + " ".join(_node(item, prefix) for item in node.items) + ")"
    return "(" + " | ".join(_node(item, prefix) for item in node.items) + ")"


def embed_rules(grammar: Grammar, prefix: str) -> dict[str, str]:
    """The grammar's rules as ``{prefix + name: GBNF body}``; rule references renamed the same
    way, so ``prefix + grammar.root`` derives the grammar's language."""
    return {prefix + name: _node(body, prefix) for name, body in grammar.rules.items()}


__all__ = ["char_class", "embed_rules", "literal"]
