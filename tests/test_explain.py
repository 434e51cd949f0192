"""``Matcher.explain``: refused texts from the error tables, with the position, the expected bytes
(and tokens) and the JSON pointer checked by hand; then every dead input of the matcher table
checked against a plain byte-by-byte reference; the matcher's state is never changed."""

from __future__ import annotations

from pathlib import Path

import pytest

import gbnf_sampler as gs
from assets import llama_cpp_grammars, require
from gbnf_sampler.explain import describe_bytes, json_pointer
from test_matcher import CASES, b

R = list[tuple[int, int]]


def ch(c: str) -> tuple[int, int]:
    return (ord(c), ord(c))


def span(lo: str, hi: str) -> tuple[int, int]:
    return (ord(lo), ord(hi))


# (grammar, text, offset, byte or None, line, column, expected byte ranges, can end there)
BYTE_CASES: list[tuple[str, bytes, int, int | None, int, int, R, bool]] = [
    ('root ::= "abc"', b"abd", 2, ord("d"), 1, 3, [ch("c")], False),
    ('root ::= "abc"', b"abcd", 3, ord("d"), 1, 4, [], True),
    ('root ::= "abc"', b"ab", 2, None, 1, 3, [ch("c")], False),
    ('root ::= "a" | "bc"', b"c", 0, ord("c"), 1, 1, [span("a", "b")], False),
    ("root ::= [a-c]", b"d", 0, ord("d"), 1, 1, [span("a", "c")], False),
    (
        r'root ::= "\"" [^"\\]* "\""',
        b'"\\',
        1,
        0x5C,
        1,
        2,
        [(0x00, 0x5B), (0x5D, 0x7F), (0xC2, 0xF4)],
        False,
    ),
    ('root ::= "a\\nb" "c"', b"a\nbd", 3, ord("d"), 2, 2, [ch("c")], False),
    ("root ::= .", b"\xe0\x9f\xbf", 1, 0x9F, 1, 2, [(0xA0, 0xBF)], False),
    ('root ::= "x" [0-9]+', "é9".encode(), 0, 0xC3, 1, 1, [ch("x")], False),
    ('root ::= "\u00e9" [0-9]+', "éx".encode(), 2, ord("x"), 1, 2, [span("0", "9")], False),
]


@pytest.mark.parametrize(
    ("grammar", "text", "offset", "byte", "line", "column", "expected", "can_end"), BYTE_CASES
)
def test_byte_level_table(
    grammar: str,
    text: bytes,
    offset: int,
    byte: int | None,
    line: int,
    column: int,
    expected: R,
    can_end: bool,
) -> None:
    e = gs.Matcher(gs.Grammar.from_gbnf(grammar)).explain(text)
    assert (e.offset, e.byte, e.line, e.column) == (offset, byte, line, column)
    assert list(e.expected) == expected
    assert e.can_end == can_end
    assert e.accepted == (byte is None) and not e.complete
    assert e.json_pointer is None and e.expected_tokens is None


def test_accepted_text() -> None:
    e = gs.Matcher(gs.Grammar.from_gbnf('root ::= "ab"')).explain(b"ab")
    assert e.accepted and e.complete and e.offset == 2 and e.expected == ()
    assert str(e) == "the grammar accepts the whole text"


SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "inner": {
            "type": "object",
            "properties": {"a": {"type": "boolean"}, "b": {"type": "null"}},
            "additionalProperties": False,
        },
    },
    "required": ["n"],
    "additionalProperties": False,
}

# (text, offset, pointer, expected byte ranges) with compact whitespace
JSON_CASES: list[tuple[bytes, int, str, R]] = [
    (b'{"n":1.5}', 6, "/n", [ch(","), span("0", "9"), ch("}")]),
    (b'{"n":1,"tags":["a",2]}', 19, "/tags/1", [ch('"')]),
    (b'{"n":1,"inner":{"c":1}}', 17, "/inner", [span("a", "b")]),
    (b'{"n":1,"inner":{"a":nul', 20, "/inner/a", [ch("f"), ch("t")]),
    (b'{"x":1}', 2, "", [ch("n")]),
]


@pytest.mark.parametrize(("text", "offset", "pointer", "expected"), JSON_CASES)
def test_schema_pointer_table(text: bytes, offset: int, pointer: str, expected: R) -> None:
    grammar = gs.Grammar.from_json_schema(SCHEMA, whitespace="compact")
    e = gs.Matcher(grammar).explain(text)
    assert (e.offset, e.json_pointer, list(e.expected)) == (offset, pointer, expected)
    assert f"JSON value: {pointer or '/'}" in str(e)


def test_json_pointer_reader() -> None:
    assert json_pointer(b'{"a": [1, {"b~/c": "x') == "/a/1/b~0~1c"
    assert json_pointer(b'{"a": [1, 2], "') == ""
    assert json_pointer(b"[[], [3, ") == "/1/1"
    assert json_pointer(b'{"k\\"q": ') == '/k"q'


@pytest.fixture(scope="module")
def toy() -> gs.CompiledGrammar:
    vocab = gs.Vocab([b"a", b"b", b"ab", b"c", b"<eos>"], eos_ids=[4])
    return gs.compile(gs.Grammar.from_gbnf('root ::= "ab" "c"'), vocab)


def test_token_level_token_ids(toy: gs.CompiledGrammar) -> None:
    m = gs.Matcher(toy)
    e = m.explain([2, 2])  # "ab" "ab": the second token's first byte is refused
    assert (e.token_index, e.offset, e.byte) == (1, 2, ord("a"))
    assert list(e.expected) == [ch("c")] and e.expected_tokens == (3,)
    e = m.explain([0, 3])  # "a" "c"
    assert (e.token_index, e.offset, e.byte) == (1, 1, ord("c"))
    assert e.expected_tokens == (1,)
    e = m.explain([2, 3, 4])
    assert e.accepted and e.token_index is None


def test_token_level_bytes(toy: gs.CompiledGrammar) -> None:
    e = gs.Matcher(toy).explain(b"abx")
    assert (e.offset, e.byte, e.expected_tokens) == (2, ord("x"), (3,))


def test_explain_leaves_the_matcher_unchanged(toy: gs.CompiledGrammar) -> None:
    m = gs.Matcher(toy)
    assert m.accept_token(0)
    before = (m.rollback_available, m.state_size, list(m.allowed_tokens()))
    m.explain([1, 1])
    m.explain(b"zz")
    assert (m.rollback_available, m.state_size, list(m.allowed_tokens())) == before
    assert m.accept_token(1) and m.accept_token(3) and m.can_terminate()


def test_bad_arguments() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "a"'))
    with pytest.raises(TypeError):
        m.explain("a")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        m.explain([1, 2])


def test_describe_bytes() -> None:
    text = describe_bytes([(0x22, 0x22), (0x30, 0x39), (0xC2, 0xDF), (0x80, 0xBF)])
    assert text == (
        "'\"', '0'-'9', 0xC2-0xDF (starts characters U+0080-U+07FF), "
        "0x80-0xBF (continues a UTF-8 character)"
    )


def _dead_inputs() -> list[tuple[str, bytes]]:
    return [(grammar, b(dead)) for grammar, _, _, deads in CASES for dead in deads]


@pytest.mark.parametrize(("grammar", "dead"), _dead_inputs())
def test_every_dead_input_against_a_reference(grammar: str, dead: bytes) -> None:
    g = gs.Grammar.from_gbnf(grammar)
    e = gs.Matcher(g).explain(dead)

    def fits(data: bytes) -> bool:
        return gs.Matcher(g).accept_bytes(data)

    prefix = dead[: e.offset]
    assert fits(prefix)
    if e.offset < len(dead):
        assert not fits(dead[: e.offset + 1]) and e.byte == dead[e.offset]
    else:
        assert not e.complete
    wanted = [x for lo, hi in e.expected for x in range(lo, hi + 1)]
    assert wanted == [x for x in range(256) if fits(prefix + bytes([x]))]


def test_rule_path_of_a_nested_json_value() -> None:
    text = (Path(require(llama_cpp_grammars)["json"])).read_text(encoding="utf-8")
    e = gs.Matcher(gs.Grammar.from_gbnf(text)).explain(b'{"a": [1, 2, tru]}')
    # "tru" is a value inside an array inside the object's value.
    assert e.rule_path == ("root", "object", "value", "array", "value")
    assert "in rule: root > object > value > array > value" in str(e)


def test_rule_stacks_one_per_open_position() -> None:
    g = gs.Grammar.from_gbnf('root ::= "<" tag ">" | "<" num ">"\ntag ::= [a-z]+\nnum ::= [0-9]+')
    m = gs.Matcher(g)
    assert m.accept_bytes(b"<")
    assert sorted(m.rule_stacks()) == [["root", "num"], ["root", "tag"]]
    # After "<a": another letter (read in tag, inlined into root) or the ">" of root itself.
    assert set(m.explain(b"a!").rule_paths) == {("root",), ("root", "tag")}
    assert m.rule_stacks(limit=1) in ([["root", "num"]], [["root", "tag"]])
    with pytest.raises(ValueError):
        m.rule_stacks(limit=0)
