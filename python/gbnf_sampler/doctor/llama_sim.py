"""What stock llama.cpp's grammar parser (``src/llama-grammar.cpp``) makes of a grammar our
parser accepted, replayed on the positioned syntax tree.

llama.cpp expands every group and repetition into rules of its own: ``(...)`` becomes a new
rule; ``S{m,n}`` becomes ``S`` m times and a chain of n-m rules ``S'(k) ::= S S'(k-1) |``
(``S{m,}``: one rule ``S' ::= S S' |``; ``*``, ``+``, ``?`` are ``{0,}``, ``{1,}``, ``{0,1}``).
Its parser refuses a bound above :data:`REPETITION_LIMIT` in ``{m}``/``{m,}``, reads an upper
bound above it as no bound, and refuses a repetition when the rules the repeated part expanded
to times the repetition's count exceeds the limit (it counts the symbols created while parsing a
group, rule names first seen there included). When the grammar is loaded, a depth-first search
over the leftmost symbols of every rule rejects "left recursion"; it treats a rule as empty only
when one of its alternatives has no symbol at all, so it also rejects ``X*`` when ``X`` has an
empty alternative (``S' ::= X S' |`` recurses through the empty ``X``), and misses left
recursion that passes through a rule that is empty only through another rule (llama.cpp then
loops forever building its first stacks).

This module counts and expands the way that code does (the tests check the verdicts against
llama-cpp-python's build) and reports each issue with the node and rule it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import syntax
from .source import ParsedSource, RuleSource
from .tree import cycles

REPETITION_LIMIT = 2000  # MAX_REPETITION_THRESHOLD in llama-grammar.cpp

Symbol = int | None  # a rule id, or None for a terminal element
Alternatives = list[list[Symbol]]


@dataclass(frozen=True)
class RepeatIssue:
    """A repetition llama.cpp refuses (``kind`` ``min_over`` or ``product_over``) or reads
    otherwise (``max_clamped``). ``product`` is rules-before x count for ``product_over``."""

    kind: str
    source: RuleSource
    node: syntax.Repeat
    before: int = 1  # rules the repeated part expanded to (llama.cpp's n_prev_rules)
    count: int = 1  # the repetition's count in its check

    @property
    def product(self) -> int:
        return self.before * self.count


@dataclass
class Expansion:
    """llama.cpp's rules: ``alternatives[id]``; ``origin[id]`` is (our rule, our node or None
    for the rule itself) and ``source_of[id]`` the definition it came from; ``ids`` maps our
    rule names to ids."""

    alternatives: dict[int, Alternatives] = field(default_factory=dict)
    origin: dict[int, tuple[str, syntax.Node | None]] = field(default_factory=dict)
    source_of: dict[int, RuleSource] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)
    issues: list[RepeatIssue] = field(default_factory=list)


class _Simulator:
    def __init__(self) -> None:
        self.out = Expansion()
        self.next_id = 0
        self.rule: RuleSource | None = None
        self.open_groups: dict[int, int] = {}

    def symbol(self, name: str) -> int:
        """llama.cpp's get_symbol_id: a name gets the next id when first seen."""
        if name not in self.out.ids:
            self.out.ids[name] = self.next_id
            self.out.origin[self.next_id] = (name, None)
            self.next_id += 1
        return self.out.ids[name]

    def generated(self, node: syntax.Node) -> int:
        assert self.rule is not None
        rid = self.next_id
        self.next_id += 1
        self.out.origin[rid] = (self.rule.name, node)
        self.out.source_of[rid] = self.rule
        return rid

    def run(self, parsed: ParsedSource) -> Expansion:
        for rule in parsed.definitions:
            self.rule = rule
            self.open_groups = dict(rule.groups)
            rid = self.symbol(rule.name)
            self.out.source_of[rid] = rule
            self.out.alternatives[rid] = self.alternates(rule.body)
        return self.out

    def alternates(self, node: syntax.Node) -> Alternatives:
        plain = isinstance(node, syntax.Alternation) and self._unwrapped(node)
        items = node.items if isinstance(node, syntax.Alternation) and plain else (node,)
        return [self.sequence(item) for item in items]

    def _unwrapped(self, node: syntax.Node) -> bool:
        """``node`` is not (any more) wrapped in parentheses."""
        return not self.open_groups.get(id(node), 0)

    def sequence(self, node: syntax.Node) -> list[Symbol]:
        plain = isinstance(node, syntax.Sequence) and self._unwrapped(node)
        items = node.items if isinstance(node, syntax.Sequence) and plain else (node,)
        out: list[Symbol] = []
        for item in items:
            out += self.item(item)
        return out

    def item(self, node: syntax.Node) -> list[Symbol]:
        """One element with its repetition operators, innermost first."""
        chain: list[syntax.Repeat] = []
        base = node
        while isinstance(base, syntax.Repeat) and not self.open_groups.get(id(base), 0):
            chain.append(base)
            base = base.item
        symbols, before = self.element(base)
        for rep in reversed(chain):
            symbols, before = self.repeat(rep, symbols, before)
        return symbols

    def element(self, node: syntax.Node) -> tuple[list[Symbol], int]:
        """(the element's symbols, the rules it created: llama.cpp's n_prev_rules)."""
        if self.open_groups.get(id(node), 0):
            self.open_groups[id(node)] -= 1
            created = self.next_id
            rid = self.generated(node)
            self.out.alternatives[rid] = self.alternates(node)
            return [rid], max(1, self.next_id - created)
        if isinstance(node, syntax.Literal):
            return [None] * len(node.codepoints), 1
        if isinstance(node, syntax.RuleRef):
            return [self.symbol(node.name)], 1
        if isinstance(node, syntax.CharClass) and node.negated and not node.ranges:
            return [], 1  # "[^]" pushes no element at all
        if isinstance(node, (syntax.CharClass, syntax.AnyChar, syntax.TokenRef)):
            return [None], 1
        # A sequence or alternation can only be an element inside parentheses.
        raise ValueError("unexpected element")

    def repeat(
        self, rep: syntax.Repeat, prev: list[Symbol], before: int
    ) -> tuple[list[Symbol], int]:
        assert self.rule is not None
        low, high = rep.min, rep.max
        refused = low > REPETITION_LIMIT  # the parser stops here
        if refused:
            self.out.issues.append(RepeatIssue("min_over", self.rule, rep))
        if high is not None and high > REPETITION_LIMIT and not refused:
            self.out.issues.append(RepeatIssue("max_clamped", self.rule, rep))
            high = None
        total = high if high is not None and high > 0 else (low if low > 0 else 1)
        if before * total >= REPETITION_LIMIT and not refused:
            self.out.issues.append(RepeatIssue("product_over", self.rule, rep, before, total))
        out = prev * low
        last = None
        for i in range(1 if high is None else high - low):
            rid = self.generated(rep)
            tail: list[Symbol] = [rid] if high is None else ([last] if i > 0 else [])
            self.out.alternatives[rid] = [prev + tail, []]
            last = rid
        if last is not None:
            out.append(last)
        return out, max(1, before * total)


def expand(parsed: ParsedSource) -> Expansion:
    """llama.cpp's rules and repetition issues for ``parsed`` (the positioned source of every
    definition, in order)."""
    return _Simulator().run(parsed)


def repetitions_within_limits(parsed: ParsedSource) -> bool:
    """True when no repetition of ``parsed`` can be one :func:`expand` reports, proved without
    expanding: every count is at most :data:`REPETITION_LIMIT` and, for every repetition, an
    upper bound of its repeated part's n_prev_rules (:func:`_rule_counts`) times its count
    stays under it."""
    memo: dict[int, tuple[int, int]] = {}
    for rule in parsed.definitions:
        for node in rule.repeats:
            low, high = node.min, node.max
            if low > REPETITION_LIMIT or (high is not None and high > REPETITION_LIMIT):
                return False
            total = high if high is not None and high > 0 else (low if low > 0 else 1)
            if _rule_counts(node.item, rule.groups, memo)[1] * total >= REPETITION_LIMIT:
                return False
    return True


def _rule_counts(
    node: syntax.Node, groups: dict[int, int], memo: dict[int, tuple[int, int]]
) -> tuple[int, int]:
    """Upper bounds of (the rules parsing ``node`` creates, its n_prev_rules as a repeated
    part), as :class:`_Simulator` counts them, a rule name counting as first seen (one rule)
    everywhere."""
    known = memo.get(id(node))
    if known is not None:
        return known
    kind = type(node)
    if kind is syntax.Repeat:
        low, high = node.min, node.max  # type: ignore[union-attr]
        total = high if high is not None and high > 0 else (low if low > 0 else 1)
        created, before = _rule_counts(node.item, groups, memo)  # type: ignore[union-attr]
        counts = (created + (1 if high is None else high - low), max(1, before * total))
    elif kind is syntax.Sequence or kind is syntax.Alternation:
        items = node.items  # type: ignore[union-attr]
        counts = (sum(_rule_counts(item, groups, memo)[0] for item in items), 1)
    else:
        counts = (1 if kind is syntax.RuleRef else 0, 1)
    parentheses = groups.get(id(node), 0)
    if parentheses:  # each pair is a rule of its own, and the element counts what it created
        created = counts[0] + parentheses
        counts = (created, max(1, created))
    memo[id(node)] = counts
    return counts


def left_cycles(expansion: Expansion) -> list[list[int]]:
    """The cycles llama.cpp's left-recursion check finds (it rejects the grammar when there is
    one). Its depth-first search follows, in each alternative, the leftmost symbols up to the
    first terminal or the first rule with no empty alternative; with that notion of "empty"
    fixed per rule, the search fires exactly when this leftmost graph has a cycle, so the
    cycles are its strongly connected components."""
    rules = expansion.alternatives
    direct_empty = {rid for rid, alts in rules.items() if [] in alts}
    graph: dict[int, list[int]] = {}
    for rid, alts in rules.items():
        edges: list[int] = []
        for alt in alts:
            for sym in alt:
                if sym is None:
                    break
                edges.append(sym)
                if sym not in direct_empty:
                    break
        graph[rid] = edges
    return sorted(sorted(component) for component in cycles(graph))


__all__ = [
    "REPETITION_LIMIT",
    "Expansion",
    "RepeatIssue",
    "expand",
    "left_cycles",
    "repetitions_within_limits",
]
