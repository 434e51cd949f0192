"""The ASGI application: routes, the API key, and errors in each dialect's shape.

Every failure is answered in the shape of the API it came through: ``{"error": {"message",
"type", "param", "code"}}`` under ``/v1`` (and ``/health``), ``{"error": "..."}`` under ``/api``
(Ollama). An unexpected exception is a 500 in the same shape, never a dropped connection.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..structural.formats import ToolFormat
from . import ollama_api, openai_api
from .engine import Engine
from .errors import ApiError
from .requests import ClientGone, ServerState
from .tools import server_format

logger = logging.getLogger(__name__)


def error_response(request: Request, error: ApiError) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse(error.ollama_body(), status_code=error.status)
    headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
    return JSONResponse(error.openai_body(), status_code=error.status, headers=headers)


async def _api_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, ApiError):
        return error_response(request, exc)
    return error_response(request, ApiError(500, "internal error", type="server_error"))


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
    kind = "not_found" if status == 404 else "invalid_request_error"
    return error_response(request, ApiError(status, str(detail), type=kind))


async def _client_gone(request: Request, exc: Exception) -> Response:
    return Response(status_code=499)


async def _unexpected(request: Request, exc: Exception) -> Response:
    logger.exception("unexpected error in %s", request.url.path, exc_info=exc)
    message = f"internal error: {type(exc).__name__}: {exc}"
    return error_response(request, ApiError(500, message, type="server_error"))


class ApiKeyMiddleware:
    """Requires ``Authorization: Bearer <key>`` (or ``x-api-key``) on every route but
    ``/health`` when a key is set; a 401 otherwise."""

    def __init__(self, app: ASGIApp, key: str | None) -> None:
        self.app = app
        self.key = key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.key is None or scope["type"] != "http" or scope["path"] == "/health":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        given = headers.get("authorization", "")
        token = given[7:].strip() if given[:7].lower() == "bearer " else headers.get("x-api-key")
        if token is not None and hmac.compare_digest(token.encode(), self.key.encode()):
            await self.app(scope, receive, send)
            return
        message = "missing API key" if token is None else "incorrect API key"
        error = ApiError(
            401,
            f"{message}: send 'Authorization: Bearer <key>' (gbnf-sampler serve --api-key)",
            type="authentication_error",
            code="invalid_api_key",
        )
        response = error_response(Request(scope), error)
        await response(scope, receive, send)


async def health(request: Request) -> Response:
    state: ServerState = request.app.state.server
    engine = state.engine
    return JSONResponse(
        {
            "status": "ok",
            "model": state.model_id,
            "slots": len(engine.slots),
            "slots_busy": engine.busy_slots(),
            "queued": max(0, engine.outstanding - engine.busy_slots()),
            "cancelled": engine.cancelled,
            "jump_forward": {
                "max_draft": engine.max_draft,
                "draft_tokens": engine.draft_tokens,
                "kept_tokens": engine.kept_tokens,
            },
            "tool_format": state.tool_format.name if state.tool_format else None,
            "tool_format_source": state.tool_format_source,
        }
    )


def create_app(
    llm: Any,
    engine: Engine,
    *,
    model_path: str | Path,
    api_key: str | None = None,
    tool_format: str | ToolFormat | None = None,
) -> Starlette:
    """The server's ASGI app around a loaded model and its (not yet started) engine; the
    engine's decode thread runs for the app's lifespan. ``tool_format``: the tool-call format
    of requests with tools (default: :func:`.tools.server_format`'s choice for the model)."""
    path = Path(model_path)
    fmt, how = server_format(llm.metadata, tool_format)
    state = ServerState(
        engine=engine,
        llm=llm,
        model_id=path.stem,
        aliases={path.stem, path.name, str(model_path), "default"},
        api_key=api_key,
        created=int(time.time()),
        tool_format=fmt,
        tool_format_source=how,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        engine.start()
        try:
            yield
        finally:
            engine.stop()

    routes = [
        Route("/v1/chat/completions", openai_api.chat_completions, methods=["POST"]),
        Route("/v1/completions", openai_api.completions, methods=["POST"]),
        Route("/v1/models", openai_api.models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/api/chat", ollama_api.chat, methods=["POST"]),
        Route("/api/generate", ollama_api.generate, methods=["POST"]),
        Route("/api/tags", ollama_api.tags, methods=["GET"]),
    ]
    handlers: dict[Any, Any] = {
        ApiError: _api_error,
        HTTPException: _http_error,
        ClientGone: _client_gone,
        Exception: _unexpected,
    }
    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
    app.state.server = state
    app.add_middleware(ApiKeyMiddleware, key=api_key)
    return app


__all__ = ["ApiKeyMiddleware", "create_app", "error_response"]
