"""GBNF source positions: where each syntax node came from, and the spellings the llama.cpp
dialect check looks at.

The core hands Python the syntax tree without positions (:attr:`Grammar.rules`); the doctor
needs them to point at the construct a finding is about, and the llama.cpp dialect check needs
the spelling itself (a byte-order mark, ``{,n}``, ``|`` starting a line, which nodes were
parenthesised). :func:`source_of_grammar` reads all of it from the core's own parse (its source
layout); :class:`SourceParser`, a parser that mirrors the core's (csrc/grammar/parser.cc)
production by production, records the same while it parses: it is the reference the tests
compare the layout with, and it parses single rules for findings that need a rule's positions.
Both build the :mod:`gbnf_sampler.syntax` tree plus ``spans`` (``id(node)`` -> ``(start,
end)``, str offsets) and the spelling ``events``. The parser only ever sees text the core has
accepted; anything else raises :class:`SourceMismatch`, and callers fall back to rule-level
positions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .. import syntax
from ..grammar import Grammar, leaf_node

_NAME = re.compile(r"[A-Za-z0-9_-]+")
_SPACE_INLINE = re.compile(r"(?:[ \t]+|#[^\r\n]*)*")
_SPACE_NEWLINES = re.compile(r"(?:[ \t\r\n]+|#[^\r\n]*)*")
_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "\\": 0x5C, '"': 0x22, "[": 0x5B, "]": 0x5D, "-": 0x2D}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}
_PLAIN_LITERAL = re.compile(r'[^"\\]*')
_ELEMENT_START = frozenset('"[.(<!')
_POSTFIX = frozenset("*+?{")


class SourceMismatch(ValueError):
    """The text does not parse the way the core parsed it (should not happen for text the core
    accepted; callers then report findings without positions)."""


class Event(NamedTuple):
    """A spelling the llama.cpp dialect check looks at. ``kind``: ``bom``, ``name`` (``text``
    is the name; ``definition`` tells a definition from a reference), ``brace`` (a ``{...}``
    repetition; ``definition`` is False when the lower bound is left out, ``{,n}``),
    ``continuation`` (a line starting with ``|``; ``prev_end`` is where the previous
    alternative's text ended), ``any_class`` (``[^]``), ``nul`` (a literal or class holding
    U+0000). A named tuple: a large grammar has one per rule name written."""

    kind: str
    start: int
    end: int
    text: str = ""
    definition: bool = False
    prev_end: int = 0


@dataclass
class RuleSource:
    """One rule definition: the name's offset, the end of its body, the syntax tree and the
    source span of every node in it (``id(node)`` -> ``(start, end)``); ``groups`` counts, per
    node, the parentheses written around it."""

    name: str
    start: int
    end: int
    body: syntax.Node
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)
    groups: dict[int, int] = field(default_factory=dict)
    repeats: list[syntax.Repeat] = field(default_factory=list)  # every repetition node

    def span(self, node: syntax.Node) -> tuple[int, int]:
        return self.spans.get(id(node), (self.start, self.start + len(self.name)))


@dataclass
class ParsedSource:
    """Every rule definition in source order (a redefined rule appears twice; the last one is
    the rule, as in the core) and, when collected, the spelling events."""

    text: str
    definitions: list[RuleSource]
    events: list[Event]

    def rules(self) -> dict[str, RuleSource]:
        return {r.name: r for r in self.definitions}


class SourceParser:
    """The position-recording parser. ``parse_all()`` reads the whole text; ``parse_rule(at)``
    one rule definition starting at offset ``at``."""

    def __init__(self, text: str, *, events: bool = False) -> None:
        self.text = text
        self.pos = 0
        self.collect = events
        self.events: list[Event] = []
        self._rule: RuleSource | None = None

    # --- cursor -----------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> str:
        i = self.pos + ahead
        return self.text[i] if i < len(self.text) else ""

    def skip_space(self, newlines: bool) -> None:
        pattern = _SPACE_NEWLINES if newlines else _SPACE_INLINE
        found = pattern.match(self.text, self.pos)
        if found:
            self.pos = found.end()

    def at_newline(self) -> bool:
        return self.peek() in ("\n", "\r")

    def fail(self, what: str) -> SourceMismatch:
        return SourceMismatch(f"{what} at offset {self.pos}")

    def event(self, kind: str, start: int, end: int, **data: object) -> None:
        if self.collect:
            self.events.append(Event(kind, start, end, **data))  # type: ignore[arg-type]

    # --- rules ------------------------------------------------------------------------------

    def parse_all(self) -> ParsedSource:
        definitions = []
        if self.text.startswith("\ufeff"):
            self.event("bom", 0, 1)
            self.pos = 1
        self.skip_space(True)
        while self.pos < len(self.text):
            definitions.append(self.parse_rule(self.pos))
            self.skip_space(True)
        return ParsedSource(self.text, definitions, self.events)

    def parse_rule(self, at: int) -> RuleSource:
        self.pos = at
        name = self.name()
        self.event("name", at, self.pos, text=name, definition=True)
        self.skip_space(False)
        if not self.text.startswith("::=", self.pos):
            raise self.fail("expected ::=")
        self.pos += 3
        self.skip_space(True)
        rule = RuleSource(name, at, at, syntax.Sequence(()))
        self._rule = rule
        rule.body = self.alternates(nested=False)
        rule.end = self.spans_of(rule.body)[1]
        if self.pos < len(self.text) and not self.at_newline():
            raise self.fail("expected the end of the rule")
        return rule

    def name(self) -> str:
        found = _NAME.match(self.text, self.pos)
        if not found:
            raise self.fail("expected a name")
        self.pos = found.end()
        return found.group()

    def record(self, node: syntax.Node, start: int, end: int) -> syntax.Node:
        assert self._rule is not None
        self._rule.spans[id(node)] = (start, end)
        return node

    def spans_of(self, node: syntax.Node) -> tuple[int, int]:
        assert self._rule is not None
        return self._rule.spans[id(node)]

    # --- productions ------------------------------------------------------------------------

    def alternates(self, nested: bool) -> syntax.Node:
        begin = self.pos
        alternatives = [self.sequence(nested)]
        while True:
            if self.peek() == "|":
                bar = self.pos
                self.pos += 1
                self.skip_space(True)
                alternatives.append(self.sequence(nested))
                if alternatives[-1] == syntax.Sequence(()):  # an empty alternative: at its "|"
                    self.record(alternatives[-1], bar, bar + 1)
            elif not nested and self.at_newline() and self.continuation(alternatives[-1]):
                continue
            else:
                break
        if len(alternatives) == 1:
            return alternatives[0]
        end = self.spans_of(alternatives[-1])[1]
        return self.record(syntax.Alternation(tuple(alternatives)), begin, end)

    def continuation(self, previous: syntax.Node) -> bool:
        """After a top-level line break: a line starting with '|' continues the rule."""
        saved = self.pos
        self.skip_space(True)
        if self.peek() == "|":
            self.event("continuation", self.pos, self.pos + 1, prev_end=self.spans_of(previous)[1])
            return True
        self.pos = saved
        return False

    def sequence(self, nested: bool) -> syntax.Node:
        begin = self.pos
        items: list[syntax.Node] = []
        starts: list[int] = []
        while True:
            c = self.peek()
            if c and (c in _ELEMENT_START or _NAME.match(c)):
                starts.append(self.pos)
                items.append(self.element())
            elif c and c in _POSTFIX and items:
                items[-1] = self.repetition(items[-1], starts[-1])
            else:
                break
            self.skip_space(nested)
        if len(items) == 1:
            return items[0]
        end = self.spans_of(items[-1])[1] if items else begin
        return self.record(syntax.Sequence(tuple(items)), begin, end)

    def element(self) -> syntax.Node:
        c = self.peek()
        start = self.pos
        if c == '"':
            return self.literal()
        if c == "[":
            return self.char_class()
        if c == ".":
            self.pos += 1
            return self.record(syntax.AnyChar(), start, self.pos)
        if c == "(":
            return self.group()
        if c in "<!":
            return self.token_ref()
        name = self.name()
        self.event("name", start, self.pos, text=name)
        return self.record(syntax.RuleRef(name), start, self.pos)

    def group(self) -> syntax.Node:
        open_at = self.pos
        self.pos += 1
        self.skip_space(True)
        inner = self.alternates(nested=True)
        if self.peek() != ")":
            raise self.fail("expected )")
        self.pos += 1
        assert self._rule is not None
        self._rule.groups[id(inner)] = self._rule.groups.get(id(inner), 0) + 1
        return self.record(inner, open_at, self.pos)

    def literal(self) -> syntax.Node:
        start = self.pos
        self.pos += 1
        codepoints: list[int] = []
        while True:
            plain = _PLAIN_LITERAL.match(self.text, self.pos)
            if plain and plain.end() > self.pos:
                codepoints.extend(map(ord, plain.group()))
                self.pos = plain.end()
            c = self.peek()
            if c == '"':
                break
            if not c:
                raise self.fail("unterminated literal")
            codepoints.append(self.char())
        self.pos += 1
        if 0 in codepoints:
            self.event("nul", start, self.pos)
        return self.record(syntax.Literal(tuple(codepoints)), start, self.pos)

    def char(self) -> int:
        c = self.peek()
        if c != "\\":
            self.pos += 1
            return ord(c)
        kind = self.peek(1)
        if kind in _ESCAPES:
            self.pos += 2
            return _ESCAPES[kind]
        digits = _HEX_DIGITS.get(kind)
        if digits is None:
            raise self.fail("unknown escape")
        text = self.text[self.pos + 2 : self.pos + 2 + digits]
        if len(text) != digits or not all(ch in "0123456789abcdefABCDEF" for ch in text):
            raise self.fail("bad escape")
        self.pos += 2 + digits
        return int(text, 16)

    def char_class(self) -> syntax.Node:
        start = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges = []
        while self.peek() != "]":
            if not self.peek():
                raise self.fail("unterminated class")
            lo = hi = self.char()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                hi = self.char()
            ranges.append((lo, hi))
        self.pos += 1
        if negated and not ranges:
            self.event("any_class", start, self.pos)
        if not negated and any(lo == 0 for lo, _ in ranges):
            self.event("nul", start, self.pos)
        return self.record(syntax.CharClass(tuple(ranges), negated), start, self.pos)

    def token_ref(self) -> syntax.Node:
        start = self.pos
        negated = self.peek() == "!"
        if negated:
            self.pos += 1
        open_at = self.pos
        self.pos += 1
        if self.peek() == "[":
            close = self.text.find("]>", self.pos)
            if close < 0:
                raise self.fail("bad token id")
            token_id = int(self.text[self.pos + 1 : close])
            self.pos = close + 2
            node: syntax.Node = syntax.TokenRef(token_id, None, negated)
        else:
            close = self.text.find(">", self.pos)
            if close < 0:
                raise self.fail("bad token reference")
            self.pos = close + 1
            node = syntax.TokenRef(None, self.text[open_at : self.pos], negated)
        return self.record(node, start, self.pos)

    def repetition(self, item: syntax.Node, item_start: int) -> syntax.Node:
        op = self.peek()
        op_start = self.pos
        self.pos += 1
        low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}.get(op, (0, None))
        if op == "{":
            low, high = self.braces(op_start)
        node = syntax.Repeat(item, low, high)
        assert self._rule is not None
        self._rule.repeats.append(node)
        return self.record(node, item_start, self.pos)

    def braces(self, start: int) -> tuple[int, int | None]:
        self.skip_space(False)
        low_text = self.digits()
        self.skip_space(False)
        if self.peek() == ",":
            self.pos += 1
            self.skip_space(False)
            high_text = self.digits()
            high = int(high_text) if high_text else None
        else:
            high = int(low_text)
        self.skip_space(False)
        if self.peek() != "}":
            raise self.fail("expected }")
        self.pos += 1
        self.event("brace", start, self.pos, definition=bool(low_text))
        return (int(low_text) if low_text else 0), high

    def digits(self) -> str:
        begin = self.pos
        while self.peek().isdigit() and self.peek() in "0123456789":
            self.pos += 1
        return self.text[begin : self.pos]


def parse_source(text: str, *, events: bool = False) -> ParsedSource:
    """Every rule of ``text`` with positions (raises :class:`SourceMismatch`). The reference
    for :func:`source_of_grammar`, which reads the same from the core's parse."""
    return SourceParser(text, events=events).parse_all()


def source_of_grammar(grammar: Grammar, text: str) -> ParsedSource:
    """What ``parse_source(text, events=True)`` gives, read from the core's own parse of
    ``text`` (its source layout, at about half the cost). When ``grammar`` was parsed from
    ``text`` and its :attr:`~Grammar.rules` are not converted yet, they become these trees (one
    conversion instead of two, and facts drawn from either hold for both); otherwise the text
    is parsed again."""
    same = grammar._core.source() == text.encode("utf-8", "surrogatepass")
    core = grammar._core if same else Grammar.from_gbnf(text, root=grammar.root)._core
    definitions, events = core.source_layout()
    rules = []
    for name, start, end, tree in definitions:
        rule = RuleSource(name, start, end, syntax.Sequence(()))
        rule.body = _positioned(tree, rule)
        rules.append(rule)
    parsed = ParsedSource(text, rules, list(map(Event._make, events)))
    if same:
        # The core keeps rules in the order of their last definitions.
        last = sorted(parsed.rules().values(), key=lambda r: r.start)
        grammar._adopt_rules({r.name: r.body for r in last})
    return parsed


def _positioned(raw: tuple[Any, ...], rule: RuleSource) -> syntax.Node:
    """A core tree with positions (``source_layout``'s: the node's fields, then start, end and
    the parentheses around it) as syntax nodes, recorded in ``rule``."""
    kind = raw[0]
    node: syntax.Node
    if kind == "seq":
        node = syntax.Sequence(tuple([_positioned(c, rule) for c in raw[1]]))
    elif kind == "alt":
        node = syntax.Alternation(tuple([_positioned(c, rule) for c in raw[1]]))
    elif kind == "repeat":
        node = syntax.Repeat(_positioned(raw[1], rule), raw[2], raw[3])
        rule.repeats.append(node)
    else:
        node = leaf_node(raw)
    rule.spans[id(node)] = (raw[-3], raw[-2])
    if raw[-1]:
        rule.groups[id(node)] = raw[-1]
    return node


def find_definition(text: str, name: str) -> int:
    """Offset of the last definition of rule ``name`` (-1 if none is found): a rule starts a
    line, after optional spaces (and, on the first line, a byte-order mark)."""
    pattern = re.compile(r"(?m)^\ufeff?[ \t]*(" + re.escape(name) + r")[ \t]*::=")
    last = -1
    for found in pattern.finditer(text):
        last = found.start(1)
    return last


_DEFINITION = re.compile(r"(?m)^\ufeff?[ \t]*([A-Za-z0-9_-]+)[ \t]*::=")


def rule_slices(text: str) -> dict[str, list[tuple[int, int]]]:
    """Rule name -> the spans of its definitions (from its line to the next definition's), by a
    line scan: cheap, and exact unless a line inside a multi-line literal or group looks like a
    definition (callers parse the result and fall back when it fails)."""
    starts = [(m.start(), m.group(1)) for m in _DEFINITION.finditer(text)]
    out: dict[str, list[tuple[int, int]]] = {}
    for i, (start, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        out.setdefault(name, []).append((start, end))
    return out


def parse_rule_source(text: str, name: str, body: syntax.Node) -> RuleSource | None:
    """The positioned definition of rule ``name`` whose tree equals ``body`` (None when it
    cannot be found, e.g. a definition line hidden inside a multi-line literal)."""
    at = find_definition(text, name)
    if at < 0:
        return None
    try:
        rule = SourceParser(text).parse_rule(at)
        return rule if rule.body == body else None
    except (SourceMismatch, RecursionError):
        return None


__all__ = [
    "Event",
    "ParsedSource",
    "RuleSource",
    "SourceMismatch",
    "SourceParser",
    "find_definition",
    "parse_rule_source",
    "parse_source",
    "rule_slices",
    "source_of_grammar",
]
