"""Property tests: arbitrary input never raises anything but GrammarError (no crash, no hang),
and grammars assembled from random pieces round-trip through the printer."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs

# Fragments of GBNF, so random texts reach deep into the parser instead of failing at byte 1.
PIECES = [
    "root",
    " ::= ",
    "::=",
    "a",
    "b-c",
    "x_1",
    " ",
    "\n",
    "\r\n",
    "\t",
    "|",
    "(",
    ")",
    "[",
    "]",
    "^",
    "-",
    '"',
    '\\"',
    "\\x41",
    "\\u00e9",
    "\\U0001F600",
    "\\n",
    "\\",
    "\\q",
    "*",
    "+",
    "?",
    "{",
    "}",
    ",",
    "2",
    "10",
    ".",
    "#c\n",
    "<[7]>",
    "<t>",
    "!",
    "<",
    ">",
    "é",
    "“",
    "\x00",
]


def _parse_or_grammar_error(text: str | bytes) -> None:
    try:
        grammar = gs.Grammar.from_gbnf(text)
    except gs.GrammarError as e:
        assert e.diagnostics
        assert e.line >= 0 and e.column >= 0
        str(e)
        return
    again = gs.Grammar.from_gbnf(grammar.to_gbnf())
    assert again == grammar


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_random_bytes_only_raise_grammar_error(data: bytes) -> None:
    _parse_or_grammar_error(data)
    _parse_or_grammar_error(b"root ::= " + data)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=100))
def test_random_text_only_raises_grammar_error(text: str) -> None:
    _parse_or_grammar_error(text)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_random_gbnf_fragments_only_raise_grammar_error(pieces: list[str]) -> None:
    _parse_or_grammar_error("".join(pieces))
    _parse_or_grammar_error("root ::= " + "".join(pieces))


literal_chars = st.characters(codec="utf-8", exclude_categories=("Cs",))
atoms = st.one_of(
    st.text(literal_chars, max_size=4).map(
        lambda s: '"' + "".join(f"\\U{ord(c):08X}" for c in s) + '"'
    ),
    st.tuples(st.integers(0, 0x10FFFF), st.integers(0, 50), st.booleans()).map(
        lambda t: f"[{'^' if t[2] else ''}\\U{t[0]:08X}-\\U{min(t[0] + t[1], 0x10FFFF):08X}]"
    ),
    st.just("."),
    st.sampled_from(["r1", "r2"]),
    st.integers(0, 999).map(lambda i: f"<[{i}]>"),
)


def expressions(depth: int = 3) -> st.SearchStrategy[str]:
    if depth == 0:
        return atoms
    inner = expressions(depth - 1)
    return st.one_of(
        atoms,
        st.lists(inner, min_size=2, max_size=3).map(" ".join),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(" + " | ".join(xs) + ")"),
        st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "{1,3}", "{,2}", "{2,}"])).map(
            lambda t: f"({t[0]}){t[1]}"
        ),
    )


@settings(max_examples=300, deadline=None)
@given(expressions(), expressions(), expressions())
def test_random_valid_grammars_round_trip(root: str, r1: str, r2: str) -> None:
    text = f'root ::= {root}\nr1 ::= {r1} | "base1"\nr2 ::= {r2} | "base2"\n'
    try:
        grammar = gs.Grammar.from_gbnf(text)
    except gs.GrammarError as e:
        # Only a negated class that excludes everything, or mutual recursion with no way out,
        # can make these texts invalid; nothing else.
        assert e.code in {"empty_class", "unproductive_rule"}, str(e)
        return
    printed = grammar.to_gbnf()
    again = gs.Grammar.from_gbnf(printed)
    assert again == grammar
    assert again.rules == grammar.rules
    assert again.to_gbnf() == printed
