"""Code-point sets printed as the JSON-escaped text that encodes them inside a JSON string.

A character ``c`` of a JSON string can be written raw (unless it is ``"``, ``\\`` or a control
character), as a short escape (``\\n``, ``\\"``, ``\\/``...), or as ``\\uXXXX`` (any case of hex
digits; characters above U+FFFF as a surrogate pair). The grammars here accept every such
spelling of every character in the set, and nothing else: lone surrogate escapes are rejected so
that a decoded string always has a well-defined length.
"""

from __future__ import annotations

from ..regex import tree
from ..regex.tree import Ranges

_SHORT_ESCAPES = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r"}
_SHORT_ESCAPES[0x09] = "t"
_NOT_RAW: Ranges = tree.normalize([(0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C), (0xD800, 0xDFFF)])
_SURROGATES: Ranges = ((0xD800, 0xDFFF),)
_BMP: Ranges = ((0, 0xFFFF),)


def _hex_digit_class(lo: int, hi: int) -> str:
    """A GBNF class for the hex digits lo..hi (0..15), both cases."""
    if lo == hi and lo <= 9:
        return f'"{lo}"'
    parts = []
    if lo <= 9:
        a, b = lo, min(hi, 9)
        parts.append(str(a) if a == b else f"{a}-{b}")
    if hi >= 10:
        a, b = max(lo, 10) - 10, hi - 10
        for base in ("a", "A"):
            x, y = chr(ord(base) + a), chr(ord(base) + b)
            parts.append(x if x == y else f"{x}-{y}")
    if lo == 0 and hi == 15:
        return "[0-9a-fA-F]"
    return "[" + "".join(parts) + "]"


def hex_range(lo: int, hi: int, width: int) -> list[str]:
    """Alternatives (each a space-separated sequence of digit classes) for the ``width``-digit
    hexadecimal numbers from ``lo`` to ``hi`` inclusive."""
    if width == 0:
        return [""]
    unit = 16 ** (width - 1)
    lo_d, lo_r = divmod(lo, unit)
    hi_d, hi_r = divmod(hi, unit)
    if lo_d == hi_d:
        head = _hex_digit_class(lo_d, lo_d)
        return [(head + " " + t).strip() for t in hex_range(lo_r, hi_r, width - 1)]
    out: list[str] = []
    first, last = lo_d, hi_d
    if lo_r != 0:
        head = _hex_digit_class(lo_d, lo_d)
        out += [(head + " " + t).strip() for t in hex_range(lo_r, unit - 1, width - 1)]
        first += 1
    if hi_r != unit - 1:
        last -= 1
    if first <= last:
        tail = " ".join(["[0-9a-fA-F]"] * (width - 1))
        out.append((_hex_digit_class(first, last) + " " + tail).strip())
    if hi_r != unit - 1:
        head = _hex_digit_class(hi_d, hi_d)
        out += [(head + " " + t).strip() for t in hex_range(0, hi_r, width - 1)]
    return out


def _alts(options: list[str]) -> str:
    return options[0] if len(options) == 1 else "(" + " | ".join(options) + ")"


def _u_escapes(ranges: Ranges) -> list[str]:
    """``\\uXXXX`` spellings of the code points in ``ranges``."""
    out: list[str] = []
    for lo, hi in tree.subtract(tree.intersect(ranges, _BMP), _SURROGATES):
        out.append('"\\\\u" ' + _alts(hex_range(lo, hi, 4)))
    for lo, hi in tree.intersect(ranges, ((0x10000, tree.MAX_CODEPOINT),)):
        out += _pair_escapes(lo, hi)
    return out


def _pair_escapes(lo: int, hi: int) -> list[str]:
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
        high = _alts(hex_range(0xD800 + a, 0xD800 + b, 4))
        low = _alts(hex_range(0xDC00 + c, 0xDC00 + d, 4))
        out.append(f'"\\\\u" {high} "\\\\u" {low}')
    return out


def json_chars_gbnf(ranges: Ranges) -> str:
    """A GBNF expression for one character from ``ranges`` as written inside a JSON string."""
    options: list[str] = []
    raw = tree.subtract(ranges, _NOT_RAW)
    if raw:
        options.append(tree.raw_chars_gbnf(raw))
    for cp, letter in sorted(_SHORT_ESCAPES.items()):
        if tree.contains(ranges, cp):
            options.append(tree.literal_gbnf("\\" + letter))
    options += _u_escapes(ranges)
    if not options:
        raise ValueError("empty character set")
    return options[0] if len(options) == 1 else " | ".join(options)


ANY_JSON_CHAR: Ranges = ((0, tree.MAX_CODEPOINT),)
