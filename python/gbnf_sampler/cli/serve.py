"""``gbnf-sampler serve``: the OpenAI/Ollama-compatible server (:mod:`gbnf_sampler.serve`)."""

from __future__ import annotations

import argparse
import os
from typing import Any, TextIO

from ..errors import UnknownFormatError
from ..limits import (
    DEFAULT_MAX_DRAFT_TOKENS,
    SERVE_DEFAULT_CTX,
    SERVE_DEFAULT_PARALLEL,
    SERVE_DEFAULT_QUEUE,
)
from ..structural import formats
from .status import EXIT_OK, EXIT_USAGE

_SERVE_PACKAGES = ("starlette", "sse_starlette", "uvicorn", "anyio")
try:
    from .. import serve
except ModuleNotFoundError as e:  # the serve extra is not installed: the command says so
    if e.name not in _SERVE_PACKAGES:
        raise
    serve = None  # type: ignore[assignment]
    _MISSING: str = str(e)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def _tool_format(text: str) -> str:
    try:
        return formats.get(text).name
    except UnknownFormatError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def run_serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if serve is None:
        print(f'error: {_MISSING}; run: pip install "gbnf-sampler[serve]"', file=err)
        return EXIT_USAGE
    serve.serve(
        host=args.host,
        port=args.port,
        model=args.model,
        parallel=args.parallel,
        ctx=args.ctx,
        queue=args.queue,
        threads=args.threads,
        api_key=args.api_key or os.environ.get("GBNF_SAMPLER_API_KEY") or None,
        progress=True,
        tool_format=args.tool_format,
        max_draft=args.max_draft,
        draft_all=args.draft_all,
    )
    return EXIT_OK


def add_serve_parser(commands: Any) -> argparse.ArgumentParser:
    cmd: argparse.ArgumentParser = commands.add_parser(
        "serve", help="OpenAI- and Ollama-compatible HTTP server with batched constrained decoding"
    )
    cmd.add_argument("--model", default="default", help="GGUF path, or 'default'")
    cmd.add_argument("--host", default="127.0.0.1")
    cmd.add_argument("--port", type=int, default=8000)
    cmd.add_argument(
        "--parallel",
        type=_positive,
        default=SERVE_DEFAULT_PARALLEL,
        help="sequences decoded together (slots)",
    )
    cmd.add_argument(
        "--ctx",
        type=_positive,
        default=SERVE_DEFAULT_CTX,
        help="context tokens per slot (prompt + completion)",
    )
    cmd.add_argument(
        "--queue",
        type=_non_negative,
        default=SERVE_DEFAULT_QUEUE,
        help="requests waiting beyond the slots (HTTP 429 past it)",
    )
    cmd.add_argument(
        "--api-key",
        default=None,
        help="require 'Authorization: Bearer KEY' (default: $GBNF_SAMPLER_API_KEY, else none)",
    )
    cmd.add_argument("--threads", type=_positive, default=None, help="CPU threads for llama.cpp")
    cmd.add_argument(
        "--tool-format",
        type=_tool_format,
        default=None,
        metavar="NAME",
        help="tool-call format of requests with tools (one of: "
        + ", ".join(formats.names())
        + "); default: the one the GGUF's chat template shows, else one by the model's "
        "architecture (gemma for Gemma 3), else hermes",
    )
    cmd.add_argument(
        "--max-draft",
        type=_non_negative,
        default=DEFAULT_MAX_DRAFT_TOKENS,
        metavar="N",
        help="jump-forward: tokens of text the grammar forces verified per request and step "
        "(0: off; the output is the same either way)",
    )
    cmd.add_argument(
        "--draft-all",
        action="store_true",
        help="verify every drafted token, not only the part that pays by the CPU cost model "
        "(for GPUs, where extra rows of logits are nearly free)",
    )
    cmd.set_defaults(run=run_serve)
    return cmd


__all__ = ["add_serve_parser", "run_serve"]
