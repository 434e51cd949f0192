"""Matcher table tests: every syntax feature, with complete sentences, viable-but-incomplete
prefixes and dead inputs (refused by accept_bytes); plus the API's contracts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs

S = bytes | str


def b(x: S) -> bytes:
    return x if isinstance(x, bytes) else x.encode("utf-8")


# (grammar, complete sentences, viable prefixes that are not complete, dead inputs)
CASES: list[tuple[str, list[S], list[S], list[S]]] = [
    ('root ::= "abc"', ["abc"], ["", "a", "ab"], ["b", "abd", "abcd", "abc "]),
    ('root ::= ""', [""], [], ["a"]),
    ('root ::= "a" | "bc"', ["a", "bc"], ["", "b"], ["c", "ab", "bcc"]),
    ('root ::= "ab" | "ac"', ["ab", "ac"], ["a"], ["ad", "b"]),
    ('root ::= ("a" | ) "b"', ["ab", "b"], ["", "a"], ["aab", "ba"]),
    ('root ::= "x" | ', ["", "x"], [], ["xx", "y"]),
    ("root ::= [a-c]", ["a", "b", "c"], [""], ["d", "A", "ab"]),
    ("root ::= [a-cx-z0]+", ["a", "zx0", "cab"], [""], ["d", "aad"]),
    ('root ::= [^a-z"]', ["A", "é", "日", "😀", "\x00"], [""], ["a", "z", '"', b"\xff"]),
    # Negated classes and "." match valid UTF-8 only, any length, no surrogates.
    (
        r'root ::= "\"" [^"\\]* "\""',
        ['""', '"abc"', '"é日😀"', '"\U0010ffff"'],
        ['"', '"ab', b'"\xc3', b'"\xf0\x9f', b'"\xf0\x9f\x98'],
        ['"\\', b'"\xff', b'"\xc0\x80', b'"\xed\xa0\x80', b'"\xf4\x90\x80\x80', b'"\x80', '""x'],
    ),
    (
        "root ::= .",
        ["a", "\x7f", "\x80", "é", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff", "😀"],
        ["", b"\xe6", b"\xe6\x97", b"\xf4\x8f\xbf"],
        [
            b"\xff",
            b"\xc1\xbf",
            b"\xe0\x9f\xbf",
            b"\xed\xa0\x80",
            b"\xed\xbf\xbf",
            b"\xf0\x8f",
            b"\xf4\x90",
            b"\xf5",
            "ab",
        ],
    ),
    ("root ::= .*", ["", "abc", "日本語", "😀😀"], [b"\xe6\x97"], [b"\x80", b"a\xff"]),
    # Code point escapes: "\xff" is U+00FF (two bytes), named surrogates encode plainly.
    (r'root ::= "\xff"', [b"\xc3\xbf"], [b"\xc3"], [b"\xff"]),
    (r'root ::= "\u65e5\U0001F600"', ["日😀"], ["日"], ["日😁"]),
    (r"root ::= [\uD800-\uDFFF]", [b"\xed\xa0\x80", b"\xed\xbf\xbf"], [b"\xed"], [b"\xed\x9f\xbf"]),
    (r"root ::= [\x00-\U0010FFFF]", ["a", "\U0010ffff"], [], [b"\xf4\x90\x80\x80"]),
    # Repetition.
    ('root ::= "a"?', ["", "a"], [], ["aa"]),
    ('root ::= "a"*', ["", "a", "aaaa"], [], ["b"]),
    ('root ::= "a"+', ["a", "aaa"], [""], ["b", "ab"]),
    ('root ::= "ab"{2}', ["abab"], ["", "a", "aba"], ["ababa"]),
    ('root ::= "a"{2,}', ["aa", "aaaaaaa"], ["", "a"], ["ab"]),
    ('root ::= "a"{,2}', ["", "a", "aa"], [], ["aaa"]),
    ('root ::= "a"{1,3} "b"', ["ab", "aab", "aaab"], ["a", "aaa"], ["b", "aaaab"]),
    ('root ::= "a"{0} "b"', ["b"], [""], ["ab"]),
    (
        'root ::= ("a" "b"?){2,3}',
        ["aa", "aba", "abab", "aaa", "ababab"],
        ["", "a", "ab"],
        ["aaaa", "abb"],
    ),
    ('root ::= (("a")*)*', ["", "a", "aaaa"], [], ["b"]),
    ('root ::= ("a" | "a")* "b"', ["b", "aab"], ["", "aaa"], ["ba"]),
    # Rules, nullable rules, recursion of every kind.
    ('root ::= a b\na ::= "x"?\nb ::= "y"*', ["", "x", "y", "xyy"], [], ["xx", "yx"]),
    ('root ::= a "!"\na ::= b\nb ::= c\nc ::= ""', ["!"], [""], ["!!"]),
    (
        'root ::= expr\nexpr ::= expr "+" num | num\nnum ::= [0-9]+',
        ["1", "12+3", "1+2+3"],
        ["", "1+"],
        ["+", "1++", "1+a"],
    ),
    ('root ::= "(" root ")" | ""', ["", "()", "(())"], ["(", "(()"], [")", "())"]),
    ('root ::= root root | "a"', ["a", "aa", "aaaaa"], [""], ["b", "ab"]),
    ('root ::= "a" root | "a" root root | ""', ["", "a", "aaa"], [], ["b"]),
    (
        'root ::= list\nlist ::= item ("," item)*\nitem ::= [a-z]+ | "[" list? "]"',
        ["a", "a,b", "[a,[b]]", "[]"],
        ["[", "a,", "[a"],
        [",", "a]", "[a]]"],
    ),
    # Token references never match bytes.
    ('root ::= "a" <[5]> "b"', [], ["", "a"], ["ab", "a<"]),
    ('root ::= "a" | <[5]>', ["a"], [""], ["b"]),
    # Comments, CRLF and line continuation after "|".
    ('root ::= a # comment\r\na ::= "x" |\r\n  "y"\r\n', ["x", "y"], [""], ["xy", "\r"]),
    ('root ::= "a\\r\\n"', ["a\r\n"], ["a", "a\r"], ["a\n"]),
    ("root ::= [\\r\\n]+", ["\r\n", "\n", "\r\r"], [""], [" "]),
    # Dead-state pruning (liveness.cc): each copy of a class of two-byte characters ends in a
    # state built before its continuation byte's, so sweeps settle one copy at a time and the
    # search over reversed edges finishes them; no state that leads on may be pruned.
    (
        'root ::= [\u0100-\u024f]{6} "!"',
        ["ĀĀĀĀĀĀ!", "ĀāɏȀĀĀ!"],
        ["", "Ā", b"\xc4", "ĀĀĀĀĀ", "ĀĀĀĀĀĀ", "Ā" * 5 + "\u024f"],
        ["a", "é", "ĀĀĀĀĀĀ?", "ĀĀĀĀĀĀ!!", "ĀĀĀĀĀĀĀ", b"\xc4\xc4"],
    ),
]


def _ids() -> list[str]:
    return [c[0].replace("\n", " | ")[:40] for c in CASES]


@pytest.mark.parametrize(("text", "full", "prefixes", "dead"), CASES, ids=_ids())
def test_table(text: str, full: list[S], prefixes: list[S], dead: list[S]) -> None:
    g = gs.Grammar.from_gbnf(text)
    for s in full:
        m = gs.Matcher(g)
        assert m.accept_bytes(b(s)), s
        assert m.can_terminate(), s
    for s in prefixes:
        m = gs.Matcher(g)
        assert m.accept_bytes(b(s)), s
        assert not m.can_terminate(), s
    for s in dead:
        m = gs.Matcher(g)
        assert not m.accept_bytes(b(s)), s


@pytest.mark.parametrize(("text", "full", "prefixes", "dead"), CASES, ids=_ids())
def test_table_byte_by_byte(text: str, full: list[S], prefixes: list[S], dead: list[S]) -> None:
    """Splitting the input into single bytes changes nothing."""
    g = gs.Grammar.from_gbnf(text)
    for s in [*full, *prefixes]:
        m = gs.Matcher(g, max_rollback=0)
        assert all(m.accept_bytes(bytes([c])) for c in b(s)), s
        assert m.can_terminate() == (s in full), s
    for s in dead:
        m = gs.Matcher(g)
        assert not all(m.accept_bytes(bytes([c])) for c in b(s)), s


FORCED = [
    ('root ::= "abc"', b"", b"abc"),
    ('root ::= "ab" | "ac"', b"", b"a"),
    ('root ::= "ab" | "ac"', b"a", b""),
    ('root ::= "abc" "d"*', b"", b"abc"),
    ('root ::= "abc" "d"*', b"abc", b""),
    ('root ::= "{" ws "}"\nws ::= " "?', b"", b"{"),
    ('root ::= "é"', b"", "é".encode()),
    ('root ::= "é"', b"\xc3", b"\xa9"),
    ("root ::= [\\u00e0-\\u00ef]", b"", b"\xc3"),
    ('root ::= "a" <[5]> "b"', b"", b"a"),
    ('root ::= "a" <[5]> "b"', b"a", b""),
    ('root ::= x "!"\nx ::= "k" y\ny ::= "ey"', b"", b"key!"),
    ('root ::= "a" root | "b"', b"aaa", b""),
]


@pytest.mark.parametrize(("text", "prefix", "forced"), FORCED)
def test_forced_bytes(text: str, prefix: bytes, forced: bytes) -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf(text))
    assert m.accept_bytes(prefix)
    before = (m.can_terminate(), m.state_size, m.rollback_available)
    assert m.forced_bytes() == forced
    assert (m.can_terminate(), m.state_size, m.rollback_available) == before
    assert m.accept_bytes(forced)


def test_accept_is_atomic() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "abc" | "abd"'))
    assert m.accept_bytes(b"a")
    assert not m.accept_bytes(b"bx")
    assert m.rollback_available == 1
    assert m.forced_bytes() == b"b"
    assert m.accept_bytes(b"bd")
    assert m.can_terminate()


def test_eos() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "a"+'))
    assert not m.accept_eos()
    assert m.accept_bytes(b"a")
    assert m.can_terminate() and not m.is_terminated()
    assert m.accept_eos()
    assert m.is_terminated() and not m.can_terminate()
    assert not m.accept_bytes(b"a")
    assert not m.accept_eos()
    assert m.forced_bytes() == b""
    m.rollback(1)
    assert not m.is_terminated()
    assert m.accept_bytes(b"a")


def test_rollback() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "ab" "c"*'))
    assert m.rollback_available == 0
    for chunk in [b"a", b"b", b"cc", b""]:
        assert m.accept_bytes(chunk)
    assert m.rollback_available == 4
    m.rollback(0)
    m.rollback(2)
    assert m.rollback_available == 2
    assert m.can_terminate()
    m.rollback(1)
    assert not m.can_terminate()
    assert m.forced_bytes() == b"b"
    with pytest.raises(ValueError, match="rollback"):
        m.rollback(2)
    m.rollback(1)
    assert m.forced_bytes() == b"ab"


def test_rollback_history_is_bounded() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "a"*'), max_rollback=3)
    for _ in range(10):
        assert m.accept_bytes(b"a")
    assert m.rollback_available == 3
    m.rollback(3)
    with pytest.raises(ValueError):
        m.rollback(1)
    default = gs.Matcher(gs.Grammar.from_gbnf('root ::= "a"*'))
    for _ in range(300):
        default.accept_bytes(b"a")
    assert default.rollback_available == 256


def test_fork_is_independent() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "a" ("b" | "c")'))
    assert m.accept_bytes(b"a")
    f = m.fork()
    assert f.accept_bytes(b"b") and f.can_terminate()
    assert not m.can_terminate()
    assert m.accept_bytes(b"c") and m.can_terminate()
    assert f.rollback_available == 2
    f.rollback(1)
    assert f.accept_bytes(b"c")


def test_reset() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "ab"'))
    assert m.accept_bytes(b"ab") and m.accept_eos()
    m.reset()
    assert not m.is_terminated() and not m.can_terminate()
    assert m.rollback_available == 0
    assert m.forced_bytes() == b"ab"


def test_bytes_like_and_type_errors() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "ab"'))
    assert m.accept_bytes(bytearray(b"a"))
    assert m.accept_bytes(memoryview(b"b"))
    with pytest.raises(TypeError, match="expects bytes, got str"):
        m.accept_bytes("a")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got int"):
        m.accept_bytes(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Grammar, got str"):
        gs.Matcher("root ::= x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="n must be int"):
        m.rollback(1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="got -1"):
        m.rollback(-1)
    with pytest.raises(ValueError, match="max_state_size"):
        gs.Matcher(gs.Grammar.from_gbnf('root ::= "ab"'), max_state_size=0)
    with pytest.raises(TypeError, match="max_rollback"):
        gs.Matcher(gs.Grammar.from_gbnf('root ::= "ab"'), max_rollback="1")  # type: ignore[arg-type]


def test_matchers_share_the_automaton() -> None:
    g = gs.Grammar.from_gbnf('root ::= "a"')
    assert g.automaton() is g.automaton()
    assert "Matcher incomplete" in repr(gs.Matcher(g))


def test_only_the_root_and_called_rules_get_states() -> None:
    # A rule that is never used, or only ever expanded in place (a small non-recursive rule),
    # costs no states of its own: schema grammars have thousands of such rules.
    base = 'root ::= "x" tail\ntail ::= "y" | "z" tail\n'
    plain = gs.Grammar.from_gbnf(base).automaton().num_states
    unused = gs.Grammar.from_gbnf(base + "unused ::= [a-z]{0,60} [0-9]{0,60}\n")
    assert unused.automaton().num_states <= plain + 2
    inlined = 'root ::= "x" pair pair tail\npair ::= [a-c] "d"\ntail ::= "y" | "z" tail\n'
    spelled = 'root ::= "x" [a-c] "d" [a-c] "d" tail\ntail ::= "y" | "z" tail\n'
    assert (
        gs.Grammar.from_gbnf(inlined).automaton().num_states
        <= gs.Grammar.from_gbnf(spelled).automaton().num_states + 2
    )
    m = gs.Matcher(gs.Grammar.from_gbnf(inlined))
    assert m.accept_bytes(b"xadcdzzy") and m.can_terminate()
    assert not gs.Matcher(gs.Grammar.from_gbnf(inlined)).accept_bytes(b"xadd")


def _gbnf_literal(word: str) -> str:
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(st.text(alphabet='ab"é日', max_size=5), min_size=1, max_size=8),
    other=st.booleans(),
    probes=st.lists(st.text(alphabet='ab"é日z', max_size=7), max_size=10),
)
def test_literal_alternatives_match_exactly_their_words(
    words: list[str], other: bool, probes: list[str]
) -> None:
    # Literal alternatives are built as one trie (shared prefixes, words that are prefixes of
    # others, repeats, the empty word); the language stays the set of words, then the tail.
    body = " | ".join(_gbnf_literal(w) for w in words) + (' | "z" [ab]' if other else "")
    grammar = gs.Grammar.from_gbnf(f'root ::= ({body}) "!"\n')
    language = {w + "!" for w in words} | ({"za!", "zb!"} if other else set())
    for text in [*language, *(w for w in words), *(p + "!" for p in probes), *probes]:
        m = gs.Matcher(grammar)
        accepted = m.accept_bytes(text.encode()) and m.can_terminate()
        assert accepted == (text in language), (words, text)


def test_literal_alternatives_share_prefix_states() -> None:
    names = [f"name-{i:03d}" for i in range(200)]
    enum = gs.Grammar.from_gbnf("root ::= " + " | ".join(_gbnf_literal(n) for n in names))
    # One state per distinct prefix ("name-", then the digits); a last byte leads straight on.
    assert enum.automaton().num_states < 40
    m = gs.Matcher(enum)
    assert m.accept_bytes(b"name-1") and m.forced_bytes() == b""
    assert m.accept_bytes(b"99") and m.can_terminate()
    assert not gs.Matcher(enum).accept_bytes(b"name-200")


def test_classes_share_their_utf8_tails() -> None:
    # "Any character but a" as bytes: a state per distinct rest ([80-BF] once, [80-BF][80-BF]
    # once...), not per lead byte range: start, end, three continuation rests and the four
    # leads with a narrowed second byte (E0, ED, F0, F4).
    grammar = gs.Grammar.from_gbnf("root ::= [^a]\n")
    assert grammar.automaton().num_states <= 9
    for ch in ["b", "\x7f", "\x80", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff",
               "\U00010000", "\U0010ffff"]:  # fmt: skip
        m = gs.Matcher(grammar)
        assert m.accept_bytes(ch.encode()) and m.can_terminate(), ascii(ch)
    for data in [b"a", b"\xed\xa0\x80", b"\xe0\x80\x80", b"\xf4\x90\x80\x80", b"\xc0\x80"]:
        assert not gs.Matcher(grammar).accept_bytes(data), data


def test_partial_utf8_across_calls() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "日" [^a]'))
    assert m.accept_bytes(b"\xe6")
    assert m.forced_bytes() == b"\x97\xa5"
    assert m.accept_bytes(b"\x97")
    assert not m.accept_bytes(b"\x97")
    assert m.accept_bytes(b"\xa5\xf0\x9f")
    assert not m.can_terminate()
    assert not m.accept_bytes(b"\x98\x80\x80")  # 4 continuation bytes: invalid
    assert m.accept_bytes(b"\x98\x80")
    assert m.can_terminate()


def test_long_inputs_in_threads() -> None:
    """accept_bytes releases the GIL for long inputs; separate matchers run concurrently."""
    import threading

    g = gs.Grammar.from_gbnf('root ::= ("ab" | "a" "b")* "!"')
    data = b"ab" * 200_000
    results: list[bool] = []

    def work() -> None:
        m = gs.Matcher(g)
        results.append(m.accept_bytes(data) and m.accept_bytes(b"!") and m.can_terminate())

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 4


def test_token_reference_hook() -> None:
    """Token edges are crossed only by the token-level hook (used once a vocabulary exists)."""
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "a" <[5]> "b" !<[7]> "c"'))
    core = m._core
    assert m.accept_bytes(b"a")
    assert m.forced_bytes() == b""
    assert not core.accept_token_ref(4)
    assert core.accept_token_ref(5)
    assert m.forced_bytes() == b"b"
    assert m.accept_bytes(b"b")
    assert not core.accept_token_ref(7)
    assert core.accept_token_ref(8)
    assert m.accept_bytes(b"c") and m.can_terminate()
    m.rollback(2)
    assert core.accept_token_ref(9)
