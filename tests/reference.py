"""A slow, plainly written Earley recognizer: the test oracle for the byte-level matcher.

Everything here favours being obviously correct over being fast. The grammar (``rules``: rule
name -> :mod:`gbnf_sampler.syntax` node) is first flattened into a context-free grammar whose
productions are tuples of symbols; a symbol is either a nonterminal (a ``str``) or a
:class:`Terminal` (a set of Unicode scalar values, i.e. one code point). The input bytes are
decoded strictly as UTF-8 and recognized code point by code point with Earley's algorithm.

Semantics (GBNF matches code points, the matcher under test matches bytes):

* ``Literal``: its code points in order; ``CharClass``: one code point in (or, negated, outside)
  the union of its ranges; ``AnyChar``: any code point; ``Repeat(item, m, n)``: ``item`` m..n
  times (``n`` None: unbounded); ``TokenRef``: never matches text.
* Only Unicode scalar values (0..0x10FFFF minus the surrogates D800-DFFF) can ever be matched:
  strict UTF-8 cannot encode a surrogate, so an input containing one is simply rejected, and a
  class or literal naming a surrogate can never match.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from gbnf_sampler import syntax as gast

MAX_CODEPOINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)

# UTF-8 by sequence length L (index L - 1): the payload bits of the lead byte, and the code point
# range that must be encoded with exactly L bytes (anything smaller would be an overlong form).
_LEAD_MASK = (0x7F, 0x1F, 0x0F, 0x07)
_LENGTH_RANGE = ((0x0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, MAX_CODEPOINT))

Ranges = tuple[tuple[int, int], ...]


def _normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sorted, merged, disjoint ranges of scalar values (surrogates and > U+10FFFF removed)."""
    pieces: list[tuple[int, int]] = []
    for lo, hi in ranges:
        lo, hi = max(lo, 0), min(hi, MAX_CODEPOINT)
        # Cut out the surrogate block: at most two pieces remain.
        for a, b in ((lo, min(hi, SURROGATES[0] - 1)), (max(lo, SURROGATES[1] + 1), hi)):
            if a <= b:
                pieces.append((a, b))
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(pieces):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def _complement(ranges: Ranges) -> Ranges:
    """The scalar values not in ``ranges`` (which must already be normalized)."""
    gaps: list[tuple[int, int]] = []
    start = 0
    for lo, hi in ranges:
        if start < lo:
            gaps.append((start, lo - 1))
        start = hi + 1
    gaps.append((start, MAX_CODEPOINT))
    return _normalize(gaps)


def class_ranges(node: gast.CharClass | gast.AnyChar) -> Ranges:
    """The scalar values one ``CharClass`` or ``AnyChar`` matches, as normalized ranges."""
    if isinstance(node, gast.AnyChar):
        return _normalize([(0, MAX_CODEPOINT)])
    ranges = _normalize(node.ranges)
    return _complement(ranges) if node.negated else ranges


@dataclass(frozen=True)
class Terminal:
    """Matches exactly one code point from ``ranges`` (normalized scalar-value ranges).

    An empty terminal never matches (a negated class covering everything, a surrogate literal, or
    a TokenRef, which is not text)."""

    ranges: Ranges

    def intersects(self, other: Ranges) -> bool:
        return any(a <= d and c <= b for a, b in self.ranges for c, d in other)


Symbol = Terminal | str


class Item(NamedTuple):
    """Earley item: production ``prod`` with ``dot`` symbols recognized, starting at ``origin``."""

    prod: int
    dot: int
    origin: int


class _Flattener:
    """Turns AST nodes into productions. Helper nonterminals are named ``<n>``: a name that no
    GBNF rule can have (rule names are letters, digits, '-' and '_'), so they never collide."""

    def __init__(self, rules: Mapping[str, gast.Node]) -> None:
        self.rules = rules
        self.productions: list[tuple[str, tuple[Symbol, ...]]] = []
        self.helpers = 0

    def new_name(self) -> str:
        self.helpers += 1
        return f"<{self.helpers}>"

    def fresh(self, alternatives: Iterable[tuple[Symbol, ...]]) -> str:
        """A new helper nonterminal with the given productions."""
        name = self.new_name()
        for rhs in alternatives:
            self.productions.append((name, rhs))
        return name

    def node(self, node: gast.Node) -> tuple[Symbol, ...]:
        """The symbol string that derives exactly the language of ``node``."""
        if isinstance(node, gast.Literal):
            return tuple(Terminal(_normalize([(c, c)])) for c in node.codepoints)
        if isinstance(node, (gast.CharClass, gast.AnyChar)):
            return (Terminal(class_ranges(node)),)
        if isinstance(node, gast.TokenRef):
            return (Terminal(()),)
        if isinstance(node, gast.RuleRef):
            if node.name not in self.rules:
                raise ValueError(f"undefined rule {node.name!r}")
            return (node.name,)
        if isinstance(node, gast.Sequence):
            return tuple(sym for item in node.items for sym in self.node(item))
        if isinstance(node, gast.Alternation):
            return (self.fresh([self.node(item) for item in node.items]),)
        if isinstance(node, gast.Repeat):
            return self.repeat(node)
        raise TypeError(f"not a grammar node: {node!r}")

    def repeat(self, node: gast.Repeat) -> tuple[Symbol, ...]:
        """``item{m,n}`` = m copies of ``item`` then an optional tail. The tail is ``S -> | item
        S`` when unbounded, else a chain ``T_j -> | item T_(j-1)`` of n - m optional copies (linear
        in n, so large bounds stay cheap)."""
        if node.min < 0 or (node.max is not None and node.max < node.min):
            raise ValueError(f"bad repetition bounds {{{node.min},{node.max}}}")
        item = self.fresh([self.node(node.item)])
        if node.max is None:
            star = self.new_name()
            self.productions += [(star, ()), (star, (item, star))]
            return (item,) * node.min + (star,)
        tail: tuple[Symbol, ...] = ()
        for _ in range(node.max - node.min):
            tail = (self.fresh([(), (item, *tail)]),)
        return (item,) * node.min + tail


def prefix_ranges(chunk: bytes) -> Ranges:
    """The scalar values whose UTF-8 encoding starts with ``chunk`` (1 to 4 bytes).

    UTF-8 keeps the code point's bits in order, so the known bits ``v`` fix a contiguous block
    ``[v << r, (v << r) | (2**r - 1)]`` (``r`` = unknown bits); intersecting it with the range the
    sequence length may encode removes overlong forms and values past U+10FFFF. Empty means no
    valid encoding starts with ``chunk``. A complete sequence gives its single code point."""
    if not chunk:
        raise ValueError("empty chunk")
    lead = chunk[0]
    length = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    if 0x80 <= lead < 0xC0 or lead > 0xF7 or len(chunk) > length:
        return ()
    if any(not 0x80 <= b <= 0xBF for b in chunk[1:]):
        return ()
    value = lead & _LEAD_MASK[length - 1]
    for b in chunk[1:]:
        value = (value << 6) | (b & 0x3F)
    unknown = 6 * (length - len(chunk))
    lo, hi = value << unknown, (value << unknown) | ((1 << unknown) - 1)
    min_cp, max_cp = _LENGTH_RANGE[length - 1]
    lo, hi = max(lo, min_cp), min(hi, max_cp)
    return _normalize([(lo, hi)]) if lo <= hi else ()


def split_utf8(data: bytes) -> tuple[list[int], bytes] | None:
    """Splits ``data`` into its complete code points and an incomplete tail (0 to 3 bytes that
    start a multi-byte sequence). None when the complete part is not strict UTF-8. The tail
    itself is not validated here (see :func:`prefix_ranges`)."""
    cut = len(data)
    for i in range(max(0, len(data) - 3), len(data)):
        if data[i] >= 0xC0:  # the last lead byte within reach of the end
            need = 2 if data[i] < 0xE0 else 3 if data[i] < 0xF0 else 4
            cut = i if len(data) - i < need else len(data)
    try:
        # Python's strict codec rejects overlong forms, surrogates and values past U+10FFFF.
        text = bytes(data[:cut]).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return [ord(ch) for ch in text], bytes(data[cut:])


class Reference:
    """Earley recognizer for one grammar: exact answers to "is this a sentence / a viable prefix".

    Construction keeps only productive productions (those whose symbols can all derive some
    finite string of code points). That leaves the language unchanged, and it makes every Earley
    item completable, so "the Earley set after the input is non-empty" is exactly "the input is a
    viable prefix" even if some rule could never finish (e.g. it needs a TokenRef)."""

    def __init__(self, rules: Mapping[str, gast.Node], root: str) -> None:
        if root not in rules:
            raise ValueError(f"root rule {root!r} is not defined")
        flat = _Flattener(rules)
        for name, node in rules.items():
            flat.productions.append((name, flat.node(node)))
        self.root = root
        self.productions = _productive_only(flat.productions)
        self.by_lhs: dict[str, list[int]] = {}
        for index, (lhs, _) in enumerate(self.productions):
            self.by_lhs.setdefault(lhs, []).append(index)
        self.nullable = _nullable(self.productions)
        start = self._close({Item(p, 0, 0) for p in self.by_lhs.get(root, [])}, 0, [])
        self._known: dict[tuple[int, ...], list[set[Item]]] = {(): [start]}  # input -> sets

    @classmethod
    def from_grammar(cls, grammar: Any) -> Reference:
        """From a ``gbnf_sampler.Grammar`` (anything with ``.rules`` and ``.root``)."""
        return cls(grammar.rules, grammar.root)

    # -- the public questions --------------------------------------------------------------------

    def accepts(self, data: bytes) -> bool:
        """``data`` is strict UTF-8 and its code points form a sentence of the root rule."""
        split = split_utf8(data)
        if split is None or split[1]:
            return False
        last = self._earley(split[0])[-1]
        return any(
            item.origin == 0 and self._next(item) is None and self._lhs(item) == self.root
            for item in last
        )

    can_terminate = accepts

    def is_viable_prefix(self, data: bytes) -> bool:
        """Some continuation of ``data`` is a sentence. An incomplete UTF-8 tail counts when some
        code point it can still become is expected next."""
        split = split_utf8(data)
        if split is None:
            return False
        codepoints, tail = split
        last = self._earley(codepoints)[-1]
        if not tail:
            return bool(last)
        return self._expects(last, prefix_ranges(tail))

    def next_bytes(self, data: bytes) -> frozenset[int]:
        """The bytes ``b`` for which ``data + b`` is still a viable prefix."""
        split = split_utf8(data)
        if split is None:
            return frozenset()
        codepoints, tail = split
        last = self._earley(codepoints)[-1]
        return frozenset(
            b for b in range(256) if self._expects(last, prefix_ranges(tail + bytes([b])))
        )

    def forced_next(self, data: bytes) -> bytes:
        """The longest byte string every sentence extending ``data`` continues with: grown one
        byte at a time while exactly one next byte is possible and the input cannot end there.
        It is finite because some sentence extends ``data`` and that sentence is finite."""
        if not self.is_viable_prefix(data):
            raise ValueError(f"not a viable prefix: {data!r}")
        forced = bytearray()
        while not self.accepts(bytes(data) + forced):
            options = self.next_bytes(bytes(data) + forced)
            if len(options) != 1:
                break
            forced.append(next(iter(options)))
        return bytes(forced)

    # -- Earley's algorithm ----------------------------------------------------------------------

    def _lhs(self, item: Item) -> str:
        return self.productions[item.prod][0]

    def _next(self, item: Item) -> Symbol | None:
        """The symbol after the dot, or None when the item is complete."""
        rhs = self.productions[item.prod][1]
        return rhs[item.dot] if item.dot < len(rhs) else None

    def _expects(self, items: set[Item], ranges: Ranges) -> bool:
        """Some item of the set can scan a code point from ``ranges``. Every symbol is productive,
        so the set after that scan is non-empty and hence viable."""
        return any(
            isinstance(sym, Terminal) and sym.intersects(ranges) for sym in map(self._next, items)
        )

    def _earley(self, codepoints: list[int]) -> list[set[Item]]:
        """The Earley sets S_0..S_n; stops early (with an empty last set) once a set is empty.

        Tests ask about every prefix of an input in turn, so the sets of earlier calls are kept
        and the longest known prefix is extended (sets are never modified once built, so sharing
        them is safe)."""
        key = tuple(codepoints)
        done = next(j for j in range(len(key), -1, -1) if key[:j] in self._known)
        sets = list(self._known[key[:done]])
        for k in range(done, len(key)):
            if not sets[-1]:
                break
            scanned = {
                Item(item.prod, item.dot + 1, item.origin)
                for item in sets[k]
                if isinstance(sym := self._next(item), Terminal)
                and sym.intersects(((key[k],) * 2,))
            }
            sets.append(self._close(scanned, k + 1, sets))
        if len(self._known) > 1000:  # bound the memory; S_0 stays
            self._known = {(): self._known[()]}
        self._known[key] = sets
        return sets

    def _close(self, kernel: set[Item], k: int, earlier: list[set[Item]]) -> set[Item]:
        """Closes S_k under prediction and completion with a worklist.

        The classic trap is a nullable nonterminal B: its completed item [B -> ., k] may be
        processed before some other item of S_k that waits on B appears, which would then never
        advance. Aycock & Horspool's fix: when predicting a nullable B, also advance the predicting
        item over B right away. (B is nullable exactly when S_k would contain a completed B item
        with origin k, so this adds precisely the missing items.)"""
        current = set(kernel)
        work = list(kernel)
        while work:
            item = work.pop()
            sym = self._next(item)
            new: list[Item] = []
            if sym is None:  # completion: advance every item of S_origin waiting on our lhs
                lhs = self._lhs(item)
                parents = current if item.origin == k else earlier[item.origin]
                new = [
                    Item(p.prod, p.dot + 1, p.origin) for p in list(parents) if self._next(p) == lhs
                ]
            elif isinstance(sym, str):  # prediction
                new = [Item(p, 0, k) for p in self.by_lhs.get(sym, [])]
                if sym in self.nullable:
                    new.append(Item(item.prod, item.dot + 1, item.origin))
            for candidate in new:
                if candidate not in current:
                    current.add(candidate)
                    work.append(candidate)
        return current


Production = tuple[str, tuple[Symbol, ...]]


def _productive_only(productions: list[Production]) -> list[Production]:
    """Drops every production that uses an unproductive symbol (an empty terminal or a
    nonterminal that cannot derive any finite string). Fixpoint: a nonterminal is productive once
    one of its productions has only productive symbols."""

    def ok(sym: Symbol, productive: set[str]) -> bool:
        return bool(sym.ranges) if isinstance(sym, Terminal) else sym in productive

    productive: set[str] = set()
    changed = True
    while changed:
        changed = False
        for lhs, rhs in productions:
            if lhs not in productive and all(ok(sym, productive) for sym in rhs):
                productive.add(lhs)
                changed = True
    return [(lhs, rhs) for lhs, rhs in productions if all(ok(s, productive) for s in rhs)]


def _nullable(productions: list[Production]) -> set[str]:
    """Nonterminals that derive the empty string (fixpoint; terminals are never nullable)."""
    nullable: set[str] = set()
    changed = True
    while changed:
        changed = False
        for lhs, rhs in productions:
            if lhs not in nullable and all(isinstance(s, str) and s in nullable for s in rhs):
                nullable.add(lhs)
                changed = True
    return nullable


__all__ = ["Reference", "Terminal", "class_ranges", "prefix_ranges", "split_utf8"]
