"""The server's pieces that need no model: which field of a request constrains it (every
dialect, conflicts, sizes), the tool-call format (chosen from the chat template, the
architecture, ``--tool-format`` or the request), tool grammars and parsing back (whole and
streamed), tool history in prompts, stop strings across token boundaries, and the sampler
honouring the mask."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import gbnf_sampler as gs

pytest.importorskip("starlette", reason="the serve extra is not installed")
pytest.importorskip("sse_starlette", reason="the serve extra is not installed")

from gbnf_sampler.cli import main
from gbnf_sampler.cli.status import EXIT_USAGE
from gbnf_sampler.errors import StructuralTagError, UnknownFormatError
from gbnf_sampler.limits import SERVE_MAX_GRAMMAR_BYTES
from gbnf_sampler.llama.chat import tool_messages
from gbnf_sampler.serve.constraints import Constraint, find_constraint, output_reader
from gbnf_sampler.serve.errors import ApiError, from_constraint_error
from gbnf_sampler.serve.sampling import SamplingParams, sample, sampling_params
from gbnf_sampler.serve.text import TextStream, complete_utf8
from gbnf_sampler.serve.tools import server_format

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


def test_property_order_reaches_the_answer_after_a_think_section() -> None:
    body = {
        "response_format": {"type": "json_schema", "json_schema": {"schema": TWO_KEYS}},
        "reasoning": True,
        "tool_format": "hermes",
    }
    schema_order = find_constraint(body)
    any_order = find_constraint({**body, "property_order": "any"})
    assert schema_order is not None and any_order is not None
    assert schema_order.param == any_order.param == "reasoning"
    think = "<think>Both keys.</think>\n\n"
    assert accepts(schema_order.build(), think + '{"a": 1, "b": true}')
    assert not accepts(schema_order.build(), think + '{"b": true, "a": 1}')
    assert accepts(any_order.build(), think + '{"b": true, "a": 1}')
    assert not accepts(any_order.build(), think + '{"b": true}')


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


LAZY = 'root ::= "<call>" [0-9]+ "."\n'


@pytest.mark.parametrize(
    "triggers",
    [
        [{"type": 1, "value": "<call>"}],
        [{"type": "word", "value": "<call>"}],
        ["<call>"],
    ],
)
def test_lazy_grammar_is_free_until_a_trigger(triggers: list[Any]) -> None:
    body = {"grammar": LAZY, "grammar_lazy": True, "grammar_triggers": triggers}
    constraint = find_constraint(body)
    assert constraint is not None and constraint.param == "grammar"
    grammar = constraint.build()
    assert accepts(grammar, "Let me think. <call>12.")
    assert accepts(grammar, "<call>7.")
    assert accepts(grammar, "No call at all.")
    assert not accepts(grammar, "Now <call>x.")  # after the trigger, the grammar rules
    assert not accepts(grammar, "<call>1. more")


def test_lazy_grammar_with_a_token_trigger() -> None:
    body = {
        "grammar": 'root ::= <[5]> "x"',
        "grammar_lazy": True,
        "grammar_triggers": [{"type": 0, "token": 5, "value": "<sp>"}],
    }
    constraint = find_constraint(body)
    assert constraint is not None and constraint.build() is not None


@pytest.mark.parametrize(
    ("body", "param", "match"),
    [
        ({"grammar": LAZY, "grammar_triggers": ["<call>"]}, "grammar_triggers", "grammar_lazy"),
        ({"grammar_lazy": True, "grammar_triggers": ["<call>"]}, "grammar", "needs a grammar"),
        ({"grammar": LAZY, "grammar_lazy": True}, "grammar_triggers", "non-empty list"),
        (
            {
                "grammar": LAZY,
                "grammar_lazy": True,
                "grammar_triggers": [{"type": 2, "value": "a"}],
            },
            "grammar_triggers",
            "pattern triggers are not supported",
        ),
        (
            {"grammar": LAZY, "grammar_lazy": True, "grammar_triggers": [{"type": 9}]},
            "grammar_triggers",
            "type must be",
        ),
        (
            {
                "grammar": LAZY,
                "grammar_lazy": True,
                "grammar_triggers": [{"type": 0, "value": "x"}],
            },
            "grammar_triggers",
            "token",
        ),
        (
            {"grammar": LAZY, "grammar_lazy": True, "grammar_triggers": [{"type": 1, "value": ""}]},
            "grammar_triggers",
            "non-empty",
        ),
    ],
)
def test_bad_lazy_grammars_are_a_clear_400(body: dict[str, Any], param: str, match: str) -> None:
    with pytest.raises(ApiError, match=match) as info:
        find_constraint(body)
    assert info.value.status == 400 and info.value.param == param


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


GEMMA = gs.tool_formats.get("gemma")
HERMES = gs.tool_formats.get("hermes")
QWEN_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}"
    "{% if tools %}<tools>{{ tools | tojson }}</tools> answer in <tool_call></tool_call>"
    "{% endif %}"
)


@pytest.mark.parametrize(
    ("metadata", "forced", "name", "how"),
    [
        ({"general.architecture": "gemma3"}, None, "gemma", "architecture 'gemma3'"),
        ({"tokenizer.chat_template": QWEN_TEMPLATE}, None, "hermes", "chat template"),
        (
            {"tokenizer.chat_template": QWEN_TEMPLATE, "general.architecture": "gemma3"},
            None,
            "hermes",  # the template wins over the architecture
            "chat template",
        ),
        ({"general.architecture": "llama"}, None, "llama3", "architecture 'llama'"),
        ({"general.architecture": "phi3"}, None, "hermes", "no chat template; default"),
        (
            {"tokenizer.chat_template": "{{ messages }}", "general.architecture": "phi3"},
            None,
            "hermes",
            "chat template not recognized; default",
        ),
        ({"general.architecture": "gemma3"}, "mistral", "mistral", "given"),
        ({}, "qwen3", "hermes", "given"),  # an alias
    ],
)
def test_server_format_choice(
    metadata: dict[str, str], forced: str | None, name: str, how: str
) -> None:
    fmt, chosen = server_format(metadata, forced)
    assert (fmt.name, chosen) == (name, how)


def test_unknown_tool_format_lists_the_known_names() -> None:
    with pytest.raises(UnknownFormatError) as info:
        server_format({}, "no-such-format")
    assert "no-such-format" in str(info.value)
    assert all(n in str(info.value) for n in gs.tool_formats.names())


def test_cli_unknown_tool_format_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["serve", "--tool-format", "nope"])
    assert info.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--tool-format" in err and "unknown tool-call format 'nope'" in err
    assert "hermes" in err and "gemma" in err and "harmony" in err


def _tools(body: dict[str, Any], fmt: Any = GEMMA, dialect: str = "openai") -> Constraint:
    constraint = find_constraint({"tools": TOOLS, **body}, dialect=dialect, tool_format=fmt)
    assert constraint is not None and constraint.chat is not None
    return constraint


def test_required_tools_follow_the_server_format() -> None:
    constraint = _tools({"tool_choice": "required"})
    assert constraint.param == "tools" and constraint.chat is not None
    assert constraint.chat.format is GEMMA
    grammar = constraint.build()
    assert accepts(grammar, "```tool_code\nf(x=1)\n```")
    assert accepts(grammar, "```tool_code\nf(x=1)\ng()\n```")  # parallel calls by default
    assert not accepts(grammar, '```tool_code\nf(x="1")\n```')  # x is an integer
    assert not accepts(grammar, "```tool_code\nh()\n```")  # no such tool
    assert not accepts(grammar, "Sure.")  # required: a call, not text
    message = output_reader(constraint).message("```tool_code\nf(x=1)\ng()\n```")
    assert message["content"] is None
    calls = [
        (c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message["tool_calls"]
    ]
    assert calls == [("f", {"x": 1}), ("g", {})]


def test_parallel_false_named_and_auto() -> None:
    single = _tools({"tool_choice": "required", "parallel_tool_calls": False}).build()
    assert accepts(single, "```tool_code\ng()\n```")
    assert not accepts(single, "```tool_code\nf(x=1)\ng()\n```")
    named = _tools({"tool_choice": {"type": "function", "function": {"name": "g"}}}).build()
    assert accepts(named, "```tool_code\ng()\n```")
    assert not accepts(named, "```tool_code\nf(x=1)\n```")
    auto = _tools({"tool_choice": "auto"})
    assert accepts(auto.build(), "It is sunny.")
    assert accepts(auto.build(), "Let me see.\n```tool_code\nf(x=2)\n```")
    message = output_reader(auto).message("It is sunny.")
    assert message == {"role": "assistant", "content": "It is sunny."}


def test_the_request_may_name_its_own_format() -> None:
    constraint = _tools({"tool_choice": "required", "tool_format": "hermes"})
    assert constraint.chat is not None and constraint.chat.format is HERMES
    assert accepts(constraint.build(), '<tool_call>\n{"name": "g", "arguments": {}}\n</tool_call>')
    with pytest.raises(ApiError) as info:
        _tools({"tool_format": "nope"})
    assert info.value.status == 400 and info.value.code == "unknown_tool_format"
    assert "hermes" in info.value.message and "gemma" in info.value.message


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ({"tool_choice": {"type": "function", "function": {"name": "nope"}}}, "no tool named"),
        ({"tool_choice": "sometimes"}, "unknown tool_choice"),
        (
            {"tool_choice": "auto", "response_format": {"type": "json_object"}},
            "not supported together",
        ),
        ({"reasoning": True}, "no reasoning section"),  # gemma has no think section
    ],
)
def test_bad_tool_requests_fail_when_built(body: dict[str, Any], match: str) -> None:
    constraint = _tools(body)
    with pytest.raises(StructuralTagError, match=match) as info:
        constraint.build()
    error = from_constraint_error(info.value, constraint.param)
    assert error.status == 400 and error.param == "tools"


def test_reasoning_with_a_think_format_and_budgets() -> None:
    body = {"reasoning": True, "tool_format": "hermes"}
    constraint = find_constraint(body)
    assert constraint is not None and constraint.param == "reasoning"
    grammar = constraint.build()
    assert accepts(grammar, "<think>\nhmm { not json\n</think>\n\nThe answer.")
    message = output_reader(constraint).message("<think>\nhmm\n</think>\n\nThe answer.")
    assert message["reasoning_content"] == "hmm" and message["content"] == "The answer."
    assert output_reader(constraint).budget is None
    budget = find_constraint({**body, "reasoning": {"budget": 8}})
    assert budget is not None and budget.build() is not None
    assert output_reader(budget).budget == gs.tool_formats.ReasoningBudget("<think>", "</think>", 8)
    with pytest.raises(StructuralTagError, match="budget"):
        bad = find_constraint({**body, "reasoning": {"budget": -1}})
        assert bad is not None
        bad.build()


def test_streamed_deltas_add_up_to_the_message() -> None:
    constraint = _tools({"tool_choice": "auto"}, fmt=HERMES)
    constraint.build()
    text = 'Checking.\n<tool_call>\n{"name": "f", "arguments": {"x": 7}}\n</tool_call>'
    stream = output_reader(constraint).stream()
    deltas = [d for i in range(0, len(text), 3) for d in stream.feed(text[i : i + 3])]
    deltas += stream.finish()
    content = "".join(d.get("content", "") for d in deltas)
    pieces = [p for d in deltas for p in d.get("tool_calls", [])]
    assert content == "Checking."
    assert pieces[0]["function"]["name"] == "f" and pieces[0]["id"].startswith("call_")
    assert json.loads("".join(p["function"]["arguments"] for p in pieces)) == {"x": 7}
    whole = stream.message()
    assert whole["tool_calls"][0]["id"] == pieces[0]["id"]


def test_ollama_tools_and_think() -> None:
    constraint = _tools({"think": True}, fmt=HERMES, dialect="ollama")
    assert constraint.chat is not None and constraint.chat.body["reasoning"] is True
    grammar = constraint.build()
    assert accepts(grammar, "<think>\nx\n</think>\n\nDone.")
    with pytest.raises(ApiError):
        find_constraint({"think": [1]}, dialect="ollama")


def test_tool_history_for_a_template_without_tools() -> None:
    messages = [
        {"role": "user", "content": "Add."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "2"},
    ]
    out = tool_messages(messages, None, GEMMA, TOOLS)
    assert out[0]["role"] == "system" and "```tool_code\nf(x=1)\n```" in out[0]["content"]
    assert out[2] == {"role": "assistant", "content": "```tool_code\nf(x=1)\n```"}
    assert out[3] == {"role": "user", "content": "Result of f: 2"}
    native = tool_messages(messages, QWEN_TEMPLATE, HERMES, TOOLS)
    assert native[1]["tool_calls"][0]["function"]["arguments"] == {"x": 1}  # decoded
    assert native[2]["role"] == "tool" and len(native) == 3


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
