"""``--dialect llama.cpp``: every construct our parser accepts that stock llama.cpp (the grammar
parser in ``src/llama-grammar.cpp``, as built into llama-cpp-python) rejects or reads
otherwise, each with a rewrite it accepts (:mod:`.llama_rewrite`); :func:`to_llama_cpp`
rewrites a whole grammar.

Spelling (llama.cpp's parser stops): a byte-order mark; ``_`` in rule names (its names are
letters, digits and ``-``); ``{,n}`` (it needs the lower bound); a line starting with ``|`` (a
line break ends its rules; it continues only after a ``|`` at the end of a line or inside
parentheses). Meaning: ``[^]`` is the empty string there, an upper bound above 2000 is no
bound. Limits and loading (:mod:`.llama_sim`): repetition counts and expansions over 2000
rules; left recursion, and loops over something that can be empty, both refused by its
left-recursion check (and left recursion that check misses hangs it). A literal or class
holding NUL never matches there (it reads text as NUL-terminated): reported, no rewrite.
"""

from __future__ import annotations

from .. import syntax
from ..grammar import Grammar
from .facts import Facts
from .findings import Finding, LineIndex, make_finding
from .llama_rewrite import Rewriter, rename_map, transform
from .llama_sim import (
    REPETITION_LIMIT,
    Expansion,
    RepeatIssue,
    expand,
    left_cycles,
    repetitions_within_limits,
)
from .source import Event, ParsedSource, RuleSource, source_of_grammar
from .tree import children, cycles, to_gbnf

CODE = "llama_cpp"


class _Dialect:
    def __init__(
        self, text: str, parsed: ParsedSource, root: str, facts: Facts | None = None
    ) -> None:
        self.text = text
        self.parsed = parsed
        self.index = LineIndex(text)
        self.last = parsed.rules()
        self.rules = {name: r.body for name, r in self.last.items()}
        # The default checks' facts hold for these rules when the trees are equal (the usual
        # case: both parsers read the same text); only their values by name and by node are
        # used, and the parsed nodes are new objects, so they are memoised apart.
        shared = facts is not None and facts.root == root and facts.rules == self.rules
        self.facts = facts if shared and facts is not None else Facts(self.rules, root)
        self._left_components: list[list[str]] | None = None
        self.out: list[Finding] = []

    def add(
        self, message: str, fix: str, start: int, end: int, edits: tuple[tuple[int, int, str], ...]
    ) -> None:
        replacement = edits[0][2] if len(edits) == 1 else None
        self.out.append(
            make_finding(
                CODE,
                message,
                fix,
                index=self.index,
                start=start,
                end=end,
                replacement=replacement,
                edits=edits,
            )
        )

    # --- spelling ---------------------------------------------------------------------------

    def spelling(self) -> None:
        names: dict[str, list[Event]] = {}
        for event in self.parsed.events:
            if event.kind == "bom":
                self.add(
                    "stock llama.cpp does not skip a byte-order mark: its parser fails at once "
                    '("expecting name")',
                    "save the file as UTF-8 without a BOM",
                    0,
                    1,
                    ((0, 1, ""),),
                )
            elif event.kind == "name" and "_" in event.text:
                names.setdefault(event.text, []).append(event)
            elif event.kind == "brace" and not event.definition:
                self.add(
                    'llama.cpp needs the lower bound of a repetition: "{,n}" fails with '
                    '"expecting an int"',
                    "write {0,n}",
                    event.start,
                    event.end,
                    ((event.start + 1, event.start + 1, "0"),),
                )
            elif event.kind == "continuation":
                self.continuation(event)
            elif event.kind == "nul":
                self.nul(event)
            elif event.kind == "any_class":
                self.add(
                    'llama.cpp reads "[^]" as the empty string (no character at all), not as '
                    "any character",
                    "write . (any character)",
                    event.start,
                    event.end,
                    ((event.start, event.end, "."),),
                )
        self.underscores(names)

    def continuation(self, event: Event) -> None:
        self.add(
            'llama.cpp ends a rule at a line break: a line that starts with "|" fails there '
            '("expecting name")',
            'end the line before it with "|" instead (or wrap the alternatives in parentheses)',
            event.start,
            event.end,
            ((event.prev_end, event.prev_end, " |"), (event.start, event.end, " ")),
        )

    def underscores(self, names: dict[str, list[Event]]) -> None:
        renames = rename_map(list(dict.fromkeys([*self.rules, *names])))
        for name, events in names.items():
            new = renames[name]
            first = next((e for e in events if e.definition), events[0])
            uses = f"all {len(events)} occurrences" if len(events) > 1 else "its one occurrence"
            self.add(
                f'llama.cpp rule names are letters, digits and "-": "{name}" stops its parser '
                '("expecting ::=" or "expecting newline or end")',
                f'rename it to "{new}" ({uses})',
                first.start,
                first.end,
                tuple((e.start, e.end, new) for e in events),
            )

    def nul(self, event: Event) -> None:
        self.out.append(
            make_finding(
                CODE,
                "llama.cpp never matches NUL (U+0000): it reads text as NUL-terminated, so this "
                "part can only match without it there",
                "remove NUL from it (no llama.cpp spelling matches NUL)",
                index=self.index,
                start=event.start,
                end=event.end,
            )
        )

    # --- repetitions ------------------------------------------------------------------------

    def repeats(self, expansion: Expansion) -> None:
        for issue in expansion.issues:
            source = issue.source
            start, end = source.span(issue.node)
            replacement = self.rule_rewrite(source, frozenset({id(issue.node)}))
            self.add(
                _repeat_message(issue),
                f"rewrite the rule as: {replacement}",
                start,
                end,
                ((source.start, source.end, replacement),),
            )

    def rule_rewrite(
        self, source: RuleSource, bounded: frozenset[int] = frozenset(), loops: bool = False
    ) -> str:
        """The definition of ``source`` (and the helper rules it needs) with the repetitions
        in ``bounded`` made llama.cpp-sized and, with ``loops``, loops over something empty
        fixed."""
        rewriter = Rewriter(self.rules, self.facts)
        body = _apply(source.name, source.body, rewriter, bounded, loops)
        lines = [f"{source.name} ::= {to_gbnf(body)}"]
        lines += [f"{name} ::= {to_gbnf(b)}" for name, b in rewriter.helpers.items()]
        return "\n".join(lines)

    # --- left recursion ---------------------------------------------------------------------

    def left(self, expansion: Expansion) -> None:
        cycles = left_cycles(expansion)
        reported: set[str] = set()
        for cycle in cycles:
            loop = self._loop_over_empty(expansion, cycle)
            if loop is not None:
                source, node = loop
                start, end = source.span(node)
                replacement = self.rule_rewrite(source, loops=True)
                self.add(
                    "llama.cpp's left-recursion check refuses a repetition of something that can "
                    f'be empty ({to_gbnf(node)[:40]}: "unsupported grammar, left recursion '
                    'detected")',
                    f"repeat only its non-empty part: {replacement}",
                    start,
                    end,
                    ((source.start, source.end, replacement),),
                )
                continue
            names = [expansion.origin[rid][0] for rid in cycle]
            reported.update(names)
            self.left_recursion(names[0], hangs=False)
        for name in self.true_left_recursive():
            if name not in reported:
                self.left_recursion(name, hangs=True)

    def _loop_over_empty(
        self, expansion: Expansion, cycle: list[int]
    ) -> tuple[RuleSource, syntax.Node] | None:
        for rid in cycle:
            _, node = expansion.origin[rid]
            if not isinstance(node, syntax.Repeat) or node.max is not None:
                continue
            if self.facts.nullable_fresh(node.item):
                return expansion.source_of[rid], node
        return None

    def left_recursion(self, name: str, hangs: bool) -> None:
        source = self.last.get(name)
        if source is None:
            return
        what = (
            "llama.cpp's left-recursion check misses this left recursion (it goes through a "
            "rule that is empty only through another rule) and then loops forever loading the "
            "grammar"
            if hangs
            else 'llama.cpp refuses left recursion ("unsupported grammar, left recursion detected")'
        )
        cycle = frozenset(next((c for c in self.left_components() if name in c), [name]))
        rewriter = Rewriter(self.rules, self.facts)
        direct = rewriter.without_left_recursion(name, source.body, cycle)
        if direct is None:
            fix = (
                f'rewrite "{name}" so that no alternative starts with a rule that leads back to '
                f"it (R ::= R a | b is R ::= b (a)*)"
            )
            self.add(
                f'rule "{name}" is left-recursive: {what}',
                fix,
                source.start,
                source.start + len(name),
                (),
            )
            return
        replacement = "\n".join(
            f"{n} ::= {to_gbnf(b)}" for n, b in {name: direct, **rewriter.helpers}.items()
        )
        self.add(
            f'rule "{name}" is left-recursive: {what}',
            f"write it as: {replacement}",
            source.start,
            source.start + len(name),
            ((source.start, source.end, replacement),),
        )

    def no_left_recursion(self) -> bool:
        """Proved without expanding: llama.cpp's left-recursion check passes and nothing it
        misses can hang it. Its cycles run through rules it treats as empty, which are empty
        here too, so a cycle needs left recursion through items that can be empty, an
        unbounded repetition (or one over its limit: unbounded there) of something that can be
        empty, or a "[^]" (an element that pushes nothing there)."""
        if self.true_left_recursive() or any(e.kind == "any_class" for e in self.parsed.events):
            return False
        nullable = self.facts.nullable
        return not any(
            (node.max is None or node.max > REPETITION_LIMIT) and nullable(node.item)
            for rule in self.parsed.definitions
            for node in rule.repeats
        )

    def left_components(self) -> list[list[str]]:
        """Cycles of leftmost references (through items that can be empty): left recursion
        (computed once)."""
        if self._left_components is None:
            graph = {
                name: sorted(_leftmost_refs(body, self.facts)) for name, body in self.rules.items()
            }
            self._left_components = cycles(graph)
        return self._left_components

    def true_left_recursive(self) -> list[str]:
        return [name for component in self.left_components() for name in component]


def _leftmost_refs(node: syntax.Node, facts: Facts) -> set[str]:
    """Rules that can start ``node`` (after items that can be empty)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, syntax.RuleRef):
            if n.name in facts.rules:
                out.add(n.name)
        elif isinstance(n, syntax.Sequence):
            for item in n.items:
                stack.append(item)
                if not facts.nullable(item):
                    break
        else:
            stack.extend(children(n))
    return out


def _apply(
    rule: str, body: syntax.Node, rewriter: Rewriter, bounded: frozenset[int], loops: bool
) -> syntax.Node:
    def change(original: syntax.Node, rebuilt: syntax.Node) -> syntax.Node:
        if isinstance(original, syntax.CharClass) and original.negated and not original.ranges:
            return syntax.AnyChar()
        if not isinstance(original, syntax.Repeat) or not isinstance(rebuilt, syntax.Repeat):
            return rebuilt
        if id(original) in bounded:
            return rewriter.bounded(rule, original, rebuilt.item)
        if loops and original.max is None and rewriter.facts.nullable_fresh(original.item):
            return rewriter.loop(original, rebuilt.item)
        return rebuilt

    return transform(body, change)


def _repeat_message(issue: RepeatIssue) -> str:
    if issue.kind == "min_over":
        return (
            f"llama.cpp refuses a repetition count above {REPETITION_LIMIT} "
            '("number of repetitions exceeds sane defaults")'
        )
    if issue.kind == "max_clamped":
        return (
            f"llama.cpp reads an upper bound above {REPETITION_LIMIT} as no bound at all: "
            f"{{{issue.node.min},{issue.node.max}}} is {{{issue.node.min},}} there"
        )
    edge = (
        " (exactly at the limit: refused by current llama.cpp, accepted by older builds such as "
        "the one in llama-cpp-python 0.3.36)"
        if issue.product == REPETITION_LIMIT
        else ""
    )
    return (
        f"llama.cpp refuses a repetition whose expansion needs {issue.product} rules "
        f"({issue.before} for the repeated part x {issue.count}), over its limit of "
        f'{REPETITION_LIMIT} ("number of rules that are going to be repeated ... exceeds sane '
        f'defaults"){edge}'
    )


def check_llama_cpp(
    text: str, grammar: Grammar, facts: Facts | None = None, parsed: ParsedSource | None = None
) -> list[Finding]:
    """The llama.cpp dialect findings for ``text`` (which ``grammar`` was parsed from).
    ``facts``: the default checks' :class:`Facts` of ``grammar.rules``, reused when the
    positioned rules are the same; ``parsed``: ``source_of_grammar(grammar, text)`` when the
    caller has it."""
    if parsed is None:
        parsed = source_of_grammar(grammar, text)
    return _findings(_Dialect(text, parsed, grammar.root, facts), shortcut=True)


def _findings(dialect: _Dialect, shortcut: bool) -> list[Finding]:
    """The dialect's findings. With ``shortcut``, llama.cpp's expansion (the costly part on
    large grammars) is replayed only when a repetition or left-recursion finding is possible;
    without it, always (the tests compare the two)."""
    dialect.spelling()
    if shortcut and repetitions_within_limits(dialect.parsed) and dialect.no_left_recursion():
        return dialect.out
    expansion = expand(dialect.parsed)
    dialect.repeats(expansion)
    dialect.left(expansion)
    return dialect.out


def to_llama_cpp(text: str, root: str = "root") -> str:
    """``text`` rewritten for stock llama.cpp, with the same language: one line per rule, no
    BOM, names with ``-`` for ``_``, repetitions within its limits, loops over something empty
    and direct left recursion rewritten (:mod:`.llama_rewrite`). Raises ValueError when a
    construct has no automatic rewrite (indirect left recursion) or the text is not GBNF our
    parser accepts."""
    grammar = Grammar.from_gbnf(text, root=root)
    parsed = source_of_grammar(grammar, text)
    dialect = _Dialect(text, parsed, grammar.root)
    expansion = expand(parsed)
    bounded = frozenset(id(i.node) for i in expansion.issues)
    rewriter = Rewriter(dialect.rules, dialect.facts)
    cycles = {name: frozenset(c) for c in dialect.left_components() for name in c}
    out: dict[str, syntax.Node] = {}
    fixed: set[str] = set()
    for name, source in dialect.last.items():
        body = _apply(name, source.body, rewriter, bounded, loops=True)
        cycle = cycles.get(name, frozenset())
        if cycle and not cycle & fixed:  # one rewritten rule breaks a simple cycle
            direct = rewriter.without_left_recursion(name, body, cycle)
            if direct is None:
                raise ValueError(
                    f'rule "{name}" is left-recursive in a way with no automatic rewrite'
                )
            body = direct
            fixed.add(name)
        out[name] = body
    out.update(rewriter.helpers)
    renames = rename_map(list(out))
    result = "".join(
        f"{renames.get(n, n)} ::= {to_gbnf(b, lambda r: renames.get(r, r))}\n"
        for n, b in out.items()
    )
    _verify(result, renames.get(grammar.root, grammar.root))
    return result


def _verify(text: str, root: str) -> None:
    """Raises ValueError when ``text`` still has something llama.cpp refuses."""
    grammar = Grammar.from_gbnf(text, root=root)
    left = [f for f in check_llama_cpp(text, grammar) if "left-recursive" in f.message]
    if left:
        raise ValueError(f"no automatic rewrite: {left[0].message}")


__all__ = ["CODE", "check_llama_cpp", "to_llama_cpp"]
