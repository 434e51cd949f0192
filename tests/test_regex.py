"""Regex -> grammar: tables, errors, and a differential test against Python's ``re.fullmatch``
on the dialect both share (ASCII text without ``\\r``: ``.``, ``\\s``, ``\\d``, ``\\w`` agree)."""

from __future__ import annotations

import random
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler.regex import automata, parser, regex_to_gbnf, tree
from schema_helpers import accepts

TABLE: list[tuple[str, list[str], list[str]]] = [
    ("abc", ["abc"], ["ab", "abcd", ""]),
    ("^a|b$", ["a", "b"], ["ab", ""]),
    ("a*?b+?c??", ["b", "aabbc"], ["ac", ""]),
    ("(?<year>\\d{4})-(?:0[1-9]|1[0-2])", ["2024-01", "1999-12"], ["2024-13", "24-01"]),
    ("[\\w.-]+@[^\\s@]+", ["a.b-c@x", "_@é"], ["@x", "a@ b"]),
    ("\\u00e9\\x41\\u{1F600}\\t", ["éA😀\t"], ["eA😀\t"]),
    ("[\\u0100-\\u017f]{2}", ["āſ"], ["a", "āāā"]),
    (".", ["a", "é", "😀"], ["\n", "\r", "\u2028", ""]),
    ("[^]a]", ["xa]", "\na]"], ["b", "]", "xa"]),
    ("a{2,}b{,2}", ["aab{,2}", "aaab{,2}"], ["ab{,2}", "aab"]),
    ("\\cJ\\0\\/\\-", ["\n\x00/-"], ["\n0/-"]),
    ("[\\b]\\s\\S", ["\b a", "\b\u3000x"], ["\b  "]),
    ("(a|)+", ["", "a", "aaa"], ["b"]),
    ("x{0}y", ["y"], ["xy"]),
    ("\\D\\W", ["a!"], ["1!", "aa"]),
    ("[\\d-_]+", ["1-_", "-"], ["a", ""]),
    ("\\p{Lu}\\p{Ll}+", ["Ab", "Éé", "ΣΩω"[1:]], ["ab", "A", "A1"]),
    ("[\\p{L}\\p{Nd}_-]+", ["a_1", "中文", "٣-"], ["a b", "", "!"]),
    ("\\P{L}\\p{gc=Nd}\\p{General_Category=Decimal_Number}", ["!12", " ٣4"], ["a12", "!1"]),
    ("[^\\p{Lu}]", ["a", "1"], ["A", "É"]),
]


@pytest.mark.parametrize(("pattern", "good", "bad"), TABLE)
def test_regex_table(pattern: str, good: list[str], bad: list[str]) -> None:
    grammar = gs.Grammar.from_regex(pattern)
    for text in good:
        assert accepts(grammar, text), text
    for text in bad:
        assert not accepts(grammar, text), text


def test_search_option_is_json_schema_semantics() -> None:
    grammar = regex_to_gbnf("b+", search=True)
    assert accepts(grammar, "abbc")
    assert not accepts(grammar, "ac")
    anchored = regex_to_gbnf("^b+", search=True)
    assert accepts(anchored, "bbc")
    assert not accepts(anchored, "abb")


ERRORS = [
    ("(a)\\1", 3, "backreference"),
    ("(?<=a)(?=(?<=a)b)b", 0, "lookbehind or \\b/\\B inside a lookahead"),
    ("a\\b*", 1, "quantifier after an anchor"),
    ("\\p{Script=Latin}", 0, "property"),
    ("a\\p{Alphabetic}", 1, "property"),
    ("\\pL", 0, "{Property}"),
    ("(?<=a$)b", 0, "inside a lookbehind"),
    ("[b-a]", 1, "out of order"),
    ("(ab", 0, "missing ')'"),
    ("ab)", 2, "unbalanced"),
    ("*a", 0, "nothing to repeat"),
    ("a{3,2}", 1, "out of order"),
    ("[ab", 0, "unterminated"),
    ("\\xZZ", 0, "hexadecimal"),
]


@pytest.mark.parametrize(("pattern", "position", "words"), ERRORS)
def test_regex_errors(pattern: str, position: int, words: str) -> None:
    with pytest.raises(gs.SchemaError) as info:
        regex_to_gbnf(pattern)
    assert info.value.path == ""
    assert words in info.value.message
    assert f"position {position}" in info.value.message


def test_regex_options_checked() -> None:
    with pytest.raises(TypeError):
        regex_to_gbnf("a", anchored=True)


def test_annex_b_brace_is_literal() -> None:
    assert accepts(regex_to_gbnf("a{x}"), "a{x}")
    assert accepts(regex_to_gbnf("a{1"), "a{1")


# --- differential against re.fullmatch ------------------------------------------------------------

ALPHABET = "ab0_ -.\n"
_ATOMS = [
    "a",
    "b",
    "0",
    "\\.",
    "-",
    " ",
    ".",
    "\\d",
    "\\w",
    "\\s",
    "\\D",
    "\\W",
    "\\S",
    "[ab]",
    "[^a]",
    "[a-c0]",
    "[\\d-]",
    "[^\\s]",
]
_QUANTS = ["", "", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "*?", "+?", "??", "{1,3}?"]


@st.composite
def patterns(draw: st.DrawFn, depth: int = 0) -> str:
    n_branches = draw(st.integers(1, 2 if depth < 2 else 1))
    branches = []
    for _ in range(n_branches):
        items = []
        for _ in range(draw(st.integers(0, 3))):
            if depth < 2 and draw(st.integers(0, 4)) == 0:
                group = draw(st.sampled_from(["(?:{})", "({})"]))
                atom = group.format(draw(patterns(depth + 1)))
            else:
                atom = draw(st.sampled_from(_ATOMS))
            items.append(atom + draw(st.sampled_from(_QUANTS)))
        branches.append("".join(items))
    return "|".join(branches)


def _derive(node: tree.Node, rng: random.Random) -> str:
    """A random string in the language of ``node`` (from ALPHABET where possible)."""
    if isinstance(node, tree.Chars):
        inside = [c for c in ALPHABET if tree.contains(node.ranges, ord(c))]
        return rng.choice(inside) if inside else chr(node.ranges[0][0])
    if isinstance(node, tree.Seq):
        return "".join(_derive(i, rng) for i in node.items)
    if isinstance(node, tree.Alt):
        return _derive(rng.choice(node.items), rng)
    assert isinstance(node, tree.Rep)
    hi = node.min + 3 if node.max is None else node.max
    return "".join(_derive(node.item, rng) for _ in range(rng.randint(node.min, hi)))


@settings(max_examples=150, deadline=None)
@given(patterns(), st.lists(st.text(ALPHABET, max_size=6), max_size=4), st.randoms())
def test_regex_matches_python_re(pattern: str, texts: list[str], rng: random.Random) -> None:
    grammar = regex_to_gbnf(pattern)
    node = parser.anchor(parser.parse(pattern), search=False)
    samples = list(texts) + [_derive(node, rng) for _ in range(4)]
    compiled = re.compile(pattern, re.ASCII)
    for text in samples:
        if any(ord(c) > 127 or c == "\r" for c in text):
            continue
        assert accepts(grammar, text) == (compiled.fullmatch(text) is not None), (pattern, text)


@settings(max_examples=60, deadline=None)
@given(patterns(), st.lists(st.text(ALPHABET, max_size=6), max_size=4))
def test_search_semantics_match_python_re_search(pattern: str, texts: list[str]) -> None:
    grammar = regex_to_gbnf(pattern, search=True)
    compiled = re.compile(pattern, re.ASCII)
    for text in texts:
        assert accepts(grammar, text) == (compiled.search(text) is not None), (pattern, text)


@st.composite
def anchored_patterns(draw: st.DrawFn) -> str:
    """Alternations whose branches may each be pinned with ``^`` / ``$``, nested once."""

    def branch(nested: bool, start: bool = True, end: bool = True) -> str:
        body = "".join(
            draw(st.sampled_from(_ATOMS)) + draw(st.sampled_from(_QUANTS))
            for _ in range(draw(st.integers(0, 2)))
        )
        if nested and draw(st.booleans()):
            # A group at the front may pin ``^`` inside, one at the back ``$``.
            front = draw(st.booleans())
            inner = "|".join(
                branch(False, front, not front) for _ in range(draw(st.integers(1, 3)))
            )
            body = f"({inner}){body}" if front else f"{body}({inner})"
        lead = draw(st.sampled_from(["", "^"])) if start else ""
        trail = draw(st.sampled_from(["", "$"])) if end else ""
        return lead + body + trail

    return "|".join(branch(True) for _ in range(draw(st.integers(1, 5))))


@settings(max_examples=100, deadline=None)
@given(anchored_patterns(), st.lists(st.text(ALPHABET.replace("\n", ""), max_size=6), max_size=5))
def test_search_with_pinned_and_free_branches_matches_re(pattern: str, texts: list[str]) -> None:
    """Free branches share one ``.*`` pad (see parser.strip_anchor); pinned ones keep theirs."""
    grammar = regex_to_gbnf(pattern, search=True)
    compiled = re.compile(pattern, re.ASCII)
    for text in texts:
        assert accepts(grammar, text) == (compiled.search(text) is not None), (pattern, text)


def test_search_over_many_words_stays_small() -> None:
    """An unanchored alternation of words (SchemaStore's language-code key pattern) is one
    substring search: its automaton grows with the words, not with their subsets."""
    words = "en|de|ru|pt|nl|fr|it|es|pl|zh-cn|uk|ja|ko|ar"
    node = parser.anchor(parser.parse(words), search=True)
    dfa = automata.from_regex(node)
    assert len(automata.minimize(dfa).trans) < 40
    assert len(dfa.trans) < 200
    for text in ["xxenxx", "zh-cn", "jako"]:
        assert dfa.matches(text)
    for text in ["zh-c", "e n", ""]:
        assert not dfa.matches(text)


# --- Unicode property escapes: differential against unicodedata and the regex module -------------

_PROPERTIES = ["L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "N", "Nd", "Nl", "P", "Pd", "S", "Sc"]
_PROPERTIES += ["Z", "Zs", "C", "Cc", "Letter", "Decimal_Number", "punct"]
_LONG = {"Letter": "L", "Decimal_Number": "Nd", "punct": "P"}


def _samples(rng: random.Random) -> list[str]:
    """Characters from all over the code space (planes 0-2), surrogates excluded."""
    out = []
    for _ in range(300):
        cp = rng.choice([rng.randint(0, 0x2FF), rng.randint(0, 0xFFFF), rng.randint(0, 0x2FFFF)])
        if not 0xD800 <= cp <= 0xDFFF:
            out.append(chr(cp))
    return out


@pytest.mark.parametrize("name", _PROPERTIES)
def test_property_escape_matches_unicodedata(name: str) -> None:
    category = _LONG.get(name, name)
    grammar = gs.Grammar.from_regex(f"\\p{{{name}}}")
    negated = gs.Grammar.from_regex(f"[\\P{{{name}}}]")
    for c in _samples(random.Random(name)):
        inside = unicodedata.category(c).startswith(category)
        assert accepts(grammar, c) == inside, (name, hex(ord(c)))
        assert accepts(negated, c) == (not inside), (name, hex(ord(c)))


def test_property_escapes_match_the_regex_module() -> None:
    """On code points assigned in Python's Unicode version (the regex module may be newer)."""
    regex = pytest.importorskip("regex", reason="the regex module (test extra) is not installed")
    rng = random.Random(7)
    assigned = [c for c in _samples(rng) if unicodedata.category(c) != "Cn"]
    for pattern in ["\\p{Lu}\\p{Ll}*", "[\\p{L}\\p{N}]+", "\\P{L}+", "[^\\p{P}\\p{S}]"]:
        grammar = gs.Grammar.from_regex(pattern)
        compiled = regex.compile(pattern)
        for _ in range(150):
            text = "".join(rng.choice(assigned) for _ in range(rng.randint(1, 3)))
            assert accepts(grammar, text) == (compiled.fullmatch(text) is not None), (
                pattern,
                [hex(ord(c)) for c in text],
            )
