"""OpenAI's endpoints: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``GET
/v1/models``, in the shapes of OpenAI's API (streams as server-sent events ending with ``data:
[DONE]``)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from sse_starlette.sse import EventSourceResponse
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..limits import SERVE_MAX_CHOICES
from ..structural.openai import finish_reason
from .constraints import Constraint, output_reader
from .errors import ApiError, bad_request
from .jobs import Job
from .logprobs import (
    TokenLogprob,
    chat_logprobs,
    chat_request,
    completion_logprobs,
    completion_request,
)
from .prompts import chat_messages, render_chat
from .requests import (
    ServerState,
    collect_all,
    end_jobs,
    merged,
    read_body,
    run_jobs,
    start_jobs,
    stream_events,
)
from .sampling import SamplingParams, sampling_params

_MAX_TOKENS = ("max_completion_tokens", "max_tokens")


def sse(events: AsyncIterator[str], state: ServerState, jobs: list[Job]) -> EventSourceResponse:
    """Server-sent events; the jobs are ended however the stream ends (even unstarted)."""
    return EventSourceResponse(
        events, sep="\n", ping=15, background=BackgroundTask(end_jobs, state.engine, jobs)
    )


def usage(jobs: Job | list[Job]) -> dict[str, Any]:
    """Usage of a request's choices: one prompt, their completions summed."""
    jobs = jobs if isinstance(jobs, list) else [jobs]
    prompt = len(jobs[0].prompt)
    completion = sum(job.completion_tokens for job in jobs)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": jobs[0].cached_tokens},
    }


def _choices(body: dict[str, Any], params: SamplingParams) -> list[SamplingParams]:
    """The sampling settings of each of the request's ``n`` choices: with a ``seed``, choice i
    draws with seed + i (the same request gives the same choices, which differ)."""
    n = body.get("n")
    if n is None:
        return [params]
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= SERVE_MAX_CHOICES:
        raise bad_request(f"n must be an integer between 1 and {SERVE_MAX_CHOICES}", "n")
    seed = params.seed

    def choice(i: int) -> SamplingParams:
        return replace(params, seed=None if seed is None else (seed + i) & (2**64 - 1))

    return [params, *(choice(i) for i in range(1, n))]


def _include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


async def chat_completions(request: Request) -> Response:
    state: ServerState = request.app.state.server
    body = await read_body(request)
    model = state.check_model(body.get("model"))
    constraint = state.find_constraint(body, "openai")
    chat = constraint.chat if constraint is not None else None
    prompt = render_chat(state.llm, chat_messages(body.get("messages")), chat, state.tool_format)
    params = sampling_params(body, _MAX_TOKENS)
    params.logprobs, params.top_logprobs = chat_request(body)
    choices = _choices(body, params)
    meta = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
    }
    if body.get("stream"):
        jobs = await start_jobs(state.engine, prompt, constraint, choices)
        streams = [_chat_chunks(i, job, meta, constraint) for i, job in enumerate(jobs)]
        events = _stream(state, jobs, merged(streams), meta, "chat.completion.chunk", body)
        return sse(events, state, jobs)
    async with run_jobs(state.engine, prompt, constraint, choices) as jobs:
        results = await collect_all(jobs, request)
    answers = [
        _chat_choice(i, job, text, finish, constraint)
        for i, (job, (text, finish)) in enumerate(zip(jobs, results, strict=True))
    ]
    return JSONResponse(
        {**meta, "object": "chat.completion", "choices": answers, "usage": usage(jobs)}
    )


def _chat_choice(
    index: int, job: Job, text: str, finish: str, constraint: Constraint | None
) -> dict[str, Any]:
    message = {**output_reader(constraint).message(text), "refusal": None}
    return {
        "index": index,
        "message": message,
        "logprobs": chat_logprobs(job.logprobs) if job.params.logprobs else None,
        "finish_reason": finish_reason(message, finish),
    }


def _chunk(
    meta: dict[str, Any],
    index: int,
    delta: dict[str, Any],
    finish: str | None = None,
    logprobs: list[TokenLogprob] | None = None,
) -> str:
    reported = chat_logprobs(logprobs) if logprobs is not None else None
    choice = {"index": index, "delta": delta, "logprobs": reported, "finish_reason": finish}
    return json.dumps({**meta, "object": "chat.completion.chunk", "choices": [choice]})


async def _chat_chunks(
    index: int, job: Job, meta: dict[str, Any], constraint: Constraint | None
) -> AsyncIterator[str]:
    """The chunks of one choice: its role, its deltas, its finish reason."""
    parser = output_reader(constraint).stream()
    finish = "stop"
    # The tokens' logprobs go with the first chunk written after them (None: not requested).
    logprobs: list[TokenLogprob] | None = [] if job.params.logprobs else None
    yield _chunk(meta, index, {"role": "assistant", "content": ""})
    async for event in stream_events(job):
        if logprobs is not None:
            logprobs += event.logprobs
        if event.kind != "text":
            finish = event.finish_reason or "stop"
            break
        for delta in parser.feed(event.text):
            yield _chunk(meta, index, delta, logprobs=logprobs)
            logprobs = [] if logprobs is not None else None
    for delta in parser.finish():
        yield _chunk(meta, index, delta, logprobs=logprobs)
        logprobs = [] if logprobs is not None else None
    if logprobs:
        yield _chunk(meta, index, {"content": ""}, logprobs=logprobs)
    yield _chunk(meta, index, {}, finish_reason(parser.message(), finish))


async def _stream(
    state: ServerState,
    jobs: list[Job],
    chunks: AsyncIterator[str],
    meta: dict[str, Any],
    kind: str,
    body: dict[str, Any],
) -> AsyncIterator[str]:
    """The choices' chunks, then the usage chunk when asked for and ``[DONE]``; an error as
    OpenAI's error body."""
    try:
        async for chunk in chunks:
            yield chunk
        if _include_usage(body):
            yield json.dumps({**meta, "object": kind, "choices": [], "usage": usage(jobs)})
        yield "[DONE]"
    except ApiError as e:
        yield json.dumps(e.openai_body())
    finally:
        await end_jobs(state.engine, jobs)


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
    prompt = _prompt_text(body)
    if body.get("tools"):
        raise bad_request("tools are for /v1/chat/completions", "tools")
    constraint = state.find_constraint({**body, "reasoning": None}, "openai")
    params = sampling_params(body, ("max_tokens",))
    params.logprobs, params.top_logprobs = completion_request(body)
    if body.get("max_tokens") is None:
        params.max_tokens = 16  # OpenAI's default for completions
    choices = _choices(body, params)
    meta = {"id": f"cmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": model}
    if body.get("stream"):
        jobs = await start_jobs(state.engine, prompt, constraint, choices)
        streams = [_completion_chunks(i, job, meta) for i, job in enumerate(jobs)]
        events = _stream(state, jobs, merged(streams), meta, "text_completion", body)
        return sse(events, state, jobs)
    async with run_jobs(state.engine, prompt, constraint, choices) as jobs:
        results = await collect_all(jobs, request)
    answers = [
        {
            "text": text,
            "index": i,
            "logprobs": _completion_logprobs(job, job.logprobs, 0),
            "finish_reason": finish,
        }
        for i, (job, (text, finish)) in enumerate(zip(jobs, results, strict=True))
    ]
    result = {**meta, "object": "text_completion", "choices": answers, "usage": usage(jobs)}
    return JSONResponse(result)


def _completion_logprobs(
    job: Job, entries: list[TokenLogprob], offset: int
) -> dict[str, Any] | None:
    if not job.params.logprobs:
        return None
    return completion_logprobs(entries, offset, job.params.top_logprobs)


def _text_chunk(
    meta: dict[str, Any],
    index: int,
    text: str,
    finish: str | None,
    logprobs: dict[str, Any] | None = None,
) -> str:
    choice = {"text": text, "index": index, "logprobs": logprobs, "finish_reason": finish}
    return json.dumps({**meta, "object": "text_completion", "choices": [choice]})


async def _completion_chunks(index: int, job: Job, meta: dict[str, Any]) -> AsyncIterator[str]:
    offset = 0  # characters streamed so far (the logprobs' text_offset)
    async for event in stream_events(job):
        logprobs = _completion_logprobs(job, event.logprobs, offset)
        if event.kind == "text":
            yield _text_chunk(meta, index, event.text, None, logprobs)
            offset += len(event.text)
        else:
            yield _text_chunk(meta, index, "", event.finish_reason or "stop", logprobs)


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
