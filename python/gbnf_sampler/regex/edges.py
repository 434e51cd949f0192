"""The strings of a pattern tree that start (or end) with a character of a given set, as a
tree again: what lets a word boundary between two plain parts of a pattern be written without
an automaton (:func:`.assertions.compile_pattern`).

Only plain trees (characters, sequences, alternatives, repetitions) are rewritten; anything
else (an anchor, a lookaround, an automaton) raises :class:`NotPlain`.
"""

from __future__ import annotations

from . import tree
from .tree import Node, Ranges


class NotPlain(Exception):
    """The tree holds a node these rewrites do not look into."""


def nullable(node: Node) -> bool:
    """Whether ``node`` matches the empty string."""
    if isinstance(node, tree.Chars):
        return False
    if isinstance(node, tree.Seq):
        return all(nullable(i) for i in node.items)
    if isinstance(node, tree.Alt):
        return any(nullable(i) for i in node.items)
    if isinstance(node, tree.Rep):
        return node.min == 0 or nullable(node.item)
    raise NotPlain(type(node).__name__)


def starting_with(node: Node, chars: Ranges, empty: bool) -> Node:
    """The non-empty strings of ``node`` whose first character is in ``chars``, and the empty
    string too when ``empty`` and ``node`` matches it."""
    return _restricted(node, chars, empty, first=True)


def ending_with(node: Node, chars: Ranges, empty: bool) -> Node:
    """As :func:`starting_with`, for the last character."""
    return _restricted(node, chars, empty, first=False)


def _restricted(node: Node, chars: Ranges, empty: bool, first: bool) -> Node:
    out = _non_empty(node, chars, first)
    return tree.alt(out, tree.EMPTY) if empty and nullable(node) else out


def _non_empty(node: Node, chars: Ranges, first: bool) -> Node:
    if isinstance(node, tree.Chars):
        kept = tree.intersect(node.ranges, chars)
        return tree.Chars(kept) if kept else tree.NEVER
    if isinstance(node, tree.Alt):
        parts = (_non_empty(i, chars, first) for i in node.items)
        return tree.alt(*(p for p in parts if p != tree.NEVER))
    if isinstance(node, tree.Seq):
        if not node.items:
            return tree.NEVER
        # the edge character is in the edge item, or that item is empty and it is in the rest
        items = node.items if first else node.items[::-1]
        head, rest = items[0], tree.Seq(items[1:] if first else items[1:][::-1])
        options = [_join(_non_empty(head, chars, first), rest, first)]
        if nullable(head):
            options.append(_non_empty(rest, chars, first))
        return tree.alt(*(o for o in options if o != tree.NEVER))
    if isinstance(node, tree.Rep):
        # the first (last) non-empty round carries the edge; empty rounds change nothing
        inner = _non_empty(node.item, chars, first)
        if inner == tree.NEVER:
            return tree.NEVER
        more = tree.rep(node.item, max(node.min - 1, 0), None if node.max is None else node.max - 1)
        return _join(inner, more, first)
    raise NotPlain(type(node).__name__)


def _join(edge: Node, rest: Node, first: bool) -> Node:
    return tree.seq(edge, rest) if first else tree.seq(rest, edge)


def peel(node: Node, first: bool) -> tuple[Node, Node]:
    """``(edge, body)`` with ``node`` = edge·body (``first``) or body·edge: the smallest edge
    part that holds the node's first (last) character, so that restricting it leaves the long
    body shared. ``(node, EMPTY)`` when no part can be split off."""
    if isinstance(node, tree.Seq) and node.items:
        end = node.items[0] if first else node.items[-1]
        if nullable(end):
            return node, tree.EMPTY
        edge, body = peel(end, first)
        others = node.items[1:] if first else node.items[:-1]
        return edge, (tree.seq(body, *others) if first else tree.seq(*others, body))
    if isinstance(node, tree.Rep) and node.min >= 1 and not nullable(node.item):
        less = tree.rep(node.item, node.min - 1, None if node.max is None else node.max - 1)
        edge, body = peel(node.item, first)
        return edge, (tree.seq(body, less) if first else tree.seq(less, body))
    return node, tree.EMPTY


__all__ = ["NotPlain", "ending_with", "nullable", "peel", "starting_with"]
