"""Rewrites that stock llama.cpp accepts and that keep the language exactly.

* ``x{m,n}`` over llama.cpp's repetition limits: the repeated part moves into a rule of its own
  (a rule reference expands to one rule, so the count alone decides), and counts of 2000 or
  more are split into blocks of :data:`BLOCK` (``x{0,k}`` = ``B{0,q-1} x{0,999} | B{q}
  x{0,r}`` with ``B ::= x{1000}``, k = 1000q + r: every count from 0 to k, each once).
* ``x*``, ``x+``, ``x{m,}`` where ``x`` can be empty: ``(x')*`` with ``x'`` = x without the
  empty string (llama.cpp's left-recursion check refuses a loop over something empty).
* direct left recursion ``R ::= R a | b``: ``R ::= b (a)*``.
* ``[^]`` (llama.cpp reads it as the empty string): ``.``.
* rule names with ``_``: ``-`` instead (a fresh name when that one is taken).
"""

from __future__ import annotations

from collections.abc import Callable

from .. import syntax
from .facts import Facts
from .llama_sim import REPETITION_LIMIT
from .tree import children

BLOCK = 1000
Rules = dict[str, syntax.Node]


def _rebuild(node: syntax.Node, kids: list[syntax.Node]) -> syntax.Node:
    if isinstance(node, syntax.Sequence):
        return syntax.Sequence(tuple(kids))
    if isinstance(node, syntax.Alternation):
        return syntax.Alternation(tuple(kids))
    if isinstance(node, syntax.Repeat):
        return syntax.Repeat(kids[0], node.min, node.max)
    return node


def transform(
    node: syntax.Node, change: Callable[[syntax.Node, syntax.Node], syntax.Node]
) -> syntax.Node:
    """Post-order rebuild: ``change(original, rebuilt)`` returns the node to use."""
    done: dict[int, syntax.Node] = {}
    stack: list[tuple[syntax.Node, bool]] = [(node, False)]
    while stack:
        current, ready = stack.pop()
        kids = children(current)
        if kids and not ready:
            stack.append((current, True))
            stack.extend((k, False) for k in kids)
            continue
        rebuilt = _rebuild(current, [done[id(k)] for k in kids]) if kids else current
        done[id(current)] = change(current, rebuilt)
    return done[id(node)]


def _alternation(items: list[syntax.Node]) -> syntax.Node:
    return items[0] if len(items) == 1 else syntax.Alternation(tuple(items))


def _sequence(items: list[syntax.Node]) -> syntax.Node:
    return items[0] if len(items) == 1 else syntax.Sequence(tuple(items))


class Rewriter:
    """Builds rewritten rules; helper rules go into ``helpers`` (name -> body, in creation
    order) under names not used by the grammar."""

    def __init__(self, rules: Rules, facts: Facts) -> None:
        self.rules = rules
        self.facts = facts
        self.taken = set(rules)
        self.helpers: Rules = {}
        self._nonempty_rules: dict[str, str | None] = {}

    def fresh(self, base: str) -> str:
        name, n = base, 2
        while name in self.taken:
            name, n = f"{base}-{n}", n + 1
        self.taken.add(name)
        return name

    # --- repetitions over llama.cpp's limits --------------------------------------------------

    def bounded(self, rule: str, rep: syntax.Repeat, item: syntax.Node) -> syntax.Node:
        """``item{rep.min,rep.max}`` in a form llama.cpp accepts with the same language."""
        if isinstance(item, syntax.RuleRef):
            name = item.name  # a reference already expands to a single llama.cpp rule
        else:
            name = self.fresh(f"{rule}-item")
            self.helpers[name] = item
        ref = syntax.RuleRef(name)
        low, high = rep.min, rep.max
        if low < REPETITION_LIMIT and (high is None or high < REPETITION_LIMIT):
            return syntax.Repeat(ref, low, high)
        parts = self._exactly(name, low)
        if high is None:
            parts.append(syntax.Repeat(ref, 0, None))
        elif high > low:
            parts.append(self._up_to(name, high - low))
        return _sequence(parts) if parts else syntax.Sequence(())

    def _block(self, name: str) -> syntax.RuleRef:
        block = f"{name}-{BLOCK}"
        if block not in self.helpers:
            self.taken.add(block)
            self.helpers[block] = syntax.Repeat(syntax.RuleRef(name), BLOCK, BLOCK)
        return syntax.RuleRef(block)

    def _exactly(self, name: str, count: int) -> list[syntax.Node]:
        ref = syntax.RuleRef(name)
        if count < REPETITION_LIMIT:
            return [syntax.Repeat(ref, count, count)] if count else []
        q, r = divmod(count, BLOCK)
        out: list[syntax.Node] = [syntax.Repeat(self._block(name), q, q)]
        return out + ([syntax.Repeat(ref, r, r)] if r else [])

    def _up_to(self, name: str, count: int) -> syntax.Node:
        ref = syntax.RuleRef(name)
        if count < REPETITION_LIMIT:
            return syntax.Repeat(ref, 0, count)
        q, r = divmod(count, BLOCK)
        block = self._block(name)
        below: list[syntax.Node] = [syntax.Repeat(ref, 0, BLOCK - 1)]
        if q > 1:
            below.insert(0, syntax.Repeat(block, 0, q - 1))
        top: list[syntax.Node] = [syntax.Repeat(block, q, q)]
        if r:
            top.append(syntax.Repeat(ref, 0, r))
        return syntax.Alternation((_sequence(below), _sequence(top)))

    # --- loops over something that can be empty -----------------------------------------------

    def nonempty(self, node: syntax.Node) -> syntax.Node | None:
        """``node`` without the empty string (None when it matches nothing else)."""
        if not self.facts.nullable_fresh(node):
            return node
        if isinstance(node, syntax.Literal) or (
            isinstance(node, syntax.Sequence) and not node.items
        ):
            return None
        if isinstance(node, syntax.Alternation):
            kept = [k for k in map(self.nonempty, node.items) if k is not None]
            return _alternation(kept) if kept else None
        if isinstance(node, syntax.Repeat):
            inner = self.nonempty(node.item)
            if inner is None or node.max == 0:
                return None
            return inner if node.max == 1 else syntax.Repeat(inner, 1, node.max)
        if isinstance(node, syntax.RuleRef):
            name = self._nonempty_rule(node.name)
            return syntax.RuleRef(name) if name is not None else None
        assert isinstance(node, syntax.Sequence)
        return self._nonempty_sequence(list(node.items))

    def _nonempty_sequence(self, items: list[syntax.Node]) -> syntax.Node | None:
        # (a b)' = a' b | b' when a can be empty.
        head, rest = items[0], items[1:]
        if not rest:
            return self.nonempty(head)
        tail = _sequence(rest)
        options: list[syntax.Node] = []
        first = self.nonempty(head)
        if first is not None:
            options.append(_sequence([first, *rest]))
        later = self.nonempty(tail)
        if later is not None:
            options.append(later)
        return _alternation(options) if options else None

    def _nonempty_rule(self, rule: str) -> str | None:
        if rule not in self._nonempty_rules:
            name = self.fresh(f"{rule}-nonempty")
            self._nonempty_rules[rule] = name
            body = self.nonempty(self.rules[rule])
            if body is None:
                self._nonempty_rules[rule] = None
                self.taken.discard(name)
            else:
                self.helpers[name] = body
        return self._nonempty_rules[rule]

    def loop(self, rep: syntax.Repeat, item: syntax.Node) -> syntax.Node:
        """``item{m,}`` for an item that can be empty: ``(item')*``."""
        inner = self.nonempty(item)
        return syntax.Repeat(inner, 0, None) if inner is not None else syntax.Sequence(())

    # --- direct left recursion ------------------------------------------------------------

    def without_left_recursion(
        self, rule: str, body: syntax.Node, cycle: frozenset[str] = frozenset()
    ) -> syntax.Node | None:
        """``R ::= R a | b`` as ``R ::= b (a)*``. Alternatives that start with other rules of
        the left-recursion ``cycle`` are first inlined (``R ::= X c``, ``X ::= R d | e`` gives
        ``R ::= R d c | e c``), and one starting with items that can be empty before R is split
        (``p R a`` = ``p' R a | R a``). None when R is not left-recursive after that."""
        alternatives = self._inline_left(rule, body, cycle)
        me = syntax.RuleRef(rule)
        tails: list[syntax.Node] = []
        bases: list[syntax.Node] = []
        for alt in alternatives:
            items = _items(alt)
            at = self._left_position(items, me)
            if at is None:
                bases.append(alt)
                continue
            if at > 0:
                prefix = self.nonempty(_sequence(items[:at]))
                if prefix is not None:
                    bases.append(_sequence([prefix, *items[at:]]))
            rest = items[at + 1 :]
            tail = self.nonempty(_sequence(rest)) if rest else None
            if tail is not None:
                tails.append(tail)
        if not bases or (not tails and len(bases) == len(alternatives)):
            return None
        if any(self._left_position(_items(b), me) is not None for b in bases):
            return None
        if not tails:
            return _alternation(bases)
        return syntax.Sequence((_alternation(bases), syntax.Repeat(_alternation(tails), 0, None)))

    def _left_position(self, items: list[syntax.Node], me: syntax.RuleRef) -> int | None:
        """Index of ``me`` when everything before it can be empty."""
        for i, item in enumerate(items):
            if item == me:
                return i
            if not self.facts.nullable_fresh(item):
                return None
        return None

    def _inline_left(
        self, rule: str, body: syntax.Node, cycle: frozenset[str]
    ) -> list[syntax.Node]:
        alternatives = list(body.items if isinstance(body, syntax.Alternation) else (body,))
        for _ in range(len(cycle)):
            changed = False
            out: list[syntax.Node] = []
            for alt in alternatives:
                items = _items(alt)
                first = items[0] if items else None
                if isinstance(first, syntax.RuleRef) and first.name != rule and first.name in cycle:
                    inner = self.rules[first.name]
                    for sub in inner.items if isinstance(inner, syntax.Alternation) else (inner,):
                        out.append(_sequence([*_items(sub), *items[1:]]) if items[1:] else sub)
                    changed = True
                else:
                    out.append(alt)
            alternatives = out
            if not changed:
                break
        return alternatives


def _items(node: syntax.Node) -> list[syntax.Node]:
    if isinstance(node, syntax.Sequence):
        return list(node.items)
    return [node]


def rename_map(names: list[str]) -> dict[str, str]:
    """Names with ``_`` -> names llama.cpp reads (``-``), unique among all names."""
    taken = set(names)
    out = {}
    for name in names:
        if "_" not in name:
            continue
        base = name.replace("_", "-")
        new, n = base, 2
        while new in taken:
            new, n = f"{base}-{n}", n + 1
        taken.add(new)
        out[name] = new
    return out


__all__ = ["BLOCK", "Rewriter", "rename_map", "transform"]
