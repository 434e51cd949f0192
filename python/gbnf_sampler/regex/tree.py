"""Regular-expression intermediate form shared by the regex, JSON Schema and number converters.

A regex is parsed (ECMA-262 dialect, code-point semantics as with the ``u`` flag) into a small
tree of :class:`Chars`, :class:`Seq`, :class:`Alt` and :class:`Rep` nodes, then printed as a GBNF
expression. Character sets are printed through a callback, so the same tree can match raw text
(``[a-z]``) or the JSON-escaped text of a string body (``a``, ``\\u0061``...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

MAX_CODEPOINT = 0x10FFFF
SURROGATES: Ranges = ((0xD800, 0xDFFF),)

Ranges = tuple[tuple[int, int], ...]


def normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sorted, merged, non-overlapping inclusive code-point ranges."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(r for r in ranges if r[0] <= r[1]):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def complement(ranges: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODEPOINT:
        out.append((nxt, MAX_CODEPOINT))
    return tuple(out)


def intersect(a: Ranges, b: Ranges) -> Ranges:
    """The code points in both (normalized inputs; a linear merge, so ranges past
    ``MAX_CODEPOINT``, the markers of ``assertions``, survive)."""
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def subtract(a: Ranges, b: Ranges) -> Ranges:
    """The code points of ``a`` not in ``b`` (normalized inputs)."""
    if not a or not b or a[-1][1] < b[0][0] or b[-1][1] < a[0][0]:
        return tuple(a)  # apart (the common case: a JSON string's ranges and the surrogates)
    out: list[tuple[int, int]] = []
    j = 0
    for lo, hi in a:
        while j < len(b) and b[j][1] < lo:
            j += 1
        k = j
        while k < len(b) and b[k][0] <= hi:
            if b[k][0] > lo:
                out.append((lo, b[k][0] - 1))
            lo = max(lo, b[k][1] + 1)
            k += 1
        if lo <= hi:
            out.append((lo, hi))
    return tuple(out)


def contains(ranges: Ranges, cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


@dataclass(frozen=True)
class Chars:
    """One code point from ``ranges`` (normalized)."""

    ranges: Ranges


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Rep:
    item: Node
    min: int
    max: int | None


@dataclass(frozen=True)
class Anchor:
    """``^`` (start) or ``$`` (end), or ``b``/``B`` for ``\\b``/``\\B``; only survives parsing,
    never reaches the printer."""

    kind: str


@dataclass(frozen=True)
class Look:
    """A lookahead ``(?=body)`` (or ``(?!body)`` when ``negate``); ``reading`` is how the
    body's character sets were read (flipped under negation). Zero-width; resolved into an
    automaton by ``lookaround``, never reaches the printer."""

    body: Node
    negate: bool
    reading: str
    behind: bool = False  # a lookbehind (?<=body) / (?<!body): see ``assertions``


class Language(Protocol):
    """An automaton as the tree sees it (an :class:`~.automata.Dfa`): the tree only carries it;
    the automaton code reads it."""

    def is_empty(self) -> bool: ...


@dataclass(frozen=True, eq=False)
class Lang:
    """A language given by an automaton (what a pattern with lookaheads compiles to): only
    the automaton code (``automata``) reads it; compared by identity."""

    dfa: Language


Node = Chars | Seq | Alt | Rep | Anchor | Look | Lang

EMPTY = Seq(())
NEVER = Alt(())


def char(cp: int) -> Chars:
    return Chars(((cp, cp),))


def literal(text: str) -> Node:
    if len(text) == 1:
        return char(ord(text))
    return Seq(tuple(char(ord(c)) for c in text))


def seq(*items: Node) -> Node:
    flat: list[Node] = []
    for item in items:
        if item == NEVER:
            return NEVER
        flat.extend(item.items if isinstance(item, Seq) else (item,))
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(*items: Node) -> Node:
    flat: list[Node] = []
    for item in items:
        for sub in item.items if isinstance(item, Alt) else (item,):
            if sub not in flat:
                flat.append(sub)
    return flat[0] if len(flat) == 1 else Alt(tuple(flat))


def rep(item: Node, lo: int, hi: int | None) -> Node:
    if hi == 0 or item == EMPTY:
        return EMPTY
    if lo == hi == 1:
        return item
    if item == NEVER:
        return EMPTY if lo == 0 else NEVER
    return Rep(item, lo, hi)


def holds(node: Node, kind: type) -> bool:
    """Whether ``node`` or a node inside it is a ``kind`` (an anchor, a lookahead...)."""
    if isinstance(node, kind):
        return True
    if isinstance(node, (Seq, Alt)):
        return any(holds(i, kind) for i in node.items)
    if isinstance(node, Rep):
        return holds(node.item, kind)
    return False


def without(node: Node, ranges: Ranges) -> Node:
    """``node`` with the code points of ``ranges`` removed from every character set (a set left
    empty matches nothing)."""
    if isinstance(node, Chars):
        kept = subtract(node.ranges, ranges)
        return Chars(kept) if kept else NEVER
    if isinstance(node, Seq):
        return seq(*(without(item, ranges) for item in node.items))
    if isinstance(node, Alt):
        return alt(*(item for item in (without(i, ranges) for i in node.items) if item != NEVER))
    if isinstance(node, Rep):
        return rep(without(node.item, ranges), node.min, node.max)
    return node


def length_bounds(node: Node) -> tuple[int, int | None]:
    """The shortest and longest match length in code points (None: unbounded)."""
    if isinstance(node, Chars):
        return (1, 1) if node.ranges else (0, 0)
    if isinstance(node, (Anchor, Look)):
        return (0, 0)
    if isinstance(node, Lang):
        return (0, None)  # not computed: a safe over-approximation
    if isinstance(node, Seq):
        lo, hi = 0, 0
        bounded = True
        for item in node.items:
            a, b = length_bounds(item)
            lo += a
            bounded = bounded and b is not None
            hi += b or 0
        return lo, hi if bounded else None
    if isinstance(node, Alt):
        if not node.items:
            return (0, 0)
        bounds = [length_bounds(i) for i in node.items]
        his = [b for _, b in bounds if b is not None]
        return min(a for a, _ in bounds), max(his) if len(his) == len(bounds) else None
    item_lo, item_hi = length_bounds(node.item)
    if item_hi == 0:
        return 0, 0
    top = None if node.max is None or item_hi is None else item_hi * node.max
    return item_lo * node.min, top


# --- GBNF printing -------------------------------------------------------------------------------

_LITERAL_ESCAPES = {0x22: '\\"', 0x5C: "\\\\", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}
_CLASS_SPECIAL = {0x5C: "\\\\", 0x5D: "\\]", 0x5B: "\\[", 0x2D: "\\-", 0x5E: "\\x5E"}


def _hex_escape(cp: int) -> str:
    if cp <= 0xFF:
        return f"\\x{cp:02X}"
    if cp <= 0xFFFF:
        return f"\\u{cp:04X}"
    return f"\\U{cp:08X}"


def _printable(cp: int) -> bool:
    return 0x20 <= cp < 0x7F


def literal_gbnf(text: str) -> str:
    """A GBNF string literal for ``text``."""
    out = []
    for c in text:
        cp = ord(c)
        if cp in _LITERAL_ESCAPES:
            out.append(_LITERAL_ESCAPES[cp])
        elif _printable(cp):
            out.append(c)
        else:
            out.append(_hex_escape(cp))
    return '"' + "".join(out) + '"'


def _class_char(cp: int) -> str:
    if cp in _CLASS_SPECIAL:
        return _CLASS_SPECIAL[cp]
    if _printable(cp):
        return chr(cp)
    return _hex_escape(cp)


def class_gbnf(ranges: Ranges, negated: bool = False) -> str:
    """A GBNF character class; a single character prints as a literal."""
    if not negated and len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return literal_gbnf(chr(ranges[0][0]))
    if not negated and ranges == ((0, MAX_CODEPOINT),):
        return "."
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_class_char(lo))
        elif hi == lo + 1:
            parts.append(_class_char(lo) + _class_char(hi))
        else:
            parts.append(f"{_class_char(lo)}-{_class_char(hi)}")
    return "[" + ("^" if negated else "") + "".join(parts) + "]"


def raw_chars_gbnf(ranges: Ranges) -> str:
    """Prints a set of code points as the shorter of the class and its negation."""
    if not ranges:
        raise ValueError("empty character set")
    comp = complement(ranges)
    if comp and len(comp) < len(ranges):
        return class_gbnf(comp, negated=True)
    return class_gbnf(ranges)


CharPrinter = Callable[[Ranges], str]


def _quantifier(lo: int, hi: int | None) -> str:
    if (lo, hi) == (0, None):
        return "*"
    if (lo, hi) == (1, None):
        return "+"
    if (lo, hi) == (0, 1):
        return "?"
    if hi is None:
        return f"{{{lo},}}"
    if lo == hi:
        return f"{{{lo}}}"
    return f"{{{lo},{hi}}}"


def _literal_run(items: tuple[Node, ...], start: int) -> tuple[str, int]:
    """The longest run of single printable characters starting at ``start``."""
    text = []
    i = start
    while i < len(items):
        item = items[i]
        if not (isinstance(item, Chars) and len(item.ranges) == 1):
            break
        lo, hi = item.ranges[0]
        if lo != hi:
            break
        text.append(chr(lo))
        i += 1
    return "".join(text), i


def to_gbnf(node: Node, chars: CharPrinter = raw_chars_gbnf, *, top: bool = True) -> str:
    """Prints ``node`` as a GBNF expression. ``chars`` prints each character set."""
    if isinstance(node, Chars):
        if not node.ranges:
            raise ValueError("empty character set")
        return chars(node.ranges)
    if isinstance(node, (Anchor, Look, Lang)):
        raise ValueError(f"{type(node).__name__} in printable regex")
    if isinstance(node, Alt):
        if not node.items:
            raise ValueError("empty alternation")
        body = " | ".join(to_gbnf(i, chars, top=False) for i in node.items)
        return body if top else f"({body})"
    if isinstance(node, Seq):
        return _seq_gbnf(node, chars, top)
    inner = to_gbnf(node.item, chars, top=False)
    if " " in inner and not (inner.startswith("(") and inner.endswith(")")):
        inner = f"({inner})"
    return inner + _quantifier(node.min, node.max)


def _seq_gbnf(node: Seq, chars: CharPrinter, top: bool) -> str:
    if not node.items:
        return '""'
    parts: list[str] = []
    i = 0
    while i < len(node.items):
        text, j = _literal_run(node.items, i)
        if j - i >= 2 and chars is raw_chars_gbnf:
            parts.append(literal_gbnf(text))
            i = j
            continue
        parts.append(to_gbnf(node.items[i], chars, top=False))
        i += 1
    body = " ".join(parts)
    return body if top or len(parts) == 1 else f"({body})"
