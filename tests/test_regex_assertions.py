"""Anchors anywhere, ``\\b``/``\\B``, lookbehind, and lookaheads beside them or in unbounded
repetitions (``regex.assertions``): differential tests against the ``regex`` module
(variable-width lookbehind, like ECMA-262) and Python's ``re`` on strings where their semantics
and ECMA-262's agree (ASCII text, no final newline), and unit tables. JSON Schema ``pattern``
semantics: an unanchored search."""

from __future__ import annotations

import functools
import json
import re

import pytest
import regex as regex_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler.regex import automata, tree
from gbnf_sampler.schema import schema_to_gbnf
from gbnf_sampler.schema.scalars import regex_node

TABLE = [
    # (pattern, matching strings, other strings)
    ("a^b", [], ["ab", "a^b", "b"]),
    ("(^a|b)c", ["ac", "xbc", "bc"], ["xac", "c"]),
    ("x$|^y", ["ax", "y", "yz"], ["xa", "ay"]),
    ("a$b", [], ["ab", "a"]),
    ("$^", [""], ["a"]),  # both anchors hold where nothing is before or after
    ("($^|x)y", ["xy"], ["y", "ay"]),
    ("(a|$)b", ["ab"], ["b", "cb"]),
    ("\\bfoo\\b", ["foo", "a foo.", "(foo)"], ["afoo", "foobar", "fo o"]),
    ("\\Boo\\B", ["fooa", "xoox"], ["oo", "foo", "oo x"]),
    ("^\\b$", [], ["", " "]),
    ("(?<=\\$)\\d+", ["$5", "cost $12"], ["5", "$ 5"]),
    ("(?<!-)\\b\\d+", ["12", "a 5"], ["-12"]),
    ("(?<=^|,)item", ["item", "a,item"], ["an item", ", item"]),
    ("^(?<![a-z])[a-z]+", ["abc"], ["", "1"]),
    ("(?<=ab|c)d", ["abd", "cd"], ["bd", "ad"]),
    ("(?<!ab)c", ["c", "bc", "abcc"], ["abc"]),
    ("a(?<=[a-z]{2})", ["ba"], ["a", "1a"]),
    # Long counters next to the search's ".*" (SchemaStore's .yarnrc.yml URL pattern took
    # minutes when the counter was determinized at every start position).
    (
        "[-a-z0-9@:%._~#=]{1,256}\\.[a-z0-9()]{1,6}\\b([-a-z0-9()@:%_.~#?&/=]*)",
        ["x.com", "see a.io/x", "a.b.c"],
        ["x.comm1234", "x.", "nodot", ".com"],
    ),
    ("x{3,40}\\b", ["xxx", "axxxx "], ["xx", "xx xx"]),
    # Lookaheads beside these assertions, and in unbounded repetitions: markers too.
    (
        "^(?!-)(?!.{0,6}--)[a-z0-9-]{1,6}(?<!-)$",  # SchemaStore's architect.yml, shortened
        ["a", "a-b", "a-b-c"],
        ["-a", "a-", "a--b", "abcdefg"],
    ),
    ("\\bfoo(?!bar)", ["foo", "a foo", "foobaz"], ["foobar", "afoo"]),
    ("(?<=a)(?=b)", ["ab", "xaby"], ["a", "b", "ba"]),
    ("^((?!message|severity).)*$", ["", "mess", "a severe"], ["message", "my severity"]),
    ("^(?:[a-z](?!--)|-(?!-))+$", ["a-b", "-a"], ["a--b", "--"]),
]


@functools.lru_cache(maxsize=512)
def _dfa(pattern: str) -> automata.Dfa:
    node = regex_node(pattern, "", search=True)
    dfa = node.dfa if isinstance(node, tree.Lang) else automata.from_regex(node)
    assert isinstance(dfa, automata.Dfa)
    return dfa


def _matches(pattern: str, text: str) -> bool:
    return _dfa(pattern).matches(text)


@pytest.mark.parametrize(("pattern", "good", "bad"), TABLE)
def test_assertion_table(pattern: str, good: list[str], bad: list[str]) -> None:
    for text in good:
        assert regex_module.search(pattern, text), (pattern, text)
        assert _matches(pattern, text), (pattern, text)
    for text in bad:
        assert not regex_module.search(pattern, text), (pattern, text)
        assert not _matches(pattern, text), (pattern, text)


def test_assertions_in_schemas() -> None:
    text = schema_to_gbnf({"type": "string", "pattern": "(?<=^|[ ,])tag\\b"})
    grammar = gs.Grammar.from_gbnf(text)
    for value, ok in (("tag", True), ("a tag", True), ("a,tag!", True), ("atag", False)):
        m = gs.Matcher(grammar)
        assert (m.accept_bytes(json.dumps(value).encode()) and m.can_terminate()) == ok, value


def test_unicode_word_boundary_readings() -> None:
    # "é" is a word character to Python's re, not to ECMA-262: a boundary next to it holds
    # under one reading only, so the grammar (both readings) refuses it either way.
    assert not _matches("\\bx", "éx")
    assert _matches("\\bx", " x")


# --- differential ---------------------------------------------------------------------------

_ATOMS = ["a", "b", "[ab]", ".", "\\d", "\\w", " ", "(a|b)", "(ab)", "x"]
_ASSERTIONS = ["^", "$", "\\b", "\\B", "(?<=a)", "(?<!a)", "(?<=ab|b)", "(?<!^b)", "(?<=[ a])"]
_ASSERTIONS += ["(?=a)", "(?!b)", "(?=.*x)", "(?!a?b)", "(?:(?!ab).)*", "(?:[ab](?=\\w))+"]


@st.composite
def patterns(draw: st.DrawFn) -> str:
    items = draw(
        st.lists(
            st.one_of(
                st.sampled_from(_ATOMS).flatmap(
                    lambda a: st.sampled_from(["", "*", "+", "?", "{1,2}"]).map(lambda q: a + q)
                ),
                st.sampled_from(_ASSERTIONS),
            ),
            min_size=1,
            max_size=5,
        )
    )
    body = "".join(items)
    if draw(st.booleans()):
        body += "|" + draw(st.sampled_from(_ATOMS + _ASSERTIONS))
    return body


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(patterns(), st.lists(st.text("ab x1", max_size=6), min_size=1, max_size=8))
def test_against_the_regex_module(pattern: str, texts: list[str]) -> None:
    for text in texts:
        assert _matches(pattern, text) == bool(regex_module.search(pattern, text)), (pattern, text)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(patterns(), st.lists(st.text("ab x1", max_size=6), min_size=1, max_size=8))
def test_against_re_where_it_compiles(pattern: str, texts: list[str]) -> None:
    try:
        compiled = re.compile(pattern)
    except re.error:  # variable-width lookbehind: Python's re refuses it
        return
    for text in texts:
        if text == "" and "\\B" in pattern:
            continue  # Python's \B never matches the empty string (ECMA-262's does)
        assert _matches(pattern, text) == bool(compiled.search(text)), (pattern, text)


# --- one word boundary between plain parts: a tree, no automaton -----------------------------

_PLAIN_ATOMS = ["a", "[ab]", "é", "\\(", " ", "(a|\\()", "[a-z()]", "(a )", "x"]


@st.composite
def one_boundary_patterns(draw: st.DrawFn) -> str:
    atom = st.sampled_from(_PLAIN_ATOMS).flatmap(
        lambda a: st.sampled_from(["", "*", "+", "?", "{1,3}", "{0,2}"]).map(lambda q: a + q)
    )
    left = "".join(draw(st.lists(atom, max_size=3)))
    right = "".join(draw(st.lists(atom, max_size=3)))
    start = "^" if draw(st.booleans()) else ""
    end = "$" if draw(st.booleans()) else ""
    return start + left + draw(st.sampled_from(["\\b", "\\B"])) + right + end


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    one_boundary_patterns(),
    st.sampled_from(["both", "either"]),
    st.booleans(),
    st.lists(st.text("a xé(", max_size=6), min_size=1, max_size=10),
)
def test_one_boundary_rewrite_matches_the_marker_automaton(
    pattern: str, reading: str, search: bool, texts: list[str]
) -> None:
    from gbnf_sampler.regex import assertions, parser

    parsed = parser.parse(pattern, reading)
    node = assertions.compile_pattern(parsed, search, reading)
    assert not isinstance(node, tree.Lang), pattern  # the rewrite, not the automaton
    rewritten = automata.from_regex(node)
    reference = assertions._Markers(reading).compile(parsed, search)
    for text in texts:
        assert rewritten.matches(text) == reference.matches(text), (pattern, reading, text)


def test_long_url_pattern_is_a_plain_tree() -> None:
    # SchemaStore's neoload/Dein URL pattern: the marker automaton took minutes and then
    # exceeded the state cap; the rewrite keeps the counter in the grammar.
    pattern = (
        "https?:\\/\\/(www\\.)?[-a-zA-Z0-9@:%._\\+~#=]{1,256}\\.[a-zA-Z0-9()]{1,6}"
        "\\b([-a-zA-Z0-9()@:%_\\+.~#?&//=]*)"
    )
    node = regex_node(pattern, "", search=True)
    assert not isinstance(node, tree.Lang)
    grammar = gs.Grammar.from_gbnf(schema_to_gbnf({"type": "string", "pattern": pattern}))
    for value in ("see https://example.com/x", "http://a.io", "https://x.co(", "http://a.b.c"):
        assert bool(regex_module.search(pattern, value)), value
        m = gs.Matcher(grammar)
        assert m.accept_bytes(json.dumps(value).encode()) and m.can_terminate(), value
    for value in ("http://x.comm1234567", "https://.", "ftp://a.io", "http://" + "a" * 257 + ".io"):
        assert not regex_module.search(pattern, value), value
        m = gs.Matcher(grammar)
        assert not (m.accept_bytes(json.dumps(value).encode()) and m.can_terminate()), value
