"""What every endpoint does the same way: read the JSON body (413 past the limit, 400 when it is
not a JSON object), check the model name (404), run a job through the engine (reserve a place,
prepare the prompt and grammar, submit, release), and stop it when the client goes away."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from ..limits import SERVE_MAX_BODY_BYTES
from .constraints import Constraint
from .engine import Engine, Event, Job
from .errors import ApiError, bad_request
from .sampling import SamplingParams


class ClientGone(Exception):
    """The client disconnected before its answer was ready (nobody to answer)."""


@dataclass
class ServerState:
    """The served model and engine, shared by the endpoints (``app.state.server``)."""

    engine: Engine
    llm: Any
    model_id: str
    aliases: set[str] = field(default_factory=set)
    api_key: str | None = None
    created: int = 0

    @property
    def chat_template(self) -> str | None:
        template = self.llm.metadata.get("tokenizer.chat_template")
        return str(template) if template else None

    def check_model(self, name: Any) -> str:
        """The served model's id when ``name`` names it (or is missing); else a 404."""
        if name in (None, ""):
            return self.model_id
        if not isinstance(name, str):
            raise bad_request("model must be a string", "model")
        if name in self.aliases or name.removesuffix(":latest") in self.aliases:
            return self.model_id
        raise ApiError(
            404,
            f"The model '{name}' does not exist; this server serves '{self.model_id}' "
            "(also accepted: 'default')",
            param="model",
            code="model_not_found",
        )


async def read_body(request: Request) -> dict[str, Any]:
    """The request's JSON object; 413 when larger than :data:`SERVE_MAX_BODY_BYTES`."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > SERVE_MAX_BODY_BYTES:
        raise _too_large(int(declared))
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > SERVE_MAX_BODY_BYTES:
            raise _too_large(len(data))
    try:
        body = json.loads(bytes(data))
    except (ValueError, UnicodeDecodeError) as e:
        raise bad_request(f"the request body is not valid JSON: {e}", code="invalid_json") from e
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object", code="invalid_json")
    return body


def _too_large(size: int) -> ApiError:
    return ApiError(
        413,
        f"the request body is {size} bytes; the limit is {SERVE_MAX_BODY_BYTES} bytes",
        code="request_too_large",
    )


async def start_job(
    engine: Engine, prompt: str, constraint: Constraint | None, params: SamplingParams
) -> Job:
    """Reserves a place (429 when full), prepares the prompt and grammar on the compile pool
    (400/413 for a bad one) and submits the job. :func:`end_job` must follow."""
    engine.reserve()
    try:
        if constraint is None:
            tokens, matcher = await engine.prepare(prompt, None, None, None)
        else:
            tokens, matcher = await engine.prepare(
                prompt, constraint.param, constraint.spec, constraint.build
            )
        engine.check_length(tokens, params)
        job = Job(tokens, matcher, params, asyncio.get_running_loop())
        engine.submit(job)
        return job
    except BaseException:
        engine.release()
        raise


async def end_job(engine: Engine, job: Job) -> None:
    """Releases the job's place; a job still running (the client went away) is cancelled, which
    frees its slot at the decode thread's next step. Safe to call twice."""
    if job.ended:
        return
    job.ended = True
    if not job.finished:
        engine.cancel(job)
    engine.release()


@asynccontextmanager
async def run_job(
    engine: Engine, prompt: str, constraint: Constraint | None, params: SamplingParams
) -> AsyncIterator[Job]:
    """:func:`start_job` ... :func:`end_job` around a block."""
    job = await start_job(engine, prompt, constraint, params)
    try:
        yield job
    finally:
        await end_job(engine, job)


async def _disconnected(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def collect(job: Job, request: Request) -> tuple[str, str]:
    """The whole text and finish reason of a job, or raises :class:`ApiError`; stops waiting
    (the caller's ``run_job`` then cancels the job) when the client disconnects."""

    async def text() -> tuple[str, str]:
        parts: list[str] = []
        async for event in job.events():
            if event.kind == "text":
                parts.append(event.text)
            elif event.kind == "error" and event.error is not None:
                raise event.error
            else:
                return "".join(parts), event.finish_reason or "stop"
        raise ApiError(500, "the job ended without a result", type="server_error")  # unreachable

    work = asyncio.ensure_future(text())
    watch = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
    if not work.done():
        work.cancel()
        raise ClientGone()
    return work.result()


async def stream_events(job: Job) -> AsyncIterator[Event]:
    """The job's events; ``error`` events are raised as :class:`ApiError`."""
    async for event in job.events():
        if event.kind == "error" and event.error is not None:
            raise event.error
        yield event


__all__ = [
    "ClientGone",
    "ServerState",
    "collect",
    "end_job",
    "read_body",
    "run_job",
    "start_job",
    "stream_events",
]
