"""The server's pieces that need no model: which field of a request constrains it (every
dialect, conflicts, sizes), tool-call grammars and parsers (whole and streamed), stop strings
across token boundaries, and the sampler honouring the mask."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs

pytest.importorskip("starlette", reason="the serve extra is not installed")
pytest.importorskip("sse_starlette", reason="the serve extra is not installed")

from gbnf_sampler.limits import SERVE_MAX_GRAMMAR_BYTES
from gbnf_sampler.serve.constraints import find_constraint
from gbnf_sampler.serve.errors import ApiError, from_constraint_error
from gbnf_sampler.serve.sampling import SamplingParams, sample, sampling_params
from gbnf_sampler.serve.text import TextStream, complete_utf8
from gbnf_sampler.serve.tools import (
    ToolStreamParser,
    parse_tool_output,
    tool_constraint,
)

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"x": {"type": "integer"}},
                "required": ["x"],
                "additionalProperties": False,
            },
        },
    },
    {"type": "function", "function": {"name": "g"}},
]


def accepts(grammar: gs.Grammar | None, text: str) -> bool:
    assert grammar is not None
    m = gs.Matcher(grammar)
    return m.accept_bytes(text.encode()) and m.can_terminate()


# (body, param found, a sentence of its language, a string outside it)
DIALECTS: list[tuple[dict[str, Any], str, str, str]] = [
    ({"response_format": {"type": "json_object"}}, "response_format", '{"k": 1}', "[1]"),
    (
        {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"schema": SCHEMA, "strict": True},
            }
        },
        "response_format",
        '{"a": 1}',
        '{"a": 1, "b": 2}',
    ),
    ({"grammar": 'root ::= "x"+'}, "grammar", "xxx", "y"),
    ({"grammar_json_functions": SCHEMA}, "grammar_json_functions", '{"a": 2}', '{"a": "2"}'),
    ({"json_schema": SCHEMA}, "json_schema", '{"a": 3}', "{}"),
    ({"structured_outputs": {"json": SCHEMA}}, "structured_outputs.json", '{"a": 4}', "4"),
    ({"structured_outputs": {"regex": "[0-9]{2}"}}, "structured_outputs.regex", "42", "4"),
    ({"structured_outputs": {"choice": ["p", "q"]}}, "structured_outputs.choice", "q", "r"),
    ({"structured_outputs": {"grammar": 'root ::= "z"'}}, "structured_outputs.grammar", "z", "zz"),
    ({"guided_json": json.dumps(SCHEMA)}, "guided_json", '{"a": 5}', '{"b": 5}'),
    ({"guided_regex": "a|b"}, "guided_regex", "b", "c"),
    ({"guided_choice": ["one", "two"]}, "guided_choice", "two", "three"),
    ({"guided_grammar": 'root ::= "g"'}, "guided_grammar", "g", "h"),
]


@pytest.mark.parametrize(("body", "param", "good", "bad"), DIALECTS, ids=[d[1] for d in DIALECTS])
def test_each_dialect_maps_to_its_grammar(
    body: dict[str, Any], param: str, good: str, bad: str
) -> None:
    constraint = find_constraint(body)
    assert constraint is not None and constraint.param == param
    grammar = constraint.build()
    assert accepts(grammar, good)
    assert not accepts(grammar, bad)


@pytest.mark.parametrize(
    ("body", "good", "bad"),
    [({"format": "json"}, '{"a": [1]}', "[1]"), ({"format": SCHEMA}, '{"a": 1}', '{"a": true}')],
)
def test_ollama_format(body: dict[str, Any], good: str, bad: str) -> None:
    constraint = find_constraint(body, dialect="ollama")
    assert constraint is not None and constraint.param == "format"
    assert accepts(constraint.build(), good) and not accepts(constraint.build(), bad)


TWO_KEYS = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}},
    "required": ["a", "b"],
}
ORDER_BODIES = [
    ({"response_format": {"type": "json_schema", "json_schema": {"schema": TWO_KEYS}}}, "openai"),
    ({"json_schema": TWO_KEYS}, "openai"),
    ({"guided_json": TWO_KEYS}, "openai"),
    ({"grammar_json_functions": TWO_KEYS}, "openai"),
    ({"structured_outputs": {"json": TWO_KEYS}}, "openai"),
    ({"format": TWO_KEYS}, "ollama"),
]


@pytest.mark.parametrize(("body", "dialect"), ORDER_BODIES, ids=lambda v: str(v)[:40])
def test_property_order_field_reaches_every_schema_dialect(
    body: dict[str, Any], dialect: str
) -> None:
    schema_order = find_constraint(body, dialect=dialect)
    any_order = find_constraint({**body, "property_order": "any"}, dialect=dialect)
    assert schema_order is not None and any_order is not None
    assert accepts(schema_order.build(), '{"a": 1, "b": true}')
    assert not accepts(schema_order.build(), '{"b": true, "a": 1}')
    assert accepts(any_order.build(), '{"b": true, "a": 1}')
    assert accepts(any_order.build(), '{"a": 1, "b": true}')
    assert not accepts(any_order.build(), '{"b": true, "a": 1, "a": 2}')
    assert not accepts(any_order.build(), '{"b": true}')


@pytest.mark.parametrize("order", ["random", 1, ["any"]])
def test_bad_property_order_is_a_400(order: Any) -> None:
    with pytest.raises(ApiError) as info:
        find_constraint({"json_schema": TWO_KEYS, "property_order": order})
    assert info.value.status == 400 and info.value.param == "property_order"
    assert '"any"' in info.value.message


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"response_format": {"type": "text"}},
        {"tools": TOOLS, "tool_choice": "none"},
        {"tools": []},
        {"grammar": ""},
        {"format": "json"},  # Ollama's field is not read on the OpenAI endpoints
    ],
)
def test_unconstrained_requests(body: dict[str, Any]) -> None:
    assert find_constraint(body) is None


@pytest.mark.parametrize(
    ("body", "first", "second"),
    [
        (
            {"grammar": 'root ::= "a"', "response_format": {"type": "json_object"}},
            "response_format",
            "grammar",
        ),
        ({"guided_regex": "a", "guided_choice": ["a"]}, "guided_regex", "guided_choice"),
        ({"tools": TOOLS, "json_schema": SCHEMA}, "tools", "json_schema"),
        (
            {"structured_outputs": {"json": SCHEMA, "regex": "a"}},
            "structured_outputs.json",
            "structured_outputs.regex",
        ),
    ],
)
def test_two_constraints_are_a_400_naming_both(
    body: dict[str, Any], first: str, second: str
) -> None:
    with pytest.raises(ApiError) as info:
        find_constraint(body)
    assert info.value.status == 400 and info.value.code == "conflicting_constraints"
    assert f"'{first}'" in info.value.message and f"'{second}'" in info.value.message


def test_oversized_grammar_is_a_413() -> None:
    with pytest.raises(ApiError) as info:
        find_constraint({"grammar": 'root ::= "' + "a" * SERVE_MAX_GRAMMAR_BYTES + '"'})
    assert info.value.status == 413 and info.value.param == "grammar"


def test_lazy_grammars_are_a_clear_400() -> None:
    with pytest.raises(ApiError) as info:
        find_constraint({"grammar": 'root ::= "a"', "grammar_lazy": True, "grammar_triggers": []})
    assert info.value.status == 400 and "not supported yet" in info.value.message


@pytest.mark.parametrize(
    "body",
    [
        {"response_format": "json"},
        {"guided_choice": "a"},
        {"grammar": 3},
        {"format": 7},
        {"structured_outputs": []},
        {"tools": {}},
    ],
)
def test_malformed_constraint_fields_are_a_400(body: dict[str, Any]) -> None:
    dialect = "ollama" if "format" in body else "openai"
    with pytest.raises(ApiError) as info:
        find_constraint(body, dialect=dialect)
    assert info.value.status == 400


def test_grammar_errors_keep_the_diagnostic() -> None:
    with pytest.raises(gs.GrammarError) as info:
        gs.Grammar.from_gbnf("root ::= foo")
    error = from_constraint_error(info.value, "grammar")
    body = error.openai_body()["error"]
    assert error.status == 400 and body["code"] == "invalid_grammar" and body["param"] == "grammar"
    assert body["diagnostic"]["code"] == "undefined_rule"
    assert (body["diagnostic"]["line"], body["diagnostic"]["column"]) == (1, 10)
    assert body["diagnostic"]["snippet"] == "root ::= foo"


def test_schema_errors_keep_the_json_pointer() -> None:
    with pytest.raises(gs.SchemaError) as info:
        gs.Grammar.from_json_schema({"properties": {"a": {"minLength": "x"}}})
    body = from_constraint_error(info.value, "json_schema").openai_body()["error"]
    assert body["code"] == "invalid_schema"
    assert body["diagnostic"]["path"] == info.value.path and info.value.path.startswith(
        "/properties/a"
    )


# ---- tools -----------------------------------------------------------------------------------


def test_tool_choice_required_accepts_calls_and_lists_only() -> None:
    grammar = tool_constraint(TOOLS, "required")
    assert accepts(grammar, '{"name": "f", "arguments": {"x": 1}}')
    assert accepts(
        grammar, '[{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {}}]'
    )
    assert not accepts(grammar, '{"name": "f", "arguments": {"x": "1"}}')
    assert not accepts(grammar, '{"name": "h", "arguments": {}}')
    assert not accepts(grammar, "hello")


def test_no_parallel_calls_forbids_lists() -> None:
    grammar = tool_constraint(TOOLS, "required", parallel_tool_calls=False)
    assert accepts(grammar, '{"name": "g", "arguments": {}}')
    assert not accepts(grammar, '[{"name": "g", "arguments": {}}]')


def test_named_tool_choice_allows_that_tool_only() -> None:
    grammar = tool_constraint(TOOLS, {"type": "function", "function": {"name": "g"}})
    assert accepts(grammar, '{"name": "g", "arguments": {}}')
    assert not accepts(grammar, '{"name": "f", "arguments": {"x": 1}}')
    with pytest.raises(gs.SchemaError):
        tool_constraint(TOOLS, {"type": "function", "function": {"name": "nope"}})


def test_tool_choice_auto_allows_text_or_calls_and_none_is_free() -> None:
    grammar = tool_constraint(TOOLS, "auto")
    assert accepts(grammar, "It is sunny.")
    assert accepts(grammar, '{"name": "g", "arguments": {}}')
    assert not accepts(grammar, "{not a call")
    assert tool_constraint(TOOLS, "none") is None


def test_parse_tool_output() -> None:
    content, calls = parse_tool_output(
        '[{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {}}]'
    )
    assert content is None
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("f", {"x": 1}),
        ("g", {}),
    ]
    assert all(c["type"] == "function" and c["id"].startswith("call_") for c in calls)
    assert parse_tool_output("plain answer") == ("plain answer", [])
    assert parse_tool_output('{"name": "f", "argu') == ('{"name": "f", "argu', [])


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_streamed_tool_calls_equal_the_whole_parse(size: int) -> None:
    text = '[{"name": "f", "arguments": {"x": 1, "s": "}]\\"{"}}, {"name": "g", "arguments": {}}]'
    parser = ToolStreamParser()
    deltas = []
    for i in range(0, len(text), size):
        deltas += parser.feed(text[i : i + size])
    deltas += parser.finish()
    calls = [d["tool_calls"][0] for d in deltas]
    assert [c["index"] for c in calls] == [0, 1]
    expected = parse_tool_output(text)[1]
    assert [c["function"] for c in calls] == [c["function"] for c in expected]


def test_streamed_text_answer_is_content() -> None:
    parser = ToolStreamParser()
    deltas = parser.feed("  ") + parser.feed("Hi") + parser.feed(" there") + parser.finish()
    assert "".join(d["content"] for d in deltas) == "  Hi there"


# ---- text and sampling -----------------------------------------------------------------------


def test_utf8_is_emitted_whole_and_stops_span_tokens() -> None:
    euro = "€".encode()
    stream = TextStream(["STOP"])
    assert stream.push(b"ab" + euro[:1]) == "ab"
    assert stream.push(euro[1:] + b"xS") == "€x"  # "S" may start "STOP": held back
    assert stream.push(b"TO") == ""
    assert stream.push(b"Pzz") == "" and stream.stopped
    assert stream.flush() == ""
    other = TextStream(["STOP"])
    assert other.push(b"ST") == "" and other.push(b"AR") == "STAR"
    assert complete_utf8(euro[:2]) == 0 and complete_utf8(euro) == 3


def test_sampler_only_picks_allowed_tokens() -> None:
    rng = np.random.default_rng(0)
    row = np.full(1000, -np.inf, dtype=np.float32)
    allowed = [3, 500, 999]
    row[allowed] = [1.0, 2.0, 0.5]
    params = SamplingParams(temperature=1.5, top_p=0.99, top_k=50)
    picks = {sample(row, params, rng) for _ in range(200)}
    assert picks <= set(allowed) and len(picks) > 1
    assert sample(row, SamplingParams(temperature=0.0), rng) == 500
    assert sample(row, SamplingParams(temperature=1.0, top_k=1), rng) == 500


@pytest.mark.parametrize(
    "body",
    [{"temperature": "hot"}, {"top_p": 2}, {"max_tokens": 0}, {"seed": 1.5}, {"stop": [1]}],
)
def test_bad_sampling_settings_are_a_400(body: dict[str, Any]) -> None:
    with pytest.raises(ApiError) as info:
        sampling_params(body, ("max_tokens",))
    assert info.value.status == 400
