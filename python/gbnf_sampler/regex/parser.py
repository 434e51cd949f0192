"""Parser for the ECMA-262 regex dialect of JSON Schema ``pattern`` (code-point semantics).

Supported: literals, escapes (``\\n \\t \\xHH \\uHHHH \\u{H...} \\cX \\0``, escaped punctuation),
classes with ranges and negation, ``\\d \\D \\w \\W \\s \\S``, ``.``, quantifiers ``* + ? {m}
{m,} {m,n}`` and their lazy forms (same language), groups (capturing, ``(?:...)``, named
``(?<name>...)``), alternation, the anchors ``^ $`` and Unicode property escapes of the
General_Category (``\\p{L}``, ``\\p{gc=Lu}``, ``\\P{Nd}``; see ``unicode_props``), and
lookaheads ``(?=...)``/``(?!...)`` (kept as :class:`tree.Look` nodes; ``lookaround`` compiles them).
Backreferences, lookbehind, word boundaries and other properties raise :class:`RegexSyntaxError`.
"""

from __future__ import annotations

import functools

from ..limits import MAX_GROUP_DEPTH, MAX_REPEAT
from . import tree
from .tree import Chars, Node, Ranges
from .unicode_props import general_category

DIGIT: Ranges = ((0x30, 0x39),)
WORD: Ranges = tree.normalize([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
SPACE: Ranges = tree.normalize(
    [
        (0x09, 0x0D),
        (0x20, 0x20),
        (0xA0, 0xA0),
        (0x1680, 0x1680),
        (0x2000, 0x200A),
        (0x2028, 0x2029),
        (0x202F, 0x202F),
        (0x205F, 0x205F),
        (0x3000, 0x3000),
        (0xFEFF, 0xFEFF),
    ]
)

LINE_TERMINATORS: Ranges = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
DOT: Ranges = tree.complement(LINE_TERMINATORS)
PYTHON_DOT: Ranges = tree.complement(((0x0A, 0x0A),))

Dual = tuple[Ranges, Ranges]  # (ECMA-262 meaning, Python re meaning) of a character set


@functools.lru_cache(maxsize=1)
def _python_shorthands() -> dict[str, Ranges]:
    """What ``\\d \\w \\s`` match in Python's ``re`` (Unicode str patterns)."""
    digit: list[tuple[int, int]] = []
    word: list[tuple[int, int]] = []
    space: list[tuple[int, int]] = []
    for cp in range(tree.MAX_CODEPOINT + 1):
        c = chr(cp)
        if c.isdecimal():
            digit.append((cp, cp))
        if c.isalnum() or c == "_":
            word.append((cp, cp))
        if c.isspace():
            space.append((cp, cp))
    return {"d": tree.normalize(digit), "w": tree.normalize(word), "s": tree.normalize(space)}


def _shorthand(letter: str) -> Dual:
    """``\\d \\D \\w \\W \\s \\S``. jsonschema validates patterns with Python's ``re``, whose
    sets differ from ECMA-262's outside ASCII; the grammar keeps only characters on which both
    agree, so it is sound under either reading."""
    ecma = {"d": DIGIT, "w": WORD, "s": SPACE}[letter.lower()]
    python = _python_shorthands()[letter.lower()]
    if letter.isupper():
        return tree.complement(ecma), tree.complement(python)
    return ecma, python


def _meet(dual: Dual) -> Ranges:
    return tree.intersect(dual[0], dual[1])


def _join(dual: Dual) -> Ranges:
    return tree.normalize(dual[0] + dual[1])


# How a character set is read where ECMA-262 and Python's ``re`` disagree: "both" keeps the
# characters both readings match (a grammar that accepts only those is sound under either);
# "either" keeps those one of them matches (what must be excluded when a pattern is negated).
READINGS = ("both", "either")


def _same(ranges: Ranges) -> Dual:
    return ranges, ranges


_CLASS_ESCAPES = frozenset("dDwWsS")
_CONTROL_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B, "f": 0x0C, "0": 0x00}
_SYNTAX_CHARS = set("^$\\.*+?()[]{}|/-")


class RegexSyntaxError(ValueError):
    """A pattern outside the supported dialect; ``pos`` is the 0-based offset in the pattern."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(f"{message} at position {pos}")
        self.message = message
        self.pos = pos


class _Parser:
    def __init__(self, pattern: str, reading: str) -> None:
        if reading not in READINGS:
            raise ValueError(f"reading must be one of {READINGS}")
        self.s = pattern
        self.i = 0
        self.read_as(reading)

    def read_as(self, reading: str) -> None:
        self.reading = reading
        self.combine = _meet if reading == "both" else _join
        self.dot = DOT if reading == "both" else PYTHON_DOT
        self.depth = 0  # groups open at self.i

    # -- helpers ---------------------------------------------------------------------------------
    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def take(self) -> str:
        c = self.peek()
        if not c:
            self.fail("unexpected end of pattern")
        self.i += 1
        return c

    def fail(self, message: str, pos: int | None = None) -> None:
        raise RegexSyntaxError(message, self.i if pos is None else pos)

    # -- grammar ---------------------------------------------------------------------------------
    def parse(self) -> Node:
        node = self.alternation()
        if self.i < len(self.s):
            self.fail("unbalanced ')'")
        return node

    def alternation(self) -> Node:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else tree.Alt(tuple(branches))

    def sequence(self) -> Node:
        items: list[Node] = []
        while self.peek() and self.peek() not in "|)":
            items.append(self.quantified())
        return items[0] if len(items) == 1 else tree.Seq(tuple(items))

    def quantified(self) -> Node:
        start = self.i
        atom = self.atom()
        bounds = self.quantifier()
        if bounds is None:
            return atom
        if isinstance(atom, tree.Anchor):
            self.fail("quantifier after an anchor", start)
        if isinstance(atom, tree.Look):
            self.fail("quantifier after a lookaround assertion", start)
        if self.peek() == "?":
            self.i += 1  # lazy: same language
        lo, hi = bounds
        return tree.Rep(atom, lo, hi)

    def quantifier(self) -> tuple[int, int | None] | None:
        c = self.peek()
        simple = {"*": (0, None), "+": (1, None), "?": (0, 1)}
        if c in simple:
            self.i += 1
            return simple[c]
        if c == "{":
            return self.braces()
        return None

    def braces(self) -> tuple[int, int | None] | None:
        start = self.i
        end = self.s.find("}", start)
        body = self.s[start + 1 : end] if end > 0 else ""
        lo_text, comma, hi_text = body.partition(",")
        if not lo_text.isdigit() or not (hi_text == "" or hi_text.isdigit()):
            return None  # Annex B: a '{' that opens no quantifier is a literal
        lo = int(lo_text)
        hi = (None if hi_text == "" else int(hi_text)) if comma else lo
        if hi is not None and hi < lo:
            self.fail("numbers out of order in {} quantifier", start)
        if max(lo, hi or 0) > MAX_REPEAT:
            self.fail(f"repetition bound above {MAX_REPEAT}", start)
        self.i = end + 1
        return lo, hi

    def atom(self) -> Node:
        start = self.i
        c = self.take()
        if c == "(":
            return self.group(start)
        if c == "[":
            return Chars(self.combine(self.char_class()))
        if c == ".":
            return Chars(self.dot)
        if c in "^$":
            return tree.Anchor(c)
        if c == "\\":
            return self.atom_escape(start)
        if c in "*+?":
            self.fail("nothing to repeat", start)
        if c == "{" and self.braces_at(start):
            self.fail("nothing to repeat", start)
        if c == ")":
            self.fail("unbalanced ')'", start)
        return tree.char(ord(c))

    def braces_at(self, start: int) -> bool:
        saved = self.i
        self.i = start
        found = self.braces() is not None
        self.i = saved
        return found

    def group(self, start: int) -> Node:
        if self.depth >= MAX_GROUP_DEPTH:
            self.fail(f"groups nested deeper than {MAX_GROUP_DEPTH} levels", start)
        if self.peek() == "?":
            kind = self.peek(1)
            if kind == ":":
                self.i += 2
            elif kind == "<" and self.peek(2) not in "=!":
                close = self.s.find(">", self.i)
                if close < 0:
                    self.fail("unterminated group name", start)
                self.i = close + 1
            elif kind in "=!":
                return self.lookahead(start, negate=kind == "!")
            elif kind == "<" and self.peek(2) in "=!":
                self.i += 1
                return self.lookahead(start, negate=self.peek(1) == "!", behind=True)
            else:
                self.fail("invalid group", start)
        self.depth += 1
        node = self.alternation()
        self.depth -= 1
        if self.peek() != ")":
            self.fail("missing ')'", start)
        self.i += 1
        return node

    def lookahead(self, start: int, negate: bool, behind: bool = False) -> Node:
        """``(?=...)`` / ``(?!...)`` (``behind``: ``(?<=...)`` / ``(?<!...)``, the ``<`` already
        read). A negated body is read the other way (see :data:`READINGS`): what a narrow
        language must exclude is the widest reading."""
        self.i += 2
        outer = self.reading
        body_reading = READINGS[1 - READINGS.index(outer)] if negate else outer
        self.read_as(body_reading)
        body = self.alternation()
        self.read_as(outer)
        if self.peek() != ")":
            self.fail("missing ')'", start)
        self.i += 1
        return tree.Look(body, negate, body_reading, behind)

    # -- escapes ---------------------------------------------------------------------------------
    def atom_escape(self, start: int) -> Node:
        c = self.peek()
        if c in ("b", "B"):
            self.i += 1
            return tree.Anchor(c)
        if c.isdigit() and c != "0":
            self.fail("backreferences are not supported", start)
        if c == "k" and self.peek(1) == "<":
            self.fail("backreferences are not supported", start)
        return Chars(self.combine(self.escape_ranges(start, in_class=False)))

    def escape_ranges(self, start: int, in_class: bool) -> Dual:
        c = self.take()
        if c in _CLASS_ESCAPES:
            return _shorthand(c)
        if c in ("p", "P"):
            return self.property_escape(c, start)
        if in_class and c == "b":
            return _same(((8, 8),))
        if in_class and c == "-":
            return _same(((0x2D, 0x2D),))
        cp = self.escape_codepoint(c, start)
        return _same(((cp, cp),))

    def escape_codepoint(self, c: str, start: int) -> int:
        if c in _CONTROL_ESCAPES:
            if c == "0" and self.peek().isdigit():
                self.fail("octal escapes are not supported", start)
            return _CONTROL_ESCAPES[c]
        if c == "x":
            return self.hex_digits(2, start)
        if c == "u":
            return self.unicode_escape(start)
        if c == "c":
            letter = self.take()
            if not letter.isascii() or not letter.isalpha():
                self.fail("invalid control escape", start)
            return ord(letter) % 32
        if c in _SYNTAX_CHARS or not (c.isascii() and c.isalnum()):
            return ord(c)
        self.fail(f"invalid escape '\\{c}'", start)
        return 0  # unreachable

    def property_escape(self, letter: str, start: int) -> Dual:
        """``\\p{...}`` / ``\\P{...}`` (General_Category; see ``unicode_props``). Python's
        ``re`` has no such escape: both readings are the Unicode one."""
        close = self.s.find("}", self.i)
        if self.peek() != "{" or close < 0:
            self.fail("\\p and \\P need a {Property} name", start)
        try:
            ranges = general_category(self.s[self.i + 1 : close])
        except KeyError as err:
            self.fail(str(err.args[0]), start)
        self.i = close + 1
        return _same(tree.complement(ranges) if letter == "P" else ranges)

    def hex_digits(self, n: int, start: int) -> int:
        text = self.s[self.i : self.i + n]
        if len(text) != n or any(ch not in "0123456789abcdefABCDEF" for ch in text):
            self.fail("invalid hexadecimal escape", start)
        self.i += n
        return int(text, 16)

    def unicode_escape(self, start: int) -> int:
        if self.peek() == "{":
            close = self.s.find("}", self.i)
            digits = self.s[self.i + 1 : close] if close > 0 else ""
            if not digits or any(ch not in "0123456789abcdefABCDEF" for ch in digits):
                self.fail("invalid \\u{...} escape", start)
            self.i = close + 1
            cp = int(digits, 16)
            if cp > tree.MAX_CODEPOINT:
                self.fail("code point out of range", start)
            return cp
        cp = self.hex_digits(4, start)
        if 0xD800 <= cp <= 0xDBFF and self.s[self.i : self.i + 2] == "\\u":
            save = self.i
            self.i += 2
            low = self.hex_digits(4, start)
            if 0xDC00 <= low <= 0xDFFF:
                return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
            self.i = save
        return cp

    # -- classes ---------------------------------------------------------------------------------
    def char_class(self) -> Dual:
        start = self.i - 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        ecma: list[tuple[int, int]] = []
        python: list[tuple[int, int]] = []
        while self.peek() != "]":
            if not self.peek():
                self.fail("unterminated character class", start)
            item = self.class_item()
            ecma.extend(item[0])
            python.extend(item[1])
        self.i += 1
        dual = tree.normalize(ecma), tree.normalize(python)
        return (tree.complement(dual[0]), tree.complement(dual[1])) if negated else dual

    def class_atom(self) -> tuple[Dual, bool]:
        """One class atom; the flag says whether it is a single character (usable in a range)."""
        start = self.i
        c = self.take()
        if c != "\\":
            return _same(((ord(c), ord(c)),)), True
        if self.peek() in _CLASS_ESCAPES or self.peek() in ("p", "P"):
            return self.escape_ranges(start, in_class=True), False
        if self.peek().isdigit() and self.peek() != "0":
            self.fail("backreferences are not supported", start)
        return self.escape_ranges(start, in_class=True), True

    def class_item(self) -> Dual:
        start = self.i
        lo, lo_single = self.class_atom()
        if self.peek() == "-" and self.peek(1) not in ("]", ""):
            self.i += 1
            hi, hi_single = self.class_atom()
            if not (lo_single and hi_single):  # Annex B: [\w-_] is \w, '-' and '_'
                dash = _same(((0x2D, 0x2D),))
                return tuple(  # type: ignore[return-value]
                    tree.normalize(lo[k] + dash[k] + hi[k]) for k in (0, 1)
                )
            if hi[0][0][0] < lo[0][0][0]:
                self.fail("range out of order in character class", start)
            return _same(((lo[0][0][0], hi[0][0][0]),))
        return lo


def parse(pattern: str, reading: str = "both") -> Node:
    """Parses ``pattern``; raises :class:`RegexSyntaxError`. ``reading``: see :data:`READINGS`."""
    return _Parser(pattern, reading).parse()


# --- anchors -------------------------------------------------------------------------------------


def has_anchor(node: Node) -> bool:
    return tree.holds(node, tree.Anchor)


def strip_anchor(node: Node, kind: str, pad: Node | None, anchor: Node = tree.EMPTY) -> Node:
    """Replaces a leading (``^``) or trailing (``$``) anchor of every branch by ``anchor``; a
    branch without one gets ``pad`` (``.*`` for a search, or nothing for a full match) on that
    side."""
    if isinstance(node, tree.Anchor) and node.kind == kind:
        return anchor
    if isinstance(node, tree.Alt):
        pinned = [strip_anchor(b, kind, pad, anchor) for b in node.items if _pinned(b, kind)]
        free = [b for b in node.items if not _pinned(b, kind)]
        if pad is not None and len(free) > 1:
            # One pad around all the unpinned branches, not one each: ``.*(en|de|..).*``
            # has a small automaton, ``.*en.*|.*de.*|..`` one that grows with every branch.
            free = [
                tree.Seq(
                    (pad, tree.Alt(tuple(free))) if kind == "^" else (tree.Alt(tuple(free)), pad)
                )
            ]
        else:
            free = [strip_anchor(b, kind, pad, anchor) for b in free]
        return tree.Alt(tuple(pinned + free))
    if isinstance(node, tree.Seq) and node.items:
        items = _hoist(list(node.items), kind)
        edge = 0 if kind == "^" else len(items) - 1
        if isinstance(items[edge], (tree.Anchor, tree.Alt, tree.Seq)):
            items[edge] = strip_anchor(items[edge], kind, pad, anchor)
            return tree.Seq(tuple(items))
    if pad is None:
        return node
    return tree.Seq((pad, node) if kind == "^" else (node, pad))


def _pinned(node: Node, kind: str) -> bool:
    """Whether some branch of ``node`` has the anchor ``kind`` at that end (where
    :func:`strip_anchor` does more than pad)."""
    if isinstance(node, tree.Anchor):
        return node.kind == kind
    if isinstance(node, tree.Alt):
        return any(_pinned(b, kind) for b in node.items)
    if isinstance(node, tree.Seq) and node.items:
        items = _hoist(list(node.items), kind)
        return _pinned(items[0] if kind == "^" else items[-1], kind)
    return False


def _hoist(items: list[Node], kind: str) -> list[Node]:
    """Moves an anchor that only lookaheads separate from its end of the sequence to that end:
    both are zero-width at the same position, so ``(?!x)^a`` is ``^(?!x)a``."""
    order = range(len(items)) if kind == "^" else range(len(items) - 1, -1, -1)
    for k in order:
        item = items[k]
        if isinstance(item, tree.Anchor) and item.kind == kind:
            others = [*items[:k], *items[k + 1 :]]
            return [item, *others] if kind == "^" else [*others, item]
        if not isinstance(item, tree.Look):
            break
    return items


def anchor(node: Node, search: bool, reading: str = "both") -> Node:
    """Resolves anchors: full-match semantics, or (``search``) an unanchored search where only
    branches starting with ``^`` / ending with ``$`` are pinned to that end. Python's ``$`` also
    matches before a final newline: the "either" reading lets one follow."""
    pad = tree.Rep(Chars(((0, tree.MAX_CODEPOINT),)), 0, None) if search else None
    dollar = tree.rep(tree.char(0x0A), 0, 1) if reading == "either" and search else tree.EMPTY
    node = strip_anchor(strip_anchor(node, "^", pad), "$", pad, dollar)
    if has_anchor(node):
        raise RegexSyntaxError("'^' or '$' in the middle of a pattern is not supported", 0)
    return simplify(node)


def simplify(node: Node) -> Node:
    if isinstance(node, tree.Seq):
        return tree.seq(*(simplify(i) for i in node.items))
    if isinstance(node, tree.Alt):
        return tree.alt(*(simplify(i) for i in node.items))
    if isinstance(node, tree.Rep):
        return tree.rep(simplify(node.item), node.min, node.max)
    return node
