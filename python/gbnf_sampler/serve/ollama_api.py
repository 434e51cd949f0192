"""Ollama's endpoints: ``POST /api/chat`` and ``POST /api/generate`` (``format``: ``"json"`` or a
JSON Schema; ``stream`` defaults to true and streams newline-delimited JSON, as Ollama does),
plus ``GET /api/tags``. Errors are ``{"error": "..."}``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import Any

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from .constraints import Constraint, output_reader
from .errors import ApiError, bad_request
from .jobs import Job
from .prompts import chat_messages, render_chat
from .requests import ServerState, collect, end_job, read_body, run_job, start_job, stream_events
from .sampling import SamplingParams, sampling_params


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def _options(body: dict[str, Any]) -> SamplingParams:
    options = body.get("options") or {}
    if not isinstance(options, dict):
        raise bad_request("options must be an object", "options")
    merged = dict(options)
    if merged.get("num_predict") is not None and merged["num_predict"] < 0:
        merged["num_predict"] = 1 << 30  # -1: until the context is full
    params = sampling_params(merged, ("num_predict",))
    if options.get("temperature") is None:
        params.temperature = 0.8  # Ollama's default
    return params


def _stats(job: Job, reason: str) -> dict[str, Any]:
    def ns(seconds: float) -> int:
        return max(0, int(seconds * 1e9))

    prompt_done = job.first_token or job.finished
    return {
        "done": True,
        "done_reason": reason,
        "total_duration": ns(job.finished - job.created),
        "load_duration": 0,
        "prompt_eval_count": len(job.prompt),
        "prompt_eval_duration": ns(prompt_done - job.admitted),
        "eval_count": job.completion_tokens,
        "eval_duration": ns(job.finished - prompt_done),
    }


def _ollama_message(message: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI assistant message in Ollama's shape: ``thinking`` for the reasoning, tool
    calls as ``{"function": {"name", "arguments": {...}}}`` (arguments an object)."""
    out: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("reasoning_content") is not None:
        out["thinking"] = message["reasoning_content"]
    calls = message.get("tool_calls") or []
    if calls:
        out["tool_calls"] = [
            {
                "function": {
                    "name": c["function"]["name"],
                    "arguments": json.loads(c["function"]["arguments"]),
                }
            }
            for c in calls
        ]
    return out


async def chat(request: Request) -> Response:
    state: ServerState = request.app.state.server
    body = await read_body(request)
    model = state.check_model(body.get("model"))
    constraint = state.find_constraint(body, "ollama")
    chat = constraint.chat if constraint is not None else None
    prompt = render_chat(state.llm, chat_messages(body.get("messages")), chat, state.tool_format)
    params = _options(body)
    head = {"model": model}
    if body.get("stream", True):
        job = await start_job(state.engine, prompt, constraint, params)
        return _ndjson(_chat_lines(state, job, head, constraint), state, job)
    async with run_job(state.engine, prompt, constraint, params) as job:
        text, finish = await collect(job, request)
    message = _ollama_message(output_reader(constraint).message(text))
    return JSONResponse({**head, "created_at": _now(), "message": message, **_stats(job, finish)})


async def generate(request: Request) -> Response:
    state: ServerState = request.app.state.server
    body = await read_body(request)
    model = state.check_model(body.get("model"))
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise bad_request("prompt must be a string", "prompt")
    constraint = state.find_constraint({"format": body.get("format")}, "ollama")
    if not body.get("raw"):
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        if isinstance(body.get("system"), str):
            messages.insert(0, {"role": "system", "content": body["system"]})
        prompt = render_chat(state.llm, chat_messages(messages))
    params = _options(body)
    head = {"model": model}
    if body.get("stream", True):
        job = await start_job(state.engine, prompt, constraint, params)
        return _ndjson(_generate_lines(state, job, head), state, job)
    async with run_job(state.engine, prompt, constraint, params) as job:
        text, finish = await collect(job, request)
    return JSONResponse({**head, "created_at": _now(), "response": text, **_stats(job, finish)})


def _ndjson(lines: AsyncIterator[str], state: ServerState, job: Job) -> StreamingResponse:
    return StreamingResponse(
        lines,
        media_type="application/x-ndjson",
        background=BackgroundTask(end_job, state.engine, job),
    )


def _line(value: dict[str, Any]) -> str:
    return json.dumps(value) + "\n"


async def _chat_lines(
    state: ServerState, job: Job, head: dict[str, Any], constraint: Constraint | None
) -> AsyncIterator[str]:
    """Content and thinking stream as they come; tool calls are sent whole in the last line,
    with the stats (as Ollama sends them)."""
    parser = output_reader(constraint).stream()
    try:
        async for event in stream_events(job):
            if event.kind == "text":
                for line in _delta_lines(head, parser.feed(event.text)):
                    yield line
                continue
            for line in _delta_lines(head, parser.finish()):
                yield line
            whole = _ollama_message(parser.message())
            message = {"role": "assistant", "content": ""}
            if "tool_calls" in whole:
                message["tool_calls"] = whole["tool_calls"]
            stats = _stats(job, event.finish_reason or "stop")
            yield _line({**head, "created_at": _now(), "message": message, **stats})
    except ApiError as e:
        yield _line(e.ollama_body())
    finally:
        await end_job(state.engine, job)


def _delta_lines(head: dict[str, Any], deltas: list[dict[str, Any]]) -> list[str]:
    lines = []
    for delta in deltas:
        message: dict[str, Any] = {"role": "assistant", "content": delta.get("content", "")}
        if "reasoning_content" in delta:
            message["thinking"] = delta["reasoning_content"]
        if "content" in delta or "reasoning_content" in delta:
            lines.append(_line({**head, "created_at": _now(), "message": message, "done": False}))
    return lines


async def _generate_lines(state: ServerState, job: Job, head: dict[str, Any]) -> AsyncIterator[str]:
    try:
        async for event in stream_events(job):
            if event.kind == "text":
                yield _line({**head, "created_at": _now(), "response": event.text, "done": False})
            else:
                stats = _stats(job, event.finish_reason or "stop")
                yield _line({**head, "created_at": _now(), "response": "", **stats})
    except ApiError as e:
        yield _line(e.ollama_body())
    finally:
        await end_job(state.engine, job)


async def tags(request: Request) -> Response:
    state: ServerState = request.app.state.server
    model = {
        "name": state.model_id,
        "model": state.model_id,
        "modified_at": datetime.fromtimestamp(state.created, timezone.utc).isoformat(),
        "details": {"format": "gguf"},
    }
    return JSONResponse({"models": [model]})


__all__ = ["chat", "generate", "tags"]
