"""Lookaheads ``(?=X)`` / ``(?!X)``: tables, errors, a differential test against Python's ``re``
(``fullmatch`` and ``search``) on generated patterns, and JSON Schema patterns from the
SchemaStore corpus checked with ``jsonschema``."""

from __future__ import annotations

import re

import jsonschema
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler.regex import assertions, automata, parser, regex_to_gbnf
from schema_helpers import accepts
from test_regex import patterns

TABLE: list[tuple[str, list[str], list[str]]] = [
    ("(?!python$)[a-z]+", ["pythons", "pytho", "java"], ["python", ""]),
    ("(?=.*\\d)(?=.*[a-z])\\w{4,}", ["ab12", "1abc"], ["abcd", "1234", "a1"]),
    ("a(?=b)\\w", ["ab"], ["ac", "a"]),
    ("a(?!b)\\w", ["ac"], ["ab"]),
    ("(?:x(?!.*--)[a-z-]*|y)z", ["xa-bz", "yz"], ["xa--bz"]),
    ("(?!a|b$)[ab]{1,2}", ["ba", "bb"], ["a", "b", "ab", "aa"]),
    ("(?!(^xn--|-s3$))^[a-z0-9-]{3,8}$", ["xn-a", "ab-s3"], ["xn--a", "-s3"]),
    ("(?:(?=a)\\w){2}", ["aa"], ["ab", "ba"]),
    # Repetitions past the unrolling bound, or unbounded: the lookaheads become obligations.
    ("^((?!--).)*$", ["", "a-b-", "-"], ["--", "a--", "x-y--z"]),
    ("(?:(?!foo)[a-z])+", ["fo", "ofo", "fofo"], ["foo", "ofoo", ""]),
    ("(?:[a-z](?=[a-z]|$))*1?", ["", "abc", "1"], ["ab1", "a1"]),
    ("(?:(?=.*x)a)*x?", ["aax", "", "x"], ["aa", "a"]),
    ("(?:(?=a)\\w){65,}", ["a" * 65, "a" * 80], ["a" * 64, "a" * 64 + "b"]),
    ("(?:(?!b)\\w){0,70}b", ["b", "a" * 70 + "b"], ["a" * 71 + "b", "bb"]),
    ("(?:a(?!(?=b)\\w)\\w)*", ["", "aa", "acac"], ["ab", "aaab"]),
]


@pytest.mark.parametrize(("pattern", "good", "bad"), TABLE)
def test_lookahead_table(pattern: str, good: list[str], bad: list[str]) -> None:
    grammar = gs.Grammar.from_regex(pattern)
    for text in good:
        assert accepts(grammar, text), text
        assert re.fullmatch(pattern, text), text  # the table itself agrees with Python
    for text in bad:
        assert not accepts(grammar, text), text
        assert not re.fullmatch(pattern, text), text


ERRORS = [
    ("(?:(?=a)b){65}", "matches nothing"),
    ("x?(?:(?=^a)a)*", "may not be at the start"),
    ("(?=a)*", "quantifier after a lookaround"),
    ("(?<=a)b", "matches nothing"),  # a full match: nothing stands before the b
    ("(?!a$b)c", "middle of a lookahead"),
    ("x?(?=^a)a", "may not be at the start"),
    ("(?=a", "missing ')'"),
    ("(?=a)", "matches nothing"),
]


@pytest.mark.parametrize(("pattern", "words"), ERRORS)
def test_lookahead_errors(pattern: str, words: str) -> None:
    with pytest.raises(gs.SchemaError) as info:
        regex_to_gbnf(pattern)
    assert info.value.path == ""
    assert words in info.value.message


def test_lookahead_automaton_size_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(automata, "MAX_DFA_STATES", 8)
    with pytest.raises(gs.SchemaError) as info:
        regex_to_gbnf("(?!abcdefghij)[a-z]{12}")
    assert "too large an automaton" in info.value.message


# --- differential against re ----------------------------------------------------------------------

ALPHABET = "ab0_ -."  # no line terminators: there ECMA-262 and Python agree on '.', '$'


@st.composite
def lookahead_patterns(draw: st.DrawFn) -> str:
    """Sequences of plain pieces, lookaheads and repetitions holding a lookahead, optionally
    anchored and in alternatives."""
    branches = []
    for _ in range(draw(st.integers(1, 2))):
        items = []
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.booleans()):
                kind = draw(st.sampled_from(["=", "!"]))
                end = draw(st.sampled_from(["", "", "$"]))
                items.append(f"(?{kind}{draw(patterns(1))}{end})")
            elif draw(st.integers(0, 3)) == 0:  # a repetition holding a lookahead
                kind = draw(st.sampled_from(["=", "!"]))
                look = f"(?{kind}{draw(patterns(2))})"
                piece = f"(?:{draw(patterns(2))})"
                body = look + piece if draw(st.booleans()) else piece + look
                items.append(f"(?:{body}){draw(st.sampled_from(['*', '+', '{2,}']))}")
            else:
                items.append(f"(?:{draw(patterns(1))})")
        prefix = draw(st.sampled_from(["", "^"]))
        branches.append(prefix + "".join(items) + draw(st.sampled_from(["", "$"])))
    return "|".join(branches)


def _automaton(pattern: str, search: bool) -> automata.Dfa:
    """The automaton behind ``regex_to_gbnf`` (its printed grammar can be large: the tables
    check the grammar path)."""
    return automata.from_regex(assertions.compile_pattern(parser.parse(pattern), search))


@settings(max_examples=100, deadline=None)
@given(lookahead_patterns(), st.lists(st.text(ALPHABET, max_size=6), max_size=6))
@example(  # over 20000 states in search mode before the intermediate automata were minimized
    pattern="(?=-{1,3}?\\S{2}|(?:)\\S*?)(?!(?:[^a])b*0{1,3}?)(?!a)",
    texts=["", "a", "--ab", "b0", "-a", "_b00"],
)
def test_lookahead_matches_python_re(pattern: str, texts: list[str]) -> None:
    compiled = re.compile(pattern, re.ASCII)
    for search in (False, True):
        automaton = _automaton(pattern, search)
        for text in texts:
            found = compiled.search(text) if search else compiled.fullmatch(text)
            assert automaton.matches(text) == (found is not None), (pattern, search, text)


# --- JSON Schema patterns (SchemaStore corpus), validated with jsonschema ------------------------

SCHEMA_PATTERNS: list[tuple[str, list[str], list[str]]] = [
    ("^(?!python$)[a-zA-Z-_.0-9]+$", ["flask", "pythonic"], ["python", "a b"]),
    ("^(?!-)[-a-z0-9]{0,49}[a-z0-9]$", ["a-1", "z"], ["-a", "a-"]),
    ("^(?!@@)[@a-zA-Z0-9_-]+$", ["@a", "a@@"], ["@@a"]),
    ("^(?!pattern$).*$", ["patterns", ""], ["pattern"]),
    ("^(?!.*(local|meta)).*$", ["repo"], ["my-local-x", "meta"]),
    ("^(?=[^=]+$)(?!\\s+$)(.|\\n)+$", ["a b", "x\ny"], ["a=b", "   ", ""]),
    (
        "^(?!org\\.bukkit\\.)([a-zA-Z_$][a-zA-Z\\d_$]*\\.)*[a-zA-Z_$][a-zA-Z\\d_$]*$",
        ["com.x.Main", "org.bukkitx.A"],
        ["org.bukkit.Main", "1a"],
    ),
    ("^(?!tag|category)$", [""], ["tag", "x"]),
    ("^(?![\\.0-9]).", ["a", "a."], [".a", "1"]),
    ("^(?!^lucene\\.|builtin\\.|mongodb\\.).*", ["my.analyzer"], ["lucene.x", "builtin.y"]),
    ("^(?=(.{1,5}/)?.{1,5}$)(([a-z0-9][-a-z0-9_.]*)?[a-z0-9])?/?$", ["ab", "ab/"], ["abcdef"]),
]


@pytest.mark.parametrize(("pattern", "good", "bad"), SCHEMA_PATTERNS)
def test_schema_patterns_with_lookahead(pattern: str, good: list[str], bad: list[str]) -> None:
    schema = {"type": "string", "pattern": pattern}
    grammar = gs.Grammar.from_json_schema(schema)
    for value in good:
        jsonschema.validate(value, schema)
        assert accepts(grammar, f'"{value}"'.replace("\n", "\\n")), value
    for value in bad:
        assert not jsonschema.Draft202012Validator(schema).is_valid(value), value
        assert not accepts(grammar, f'"{value}"'), value


def test_pattern_properties_with_lookahead() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^(?!python$)[a-z]+$": {"type": "integer"}},
        "additionalProperties": False,
    }
    grammar = gs.Grammar.from_json_schema(schema)
    assert accepts(grammar, '{"flask": 1}')
    assert not accepts(grammar, '{"python": 1}')
    assert not jsonschema.Draft202012Validator(schema).is_valid({"python": 1})


@settings(max_examples=60, deadline=None)
@given(patterns(), st.lists(st.text(ALPHABET, max_size=6), max_size=8))
def test_minimized_automaton_has_the_same_language(pattern: str, texts: list[str]) -> None:
    automaton = automata.from_regex(parser.anchor(parser.parse(pattern), search=True))
    smaller = automata.minimize(automaton)
    assert len(smaller.trans) <= len(automaton.trans)
    for text in texts:
        assert smaller.matches(text) == automaton.matches(text), (pattern, text)
    assert automata.minimize(smaller).trans == smaller.trans  # minimal: nothing left to merge


def test_minimize_merges_equivalent_states() -> None:
    # (ab|cb) as a subset construction has separate states after 'a' and after 'c'.
    automaton = automata.from_regex(parser.parse("ab|cb"))
    smaller = automata.minimize(automaton)
    assert len(smaller.trans) == 3 < len(automaton.trans)
    assert [smaller.matches(t) for t in ("ab", "cb", "a", "bb", "")] == [1, 1, 0, 0, 0]
    assert automata.minimize(automata.from_regex(parser.parse("[]"))).is_empty()
