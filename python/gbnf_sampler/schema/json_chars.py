"""Code-point sets printed as the JSON-escaped text that encodes them inside a JSON string.

A character ``c`` of a JSON string can be written raw (unless it is ``"``, ``\\`` or a control
character), as a short escape (``\\n``, ``\\"``, ``\\/``...), or as ``\\uXXXX`` (any case of hex
digits; characters above U+FFFF as a surrogate pair). The grammars here accept every such
spelling of every character in the set, and nothing else: lone surrogate escapes are rejected so
that a decoded string always has a well-defined length.
"""

from __future__ import annotations

import functools

from ..regex import tree
from ..regex.tree import Ranges

_SHORT_ESCAPES = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r"}
_SHORT_ESCAPES[0x09] = "t"
_NOT_RAW: Ranges = tree.normalize([(0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C), (0xD800, 0xDFFF)])
_SURROGATES: Ranges = ((0xD800, 0xDFFF),)
_BMP: Ranges = ((0, 0xFFFF),)


def _hex_digit_class(digits: list[int]) -> str:
    """GBNF for one hex digit with one of these values (0..15), either case of a-f."""
    chars = []
    for d in digits:
        chars += [ord("0") + d] if d < 10 else [ord("a") + d - 10, ord("A") + d - 10]
    return tree.class_gbnf(tree.normalize([(c, c) for c in chars]))


@functools.lru_cache(maxsize=8192)  # rests repeat within a set and across sets
def hex_set(ranges: Ranges, width: int) -> tuple[str, ...]:
    """Alternatives (each a sequence of digit classes, nested in parentheses) for the
    ``width``-digit hexadecimal numbers in ``ranges`` (sorted, disjoint, non-empty, below
    16**width), written as a trie: first digits that lead to the same set of rests share one
    class and one rest, so a set with a few holes stays a few states per digit."""
    unit = 16 ** (width - 1)
    per_digit: list[list[tuple[int, int]]] = [[] for _ in range(16)]
    full = (0, unit - 1)
    for lo, hi in ranges:
        first, last = lo // unit, hi // unit
        if first == last:
            per_digit[first].append((lo - first * unit, hi - first * unit))
            continue
        per_digit[first].append((lo - first * unit, unit - 1))
        for digit in range(first + 1, last):
            per_digit[digit].append(full)
        per_digit[last].append((0, hi - last * unit))
    rests: dict[Ranges, list[int]] = {}  # the rest's set -> first digits leading to it
    for digit, rest in enumerate(per_digit):
        if rest:
            rests.setdefault(tuple(rest), []).append(digit)
    out = []
    for rest_set, digits in rests.items():
        head = _hex_digit_class(digits)
        if width == 1:
            out.append(head)
        elif rest_set == (full,):
            out.append(" ".join([head] + ["[0-9a-fA-F]"] * (width - 1)))
        else:
            out.append(head + " " + _alts(list(hex_set(rest_set, width - 1))))
    return tuple(out)


def _alts(options: list[str]) -> str:
    return options[0] if len(options) == 1 else "(" + " | ".join(options) + ")"


def _u_escape_tails(ranges: Ranges) -> list[str]:
    """``\\uXXXX`` spellings of the code points in ``ranges``, each without its leading
    ``\\u`` (so that one ``"\\u"`` can lead them all)."""
    out: list[str] = []
    bmp = tree.subtract(tree.intersect(ranges, _BMP), _SURROGATES)
    if bmp:
        out += hex_set(bmp, 4)
    for lo, hi in tree.intersect(ranges, ((0x10000, tree.MAX_CODEPOINT),)):
        out += _pair_escape_tails(lo, hi)
    return out


def _pair_escape_tails(lo: int, hi: int) -> list[str]:
    hi_lo, lo_lo = divmod(lo - 0x10000, 0x400)
    hi_hi, lo_hi = divmod(hi - 0x10000, 0x400)
    spans = []
    if hi_lo == hi_hi:
        spans.append((hi_lo, hi_lo, lo_lo, lo_hi))
    else:
        first = hi_lo if lo_lo == 0 else hi_lo + 1
        last = hi_hi if lo_hi == 0x3FF else hi_hi - 1
        if lo_lo != 0:
            spans.append((hi_lo, hi_lo, lo_lo, 0x3FF))
        if first <= last:
            spans.append((first, last, 0, 0x3FF))
        if lo_hi != 0x3FF:
            spans.append((hi_hi, hi_hi, 0, lo_hi))
    out: list[str] = []
    for a, b, c, d in spans:
        high = _alts(list(hex_set(((0xD800 + a, 0xD800 + b),), 4)))
        low = _alts(list(hex_set(((0xDC00 + c, 0xDC00 + d),), 4)))
        out.append(f'{high} "\\\\u" {low}')
    return out


@functools.lru_cache(maxsize=4096)  # the same sets recur across schemas (keys, formats)
def json_chars_gbnf(ranges: Ranges) -> str:
    """A GBNF expression for one character from ``ranges`` as written inside a JSON string."""
    options: list[str] = []
    raw = tree.subtract(ranges, _NOT_RAW)
    if raw:
        options.append(tree.raw_chars_gbnf(raw))
    # Every escape under one backslash, and every \u escape under one "u": the same language,
    # a much smaller automaton (schema grammars hold hundreds of such sets, inlined at each use).
    after_backslash: list[str] = []
    letters = [ord(letter) for cp, letter in _SHORT_ESCAPES.items() if tree.contains(ranges, cp)]
    if letters:
        after_backslash.append(tree.raw_chars_gbnf(tree.normalize([(c, c) for c in letters])))
    hex_tails = _u_escape_tails(ranges)
    if hex_tails:
        after_backslash.append('"u" ' + _alts(hex_tails))
    if after_backslash:
        options.append('"\\\\" ' + _alts(after_backslash))
    if not options:
        raise ValueError("empty character set")
    return options[0] if len(options) == 1 else " | ".join(options)


ANY_JSON_CHAR: Ranges = ((0, tree.MAX_CODEPOINT),)
