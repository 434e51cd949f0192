"""Static facts about a grammar's rules, computed once and shared by the checks: which rules (and
nodes) can match the empty string, which are reachable, the rule graph's strongly connected
components, which rules can only ever produce whitespace, which hold token references, the
cycles ambiguous_growth measures, shortest derivations and the choices shadowed_alternative
looks at. For a parsed grammar they come from the core (csrc/grammar/doctor_facts.h and its
neighbours: one pass over the flat node array instead of walks of Python trees, the doctor's
main cost on the 1-5 MB grammars of large JSON Schemas); the Python definitions here are the
reference the tests compare them with.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import _core, syntax
from .sample import Minimums, shortest
from .tree import (
    Rules,
    children,
    reachable,
    reference_graph,
    strongly_connected,
    users_of,
    walk,
)

# Code points a reader does not see: whitespace (Unicode White_Space) and the zero-width
# format characters models are known to loop on.
INVISIBLE: tuple[tuple[int, int], ...] = (
    (0x09, 0x0D),
    (0x20, 0x20),
    (0x85, 0x85),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200D),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x2060),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
)


def invisible(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in INVISIBLE)


def class_invisible(node: syntax.CharClass) -> bool:
    """Every code point the class matches is invisible (a negated class never is)."""
    if node.negated:
        return False
    return all(any(lo >= a and hi <= b for a, b in INVISIBLE) for lo, hi in node.ranges)


class Facts:
    """Facts about ``rules`` (``Grammar.rules``) with start rule ``root``. Given ``core``, the
    core grammar those rules were read from (``Grammar._core``), the rule-level facts come from
    its one-pass analysis (csrc/grammar/doctor_facts.h); the Python definitions below are the
    reference the tests compare it with, and serve rules that came from elsewhere."""

    def __init__(self, rules: Rules, root: str, core: _core.Grammar | None = None) -> None:
        self.rules = rules
        self.root = root
        self._nullable_nodes: dict[int, bool] = {}
        self._invisible_rules: set[str] | None = None
        self._analysis: _core.DoctorAnalysis | None = None
        # The core grammar these facts describe (None: rules from elsewhere, facts from Python).
        self.core: _core.Grammar | None = None
        analysis = _core.DoctorAnalysis(core) if core is not None else None
        facts = analysis.facts() if analysis is not None else None
        if facts is not None and facts["names"] == list(rules) and root in rules:
            self._analysis = analysis
            self.core = core
            self.reachable: set[str] = facts["reachable"]
            self.recursive: set[str] = facts["recursive"]
            self.nullable_rules: set[str] = facts["nullable"]
            self._invisible_rules = facts["invisible"]
            self.token_rules: set[str] = facts["tokens"]
            # growth.candidates, found by the core
            self.growth_candidates: list[list[str]] | None = facts["growth_candidates"]
            return
        self.graph = reference_graph(rules)
        self.reachable = reachable(self.graph, root) if root in rules else set()
        self.components = strongly_connected(self.graph)
        self.component_of = {r: i for i, c in enumerate(self.components) for r in c}
        self.recursive = {
            r for c in self.components for r in c if len(c) > 1 or r in self.graph.get(r, ())
        }
        self.nullable_rules = self._nullable_rules()
        self.token_rules = rules_with_tokens(rules)
        self.growth_candidates = None

    # The graph and its components: set by __init__ when computed in Python, else asked of the
    # core on first use (most checks need neither).

    @functools.cached_property
    def graph(self) -> dict[str, list[str]]:
        """Rule -> the distinct rules it references, in first-reference order."""
        assert self._analysis is not None
        return self._analysis.graph()

    @functools.cached_property
    def components(self) -> list[list[str]]:
        """The rule graph's strongly connected components, callees first (Tarjan's order)."""
        assert self._analysis is not None
        components, self.component_of = self._analysis.components()
        return components

    @functools.cached_property
    def component_of(self) -> dict[str, int]:
        """Rule -> the index of its component."""
        return {r: i for i, c in enumerate(self.components) for r in c}

    @property
    def analysis(self) -> _core.DoctorAnalysis | None:
        """The core's analysis these facts came from (None: facts from Python)."""
        return self._analysis

    def reached_from(self, root: str) -> set[str]:
        """The rules ``root`` reaches (itself included)."""
        if self._analysis is not None:
            return self._analysis.reached_from(root)
        return reachable(self.graph, root)

    def shortest(self, roots: list[str]) -> Minimums:
        """:func:`.sample.shortest` of the rules ``roots`` reach (the core's table when these
        facts came from it)."""
        if self._analysis is not None:
            return self._analysis.shortest_derivations(roots)
        needed: set[str] = set()
        for root in roots:
            needed |= reachable(self.graph, root)
        rules = {name: self.rules[name] for name in self.rules if name in needed}
        return shortest(rules, self.graph, self.components)

    def choice_survey(self) -> list[tuple[str, int, dict[int, int]]] | None:
        """The core's survey of the choices (csrc/grammar/choice_survey.h), None when these facts
        did not come from the core."""
        return None if self._analysis is None else self._analysis.choice_survey()

    @functools.cached_property
    def users(self) -> dict[str, list[str]]:
        """Rule -> the rules that reference it (only rules that have users)."""
        return users_of(self.graph)

    # --- nullable -------------------------------------------------------------------------

    def _nullable_rules(self) -> set[str]:
        """Rules that can match the empty string, component by component, leaves first (Tarjan
        emits a component after the ones it reaches): each rule is evaluated once, and again
        only when a rule of its own component that it references turns out nullable (a
        worklist to the least fixpoint; re-running whole components pass after pass was
        quadratic on the large recursive components of schema grammars)."""
        found: set[str] = set()
        for component in self.components:
            members = set(component)
            work = list(reversed(component))
            queued = set(component)
            while work:
                name = work.pop()
                queued.discard(name)
                if name in found or not _nullable(self.rules[name], found, None):
                    continue
                found.add(name)
                for user in self.users.get(name, ()):
                    if user in members and user not in found and user not in queued:
                        queued.add(user)
                        work.append(user)
        return found

    def nullable(self, node: syntax.Node) -> bool:
        """The node (one of ``rules``' trees) can match the empty string."""
        return _nullable(node, self.nullable_rules, self._nullable_nodes)

    def nullable_fresh(self, node: syntax.Node) -> bool:
        """The same for a node built later (not memoised: ids of short-lived nodes repeat)."""
        return _nullable(node, self.nullable_rules, None)

    # --- invisible-only rules -------------------------------------------------------------

    @property
    def invisible_rules(self) -> set[str]:
        """Rules whose every terminal is invisible (whitespace or zero-width), through the
        rules they reference; a rule with a token reference never is."""
        if self._invisible_rules is None:
            dirty = {name for name, body in self.rules.items() if not _terminals_invisible(body)}
            work = list(dirty)
            while work:
                for user in self.users.get(work.pop(), ()):
                    if user not in dirty:
                        dirty.add(user)
                        work.append(user)
            self._invisible_rules = set(self.rules) - dirty
        return self._invisible_rules

    def node_invisible(self, node: syntax.Node) -> bool:
        rules = self.invisible_rules
        return _terminals_invisible(node) and all(
            n.name in rules for n in walk(node) if isinstance(n, syntax.RuleRef)
        )


def _terminals_invisible(node: syntax.Node) -> bool:
    for n in walk(node):
        if isinstance(n, syntax.Literal) and not all(invisible(c) for c in n.codepoints):
            return False
        if isinstance(n, syntax.CharClass) and not class_invisible(n):
            return False
        if isinstance(n, (syntax.AnyChar, syntax.TokenRef)):
            return False
    return True


def rules_with_tokens(rules: Rules) -> set[str]:
    """The rules whose own body holds a token reference."""
    token = syntax.TokenRef
    return {name for name, body in rules.items() if any(type(n) is token for n in walk(body))}


_SEQUENCE, _ALTERNATION, _REPEAT = syntax.Sequence, syntax.Alternation, syntax.Repeat


def _nullable(node: syntax.Node, rules: set[str], memo: dict[int, bool] | None) -> bool:
    """Whether ``node`` can match the empty string, given the nullable ``rules``: a depth-first
    evaluation without recursion that stops at the first non-empty item of a sequence and the
    first empty alternative (most rules are decided by their first terminal)."""
    results: dict[int, bool] = {} if memo is None else memo
    frames: list[list[Any]] = [[node, 0]]
    value = False
    while frames:
        frame = frames[-1]
        current, i = frame
        kind = type(current)
        if kind is _SEQUENCE or kind is _ALTERNATION or kind is _REPEAT:
            done = _decided(current, kind, i, value)
            if done is None:
                kids = children(current)
                frame[1] = i + 1
                child = kids[i]
                if id(child) in results:
                    value = results[id(child)]
                    continue
                frames.append([child, 0])
                continue
            value = done
        else:
            value = _leaf_nullable(current, rules)
        results[id(current)] = value
        frames.pop()
    return value


def _decided(node: Any, kind: type, i: int, last: bool) -> bool | None:
    """The value of an inner node once child ``i - 1`` gave ``last`` (None: look at child i)."""
    if kind is _REPEAT:
        if node.min == 0:
            return True
        return None if i == 0 else last
    if i > 0:
        if kind is _SEQUENCE and not last:
            return False
        if kind is _ALTERNATION and last:
            return True
    if i == len(node.items):
        return kind is _SEQUENCE
    return None


def _leaf_nullable(node: syntax.Node, rules: set[str]) -> bool:
    if isinstance(node, syntax.Literal):
        return not node.codepoints
    if isinstance(node, syntax.RuleRef):
        return node.name in rules
    return False  # classes, '.', token references


__all__ = ["INVISIBLE", "Facts", "class_invisible", "invisible", "rules_with_tokens"]
