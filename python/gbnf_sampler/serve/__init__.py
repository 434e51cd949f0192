"""``gbnf-sampler serve``: an OpenAI- and Ollama-compatible HTTP server whose every
structured-output dialect (``response_format``, ``tools``, ``grammar``, ``json_schema``, vLLM's
``structured_outputs`` / ``guided_*``, LocalAI's ``grammar_json_functions``, Ollama's
``format``) is compiled to our grammars, with concurrent requests decoded as one batch.

    from gbnf_sampler.serve import build_app
    app = build_app("default", parallel=4)   # an ASGI app (uvicorn, hypercorn, ...)

Requests with ``tools`` are constrained and parsed in the model's own tool-call format (see
:mod:`.tools`; ``build_app(..., tool_format="hermes")`` or ``--tool-format`` forces one).

Needs the ``serve`` extra (Starlette, uvicorn, sse-starlette) and llama-cpp-python.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..limits import (
    DEFAULT_MAX_DRAFT_TOKENS,
    SERVE_DEFAULT_CTX,
    SERVE_DEFAULT_PARALLEL,
    SERVE_DEFAULT_QUEUE,
)
from ..llama.compiled import vocab_for
from ..llama.models import default_model_path, load_llama
from ..structural import formats
from ..structural.formats import ToolFormat
from .app import create_app
from .constraints import Constraint, find_constraint
from .engine import Engine
from .errors import ApiError


def build_app(
    model: str | None = "default",
    *,
    parallel: int = SERVE_DEFAULT_PARALLEL,
    ctx: int = SERVE_DEFAULT_CTX,
    queue: int = SERVE_DEFAULT_QUEUE,
    api_key: str | None = None,
    threads: int | None = None,
    progress: bool = False,
    tool_format: str | ToolFormat | None = None,
    max_draft: int = DEFAULT_MAX_DRAFT_TOKENS,
    draft_all: bool = False,
) -> Any:
    """Loads ``model`` (a GGUF path, or "default" for the embedded Gemma 3 270M) and returns the
    server's ASGI app: ``parallel`` slots of ``ctx`` tokens each, ``queue`` requests waiting,
    ``threads`` CPU threads for llama.cpp (default: llama-cpp-python's). ``tool_format``: the
    tool-call format (a ``gs.tool_formats`` name) of requests with tools; default: the one the
    GGUF's chat template shows, else one by its architecture (``gemma`` for Gemma 3, as the
    embedded model has no chat template), else ``hermes``. An unknown name raises
    :class:`~gbnf_sampler.errors.UnknownFormatError` (listing the known ones) before the model
    is loaded. ``max_draft``: jump-forward draft tokens verified per sequence and step (0
    turns jump-forward off; the output is the same either way); ``draft_all`` verifies every
    drafted token instead of the part that pays by the CPU cost model (for accelerators, where
    extra rows of logits are nearly free)."""
    if tool_format is not None:
        tool_format = formats.get(tool_format)
    llm = load_llama(model, n_ctx=256, progress=progress)
    path = default_model_path() if model in (None, "default") else Path(str(model))
    engine = Engine(
        llm, vocab_for(llm), parallel, ctx, queue, threads, max_draft, adaptive_draft=not draft_all
    )
    return create_app(llm, engine, model_path=path, api_key=api_key, tool_format=tool_format)


def serve(host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
    """Builds the app (:func:`build_app` options) and serves it with uvicorn until stopped."""
    import uvicorn

    app = build_app(**options)
    uvicorn.run(app, host=host, port=port, log_level="info", timeout_graceful_shutdown=5)


__all__ = [
    "ApiError",
    "Constraint",
    "Engine",
    "build_app",
    "create_app",
    "find_constraint",
    "serve",
]
