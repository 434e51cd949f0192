"""Concurrent clients on one server: eight clients with eight schemas are decoded together and all
answer validly; a request whose grammar is still compiling holds up nobody; a client killed
mid-stream frees its slot at once; a full queue answers 429. Ordering facts are asserted, never
timings."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

import gbnf_sampler as gs
from serve_helpers import MESSAGES, SCHEMAS, Server, running_server, valid_json

openai = pytest.importorskip("openai", reason="the openai client is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed")


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with running_server(parallel=8, ctx=1024, queue=8) as s:
        yield s


@pytest.fixture(scope="module")
def client(server: Server) -> Any:
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=600)


def _ask(client: Any, schema: dict[str, Any], field: str = "response_format") -> Any:
    if field == "response_format":
        spec = {
            "type": "json_schema",
            "json_schema": {"name": "s", "strict": True, "schema": schema},
        }
        kwargs: dict[str, Any] = {"response_format": spec}
    else:
        kwargs = {"extra_body": {field: schema}}
    return client.chat.completions.create(
        model="default", messages=MESSAGES, max_tokens=200, temperature=0, **kwargs
    )


def test_eight_clients_eight_schemas_decode_together(server: Server, client: Any) -> None:
    steps_before = server.engine.steps
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda s: _ask(client, s), SCHEMAS))
    steps = server.engine.steps - steps_before
    for schema, out in zip(SCHEMAS, results, strict=True):
        assert out.choices[0].finish_reason == "stop"
        valid_json(out.choices[0].message.content, schema)
    tokens = sum(out.usage.completion_tokens for out in results)
    # One at a time would take a decode step per token (plus prompt steps); batched, the
    # sequences share steps.
    assert steps < tokens


def test_a_compiling_grammar_blocks_nobody(server: Server, client: Any) -> None:
    entered, release = threading.Event(), threading.Event()
    slow_schema = {"title": "slow", **SCHEMAS[1]}

    def hook(param: str, spec: Any) -> None:
        if isinstance(spec, dict) and spec.get("title") == "slow":
            entered.set()
            release.wait(timeout=300)

    server.engine.compile_hook = hook
    try:
        with ThreadPoolExecutor(8) as pool:
            slow: Future[Any] = pool.submit(_ask, client, slow_schema, "guided_json")
            assert entered.wait(timeout=120), "the slow request never reached its compile"
            others = [pool.submit(_ask, client, s) for s in SCHEMAS[:7]]
            for schema, future in zip(SCHEMAS, others, strict=False):
                out = future.result(timeout=600)
                valid_json(out.choices[0].message.content, schema)
            # Every other request finished while the slow grammar was still compiling.
            assert not slow.done()
            release.set()
            out = slow.result(timeout=600)
        valid_json(out.choices[0].message.content, slow_schema)
    finally:
        release.set()
        server.engine.compile_hook = None


def test_a_grammar_failing_mid_answer_fails_only_its_request(server: Server, client: Any) -> None:
    # With a tiny parser-state limit, this ambiguous grammar raises GrammarTooComplexError when
    # its first token is accepted, inside the decode loop, next to a request that is fine.
    bad = 'root ::= "x" ' + "x? " * 200 + '\nx ::= "x"'
    server.engine.max_state_size = 50
    try:
        with ThreadPoolExecutor(2) as pool:
            failing = pool.submit(
                httpx.post,
                server.url + "/v1/completions",
                json={"prompt": "x", "max_tokens": 20, "grammar": bad},
                timeout=600,
            )
            fine = pool.submit(_ask, client, SCHEMAS[1], "guided_json")
            response = failing.result(timeout=600)
            out = fine.result(timeout=600)
    finally:
        server.engine.max_state_size = gs.limits.DEFAULT_MAX_STATE_SIZE
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "grammar_too_complex" and "max_state_size" in error["message"]
    valid_json(out.choices[0].message.content, SCHEMAS[1])
    assert _health(server.url)["slots_busy"] == 0


# ---- one slot, no queue ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def single() -> Iterator[Server]:
    with running_server(parallel=1, ctx=4096, queue=0) as s:
        yield s


LONG = {
    "model": "default",
    "prompt": "Once upon a time",
    "max_tokens": 4000,
    "ignore_eos": True,
    "temperature": 0,
    "stream": True,
}
CLIENT = textwrap.dedent(
    """
    import sys, httpx
    body = {body}
    if not body["stream"]:  # waits for the whole answer
        print("waiting", flush=True)
        httpx.post(sys.argv[1] + "/v1/completions", json=body, timeout=600)
    else:
        with httpx.stream("POST", sys.argv[1] + "/v1/completions", json=body, timeout=600) as r:
            for line in r.iter_lines():
                if line.startswith("data: "):
                    print("streaming", flush=True)
    """
)


def _health(url: str) -> dict[str, Any]:
    return dict(httpx.get(url + "/health", timeout=60).json())


def _wait_idle(url: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        health = _health(url)
        if health["slots_busy"] == 0 and health["queued"] == 0:
            return health
        time.sleep(0.1)
    raise AssertionError(f"the slot was not freed: {health}")


def _wait_busy(url: str) -> None:
    deadline = time.monotonic() + 120
    while _health(url)["slots_busy"] != 1:
        if time.monotonic() > deadline:
            raise AssertionError("the request never took the slot")
        time.sleep(0.05)


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "waiting"])
def test_killed_client_frees_its_slot(single: Server, stream: bool) -> None:
    before = _health(single.url)["cancelled"]
    script = CLIENT.replace("{body}", repr({**LONG, "stream": stream}))
    with subprocess.Popen(
        [sys.executable, "-c", script, single.url], stdout=subprocess.PIPE, text=True
    ) as proc:
        try:
            expected = "streaming" if stream else "waiting"
            assert proc.stdout is not None and proc.stdout.readline().strip() == expected
            _wait_busy(single.url)
        finally:
            proc.kill()
    health = _wait_idle(single.url)
    assert health["cancelled"] == before + 1  # dropped, not run to its 4000 tokens
    body = {"prompt": "Hello", "max_tokens": 3, "guided_choice": ["hi", "bye"]}
    response = httpx.post(single.url + "/v1/completions", json=body, timeout=600)
    assert response.status_code == 200, response.text  # one slot, no queue: it was free
    assert response.json()["choices"][0]["text"] in ("hi", "bye")


def test_full_queue_is_429_and_closing_a_stream_frees_the_slot(single: Server) -> None:
    with (
        httpx.Client(base_url=single.url, timeout=600) as http,
        http.stream("POST", "/v1/completions", json=LONG) as stream,
    ):
        lines = stream.iter_lines()  # kept open: closing it would close the stream
        assert next(lines).startswith("data: ")
        response = http.post("/v1/completions", json={"prompt": "x", "max_tokens": 2})
        assert response.status_code == 429
        error = response.json()["error"]
        assert error["code"] == "queue_full" and error["message"]
        ollama = http.post("/api/generate", json={"model": "default", "prompt": "x"})
        assert ollama.status_code == 429 and list(ollama.json()) == ["error"]
    _wait_idle(single.url)
    response = httpx.post(single.url + "/v1/completions", json={"prompt": "x", "max_tokens": 2})
    assert response.status_code == 200
