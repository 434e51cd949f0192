"""Bad requests against a real server (with ``--api-key`` and ``--tool-format mistral``): each gets
its status code and an error body in its API's shape (OpenAI ``{"error": {"message", "type",
"param", "code"}}``, Ollama ``{"error": "..."}``), and the server keeps serving afterwards."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from serve_helpers import MESSAGES, Server, running_server

httpx = pytest.importorskip("httpx", reason="httpx is not installed")

KEY = "test-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
CHAT = "/v1/chat/completions"
SCHEMA_BAD = {"type": "object", "properties": {"a": {"type": "string", "minLength": "x"}}}
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


def chat(**fields: Any) -> dict[str, Any]:
    return {"model": "default", "messages": MESSAGES, "max_tokens": 4, **fields}


# (id, method, path, headers, body (dict -> JSON, bytes -> raw), status, expected error fields)
BAD: list[tuple[str, str, str, dict[str, str], Any, int, dict[str, Any]]] = [
    ("malformed JSON", "POST", CHAT, AUTH, b'{"messages": [', 400, {"code": "invalid_json"}),
    ("body not an object", "POST", CHAT, AUTH, [1, 2], 400, {"code": "invalid_json"}),
    (
        "bad GBNF",
        "POST",
        CHAT,
        AUTH,
        chat(grammar='root ::= "a" undefined-rule'),
        400,
        {"code": "invalid_grammar", "param": "grammar"},
    ),
    (
        "bad schema",
        "POST",
        CHAT,
        AUTH,
        chat(response_format={"type": "json_schema", "json_schema": {"schema": SCHEMA_BAD}}),
        400,
        {"code": "invalid_schema", "param": "response_format"},
    ),
    (
        "grammar and response_format",
        "POST",
        CHAT,
        AUTH,
        chat(grammar='root ::= "a"', response_format={"type": "json_object"}),
        400,
        {"code": "conflicting_constraints"},
    ),
    ("unknown model", "POST", CHAT, AUTH, chat(model="gpt-9"), 404, {"code": "model_not_found"}),
    (
        "too-large body",
        "POST",
        CHAT,
        AUTH,
        chat(padding="x" * (9 << 20)),
        413,
        {"code": "request_too_large"},
    ),
    (
        "too-large grammar",
        "POST",
        CHAT,
        AUTH,
        chat(grammar='root ::= "' + "a" * (1 << 20) + '"'),
        413,
        {"code": "grammar_too_large", "param": "grammar"},
    ),
    ("missing API key", "POST", CHAT, {}, chat(), 401, {"code": "invalid_api_key"}),
    (
        "wrong API key",
        "POST",
        CHAT,
        {"Authorization": "Bearer nope"},
        chat(),
        401,
        {"code": "invalid_api_key"},
    ),
    (
        "unknown tool in tool_choice",
        "POST",
        CHAT,
        AUTH,
        chat(
            tools=[{"type": "function", "function": {"name": "f"}}],
            tool_choice={"type": "function", "function": {"name": "g"}},
        ),
        400,
        {"param": "tools"},
    ),
    (
        "unknown tool_format",
        "POST",
        CHAT,
        AUTH,
        chat(tools=[TOOL], tool_format="no-such-format"),
        400,
        {"code": "unknown_tool_format", "param": "tool_format"},
    ),
    (
        "tool without a name",
        "POST",
        CHAT,
        AUTH,
        chat(tools=[{"type": "function", "function": {"parameters": {}}}]),
        400,
        {"param": "tools"},
    ),
    ("unknown tool_choice", "POST", CHAT, AUTH, chat(tools=[TOOL], tool_choice="often"), 400, {}),
    (
        "tools with a JSON response_format",
        "POST",
        CHAT,
        AUTH,
        chat(tools=[TOOL], response_format={"type": "json_object"}),
        400,
        {"param": "tools"},
    ),
    (
        "reasoning in a format without a think section",
        "POST",
        CHAT,
        AUTH,
        chat(reasoning=True),
        400,
        {"param": "reasoning"},
    ),
    (
        "bad reasoning budget",
        "POST",
        CHAT,
        AUTH,
        chat(reasoning={"budget": -2}, tool_format="hermes"),
        400,
        {"param": "reasoning"},
    ),
    (
        "lazy grammar with a pattern trigger",
        "POST",
        CHAT,
        AUTH,
        chat(
            grammar_lazy=True, grammar='root ::= "a"', grammar_triggers=[{"type": 3, "value": "a"}]
        ),
        400,
        {"code": "unsupported_parameter", "param": "grammar_triggers"},
    ),
    ("n=17", "POST", CHAT, AUTH, chat(n=17), 400, {"param": "n"}),
    ("n not an integer", "POST", CHAT, AUTH, chat(n="two"), 400, {"param": "n"}),
    (
        "top_logprobs without logprobs",
        "POST",
        CHAT,
        AUTH,
        chat(top_logprobs=2),
        400,
        {"param": "top_logprobs"},
    ),
    (
        "top_logprobs above 20",
        "POST",
        CHAT,
        AUTH,
        chat(logprobs=True, top_logprobs=21),
        400,
        {"param": "top_logprobs"},
    ),
    ("logprobs not a boolean", "POST", CHAT, AUTH, chat(logprobs=3), 400, {"param": "logprobs"}),
    (
        "completions logprobs above 5",
        "POST",
        "/v1/completions",
        AUTH,
        {"prompt": "x", "logprobs": 6},
        400,
        {"param": "logprobs"},
    ),
    ("bad temperature", "POST", CHAT, AUTH, chat(temperature="hot"), 400, {"param": "temperature"}),
    ("no messages", "POST", CHAT, AUTH, {"model": "default"}, 400, {"param": "messages"}),
    (
        "prompt longer than the context",
        "POST",
        CHAT,
        AUTH,
        chat(messages=[{"role": "user", "content": "word " * 400}]),
        400,
        {"code": "context_length_exceeded"},
    ),
    ("bad regex", "POST", CHAT, AUTH, chat(guided_regex="(a"), 400, {"param": "guided_regex"}),
    (
        "grammar too big to compile",
        "POST",
        CHAT,
        AUTH,
        chat(grammar='root ::= ((("a"){1000}){1000}){1000}'),
        400,
        {"code": "grammar_too_complex", "param": "grammar"},
    ),
    ("unknown route", "POST", "/v1/embeddings", AUTH, chat(), 404, {}),
    ("wrong method", "GET", CHAT, AUTH, None, 405, {}),
    (
        "completions: prompt list",
        "POST",
        "/v1/completions",
        AUTH,
        {"prompt": ["a", "b"]},
        400,
        {"param": "prompt"},
    ),
]
OLLAMA_BAD: list[tuple[str, str, dict[str, Any], int]] = [
    ("unknown model", "/api/chat", {"model": "llama9", "messages": MESSAGES}, 404),
    ("bad format", "/api/chat", {"model": "default", "messages": MESSAGES, "format": 3}, 400),
    (
        "bad format schema",
        "/api/generate",
        {"model": "default", "prompt": "x", "format": SCHEMA_BAD},
        400,
    ),
    ("no prompt", "/api/generate", {"model": "default"}, 400),
    ("bad options", "/api/generate", {"model": "default", "prompt": "x", "options": 3}, 400),
    (
        "unknown tool_format",
        "/api/chat",
        {"model": "default", "messages": MESSAGES, "tools": [TOOL], "tool_format": "nope"},
        400,
    ),
    ("bad think", "/api/chat", {"model": "default", "messages": MESSAGES, "think": [1]}, 400),
]


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with running_server(parallel=1, ctx=256, queue=4, api_key=KEY, tool_format="mistral") as s:
        yield s


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[Any]:
    with httpx.Client(base_url=server.url, timeout=300) as c:
        yield c


def _send(http: Any, method: str, path: str, headers: dict[str, str], body: Any) -> Any:
    if body is None:
        return http.request(method, path, headers=headers)
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {**headers, "Content-Type": "application/json"}
    return http.request(method, path, headers=headers, content=content)


@pytest.mark.parametrize(
    ("method", "path", "headers", "body", "status", "fields"),
    [case[1:] for case in BAD],
    ids=[case[0] for case in BAD],
)
def test_bad_request_gets_openai_error(
    http: Any,
    method: str,
    path: str,
    headers: dict[str, str],
    body: Any,
    status: int,
    fields: dict[str, Any],
) -> None:
    response = _send(http, method, path, headers, body)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert {"message", "type", "param", "code"} <= set(error)
    assert isinstance(error["message"], str) and error["message"]
    for key, value in fields.items():
        assert error[key] == value, error


def test_grammar_error_carries_line_column_snippet(http: Any) -> None:
    body = chat(grammar='root ::= "a"\nitem ::= [a-z\n')
    error = _send(http, "POST", CHAT, AUTH, body).json()["error"]
    diagnostic = error["diagnostic"]
    assert diagnostic["line"] == 2 and diagnostic["column"] > 0
    assert diagnostic["snippet"] == "item ::= [a-z"
    assert "line 2" in error["message"]


def test_schema_error_carries_json_pointer(http: Any) -> None:
    body = chat(json_schema=SCHEMA_BAD)
    error = _send(http, "POST", CHAT, AUTH, body).json()["error"]
    assert error["diagnostic"]["path"] == "/properties/a/minLength"
    assert "/properties/a/minLength" in error["message"]


def test_conflict_names_both_fields(http: Any) -> None:
    body = chat(guided_json={"type": "object"}, structured_outputs={"regex": "a+"})
    error = _send(http, "POST", CHAT, AUTH, body).json()["error"]
    assert "'guided_json'" in error["message"] and "'structured_outputs.regex'" in error["message"]


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [case[1:] for case in OLLAMA_BAD],
    ids=[case[0] for case in OLLAMA_BAD],
)
def test_bad_ollama_request_gets_ollama_error(
    http: Any, path: str, body: dict[str, Any], status: int
) -> None:
    response = _send(http, "POST", path, AUTH, body)
    assert response.status_code == status, response.text
    payload = response.json()
    assert list(payload) == ["error"] and isinstance(payload["error"], str)


def test_unknown_fields_are_ignored_and_server_still_serves(http: Any) -> None:
    body = chat(guided_choice=["a", "b"], frobnicate={"x": 1}, logit_bias=None, user="u")
    response = _send(http, "POST", CHAT, AUTH, body)
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] in ("a", "b")


def test_health_needs_no_key_and_reports_the_tool_format(http: Any) -> None:
    health = http.get("/health")
    assert health.status_code == 200
    assert health.json()["tool_format"] == "mistral"  # build_app(tool_format=...) forced it
    assert health.json()["tool_format_source"] == "given"
    assert http.get("/v1/models").status_code == 401
    assert http.get("/v1/models", headers={"x-api-key": KEY}).status_code == 200


def test_the_forced_format_writes_the_calls(http: Any) -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "pick",
            "parameters": {
                "type": "object",
                "properties": {"color": {"enum": ["red", "blue"]}},
                "required": ["color"],
                "additionalProperties": False,
            },
        },
    }
    body = chat(tools=[tool], tool_choice="required", parallel_tool_calls=False, max_tokens=40)
    body["temperature"] = 0
    response = _send(http, "POST", CHAT, AUTH, body)
    assert response.status_code == 200, response.text
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls", choice
    (call,) = choice["message"]["tool_calls"]
    assert call["function"]["name"] == "pick"
    assert json.loads(call["function"]["arguments"])["color"] in ("red", "blue")
