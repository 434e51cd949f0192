"""``shadowed_alternative``: an alternative that adds nothing because another alternative of the
same choice already matches every text it matches.

GBNF alternation is a context-free union, not a PEG's ordered choice: no alternative "wins", and
an alternative whose language is inside another's still matches, so the grammar is ambiguous
there and that alternative contributes no text the other does not. Deciding language inclusion
is impossible in general; this check decides the cheap, common cases exactly:

* duplicates (the same subtree twice; the later one is reported);
* one-character alternatives (a one-character literal, a class, ``.``) inside another
  one-character alternative (``"a" | [a-z]``, ``[a-c] | [a-z]``);
* a literal matched by another alternative that is regular after inlining at most
  :data:`MAX_INLINE_DEPTH` non-recursive rules (``"abc" | [a-z]+``), by an automaton run.

Anything else (two infinite languages, recursive rules, token references) is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import syntax
from ..limits import DOCTOR_MAX_INLINE_DEPTH as MAX_INLINE_DEPTH
from ..limits import DOCTOR_MAX_LITERAL_CHECKS as MAX_LITERAL_CHECKS
from ..limits import DOCTOR_MAX_NFA_STATES as MAX_NFA_STATES
from ..limits import DOCTOR_MAX_PAIRWISE as MAX_PAIRWISE
from .facts import Facts
from .findings import Finding
from .locate import Locator
from .tree import Rules, to_gbnf, walk

MAX_CP = 0x10FFFF

Ranges = tuple[tuple[int, int], ...]


def _normalize(ranges: list[tuple[int, int]]) -> Ranges:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _complement(ranges: Ranges) -> Ranges:
    out, nxt = [], 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CP:
        out.append((nxt, MAX_CP))
    return tuple(out)


def one_char_set(node: syntax.Node) -> Ranges | None:
    """The code points of a one-character alternative, or None."""
    if isinstance(node, syntax.Literal) and len(node.codepoints) == 1:
        return ((node.codepoints[0], node.codepoints[0]),)
    if isinstance(node, syntax.CharClass):
        ranges = _normalize(list(node.ranges))
        return _complement(ranges) if node.negated else ranges
    if isinstance(node, syntax.AnyChar):
        return ((0, MAX_CP),)
    return None


def _subset(a: Ranges, b: Ranges) -> bool:
    return all(any(blo <= lo and hi <= bhi for blo, bhi in b) for lo, hi in a)


class _TooBig(Exception):
    pass


class Nfa:
    """A Thompson automaton over code points for a regular subtree (rules inlined)."""

    def __init__(self, rules: Rules, recursive: set[str]) -> None:
        self.rules = rules
        self.recursive = recursive
        self.eps: list[list[int]] = []
        self.moves: list[list[tuple[Ranges, int]]] = []

    def state(self) -> int:
        if len(self.eps) >= MAX_NFA_STATES:
            raise _TooBig
        self.eps.append([])
        self.moves.append([])
        return len(self.eps) - 1

    def build(self, node: syntax.Node, depth: int = 0) -> tuple[int, int]:
        start, end = self.state(), self.state()
        chars = one_char_set(node)
        if chars is not None:
            self.moves[start].append((chars, end))
        elif isinstance(node, (syntax.Literal, syntax.Sequence)):
            parts = (
                [syntax.Literal((c,)) for c in node.codepoints]
                if isinstance(node, syntax.Literal)
                else list(node.items)
            )
            here = start
            for part in parts:
                s, e = self.build(part, depth)
                self.eps[here].append(s)
                here = e
            self.eps[here].append(end)
        elif isinstance(node, syntax.Alternation):
            for item in node.items:
                s, e = self.build(item, depth)
                self.eps[start].append(s)
                self.eps[e].append(end)
        elif isinstance(node, syntax.Repeat):
            self._repeat(node, start, end, depth)
        elif isinstance(node, syntax.RuleRef):
            if depth >= MAX_INLINE_DEPTH or node.name in self.recursive:
                raise _TooBig
            s, e = self.build(self.rules[node.name], depth + 1)
            self.eps[start].append(s)
            self.eps[e].append(end)
        else:
            raise _TooBig  # token references
        return start, end

    def _repeat(self, node: syntax.Repeat, start: int, end: int, depth: int) -> None:
        here = start
        for _ in range(node.min):
            s, e = self.build(node.item, depth)
            self.eps[here].append(s)
            here = e
        if node.max is None:
            s, e = self.build(node.item, depth)
            self.eps[here].extend((s, end))
            self.eps[e].extend((s, end))
            return
        for _ in range(node.max - node.min):
            s, e = self.build(node.item, depth)
            self.eps[here].extend((s, end))
            here = e
        self.eps[here].append(end)

    def _closure(self, states: set[int]) -> set[int]:
        work = list(states)
        while work:
            for nxt in self.eps[work.pop()]:
                if nxt not in states:
                    states.add(nxt)
                    work.append(nxt)
        return states

    def accepts(self, start: int, end: int, text: tuple[int, ...]) -> bool:
        current = self._closure({start})
        for cp in text:
            nxt = {
                target
                for s in current
                for ranges, target in self.moves[s]
                if any(lo <= cp <= hi for lo, hi in ranges)
            }
            if not nxt:
                return False
            current = self._closure(nxt)
        return end in current


SHAPED_BUCKET = 16  # alternatives in one fingerprint bucket before shapes are used


def _show(node: syntax.Node) -> str:
    try:
        text = to_gbnf(node)
    except RecursionError:  # nested deeper than the printer can go: shown cut
        return "(...)"
    return text if len(text) <= 40 else text[:37] + "..."


def _fingerprint(node: syntax.Node) -> tuple[object, ...]:
    if isinstance(node, syntax.Literal):
        return (syntax.Literal, node.codepoints[:8], len(node.codepoints))
    if isinstance(node, syntax.CharClass):
        return (syntax.CharClass, node.ranges[:4], node.negated)
    if isinstance(node, syntax.RuleRef):
        return (syntax.RuleRef, node.name)
    if isinstance(node, syntax.Repeat):
        return (syntax.Repeat, node.min, node.max, type(node.item))
    if isinstance(node, (syntax.Sequence, syntax.Alternation)):
        return (type(node), len(node.items), *(type(c) for c in node.items[:4]))
    return (type(node), node)


class Shapes:
    """Hash-consing: each node's shape number, equal exactly when the subtrees are equal (``==``
    of the syntax dataclasses), computed once per node object (memoised by ``id``, so only for
    nodes that stay alive, such as ``Grammar.rules``' trees) and without recursion: comparing
    alternatives is then one integer comparison, not a walk of both subtrees each time."""

    def __init__(self) -> None:
        self._of: dict[int, int] = {}
        self._numbers: dict[object, int] = {}

    def of(self, node: syntax.Node) -> int:
        shape_of = self._of
        known = shape_of.get(id(node))
        if known is not None:
            return known
        order: list[syntax.Node] = []  # parents before children: numbered in reverse
        stack = [node]
        while stack:
            current = stack.pop()
            if id(current) in shape_of:
                continue
            order.append(current)
            kind = type(current)
            if kind is _SEQUENCE or kind is _ALTERNATION:
                stack.extend(current.items)  # type: ignore[union-attr]
            elif kind is _REPEAT:
                stack.append(current.item)  # type: ignore[union-attr]
        numbers = self._numbers
        for current in reversed(order):
            kind = type(current)
            key: object
            if kind is _SEQUENCE or kind is _ALTERNATION:
                key = (kind, tuple([shape_of[id(c)] for c in current.items]))  # type: ignore[union-attr]
            elif kind is _REPEAT:
                item = current.item  # type: ignore[union-attr]
                key = (kind, shape_of[id(item)], current.min, current.max)  # type: ignore[union-attr]
            else:
                key = current  # a leaf: its own (dataclass) equality and hash
            shape_of[id(current)] = numbers.setdefault(key, len(numbers))
        return shape_of[id(node)]


_SEQUENCE, _ALTERNATION, _REPEAT = syntax.Sequence, syntax.Alternation, syntax.Repeat


def _covered(
    items: tuple[syntax.Node, ...],
    facts: Facts,
    shapes: Shapes | None = None,
    duplicates: dict[int, int] | None = None,
) -> dict[int, int]:
    """Alternative index -> index of an alternative that covers it. ``shapes``: shared
    :class:`Shapes` for nodes that stay alive (a fresh one otherwise). ``duplicates``: what
    :func:`_duplicates` gives, when the core has found them."""
    covered = _duplicates(items, shapes) if duplicates is None else dict(duplicates)
    singles = [(j, s) for j, i in enumerate(items) if (s := one_char_set(i)) is not None]
    wide = singles
    if len(singles) > MAX_PAIRWISE:
        wide = [(j, s) for j, s in singles if not isinstance(items[j], syntax.Literal)]
    for j, chars in singles:
        for i, other in wide:
            fits = j != i and j not in covered and _subset(chars, other)
            if fits and (chars != other or i < j):
                covered[j] = i
    _literals_covered(items, facts, covered)
    return covered


def _duplicates(items: tuple[syntax.Node, ...], shapes: Shapes | None) -> dict[int, int]:
    """Alternative index -> the first earlier alternative equal to it (the reference for the
    core's survey, csrc/grammar/choice_survey.h)."""
    covered: dict[int, int] = {}
    shapes = Shapes() if shapes is None else shapes
    # Duplicates: among alternatives with the same cheap fingerprint, the first earlier one
    # that is equal. A few are compared with == (it stops at the first difference); past
    # SHAPED_BUCKET, by their shapes (comparing each newcomer with every earlier one was
    # quadratic on the large alternations of schema grammars).
    seen: dict[tuple[object, ...], dict[int, int] | list[int]] = {}
    for j, item in enumerate(items):
        key = _fingerprint(item)
        bucket = seen.setdefault(key, [])
        if isinstance(bucket, list) and len(bucket) < SHAPED_BUCKET:
            same = next((i for i in bucket if items[i] == item), None)
            if same is None:
                bucket.append(j)
            else:
                covered[j] = same
            continue
        if isinstance(bucket, list):  # index the bucket by shape from now on
            bucket = seen[key] = {shapes.of(items[i]): i for i in reversed(bucket)}
        same = bucket.setdefault(shapes.of(item), j)
        if same != j:
            covered[j] = same
    return covered


def _literals_covered(
    items: tuple[syntax.Node, ...], facts: Facts, covered: dict[int, int]
) -> None:
    literals = [
        (j, n.codepoints)
        for j, n in enumerate(items)
        if isinstance(n, syntax.Literal) and len(n.codepoints) > 1 and j not in covered
    ]
    regular = [i for i, n in enumerate(items) if not isinstance(n, syntax.Literal)]
    if not literals or not regular or len(literals) * len(regular) > MAX_LITERAL_CHECKS:
        return
    for i in regular:
        nfa = Nfa(facts.rules, facts.recursive)
        try:
            start, end = nfa.build(items[i])
        except _TooBig:
            continue
        for j, text in literals:
            if j not in covered and nfa.accepts(start, end, text):
                covered[j] = i


def check_shadowed(facts: Facts, loc: Locator) -> list[Finding]:
    out = []
    shapes = Shapes()
    for rule, node, duplicates in _choices(facts):
        try:
            covered = _covered(node.items, facts, shapes, duplicates)
        except RecursionError:  # comparing subtrees nested too deeply: not decided cheaply
            continue
        for j, i in sorted(covered.items()):
            dup = node.items[j] == node.items[i]
            relation = "is the same as" if dup else "already matches every text of"
            message = (
                f'alternative {j + 1} ({_show(node.items[j])}) of rule "{rule}" adds '
                f"nothing: alternative {i + 1} ({_show(node.items[i])}) {relation} it. GBNF "
                "alternatives are not ordered (not a PEG): both match, so the grammar is "
                "ambiguous here"
            )
            fix = f"remove alternative {j + 1}"
            if not dup:
                fix += f", or take its text out of alternative {i + 1} if it must stay apart"
            out.append(loc.finding("shadowed_alternative", message, fix, rule, node.items[j]))
    return out


def _choices(facts: Facts) -> Iterator[tuple[str, syntax.Alternation, dict[int, int] | None]]:
    """(rule, choice, its duplicates or None) for the choices to check: from the core's survey
    when the facts came from the core (only the choices it found work in, duplicates found),
    else every choice of every rule."""
    survey = facts.choice_survey()
    if survey is None:
        for rule, body in facts.rules.items():
            for node in walk(body):
                if isinstance(node, syntax.Alternation):
                    yield rule, node, None
        return
    walked, choices = None, []
    for rule, ordinal, duplicates in survey:  # in rule order: a rule's body is walked once
        if rule != walked:
            walked = rule
            choices = [n for n in walk(facts.rules[rule]) if isinstance(n, syntax.Alternation)]
        yield rule, choices[ordinal], duplicates


__all__ = ["MAX_INLINE_DEPTH", "Nfa", "check_shadowed", "one_char_set"]
