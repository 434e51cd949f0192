"""The parsed grammar as plain Python values, for introspection and for tools written in Python.

``Grammar.rules`` maps each rule name (in definition order) to one of these nodes. The tree is the
grammar exactly as written: no normalization. Literals and classes hold Unicode code points (GBNF
matches code points; ``"\\xff"`` is U+00FF, not a byte).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Literal:
    """A string literal, as a tuple of code points (``"ab"`` -> ``(97, 98)``)."""

    codepoints: tuple[int, ...]


@dataclass(frozen=True)
class CharClass:
    """One code point in (or, when ``negated``, outside) the union of inclusive ``ranges``."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False


@dataclass(frozen=True)
class AnyChar:
    """``.``: any one code point."""


@dataclass(frozen=True)
class RuleRef:
    """A reference to the rule ``name``."""

    name: str


@dataclass(frozen=True)
class TokenRef:
    """One whole vocabulary token: ``<[id]>`` (``token_id``) or ``<text>`` (``text``, including
    the angle brackets); ``negated`` (``!<...>``) means any single token except that one."""

    token_id: int | None = None
    text: str | None = None
    negated: bool = False


@dataclass(frozen=True)
class Repeat:
    """``item`` repeated ``min`` to ``max`` times; ``max`` is None for no upper bound."""

    item: Node
    min: int
    max: int | None


@dataclass(frozen=True)
class Sequence:
    """Items one after another. Never exactly one item; ``Sequence(())`` is the empty string."""

    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alternation:
    """One of ``items`` (always two or more)."""

    items: tuple[Node, ...]


Node = Literal | CharClass | AnyChar | RuleRef | TokenRef | Repeat | Sequence | Alternation

__all__ = [
    "Alternation",
    "AnyChar",
    "CharClass",
    "Literal",
    "Node",
    "Repeat",
    "RuleRef",
    "Sequence",
    "TokenRef",
]
