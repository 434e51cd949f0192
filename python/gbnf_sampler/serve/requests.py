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
from ..structural.formats import ToolFormat
from .constraints import Constraint, find_constraint, output_reader
from .engine import Engine
from .errors import ApiError, bad_request
from .jobs import Event, Job
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
    tool_format: ToolFormat | None = None  # None: the one for the chat template
    tool_format_source: str = ""  # how it was chosen (given, chat template, architecture...)

    @property
    def chat_template(self) -> str | None:
        template = self.llm.metadata.get("tokenizer.chat_template")
        return str(template) if template else None

    def find_constraint(self, body: dict[str, Any], dialect: str) -> Constraint | None:
        """:func:`.constraints.find_constraint` with this server's model and tool format."""
        return find_constraint(
            body,
            self.chat_template,
            dialect,
            vocab=self.engine.vocab,
            tool_format=self.tool_format,
        )

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


async def start_jobs(
    engine: Engine, prompt: str, constraint: Constraint | None, params: list[SamplingParams]
) -> list[Job]:
    """One job per entry of ``params`` (the choices of one request): their places reserved
    together (429 when they do not all fit), the prompt tokenized and the grammar compiled
    once (400/413 for a bad one; each job gets its own matcher), then all submitted.
    :func:`end_job` must follow for each."""
    reserved = 0
    try:
        for _ in params:
            engine.reserve()
            reserved += 1
        if constraint is None:
            tokens, matcher = await engine.prepare(prompt, None, None, None)
        else:
            tokens, matcher = await engine.prepare(
                prompt, constraint.param, constraint.spec, constraint.build
            )
        matchers = [matcher, *(matcher.fork() if matcher else None for _ in params[1:])]
        budget = output_reader(constraint).budget
        budget_tokens = engine.tokenize_text(budget.end) if budget is not None else []
        jobs = []
        for choice, choice_matcher in zip(params, matchers, strict=True):
            engine.check_length(tokens, choice)
            job = Job(tokens, choice_matcher, choice, asyncio.get_running_loop())
            job.budget, job.budget_tokens = budget, budget_tokens
            jobs.append(job)
    except BaseException:
        for _ in range(reserved):
            engine.release()
        raise
    for job in jobs:
        engine.submit(job)
    return jobs


async def start_job(
    engine: Engine, prompt: str, constraint: Constraint | None, params: SamplingParams
) -> Job:
    """:func:`start_jobs` for one job."""
    return (await start_jobs(engine, prompt, constraint, [params]))[0]


async def end_job(engine: Engine, job: Job) -> None:
    """Releases the job's place; a job still running (the client went away) is cancelled, which
    frees its slot at the decode thread's next step. Safe to call twice."""
    if job.ended:
        return
    job.ended = True
    if not job.finished:
        engine.cancel(job)
    engine.release()


async def end_jobs(engine: Engine, jobs: list[Job]) -> None:
    for job in jobs:
        await end_job(engine, job)


@asynccontextmanager
async def run_jobs(
    engine: Engine, prompt: str, constraint: Constraint | None, params: list[SamplingParams]
) -> AsyncIterator[list[Job]]:
    """:func:`start_jobs` ... :func:`end_job` around a block."""
    jobs = await start_jobs(engine, prompt, constraint, params)
    try:
        yield jobs
    finally:
        await end_jobs(engine, jobs)


@asynccontextmanager
async def run_job(
    engine: Engine, prompt: str, constraint: Constraint | None, params: SamplingParams
) -> AsyncIterator[Job]:
    """:func:`run_jobs` for one job."""
    async with run_jobs(engine, prompt, constraint, [params]) as jobs:
        yield jobs[0]


async def _disconnected(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def _result(job: Job) -> tuple[str, str]:
    parts: list[str] = []
    async for event in job.events():
        if event.kind == "text":
            parts.append(event.text)
        elif event.kind == "error" and event.error is not None:
            raise event.error
        else:
            return "".join(parts), event.finish_reason or "stop"
    raise ApiError(500, "the job ended without a result", type="server_error")  # unreachable


async def collect_all(jobs: list[Job], request: Request) -> list[tuple[str, str]]:
    """The whole text and finish reason of each job, or raises :class:`ApiError`; stops
    waiting (the caller's ``run_jobs`` then cancels the jobs) when the client disconnects."""

    async def results() -> list[tuple[str, str]]:
        return list(await asyncio.gather(*(_result(job) for job in jobs)))

    work = asyncio.ensure_future(results())
    watch: asyncio.Future[Any] = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait([work, watch], return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
    if not work.done():
        work.cancel()
        raise ClientGone()
    return work.result()


async def collect(job: Job, request: Request) -> tuple[str, str]:
    """:func:`collect_all` for one job."""
    return (await collect_all([job], request))[0]


async def merged(streams: list[AsyncIterator[str]]) -> AsyncIterator[str]:
    """The items of several streams as they come (the choices of one request); an exception in
    one ends them all."""
    queue: asyncio.Queue[str | Exception | None] = asyncio.Queue()

    async def pump(stream: AsyncIterator[str]) -> None:
        try:
            async for item in stream:
                await queue.put(item)
            await queue.put(None)
        except Exception as e:
            await queue.put(e)

    tasks = [asyncio.ensure_future(pump(stream)) for stream in streams]
    try:
        running = len(tasks)
        while running:
            item = await queue.get()
            if item is None:
                running -= 1
            elif isinstance(item, Exception):
                raise item
            else:
                yield item
    finally:
        for task in tasks:
            task.cancel()


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
    "collect_all",
    "end_job",
    "end_jobs",
    "merged",
    "read_body",
    "run_job",
    "run_jobs",
    "start_job",
    "start_jobs",
    "stream_events",
]
