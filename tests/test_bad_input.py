"""Bad input at every API surface: each row names the call, the exception type and a fragment of
its message. No input may crash the process; the rows pin down that each is a clear error."""

from __future__ import annotations

import gc
import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs
from vocab_fixtures import BYTE_EOS_ID, byte_vocab

Row = tuple[str, Callable[[], object], type[BaseException], str]

VOCAB = byte_vocab()  # 257 tokens: bytes 0..255, EOS 256
WORDS = gs.bitmask_words(VOCAB.size)
GRAMMAR = gs.Grammar.from_gbnf('root ::= "ab" [a-z]*')
COMPILED = gs.compile(GRAMMAR, VOCAB)


def token_matcher() -> gs.Matcher:
    return gs.Matcher(COMPILED)


def byte_matcher() -> gs.Matcher:
    return gs.Matcher(GRAMMAR)


def rows(table: list[Row]) -> Any:
    return pytest.mark.parametrize(
        ("call", "error", "fragment"), [r[1:] for r in table], ids=[r[0] for r in table]
    )


def check(call: Callable[[], object], error: type[BaseException], fragment: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value), f"{fragment!r} not in {str(info.value)!r}"


# --- token ids -----------------------------------------------------------------------------------
TOKEN_IDS: list[Row] = [
    ("negative", lambda: token_matcher().accept_token(-1), ValueError, "-1 is out of range"),
    ("vocab size", lambda: token_matcher().accept_token(257), ValueError, "size 257"),
    ("int32 overflow", lambda: token_matcher().accept_token(2**31), ValueError, "out of range"),
    ("huge", lambda: token_matcher().accept_token(2**70), ValueError, "out of range"),
    ("huge negative", lambda: token_matcher().accept_token(-(2**70)), ValueError, "out of range"),
    ("numpy uint64", lambda: token_matcher().accept_token(np.uint64(2**63)), ValueError, "range"),
    ("float", lambda: token_matcher().accept_token(1.0), TypeError, "got float"),
    ("str", lambda: token_matcher().accept_token("1"), TypeError, "got str"),
    ("None", lambda: token_matcher().accept_token(None), TypeError, "got NoneType"),
    ("bool", lambda: token_matcher().accept_token(True), TypeError, "got bool"),
    ("byte level", lambda: byte_matcher().accept_token(1), TypeError, "token-level matcher"),
    (
        "batch negative",
        lambda: gs.accept_tokens([token_matcher()], [-5]),
        ValueError,
        "token_ids[0] -5 is out of range",
    ),
    (
        "batch huge",
        lambda: gs.accept_tokens([token_matcher()], np.array([2**40])),
        ValueError,
        "out of range",
    ),
    (
        "batch float",
        lambda: gs.accept_tokens([token_matcher()], [1.5]),
        TypeError,
        "token_ids[0] must be an int, got float",
    ),
    (
        "batch str",
        lambda: gs.accept_tokens([token_matcher()], ["a"]),
        TypeError,
        "got str",
    ),
    (
        "batch length",
        lambda: gs.accept_tokens([token_matcher()], [1, 2]),
        ValueError,
        "1 matchers but 2 token ids",
    ),
    (
        "batch byte matcher",
        lambda: gs.accept_tokens([byte_matcher()], [1]),
        TypeError,
        "not a token-level Matcher",
    ),
    ("rollback negative", lambda: token_matcher().rollback(-1), ValueError, "got -1"),
    ("rollback huge", lambda: token_matcher().rollback(2**64), ValueError, "2**32"),
    ("rollback float", lambda: token_matcher().rollback(1.0), TypeError, "got float"),
    ("rollback None", lambda: token_matcher().rollback(None), TypeError, "NoneType"),
    ("rollback past history", lambda: token_matcher().rollback(1), ValueError, "exceeds"),
]


@rows(TOKEN_IDS)
def test_token_ids(call: Callable[[], object], error: type[BaseException], fragment: str) -> None:
    check(call, error, fragment)


# --- bitmasks and logits -------------------------------------------------------------------------
def bitmask(shape: tuple[int, ...], dtype: Any = np.int32, order: str = "C") -> np.ndarray:
    return np.zeros(shape, dtype=dtype, order=order)


def read_only() -> np.ndarray:
    out = bitmask((1, WORDS))
    out.setflags(write=False)
    return out


FILL_MASK: list[Row] = [
    ("int64", lambda: token_matcher().fill_mask(bitmask((1, WORDS), np.int64)), TypeError, "int64"),
    (
        "uint32",
        lambda: token_matcher().fill_mask(bitmask((1, WORDS), np.uint32)),
        TypeError,
        "uint32",
    ),
    ("big endian", lambda: token_matcher().fill_mask(bitmask((WORDS,), ">i4")), TypeError, ">i4"),
    ("list", lambda: token_matcher().fill_mask([[0] * WORDS]), TypeError, "got list"),
    ("None", lambda: token_matcher().fill_mask(None), TypeError, "NoneType"),
    (
        "too narrow",
        lambda: token_matcher().fill_mask(bitmask((1, WORDS - 1))),
        ValueError,
        "at least 9",
    ),
    ("zero width", lambda: token_matcher().fill_mask(bitmask((1, 0))), ValueError, "at least 9"),
    ("3-D", lambda: token_matcher().fill_mask(bitmask((1, WORDS, 1))), ValueError, "1-D or 2-D"),
    (
        "strided words",
        lambda: token_matcher().fill_mask(bitmask((1, 2 * WORDS))[:, ::2]),
        ValueError,
        "contiguous",
    ),
    (
        "Fortran order",
        lambda: token_matcher().fill_mask(bitmask((2, WORDS), order="F")),
        ValueError,
        "contiguous",
    ),
    ("read-only", lambda: token_matcher().fill_mask(read_only()), ValueError, "read-only"),
    ("no rows", lambda: token_matcher().fill_mask(bitmask((0, WORDS))), ValueError, "0 rows"),
    (
        "index past rows",
        lambda: token_matcher().fill_mask(bitmask((1, WORDS)), 1),
        ValueError,
        "1 rows",
    ),
    (
        "negative index",
        lambda: token_matcher().fill_mask(bitmask((1, WORDS)), -1),
        ValueError,
        "-1",
    ),
    (
        "float index",
        lambda: token_matcher().fill_mask(bitmask((1, WORDS)), 0.0),
        TypeError,
        "index must be an int",
    ),
    (
        "byte level",
        lambda: byte_matcher().fill_mask(bitmask((1, WORDS))),
        TypeError,
        "token-level matcher",
    ),
]

FILL_MASKS: list[Row] = [
    ("1-D", lambda: gs.fill_masks([token_matcher()], bitmask((WORDS,))), ValueError, "2-D"),
    (
        "int64",
        lambda: gs.fill_masks([token_matcher()], bitmask((1, WORDS), np.int64)),
        TypeError,
        "int64",
    ),
    ("not an array", lambda: gs.fill_masks([token_matcher()], [[0]]), TypeError, "got list"),
    (
        "too few rows",
        lambda: gs.fill_masks([token_matcher()] * 1 + [token_matcher()], bitmask((1, WORDS))),
        ValueError,
        "1 rows for 2 matchers",
    ),
    (
        "no rows",
        lambda: gs.fill_masks([token_matcher()], bitmask((0, WORDS))),
        ValueError,
        "0 rows",
    ),
    (
        "strided",
        lambda: gs.fill_masks([token_matcher()], bitmask((2, 2 * WORDS))[:, ::2]),
        ValueError,
        "contiguous",
    ),
    (
        "too narrow",
        lambda: gs.fill_masks([token_matcher()], bitmask((1, 3))),
        ValueError,
        "at least 9",
    ),
    ("not a matcher", lambda: gs.fill_masks([None], bitmask((1, WORDS))), TypeError, "matchers[0]"),
    ("same matcher twice", lambda: _same_twice(), ValueError, "same object"),
]


def _same_twice() -> None:
    m = token_matcher()
    gs.fill_masks([m, m], bitmask((2, WORDS)))


LOGITS = np.zeros((1, VOCAB.size), np.float32)
MASK = gs.allocate_bitmask(1, VOCAB.size)

APPLY_BITMASK: list[Row] = [
    ("float64 logits", lambda: gs.apply_bitmask(np.zeros((1, 257)), MASK), TypeError, "float64"),
    (
        "int logits",
        lambda: gs.apply_bitmask(np.zeros((1, 257), np.int32), MASK),
        TypeError,
        "int32",
    ),
    (
        "big endian logits",
        lambda: gs.apply_bitmask(np.zeros((1, 257), ">f4"), MASK),
        TypeError,
        "native",
    ),
    ("list logits", lambda: gs.apply_bitmask([0.0] * 257, MASK), TypeError, "numpy.ndarray"),
    ("None logits", lambda: gs.apply_bitmask(None, MASK), TypeError, "NoneType"),
    (
        "3-D logits",
        lambda: gs.apply_bitmask(np.zeros((1, 1, 257), np.float32), MASK),
        ValueError,
        "3-D",
    ),
    (
        "int64 bitmask",
        lambda: gs.apply_bitmask(LOGITS.copy(), MASK.astype(np.int64)),
        TypeError,
        "int32",
    ),
    (
        "batch mismatch",
        lambda: gs.apply_bitmask(np.zeros((2, 257), np.float32), MASK),
        ValueError,
        "batch mismatch",
    ),
    (
        "read-only logits",
        lambda: gs.apply_bitmask(np.broadcast_to(LOGITS, (1, 257)), MASK),
        ValueError,
        "writeable",
    ),
    (
        "vocab_size negative",
        lambda: gs.apply_bitmask(LOGITS.copy(), MASK, vocab_size=-1),
        ValueError,
        ">= 0",
    ),
    (
        "vocab_size huge",
        lambda: gs.apply_bitmask(LOGITS.copy(), MASK, vocab_size=2**70),
        ValueError,
        "too narrow",
    ),
    (
        "vocab_size float",
        lambda: gs.apply_bitmask(LOGITS.copy(), MASK, vocab_size=3.0),
        TypeError,
        "int or None",
    ),
    (
        "index out of range",
        lambda: gs.apply_bitmask(LOGITS.copy(), MASK, indices=[1]),
        ValueError,
        "out of range",
    ),
    (
        "index negative",
        lambda: gs.apply_bitmask(LOGITS.copy(), MASK, indices=[-1]),
        ValueError,
        "out of range",
    ),
    (
        "index float",
        lambda: gs.apply_bitmask(LOGITS.copy(), MASK, indices=[0.5]),
        TypeError,
        "ints",
    ),
    (
        "index huge",
        lambda: gs.apply_bitmask(LOGITS.copy(), MASK, indices=[2**70]),
        TypeError,
        "ints",
    ),
    ("bitmask_words huge", lambda: gs.bitmask_words(2**70), ValueError, "below 2**63"),
    ("bitmask_words negative", lambda: gs.bitmask_words(-1), ValueError, ">= 0"),
    ("allocate negative batch", lambda: gs.allocate_bitmask(-1, 3), ValueError, ">= 0"),
]


@rows(FILL_MASK + FILL_MASKS + APPLY_BITMASK)
def test_bitmasks_and_logits(
    call: Callable[[], object], error: type[BaseException], fragment: str
) -> None:
    check(call, error, fragment)


def test_huge_vocab_size_words_do_not_overflow() -> None:
    assert gs.bitmask_words(2**63 - 1) == 2**58


HAVE_TORCH = importlib.util.find_spec("torch") is not None


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (optional extra)")
def test_torch_bad_tensors() -> None:
    import torch

    from gbnf_sampler import torch as gst

    mask = gst.allocate_bitmask(1, VOCAB.size)
    logits = torch.zeros(1, 257)
    table: list[tuple[Callable[[], object], type[BaseException], str]] = [
        (lambda: gst.apply_bitmask(logits.double(), mask), TypeError, "float64"),
        (lambda: gst.apply_bitmask(logits, mask.long()), TypeError, "int32"),
        (
            lambda: gst.apply_bitmask(np.zeros((1, 257), np.float32), mask),
            TypeError,
            "torch.Tensor",
        ),
        (lambda: gst.apply_bitmask(torch.zeros(1, 1, 257), mask), ValueError, "1-D or 2-D"),
        (lambda: gst.apply_bitmask(torch.zeros(2, 257), mask), ValueError, "batch mismatch"),
        (lambda: gst.apply_bitmask(logits, mask, indices=[3]), ValueError, "out of range"),
        (lambda: gst.apply_bitmask(logits, mask, indices=[0.5]), TypeError, "ints"),
        (lambda: gst.apply_bitmask(logits, mask, vocab_size=2**40), ValueError, "too narrow"),
        # CPU int32 tensors are bitmasks like numpy arrays (tests/test_bitmask_arrays.py).
        (lambda: token_matcher().fill_mask(mask.long()), TypeError, "dtype int32, got int64"),
    ]
    for call, error, fragment in table:
        check(call, error, fragment)


# --- vocabularies --------------------------------------------------------------------------------
VOCABS: list[Row] = [
    ("empty", lambda: gs.Vocab([], []), ValueError, "empty (size 0)"),
    ("EOS past the end", lambda: gs.Vocab([b"a"], [1]), ValueError, "token id 1 is out of range"),
    ("EOS negative", lambda: gs.Vocab([b"a"], [-1]), ValueError, "out of range"),
    ("EOS huge", lambda: gs.Vocab([b"a"], [2**70]), ValueError, "out of range"),
    ("EOS float", lambda: gs.Vocab([b"a"], [0.0]), TypeError, "got float"),
    ("EOS None", lambda: gs.Vocab([b"a"], None), TypeError, "sequence of ints"),
    ("special past the end", lambda: gs.Vocab([b"a"], [], [5]), ValueError, "out of range"),
    ("str tokens", lambda: gs.Vocab(["a"], []), TypeError, "tokens[0] must be bytes"),
    ("bytes as token list", lambda: gs.Vocab(b"abc", []), TypeError, "list of bytes"),
    ("None tokens", lambda: gs.Vocab(None, []), TypeError, "list of bytes"),
    ("token_bytes out of range", lambda: VOCAB.token_bytes(257), ValueError, "out of range"),
    (
        "missing GGUF",
        lambda: gs.Vocab.from_gguf("/nonexistent/model.gguf"),
        FileNotFoundError,
        "GGUF",
    ),
]


@rows(VOCABS)
def test_vocabularies(
    call: Callable[[], object], error: type[BaseException], fragment: str
) -> None:
    check(call, error, fragment)


def test_vocabulary_of_only_an_empty_token_allows_nothing() -> None:
    vocab = gs.Vocab([b""], [])
    m = gs.Matcher(gs.compile(gs.Grammar.from_gbnf('root ::= "a"'), vocab))
    assert m.allowed_tokens().tolist() == []
    assert not m.accept_token(0)


# --- matchers outliving their owners -------------------------------------------------------------
def test_token_matcher_outlives_grammar_compiled_and_vocab() -> None:
    vocab = byte_vocab()
    compiled = gs.compile(gs.Grammar.from_gbnf('root ::= "ab" [a-z]*'), vocab, cache=False)
    m = gs.Matcher(compiled)
    core = gs._core.TokenMatcher(compiled._native)  # no Python reference to any owner
    del vocab, compiled
    gc.collect()
    for matcher in (m._core, core):
        row = gs.allocate_bitmask(1, 257)
        matcher.fill_mask(row, 0)
        assert matcher.accept_token(ord("a")) and matcher.accept_token(ord("b"))
        assert matcher.can_terminate() and matcher.fork().accept_token(ord("z"))


def test_byte_matcher_outlives_grammar_and_its_automaton() -> None:
    grammar = gs.Grammar.from_gbnf('root ::= "ab" [a-z]*')
    m = gs.Matcher(grammar)
    del grammar  # the Grammar object held the automaton; the matcher's reference must keep it
    gc.collect()
    assert m.accept_bytes(b"abc") and m.can_terminate()
    assert m.fork().accept_bytes(b"d")


# --- text: surrogates, NUL bytes, repetition counts ----------------------------------------------
TEXT: list[Row] = [
    (
        "raw surrogate in GBNF",
        lambda: gs.Grammar.from_gbnf('root ::= "\ud800"'),
        gs.GrammarError,
        "not valid UTF-8",
    ),
    (
        "surrogate in a class",
        lambda: gs.Grammar.from_gbnf("root ::= [\ud800-\udfff]"),
        gs.GrammarError,
        "UTF-8",
    ),
    (
        "surrogate in a rule name",
        lambda: gs.Grammar.from_gbnf('ro\udcffot ::= "a"'),
        gs.GrammarError,
        "UTF-8",
    ),
    (
        "surrogate root name",
        lambda: gs.Grammar.from_gbnf('root ::= "a"', root="\ud800"),
        gs.GrammarError,
        "no rule named",
    ),
    (
        "code point past U+10FFFF",
        lambda: gs.Grammar.from_gbnf('root ::= "\\U00110000"'),
        gs.GrammarError,
        "10FFFF",
    ),
    (
        "pattern of surrogates",
        lambda: gs.Grammar.from_json_schema({"type": "string", "pattern": "\ud800+"}),
        gs.SchemaError,
        "no JSON value",
    ),
    ("regex empty class", lambda: gs.Grammar.from_regex("a[]"), gs.SchemaError, "matches nothing"),
    (
        "NUL in a rule name",
        lambda: gs.Grammar.from_gbnf('ro\x00ot ::= "a"'),
        gs.GrammarError,
        "expected '::='",
    ),
    (
        "NUL in the root name",
        lambda: gs.Grammar.from_gbnf('root ::= "a"', root="ro\x00ot"),
        gs.GrammarError,
        "no rule named",
    ),
    (
        "repetition past the limit",
        lambda: gs.Grammar.from_gbnf('root ::= "a"{1000001}'),
        gs.GrammarError,
        "larger than 1000000",
    ),
    (
        "repetition past 2**64",
        lambda: gs.Grammar.from_gbnf('root ::= "a"{99999999999999999999}'),
        gs.GrammarError,
        "larger than",
    ),
    (
        "repetition bounds reversed",
        lambda: gs.Grammar.from_gbnf('root ::= "a"{5,3}'),
        gs.GrammarError,
        "greater than",
    ),
    (
        "regex repetition past the limit",
        lambda: gs.Grammar.from_regex("a{99999999999}"),
        gs.SchemaError,
        "above 1000000",
    ),
    (
        "schema minLength past the limit",
        lambda: gs.Grammar.from_json_schema({"type": "string", "minLength": 10**12}),
        gs.GrammarError,
        "repetition bound",
    ),
    (
        "regex nested too deep",
        lambda: gs.Grammar.from_regex("(" * 300 + "a" + ")" * 300),
        gs.SchemaError,
        "nested deeper than 64",
    ),
    (
        "schema nested too deep",
        lambda: gs.Grammar.from_json_schema(_deep_schema(300)),
        gs.SchemaError,
        "deeper than 128",
    ),
    (
        "schema JSON text too deep",
        lambda: gs.Grammar.from_json_schema("[" * 100_000 + "]" * 100_000),
        gs.SchemaError,
        "not valid JSON",
    ),
    (
        "schema integer too long",
        lambda: gs.Grammar.from_json_schema('{"const": 1' + "0" * 5000 + "}"),
        gs.SchemaError,
        "not valid JSON",
    ),
    (
        "schema bytes not UTF-8",
        lambda: gs.Grammar.from_json_schema(b"\xe4\xe4"),
        gs.SchemaError,
        "not valid JSON",
    ),
]


def _deep_schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


@rows(TEXT)
def test_text_inputs(call: Callable[[], object], error: type[BaseException], fragment: str) -> None:
    check(call, error, fragment)


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (lambda: gs.Grammar.from_gbnf('root ::= "a\\x00b"'), b"a\x00b"),
        (lambda: gs.Grammar.from_gbnf('root ::= "a\x00b"'), b"a\x00b"),
        (lambda: gs.Grammar.from_choices(["a\x00b", "c"]), b"a\x00b"),
        (lambda: gs.Grammar.from_regex("a\x00b"), b"a\x00b"),
        (lambda: gs.Grammar.from_regex("a\\0b"), b"a\x00b"),
    ],
    ids=["escape", "raw", "choice", "regex raw", "regex escape"],
)
def test_nul_is_a_real_byte(make: Callable[[], gs.Grammar], text: bytes) -> None:
    m = gs.Matcher(make())
    assert m.accept_bytes(text) and m.can_terminate()
    assert not gs.Matcher(make()).accept_bytes(text.replace(b"\x00", b"0"))


def test_nul_in_a_schema_string_is_escaped() -> None:
    grammar = gs.Grammar.from_json_schema({"const": "a\x00b"})
    m = gs.Matcher(grammar)
    assert m.accept_bytes(b'"a\\u0000b"') and m.can_terminate()
    assert not gs.Matcher(grammar).accept_bytes(b'"a\x00b"')  # a raw control character is not JSON


def test_surrogate_escape_matches_its_three_bytes() -> None:
    # As in llama.cpp, whose decoder reads ED A0 80 as U+D800: the escape is a byte sequence.
    m = gs.Matcher(gs.Grammar.from_gbnf('root ::= "\\uD800"'))
    assert m.forced_bytes() == b"\xed\xa0\x80"


def test_surrogates_in_choices_and_consts_are_usable() -> None:
    m = gs.Matcher(gs.Grammar.from_choices(["\ud800", "b"]))
    assert m.accept_bytes(b"\xed\xa0\x80") and m.can_terminate()
    m = gs.Matcher(gs.Grammar.from_json_schema({"const": "\ud800"}))
    assert m.accept_bytes(b'"\\ud800"') and m.can_terminate()


# --- limits and wrong types everywhere -----------------------------------------------------------
def parse_with(**limits: Any) -> gs.Grammar:
    return gs.Grammar.from_gbnf('root ::= "a"{2} ("b")', limits=gs.GrammarLimits(**limits))


TYPES_AND_LIMITS: list[Row] = [
    ("limit negative", lambda: gs.GrammarLimits(max_rules=-1), ValueError, ">= 0, got -1"),
    ("limit float", lambda: gs.GrammarLimits(max_rules=1.5), TypeError, "got float"),
    ("limit None", lambda: gs.GrammarLimits(max_nodes=None), TypeError, "NoneType"),
    ("limit str", lambda: gs.GrammarLimits(max_rules="3"), TypeError, "got str"),
    ("limit too large", lambda: gs.GrammarLimits(max_rules=2**40), ValueError, "below 2**32"),
    (
        "limits as a dict",
        lambda: gs.Grammar.from_gbnf('root ::= "a"', limits={"max_rules": 3}),
        TypeError,
        "GrammarLimits",
    ),
    ("zero rules", lambda: parse_with(max_rules=0), gs.GrammarError, "more than 0 rules"),
    ("zero text", lambda: parse_with(max_text_bytes=0), gs.GrammarError, "limit of 0"),
    ("zero nesting", lambda: parse_with(max_nesting_depth=0), gs.GrammarError, "deeper than 0"),
    (
        "zero repetition",
        lambda: parse_with(max_repetition_bound=0),
        gs.GrammarError,
        "larger than 0",
    ),
    ("zero nodes", lambda: parse_with(max_nodes=0), gs.GrammarError, "more than 0 syntax nodes"),
    ("state size zero", lambda: gs.Matcher(GRAMMAR, max_state_size=0), ValueError, "[1, 2**32)"),
    (
        "rollback negative",
        lambda: gs.compile(GRAMMAR, VOCAB, max_rollback=-1),
        ValueError,
        "got -1",
    ),
    ("history negative", lambda: gs.Matcher(GRAMMAR, max_history_bytes=-1), ValueError, "got -1"),
    (
        "history float",
        lambda: gs.compile(GRAMMAR, VOCAB, max_history_bytes=1.0),
        TypeError,
        "float",
    ),
    (
        "state size str",
        lambda: gs.compile(GRAMMAR, VOCAB, max_state_size="1"),
        TypeError,
        "got str",
    ),
    ("gbnf None", lambda: gs.Grammar.from_gbnf(None), TypeError, "str or bytes"),
    ("gbnf float", lambda: gs.Grammar.from_gbnf(1.5), TypeError, "float"),
    (
        "root int",
        lambda: gs.Grammar.from_gbnf('root ::= "a"', root=1),
        TypeError,
        "root must be str",
    ),
    ("regex None", lambda: gs.Grammar.from_regex(None), TypeError, "pattern must be str"),
    ("regex bytes", lambda: gs.Grammar.from_regex(b"a"), TypeError, "pattern must be str"),
    ("schema None", lambda: gs.Grammar.from_json_schema(None), TypeError, "schema must be"),
    ("schema int", lambda: gs.Grammar.from_json_schema(1), TypeError, "not int"),
    (
        "schema holds a set",
        lambda: gs.Grammar.from_json_schema({"const": {1, 2}}),
        gs.SchemaError,
        "set is not a JSON value",
    ),
    (
        "schema keyword of the wrong type",
        lambda: gs.Grammar.from_json_schema({"properties": [1]}),
        gs.SchemaError,
        "properties must be an object",
    ),
    (
        "schema minimum null",
        lambda: gs.Grammar.from_json_schema({"allOf": [{"minimum": None}, {"minimum": 1}]}),
        gs.SchemaError,
        "minimum must be a number",
    ),
    (
        "schema format object",
        lambda: gs.Grammar.from_json_schema({"format": {}}),
        gs.SchemaError,
        "format must be a string",
    ),
    ("choices None", lambda: gs.Grammar.from_choices(None), TypeError, "list of strings"),
    ("choices str", lambda: gs.Grammar.from_choices("abc"), TypeError, "list of strings"),
    (
        "choices with None",
        lambda: gs.Grammar.from_choices(["a", None]),
        TypeError,
        "choices[1] must be a str",
    ),
    ("choices empty", lambda: gs.Grammar.from_choices([]), gs.SchemaError, "must not be empty"),
    ("compile a str", lambda: gs.compile('root ::= "a"', VOCAB), TypeError, "got str"),
    ("compile None vocab", lambda: gs.compile(GRAMMAR, None), TypeError, "got NoneType"),
    ("Matcher of None", lambda: gs.Matcher(None), TypeError, "got NoneType"),
    ("accept_bytes str", lambda: byte_matcher().accept_bytes("a"), TypeError, "encode"),
    ("accept_bytes int", lambda: byte_matcher().accept_bytes(1), TypeError, "got int"),
    ("Grammar()", lambda: gs.Grammar(None), TypeError, "from_gbnf"),
]


@rows(TYPES_AND_LIMITS)
def test_types_and_limits(
    call: Callable[[], object], error: type[BaseException], fragment: str
) -> None:
    check(call, error, fragment)


def test_eos_id_outside_the_vocabulary_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match=f"token id {BYTE_EOS_ID + 1} is out of range"):
        gs.Vocab([bytes([b]) for b in range(256)] + [b"<eos>"], [BYTE_EOS_ID + 1])
