"""Tests of the oracle itself (tests/reference.py), on grammars whose answers are known by hand.

The grammars are built directly as AST nodes, so these tests do not depend on the GBNF parser.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from gbnf_sampler import syntax as gast
from reference import Reference, prefix_ranges, split_utf8
from strategies import grammars, mutations, sentences, to_gbnf_text

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- tiny AST builders ---------------------------------------------------------------------------


def lit(text: str) -> gast.Literal:
    return gast.Literal(tuple(map(ord, text)))


def cls(*ranges: str | tuple[str, str], negated: bool = False) -> gast.CharClass:
    """``cls("a", ("0", "9"))`` = ``[a0-9]``."""
    pairs = [(ord(r), ord(r)) if isinstance(r, str) else (ord(r[0]), ord(r[1])) for r in ranges]
    return gast.CharClass(tuple(pairs), negated)


def ref(name: str) -> gast.RuleRef:
    return gast.RuleRef(name)


def seq(*items: gast.Node) -> gast.Sequence:
    return gast.Sequence(items)


def alt(*items: gast.Node) -> gast.Alternation:
    return gast.Alternation(items)


def rep(item: gast.Node, lo: int, hi: int | None) -> gast.Repeat:
    return gast.Repeat(item, lo, hi)


EMPTY = gast.Sequence(())
ANY = gast.AnyChar()


def star(item: gast.Node) -> gast.Repeat:
    return rep(item, 0, None)


def opt(item: gast.Node) -> gast.Repeat:
    return rep(item, 0, 1)


# -- hand-written grammars -----------------------------------------------------------------------

JSON: dict[str, gast.Node] = {
    "value": alt(
        ref("object"), ref("array"), ref("string"), ref("number"), lit("true"), lit("null")
    ),
    "object": seq(
        lit("{"), ref("ws"), opt(seq(ref("member"), star(seq(lit(","), ref("ws"), ref("member"))))),
        lit("}"), ref("ws"),
    ),
    "member": seq(ref("string"), lit(":"), ref("ws"), ref("value")),
    "array": seq(
        lit("["), ref("ws"), opt(seq(ref("value"), star(seq(lit(","), ref("ws"), ref("value"))))),
        lit("]"), ref("ws"),
    ),
    "string": seq(
        lit('"'), star(alt(cls('"', "\\", negated=True), seq(lit("\\"), cls('"', "\\", "n")))),
        lit('"'), ref("ws"),
    ),
    "number": seq(opt(lit("-")), rep(cls(("0", "9")), 1, None), ref("ws")),
    "ws": star(cls(" ", "\t", "\n")),
}  # fmt: skip

ARITH: dict[str, gast.Node] = {  # left recursive
    "expr": alt(seq(ref("expr"), lit("+"), ref("term")), seq(ref("expr"), lit("-"), ref("term")),
                ref("term")),
    "term": alt(seq(ref("term"), lit("*"), ref("factor")), ref("factor")),
    "factor": alt(seq(lit("("), ref("expr"), lit(")")), rep(cls(("0", "9")), 1, None)),
}  # fmt: skip

# (rules, root, accepted, rejected, viable prefixes that are not sentences, dead prefixes)
CASES: list[tuple[dict[str, gast.Node], str, list[str], list[str], list[str], list[str]]] = [
    (
        JSON, "value",
        ['{"a": [1, -2, "x\\"y"]}', "[]", '"é日😀"', "{}", "[ true, null]", "-0012 ", '"\\n"'],
        ["{", "[1,]", '"a', '{"a" 1}', "tru", "", "[1 2]", '"\\q"', "nul l"],
        ['{"a": [1', '"\\', "[", '{"a"', "tr", "-"],
        ["}", "[1,,", '{"a" 1', "x", '"a"x', "[]]"],
    ),
    (
        ARITH, "expr",
        ["1+2*3", "(1+2)*3", "1-2-3", "((4))", "12*(3-4)+5", "7"],
        ["1+", "+1", "(1", "1**2", "", "()", "1)", "1 + 2"],
        ["1+", "((", "1*(2", "(1+2"],
        [")", "1+*", "*", "1 ", "(1))"],
    ),
    (
        {"S": alt(seq(ref("S"), ref("S")), lit("a"))}, "S",
        ["a", "aa", "aaa", "aaaaaaa"], ["", "b", "ab", "aab"], [""], ["b", "ab"],
    ),
    (  # nullable rules whose completion happens before the items waiting on them exist
        {"root": seq(ref("a"), ref("b"), lit("x")), "a": alt(EMPTY, lit("a")),
         "b": alt(seq(ref("a"), ref("a")), lit("b"))}, "root",
        ["x", "ax", "aax", "aaax", "bx", "abx"], ["", "aaaax", "bbx", "xa", "ba"],
        ["", "a", "aaa", "ab"], ["aaaa", "bb", "xx"],
    ),
    (  # Aycock & Horspool's example: naive Earley rejects the empty string here
        {"S": seq(ref("A"), ref("A"), ref("A"), ref("A")), "A": alt(lit("a"), ref("E")),
         "E": EMPTY}, "S",
        ["", "a", "aa", "aaa", "aaaa"], ["aaaaa", "b"], [], ["aaaaa"],
    ),
    (
        {"root": star(star(lit("a")))}, "root", ["", "a", "aaaa"], ["b", "ab"], [], ["b"],
    ),
    (
        {"root": rep(lit("ab"), 2, 3)}, "root", ["abab", "ababab"],
        ["", "ab", "aba", "abababab", "ababa"], ["a", "ab", "aba", "ababa"], ["abababa", "b"],
    ),
    (
        {"root": seq(rep(lit("x"), 0, 0), rep(lit("y"), 0, 2), rep(lit("z"), 2, None))}, "root",
        ["zz", "yzz", "yyzzzz"], ["xzz", "yyyzz", "z", ""], ["yy", "yz"], ["x", "yyy", "zzy"],
    ),
    (  # negated class over multi-byte characters
        {"root": rep(cls(("a", "z"), "é", negated=True), 1, None)}, "root",
        ["日", "😀", "A", "ÉÀ", "\n"], ["é", "a", "日é", ""], [], ["é", "Aa"],
    ),
    (  # TokenRef never matches text; a rule that can never finish contributes nothing
        {"root": alt(gast.TokenRef(5), lit("a"), ref("loop")), "loop": seq(lit("b"), ref("loop"))},
        "root", ["a"], ["", "b", "bb"], [""], ["b"],
    ),
    (
        {"root": EMPTY}, "root", [""], ["a", " "], [], ["a"],
    ),
]  # fmt: skip


@pytest.mark.parametrize("rules, root, accepted, rejected, prefixes, dead", CASES)
def test_known_answers(
    rules: dict[str, gast.Node],
    root: str,
    accepted: list[str],
    rejected: list[str],
    prefixes: list[str],
    dead: list[str],
) -> None:
    oracle = Reference(rules, root)
    for text in accepted:
        assert oracle.accepts(text.encode()), text
        assert oracle.can_terminate(text.encode()), text
        assert oracle.is_viable_prefix(text.encode()), text
    for text in rejected:
        assert not oracle.accepts(text.encode()), text
    for text in prefixes:
        assert oracle.is_viable_prefix(text.encode()), text
        assert not oracle.accepts(text.encode()), text
    for text in dead:
        assert not oracle.is_viable_prefix(text.encode()), text
        assert not oracle.accepts(text.encode()), text


# -- UTF-8 ---------------------------------------------------------------------------------------

ASCII_WORD = {"root": rep(cls(("a", "z")), 1, None)}
E_ACUTE = {"root": lit("é")}
ONLY_ASCII_BY_NEGATION = {"root": cls(("\x80", "\U0010ffff"), negated=True)}
ANY_ONE = {"root": ANY}


@pytest.mark.parametrize(
    "rules, data, viable",
    [
        (E_ACUTE, b"\xc3", True),
        (E_ACUTE, b"\xc4", False),
        (E_ACUTE, b"\xc3\xa8", False),
        (ASCII_WORD, b"\xc3", False),
        (ASCII_WORD, b"ab\xc3", False),
        (ONLY_ASCII_BY_NEGATION, b"\xc3", False),
        ({"root": cls("é", negated=True)}, b"\xc3", True),  # any other U+00C0..U+00FF
        ({"root": cls("é", negated=True)}, b"\xc3\xa9", False),
        ({"root": cls(("\x00", "\uffff"), negated=True)}, b"\xf0", True),
        ({"root": cls(("\x00", "\uffff"), negated=True)}, b"\xe6", False),
        ({"root": cls(("\x00", "\uffff"), negated=True)}, b"\xf0\x9f\x98", True),
        ({"root": lit("日本")}, "日".encode() + b"\xe6\x9c", True),
        ({"root": lit("日本")}, "日".encode() + b"\xe6\x9d", False),
        (ANY_ONE, b"\xed\x9f", True),  # U+D7C0..U+D7FF
        (ANY_ONE, b"\xed\xa0", False),  # only surrogates start like this
        (ANY_ONE, b"\xe0\x80", False),  # overlong
        (ANY_ONE, b"\xe0\xa0", True),
        (ANY_ONE, b"\xf4\x8f", True),
        (ANY_ONE, b"\xf4\x90", False),  # past U+10FFFF
        (ANY_ONE, b"\xc0", False),
        (ANY_ONE, b"\xc1", False),
        (ANY_ONE, b"\xf5", False),
        (ANY_ONE, b"\xff", False),
        (ANY_ONE, b"\x80", False),
        (ANY_ONE, b"\xc3\xc3", False),
        (ANY_ONE, b"\xf0\x9f\x98\x80", True),
    ],
)
def test_partial_utf8(rules: dict[str, gast.Node], data: bytes, viable: bool) -> None:
    assert Reference(rules, "root").is_viable_prefix(data) is viable


@pytest.mark.parametrize(
    "rules, data",
    [
        (ANY_ONE, b"\xed\xa0\x80"),  # U+D800
        (ANY_ONE, b"\xed\xbf\xbf"),  # U+DFFF
        ({"root": cls("a", negated=True)}, b"\xed\xa0\x80"),
        ({"root": cls(("\ud800", "\udfff"))}, b"\xed\xa0\x80"),  # explicit surrogates: unmatchable
        ({"root": lit("A")}, b"\xc1\x81"),  # overlong "A"
        (ANY_ONE, b"\xf4\x90\x80\x80"),  # U+110000
        (ANY_ONE, b"\xc3"),  # incomplete
    ],
)
def test_invalid_utf8_rejected(rules: dict[str, gast.Node], data: bytes) -> None:
    oracle = Reference(rules, "root")
    assert not oracle.accepts(data)
    if len(data) > 1:
        assert not oracle.is_viable_prefix(data)


def test_explicit_surrogate_class_has_an_empty_language() -> None:
    oracle = Reference({"root": cls(("\ud800", "\udfff"))}, "root")
    assert not oracle.is_viable_prefix(b"")
    assert oracle.next_bytes(b"") == frozenset()


def test_scalar_edges_accepted_by_any_char() -> None:
    oracle = Reference(ANY_ONE, "root")
    for cp in (0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF):
        assert oracle.accepts(chr(cp).encode()), hex(cp)


def test_prefix_ranges_match_brute_force() -> None:
    """Every proper prefix of every scalar value's encoding gives exactly the block of scalar
    values sharing it; complete encodings give themselves."""
    blocks: dict[bytes, list[int]] = {}
    # Blocks of a proper prefix are 64-aligned, so their ends have low bits 0 or 63: those code
    # points (and all of the 1- and 2-byte ones) are enough to find every block's ends.
    ends = [cp for cp in range(0x800, 0x110000) if cp & 0x3F in (0, 0x3F)]
    for cp in [*range(0x800), *ends]:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        encoded = chr(cp).encode()
        for n in range(1, len(encoded) + 1):
            block = blocks.setdefault(encoded[:n], [cp, cp])
            block[1] = cp
    for chunk, (lo, hi) in blocks.items():
        expected = ((lo, hi),) if lo > 0xD7FF or hi < 0xD800 else ((lo, 0xD7FF), (0xE000, hi))
        assert prefix_ranges(chunk) == expected, chunk
    for first in range(256):  # every chunk of one or two bytes that no encoding starts with
        for chunk in [bytes([first])] + [bytes([first, b]) for b in range(256)]:
            if chunk not in blocks:
                assert prefix_ranges(chunk) == (), chunk


def test_split_utf8() -> None:
    assert split_utf8("aé".encode()) == ([0x61, 0xE9], b"")
    assert split_utf8(b"a\xe6\x97") == ([0x61], b"\xe6\x97")
    assert split_utf8(b"a\xc3\xa9\xf0") == ([0x61, 0xE9], b"\xf0")
    assert split_utf8(b"\xa9") is None
    assert split_utf8(b"\xed\xa0\x80") is None


# -- next bytes and forced bytes -----------------------------------------------------------------


def test_next_bytes() -> None:
    oracle = Reference({"root": alt(cls(("a", "c")), lit("é"), lit("日"))}, "root")
    assert oracle.next_bytes(b"") == {0x61, 0x62, 0x63, 0xC3, 0xE6}
    assert oracle.next_bytes(b"\xc3") == {0xA9}
    assert oracle.next_bytes(b"a") == frozenset()
    assert oracle.next_bytes(b"\xff") == frozenset()


@pytest.mark.parametrize(
    "rules, data, forced",
    [
        ({"root": seq(lit("hello"), alt(lit("a"), lit("b")))}, b"", b"hello"),
        ({"root": seq(lit("hello"), alt(lit("a"), lit("b")))}, b"hel", b"lo"),
        ({"root": alt(lit("é"), lit("è"))}, b"", b"\xc3"),
        ({"root": seq(lit("ab"), opt(lit("c")))}, b"", b"ab"),
        ({"root": seq(lit("ab"), opt(lit("c")))}, b"ab", b""),  # may end here
        ({"root": alt(lit("ab"), lit("ac"))}, b"", b"a"),
        ({"S": alt(seq(ref("S"), ref("S")), lit("a"))}, b"", b"a"),
        ({"S": alt(seq(ref("S"), ref("S")), lit("a"))}, b"a", b""),
        (JSON, b"[tr", b"ue"),
        (JSON, b'{"a"', b""),  # the string rule ends with optional whitespace
        (JSON, b"[1", b""),
    ],
)
def test_forced_next(rules: dict[str, gast.Node], data: bytes, forced: bytes) -> None:
    root = next(iter(rules))
    assert Reference(rules, root).forced_next(data) == forced


def test_forced_next_needs_a_viable_prefix() -> None:
    with pytest.raises(ValueError):
        Reference({"root": lit("a")}, "root").forced_next(b"b")


def test_bad_grammars_raise() -> None:
    with pytest.raises(ValueError):
        Reference({"root": ref("missing")}, "root")
    with pytest.raises(ValueError):
        Reference({"root": lit("a")}, "start")
    with pytest.raises(ValueError):
        Reference({"root": rep(lit("a"), 3, 2)}, "root")


def test_large_repetition_bound_stays_cheap() -> None:
    oracle = Reference({"root": rep(lit("a"), 0, 5000)}, "root")
    assert oracle.accepts(b"a" * 30)
    assert oracle.is_viable_prefix(b"a" * 30)


# -- properties ----------------------------------------------------------------------------------


@st.composite
def grammar_and_sentence(draw: st.DrawFn) -> tuple[dict[str, gast.Node], str, bytes]:
    rules, root = draw(grammars(max_rules=3, max_depth=2))
    return rules, root, draw(sentences(rules, root))


@FAST
@given(grammar_and_sentence())
def test_sentences_are_accepted_and_their_prefixes_viable(
    case: tuple[dict[str, gast.Node], str, bytes],
) -> None:
    rules, root, data = case
    oracle = Reference(rules, root)
    assert oracle.accepts(data)
    for i in range(len(data)):
        assert oracle.is_viable_prefix(data[:i])
        assert data[i] in oracle.next_bytes(data[:i])
        assert data[i:].startswith(oracle.forced_next(data[:i]))


@FAST
@given(st.data())
def test_mutations_agree_between_questions(data: st.DataObject) -> None:
    """Internal consistency on arbitrary (mostly invalid) inputs: a sentence is viable, a viable
    prefix has a viable next byte unless it is a sentence, and next_bytes agrees with
    is_viable_prefix."""
    rules, root, sentence = data.draw(grammar_and_sentence())
    mutated = data.draw(mutations(sentence))
    oracle = Reference(rules, root)
    viable = oracle.is_viable_prefix(mutated)
    if oracle.accepts(mutated):
        assert viable
    following = oracle.next_bytes(mutated)
    if viable and not oracle.accepts(mutated):
        assert following
    if not viable:
        assert not following
    for b in sorted(following)[:3]:
        assert oracle.is_viable_prefix(mutated + bytes([b]))


# -- an independent check: the language up to length K, computed by a plain fixpoint -------------

K = 2
Words = frozenset[tuple[int, ...]]


def _alphabet(rules: Mapping[str, gast.Node]) -> list[int]:
    """One code point per cell of the partition made by every range boundary in the grammar: two
    code points of one cell are matched by exactly the same terminals, so this is complete."""
    cuts = {0, 0xD800, 0xE000}

    def walk(node: gast.Node) -> None:
        if isinstance(node, gast.Literal):
            cuts.update(c for cp in node.codepoints for c in (cp, cp + 1))
        elif isinstance(node, gast.CharClass):
            cuts.update(c for lo, hi in node.ranges for c in (lo, hi + 1))
        elif isinstance(node, (gast.Sequence, gast.Alternation)):
            for item in node.items:
                walk(item)
        elif isinstance(node, gast.Repeat):
            walk(node.item)

    for node in rules.values():
        walk(node)
    return sorted(c for c in cuts if c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF)


def _concat(left: Words, right: Words) -> Words:
    return frozenset(a + b for a in left for b in right if len(a) + len(b) <= K)


def _words(node: gast.Node, env: Mapping[str, Words], alphabet: list[int]) -> Words:
    """The words of length <= K that ``node`` derives, given the current words of each rule."""
    if isinstance(node, gast.Literal):
        return frozenset([node.codepoints]) if len(node.codepoints) <= K else frozenset()
    if isinstance(node, gast.CharClass):
        inside = [any(lo <= c <= hi for lo, hi in node.ranges) for c in alphabet]
        return frozenset((c,) for c, i in zip(alphabet, inside, strict=True) if i != node.negated)
    if isinstance(node, gast.AnyChar):
        return frozenset((c,) for c in alphabet)
    if isinstance(node, gast.RuleRef):
        return env[node.name]
    if isinstance(node, gast.Sequence):
        out: Words = frozenset([()])
        for item in node.items:
            out = _concat(out, _words(item, env, alphabet))
        return out
    if isinstance(node, gast.Alternation):
        return frozenset().union(*(_words(item, env, alphabet) for item in node.items))
    if not isinstance(node, gast.Repeat):
        raise TypeError(f"unexpected node {node!r}")
    copy = _words(node.item, env, alphabet)
    # Past max(min, K) copies, a word of length <= K uses an empty copy that can be dropped.
    top = max(node.min, K) if node.max is None else min(node.max, max(node.min, K))
    power: Words = frozenset([()])
    result: Words = frozenset()
    for count in range(top + 1):
        if count >= node.min:
            result |= power
        power = _concat(power, copy)
    return result


def bounded_language(rules: Mapping[str, gast.Node], root: str, alphabet: list[int]) -> Words:
    env: dict[str, Words] = dict.fromkeys(rules, frozenset())
    changed = True
    while changed:
        changed = False
        for name, node in rules.items():
            words = _words(node, env, alphabet)
            if words != env[name]:
                env[name] = words | env[name]
                changed = True
    return env[root]


@FAST
@given(st.data())
def test_agrees_with_bounded_language(data: st.DataObject) -> None:
    rules, root = data.draw(grammars(max_rules=3, max_depth=2))
    alphabet = _alphabet(rules)
    language = bounded_language(rules, root, alphabet)
    oracle = Reference(rules, root)
    for word in language:
        assert oracle.accepts("".join(map(chr, word)).encode())
        for i in range(len(word)):
            assert oracle.is_viable_prefix("".join(map(chr, word[:i])).encode())
    probes = data.draw(st.lists(st.lists(st.sampled_from(alphabet), max_size=K), max_size=20))
    for probe in probes:
        text = "".join(map(chr, probe)).encode()
        assert oracle.accepts(text) == (tuple(probe) in language), probe


def test_bounded_language_helper_on_a_known_grammar() -> None:
    rules = {"root": alt(lit("ab"), rep(cls("x"), 0, None))}
    assert bounded_language(rules, "root", [ord("x"), ord("a")]) == {
        (),
        (ord("x"),),
        (ord("x"), ord("x")),
        (ord("a"), ord("b")),
    }


def test_min_cost_is_finite_for_generated_grammars() -> None:
    from strategies import min_costs

    assert min_costs({"a": alt(ref("a"), lit("x"))}) == {"a": 2}
    assert min_costs({"a": seq(lit("x"), ref("a"))}) == {"a": math.inf}


# -- the strategies' own helpers -----------------------------------------------------------------


def test_plain_gbnf_text() -> None:
    rules: dict[str, gast.Node] = {
        "root": seq(lit('a"\\\n'), star(cls(("a", "z"), "-", "]")), ref("x-1")),
        "x-1": alt(rep(ANY, 2, 3), EMPTY),
    }
    assert to_gbnf_text(rules, "root") == (
        'root ::= "a\\"\\\\\\n" [a-z\\-\\]]* x-1\nx-1 ::= .{2,3} | ()\n'
    )


@FAST
@given(st.data())
def test_sentences_avoid_unmatchable_alternatives(data: st.DataObject) -> None:
    rules = {"root": rep(alt(cls(("\ud800", "\udfff")), cls(("\x00", "\U0010ffff"), negated=True),
                              gast.TokenRef(3), lit("a")), 0, 3)}  # fmt: skip
    sentence = data.draw(sentences(rules, "root"))
    assert sentence == b"a" * len(sentence)
    assert Reference(rules, "root").accepts(sentence)


# -- llama.cpp's own grammars (parsed by the real parser; skipped when the asset is unavailable) -

LLAMA_CASES = {
    "json": (
        ['{}', '{"k": true}', '{"a":1}', '{"a": [1, 2.5, "x\\u00e9"], "b": {"c": null}}',
         '{"x": 1e19}', '{\n  "s": "é日😀"}'],
        ['[1]', '{"x": 1e10}', '{"a": 01}', '{"a": "\x01"}', '{"a":  1}', '{"a": 1,}', '{'],
    ),
    "arithmetic": (
        ["1+2=3\n", "(a +b)*c = x\n", "x=1\ny=2\n"],
        ["1+2=3", "=3\n", "1+=3\n", "A=1\n", "a + b=1\n"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(LLAMA_CASES))
def test_llama_cpp_grammars(llama_grammars: dict[str, Path], name: str) -> None:
    grammar = gs.Grammar.from_gbnf(llama_grammars[name].read_bytes())
    oracle = Reference.from_grammar(grammar)
    accepted, rejected = LLAMA_CASES[name]
    for text in accepted:
        assert oracle.accepts(text.encode()), text
    for text in rejected:
        assert not oracle.accepts(text.encode()), text
