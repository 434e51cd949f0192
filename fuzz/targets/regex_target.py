"""Regex -> grammar on fuzzer strings. Only SchemaError, GrammarError and GrammarTooComplexError
may escape. When the pattern is inside the dialect shared with Python's ``re`` and both compile
it, the grammar must accept exactly the short strings ``re.fullmatch`` accepts."""

from __future__ import annotations

import re
import warnings

from byte_reader import ByteReader

import gbnf_sampler as gs

EXPECTED = (gs.SchemaError, gs.GrammarError, gs.GrammarTooComplexError)
# Pattern pieces; fuzzer bytes index into them so that most patterns are near-valid regexes.
PIECES = [
    "a", "b", "c", "0", "1", "-", "(", ")", "(?:", "|", "*", "+", "?", "{2}", "{1,3}", "{0,}",
    "{2,1}", "[", "]", "[^", "a-c", "\\d", "\\w", "\\D", "\\W", ".", "^", "$", "*?", "\\.",
    "\\-", "\\\\", "{", "}", ",", "\\u0061", "\\x62", "\\s", "\\b", "\\1", "(?=", "é", "\\ud800",
]  # fmt: skip
# The shared dialect: ECMA-262 (with the u flag) and Python agree on these pieces, and strings
# over ALPHABET are ASCII without line terminators (where `.`, `\\w`, `\\d` differ: the grammar
# takes the meaning both dialects agree on).
SHARED = {p for p in PIECES if p not in {"{", "}", ",", "\\s", "\\b", "\\1", "(?=", "\\ud800"}}
ALPHABET = "abc01-_."


def _pattern(r: ByteReader) -> tuple[str, bool]:
    if r.int_in(0, 3) == 0:
        return r.text(40), False
    parts = [r.choice(PIECES) for _ in range(r.int_in(0, 12))]
    pattern = "".join(parts)
    # `[]` and `[^]` are an empty class and any character in ECMA-262, but open a class that
    # starts with a literal `]` in Python.
    shared = all(p in SHARED for p in parts) and "[]" not in pattern and "[^]" not in pattern
    return pattern, shared


def _python_regex(pattern: str) -> re.Pattern[str] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarning about nested sets
            return re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None


def run_one(data: bytes) -> None:
    r = ByteReader(data)
    pattern, shared = _pattern(r)
    try:
        grammar = gs.Grammar.from_regex(pattern)
    except EXPECTED:
        return
    compiled = _python_regex(pattern) if shared else None
    for _ in range(r.int_in(1, 6)):
        text = "".join(r.choice(ALPHABET) for _ in range(r.int_in(0, 6)))
        matcher = gs.Matcher(grammar, max_state_size=20_000)
        try:
            ours = matcher.accept_bytes(text.encode()) and matcher.can_terminate()
        except gs.GrammarTooComplexError:
            continue
        if compiled is not None:
            theirs = compiled.fullmatch(text) is not None
            assert ours == theirs, f"{pattern!r} on {text!r}: grammar {ours}, re {theirs}"
