"""The static checks: ``empty_output`` (the root matches the empty string), ``unbounded_filler``
(endless whitespace where the output could end) and the core's ``unused_rule`` /
``unreachable_rule`` / ``redefined_rule`` warnings with a fix."""

from __future__ import annotations

from .. import syntax
from ..errors import Diagnostic
from .facts import Facts
from .findings import Finding
from .locate import Locator
from .tree import children, to_gbnf

FILLER_BOUND = 8  # the bound suggested for a runaway filler: {0,8}


def _show(node: syntax.Node, limit: int = 60) -> str:
    try:
        text = to_gbnf(node)
    except RecursionError:  # nested deeper than the printer can go: shown cut
        return "(...)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- empty_output -----------------------------------------------------------------------------


def _why_empty(facts: Facts, node: syntax.Node) -> tuple[syntax.Node, str] | None:
    """(the node that makes ``node`` nullable, the fix), or None to descend further."""
    if isinstance(node, syntax.Sequence) and not node.items:
        return node, "remove the empty alternative, or put the text the output must have in it"
    if isinstance(node, syntax.Literal):
        return node, 'remove the empty literal ""'
    if isinstance(node, syntax.Repeat) and node.min == 0:
        required = node.item if node.max == 1 else syntax.Repeat(node.item, 1, node.max)
        return node, f"require at least one: write {_show(required)} instead of {_show(node)}"
    return None


def check_empty_output(facts: Facts, loc: Locator) -> list[Finding]:
    root = facts.root
    if root not in facts.nullable_rules:
        return []
    rule, node, trail = root, facts.rules[root], [root]
    seen = {root}
    while True:
        reason = _why_empty(facts, node)
        if reason is not None:
            target, fix = reason
            break
        if isinstance(node, syntax.RuleRef) and node.name not in seen:
            rule, node = node.name, facts.rules[node.name]
            seen.add(rule)
            trail.append(rule)
            continue
        nullable = [c for c in children(node) if facts.nullable(c)]
        if not nullable:
            target, fix = node, "make at least one part of it required"
            break
        empty = [c for c in nullable if isinstance(c, syntax.Sequence) and not c.items]
        node = (empty or nullable)[0]
    via = f" (through {' -> '.join(trail)})" if len(trail) > 1 else ""
    message = (
        f'the root rule "{root}" can match the empty string{via}: end-of-sequence is allowed '
        "before any output, so a model may stop at once and return nothing"
    )
    return [loc.finding("empty_output", message, fix, rule, target)]


# --- unbounded_filler -------------------------------------------------------------------------


class _Filler:
    """Unbounded invisible-only constructs, found by walking from the root with a flag that says
    whether the output may end right after the current node."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        invisible = facts.invisible_rules
        # Invisible rules whose own recursion can pump text (a repetition written as recursion).
        self.pumping = {r for r in facts.recursive if r in invisible and self._pumps(r)}
        self.unbounded_rules = self._unbounded_rules()
        self.found: dict[tuple[str, int], tuple[str, syntax.Node, str]] = {}

    def _pumps(self, rule: str) -> bool:
        component = set(self.facts.components[self.facts.component_of[rule]])
        stack: list[tuple[syntax.Node, bool]] = [(self.facts.rules[rule], False)]
        while stack:
            node, grows = stack.pop()
            if isinstance(node, syntax.RuleRef) and node.name in component and grows:
                return True
            if isinstance(node, syntax.Sequence):
                for i, item in enumerate(node.items):
                    others = node.items[:i] + node.items[i + 1 :]
                    stack.append((item, grows or not all(self._empty_only(o) for o in others)))
            elif isinstance(node, syntax.Repeat):
                stack.append((node.item, grows or node.max is None or node.max > 1))
            else:
                stack.extend((c, grows) for c in children(node))
        return False

    def _empty_only(self, node: syntax.Node) -> bool:
        return isinstance(node, syntax.Sequence) and not node.items

    def _unbounded_rules(self) -> set[str]:
        facts = self.facts
        out = set(self.pumping)
        changed = True
        while changed:
            changed = False
            for name in facts.invisible_rules - out:
                if self.unbounded(facts.rules[name], out):
                    out.add(name)
                    changed = True
        return out

    def unbounded(self, node: syntax.Node, rules: set[str] | None = None) -> bool:
        known = self.unbounded_rules if rules is None else rules
        for n in _walk_nodes(node):
            if isinstance(n, syntax.Repeat) and n.max is None and not self._all_empty(n.item):
                return True
            if isinstance(n, syntax.RuleRef) and n.name in known:
                return True
        return False

    def _all_empty(self, node: syntax.Node) -> bool:
        """Only ever matches the empty string (no text, no rule references)."""
        return not any(
            isinstance(n, (syntax.CharClass, syntax.AnyChar, syntax.TokenRef, syntax.RuleRef))
            or (isinstance(n, syntax.Literal) and n.codepoints)
            for n in _walk_nodes(node)
        )

    def scan(self) -> None:
        """Visits what the end of the output can follow: from the root, the last items of each
        sequence (and those before them while the ones after can be empty), into the rules they
        reference; everything else is never looked at."""
        facts = self.facts
        ending = {facts.root}
        work = [facts.root]
        while work:
            rule = work.pop()
            stack: list[syntax.Node] = [facts.rules[rule]]
            while stack:
                node = stack.pop()
                if isinstance(node, syntax.RuleRef):
                    if node.name in self.unbounded_rules:
                        self._blame(rule, node)
                    elif node.name in facts.rules and node.name not in ending:
                        ending.add(node.name)
                        work.append(node.name)
                elif self._endless_repeat(node):
                    self._blame(rule, node)
                elif isinstance(node, syntax.Sequence):
                    for item in reversed(node.items):
                        stack.append(item)
                        if not facts.nullable(item):
                            break
                else:
                    stack.extend(children(node))

    def _endless_repeat(self, node: syntax.Node) -> bool:
        """An unbounded repetition of invisible text."""
        return (
            isinstance(node, syntax.Repeat)
            and node.max is None
            and self.facts.node_invisible(node.item)
            and not self._all_empty(node.item)
        )

    def _blame(self, rule: str, node: syntax.Node) -> None:
        """Descends to the repetition (or recursive rule) that makes the filler endless."""
        seen: set[str] = set()
        while True:
            if isinstance(node, syntax.Repeat) and node.max is None:
                bounded = syntax.Repeat(node.item, node.min, max(node.min, FILLER_BOUND))
                fix = f"bound it: write {_show(bounded)}"
                self.found.setdefault((rule, id(node)), (rule, node, fix))
                return
            if isinstance(node, syntax.RuleRef):
                if node.name in self.pumping or node.name in seen:
                    fix = f'give "{node.name}" a fixed maximum, e.g. [ \\t\\n]{{0,{FILLER_BOUND}}}'
                    target = self.facts.rules[node.name]
                    self.found.setdefault((node.name, id(target)), (node.name, target, fix))
                    return
                seen.add(node.name)
                rule, node = node.name, self.facts.rules[node.name]
                continue
            endless = [c for c in children(node) if self.unbounded(c)]
            if not endless:
                return
            node = endless[-1]


def _walk_nodes(node: syntax.Node) -> list[syntax.Node]:
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(children(n))
    return out


def check_unbounded_filler(facts: Facts, loc: Locator) -> list[Finding]:
    if facts.root not in facts.rules:
        return []
    filler = _Filler(facts)
    filler.scan()
    out = []
    for rule, node, fix in filler.found.values():
        message = (
            f'rule "{rule}" can repeat whitespace without end where the output could otherwise '
            "end: a model that prefers a space or newline to end-of-sequence never stops"
        )
        fix = f"{fix}, or drop it at the end of the output, or pass max_whitespace=N to compile()"
        out.append(loc.finding("unbounded_filler", message, fix, rule, node))
    return out


# --- the core's warnings ----------------------------------------------------------------------

_CORE_FIXES = {
    "unused_rule": "delete it, or reference it from a rule the root reaches",
    "unreachable_rule": "delete it and the rules that use it, or reference one of them from a "
    "rule the root reaches",
    "redefined_rule": "delete the earlier definition (or rename one of them)",
}


def core_findings(warnings: list[Diagnostic]) -> list[Finding]:
    """The core's warnings as findings, each with a fix."""
    out = []
    for w in warnings:
        fix = w.hint or _CORE_FIXES.get(w.code, "")
        out.append(
            Finding(
                severity=w.severity,
                code=w.code,
                message=w.message,
                hint=fix,
                line=w.line,
                column=w.column,
                width=w.width,
                snippet=w.snippet,
                rendered=_rerender(w, fix),
                fix=fix,
                rule=_quoted_name(w.message),
            )
        )
    return out


def _rerender(w: Diagnostic, fix: str) -> str:
    if w.hint or not fix:
        return w.rendered
    head, _, rest = w.rendered.partition("\n")
    return f"{head} ({fix})" + (f"\n{rest}" if rest else "")


def _quoted_name(message: str) -> str:
    parts = message.split('"')
    return parts[1] if len(parts) >= 3 else ""


__all__ = ["check_empty_output", "check_unbounded_filler", "core_findings"]
