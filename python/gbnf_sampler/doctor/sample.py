"""Sample sentences of a grammar: random derivations of about a target length, for measuring how
the matcher behaves on real sentences of each rule (``ambiguous_growth``).

Every derivation is finite: each node's shortest derivation (length, then height) is known, and
once the text so far plus the shortest completion of what is pending reaches the target, every
choice takes its shortest option, whose height strictly decreases through rule references.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .. import syntax
from .tree import Rules, reference_graph, strongly_connected

INF = 1 << 60
MAX_EXPANSIONS_PER_BYTE = 40  # after this much work the derivation winds down
# Characters tried, in order, for a negated class.
_CANDIDATES = "ax0 b.,-_:" + "".join(map(chr, range(0x21, 0x3000)))


Minimums = dict[str, tuple[int, int]]
_MASK = (1 << 64) - 1


class SplitMix64:
    """The sentences' random numbers (SplitMix64): the core's growth probe
    (csrc/matcher/growth_probe.h) draws the same ones, so that the two sample the same
    sentences from the same seed."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform in [0, n) for 1 <= n < 2^64: the top bits of a draw, drawn again while too
        large."""
        shift = 64 - n.bit_length()
        while True:
            r = self.next() >> shift
            if r < n:
                return r

    def between(self, lo: int, hi: int) -> int:
        """Uniform in [lo, hi]."""
        return lo + self.below(hi - lo + 1)


def shortest(
    rules: Rules,
    graph: Mapping[str, list[str]] | None = None,
    components: Iterable[list[str]] | None = None,
) -> Minimums:
    """Each rule's shortest derivation (length in code points, height), component by component
    of the rule graph, leaves first (Tarjan emits a component after every component it
    reaches); inside a cycle a worklist re-evaluates a rule when a rule it uses improves (values
    only decrease, so the order inside a component does not change the result). Rules with no
    byte-level sentence (token references) are absent. ``graph`` and ``components``: the
    reference graph and the components (leaves first) of a grammar ``rules`` is a
    reachability-closed part of, when the caller has them (components outside ``rules`` are
    passed over)."""
    table: Minimums = {}
    if graph is None or components is None:
        graph = reference_graph(rules)
        components = strongly_connected(graph)
    for component in components:
        if component[0] not in rules:
            continue
        members = set(component)
        users: dict[str, list[str]] = {}
        for name in component:
            for ref in graph[name]:
                if ref in members:
                    users.setdefault(ref, []).append(name)
        work = list(reversed(component))
        queued = set(component)
        while work:
            name = work.pop()
            queued.discard(name)
            value = _evaluate(rules[name], table, {})
            if value < table.get(name, (INF, INF)):
                table[name] = value
                for user in users.get(name, ()):
                    if user not in queued:
                        queued.add(user)
                        work.append(user)
    return {name: value for name, value in table.items() if value[0] < INF}


def _evaluate(
    node: syntax.Node, table: Minimums, results: dict[int, tuple[int, int]]
) -> tuple[int, int]:
    """Post-order evaluation without recursion; ``results`` memoises by node id."""
    stack: list[tuple[syntax.Node, bool]] = [(node, False)]
    pop, push = stack.pop, stack.append
    while stack:
        current, ready = pop()
        key = id(current)
        if key in results:
            continue
        kind = type(current)
        if not ready:
            if kind is _SEQUENCE or kind is _ALTERNATION:
                push((current, True))
                stack.extend([(k, False) for k in current.items])  # type: ignore[union-attr]
                continue
            if kind is _REPEAT:
                push((current, True))
                push((current.item, False))  # type: ignore[union-attr]
                continue
        results[key] = _minimum(current, table, results)
    return results[id(node)]


class Sampler:
    """Random sentences of ``rules``. ``favour(alternation, index, room)`` may narrow choices:
    when it holds for some of the alternatives that fit, one of those is taken (``room``: code
    points left before the target; default: every alternative that fits is as likely).
    ``minimums``: :func:`shortest` of these rules, when already known."""

    def __init__(
        self,
        rules: Rules,
        seed: int = 0,
        favour: Callable[[syntax.Alternation, int, int], bool] | None = None,
        minimums: Minimums | None = None,
    ) -> None:
        self.rules = rules
        self.rng = SplitMix64(seed)
        self.favour = favour
        self.rule_min = shortest(rules) if minimums is None else minimums
        self.node_min: dict[int, tuple[int, int]] = {}

    def minimum(self, node: syntax.Node) -> tuple[int, int]:
        """The node's shortest derivation; lengths from INF on all count as INF (as in the
        core, whose arithmetic saturates there)."""
        found = self.node_min.get(id(node))
        if found is None:
            found = _evaluate(node, self.rule_min, self.node_min)
        return found if found[0] < INF else (INF, INF)

    # --- sentences ------------------------------------------------------------------------

    def sentence(self, root: str, target: int) -> str | None:
        """A sentence of rule ``root`` of about ``target`` code points (None when the rule has
        no sentence without token references)."""
        if self.rule_min.get(root, (INF, INF))[0] >= INF:
            return None
        out: list[str] = []
        emitted = 0
        pending = self.rule_min[root][0]
        stack: list[syntax.Node] = [self.rules[root]]
        work = 0
        budget_work = MAX_EXPANSIONS_PER_BYTE * (target + 16)
        while stack:
            node = stack.pop()
            pending -= self.minimum(node)[0]
            work += 1
            room = target - emitted - pending if work < budget_work else 0
            chosen = self._expand(node, room, out)
            emitted += chosen[0]
            for child in reversed(chosen[1]):
                stack.append(child)
                pending += self.minimum(child)[0]
        return "".join(out)

    def _expand(
        self, node: syntax.Node, room: int, out: list[str]
    ) -> tuple[int, list[syntax.Node]]:
        """(code points emitted, children to expand next, in order)."""
        if isinstance(node, syntax.Literal):
            out.append("".join(map(chr, node.codepoints)))
            return len(node.codepoints), []
        if isinstance(node, (syntax.CharClass, syntax.AnyChar)):
            out.append(self._char(node))
            return 1, []
        if isinstance(node, syntax.RuleRef):
            return 0, [self.rules[node.name]]
        if isinstance(node, syntax.Sequence):
            return 0, list(node.items)
        if isinstance(node, syntax.Alternation):
            return 0, [self._choose(node, room)]
        if isinstance(node, syntax.Repeat):
            return 0, [node.item] * self._count(node, room)
        raise ValueError("token references have no byte-level sentence")

    def _choose(self, node: syntax.Alternation, room: int) -> syntax.Node:
        base = self.minimum(node)
        options = [
            (i, c)
            for i, c in enumerate(node.items)
            if self.minimum(c)[0] < INF and self.minimum(c)[0] - base[0] <= max(room, 0)
        ]
        if room <= 0 or len(options) <= 1:
            return min(node.items, key=self.minimum)
        if self.favour is not None:
            favoured = [c for i, c in options if self.favour(node, i, room)]
            if favoured:
                return favoured[self.rng.below(len(favoured))]
        return options[self.rng.below(len(options))][1]

    def _count(self, node: syntax.Repeat, room: int) -> int:
        if room <= 0:
            return node.min
        item = max(1, self.minimum(node.item)[0])
        cap = min(8, room // item) if node.max is None else min(node.max - node.min, room // item)
        return node.min + self.rng.between(0, max(cap, 0))

    def _char(self, node: syntax.CharClass | syntax.AnyChar) -> str:
        if isinstance(node, syntax.AnyChar):
            return "abc"[self.rng.below(3)]
        if not node.negated:
            lo, hi = node.ranges[self.rng.below(len(node.ranges))]
            cp = self.rng.between(lo, hi)
            if 0xD800 <= cp <= 0xDFFF:
                cp = lo if not 0xD800 <= lo <= 0xDFFF else 0xE000 if hi >= 0xE000 else 0xD7FF
            return chr(cp)
        inside = node.ranges
        for c in _CANDIDATES:
            if not any(lo <= ord(c) <= hi for lo, hi in inside):
                return c
        return "\U0001f600"


_SEQUENCE, _ALTERNATION, _REPEAT = syntax.Sequence, syntax.Alternation, syntax.Repeat
_LITERAL, _REF = syntax.Literal, syntax.RuleRef


def _minimum(
    node: syntax.Node, table: dict[str, tuple[int, int]], results: dict[int, tuple[int, int]]
) -> tuple[int, int]:
    """A node's shortest derivation from its children's (in ``results``) and the rules' (in
    ``table``); the most frequent kinds first (the syntax classes have no subclasses)."""
    kind = type(node)
    if kind is _LITERAL:
        return len(node.codepoints), 0  # type: ignore[union-attr]
    if kind is _REF:
        length, height = table.get(node.name, (INF, INF))  # type: ignore[union-attr]
        return (length, height + 1) if length < INF else (INF, INF)
    if kind is _SEQUENCE:
        parts = [results[id(i)] for i in node.items]  # type: ignore[union-attr]
        if any(p[0] >= INF for p in parts):
            return INF, INF
        return sum(p[0] for p in parts), max((p[1] for p in parts), default=0)
    if kind is _ALTERNATION:
        return min(results[id(i)] for i in node.items)  # type: ignore[union-attr]
    if kind is _REPEAT:
        if node.min == 0:  # type: ignore[union-attr]
            return 0, 0
        length, height = results[id(node.item)]  # type: ignore[union-attr]
        return (length * node.min, height) if length < INF else (INF, INF)  # type: ignore[union-attr]
    if kind is syntax.TokenRef:
        return INF, INF
    return 1, 0  # a class or '.'


__all__ = ["Sampler", "SplitMix64"]
