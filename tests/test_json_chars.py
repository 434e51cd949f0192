"""One character of a code-point set, as written inside a JSON string (schema/json_chars.py):
the GBNF accepts exactly the spellings of the set's characters (raw where JSON allows it, short
escapes, \\uXXXX in either case of hex digits, surrogate pairs above U+FFFF) and nothing else,
with ``json.loads`` as the oracle."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler.regex import tree
from gbnf_sampler.schema.json_chars import ANY_JSON_CHAR, hex_set, json_chars_gbnf

# Code points near the edges that the printer splits at.
_EDGES = [0, 0x08, 0x09, 0x1F, 0x20, 0x22, 0x2F, 0x5C, 0x61, 0x7F, 0xFF, 0xD7FF, 0xE000, 0xFFFF]
_EDGES += [0x10000, 0x1F600, 0x10FFFF]
codepoints = st.one_of(
    st.sampled_from(_EDGES),
    st.integers(0, 0x7F),
    st.integers(0, 0xFFFF).filter(lambda c: not 0xD800 <= c <= 0xDFFF),
    st.integers(0x10000, 0x10FFFF),
)


def spellings(cp: int) -> list[str]:
    """Every way JSON writes the character (one case mix per \\u escape, upper and lower)."""
    out = []
    if cp >= 0x20 and cp not in (0x22, 0x5C):
        out.append(chr(cp))
    short = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x08: "b", 0x0C: "f", 0x0A: "n", 0x0D: "r"}
    short[0x09] = "t"
    if cp in short:
        out.append("\\" + short[cp])
    if cp <= 0xFFFF:
        out += [f"\\u{cp:04x}", f"\\u{cp:04X}", "\\u" + _mixed_case(f"{cp:04x}")]
    else:
        high, low = 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)
        out += [f"\\u{high:04x}\\u{low:04X}", f"\\u{high:04X}\\u{low:04x}"]
    return out


def _mixed_case(digits: str) -> str:
    return "".join(c.upper() if i % 2 else c for i, c in enumerate(digits))


def accepts(grammar: gs.Grammar, text: str) -> bool:
    m = gs.Matcher(grammar)
    return m.accept_bytes(text.encode()) and m.can_terminate()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(codepoints, st.integers(0, 300)), min_size=1, max_size=4),
    st.lists(codepoints, min_size=1, max_size=12),
)
def test_spellings_of_the_set_and_nothing_else(spans: list[tuple[int, int]], probes: list[int]):
    ranges = tree.normalize([(lo, min(lo + width, 0x10FFFF)) for lo, width in spans])
    ranges = tree.subtract(ranges, tree.SURROGATES)
    if not ranges:
        return
    grammar = gs.Grammar.from_gbnf("root ::= " + json_chars_gbnf(ranges) + "\n")
    probes += [lo for lo, _ in ranges] + [hi for _, hi in ranges]
    for cp in probes:
        for text in spellings(cp):
            assert json.loads('"' + text + '"') == chr(cp)  # the oracle agrees on the spelling
            assert accepts(grammar, text) == tree.contains(ranges, cp), (ranges, text)


def test_refused_spellings_of_any_character() -> None:
    grammar = gs.Grammar.from_gbnf("root ::= " + json_chars_gbnf(ANY_JSON_CHAR) + "\n")
    for text in ["a", "\\u00e9", "\\uD83D\\uDE00", "\\/", "\\t", "é"]:
        assert accepts(grammar, text), text
    # Raw quote, backslash and control characters; unknown escapes; lone or reversed surrogates;
    # short hex.
    for text in ['"', "\\", "\n", "\\x", "\\a", "\\uD83D", "\\uDE00", "\\uDE00\\uD83D", "\\u12"]:
        assert not accepts(grammar, text), text


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 255), st.integers(0, 40)), min_size=1, max_size=5))
def test_hex_set_is_the_numbers_of_the_set(spans: list[tuple[int, int]]) -> None:
    # Two digits: every number, in both cases and mixed, against the set itself.
    ranges = tree.normalize([(lo, min(lo + width, 255)) for lo, width in spans])
    grammar = gs.Grammar.from_gbnf("root ::= " + " | ".join(hex_set(ranges, 2)) + "\n")
    for n in range(256):
        for text in (f"{n:02x}", f"{n:02X}", _mixed_case(f"{n:02x}")):
            assert accepts(grammar, text) == tree.contains(ranges, n), (ranges, text)
