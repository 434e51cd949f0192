"""Token log-probabilities from the server (OpenAI ``logprobs`` / ``top_logprobs``, legacy
completions ``logprobs: N``): the shapes of the OpenAI API, and the values checked against the
model's own log-softmax computed here with llama-cpp-python on the same tokens."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from serve_helpers import MESSAGES, SCHEMAS, Server, running_server, schema_format, valid_json

openai = pytest.importorskip("openai", reason="the openai client is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed")

PROMPT = "The three primary colors are"


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with running_server(parallel=2, ctx=512, queue=4) as s:
        yield s


@pytest.fixture(scope="module")
def client(server: Server) -> Any:
    return openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=600)


@pytest.mark.parametrize("constrained", [False, True])
def test_chat_logprobs_cover_every_token(client: Any, constrained: bool) -> None:
    extra = {"response_format": schema_format(SCHEMAS[4])} if constrained else {}
    out = client.chat.completions.create(
        model="default",
        messages=MESSAGES,
        max_tokens=24,
        temperature=0,
        logprobs=True,
        top_logprobs=3,
        **extra,
    )
    choice = out.choices[0]
    content = choice.logprobs.content
    assert len(content) == out.usage.completion_tokens
    assert b"".join(bytes(e.bytes) for e in content) == choice.message.content.encode("utf-8")
    if constrained:
        valid_json(choice.message.content, SCHEMAS[4])
    for e in content:
        tops = [t.logprob for t in e.top_logprobs]
        assert len(tops) == 3 and tops == sorted(tops, reverse=True)
        assert sum(math.exp(t) for t in tops) <= 1.0 + 1e-6
        assert e.logprob <= tops[0] + 1e-6
        if not constrained:  # greedy and unmasked: the pick is the most likely token
            assert e.logprob == pytest.approx(tops[0], abs=1e-6)
            assert e.top_logprobs[0].bytes == e.bytes


def test_streamed_logprobs_follow_the_text(client: Any) -> None:
    stream = client.chat.completions.create(
        model="default",
        messages=MESSAGES,
        max_tokens=16,
        temperature=0,
        logprobs=True,
        stream=True,
        stream_options={"include_usage": True},
        response_format=schema_format(SCHEMAS[0]),
    )
    text, tokens, usage = "", [], None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        if not chunk.choices:
            continue
        text += chunk.choices[0].delta.content or ""
        if chunk.choices[0].logprobs is not None:
            tokens += chunk.choices[0].logprobs.content
    assert usage is not None and len(tokens) == usage.completion_tokens
    assert b"".join(bytes(e.bytes) for e in tokens) == text.encode("utf-8")
    assert all(e.top_logprobs == [] for e in tokens)


def test_no_logprobs_unless_asked(client: Any) -> None:
    out = client.chat.completions.create(
        model="default", messages=MESSAGES, max_tokens=4, temperature=0
    )
    assert out.choices[0].logprobs is None


def _reference_greedy(prompt: str, count: int) -> list[tuple[int, np.ndarray]]:
    """Greedy decoding here, one token at a time: each pick and the model's log-softmax
    before it."""
    from gbnf_sampler.llama.models import load_llama

    llm = load_llama(None, n_ctx=256, progress=False)
    steps = []
    llm.eval(llm.tokenize(prompt.encode("utf-8"), True, True))
    for _ in range(count):
        last = llm._ctx.get_logits_ith(-1)  # the last evaluated token's row
        logits = np.ctypeslib.as_array(last, shape=(llm.n_vocab(),)).astype(np.float64)
        peak = logits.max()
        row = logits - peak - math.log(np.exp(logits - peak).sum())
        pick = int(np.argmax(row))
        steps.append((pick, row))
        llm.eval([pick])
    return steps


def test_completion_logprobs_are_the_models(server: Server) -> None:
    body = {"prompt": PROMPT, "max_tokens": 6, "temperature": 0, "logprobs": 2}
    choice = httpx.post(server.url + "/v1/completions", json=body, timeout=600).json()["choices"][0]
    lp = choice["logprobs"]
    assert set(lp) == {"tokens", "token_logprobs", "top_logprobs", "text_offset"}
    assert "".join(lp["tokens"]) == choice["text"]
    for token, offset in zip(lp["tokens"], lp["text_offset"], strict=True):
        assert choice["text"][offset : offset + len(token)] == token
    spell = server.engine.vocab.token_bytes
    steps = _reference_greedy(PROMPT, len(lp["tokens"]))
    for token, reported, tops, (pick, row) in zip(
        lp["tokens"], lp["token_logprobs"], lp["top_logprobs"], steps, strict=True
    ):
        assert token == spell(pick).decode("utf-8", "replace")
        assert reported == pytest.approx(row[pick], abs=0.05)
        second = float(np.partition(row, -2)[-2])
        assert sorted(tops.values(), reverse=True) == pytest.approx([row[pick], second], abs=0.05)
