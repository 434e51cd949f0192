"""Several choices per request (OpenAI's ``n``): decoded as separate sequences from one
compiled grammar, each valid, streamed with their indices; places are reserved for all of them
at once (a 429 that leaves nothing reserved when they do not fit)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

from serve_helpers import MESSAGES, SCHEMAS, Server, running_server, schema_format, valid_json

openai = pytest.importorskip("openai", reason="the openai client is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed")

SCHEMA = SCHEMAS[0]
SPEC = schema_format(SCHEMA)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with running_server(parallel=3, ctx=512, queue=1) as s:
        yield s


@pytest.fixture(scope="module")
def client(server: Server) -> Any:
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=600)


def test_chat_choices_are_each_valid(client: Any) -> None:
    out = client.chat.completions.create(
        model="default",
        messages=MESSAGES,
        n=3,
        max_tokens=60,
        temperature=1.0,
        seed=7,
        response_format=SPEC,
        logprobs=True,
    )
    assert [c.index for c in out.choices] == [0, 1, 2]
    for choice in out.choices:
        assert choice.finish_reason == "stop"
        valid_json(choice.message.content, SCHEMA)
    counted = sum(len(c.logprobs.content) for c in out.choices)
    assert out.usage.completion_tokens == counted


def test_streamed_choices_carry_their_index(client: Any) -> None:
    stream = client.chat.completions.create(
        model="default",
        messages=MESSAGES,
        n=2,
        max_tokens=60,
        temperature=1.0,
        seed=3,
        response_format=SPEC,
        stream=True,
        stream_options={"include_usage": True},
    )
    texts: dict[int, str] = defaultdict(str)
    roles: dict[int, int] = defaultdict(int)
    finishes: dict[int, str] = {}
    usage = None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            assert choice.index not in finishes  # nothing after a choice's finish chunk
            roles[choice.index] += choice.delta.role == "assistant"
            texts[choice.index] += choice.delta.content or ""
            if choice.finish_reason is not None:
                finishes[choice.index] = choice.finish_reason
    assert finishes == {0: "stop", 1: "stop"}
    assert roles == {0: 1, 1: 1}
    for text in texts.values():
        valid_json(text, SCHEMA)
    assert usage is not None and usage.completion_tokens > 0


def test_completion_choices(server: Server) -> None:
    body = {
        "prompt": "A person as JSON: ",
        "n": 2,
        "max_tokens": 60,
        "temperature": 1.0,
        "seed": 11,
        "guided_json": SCHEMA,
    }
    out = httpx.post(server.url + "/v1/completions", json=body, timeout=600).json()
    assert [c["index"] for c in out["choices"]] == [0, 1]
    for choice in out["choices"]:
        valid_json(choice["text"], SCHEMA)
    with httpx.stream(
        "POST", server.url + "/v1/completions", json={**body, "stream": True}, timeout=600
    ) as response:
        lines = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    texts: dict[int, str] = defaultdict(str)
    for line in lines[:-1]:
        for choice in json.loads(line)["choices"]:
            texts[choice["index"]] += choice["text"]
    assert sorted(texts) == [0, 1]
    for text in texts.values():
        valid_json(text, SCHEMA)


def test_choices_beyond_the_free_places_are_a_429_that_reserves_nothing(
    server: Server, client: Any
) -> None:
    # 3 slots + a queue of 1: 5 choices never fit.
    body = {"model": "default", "messages": MESSAGES, "n": 5, "max_tokens": 4}
    response = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=600)
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "queue_full"
    assert server.engine.outstanding == 0
    out = client.chat.completions.create(model="default", messages=MESSAGES, n=4, max_tokens=4)
    assert len(out.choices) == 4
