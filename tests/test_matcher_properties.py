"""Properties of the Matcher's state operations (hypothesis): atomic refusals, rollback, fork,
reset, and that chunking the input changes nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs

JSONISH = r"""
root   ::= value
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}"
array  ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
string ::= "\"" ( [^"\\] | "\\" ["\\/bfnrt] )* "\""
number ::= "-"? [0-9]+ ( "." [0-9]+ )?
ws     ::= [ \t\n]*
"""
AMBIGUOUS = 'root ::= root root | "a" | "ab" | "b" | x\nx ::= "é"?'
LEFT_RECURSIVE = 'root ::= root "+" t | t\nt ::= [a-c\\u00e9\\u65e5]+ | "(" root ")"'

GRAMMARS = [gs.Grammar.from_gbnf(t) for t in (JSONISH, AMBIGUOUS, LEFT_RECURSIVE)]
PIECES = [
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b"a",
    b"b",
    b"\\",
    b":",
    b",",
    b" ",
    b"1",
    b"-",
    b".",
    b"true",
    b"null",
    "é".encode(),
    b"\xc3",
    b"\xa9",
    "日".encode()[:2],
    b"\xa5",
    b"+",
    b"(",
    b")",
    b"\xff",
    b"",
]
PROBES = [bytes([c]) for c in b'{}[]"ab\\:, 1-.+()'] + [b"\xc3", b"\xa9", b"\xe6", b"\xff"]

grammar_st = st.sampled_from(GRAMMARS)
chunk_st = st.lists(st.sampled_from(PIECES), min_size=0, max_size=3).map(b"".join)
chunks_st = st.lists(chunk_st, min_size=0, max_size=25)


def observe(m: gs.Matcher) -> tuple[object, ...]:
    """Everything observable about the state, through forks (so m itself is not touched)."""
    next_ok = tuple(m.fork().accept_bytes(p) for p in PROBES)
    return (m.can_terminate(), m.is_terminated(), m.forced_bytes(), m.state_size, next_ok)


@settings(max_examples=60, deadline=None)
@given(grammar_st, chunks_st)
def test_refused_accept_changes_nothing(grammar: gs.Grammar, chunks: list[bytes]) -> None:
    m = gs.Matcher(grammar)
    for chunk in chunks:
        before = m.fork()
        history = m.rollback_available
        if not m.accept_bytes(chunk):
            assert observe(m) == observe(before)
            assert m.rollback_available == history


@settings(max_examples=60, deadline=None)
@given(grammar_st, chunks_st, st.data())
def test_rollback_restores_earlier_states(
    grammar: gs.Grammar, chunks: list[bytes], data: st.DataObject
) -> None:
    m = gs.Matcher(grammar)
    seen = [observe(m)]
    for chunk in chunks:
        if m.accept_bytes(chunk):
            seen.append(observe(m))
    if m.can_terminate() and data.draw(st.booleans()):
        assert m.accept_eos()
        seen.append(observe(m))
    n = data.draw(st.integers(0, len(seen) - 1))
    m.rollback(n)
    assert observe(m) == seen[len(seen) - 1 - n]
    assert m.rollback_available == len(seen) - 1 - n


@settings(max_examples=60, deadline=None)
@given(grammar_st, chunks_st, chunks_st)
def test_fork_is_independent(grammar: gs.Grammar, first: list[bytes], second: list[bytes]) -> None:
    m = gs.Matcher(grammar)
    for chunk in first:
        m.accept_bytes(chunk)
    snapshot = observe(m)
    f = m.fork()
    assert observe(f) == snapshot
    for chunk in second:
        f.accept_bytes(chunk)
    assert observe(m) == snapshot


@settings(max_examples=60, deadline=None)
@given(grammar_st, chunks_st)
def test_reset_equals_fresh(grammar: gs.Grammar, chunks: list[bytes]) -> None:
    m = gs.Matcher(grammar)
    for chunk in chunks:
        m.accept_bytes(chunk)
    m.reset()
    assert observe(m) == observe(gs.Matcher(grammar))
    assert m.rollback_available == 0


@settings(max_examples=60, deadline=None)
@given(grammar_st, chunks_st)
def test_chunking_does_not_matter(grammar: gs.Grammar, chunks: list[bytes]) -> None:
    whole = gs.Matcher(grammar)
    pieces = gs.Matcher(grammar)
    data = b"".join(chunks)
    ok = whole.accept_bytes(data)
    assert ok == all(pieces.accept_bytes(bytes([c])) for c in data)
    if ok:
        assert observe(whole) == observe(pieces)
