"""Hypothesis strategies for grammar tests: random grammars, GBNF renderings, sentences, mutations.

``grammars()`` draws small grammars (``rules``: :mod:`gbnf_sampler.syntax` nodes, ``root``) in
the parser's normal form, so that ``Grammar.from_gbnf(to_gbnf_text(rules, root)).rules == rules``
holds exactly. The parser keeps the tree as written, except that a parenthesized group becomes
its content and a one-item sequence becomes its item; so a ``Sequence`` here has zero or two or
more items, and a nested ``Sequence`` or ``Alternation`` is what a parenthesized group inside a
sequence or alternation gives. ``Sequence(())`` (epsilon, ``()`` or an empty alternative) and
``Literal(())`` (``""``) both occur. No surrogates and no U+0000 in the tree (``sentences``
may still produce U+0000 for ``.`` or a negated class); no ``TokenRef`` unless asked for.

Every rule is productive: rules are made from the last to the first, and each rule's first
alternative ("base") may only refer to rules made before it, so by induction it can finish;
the other alternatives may refer to any rule, itself included (left recursion too).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st

from gbnf_sampler import syntax as gast
from reference import class_ranges

Rules = dict[str, gast.Node]
Draw = Callable[[st.SearchStrategy[Any]], Any]

# Characters worth having in literals and classes: GBNF's special characters, escapes, and
# 2-, 3- and 4-byte UTF-8 (é, 日, an emoji) plus the edges of each length.
INTERESTING_CHARS = (
    "aAzZ09 _#|()*+?.{},:=<>!~'"
    '"\\\n\t\r[]-^'
    "\x01\x1f\x7f\x80\xa0é\u07ff\u0800日\ud7ff\ue000\uffff😀\U00010000\U0010ffff"
)
_NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_NAME_CHARS = _NAME_START + "0123456789-_"
_SCALARS = st.one_of(
    st.integers(0x01, 0xD7FF), st.integers(0xE000, 0x10FFFF)
)  # no U+0000, no surrogates
_CODEPOINTS = st.one_of(st.sampled_from([ord(c) for c in INTERESTING_CHARS]), _SCALARS)


# -- grammars ------------------------------------------------------------------------------------


def rule_names() -> st.SearchStrategy[str]:
    """Letters, digits, '-' and '_' (mostly starting with a letter)."""
    return st.builds(
        lambda first, rest: first + rest,
        st.sampled_from(_NAME_START + "_-7"),
        st.text(alphabet=_NAME_CHARS, max_size=6),
    )


def literals() -> st.SearchStrategy[gast.Literal]:
    return st.lists(_CODEPOINTS, min_size=1, max_size=4).map(lambda cps: gast.Literal(tuple(cps)))


def _range(pair: tuple[int, int]) -> tuple[int, int]:
    return (min(pair), max(pair))


def char_classes() -> st.SearchStrategy[gast.CharClass]:
    single = _CODEPOINTS.map(lambda c: (c, c))
    pair = st.tuples(_CODEPOINTS, _CODEPOINTS).map(_range)
    ranges = st.lists(st.one_of(single, pair), min_size=1, max_size=3).map(tuple)
    any_by_negation = st.just(gast.CharClass((), negated=True))  # written [^]
    return st.one_of(st.builds(gast.CharClass, ranges, st.booleans()), any_by_negation)


def token_refs() -> st.SearchStrategy[gast.TokenRef]:
    """``<[id]>`` or ``<text>``, maybe negated with ``!``."""
    text = st.text(alphabet='abz|_-. é日]#"\\', min_size=1, max_size=6).map(lambda t: f"<{t}>")
    by_id = st.builds(gast.TokenRef, st.integers(0, 300000), st.none(), st.booleans())
    by_text = st.builds(gast.TokenRef, st.none(), text, st.booleans())
    return st.one_of(by_id, by_text)


@functools.cache
def _exprs(refs: tuple[str, ...], depth: int, tokens: bool) -> st.SearchStrategy[gast.Node]:
    """Expressions in normal form that may refer to the rules ``refs`` (and to vocabulary tokens,
    if ``tokens``). Cached: building hypothesis strategies anew for every draw is slow."""
    atoms: list[st.SearchStrategy[gast.Node]] = [_LITERALS, _CHAR_CLASSES, st.just(gast.AnyChar())]
    if refs:
        atoms.append(st.sampled_from(refs).map(gast.RuleRef))
    if tokens:
        atoms.append(_TOKEN_REFS)
    choices = [st.one_of(atoms)] * 4 + [st.sampled_from([gast.Sequence(()), gast.Literal(())])]
    if depth > 0:
        inner = _exprs(refs, depth - 1, tokens)
        items = st.lists(inner, min_size=2, max_size=3).map(tuple)
        choices += [items.map(gast.Sequence), items.map(gast.Alternation), _repeats(inner)] * 2
    return st.one_of(choices)


@st.composite
def _repeats(draw: Draw, item: st.SearchStrategy[gast.Node]) -> gast.Repeat:
    lo = draw(st.integers(0, 3))
    hi = draw(st.one_of(st.none(), st.integers(lo, lo + 3)))
    return gast.Repeat(draw(item), lo, hi)


_LITERALS = literals()
_CHAR_CLASSES = char_classes()
_TOKEN_REFS = token_refs()


@st.composite
def grammars(
    draw: Draw, max_rules: int = 4, max_depth: int = 3, tokens: bool = False
) -> tuple[Rules, str]:
    """A random productive grammar ``(rules, root)``; ``root`` is the first rule.

    ``tokens=True`` also puts ``TokenRef`` nodes in (for parser tests only: a rule that needs a
    token can then have no text sentence, so do not use those grammars with ``sentences``)."""
    names = draw(st.lists(rule_names(), min_size=1, max_size=max_rules, unique=True))
    rules: Rules = {}
    for i in reversed(range(len(names))):
        name = names[i]
        extras = draw(
            st.lists(_recursive_alternative(tuple(names), name, max_depth, tokens), max_size=2)
        )
        base = draw(_exprs(tuple(names[i + 1 :]), max_depth, tokens))
        if not extras:
            rules[name] = base
            continue
        alternatives = [base, *extras]
        order = draw(st.permutations(range(len(alternatives))))
        rules[name] = gast.Alternation(tuple(alternatives[j] for j in order))
    ordered = {name: rules[name] for name in names}  # definition order = generation order
    return ordered, names[0]


@functools.cache
def _recursive_alternative(
    names: tuple[str, ...], name: str, depth: int, tokens: bool
) -> st.SearchStrategy[gast.Node]:
    """An alternative that may use any rule; sometimes left recursive (``name X``) or empty."""
    anything = _exprs(tuple(names), depth - 1, tokens)
    left = st.lists(_exprs(tuple(names), depth - 1, tokens), min_size=1, max_size=2).map(
        lambda rest: gast.Sequence((gast.RuleRef(name), *rest))
    )
    return st.one_of(anything, left, st.just(gast.Sequence(())))


# -- sentences -----------------------------------------------------------------------------------


def min_costs(rules: Mapping[str, gast.Node]) -> dict[str, float]:
    """Size of each rule's smallest derivation (math.inf if it cannot finish): a fixpoint, since
    a rule's cost depends on the rules it refers to."""
    costs: dict[str, float] = dict.fromkeys(rules, math.inf)
    changed = True
    while changed:
        changed = False
        for name, node in rules.items():
            cost = 1 + node_cost(node, costs)
            if cost < costs[name]:
                costs[name] = cost
                changed = True
    return costs


def node_cost(node: gast.Node, costs: Mapping[str, float]) -> float:
    if isinstance(node, gast.Literal):
        return len(node.codepoints)
    if isinstance(node, (gast.CharClass, gast.AnyChar)):
        return 1 if class_ranges(node) else math.inf
    if isinstance(node, gast.TokenRef):
        return math.inf
    if isinstance(node, gast.RuleRef):
        return costs[node.name]
    if isinstance(node, gast.Sequence):
        return sum((node_cost(item, costs) for item in node.items), 0.0)
    if isinstance(node, gast.Alternation):
        return min(node_cost(item, costs) for item in node.items)
    if isinstance(node, gast.Repeat):
        return 0 if node.min == 0 else node.min * node_cost(node.item, costs)
    raise TypeError(f"not a grammar node: {node!r}")


def _class_member(draw: Draw, node: gast.CharClass | gast.AnyChar) -> int:
    """A scalar value the class matches: often an interesting character or a range end."""
    ranges = class_ranges(node)
    if not ranges:  # only surrogates, or the negation of everything: node_cost avoids these
        raise ValueError(f"no scalar value matches {node!r}")
    special = [ord(c) for c in INTERESTING_CHARS] + [c for r in ranges for c in r]
    special = sorted({c for c in special if any(lo <= c <= hi for lo, hi in ranges)})
    anywhere = st.sampled_from(ranges).flatmap(lambda r: st.integers(r[0], r[1]))
    return int(draw(st.one_of(st.sampled_from(special), anywhere)))


@st.composite
def _derive(draw: Draw, rules: Mapping[str, gast.Node], root: str, budget: int) -> str:
    costs = min_costs(rules)
    if costs[root] == math.inf:
        raise ValueError(f"rule {root!r} has no finite derivation")
    steps = [budget]  # rule expansions and repetitions left before we only take shortest paths

    def gen(node: gast.Node) -> str:
        if isinstance(node, gast.Literal):
            return "".join(map(chr, node.codepoints))
        if isinstance(node, (gast.CharClass, gast.AnyChar)):
            return chr(_class_member(draw, node))
        if isinstance(node, gast.RuleRef):
            steps[0] -= 1
            return gen(rules[node.name])
        if isinstance(node, gast.Sequence):
            return "".join(gen(item) for item in node.items)
        if isinstance(node, gast.Alternation):
            finite = [item for item in node.items if node_cost(item, costs) < math.inf]
            if steps[0] <= 0:
                return gen(min(finite, key=lambda item: node_cost(item, costs)))
            return gen(draw(st.sampled_from(finite)))
        if isinstance(node, gast.Repeat):
            count = node.min
            if steps[0] > 0 and node_cost(node.item, costs) < math.inf:
                top = node.min + 3 if node.max is None else min(node.max, node.min + 4)
                count = draw(st.integers(node.min, top))
                steps[0] -= count - node.min
            return "".join(gen(node.item) for _ in range(count))
        raise TypeError(f"cannot derive text from {node!r}")

    return gen(rules[root])


def sentences(
    rules: Mapping[str, gast.Node], root: str, budget: int = 12
) -> st.SearchStrategy[bytes]:
    """Random sentences of the grammar as UTF-8 bytes: a random derivation that, once ``budget``
    rule expansions and extra repetitions are spent, only takes the cheapest choices (whose cost
    strictly decreases along rule references, so it always ends)."""
    return _derive(rules, root, budget).map(lambda text: text.encode("utf-8"))


_INTERESTING_BYTES = st.sampled_from(
    [0x00, 0x22, 0x5C, 0x61, 0x7F, 0x80, 0xA9, 0xBF, 0xC0, 0xC3, 0xE0, 0xED, 0xF0, 0xF4, 0xFF]
)


@st.composite
def mutations(draw: Draw, data: bytes) -> bytes:
    """``data`` after one byte-level edit: insert, delete or replace a byte, truncate, or splice
    (cut out or duplicate a slice). Often not a sentence any more, often not even UTF-8."""
    byte = st.one_of(_INTERESTING_BYTES, st.integers(0, 255))
    ops = ["insert", "truncate"] + (["delete", "replace", "splice"] if data else [])
    op = draw(st.sampled_from(ops))
    i = draw(st.integers(0, len(data)))
    if op == "insert":
        return data[:i] + bytes([draw(byte)]) + data[i:]
    if op == "truncate":
        return data[:i]
    i = min(i, len(data) - 1)
    if op == "delete":
        return data[:i] + data[i + 1 :]
    if op == "replace":
        return data[:i] + bytes([draw(byte)]) + data[i + 1 :]
    j = draw(st.integers(i, len(data)))
    if draw(st.booleans()):
        return data[:i] + data[j:]
    return data[:j] + data[i:j] + data[j:]


# -- GBNF text -----------------------------------------------------------------------------------


_PERCENT = st.integers(0, 99)
_COMMENTS = st.text(alphabet=' "[]()|#\\é日x:=', max_size=8)


@functools.cache
def _index(n: int) -> st.SearchStrategy[int]:
    return st.integers(0, n - 1)


class _Writer:
    """Renders AST nodes as GBNF. With ``draw`` None it writes one plain spelling; with a
    hypothesis ``draw`` it picks among equivalent spellings (escapes, spacing, comments,
    newlines where GBNF allows them, redundant parentheses, repetition forms)."""

    def __init__(self, draw: Draw | None) -> None:
        self.draw = draw
        self.newline = "\r\n" if self.flip(0.25) else "\n"

    def flip(self, p: float = 0.5) -> bool:
        """True with probability ``p``; shrinks to False (the plain spelling)."""
        return self.draw is not None and self.draw(_PERCENT) >= 100 - round(100 * p)

    def pick(self, options: list[str]) -> str:
        return options[0] if self.draw is None else options[self.draw(_index(len(options)))]

    def comment(self) -> str:
        text = "comment" if self.draw is None else self.draw(_COMMENTS)
        return "#" + text

    def space(self, nested: bool) -> str:
        """Whitespace between elements; inside parentheses it may hold newlines and comments."""
        out = self.pick([" ", "  ", "\t", " \t "])
        if nested and self.flip(0.2):
            out += (self.comment() if self.flip() else "") + self.newline + self.pick(["", "  "])
        return out

    def text(self, rules: Mapping[str, gast.Node], root: str) -> str:
        lines: list[str] = []
        if self.flip(0.3):
            lines.append(self.comment())
        for name, node in rules.items():
            if self.flip(0.2):
                lines.append(self.pick(["", self.comment(), "  " + self.comment()]))
            after = self.pick([" ", "", "  "]) + (self.newline + "  " if self.flip(0.2) else "")
            body = self.top(node)
            end = "" if not self.flip(0.2) else self.pick([" ", " " + self.comment()])
            lines.append(f"{name}{self.pick([' ', '', '  '])}::={after}{body}{end}")
        text = self.newline.join(lines)
        return text + (self.newline if self.draw is None or self.flip(0.7) else "")

    def top(self, node: gast.Node) -> str:
        """A rule body. A trailing empty alternative is written ``()``: after a bare ``|`` the
        newline would continue the rule onto the next line."""
        if isinstance(node, gast.Sequence) and not node.items:
            return "()"
        if isinstance(node, gast.Alternation):
            return self.alternatives(node, nested=False)
        return self.node(node, nested=False)

    def alternatives(self, node: gast.Alternation, nested: bool) -> str:
        """``a | b | c``; an empty alternative is written as nothing or as ``()``."""
        parts = [self.alternative(item, nested) for item in node.items]
        if not nested and not parts[-1]:
            parts[-1] = "()"
        out = parts[0]
        for part in parts[1:]:
            if self.flip(0.15):  # a continuation line that starts with '|'
                out += self.newline + self.pick(["", "  "]) + "|"
            else:
                out += self.pick([" ", "", "  "]) + "|"
            if self.flip(0.2):  # a newline right after '|' is allowed even at the top level
                out += self.pick(["", " " + self.comment()]) + self.newline
            out += self.pick([" ", "", "\t"]) + part if part else self.pick(["", " "])
        return out

    def alternative(self, node: gast.Node, nested: bool) -> str:
        if isinstance(node, gast.Alternation):  # a nested alternation needs its parentheses
            return self.group(self.alternatives(node, nested=True))
        if isinstance(node, gast.Sequence) and not node.items:
            return self.pick(["", "()"])
        return self.node(node, nested)

    def group(self, inner: str) -> str:
        left = "(" + (self.newline if self.flip(0.2) else self.pick(["", " "]))
        return left + inner + self.pick(["", " "]) + ")"

    def node(self, node: gast.Node, nested: bool) -> str:
        """A node standing as a whole alternative; atoms may get redundant parentheses."""
        if isinstance(node, gast.Sequence):
            out = self.element(node.items[0], nested) if node.items else ""
            for item in node.items[1:]:
                out += self.space(nested) + self.element(item, nested)
            return out
        if isinstance(node, gast.Alternation):
            return self.group(self.alternatives(node, nested=True))
        out = self.atom(node)
        while self.flip(0.1):
            out = self.group(out)
        return out

    def element(self, node: gast.Node, nested: bool) -> str:
        """A sequence item: nested sequences (also empty ones) and alternations need parentheses."""
        if isinstance(node, gast.Alternation):
            return self.group(self.alternatives(node, nested=True))
        if isinstance(node, gast.Sequence):
            return self.group(self.node(node, nested=True))
        return self.node(node, nested)

    def atom(self, node: gast.Node) -> str:
        if isinstance(node, gast.Literal):
            return '"' + "".join(self.char(c, in_class=False) for c in node.codepoints) + '"'
        if isinstance(node, gast.CharClass):
            return self.char_class(node)
        if isinstance(node, gast.AnyChar):
            return "."
        if isinstance(node, gast.RuleRef):
            return node.name
        if isinstance(node, gast.Repeat):
            return self.repeat(node)
        if isinstance(node, gast.TokenRef):
            bang = "!" if node.negated else ""
            if node.token_id is not None:
                return f"{bang}<[{self.pick(['', '0', '00'])}{node.token_id}]>"
            return f"{bang}{node.text}"
        raise TypeError(f"cannot render {node!r}")

    def char_class(self, node: gast.CharClass) -> str:
        out = "[^" if node.negated else "["
        for lo, hi in node.ranges:
            first = self.char(lo, in_class=True, first=out[-1] == "[")
            if lo == hi and not self.flip(0.1):
                out += first
            else:
                out += first + "-" + self.char(hi, in_class=True)
        return out + "]"

    def repeat(self, node: gast.Repeat) -> str:
        """``item`` then one of the equivalent postfix forms; compound items get parentheses."""
        item = node.item
        if isinstance(item, gast.Repeat):
            inner = self.group(self.node(item, nested=True))
        else:
            inner = self.element(item, nested=True)
        m, n = node.min, node.max
        forms: list[str] = []
        if (m, n) in ((0, None), (1, None), (0, 1)):
            forms.append({(0, None): "*", (1, None): "+", (0, 1): "?"}[(m, n)])
        if n is None:
            forms.append(f"{{{m},}}")
        else:
            forms += [f"{{{m}}}"] if m == n else []
            forms += [f"{{{m},{n}}}"] + ([f"{{,{n}}}"] if m == 0 else [])
        form = self.pick(forms)
        if form.startswith("{") and self.flip(0.2):
            form = form.replace(",", " , ").replace("{", "{ ").replace("}", " }")
        return inner + self.pick(["", "", " "]) + form

    def char(self, cp: int, in_class: bool, first: bool = False) -> str:
        """One code point inside "..." or [...]: raw when that is unambiguous, else escaped."""
        escapes = {0x0A: "\\n", 0x09: "\\t", 0x0D: "\\r", 0x5C: "\\\\", 0x22: '\\"', 0x5B: "\\["}
        escapes |= {0x5D: "\\]", 0x2D: "\\-"}
        must_escape = {0x0A, 0x09, 0x0D, 0x5C} | ({0x5D, 0x2D} if in_class else {0x22})
        options: list[str] = []
        if cp not in must_escape and 0x20 <= cp != 0x7F and not (in_class and first and cp == 0x5E):
            options.append(chr(cp))
        if cp in escapes:
            options.append(escapes[cp])
        if cp < 0x100:
            options.append(self.pick([f"\\x{cp:02x}", f"\\x{cp:02X}"]))
        if cp < 0x10000:
            options.append(self.pick([f"\\u{cp:04x}", f"\\u{cp:04X}"]))
        options.append(f"\\U{cp:08X}")
        return self.pick(options)


def to_gbnf_text(rules: Mapping[str, gast.Node], root: str, draw: Draw | None = None) -> str:
    """GBNF text for ``rules`` (``root`` is only checked to be a rule: GBNF text does not name
    its root). Without ``draw``: one plain spelling; with a hypothesis ``draw``: a random,
    deliberately non-canonical one that parses to the same tree."""
    if root not in rules:
        raise ValueError(f"root rule {root!r} is not defined")
    return _Writer(draw).text(rules, root)


@st.composite
def gbnf_texts(draw: Draw, rules: Mapping[str, gast.Node], root: str) -> str:
    """Strategy form of :func:`to_gbnf_text` with random spelling."""
    return to_gbnf_text(rules, root, draw)


def spelled_grammars(
    max_rules: int = 5, max_depth: int = 4, tokens: bool = True
) -> st.SearchStrategy[tuple[str, str]]:
    """``(gbnf_text, root)``: a random grammar (:func:`grammars`) in a random spelling."""
    return grammars(max_rules=max_rules, max_depth=max_depth, tokens=tokens).flatmap(
        lambda g: gbnf_texts(*g).map(lambda text: (text, g[1]))
    )


@st.composite
def atom_grammars(
    draw: Draw,
    atoms: list[str],
    suffixes: list[str],
    names: tuple[str, ...],
    max_items: int = 3,
    ending: str | None = None,
) -> str:
    """GBNF text: rules ``names`` (the first is the root), each a choice of 1-3 alternatives of
    up to ``max_items`` of ``atoms`` (GBNF snippets, rule names among them: any references,
    cycles, unreachable and self-referencing rules), each in parentheses with one of
    ``suffixes``. ``ending``: an alternative every rule gets besides 0-3 drawn ones (so that every
    rule can end), in a drawn position."""
    lines = []
    for name in names:
        alternatives = [] if ending is None else [ending]
        for _ in range(draw(st.integers(1 if ending is None else 0, 3))):
            items = draw(st.lists(st.sampled_from(atoms), max_size=max_items))
            parts = [f"({atom}){draw(st.sampled_from(suffixes))}" for atom in items]
            alternatives.append(" ".join(parts) or '""')
        lines.append(f"{name} ::= {' | '.join(draw(st.permutations(alternatives)))}")
    return "\n".join(lines) + "\n"


@st.composite
def grammar_cases(
    draw: Draw, max_rules: int = 4, max_depth: int = 3
) -> tuple[Rules, str, str, bytes]:
    """``(rules, root, gbnf_text, sentence)``: a random grammar, a random spelling of it (parse
    with ``Grammar.from_gbnf(gbnf_text, root=root)``) and one of its sentences."""
    rules, root = draw(grammars(max_rules=max_rules, max_depth=max_depth))
    return rules, root, draw(gbnf_texts(rules, root)), draw(sentences(rules, root))


__all__ = [
    "INTERESTING_CHARS",
    "atom_grammars",
    "char_classes",
    "gbnf_texts",
    "grammar_cases",
    "grammars",
    "literals",
    "min_costs",
    "mutations",
    "node_cost",
    "rule_names",
    "sentences",
    "to_gbnf_text",
    "token_refs",
]
