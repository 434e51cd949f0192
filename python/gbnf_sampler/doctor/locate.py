"""Source positions of rules and nodes, looked up lazily: only the rules a finding is about are
re-parsed with positions (:mod:`.source`), so a clean grammar costs nothing here."""

from __future__ import annotations

from .. import syntax
from .findings import Finding, LineIndex, make_finding
from .source import RuleSource, parse_rule_source
from .tree import Rules, node_at, path_to


class Locator:
    """Turns (rule, node) into a source span of ``text`` (the grammar as the user wrote it;
    None when there is no text, e.g. a Grammar built in memory: findings then have no
    position)."""

    def __init__(self, text: str | None, rules: Rules) -> None:
        self.text = text
        self.rules = rules
        self._index: LineIndex | None = None
        self._sources: dict[str, RuleSource | None] = {}

    @property
    def index(self) -> LineIndex | None:
        if self._index is None and self.text is not None:
            self._index = LineIndex(self.text)
        return self._index

    def source(self, rule: str) -> RuleSource | None:
        if rule not in self._sources:
            found = None
            if self.text is not None and rule in self.rules:
                found = parse_rule_source(self.text, rule, self.rules[rule])
            self._sources[rule] = found
        return self._sources[rule]

    def span(self, rule: str, node: syntax.Node | None = None) -> tuple[int, int] | None:
        """The span of ``node`` (an object of ``rules[rule]``), or of the rule's name."""
        source = self.source(rule)
        if source is None:
            return None
        if node is None:
            return source.start, source.start + len(rule)
        path = path_to(self.rules[rule], node)
        mirror = node_at(source.body, path) if path is not None else None
        return source.span(mirror) if mirror is not None else (source.start, source.start)

    def finding(
        self,
        code: str,
        message: str,
        fix: str,
        rule: str,
        node: syntax.Node | None = None,
        *,
        pointer: str | None = None,
        replacement: str | None = None,
    ) -> Finding:
        """A finding at ``node`` of ``rule`` (at the rule's name when ``node`` is None)."""
        span = self.span(rule, node)
        start, end = span if span is not None else (0, None)
        return make_finding(
            code,
            message,
            fix,
            index=self.index if span is not None else None,
            start=start,
            end=end,
            rule=rule,
            pointer=pointer,
            replacement=replacement,
        )


__all__ = ["Locator"]
