"""Every string but a finite set of words, as a :class:`~.automata.Dfa`, built straight from
the words' trie.

An object's keys beyond its declared properties are the strings that are none of the declared
names. Built as the complement of the names' subset construction, that automaton was most of a
large schema's conversion (one per object schema); the trie gives the same language in one pass.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..limits import MAX_DFA_STATES
from . import tree
from .automata import ALL, Dfa, TooLarge
from .tree import Ranges


def other_words(words: Iterable[str]) -> Dfa:
    """The strings that are none of ``words``. States: the trie's nodes (one shared state for
    the ends of words that nothing continues), then an accepting sink for the strings that
    have left every word; a node is accepting unless a word ends there. TooLarge past
    ``MAX_DFA_STATES`` states, as a subset construction would be."""
    children: list[dict[int, int]] = [{}]
    ends: set[int] = set()
    for word in sorted(set(words)):
        node = 0
        for c in word:
            row = children[node]
            node = row.get(ord(c), -1)
            if node < 0:
                node = row[ord(c)] = len(children)
                children.append({})
        ends.add(node)
    # Number the nodes breadth-first from the root; the childless ends share one number.
    number = {0: 0}
    order = [0]
    leaf = -1
    for node in order:  # grows while it is read
        for child in children[node].values():
            if not children[child]:
                if leaf < 0:
                    leaf = len(order)
                    order.append(child)
                number[child] = leaf
            elif child not in number:
                number[child] = len(order)
                order.append(child)
        if len(order) >= MAX_DFA_STATES:
            raise TooLarge(f"more than {MAX_DFA_STATES} DFA states")
    sink = len(order)
    trans: list[dict[int, Ranges]] = []
    for node in order:
        by_target: dict[int, list[int]] = {}
        for cp in sorted(children[node]):
            by_target.setdefault(number[children[node][cp]], []).append(cp)
        moves = {target: _ranges(cps) for target, cps in by_target.items()}
        rest = tree.complement(_ranges(sorted(children[node])))
        if rest:
            moves[sink] = rest
        trans.append(moves)
    trans.append({sink: ALL})
    accept = {number[node] for node in order if node not in ends}
    accept.add(sink)
    return Dfa(trans, accept)


def _ranges(cps: list[int]) -> Ranges:
    """Sorted distinct code points as ranges (a trie node's: mostly one)."""
    out: list[tuple[int, int]] = []
    for cp in cps:
        if out and out[-1][1] + 1 == cp:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return tuple(out)
