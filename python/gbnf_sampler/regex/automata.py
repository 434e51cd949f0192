"""Deterministic automata over code points, for what a regex tree alone cannot say.

Used where the JSON Schema converter needs a complement or an intersection of string languages:
keys matching no ``patternProperties`` pattern, keys that are none of the declared property names,
two patterns on one string, a pattern with ``minLength``/``maxLength``, ``propertyNames``.
Built by Thompson construction and the subset construction; sizes are capped (``MAX_DFA_STATES``),
and a language that needs more raises :class:`TooLarge`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from ..limits import MAX_DFA_STATES, MAX_NFA_STATES
from . import tree
from .tree import Node, Ranges

ALL: Ranges = ((0, tree.MAX_CODEPOINT),)


class TooLarge(Exception):
    """The automaton would exceed the state limit."""


class _Nfa:
    def __init__(self) -> None:
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[Ranges, int]]] = []

    def new(self) -> int:
        if len(self.eps) >= MAX_NFA_STATES:
            raise TooLarge(f"more than {MAX_NFA_STATES} NFA states")
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def build(self, node: Node, start: int) -> int:
        """Adds ``node`` from ``start``; returns its end state."""
        if isinstance(node, tree.Chars):
            end = self.new()
            if node.ranges:
                self.edges[start].append((node.ranges, end))
            return end
        if isinstance(node, tree.Seq):
            for item in node.items:
                start = self.build(item, start)
            return start
        if isinstance(node, tree.Alt):
            end = self.new()
            for item in node.items:
                self.eps[self.build(item, start)].append(end)
            return end
        if isinstance(node, tree.Rep):
            return self._repeat(node, start)
        if isinstance(node, tree.Lang):
            return self._embed(language_dfa(node), start)
        raise ValueError(f"cannot build an automaton for {node!r}")

    def _repeat(self, node: tree.Rep, start: int) -> int:
        cur = start
        for _ in range(node.min):
            cur = self.build(node.item, cur)
        if node.max is None:
            loop = self.new()
            self.eps[cur].append(loop)
            self.eps[self.build(node.item, loop)].append(loop)
            return loop
        end = self.new()
        for _ in range(node.max - node.min):
            self.eps[cur].append(end)
            cur = self.build(node.item, cur)
        self.eps[cur].append(end)
        return end

    def _embed(self, dfa: Dfa, start: int) -> int:
        """Copies ``dfa`` in, its start state entered from ``start`` (concatenation)."""
        states = [self.new() for _ in dfa.trans]
        self.eps[start].append(states[0])
        end = self.new()
        for state, row in zip(states, dfa.trans, strict=True):
            self.edges[state].extend((ranges, states[target]) for target, ranges in row.items())
        for accepting in dfa.accept:
            self.eps[states[accepting]].append(end)
        return end

    def closure(self, states: frozenset[int]) -> frozenset[int]:
        seen = set(states)
        todo = list(states)
        while todo:
            for nxt in self.eps[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return frozenset(seen)


@dataclass
class Dfa:
    """``trans[s]``: target -> code points leading there (a missing code point: no match)."""

    trans: list[dict[int, Ranges]]
    accept: set[int]

    def matches(self, text: str) -> bool:
        state = 0
        for c in text:
            nxt = [t for t, r in self.trans[state].items() if tree.contains(r, ord(c))]
            if not nxt:
                return False
            state = nxt[0]
        return state in self.accept

    def is_empty(self) -> bool:
        return not self.accept or 0 not in _live(self)

    def without(self, ranges: Ranges) -> Dfa:
        """The automaton with no transition on the code points of ``ranges``."""
        trans = []
        for row in self.trans:
            kept = {t: tree.subtract(r, ranges) for t, r in row.items()}
            trans.append({t: r for t, r in kept.items() if r})
        return Dfa(trans, set(self.accept))


def language_dfa(node: tree.Lang) -> Dfa:
    """The automaton a :class:`tree.Lang` node carries (always a :class:`Dfa`: only this module
    and :mod:`.lookaround` make them)."""
    if not isinstance(node.dfa, Dfa):
        raise TypeError(f"a Lang node must carry a Dfa, not {type(node.dfa).__name__}")
    return node.dfa


def partition(edges: list[tuple[Ranges, int]]) -> list[tuple[Ranges, frozenset[int]]]:
    """Splits the code points of ``edges`` into pieces with the same set of targets (a sweep
    over the range ends: large Unicode classes have hundreds of ranges)."""
    events: dict[int, list[tuple[int, int]]] = {}
    for ranges, target in edges:
        for lo, hi in ranges:
            events.setdefault(lo, []).append((target, 1))
            events.setdefault(hi + 1, []).append((target, -1))
    active: dict[int, int] = {}
    pieces: dict[frozenset[int], list[tuple[int, int]]] = {}
    for point, nxt in itertools.pairwise(sorted(events)):
        for target, delta in events[point]:
            count = active.get(target, 0) + delta
            if count:
                active[target] = count
            else:
                active.pop(target, None)
        if active:
            pieces.setdefault(frozenset(active), []).append((point, nxt - 1))
    return [(tree.normalize(r), t) for t, r in pieces.items()]


def from_regex(node: Node) -> Dfa:
    """The automaton of ``node`` (TooLarge past the state limits). Automata are never modified
    once built, so one per tree serves every caller: a schema asks for the same pattern's
    automaton in each branch its oneOf analysis compares (CityJSON: 890 builds of 40 trees)."""
    found = _built(node)
    if isinstance(found, TooLarge):
        raise TooLarge(str(found))
    return found


@functools.lru_cache(maxsize=512)
def _built(node: Node) -> Dfa | TooLarge:
    try:
        return _subset_construction(node)
    except TooLarge as err:
        return err


def _subset_construction(node: Node) -> Dfa:
    """Over the classes of code points that no NFA move tells apart, found once: splitting
    each subset's moves range by range again was most of the time on patterns with large
    Unicode classes."""
    nfa = _Nfa()
    start = nfa.new()
    final = nfa.build(node, start)
    distinct: dict[Ranges, int] = {}
    for edges in nfa.edges:
        for ranges, _ in edges:
            distinct.setdefault(ranges, len(distinct))
    classes, members = _classes_of(list(distinct))
    class_edges = [[(members[distinct[r]], t) for r, t in edges] for edges in nfa.edges]
    order, moves = determinize(
        nfa.closure(frozenset([start])),
        lambda s: ((k, t) for ks, t in class_edges[s] for k in ks),
        nfa.closure,
    )
    accept = {i for i, states in enumerate(order) if final in states}
    return Dfa(class_moves_to_ranges(moves, classes), accept)


def determinize(
    first: frozenset[int],
    moves_of: Callable[[int], Iterable[tuple[int, int]]],
    closure: Callable[[frozenset[int]], frozenset[int]],
) -> tuple[list[frozenset[int]], list[dict[int, list[int]]]]:
    """The subset construction over classes of code points: from the set ``first``, with
    ``moves_of(state)`` its ``(class, target)`` moves and ``closure`` the empty moves. Returns
    the sets (numbered by position, within MAX_DFA_STATES) and per set ``target -> classes``
    (see :func:`class_moves_to_ranges`)."""
    index = {first: 0}
    order = [first]
    moves: list[dict[int, list[int]]] = []
    while len(moves) < len(order):
        per_class: dict[int, set[int]] = {}
        for s in order[len(moves)]:
            for k, t in moves_of(s):
                per_class.setdefault(k, set()).add(t)
        targets: dict[int, list[int]] = {}
        numbers: dict[frozenset[int], int] = {}  # a closure per distinct set of targets
        for k, reached in per_class.items():
            key = frozenset(reached)
            if key not in numbers:
                numbers[key] = number_state(index, order, closure(key))
            targets.setdefault(numbers[key], []).append(k)
        moves.append(targets)
    return order, moves


_State = TypeVar("_State", bound=Hashable)


def number_state(index: dict[_State, int], order: list[_State], state: _State) -> int:
    """The number of a DFA state under construction, numbering it when new (within
    MAX_DFA_STATES): ``order`` lists the states, ``index`` maps each to its number."""
    n = index.get(state)
    if n is None:
        if len(order) >= MAX_DFA_STATES:
            raise TooLarge(f"more than {MAX_DFA_STATES} DFA states")
        n = index[state] = len(order)
        order.append(state)
    return n


def complement(dfa: Dfa) -> Dfa:
    dead = len(dfa.trans)
    trans = [dict(row) for row in dfa.trans] + [{dead: ALL}]
    for row in trans[:dead]:
        covered = tree.normalize(r for ranges in row.values() for r in ranges)
        rest = tree.complement(covered)
        if rest:
            row[dead] = tree.normalize(list(row.get(dead, ())) + list(rest))
    accept = set(range(dead + 1)) - dfa.accept
    return Dfa(trans, accept)


def intersect(a: Dfa, b: Dfa) -> Dfa:
    """The product automaton, built over classes of code points that no transition of either
    automaton tells apart: a pair of states costs one step per class, where comparing every
    transition of one row with every transition of the other, range by range, cost 46 s on a
    schema whose patterns use large Unicode classes (and then failed at MAX_DFA_STATES). The
    code-point ranges of the product's transitions are made once it is known to fit."""
    classes, class_rows = shared_classes([a, b])
    rows_a, rows_b = class_rows
    index = {(0, 0): 0}
    order = [(0, 0)]
    moves: list[dict[int, list[int]]] = []  # per product state: target -> classes
    while len(moves) < len(order):
        sa, sb = order[len(moves)]
        row_a, row_b = rows_a[sa], rows_b[sb]
        targets: dict[int, list[int]] = {}
        for k, ta in row_a.items():
            tb = row_b.get(k)
            if tb is None:
                continue
            targets.setdefault(number_state(index, order, (ta, tb)), []).append(k)
        moves.append(targets)
    accept = {i for i, (sa, sb) in enumerate(order) if sa in a.accept and sb in b.accept}
    return Dfa(class_moves_to_ranges(moves, classes), accept)


def class_moves_to_ranges(
    moves: list[dict[int, list[int]]], classes: list[Ranges]
) -> list[dict[int, Ranges]]:
    """Rows of ``target -> classes`` (from :func:`shared_classes`) as rows of code-point
    ranges. Rows repeat the same groups of classes (a loop over one character set in every
    state): each group's ranges are made once."""
    ranges: dict[tuple[int, ...], Ranges] = {}
    trans = []
    for row in moves:
        out: dict[int, Ranges] = {}
        for t, ks in row.items():
            group = tuple(ks)
            if group not in ranges:
                ranges[group] = tree.normalize(r for k in group for r in classes[k])
            out[t] = ranges[group]
        trans.append(out)
    return trans


def shared_classes(dfas: list[Dfa]) -> tuple[list[Ranges], list[list[dict[int, int]]]]:
    """The classes of code points that every transition of ``dfas`` keeps together (their
    ranges), and each automaton's rows as class -> target."""
    distinct: dict[Ranges, int] = {}
    for dfa in dfas:
        for row in dfa.trans:
            for ranges in row.values():
                distinct.setdefault(ranges, len(distinct))
    classes, members = _classes_of(list(distinct))
    rows = [
        [{k: t for t, ranges in row.items() for k in members[distinct[ranges]]} for row in d.trans]
        for d in dfas
    ]
    return classes, rows


def _classes_of(range_sets: list[Ranges]) -> tuple[list[Ranges], list[list[int]]]:
    """The pieces of code points that lie in the same sets of ``range_sets`` (their ranges),
    and per set the pieces inside it."""
    pieces = partition([(ranges, i) for i, ranges in enumerate(range_sets)])
    members: list[list[int]] = [[] for _ in range_sets]
    for k, (_, inside) in enumerate(pieces):
        for i in inside:
            members[i].append(k)
    return [ranges for ranges, _ in pieces], members


def minimize(dfa: Dfa) -> Dfa:
    """The smallest automaton of the same language: states that cannot reach an accepting one
    are dropped, then equivalent states merged (Hopcroft's partition refinement, over the
    classes of code points no transition tells apart: n log n, where refining round by round
    took n rounds on a long counter such as a ``maxLength``). Lookahead constructions chain
    products and complements, whose sizes multiply unless kept minimal."""
    live = _live(dfa)
    if 0 not in live:
        return Dfa([{}], set())
    states = [s for s in range(len(dfa.trans)) if s in live]
    n_classes, table = _class_table(dfa, states, live)
    block = _hopcroft(states, set(dfa.accept) & live, n_classes, table)
    # Number the blocks with the start state's first.
    order = {block[0]: 0}
    for s in states:
        order.setdefault(block[s], len(order))
    trans: list[dict[int, Ranges]] = [{} for _ in order]
    done: set[int] = set()
    for s in states:
        b = order[block[s]]
        if b in done:
            continue
        done.add(b)
        row: dict[int, list[Ranges]] = {}
        for t, ranges in dfa.trans[s].items():
            if t in live:
                row.setdefault(order[block[t]], []).append(ranges)
        # Most targets keep one move, its ranges already normal (merging large Unicode
        # classes again and again was most of the time here).
        trans[b] = {
            t: parts[0] if len(parts) == 1 else tree.normalize(r for p in parts for r in p)
            for t, parts in row.items()
        }
    accept = {order[block[s]] for s in states if s in dfa.accept}
    return Dfa(trans, accept)


def _class_table(
    dfa: Dfa, states: list[int], live: set[int]
) -> tuple[int, dict[int, list[tuple[int, int]]]]:
    """The number of classes of code points that no transition tells apart and, per state,
    ``(class, target)`` for every class with a live target. The classes are the pieces of the
    distinct code-point sets the moves use, not the spans between all their range ends: a
    Unicode class of 700 ranges that always moves as one is one class, not 1,400 (Hopcroft's
    work grows with the classes: most of the 122 s that one SchemaStore key pattern took)."""
    rows = [{t: r for t, r in dfa.trans[s].items() if t in live} for s in states]
    classes, class_rows = shared_classes([Dfa(rows, set())])
    return len(classes), {
        s: list(row.items()) for s, row in zip(states, class_rows[0], strict=True)
    }


def _hopcroft(
    states: list[int], accept: set[int], n_classes: int, table: dict[int, list[tuple[int, int]]]
) -> dict[int, int]:
    """Block number of every state. A missing move goes to a dead state (-1), which takes part
    in the refinement like any other rejecting state."""
    dead = -1
    inverse: dict[tuple[int, int], list[int]] = {}
    for s in states:
        defined = set()
        for c, t in table[s]:
            inverse.setdefault((c, t), []).append(s)
            defined.add(c)
        for c in range(n_classes):
            if c not in defined:
                inverse.setdefault((c, dead), []).append(s)
    for c in range(n_classes):
        inverse.setdefault((c, dead), []).append(dead)
    states = [*states, dead]
    rest = [s for s in states if s not in accept]
    blocks: list[set[int]] = [b for b in (set(s for s in states if s in accept), set(rest)) if b]
    block_of = {s: i for i, b in enumerate(blocks) for s in b}
    smallest = min(range(len(blocks)), key=lambda i: len(blocks[i]))
    work = {(smallest, c) for c in range(n_classes)} if len(blocks) > 1 else set()
    while work:
        target, c = work.pop()
        hit: dict[int, set[int]] = {}
        for t in blocks[target]:
            for s in inverse.get((c, t), ()):
                hit.setdefault(block_of[s], set()).add(s)
        for b, inside in hit.items():
            if len(inside) == len(blocks[b]):
                continue
            blocks[b] -= inside
            new = len(blocks)
            blocks.append(inside)
            for s in inside:
                block_of[s] = new
            small = new if len(inside) <= len(blocks[b]) else b
            for k in range(n_classes):
                work.add((new, k) if (b, k) in work else (small, k))
    return block_of


def _live(dfa: Dfa) -> set[int]:
    """States from which an accepting state can be reached."""
    reverse: dict[int, set[int]] = {}
    for s, row in enumerate(dfa.trans):
        for t in row:
            reverse.setdefault(t, set()).add(s)
    live = set(dfa.accept)
    todo = list(live)
    while todo:
        for prev in reverse.get(todo.pop(), ()):
            if prev not in live:
                live.add(prev)
                todo.append(prev)
    return live


def universal_states(dfa: Dfa) -> set[int]:
    """The states from which every string is accepted (a greatest fixed point: accepting, with
    a move on every code point, and only to such states)."""
    sure = {
        s
        for s in dfa.accept
        if tree.normalize(r for ranges in dfa.trans[s].values() for r in ranges) == ALL
    }
    changed = True
    while changed:
        changed = False
        for s in list(sure):
            if any(t not in sure for t in dfa.trans[s]):
                sure.discard(s)
                changed = True
    return sure


def never_ends(dfa: Dfa) -> bool:
    """Every state on the way to a match (reachable, and able to reach an accepting state) can
    still be continued in infinitely many ways: it reaches a cycle of such states. A prefix of a
    match then has infinitely many completions (JSON Schema uniqueItems relies on it)."""
    live = _live(dfa)
    if 0 not in live:
        return True
    reachable = {0}
    todo = [0]
    while todo:
        for t in dfa.trans[todo.pop()]:
            if t in live and t not in reachable:
                reachable.add(t)
                todo.append(t)
    # Peel states with no successor left: what remains has an infinite path.
    infinite = set(reachable)
    changed = True
    while changed:
        changed = False
        for s in list(infinite):
            if not any(t in infinite for t in dfa.trans[s]):
                infinite.discard(s)
                changed = True
    return infinite == reachable


def length_dfa(lo: int, hi: int | None) -> Dfa:
    """Every string of at least ``lo`` and at most ``hi`` code points (None: no upper bound)."""
    last = lo if hi is None else hi
    if last + 1 > MAX_DFA_STATES:
        raise TooLarge(f"more than {MAX_DFA_STATES} DFA states")
    trans: list[dict[int, Ranges]] = [{i + 1: ALL} for i in range(last)]
    trans.append({last: ALL} if hi is None else {})
    return Dfa(trans, set(range(lo, last + 1)))


def size_at_least(dfa: Dfa, n: int) -> bool:
    """The automaton matches at least ``n`` strings (any number when a loop lies on the way to a
    match)."""
    live = _live(dfa)
    if 0 not in live:
        return n <= 0
    memo: dict[int, int] = {}
    on_path: set[int] = set()

    def count(s: int) -> int:  # strings from state s, capped at n (-1: a loop, infinitely many)
        if s in memo:
            return memo[s]
        if s in on_path:
            return -1
        on_path.add(s)
        total = 1 if s in dfa.accept else 0
        for t, ranges in dfa.trans[s].items():
            if t not in live:
                continue
            sub = count(t)
            if sub < 0:
                total = -1
                break
            total = min(n, total + sub * sum(hi - lo + 1 for lo, hi in ranges))
        on_path.discard(s)
        memo[s] = total
        return total

    found = count(0)
    return found < 0 or found >= n


def to_rules(
    dfa: Dfa,
    chars: Callable[[Ranges], str],
    define: Callable[[str, str], str],
    reserve: Callable[[str], str],
    end: str,
    hint: str,
) -> str:
    """Prints ``dfa`` as right-recursive rules (one per live state); ``end`` is what may follow
    an accepting state (e.g. a closing quote). Returns the start rule's name."""
    live = _live(dfa)
    if 0 not in live:
        raise ValueError("empty language")
    names = {s: reserve(f"{hint}-{s}") for s in sorted(live)}
    for s in sorted(live):
        options = [end] if s in dfa.accept else []
        for target, ranges in dfa.trans[s].items():
            printed = chars(ranges) if target in live else ""
            if printed:  # "" : nothing printable (e.g. only surrogates)
                options.append(f"{printed} {names[target]}")
        define(names[s], " | ".join(options))
    return names[0]
