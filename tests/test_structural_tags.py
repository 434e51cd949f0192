"""Structural tags (xgrammar's structural-tag JSON) compiled to grammars: each format's language
as (spec, accepted, rejected) tables, end detection, argument styles, special-token markers,
and errors that name the JSON path of the bad part of the spec."""

from __future__ import annotations

from typing import Any

import pytest

import gbnf_sampler as gs
from gbnf_sampler.errors import StructuralTagError

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
N = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}


def tag(begin: Any, content: Any, end: Any) -> dict[str, Any]:
    return {"type": "tag", "begin": begin, "content": content, "end": end}


def schema(s: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": s, **extra}


TOOL_TAGS = [
    tag('<tool_call>{"name": "a", "arguments": ', schema(CITY), "}</tool_call>"),
    tag('<tool_call>{"name": "b", "arguments": ', schema(N), "}</tool_call>"),
]
A_CALL = '<tool_call>{"name": "a", "arguments": {"city": "X"}}</tool_call>'
B_CALL = '<tool_call>{"name": "b", "arguments": {"n": 2}}</tool_call>'

CASES: list[tuple[str, dict[str, Any], list[str], list[str]]] = [
    ("const", {"type": "const_string", "value": "hi\n"}, ["hi\n"], ["hi", "hi\n\n"]),
    (
        "sequence",
        {"type": "sequence", "elements": [{"type": "const_string", "value": "A:"}, schema(N)]},
        ['A:{"n": 3}'],
        ['A:{"n": 0}', '{"n": 3}'],
    ),
    (
        "or",
        {
            "type": "or",
            "elements": [
                {"type": "const_string", "value": "yes"},
                {"type": "regex", "pattern": "n[o]+"},
            ],
        },
        ["yes", "nooo"],
        ["n", "yesno"],
    ),
    (
        "optional",
        {"type": "optional", "content": {"type": "const_string", "value": "x"}},
        ["", "x"],
        ["xx"],
    ),
    (
        "plus",
        {"type": "plus", "content": {"type": "const_string", "value": "x"}},
        ["x", "xxx"],
        [""],
    ),
    (
        "star",
        {"type": "star", "content": {"type": "const_string", "value": "x"}},
        ["", "xx"],
        ["y"],
    ),
    (
        "repeat",
        {"type": "repeat", "min": 2, "max": 3, "content": {"type": "const_string", "value": "x"}},
        ["xx", "xxx"],
        ["x", "xxxx"],
    ),
    (
        "repeat unbounded",
        {"type": "repeat", "min": 1, "max": -1, "content": {"type": "const_string", "value": "x"}},
        ["x", "xxxxx"],
        [""],
    ),
    (
        "think then schema",
        {
            "type": "sequence",
            "elements": [tag("<think>", {"type": "any_text"}, "</think>"), schema(N)],
        },
        ['<think>free {"n": 0} <think> text</think>{"n": 1}', '<think></think>{"n": 5}'],
        ['<think>a</think>b</think>{"n": 1}', '<think>a</think>{"n": 0}', '{"n": 1}'],
    ),
    (
        "tag with several ends",
        tag("<r>", {"type": "any_text"}, ["</r>", "</answer>"]),
        ["<r>x</r>", "<r>x</answer>", "<r></r>"],
        ["<r>x", "<r>x</r>y", "<r>x</r></answer>"],
    ),
    (
        "any_text excludes",
        {"type": "any_text", "excludes": ["<bad>"]},
        ["", "fine <bad", "bad>"],
        ["a <bad> b"],
    ),
    (
        "triggered_tags",
        {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": TOOL_TAGS},
        ["", "just text", f"text {A_CALL} more {B_CALL}", A_CALL + A_CALL],
        [f"text {A_CALL[:-1]}", "<tool_call>{}", 'x <tool_call>{"name": "c"'],
    ),
    (
        "triggered_tags at_least_one",
        {
            "type": "triggered_tags",
            "triggers": ["<tool_call>"],
            "tags": TOOL_TAGS,
            "at_least_one": True,
        },
        [A_CALL, A_CALL + " then text " + B_CALL],
        ["", "text " + A_CALL],
    ),
    (
        "triggered_tags stop_after_first",
        {
            "type": "triggered_tags",
            "triggers": ["<tool_call>"],
            "tags": TOOL_TAGS,
            "stop_after_first": True,
        },
        ["text", "text " + A_CALL],
        ["text " + A_CALL + " more", A_CALL + B_CALL],
    ),
    (
        "triggered_tags exactly one",
        {
            "type": "triggered_tags",
            "triggers": ["<tool_call>"],
            "tags": TOOL_TAGS,
            "at_least_one": True,
            "stop_after_first": True,
        },
        [A_CALL, B_CALL],
        ["", A_CALL + " ", "x" + A_CALL],
    ),
    (
        "triggered_tags inside a tag stops at its end",
        tag(
            "<r>",
            {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": TOOL_TAGS},
            "</r>",
        ),
        ["<r>text</r>", f"<r>a {A_CALL} b</r>", f"<r>{A_CALL}</r>"],
        ["<r>text", f"<r>{A_CALL}", "<r>x</r>y"],
    ),
    (
        "tags_with_separator",
        {"type": "tags_with_separator", "tags": TOOL_TAGS, "separator": ", "},
        ["", A_CALL, f"{A_CALL}, {B_CALL}, {A_CALL}"],
        [f"{A_CALL}{B_CALL}", f"{A_CALL}, ", "text"],
    ),
    (
        "tags_with_separator at_least_one stop_after_first",
        {
            "type": "tags_with_separator",
            "tags": TOOL_TAGS,
            "separator": "\n",
            "at_least_one": True,
            "stop_after_first": True,
        },
        [A_CALL, B_CALL],
        ["", f"{A_CALL}\n{B_CALL}"],
    ),
    (
        "dispatch",
        {"type": "dispatch", "rules": [["<n>", schema(N)], ["<c>", schema(CITY)]]},
        ["", 'x<n>{"n": 1} y <c>{"city": "Z"}', "<n"],
        ['x<n>{"n": 0}', "x<n> text"],
    ),
    (
        "dispatch without loop",
        {"type": "dispatch", "rules": [["<n>", schema(N)]], "loop": False},
        ['x<n>{"n": 1}'],
        ['x<n>{"n": 1} y'],
    ),
    (
        "qwen_xml arguments",
        schema(CITY, style="qwen_xml"),
        ["<parameter=city>\nSan Francisco, CA </x>\n</parameter>\n"],
        ["<parameter=city>\nX\n</parameter>\n<parameter=zip>\n1\n</parameter>\n", ""],
    ),
    (
        "deepseek_xml arguments",
        schema(
            {**N, "properties": {**N["properties"], "s": {"type": "string"}}}, style="deepseek_xml"
        ),
        [
            '<｜DSML｜parameter name="n" string="false">7</｜DSML｜parameter>\n',
            '<｜DSML｜parameter name="n" string="false">7</｜DSML｜parameter>\n'
            '<｜DSML｜parameter name="s" string="true">raw "text"</｜DSML｜parameter>\n',
        ],
        ['<｜DSML｜parameter name="n" string="true">7</｜DSML｜parameter>\n'],
    ),
    (
        "python arguments",
        schema(
            {
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "b": {"type": "boolean"},
                    "c": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["a"],
            },
            style="python",
        ),
        ['a="x"', 'a="x\\n", b=True, c=[1, 2]', 'a="x", c=[]'],
        ['a="x", b=true', "a='x'", 'b=True, a="x"', ""],
    ),
    (
        "gemma arguments",
        schema(
            {
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "o": {"type": "object", "properties": {"k": {"enum": [1, 2]}}},
                },
                "required": ["a"],
            },
            style="gemma",
        ),
        ['{a:<|"|>raw "x"<|"|>}', '{a:<|"|>x<|"|>,o:{k:2}}', '{a:<|"|><|"|>,o:{}}'],
        ['{a:"x"}', '{"a":<|"|>x<|"|>}', '{a:<|"|>x<|"|>,o:{k:3}}'],
    ),
]


@pytest.mark.parametrize(("name", "spec", "good", "bad"), CASES, ids=[c[0] for c in CASES])
def test_language(name: str, spec: dict[str, Any], good: list[str], bad: list[str]) -> None:
    grammar = gs.Grammar.from_structural_tag({"type": "structural_tag", "format": spec})
    for text in good:
        m = gs.Matcher(grammar)
        assert m.accept_bytes(text.encode()) and m.can_terminate(), text
    for text in bad:
        m = gs.Matcher(grammar)
        assert not (m.accept_bytes(text.encode()) and m.can_terminate()), text


def test_bare_format_legacy_form_and_coerce_are_the_same_grammar() -> None:
    spec = {"type": "triggered_tags", "triggers": ["<f>"], "tags": [tag("<f>", schema(N), "</f>")]}
    legacy = {
        "type": "structural_tag",
        "structures": [{"begin": "<f>", "schema": N, "end": "</f>"}],
        "triggers": ["<f>"],
    }
    wrapped = {"type": "structural_tag", "format": spec}
    a = gs.Grammar.from_structural_tag(spec)
    assert a == gs.Grammar.from_structural_tag(legacy) == gs.Grammar.coerce(wrapped)
    m = gs.Matcher(a)
    assert m.accept_bytes(b'x <f>{"n": 1}</f> y') and m.can_terminate()


def test_special_tokens_become_token_references() -> None:
    tokens = [b"a", b"b", b"<|call|>", b"<|end|>", b"<|x|>", b"<", b"|"]
    vocab = gs.Vocab(tokens, eos_ids=[3], special_ids=[2, 3, 4])
    spec = {
        "type": "triggered_tags",
        "triggers": ["<|call|>"],
        "tags": [tag("<|call|>", {"type": "regex", "pattern": "a+"}, "<|end|>")],
    }
    as_text = gs.Grammar.from_structural_tag(spec)
    as_tokens = gs.Grammar.from_structural_tag(spec, vocab=vocab)
    assert "<[2]>" in as_tokens.to_gbnf() and "<[2]>" not in as_text.to_gbnf()
    m = gs.Matcher(gs.compile(as_tokens, vocab))
    assert m.accept_token(1) and m.accept_token(2) and m.accept_token(0)
    # <|end|> is an EOS token: the call ends the output, EOS is allowed right after "a"
    assert m.can_terminate() and 3 in m.allowed_tokens()
    text = gs.Matcher(gs.compile(as_text, vocab))
    assert not text.accept_token(2)  # spelled out, the special token is not text


def test_token_formats() -> None:
    tokens = [b"a", b"<|t|>", b"<|e|>", b"</s>"]
    vocab = gs.Vocab(tokens, eos_ids=[3], special_ids=[1, 2])
    spec = {
        "type": "token_triggered_tags",
        "trigger_tokens": ["<|t|>"],
        "tags": [
            tag(
                {"type": "token", "token": "<|t|>"},
                {"type": "const_string", "value": "a"},
                {"type": "token", "token": 2},
            )
        ],
    }
    m = gs.Matcher(gs.compile(gs.Grammar.from_structural_tag(spec), vocab))
    assert [m.accept_token(t) for t in (0, 1, 0, 2, 0)] == [True] * 5
    assert m.can_terminate()
    assert not m.accept_token(2)


def _error(spec: Any) -> StructuralTagError:
    with pytest.raises(StructuralTagError) as info:
        gs.Grammar.from_structural_tag(spec)
    return info.value


ERRORS: list[tuple[Any, str, str]] = [
    ([], "", "must be an object"),
    ({"type": "structural_tag"}, "", "needs 'format'"),
    ({"type": "structural_tag", "format": {"type": "tag"}}, "/format", "needs the field 'begin'"),
    ({"type": "sequence", "elements": [{"type": "nope"}]}, "/elements/0/type", "unknown format"),
    ({"type": "const_string", "value": 3}, "/value", "must be a string"),
    ({"type": "const_string", "value": "x", "vaule": 1}, "/vaule", "unknown field"),
    ({"type": "or", "elements": []}, "/elements", "at least one"),
    ({"type": "tag", "begin": "a", "content": {"type": "any_text"}, "end": []}, "/end", "empty"),
    ({"type": "tag", "begin": 1, "content": {"type": "any_text"}, "end": "b"}, "/begin", "marker"),
    (
        {
            "type": "tag",
            "begin": "<",
            "end": ">",
            "content": schema(
                {"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}
            ),
        },
        "/content/json_schema/properties/a/pattern",
        "missing ')'",
    ),
    (schema(CITY, style="yaml"), "/style", "unknown style"),
    (schema(CITY, style="qwen_xml", any_order=True), "/any_order", "needs style 'json'"),
    ({"type": "any_text", "max_tokens": 5}, "/max_tokens", "budget"),
    ({"type": "any_tokens"}, "", "not supported"),
    ({"type": "repeat", "min": 3, "max": 1, "content": {"type": "any_text"}}, "/max", ">= 3"),
    ({"type": "grammar", "grammar": "root ::= undefined-rule"}, "/grammar", "undefined"),
    (
        {"type": "triggered_tags", "triggers": ["<a>"], "tags": [tag("<b>", schema(N), "</b>")]},
        "/tags/0/begin",
        "none of the triggers",
    ),
    (
        {
            "type": "triggered_tags",
            "triggers": ["<a", "<a>"],
            "tags": [tag("<a>", schema(N), "</a>")],
        },
        "/tags/0/begin",
        "several triggers",
    ),
    ({"type": "token", "token": "plain"}, "/token", "give its id"),
    ({"type": "dispatch", "rules": [["", schema(N)]]}, "/rules/0/0", "must not be empty"),
    (
        schema({"type": "object", "properties": {"a": {"not": {}}}}, style="python"),
        "/json_schema/properties/a/not",
        "not supported",
    ),
]


@pytest.mark.parametrize(("spec", "path", "words"), ERRORS, ids=[e[2] for e in ERRORS])
def test_errors_name_the_path(spec: Any, path: str, words: str) -> None:
    err = _error(spec)
    assert err.path == path
    assert words in str(err)


def test_depth_limit() -> None:
    spec: dict[str, Any] = {"type": "const_string", "value": "x"}
    for _ in range(gs.limits.MAX_STRUCTURAL_TAG_DEPTH + 2):
        spec = {"type": "optional", "content": spec}
    assert "nested deeper" in str(_error(spec))


def test_json_schema_any_order_accepts_every_key_order() -> None:
    two = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}},
        "required": ["a", "b"],
    }
    spec = {"type": "structural_tag", "format": tag("<x>", schema(two, any_order=True), "</x>")}
    ordered = {"type": "structural_tag", "format": tag("<x>", schema(two), "</x>")}

    def accepts(spec: Any, text: str) -> bool:
        m = gs.Matcher(gs.Grammar.from_structural_tag(spec))
        return m.accept_bytes(text.encode()) and m.can_terminate()

    for text in ('<x>{"a": 1, "b": true}</x>', '<x>{"b": true, "a": 1}</x>'):
        assert accepts(spec, text)
    assert not accepts(ordered, '<x>{"b": true, "a": 1}</x>')
    assert not accepts(spec, '<x>{"b": true, "b": false}</x>')
    assert not accepts(spec, '<x>{"b": true}</x>')
