"""A GBNF text assembled from pieces: fresh rule names, literals, token references, and whole
grammars embedded under renamed rules (so two grammars with a rule ``value`` each can share one
text).

:class:`RuleSet` is the one builder the structural layer writes with: the triggered-grammar
builder (:mod:`.triggers`), the structural-tag compiler (:mod:`.tags`) and the argument styles
(:mod:`.styles`) all add rules to one and print it with :meth:`RuleSet.text`.
"""

from __future__ import annotations

import re

from .. import syntax
from ..grammar import Grammar
from ..regex.tree import class_gbnf, literal_gbnf

_NAME_CHARS = re.compile(r"[^A-Za-z0-9-]+")


def literal(text: str) -> str:
    """A GBNF string literal (``""`` for the empty string)."""
    return literal_gbnf(text)


def token_ref(token: int | str, *, negated: bool = False) -> str:
    """A token reference: ``<[id]>`` for an id, ``<text>`` for a token's text (which must start
    with ``<`` and end with ``>``, as GBNF writes it)."""
    bang = "!" if negated else ""
    if isinstance(token, int):
        return f"{bang}<[{token}]>"
    if not (token.startswith("<") and token.endswith(">") and len(token) > 2):
        raise ValueError(
            f"a token given by text must look like <...> (GBNF's token syntax), got {token!r}; "
            "give its id instead"
        )
    if ">" in token[1:-1]:
        raise ValueError(f"token text {token!r} holds '>': give its id instead")
    return f"{bang}{token}"


def alternatives(options: list[str]) -> str:
    """``( a | b )``, or the one option as is (duplicates dropped; at least one option)."""
    kept = list(dict.fromkeys(options))
    if not kept:
        raise ValueError("no alternatives")
    return kept[0] if len(kept) == 1 else "( " + " | ".join(kept) + " )"


def _print(node: syntax.Node, names: dict[str, str]) -> str:
    """GBNF for one syntax node with rule references renamed through ``names``."""
    if isinstance(node, syntax.Literal):
        return literal_gbnf("".join(chr(c) for c in node.codepoints))
    if isinstance(node, syntax.CharClass):
        return class_gbnf(node.ranges, node.negated) if node.ranges else "[^\\x00-\\U0010FFFF]"
    if isinstance(node, syntax.AnyChar):
        return "."
    if isinstance(node, syntax.RuleRef):
        return names[node.name]
    if isinstance(node, syntax.TokenRef):
        inner = f"[{node.token_id}]" if node.token_id is not None else (node.text or "")[1:-1]
        return ("!" if node.negated else "") + f"<{inner}>"
    if isinstance(node, syntax.Repeat):
        hi = "" if node.max is None else str(node.max)
        return f"( {_print(node.item, names)} ){{{node.min},{hi}}}"
    if isinstance(node, syntax.Sequence):
        if not node.items:
            return '""'
        return " ".join(_print(item, names) for item in node.items)
    return "( " + " | ".join(_print(item, names) for item in node.items) + " )"


class RuleSet:
    """Rules of one GBNF text, in definition order, with unique names."""

    def __init__(self) -> None:
        self._rules: dict[str, str] = {}
        self._reserved: set[str] = {"root"}
        self._embedded: dict[str, str] = {}
        self._distinct: list[str] = []  # "#@ distinct-items" rules, under their new names

    def reserve(self, hint: str) -> str:
        """A rule name not used yet, made from ``hint`` (letters, digits and '-')."""
        base = _NAME_CHARS.sub("-", hint).strip("-") or "r"
        name = base
        n = 1
        while name in self._reserved:
            n += 1
            name = f"{base}-{n}"
        self._reserved.add(name)
        return name

    def define(self, name: str, body: str) -> str:
        self._rules[name] = body
        return name

    def add(self, hint: str, body: str) -> str:
        """A new rule ``hint ::= body``; returns its name."""
        return self.define(self.reserve(hint), body)

    def embed(self, grammar: Grammar, hint: str) -> str:
        """Copies ``grammar``'s rules in under fresh names; returns the name of its root rule.
        The same grammar text embedded twice is copied once."""
        key = f"{grammar.root}\n{grammar.to_gbnf()}"
        known = self._embedded.get(key)
        if known is not None:
            return known
        rules = grammar.rules
        names = {name: self.reserve(f"{hint}-{name}") for name in rules}
        try:
            for name, node in rules.items():
                self.define(names[name], _print(node, names))
        except RecursionError:
            raise ValueError(f"grammar {hint!r} is too deeply nested to embed") from None
        self._distinct += [names[name] for name in grammar.distinct_items]
        self._embedded[key] = names[grammar.root]
        return names[grammar.root]

    def text(self, root: str) -> str:
        """The GBNF text: ``root ::= <root>`` first, then every rule."""
        lines = [f"root ::= {root}"]
        lines += [f"{name} ::= {body}" for name, body in self._rules.items()]
        lines += [f"#@ distinct-items {name}" for name in self._distinct]
        return "\n".join(lines) + "\n"

    def grammar(self, root: str) -> Grammar:
        return Grammar.from_gbnf(self.text(root))


__all__ = ["RuleSet", "alternatives", "literal", "token_ref"]
