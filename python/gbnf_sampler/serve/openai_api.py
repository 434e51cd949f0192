"""OpenAI's endpoints: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``GET
/v1/models``, in the shapes of OpenAI's API (streams as server-sent events ending with ``data:
[DONE]``)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from sse_starlette.sse import EventSourceResponse
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .constraints import Constraint, find_constraint
from .engine import Job
from .errors import ApiError, bad_request
from .prompts import chat_messages, render_chat
from .requests import (
    ServerState,
    collect,
    end_job,
    read_body,
    run_job,
    start_job,
    stream_events,
)
from .sampling import sampling_params
from .tools import ToolStreamParser, parse_tool_output

_MAX_TOKENS = ("max_completion_tokens", "max_tokens")


def sse(events: AsyncIterator[str], state: ServerState, job: Job) -> EventSourceResponse:
    """Server-sent events; the job is ended however the stream ends (even unstarted)."""
    return EventSourceResponse(
        events, sep="\n", ping=15, background=BackgroundTask(end_job, state.engine, job)
    )


def usage(job: Job) -> dict[str, Any]:
    prompt = len(job.prompt)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": job.completion_tokens,
        "total_tokens": prompt + job.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": job.cached_tokens},
    }


def _check_n(body: dict[str, Any]) -> None:
    if body.get("n") not in (None, 1):
        raise bad_request("only n=1 is supported", "n", "unsupported_parameter")


def _include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


async def chat_completions(request: Request) -> Response:
    state: ServerState = request.app.state.server
    body = await read_body(request)
    model = state.check_model(body.get("model"))
    _check_n(body)
    constraint = find_constraint(body, state.chat_template, dialect="openai")
    tools = constraint.tools if constraint is not None else None
    messages = chat_messages(body.get("messages"), tools, body.get("tool_choice", "auto"))
    prompt = render_chat(state.llm, messages)
    params = sampling_params(body, _MAX_TOKENS)
    meta = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
    }
    if body.get("stream"):
        job = await start_job(state.engine, prompt, constraint, params)
        chunks = _chat_chunks(state, job, meta, constraint, _include_usage(body))
        return sse(chunks, state, job)
    async with run_job(state.engine, prompt, constraint, params) as job:
        text, finish = await collect(job, request)
    return JSONResponse(_chat_result(job, meta, text, finish, constraint))


def _chat_result(
    job: Job, meta: dict[str, Any], text: str, finish: str, constraint: Constraint | None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if constraint is not None and constraint.tools is not None:
        content, calls = parse_tool_output(text)
        message["content"] = content
        if calls:
            message["tool_calls"] = calls
            finish = "tool_calls" if finish == "stop" else finish
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
    return {**meta, "object": "chat.completion", "choices": [choice], "usage": usage(job)}


def _chunk(meta: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return json.dumps({**meta, "object": "chat.completion.chunk", "choices": [choice]})


async def _chat_chunks(
    state: ServerState,
    job: Job,
    meta: dict[str, Any],
    constraint: Constraint | None,
    with_usage: bool,
) -> AsyncIterator[str]:
    parser = ToolStreamParser() if constraint is not None and constraint.tools else None
    finish = "stop"
    try:
        yield _chunk(meta, {"role": "assistant", "content": ""})
        async for event in stream_events(job):
            if event.kind != "text":
                finish = event.finish_reason or "stop"
                break
            deltas = parser.feed(event.text) if parser else [{"content": event.text}]
            for delta in deltas:
                yield _chunk(meta, delta)
        for delta in parser.finish() if parser else []:
            yield _chunk(meta, delta)
        if parser is not None and parser.calls and finish == "stop":
            finish = "tool_calls"
        yield _chunk(meta, {}, finish)
        if with_usage:
            yield json.dumps(
                {**meta, "object": "chat.completion.chunk", "choices": [], "usage": usage(job)}
            )
        yield "[DONE]"
    except ApiError as e:
        yield json.dumps(e.openai_body())
    finally:
        await end_job(state.engine, job)


def _prompt_text(body: dict[str, Any]) -> str:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise bad_request("prompt must be a string (one prompt per request)", "prompt")
    return prompt


async def completions(request: Request) -> Response:
    state: ServerState = request.app.state.server
    body = await read_body(request)
    model = state.check_model(body.get("model"))
    _check_n(body)
    prompt = _prompt_text(body)
    constraint = find_constraint(body, state.chat_template, dialect="openai")
    if constraint is not None and constraint.tools is not None:
        raise bad_request("tools are for /v1/chat/completions", "tools")
    params = sampling_params(body, ("max_tokens",))
    if body.get("max_tokens") is None:
        params.max_tokens = 16  # OpenAI's default for completions
    meta = {"id": f"cmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": model}
    if body.get("stream"):
        job = await start_job(state.engine, prompt, constraint, params)
        events = _completion_chunks(state, job, meta, _include_usage(body))
        return sse(events, state, job)
    async with run_job(state.engine, prompt, constraint, params) as job:
        text, finish = await collect(job, request)
    choice = {"text": text, "index": 0, "logprobs": None, "finish_reason": finish}
    result = {**meta, "object": "text_completion", "choices": [choice], "usage": usage(job)}
    return JSONResponse(result)


def _text_chunk(meta: dict[str, Any], text: str, finish: str | None) -> str:
    choice = {"text": text, "index": 0, "logprobs": None, "finish_reason": finish}
    return json.dumps({**meta, "object": "text_completion", "choices": [choice]})


async def _completion_chunks(
    state: ServerState, job: Job, meta: dict[str, Any], with_usage: bool
) -> AsyncIterator[str]:
    try:
        async for event in stream_events(job):
            if event.kind == "text":
                yield _text_chunk(meta, event.text, None)
            else:
                yield _text_chunk(meta, "", event.finish_reason or "stop")
        if with_usage:
            yield json.dumps(
                {**meta, "object": "text_completion", "choices": [], "usage": usage(job)}
            )
        yield "[DONE]"
    except ApiError as e:
        yield json.dumps(e.openai_body())
    finally:
        await end_job(state.engine, job)


async def models(request: Request) -> Response:
    state: ServerState = request.app.state.server
    model = {
        "id": state.model_id,
        "object": "model",
        "created": state.created,
        "owned_by": "gbnf-sampler",
    }
    return JSONResponse({"object": "list", "data": [model]})


__all__ = ["chat_completions", "completions", "models", "usage"]
