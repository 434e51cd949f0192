"""``gbnf-sampler serve``: an OpenAI- and Ollama-compatible HTTP server whose every
structured-output dialect (``response_format``, ``tools``, ``grammar``, ``json_schema``, vLLM's
``structured_outputs`` / ``guided_*``, LocalAI's ``grammar_json_functions``, Ollama's
``format``) is compiled to our grammars, with concurrent requests decoded as one batch.

    from gbnf_sampler.serve import build_app
    app = build_app("default", parallel=4)   # an ASGI app (uvicorn, hypercorn, ...)

Needs the ``serve`` extra (Starlette, uvicorn, sse-starlette) and llama-cpp-python.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..limits import SERVE_DEFAULT_CTX, SERVE_DEFAULT_PARALLEL, SERVE_DEFAULT_QUEUE
from ..llama.compiled import vocab_for
from ..llama.models import default_model_path, load_llama
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
) -> Any:
    """Loads ``model`` (a GGUF path, or "default" for the embedded Gemma 3 270M) and returns the
    server's ASGI app: ``parallel`` slots of ``ctx`` tokens each, ``queue`` requests waiting,
    ``threads`` CPU threads for llama.cpp (default: llama-cpp-python's)."""
    llm = load_llama(model, n_ctx=256, progress=progress)
    path = default_model_path() if model in (None, "default") else Path(str(model))
    engine = Engine(llm, vocab_for(llm), parallel, ctx, queue, threads)
    return create_app(llm, engine, model_path=path, api_key=api_key)


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
