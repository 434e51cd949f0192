"""Free text that runs until a stop: the right-recursive GBNF rules of a search automaton.

A free stretch is any valid UTF-8 text in which none of the *stop patterns* occurs. Each stop
either ends the stretch and hands over to what follows it (a trigger: the exit expression), or is
forbidden outright (an ``excludes`` string; a trigger of the body-starts-with-trigger form, see
below). The automaton is the product of one search automaton per pattern (``.*pattern``, built
by :mod:`gbnf_sampler.regex.automata`); it stops at the *first* point where a pattern has
matched (the shortest prefix of the output that ends with a match), as llama.cpp's lazy grammars
do when they scan the text generated so far. Each state of the product becomes one rule::

    free-0 ::= "" | [^<] free-0 | "<" free-1          # "" only where the text may end
    free-10 ::= "" | [^<>] free-0 | "<" free-1 | ">" exit

Three kinds of stop:

* text stops (``TextStop``): a pattern over code points (a literal or a regex tree) and its exit;
* token stops: a token reference (``<[id]>``) and its exit, offered in every state (special
  tokens never occur in free text, so they need no search);
* prefix stops (``PrefixStop``): a literal trigger whose exit (a body) starts with the trigger's
  own text. The body is offered in the states where the trigger would begin and where reading
  the trigger completes no earlier match (so it is the first occurrence); the free path itself
  is forbidden from completing the trigger.

Masks: every state's rule consumes any token that keeps it in the free stretch, so the mask
cache classifies those tokens as accepted once per state, and a step in a free stretch is an OR
of one cached row (no token walk).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SchemaError
from ..limits import MAX_DFA_STATES
from ..regex import automata, tree
from ..regex.tree import Node, Ranges
from .rules import RuleSet, alternatives

TEXT: Ranges = tree.subtract(automata.ALL, tree.SURROGATES)
_ANY: Node = tree.Chars(automata.ALL)


@dataclass(frozen=True)
class TextStop:
    """``pattern`` ends the free text; ``exit`` (a GBNF expression) follows, or the pattern is
    forbidden when ``exit`` is None. ``anchored``: the match must start where the free text
    starts (llama.cpp's ``pattern_full`` triggers; an output that must open with the trigger)."""

    pattern: Node
    exit: str | None
    anchored: bool = False


@dataclass(frozen=True)
class PrefixStop:
    """A literal trigger that the body's own text starts with (offered where it would begin)."""

    text: str
    body: str  # a GBNF expression whose language starts with ``text``


def _search_automaton(stop: TextStop) -> automata.Dfa:
    """A complete automaton for ``.*pattern`` (or ``pattern`` alone when anchored, completed
    with a dead state so that the product never loses a character)."""
    if stop.anchored:
        dfa = automata.complement(automata.complement(automata.from_regex(stop.pattern)))
    else:
        dfa = automata.from_regex(tree.seq(tree.rep(_ANY, 0, None), stop.pattern))
        dfa = automata.minimize(dfa)
    if 0 in dfa.accept:
        raise SchemaError("a trigger or stop pattern matches the empty string", "")
    return dfa


class _Product:
    """The product of the stops' search automata, explored from the start state."""

    def __init__(self, stops: list[TextStop]) -> None:
        self.parts: list[automata.Dfa] = []
        for stop in stops:
            try:
                self.parts.append(_search_automaton(stop))
            except automata.TooLarge as e:
                raise SchemaError(f"a trigger pattern is too large: {e}", "") from None
        start = tuple(0 for _ in self.parts)
        self.states: list[tuple[int, ...]] = [start]
        self.index = {start: 0}
        self.rows: list[list[tuple[Ranges, int]]] = []

    def matched(self, state: int) -> list[int]:
        """The patterns that have just matched in ``state`` (empty: still free)."""
        return [
            i
            for i, (d, s) in enumerate(zip(self.parts, self.states[state], strict=True))
            if s in d.accept
        ]

    def explore(self) -> None:
        while len(self.rows) < len(self.states):
            s = len(self.rows)
            self.rows.append([] if self.matched(s) else self._row(self.states[s]))

    def _row(self, state: tuple[int, ...]) -> list[tuple[Ranges, int]]:
        pieces: list[tuple[Ranges, tuple[int, ...]]] = [(automata.ALL, ())]
        for dfa, s in zip(self.parts, state, strict=True):
            refined = []
            for ranges, targets in pieces:
                for target, r in dfa.trans[s].items():
                    both = tree.intersect(ranges, r)
                    if both:
                        refined.append((both, (*targets, target)))
            pieces = refined
        row: dict[int, list[tuple[int, int]]] = {}
        for ranges, targets in pieces:
            if targets not in self.index:
                if len(self.states) >= MAX_DFA_STATES:
                    raise SchemaError(
                        f"the free-text automaton of these triggers needs more than "
                        f"{MAX_DFA_STATES} states (gs.limits.MAX_DFA_STATES)",
                        "",
                    )
                self.index[targets] = len(self.states)
                self.states.append(targets)
            row.setdefault(self.index[targets], []).extend(ranges)
        return [(tree.normalize(r), t) for t, r in row.items()]

    def step(self, state: int, cp: int) -> int:
        for ranges, target in self.rows[state]:
            if tree.contains(ranges, cp):
                return target
        raise AssertionError("search automata are complete")

    def first_match_at_end(self, state: int, text: str, pattern: int) -> bool:
        """Reading ``text`` from ``state`` matches nothing before its last character, and
        ``pattern`` at it."""
        for i, c in enumerate(text):
            if self.matched(state):
                return False
            state = self.step(state, ord(c))
            if i < len(text) - 1 and self.matched(state):
                return False
        return pattern in self.matched(state)


def _chars(ranges: Ranges) -> str:
    usable = tree.intersect(ranges, TEXT)
    return tree.raw_chars_gbnf(usable) if usable else ""


def free_text(
    rules: RuleSet,
    text_stops: list[TextStop],
    *,
    anywhere: list[str] | None = None,
    prefix_stops: list[PrefixStop] | None = None,
    may_end: bool,
    hint: str = "free",
) -> str:
    """Adds the rules of a free stretch to ``rules``; returns the start rule's name.

    ``anywhere``: expressions offered in every state (a token trigger and its exit: special
    tokens never occur in free text, so they need no search). ``may_end``: the text may stop
    anywhere (an empty alternative in every state); otherwise it must run into a stop."""
    anywhere = list(anywhere or [])
    prefix_stops = prefix_stops or []
    stops = list(text_stops) + [TextStop(tree.literal(p.text), None) for p in prefix_stops]
    product = _Product(stops)
    product.explore()
    first = len(text_stops)
    options: dict[int, list[str]] = {}
    for s in range(len(product.states)):
        if not product.matched(s):
            options[s] = ['""'] if may_end else []
            options[s] += anywhere
            options[s] += [
                p.body
                for i, p in enumerate(prefix_stops)
                if product.first_match_at_end(s, p.text, first + i)
            ]
    live = _live(product, stops, options)
    if 0 not in live:
        raise SchemaError("free text that may not end needs a trigger that can end it", "")
    names = {s: rules.reserve(f"{hint}-{s}") for s in sorted(live)}
    for s in sorted(live):
        for ranges, target in product.rows[s]:
            chars = _chars(ranges)
            follow = _follow(product, stops, target, names)
            if chars and follow is not None:
                options[s].append(f"{chars} {follow}")
        rules.define(names[s], " | ".join(options[s]))
    return names[0]


def _follow(
    product: _Product, stops: list[TextStop], target: int, names: dict[int, str]
) -> str | None:
    """What comes after a step into ``target``: its rule, the exits of the stops that matched
    there, or None when one of them is forbidden (or the state is dead)."""
    matched = product.matched(target)
    if not matched:
        return names.get(target)
    exits = [stops[i].exit for i in matched]
    if any(e is None for e in exits):
        return None
    return alternatives([e for e in exits if e is not None])


def _live(product: _Product, stops: list[TextStop], options: dict[int, list[str]]) -> set[int]:
    """Free states from which the text can end or reach a stop with an exit (the others would
    be rules that never terminate)."""
    live = {s for s, opts in options.items() if opts}
    for s in options:
        for _, target in product.rows[s]:
            if product.matched(target) and _follow(product, stops, target, {}) is not None:
                live.add(s)
    changed = True
    while changed:
        changed = False
        for s in options:
            if s not in live and any(t in live for _, t in product.rows[s]):
                live.add(s)
                changed = True
    return live


__all__ = ["TEXT", "PrefixStop", "TextStop", "free_text"]
