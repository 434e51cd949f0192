"""``gbnf-sampler serve`` against real clients: the official ``openai`` client for the OpenAI
dialects (and every other dialect's fields through ``extra_body``), raw HTTP for Ollama, each
non-streamed and streamed, every output validated (jsonschema, our Matcher for GBNF)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from serve_helpers import (
    CHOICES,
    GBNF,
    MESSAGES,
    PERSON,
    REGEX,
    SCHEMAS,
    TOOLS,
    Server,
    running_server,
    sse_lines,
    valid_gbnf,
    valid_json,
    valid_regex,
    valid_tool_call,
)

openai = pytest.importorskip("openai", reason="the openai client is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed")

LOCALAI_FUNCTIONS = {
    "oneOf": [
        {
            "type": "object",
            "properties": {
                "function": {"const": "get_weather"},
                "arguments": TOOLS[0]["function"]["parameters"],
            },
            "required": ["function", "arguments"],
            "additionalProperties": False,
        }
    ]
}


def _schema_check(schema: Any) -> Callable[[str], None]:
    return lambda text: valid_json(text, schema) and None


def _json_object(text: str) -> None:
    assert isinstance(json.loads(text), dict)


def _in_choices(text: str) -> None:
    assert text in CHOICES


# name -> (create() keyword arguments, check of the output text)
CASES: dict[str, tuple[dict[str, Any], Callable[[str], None]]] = {
    "openai json_schema strict": (
        {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "person", "strict": True, "schema": PERSON},
            }
        },
        _schema_check(PERSON),
    ),
    "openai json_object": ({"response_format": {"type": "json_object"}}, _json_object),
    "llama-cpp-python json_object + schema": (
        {"response_format": {"type": "json_object", "schema": SCHEMAS[1]}},
        _schema_check(SCHEMAS[1]),
    ),
    "llama.cpp grammar": ({"extra_body": {"grammar": GBNF}}, lambda t: valid_gbnf(t, GBNF)),
    "llama.cpp json_schema": (
        {"extra_body": {"json_schema": SCHEMAS[7]}},
        _schema_check(SCHEMAS[7]),
    ),
    "LocalAI grammar_json_functions": (
        {"extra_body": {"grammar_json_functions": LOCALAI_FUNCTIONS}},
        _schema_check(LOCALAI_FUNCTIONS),
    ),
    "vLLM structured_outputs json": (
        {"extra_body": {"structured_outputs": {"json": SCHEMAS[4]}}},
        _schema_check(SCHEMAS[4]),
    ),
    "vLLM structured_outputs regex": (
        {"extra_body": {"structured_outputs": {"regex": REGEX}}},
        lambda t: valid_regex(t, REGEX),
    ),
    "vLLM structured_outputs choice": (
        {"extra_body": {"structured_outputs": {"choice": CHOICES}}},
        _in_choices,
    ),
    "vLLM structured_outputs grammar": (
        {"extra_body": {"structured_outputs": {"grammar": GBNF}}},
        lambda t: valid_gbnf(t, GBNF),
    ),
    "vLLM guided_json": ({"extra_body": {"guided_json": SCHEMAS[6]}}, _schema_check(SCHEMAS[6])),
    "vLLM guided_regex": ({"extra_body": {"guided_regex": REGEX}}, lambda t: valid_regex(t, REGEX)),
    "vLLM guided_choice": ({"extra_body": {"guided_choice": CHOICES}}, _in_choices),
    "vLLM guided_grammar": (
        {"extra_body": {"guided_grammar": GBNF}},
        lambda t: valid_gbnf(t, GBNF),
    ),
}


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with running_server(parallel=4, ctx=2048, queue=16) as s:
        yield s


@pytest.fixture(scope="module")
def client(server: Server) -> Any:
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=600)


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[Any]:
    with httpx.Client(base_url=server.url, timeout=600) as c:
        yield c


def _create(client: Any, stream: bool, **kwargs: Any) -> tuple[str, str, Any]:
    """(text, finish_reason, usage) of a chat completion, streamed or not."""
    base = {"model": "default", "messages": MESSAGES, "max_tokens": 200, "temperature": 0}
    if not stream:
        out = client.chat.completions.create(**base, **kwargs)
        return out.choices[0].message.content, out.choices[0].finish_reason, out.usage
    chunks = list(
        client.chat.completions.create(
            **base, **kwargs, stream=True, stream_options={"include_usage": True}
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finish = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finish[-1] is not None and all(f is None for f in finish[:-1])
    assert chunks[0].choices[0].delta.role == "assistant"
    return text, finish[-1], chunks[-1].usage


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("case", list(CASES))
def test_dialect_output_is_valid(client: Any, case: str, stream: bool) -> None:
    kwargs, check = CASES[case]
    text, finish, usage = _create(client, stream, **kwargs)
    assert finish == "stop", text
    check(text)
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def _tool_calls(client: Any, stream: bool, **kwargs: Any) -> tuple[list[Any], str]:
    """(calls as (name, arguments text), finish_reason) of a chat completion with tools."""
    base = {"model": "default", "messages": MESSAGES, "max_tokens": 200, "temperature": 0}
    base.update(kwargs)
    kwargs = {}
    if not stream:
        out = client.chat.completions.create(**base, tools=TOOLS, **kwargs)
        calls = out.choices[0].message.tool_calls or []
        assert all(c.id.startswith("call_") and c.type == "function" for c in calls)
        return [(c.function.name, c.function.arguments) for c in calls], out.choices[
            0
        ].finish_reason
    parts: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    finish = None
    for chunk in client.chat.completions.create(**base, tools=TOOLS, stream=True, **kwargs):
        delta = chunk.choices[0].delta
        assert not delta.content, "a tool-call answer streams no content"
        for call in delta.tool_calls or []:
            if call.function.name:
                names[call.index] = call.function.name
            parts.setdefault(call.index, []).append(call.function.arguments or "")
        finish = chunk.choices[0].finish_reason or finish
    return [(names[i], "".join(parts[i])) for i in sorted(parts)], str(finish)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_tool_choice_required(client: Any, stream: bool) -> None:
    # One call: with a list allowed, the tiny model repeats calls until max_tokens (lists are
    # covered by test_serve_units.py: the grammar accepts them, the parsers split them).
    calls, finish = _tool_calls(client, stream, tool_choice="required", parallel_tool_calls=False)
    assert finish == "tool_calls" and len(calls) == 1
    valid_tool_call(*calls[0])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_tool_choice_named(client: Any, stream: bool) -> None:
    choice = {"type": "function", "function": {"name": "add"}}
    calls, finish = _tool_calls(client, stream, tool_choice=choice)
    assert finish == "tool_calls"
    assert [name for name, _ in calls] == ["add"]
    valid_tool_call("add", calls[0][1])


def test_parallel_tool_calls_come_as_a_list_of_valid_calls(client: Any) -> None:
    calls, finish = _tool_calls(client, False, tool_choice="required", max_tokens=60)
    if finish == "tool_calls":
        for name, arguments in calls:
            valid_tool_call(name, arguments)
    else:  # cut short by max_tokens inside the list: no call is made up from a prefix
        assert finish == "length" and calls == []


def test_tool_choice_auto_is_text_or_valid_calls(client: Any) -> None:
    out = client.chat.completions.create(
        model="default", messages=MESSAGES, tools=TOOLS, max_tokens=60, temperature=0
    )
    message = out.choices[0].message
    if message.tool_calls:
        assert out.choices[0].finish_reason == "tool_calls"
        for call in message.tool_calls:
            valid_tool_call(call.function.name, call.function.arguments)
    else:
        assert message.content and message.content.lstrip()[:1] not in ("{", "[")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sampling_with_temperature_top_p_top_k_is_valid(client: Any, seed: int) -> None:
    # (Not asserted: equal outputs for equal seeds. Logits depend in their last bits on how the
    # batch was composed and on prefix reuse, as in every batched server.)
    kwargs, check = CASES["openai json_schema strict"]
    options = {"temperature": 0.9, "top_p": 0.95, "seed": seed, "extra_body": {"top_k": 40}}
    out = client.chat.completions.create(model="default", messages=MESSAGES, **kwargs, **options)
    assert out.choices[0].finish_reason == "stop"
    check(out.choices[0].message.content)


def test_raw_sse_stream_ends_with_done(http: Any) -> None:
    body = {"messages": MESSAGES, "guided_choice": CHOICES, "stream": True, "temperature": 0}
    response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    payloads = sse_lines(response.text)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) in CHOICES


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_completions_with_grammar(client: Any, stream: bool) -> None:
    kwargs = {"model": "default", "prompt": "Q: 6 times 7?\nA:", "max_tokens": 20}
    extra = {"extra_body": {"grammar": GBNF}, "temperature": 0}
    if stream:
        chunks = list(client.completions.create(**kwargs, **extra, stream=True))
        text = "".join(c.choices[0].text for c in chunks)
        finish = chunks[-1].choices[0].finish_reason
    else:
        out = client.completions.create(**kwargs, **extra)
        text, finish = out.choices[0].text, out.choices[0].finish_reason
        assert out.object == "text_completion"
    assert finish == "stop"
    valid_gbnf(text, GBNF)


def test_unconstrained_completion_stops_at_max_tokens(client: Any) -> None:
    out = client.completions.create(
        model="default",
        prompt="Once upon a time",
        max_tokens=7,
        temperature=0,
        extra_body={"ignore_eos": True},
    )
    assert out.choices[0].finish_reason == "length"
    assert out.usage.completion_tokens == 7


def test_stop_string_ends_the_answer(client: Any) -> None:
    out = client.completions.create(
        model="default",
        prompt="Count: 1, 2, 3,",
        max_tokens=30,
        temperature=0,
        stop=[" 6"],
        extra_body={"guided_regex": "( [0-9],)+"},
    )
    assert out.choices[0].finish_reason == "stop"
    assert " 6" not in out.choices[0].text


def test_prompt_prefix_is_reused_by_the_slot(client: Any) -> None:
    kwargs, _ = CASES["vLLM guided_choice"]
    messages = [{"role": "user", "content": "A long question that is asked twice. " * 8}]
    client.chat.completions.create(model="default", messages=messages, max_tokens=5, **kwargs)
    again = client.chat.completions.create(
        model="default", messages=messages, max_tokens=5, **kwargs
    )
    cached = again.usage.prompt_tokens_details.cached_tokens
    assert cached >= again.usage.prompt_tokens - 1


def test_models_and_health(client: Any, http: Any) -> None:
    models = client.models.list()
    assert [m.id for m in models.data] == ["gemma-3-270m-q4_k_m"]
    health = http.get("/health").json()
    assert health["status"] == "ok" and health["slots"] == 4


def test_served_model_id_is_accepted(client: Any) -> None:
    out = client.chat.completions.create(
        model="gemma-3-270m-q4_k_m",
        messages=MESSAGES,
        max_tokens=3,
        extra_body={"guided_choice": CHOICES},
    )
    assert out.model == "gemma-3-270m-q4_k_m"


def _ndjson(response: Any) -> list[dict[str, Any]]:
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines() if line]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_ollama_chat_format_schema(http: Any, stream: bool) -> None:
    body = {
        "model": "default",
        "messages": MESSAGES,
        "format": PERSON,
        "stream": stream,
        "options": {"temperature": 0, "num_predict": 200},
    }
    response = http.post("/api/chat", json=body)
    assert response.status_code == 200
    if stream:
        lines = _ndjson(response)
        assert all(not line["done"] for line in lines[:-1]) and lines[-1]["done"]
        text = "".join(line["message"]["content"] for line in lines)
        last = lines[-1]
    else:
        last = response.json()
        text = last["message"]["content"]
        assert last["message"]["role"] == "assistant"
    assert last["done_reason"] == "stop" and last["eval_count"] > 0
    assert last["prompt_eval_count"] > 0
    valid_json(text, PERSON)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_ollama_generate_format_json(http: Any, stream: bool) -> None:
    body = {
        "model": "default",
        "prompt": 'Reply with {"ok": true}',
        "format": "json",
        "stream": stream,
        "options": {"temperature": 0, "num_predict": 300},
    }
    response = http.post("/api/generate", json=body)
    assert response.status_code == 200
    if stream:
        lines = _ndjson(response)
        text = "".join(line["response"] for line in lines)
        last = lines[-1]
    else:
        last = response.json()
        text = last["response"]
    assert last["done"] is True
    if last["done_reason"] == "stop":
        assert isinstance(json.loads(text), dict)
    else:  # cut at num_predict: still a prefix of a JSON object
        assert text.lstrip().startswith("{")


def test_ollama_chat_tools(http: Any) -> None:
    body = {
        "model": "default",
        "messages": MESSAGES,
        "tools": TOOLS,
        "stream": False,
        "options": {"temperature": 0, "num_predict": 200},
    }
    message = http.post("/api/chat", json=body).json()["message"]
    for call in message.get("tool_calls", []):
        valid_tool_call(call["function"]["name"], call["function"]["arguments"])
    assert message.get("tool_calls") or message["content"]
