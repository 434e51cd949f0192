"""Arrays with pairwise distinct items (``#@ distinct-items``, JSON Schema ``uniqueItems`` over
open-ended items): the byte-level language against ``jsonschema``'s uniqueItems, the masks
against brute force, history (rollback, fork, reset), the directive's errors and the schema
converter's choice of items."""

from __future__ import annotations

import json
import random
import warnings
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gbnf_sampler as gs
from assets import require, vocab_gguf
from gbnf_sampler.schema import SchemaWarning, schema_to_gbnf
from mask_helpers import assert_masks_exact, brute_force, mask_of

# A distinct array of any JSON values (nested arrays are plain ones).
ANY_ITEMS = r"""
root ::= items
items ::= "[" ws "]" | "[" ws value (ws "," ws value)* ws "]"
value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws "}" | "{" ws string ws ":" ws value (ws "," ws string ws ":" ws value)* ws "}"
array ::= "[" ws "]" | "[" ws value (ws "," ws value)* ws "]"
string ::= "\"" ( [a-zA-Z] | "\\" ["\\/bfnrt] | "\\u" [0-9a-fA-F]{4} )* "\""
number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [+-]? [0-9]+)?
ws ::= [ ]?
#@ distinct-items items
"""

UNIQUE = jsonschema.Draft202012Validator({"uniqueItems": True})


def accepts(grammar: gs.Grammar, text: str) -> bool:
    m = gs.Matcher(grammar)
    return bool(m.accept_bytes(text.encode())) and bool(m.can_terminate())


def distinct(text: str) -> bool:
    return UNIQUE.is_valid(json.loads(text))


def _exact_distinct(schema: dict[str, Any], **options: Any) -> gs.Grammar:
    """The schema's grammar, compiled with no SchemaWarning and kept distinct by the matcher."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchemaWarning)
        text = schema_to_gbnf(schema, strict=True, **options)
    assert "#@ distinct-items" in text
    return gs.Grammar.from_gbnf(text)


def _random_arrays(rng: random.Random, pool: list[str], count: int) -> Iterator[str]:
    """`count` arrays of 0 to 4 items drawn from `pool` (texts)."""
    for _ in range(count):
        yield "[" + ",".join(rng.choice(pool) for _ in range(rng.randint(0, 4))) + "]"


# Values with several spellings each: numbers (1, 1.0, 1e0, 10e-1), escapes, key orders,
# repeated keys, nested containers.
SPELLINGS = [
    ["1", "1.0", "1e0", "10e-1", "1.00"],
    ["0", "-0", "0.0", "-0.0", "0e5"],
    ["2", "2.5", "25e-1"],
    ['"a"', '"\\u0061"', '"\\u0041"', '"A"'],
    ['"ab"', '"a\\u0062"', '"b"'],
    ['"\\ud83d\\ude00"', '"\\uD83D\\uDE00"', '"\\ud83d"'],
    ["true", "false", "null"],
    ['{"a":1,"b":2}', '{"b":2,"a":1}', '{"a":1.0,"b":2}', '{"a":1,"a":2,"b":2}', '{"a":2,"b":2}'],
    ["[1,2]", "[2,1]", "[1.0,2]", "[]", "[[]]"],
    ["1e400", "2e400", "-1e400", "1e-400", "0.1", "0.10000000000000001"],
    ["10000000000000000000000", "1e22", "100000000000000000000001", "1e23"],
]
ATOMS = [s for group in SPELLINGS for s in group]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ATOMS), max_size=5), st.sampled_from(["", " "]))
def test_byte_language_is_distinct_items(items: list[str], gap: str) -> None:
    grammar = gs.Grammar.from_gbnf(ANY_ITEMS)
    text = "[" + ("," + gap).join(items) + "]"
    assert accepts(grammar, text) == distinct(text), text


def test_refused_at_the_byte_that_closes_the_duplicate() -> None:
    grammar = gs.Grammar.from_gbnf(ANY_ITEMS)
    # (text, where the duplicate closes, a continuation that makes the item new instead)
    for text, cut, other in [
        ('["a","\\u0061"]', len('["a","\\u0061'), 'b"]'),  # a string: its closing quote
        ("[true,true]", len("[true,"), "false]"),  # a literal: its first letter decides it
        ("[null,false,null]", len("[null,false,"), "true]"),
        ('[{"a":1},{"a":1.0}]', len('[{"a":1},{"a":1.0'), ',"b":2}]'),  # an object: its brace
        ("[1,1.0]", len("[1,1.0"), "1]"),  # a number: the byte after it
        ("[1,1.0 ]", len("[1,1.0"), "5 ]"),
    ]:
        m = gs.Matcher(grammar)
        assert m.accept_bytes(text[:cut].encode()), text
        assert not m.accept_bytes(text[cut:].encode()), text
        assert not m.accept_bytes(text[cut].encode()), text
        if other is not None:  # the refusals left the state as it was
            assert m.accept_bytes(other.encode()) and m.can_terminate(), text


def test_rollback_fork_and_reset_keep_the_items() -> None:
    grammar = gs.Grammar.from_gbnf(ANY_ITEMS)
    m = gs.Matcher(grammar)
    assert m.accept_bytes(b'["a",')
    assert m.accept_bytes(b'"b",')
    assert not m.fork().accept_bytes(b'"a"')
    assert not m.fork().accept_bytes(b'"b"')
    m.rollback(1)  # the "b" item is forgotten
    assert m.fork().accept_bytes(b'"b"]')
    assert not m.fork().accept_bytes(b'"a"')
    other = m.fork()
    assert other.accept_bytes(b'"c"]')
    assert m.accept_bytes(b'"c",')  # the fork's items are its own
    assert not m.fork().accept_bytes(b'"c"')
    m.reset()
    assert m.accept_bytes(b'["c","a","b"]')
    assert m.can_terminate()


def test_nested_distinct_arrays_are_kept_apart() -> None:
    grammar = gs.Grammar.from_gbnf(
        r"""
root ::= outer
outer ::= "[" inner ("," inner)* "]"
inner ::= "[" "]" | "[" str ("," str)* "]"
str ::= "\"" [a-c]* "\""
#@ distinct-items outer inner
"""
    )
    for text in ['[["a"],["b"]]', '[["a","b"],["b","a"]]', '[["a"],["a","b"]]', '[[],[""]]']:
        assert accepts(grammar, text), text
    for text in ['[["a","a"]]', '[["a"],["a"]]', '[["a","b"],["b"],["a","b"]]']:
        assert not accepts(grammar, text), text


def _walk(grammar: gs.Grammar, vocab: gs.Vocab, seed: int, steps: int) -> None:
    compiled = gs.compile(grammar, vocab)
    m = gs.Matcher(compiled)
    rng = random.Random(seed)
    for _ in range(steps):
        allowed = assert_masks_exact(m, vocab.size)
        assert allowed, "no token allowed: a dead end"
        normal = [t for t in allowed if not vocab.is_eos(t)]
        if not normal:
            break
        assert m.accept_token(rng.choice(normal))


def _toy_vocab() -> gs.Vocab:
    pieces = [
        *'[]{},:"abc 01.e-',
        '"a"',
        '"a',
        'a"',
        '",',
        '"]',
        '","',
        '"a","a"',
        '"a"]',
        '"},{"',
        '{"a":',
        "1,",
        "1]",
        ".0",
        "true",
        "tru",
        "false",
        "f",
        "alse",
        "n",
        "ull",
        *"rusl",  # every literal spellable letter by letter
        "0",
        "2",
        "10",
        " ",
        "e,",
        "e]",
        "null",
        "\\u0061",
        "\\",
        "u0061",
        '["a"',
        "[[",
        "]]",
        "],[",
    ]
    tokens = [p.encode() for p in dict.fromkeys(pieces)] + [b"</s>"]
    return gs.Vocab(tokens, eos_ids=[len(tokens) - 1])


@pytest.mark.parametrize("seed", range(12))
def test_masks_equal_brute_force_on_a_toy_vocabulary(seed: int) -> None:
    _walk(gs.Grammar.from_gbnf(ANY_ITEMS), _toy_vocab(), seed, 40)


# Closed objects (schema order) whose last open-ended member is followed only by required
# single values: the value is settled when that member ends.
CLOSED_LAST_OPEN = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"a": {"type": "string"}},
}
CLOSED_SETTLING = [
    CLOSED_LAST_OPEN,
    {
        "type": "object",
        "additionalProperties": False,
        "properties": {"a": {"type": "string"}, "b": {"const": "c"}},
        "required": ["a", "b"],
    },
    {
        "type": "object",
        "additionalProperties": False,
        "properties": {"a": {"enum": ["a", "b"]}, "b": {"type": "string"}},
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
    },
    {  # exactly one of "a", "b", both before the open "c"
        "type": "object",
        "additionalProperties": False,
        "properties": {"a": {"const": "a"}, "b": {"const": "b"}, "c": {"type": "string"}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
    },
    {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "a": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"b": {"type": "string"}},
                "required": ["b"],
            }
        },
        "required": ["a"],
    },
]
DEAD_END_ITEMS = [
    {"anyOf": [{"type": "string"}, {"type": "object"}]},
    {"type": "integer"},
    {"type": "number", "maximum": 1},
    {"type": ["integer", "null", "string"], "maxLength": 1},
    {"enum": [None, True, "a", 0, 1, 2, 10, 20, "ab", "b", "ba", "c"]},  # can run out
    {"anyOf": [{"type": "string", "maxLength": 1}, {"type": "object"}]},
    {"anyOf": [{"enum": [1, "a", None]}, {"type": "array"}]},
    {
        "type": "object",
        "properties": {"a": {"type": "boolean"}},
        "additionalProperties": {"const": 1},
    },
    {
        "type": "object",
        "additionalProperties": False,
        "properties": {"b": {"type": "boolean"}},
        "patternProperties": {"a": {}},  # (the toy vocabulary spells few escapes)
    },
    True,  # any value: literals are refused at their first letter
    {"type": "number"},
    {"type": "integer", "minimum": 1},
    {"type": ["string", "boolean", "null"]},
    {"type": "array"},
    {"anyOf": [{"type": "string"}, {"enum": ["a", "b"]}]},
    {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"type": "string", "anyOf": [{"enum": ["x", "ab"]}, {"minLength": 2}]},
    *CLOSED_SETTLING,
]


@pytest.mark.parametrize("whitespace", ["compact", "flexible"])
@pytest.mark.parametrize("items", DEAD_END_ITEMS, ids=lambda i: json.dumps(i)[:40])
@pytest.mark.parametrize("seed", range(4))
def test_masks_of_a_schema_never_reach_a_dead_end(seed: int, items: Any, whitespace: str) -> None:
    schema = {"type": "array", "items": items, "uniqueItems": True, "maxItems": 6}
    grammar = gs.Grammar.from_gbnf(schema_to_gbnf(schema, whitespace=whitespace, strict=True))
    _walk(grammar, _toy_vocab(), seed, 60)


def test_masks_on_llama3_refuse_the_duplicate_closers() -> None:
    vocab = gs.Vocab.from_gguf(require(lambda: vocab_gguf("llama-bpe")))
    schema = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    m = gs.Matcher(gs.compile(gs.Grammar.from_gbnf(schema_to_gbnf(schema)), vocab))
    # Llama-3 spells '."', '.",' and the like as one token: after "a" they close a copy of "a.".
    closers = {t for t in range(vocab.size) if vocab.token_bytes(t).startswith(b'."')}
    assert len(closers) > 5
    assert m.accept_bytes(b'["a.", "b", "a')
    allowed = set(mask_of(m, vocab.size))
    assert allowed == set(brute_force(m, vocab.size))
    assert not allowed & closers
    assert any(vocab.token_bytes(t) == b"." for t in allowed)  # "a." may still grow
    other = gs.Matcher(gs.compile(gs.Grammar.from_gbnf(schema_to_gbnf(schema)), vocab))
    assert other.accept_bytes(b'["a.", "b", "c')
    assert len(closers & set(mask_of(other, vocab.size))) > 5  # a new item: the same tokens pass


def test_directive_errors_and_printing() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf('root ::= "[" "]"\n#@ distinct-items rooot\n')
    err = info.value
    assert (err.code, err.line, err.column) == ("undefined_rule", 2, 19)
    g = gs.Grammar.from_gbnf('root ::= "[" "]"\n#@ unique root\n')
    assert [w.code for w in g.warnings] == ["unknown_directive"]
    marked = gs.Grammar.from_gbnf('root ::= "[" "]"\n#@ distinct-items root\n')
    assert "#@ distinct-items root" in marked.to_gbnf()
    assert gs.Grammar.from_gbnf(marked.to_gbnf()) == marked
    assert marked != gs.Grammar.from_gbnf('root ::= "[" "]"\n')
    # A "#@" that does not start a line is an ordinary comment.
    assert gs.Grammar.from_gbnf('root ::= "x" # #@ nothing\n').warnings == []


OPEN = [
    {"type": "string"},
    {"type": "string", "minLength": 2},
    {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$"},
    {"type": "string", "pattern": "x"},  # a search: anything around it
    {"type": "string", "format": "uri"},
    {"type": "string", "format": "not-a-known-format"},  # an annotation
    {"type": "object"},
    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
    {"type": ["string", "object"]},
    {"anyOf": [{"type": "string"}, {"type": "object", "minProperties": 1}]},
    {},  # any value
    {"type": "array"},
    {"type": "array", "minItems": 1},
    {"type": "number"},
    {"type": "integer", "exclusiveMinimum": 0},
    {"type": ["string", "boolean", "null"]},
    {"anyOf": [{"type": "string"}, {"enum": ["x", "ab", "ab-xy"]}]},  # the enum adds nothing
    {"oneOf": [{"type": "string"}, {"enum": ["x"]}]},  # every string but "x"
    {"oneOf": [{"type": "string"}, {"type": "object"}]},  # disjoint: no value in both
    {"type": "array", "items": {"type": "string"}},
    CLOSED_LAST_OPEN,
    {"type": "string", "x-note": "id", "markdownDescription": "a name"},  # annotations
    # Branches that only require members: the object still takes one more key.
    {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    # Closed, but "x-..." keys with any value can always follow the declared ones.
    {
        "type": "object",
        "additionalProperties": False,
        "properties": {"a": {"type": "boolean"}},
        "patternProperties": {"^x-": {}},
    },
    {"type": "number", "format": "ports"},  # formats assert nothing about numbers
    # Any further key, with a value of its schema (null; distinct strings beside "a").
    {"type": "object", "additionalProperties": {"type": "null"}},
    {
        "type": "object",
        "properties": {"a": {"type": "boolean"}},
        "additionalProperties": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    },
]
NOT_OPEN = [
    {"type": "string", "maxLength": 1},  # about a million values: an array could use them up
    {"type": "string", "pattern": "^(x|xy|ab)$"},
    {"type": "string", "maxLength": 3, "pattern": "^[ab]+$"},  # 14 values
    {"type": "string", "format": "date"},
    {"type": "string", "format": "uri", "pattern": "x"},  # two constraints: not decided
    {"type": "object", "maxProperties": 2},
    {  # no further key has a value
        "type": "object",
        "properties": {"a": {"type": "boolean"}},
        "additionalProperties": {"not": {}},
    },
    {  # one name only
        "type": "object",
        "additionalProperties": False,
        "properties": {"a": {"type": "boolean"}},
        "patternProperties": {"^x-$": {}},
    },
    {  # "{"x":" can only take a boolean
        "type": "object",
        "additionalProperties": False,
        "patternProperties": {"^x": {"type": "boolean"}},
        "maxProperties": 1,
    },
    {  # after "a" ends: "}", or "b" with true or false
        "type": "object",
        "additionalProperties": False,
        "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}},
    },
    {  # writing "a" forbids the open "b": "{"a":"a"" can only end
        "type": "object",
        "additionalProperties": False,
        "properties": {"a": {"const": "a"}, "b": {"type": "string"}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
    },
    {  # an optional single value after the open member: two endings
        "type": "object",
        "additionalProperties": False,
        "properties": {"a": {"type": "string"}, "b": {"const": "c"}},
    },
    {"type": "integer", "minimum": 0, "maximum": 65535},  # could run out (65,536 values)
    {"type": "integer", "multipleOf": 2},  # not counted
    {"type": "array", "maxItems": 2},
    {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True},  # 5 values in all
    {"anyOf": [{"type": "object", "maxProperties": 1}, {"enum": [1, 2]}]},  # neither open
    {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 5}]},  # overlapping
    {"type": "string", "format": "regex", "maxLength": 3},  # not counted
    {"oneOf": [{"type": "string"}, {"type": "string", "pattern": "^a"}]},  # overlapping
    {"type": "object", "maxProperties": 1, "anyOf": [{"required": ["a"]}]},  # "{"a":1" ends
    {"type": "string", "anyOf": [{"enum": ["x"]}, {"maxLength": 1}]},  # a million values
]


@pytest.mark.parametrize("items", OPEN)
def test_open_ended_items_compile_exactly(items: Any) -> None:
    schema = {"type": "array", "items": items, "uniqueItems": True}
    grammar = _exact_distinct(schema, property_order="any")  # keys in any order
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    rng = random.Random(3)
    pool = ['"x"', '"xy"', '"\\u0078"', '{"a":1}', '{"a":1.0}', '{"a":"x","b":2}']
    pool += ['"x-y"', '"x-"', '"ab-xy"', '"\\u0078y"', '"-x"', '"http://x"', '"http://\\u0078"']
    pool += ['{"b":2,"a":"x"}', '{"a":"\\u0078","b":2.0}', "{}", '"ab"', '{"x-a":1}']
    pool += ['{"a":true,"x-b":"x"}', '{"x-b":"x","a":true}', '{"a":false}', '{"x-a":1,"x-a":2}']
    pool += ['{"a":null}', '{"b":null,"a":true}', '{"a":true,"b":["x"]}', '{"b":["x","x"]}']
    pool += ["1", "1.0", "0", "-0", "2", "true", "false", "null", "[]", "[1]", "[1.0]", '["x"]']
    if isinstance(items, dict) and items.get("type") == "integer":
        pool.remove("1.0")  # integer grammars spell integers without a fraction (a known gap)
    for doc in _random_arrays(rng, pool, 200):
        assert accepts(grammar, doc) == validator.is_valid(json.loads(doc)), doc


@pytest.mark.parametrize("items", CLOSED_SETTLING)
def test_closed_objects_that_settle_compile_exactly(items: Any) -> None:
    schema = {"type": "array", "items": items, "uniqueItems": True}
    grammar = _exact_distinct(schema, whitespace="compact")
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(5)
    pool = ['{"a":"x"}', '{"a":"y"}', '{"a":"\\u0078"}', '{"a":"x","b":"c"}', '{"a":"y","b":"c"}']
    pool += ['{"a":"x","b":"d"}', '{"b":"c"}', '{"a":{"b":"x"}}', '{"a":{"b":"\\u0078"}}']
    pool += ['{"a":"a","b":"x"}', '{"a":"b","b":"x"}', '{"a":"a","b":"\\u0078"}', "{}"]
    pool += ['{"a":"a","c":"x"}', '{"b":"b","c":"x"}', '{"a":"a","b":"b","c":"x"}', '{"c":"x"}']
    for doc in _random_arrays(rng, pool, 300):
        assert accepts(grammar, doc) == validator.is_valid(json.loads(doc)), doc


# String items that may come down to few completions (searched at every byte) but have at
# least 2^32 values.
MANY_STRINGS = [
    {"type": "string", "maxLength": 3},
    {"type": "string", "pattern": "^x+y?$"},  # "xy" cannot grow
    {"type": "string", "format": "uuid"},
    {"type": "string", "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}$"},
    {"type": "string", "maxLength": 9, "pattern": "^[a-z0-9](-?[a-z0-9])*$"},
    {"type": ["null", "string"], "maxLength": 4, "minLength": 1},
    # A union has the values of its largest branch (a search: anything around "xy").
    {"type": "string", "anyOf": [{"enum": ["x", "ab"]}, {"pattern": "xy"}]},
    {"type": "string", "format": "regex"},  # context-free, infinitely many
]
# Number items: "0" can only be 0, "5" under a maximum of 5 only 5 (searched at every byte).
MANY_NUMBERS = [
    {"type": "integer"},
    {"type": "integer", "minimum": 0},
    {"type": "number", "maximum": 5},
    {"type": "number", "minimum": 0, "maximum": 1},
    {"type": "integer", "minimum": -(2**40), "maximum": 2**40},
    {"type": "integer", "not": {"enum": [0]}},  # 0 and -0 left out
    {"type": ["integer", "string"], "maxLength": 2},
    {"anyOf": [{"type": "string"}, {"enum": [1, 2]}]},
    {"anyOf": [{"type": "integer", "maximum": 10}, {"type": "boolean"}]},
    # Scalars beside an open-ended branch: "1" and "ab" are searched, objects are open.
    {"anyOf": [{"type": "string", "pattern": "^(ab|[0-9]+)$"}, {"type": "object"}]},
    {"oneOf": [{"type": "integer", "maximum": 2}, {"type": "object", "required": ["a"]}]},
    {"anyOf": [{"enum": [1, "a", None]}, {"type": "array"}]},
]


@pytest.mark.parametrize("items", MANY_STRINGS)
def test_many_strings_compile_exactly(items: Any) -> None:
    schema = {"type": "array", "items": items, "uniqueItems": True}
    grammar = _exact_distinct(schema)
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    pool = ['"x"', '"xy"', '"xxy"', '"\\u0078y"', '"abcd"', '"ab"', '"0123abcd-0123"']
    pool += ['"0123abcd-0124"', '"0123abcd-012\\u0033"', '"12345678-1234-1234-1234-123456789abc"']
    pool += ["null", '"a-b"', '"a--b"', '"abcdefghij"', '""', '"(x"', '"x{2}"', '"x|y"']
    rng = random.Random(7)
    for doc in _random_arrays(rng, pool, 200):
        assert accepts(grammar, doc) == validator.is_valid(json.loads(doc)), doc


@pytest.mark.parametrize("items", MANY_NUMBERS)
def test_many_numbers_compile_exactly(items: Any) -> None:
    schema = {"type": "array", "items": items, "uniqueItems": True}
    grammar = _exact_distinct(schema)
    validator = jsonschema.Draft202012Validator(schema)
    pool = ["0", "-0", "1", "2", "5", "10", "11", "0.5", "0.25", "-3", "1e0", "1.5e1", "2.5"]
    pool += ["true", "false", '"a"', '"ab"', '"abc"', "6", "9", "-10", str(2**40), str(2**41)]
    pool += ["{}", '{"a":1}', '{"a":1.0}', "[]", "[1]", '"12"', "null"]
    rng = random.Random(11)
    for doc in _random_arrays(rng, pool, 300):
        if accepts(grammar, doc):  # (1e0 is no spelling of an integer here: a known gap)
            assert validator.is_valid(json.loads(doc)), doc
    # Every valid array of plain spellings is accepted.
    plain = ["0", "1", "2", "5", "10", "11", "0.5", "-3", "true", '"a"', '"abc"', str(2**40)]
    plain += ["{}", '{"a":1}', "[]", "[1]", '"ab"', '"12"', "null"]
    for doc in _random_arrays(rng, plain, 300):
        assert accepts(grammar, doc) == validator.is_valid(json.loads(doc)), doc


# Integers written as "[", items, "]" with no layout: "0" and "-0" are one value; a digit set
# runs out.
INTEGERS = r"""
root ::= "[" "]" | "[" int ("," int)* "]"
int ::= "-"? ("0" | [1-9] [0-9]*)
#@ distinct-items root
"""
DIGITS = r"""
root ::= "[" "]" | "[" digit ("," digit)* "]"
digit ::= [0-2] | "1" [0-1]
#@ distinct-items root
"""


def test_a_number_that_can_only_become_copies_is_refused() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf(INTEGERS))
    assert m.accept_bytes(b"[0,")
    assert not m.fork().accept_bytes(b"0")  # "0" can only be 0
    assert not m.fork().accept_bytes(b"-0")  # -0 is 0 too
    assert m.fork().accept_bytes(b"-1]")
    assert m.accept_bytes(b"1,1")  # 10, 11... are still new
    assert not m.fork().accept_bytes(b",")
    assert m.accept_bytes(b"0,10")
    assert not m.fork().accept_bytes(b"]")
    digits = gs.Matcher(gs.Grammar.from_gbnf(DIGITS))  # 0, 1, 2, 10, 11
    assert digits.accept_bytes(b"[1,10,")
    assert digits.fork().accept_bytes(b"1")  # 11 is still new
    assert digits.accept_bytes(b"11,")
    assert not digits.fork().accept_bytes(b"1")  # 1, 10 and 11 are taken
    assert digits.accept_bytes(b"0,2")
    assert not digits.fork().accept_bytes(b",")  # all five are taken: no item can follow
    assert digits.accept_bytes(b"]") and digits.can_terminate()


# Numbers where a digit prefix can only become a copy by rounding (999.99...9 with 17 or more
# nines is the double 1000) or with an exponent (120e-1 is 12), beside free ones.
NUMBERS = r"""
root ::= "[" "]" | "[" num ("," num)* "]"
num ::= "1000" | "12" | "999." "9"{17,20} | "120e-1" | "5" [0-9]* ("." [0-9]+)?
#@ distinct-items root
"""
NUMBER_PIECES = ["[", "]", ",", ".", "e-1", "5", "9", "99", "999", "9999999999", "12", "120"]
NUMBER_PIECES += ["1000", "0", "1", "1,", "5]", ".5", "12,"]


def test_a_number_that_rounds_to_a_copy_is_refused() -> None:
    m = gs.Matcher(gs.Grammar.from_gbnf(NUMBERS))
    assert m.accept_bytes(b"[1000,12,")
    assert not m.fork().accept_bytes(b"999")  # only 999.999... follows: the double 1000
    assert not m.fork().accept_bytes(b"120")  # only 120e-1 follows: 12
    assert m.fork().accept_bytes(b"51.5]")
    assert gs.Matcher(gs.Grammar.from_gbnf(NUMBERS)).accept_bytes(b"[5,999." + b"9" * 17 + b"]")


@pytest.mark.parametrize("seed", range(10))
def test_masks_of_number_items_equal_brute_force(seed: int) -> None:
    tokens = [p.encode() for p in NUMBER_PIECES] + [b"</s>"]
    vocab = gs.Vocab(tokens, eos_ids=[len(tokens) - 1])
    m = gs.Matcher(gs.compile(gs.Grammar.from_gbnf(NUMBERS), vocab))
    rng = random.Random(seed)
    for _ in range(40):
        allowed = assert_masks_exact(m, vocab.size)
        assert allowed, "no token allowed: a dead end"
        normal = [t for t in allowed if not vocab.is_eos(t)]
        if not normal:
            break
        assert m.accept_token(rng.choice(normal))


# Two-letter strings over a and b: four values, so copies run out inside an item and between
# items.
FOUR_STRINGS = r"""
root ::= items
items ::= "[" "]" | "[" str ("," str)* "]"
str ::= "\"" [ab] [ab] "\""
#@ distinct-items items
"""


def test_a_string_that_can_only_become_copies_is_refused() -> None:
    grammar = gs.Grammar.from_gbnf(FOUR_STRINGS)
    m = gs.Matcher(grammar)
    assert m.accept_bytes(b'["aa","ab","')
    assert not m.fork().accept_bytes(b"a")  # "aa" and "ab" are taken
    assert m.accept_bytes(b"b")
    assert m.accept_bytes(b'a","')
    assert not m.fork().accept_bytes(b"ba")
    assert m.accept_bytes(b'bb"')
    assert not m.fork().accept_bytes(b",")  # all four are taken: no item can follow
    assert m.accept_bytes(b"]") and m.can_terminate()
    assert accepts(grammar, '["ab","ba"]')
    assert not accepts(grammar, '["ab","ab"]')


@pytest.mark.parametrize("seed", range(8))
def test_masks_where_strings_run_out_equal_brute_force(seed: int) -> None:
    pieces = ["[", "]", ",", '"', "a", "b", '"a', 'a"', "ab", '"ab"', '","', '"]', "aa", 'b",']
    pieces += ['","aa"', 'a","b']  # an item closed and another begun, or finished, in one token
    tokens = [p.encode() for p in pieces] + [b"</s>"]
    vocab = gs.Vocab(tokens, eos_ids=[len(tokens) - 1])
    _walk(gs.Grammar.from_gbnf(FOUR_STRINGS), vocab, seed, 40)


@pytest.mark.parametrize("items", NOT_OPEN)
def test_other_items_are_still_reported(items: Any) -> None:
    schema = {"type": "array", "items": items, "uniqueItems": True}
    with pytest.raises(gs.SchemaError) as info:
        schema_to_gbnf(schema, strict=True)
    assert info.value.path == "/uniqueItems"


@pytest.mark.parametrize(
    ("items", "document"),
    [
        (
            {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/items"}}]},
            '["a", [], ["b", ["c"]]]',
        ),
        ({"anyOf": [{"enum": [1]}, {"$ref": "#/items"}]}, "[1]"),
    ],
)
def test_items_that_contain_themselves_are_reported(items: Any, document: str) -> None:
    # The analysis looks a bounded depth in (it recursed until Python's limit before).
    schema = {"type": "array", "items": items, "uniqueItems": True}
    with pytest.raises(gs.SchemaError) as info:
        schema_to_gbnf(schema, strict=True)
    assert info.value.path == "/uniqueItems"
    with pytest.warns(SchemaWarning, match="uniqueItems"):
        text = schema_to_gbnf(schema, strict=False)
    assert accepts(gs.Grammar.from_gbnf(text), document)


def test_text_around_the_array_need_not_be_json() -> None:
    # A quote or a brace before the array (a tool call's wrapper, free text) must not shift the
    # scan: it starts at the "[" the parse holds in a marked rule.
    grammar = gs.Grammar.from_gbnf(
        r"""
root ::= [a-z"{ \[]* "=" items [a-z"}\]]*
items ::= "[" "]" | "[" str ("," str)* "]"
str ::= "\"" [a-z]* "\""
#@ distinct-items items
"""
    )
    assert accepts(grammar, 'ab"c{ [=["a","b"]x"}')
    assert not accepts(grammar, 'ab"c{ [=["a","a"]')
    assert accepts(grammar, '["a""a"=["a"]"]')  # the first array is text, not the marked rule


def test_embedding_a_grammar_keeps_its_directive() -> None:
    from gbnf_sampler.structural.rules import RuleSet

    schema = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    inner = gs.Grammar.from_gbnf(schema_to_gbnf(schema))
    assert len(inner.distinct_items) == 1
    rules = RuleSet()
    body = rules.embed(inner, "args")
    outer = rules.grammar(rules.add("call", f'"<call>" {body} "</call>"'))
    assert len(outer.distinct_items) == 1
    assert accepts(outer, '<call>["a", "b"]</call>')
    assert not accepts(outer, '<call>["a", "a"]</call>')


def test_a_literal_in_another_parse_is_not_refused() -> None:
    # The walk after a copied literal's first letter only fails when no parse reads it to the
    # end: here the plain-array alternative does, so "[true,true]" stays in the language.
    grammar = gs.Grammar.from_gbnf(
        """
root ::= marked | plain
marked ::= "[" lit ("," lit)* "]"
plain ::= "[" lit "," "true" "]"
lit ::= "true" | "false" | "null"
#@ distinct-items marked
"""
    )
    assert accepts(grammar, "[true,true]")
    assert accepts(grammar, "[false,true]")
    assert not accepts(grammar, "[false,false]")
    m = gs.Matcher(grammar)
    assert m.accept_bytes(b"[false,")
    assert not m.fork().accept_bytes(b"f")  # refused at the first letter
    assert m.accept_bytes(b"t")


def _closed(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "array",
        "uniqueItems": True,
        "items": {
            "type": "object",
            "additionalProperties": False,
            "properties": props,
            "required": required,
        },
    }


@pytest.mark.parametrize("whitespace", ["compact", "flexible"])
def test_a_settled_copy_is_refused_where_its_open_member_ends(whitespace: str) -> None:
    cases = [
        # (schema, text so far, refused byte, a continuation that keeps the item new)
        (_closed({"a": {"type": "string"}}, []), '[{"a":"x"},{"a":"x', '"', 'y"}]'),
        (
            _closed({"a": {"type": "string"}, "b": {"const": "c"}}, ["a", "b"]),
            '[{"a":"x","b":"c"},{"a":"x',
            '"',
            'y","b":"c"}]',
        ),
        (
            _closed({"a": _closed({"b": {"type": "string"}}, ["b"])["items"]}, ["a"]),
            '[{"a":{"b":"x"}},{"a":{"b":"x',
            '"',
            'y"}}]',
        ),
        (
            _closed({"a": {"type": ["string", "boolean"]}}, ["a"]),
            '[{"a":true},{"a":',
            "t",
            "false}]",
        ),
        (_closed({"a": {"type": "number"}}, ["a"]), '[{"a":1},{"a":1.0', "}", "5}]"),
    ]
    for schema, head, refused, other in cases:
        text = schema_to_gbnf(schema, strict=True, whitespace=whitespace)
        grammar = gs.Grammar.from_gbnf(text)
        m = gs.Matcher(grammar)
        assert m.accept_bytes(head.encode()), head
        assert not m.fork().accept_bytes(refused.encode()), (head, refused)
        assert m.accept_bytes(other.encode()) and m.can_terminate(), (head, other)


def test_a_forced_rest_in_another_parse_is_not_refused() -> None:
    # The walk refuses only when no parse gets past the copy: the plain alternative takes it.
    grammar = gs.Grammar.from_gbnf(
        r"""
root ::= marked | plain
marked ::= "[" obj ("," obj)* "]"
plain ::= "[" obj "," obj "]"
obj ::= "{\"a\":" str "}"
str ::= "\"" [a-z]* "\""
#@ distinct-items marked
"""
    )
    assert accepts(grammar, '[{"a":"x"},{"a":"x"}]')
    assert not accepts(grammar, '[{"a":"x"},{"a":"y"},{"a":"x"}]')
    m = gs.Matcher(grammar)
    assert m.accept_bytes(b'[{"a":"x"},{"a":"y"},{"a":"x')
    assert not m.fork().accept_bytes(b'"')  # refused where the string ends, before the brace


def test_masks_on_llama3_refuse_the_tokens_that_settle_a_copy() -> None:
    vocab = gs.Vocab.from_gguf(require(lambda: vocab_gguf("llama-bpe")))
    schema = _closed({"name": {"type": "string"}, "kind": {"const": "tool"}}, ["name", "kind"])
    compiled = gs.compile(gs.Grammar.from_gbnf(schema_to_gbnf(schema)), vocab)
    m = gs.Matcher(compiled)
    assert m.accept_bytes(b'[{"name": "a.", "kind": "tool"}, {"name": "a')
    allowed = set(mask_of(m, vocab.size))
    assert allowed == set(brute_force(m, vocab.size))
    closers = {t for t in range(vocab.size) if vocab.token_bytes(t).startswith(b'."')}
    assert len(closers) > 5 and not allowed & closers  # each settles a copy of "a."
    assert any(vocab.token_bytes(t) == b"." for t in allowed)  # "a." may still grow
    other = gs.Matcher(compiled)
    assert other.accept_bytes(b'[{"name": "a.", "kind": "tool"}, {"name": "b')
    assert len(closers & set(mask_of(other, vocab.size))) > 5  # a new item: they pass


def _copy_prone_vocab() -> gs.Vocab:
    # Few letters, so that walks often come back to an earlier item's text, and escapes and
    # keys spelled in pieces, so that the same value arrives by different tokens.
    pieces = [
        *'[]{},:"abc lsertu',
        '{"a":"',
        '{"a":{"b":"',
        '"a":',
        '"b":"c"',
        ',"b":"c"}',
        '"}',
        '"}}',
    ]
    pieces += ["\\u0061", "\\", "u0061", 'a"', 'b"', '"},', '"}]', "ab", "true", "t", "rue"]
    pieces += ["false", "f", "alse", '"b"', '"},{"a":"a"}', '"},{"a":"', '","']
    tokens = [p.encode() for p in dict.fromkeys(pieces)] + [b"</s>"]
    return gs.Vocab(tokens, eos_ids=[len(tokens) - 1])


@pytest.mark.parametrize("items", [*CLOSED_SETTLING, {"type": ["string", "boolean"]}])
@pytest.mark.parametrize("seed", range(6))
def test_masks_equal_brute_force_where_copies_settle(items: Any, seed: int) -> None:
    schema = {"type": "array", "items": items, "uniqueItems": True, "maxItems": 30}
    text = schema_to_gbnf(schema, whitespace="compact", strict=True)
    vocab = _copy_prone_vocab()
    m = gs.Matcher(gs.compile(gs.Grammar.from_gbnf(text), vocab))
    plain = gs.Matcher(
        gs.compile(gs.Grammar.from_gbnf(text.replace("#@ distinct-items", "#")), vocab)
    )
    rng = random.Random(seed)
    refused = 0
    for _ in range(120):
        allowed = assert_masks_exact(m, vocab.size)
        assert allowed, "no token allowed: a dead end"
        refused += len(set(brute_force(plain, vocab.size)) - set(allowed))
        normal = [t for t in allowed if not vocab.is_eos(t)]
        if not normal:
            break
        # Mostly whole pieces of items (more copies), sometimes single bytes; the array stays
        # open while it can.
        normal = [t for t in normal if b"]" not in vocab.token_bytes(t)] or normal
        longer = [t for t in normal if len(vocab.token_bytes(t)) > 1]
        t = rng.choice(longer if longer and rng.random() < 0.8 else normal)
        assert m.accept_token(t) and plain.accept_token(t)
    assert refused > 0  # the walk met copies to refuse


@pytest.mark.parametrize("seed", range(4))
def test_many_string_values_are_kept_apart_until_they_run_out(seed: int) -> None:
    letters = "abcdefghijkl"  # 12 values: subset rules would need 4,096
    schema = {"type": "array", "items": {"enum": list(letters)}, "uniqueItems": True}
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchemaWarning)
        text = schema_to_gbnf(schema, strict=True, whitespace="compact")
    assert "#@ distinct-items" in text
    grammar = gs.Grammar.from_gbnf(text)
    everything = "[" + ",".join(f'"{c}"' for c in letters) + "]"
    assert accepts(grammar, everything)
    m = gs.Matcher(grammar)
    assert m.accept_bytes(everything[:-1].encode())
    assert not m.fork().accept_bytes(b",")  # nothing new can follow
    assert not accepts(grammar, '["a","b","a"]')
    pieces = ["[", "]", ",", '"', *letters, *(f'"{c}"' for c in letters), '","']
    tokens = [p.encode() for p in pieces] + [b"</s>"]
    vocab = gs.Vocab(tokens, eos_ids=[len(tokens) - 1])
    _walk(grammar, vocab, seed, 60)
