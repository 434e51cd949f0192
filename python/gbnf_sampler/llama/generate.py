"""Constrained generation on llama-cpp-python with the native sampler and jump-forward.

When the grammar forces the next bytes (``"name": `` after ``{`` in a schema object), those
bytes are tokenized and evaluated in one batch instead of being sampled token by token. The last
forced token is held back, because the tokenizer might merge it with the text that follows; it
is sampled normally instead. Every forced token is checked against the grammar first.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import GbnfSamplerError
from ..structural.budget import BudgetTracker
from ..structural.formats.base import ReasoningBudget
from .compiled import matcher_for
from .native_sampler import GrammarSampler


class GenerationError(GbnfSamplerError):
    """The grammar constraint failed during generation (the message says why)."""


@dataclass
class _Progress:
    tokens: list[int] = field(default_factory=list)
    forced: int = 0
    finish_reason: str = "length"
    pending: bytes = b""  # detokenized bytes not yet emitted (an incomplete UTF-8 sequence)


def _sampler_chain(grammar_sampler: Any, options: dict[str, Any], n_vocab: int, eos: int) -> Any:
    """The sampler chain: the grammar first (later samplers only see allowed tokens); with no
    grammar (a benchmark baseline), EOS is banned so every run has the same length."""
    import llama_cpp

    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())

    def add(sampler: Any) -> None:
        llama_cpp.llama_sampler_chain_add(chain, sampler)

    if grammar_sampler is not None:
        grammar_sampler.add_to(chain)
    else:
        bias = (llama_cpp.llama_logit_bias * 1)(llama_cpp.llama_logit_bias(eos, -1e30))
        add(llama_cpp.llama_sampler_init_logit_bias(n_vocab, 1, bias))
    temperature = options["temperature"]
    if temperature <= 0:
        add(llama_cpp.llama_sampler_init_greedy())
        return chain
    if options["top_k"] > 0:
        add(llama_cpp.llama_sampler_init_top_k(options["top_k"]))
    add(llama_cpp.llama_sampler_init_top_p(options["top_p"], 1))
    add(llama_cpp.llama_sampler_init_min_p(options["min_p"], 1))
    add(llama_cpp.llama_sampler_init_temp(temperature))
    add(llama_cpp.llama_sampler_init_dist(options["seed"]))
    return chain


def _valid_utf8_prefix(data: bytes) -> int:
    """Length of the longest prefix of ``data`` that does not end inside a UTF-8 sequence."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return len(data)
        if byte >= 0xC0:  # a lead byte: complete only if its sequence fits
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) if back >= need else len(data) - back
    return len(data)


def _jump_forward(
    llm: Any, sampler: Any, chain: Any, progress: _Progress, budget: int
) -> list[int]:
    """Accepts the tokens of the bytes the grammar forces; returns them (to be evaluated)."""
    import llama_cpp

    forced = sampler.forced_bytes()
    if not forced or budget <= 1:
        return []
    tokens = [int(t) for t in llm.tokenize(forced, add_bos=False, special=False)]
    keep = len(tokens) - 1  # hold back the boundary token: it may merge with what follows
    keep = min(keep, sampler.acceptable_prefix(tokens[:keep]), budget - 1)
    if keep <= 0:
        return []
    committed = tokens[:keep]
    for token in committed:
        llama_cpp.llama_sampler_accept(chain, token)
    progress.forced += len(committed)
    return committed


def _force_text(
    llm: Any, sampler: Any, chain: Any, text: bytes, progress: _Progress, budget: int
) -> list[int]:
    """Accepts the tokens of ``text`` when the grammar takes all of them (and they fit in the
    token budget); returns them (to be evaluated), or [] to sample one more token instead."""
    import llama_cpp

    tokens = [int(t) for t in llm.tokenize(text, add_bos=False, special=True)]
    if not tokens or len(tokens) > budget:
        return []
    if sampler is not None and sampler.acceptable_prefix(tokens) < len(tokens):
        return []
    for token in tokens:
        llama_cpp.llama_sampler_accept(chain, token)
    progress.forced += len(tokens)
    return tokens


def _stream_tokens(
    llm: Any, prompt_tokens: list[int], grammar: Any, options: dict[str, Any], progress: _Progress
) -> Iterator[bytes]:
    """Runs the generation loop, yielding detokenized bytes as they become available."""
    import llama_cpp

    sampler = GrammarSampler(matcher_for(llm, grammar)) if grammar is not None else None
    chain = _sampler_chain(sampler, options, int(llm.n_vocab()), int(llm.token_eos()))
    budget: ReasoningBudget | None = options["reasoning_budget"]
    tracker = BudgetTracker(budget) if budget is not None else None
    special = bool(options["special"])
    try:
        _evaluate_prompt(llm, prompt_tokens)
        vocab = llama_cpp.llama_model_get_vocab(llm._model.model)
        while len(progress.tokens) < options["max_tokens"]:
            left = options["max_tokens"] - len(progress.tokens)
            new: list[int] = []
            if tracker is not None and tracker.due:
                new = _force_text(llm, sampler, chain, tracker.end_text, progress, left)
                if new:
                    tracker.forced()
            if not new:
                token = int(llama_cpp.llama_sampler_sample(chain, llm._ctx.ctx, -1))
                if sampler is not None and sampler.error:
                    raise GenerationError(sampler.error)
                if llama_cpp.llama_vocab_is_eog(vocab, token):
                    progress.finish_reason = "stop"
                    break
                new = [token]
                if sampler is not None and options["jump_forward"]:
                    new += _jump_forward(llm, sampler, chain, progress, left - 1)
            llm.eval(new)  # the sampled token and any forced ones, in one batch
            progress.tokens += new
            if tracker is not None:
                for token in new:
                    tracker.on_token(llm.detokenize([token], special=True))
            yield llm.detokenize(new, special=special)
    finally:
        llama_cpp.llama_sampler_free(chain)  # frees the grammar sampler too


def _evaluate_prompt(llm: Any, tokens: list[int]) -> None:
    """Evaluates the prompt, reusing the model's cached prefix when it matches (as
    llama-cpp-python's own generate does). The last prompt token is always evaluated again so
    that its logits are fresh."""
    cached = llm._input_ids.tolist()
    common = 0
    for old, new in zip(cached, tokens, strict=False):
        if old != new:
            break
        common += 1
    reuse = min(common, len(tokens) - 1)
    if reuse > 0 and llm._ctx.kv_cache_seq_rm(-1, reuse, -1):
        llm.n_tokens = reuse
        llm.eval(tokens[reuse:])
        return
    llm.reset()
    llm.eval(tokens)


def _text_chunks(raw: Iterator[bytes], progress: _Progress) -> Iterator[str]:
    for piece in raw:
        data = progress.pending + piece
        cut = _valid_utf8_prefix(data)
        progress.pending = data[cut:]
        if cut:
            yield data[:cut].decode("utf-8", errors="replace")
    if progress.pending:
        yield progress.pending.decode("utf-8", errors="replace")
        progress.pending = b""


def _usage(prompt_tokens: list[int], progress: _Progress) -> dict[str, int]:
    return {
        "prompt_tokens": len(prompt_tokens),
        "completion_tokens": len(progress.tokens),
        "total_tokens": len(prompt_tokens) + len(progress.tokens),
        "forced_tokens": progress.forced,
    }


def _prompt_tokens(llm: Any, prompt: str | list[int]) -> list[int]:
    if isinstance(prompt, str):
        return [int(t) for t in llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)]
    if not all(isinstance(t, int) for t in prompt):
        raise TypeError("prompt must be text or a list of token ids")
    return list(prompt)


def generate(
    llm: Any,
    prompt: str | list[int],
    grammar: Any,
    *,
    max_tokens: int = 256,
    temperature: float = 0.0,
    top_k: int = 40,
    top_p: float = 0.95,
    min_p: float = 0.05,
    seed: int = 0,
    stream: bool = False,
    jump_forward: bool = True,
    special: bool = False,
    reasoning_budget: ReasoningBudget | None = None,
) -> Any:
    """A completion constrained by ``grammar``, shaped like llama-cpp-python's
    ``create_completion`` result (or an iterator of its streaming chunks). ``usage`` also
    reports ``forced_tokens``: tokens placed by jump-forward (or a reasoning budget) rather
    than sampled. ``grammar=None`` generates unconstrained with EOS banned (a fixed-length
    baseline). ``special``: write special tokens as their text (tool-call markers such as
    ``<|python_tag|>``). ``reasoning_budget``: force its closing text once that many tokens
    were generated inside the think section (see :mod:`gbnf_sampler.structural.budget`)."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    options = {
        "max_tokens": max_tokens,
        "temperature": temperature,
        "top_k": top_k,
        "top_p": top_p,
        "min_p": min_p,
        "seed": seed,
        "jump_forward": jump_forward,
        "special": special,
        "reasoning_budget": reasoning_budget,
    }
    prompt_tokens = _prompt_tokens(llm, prompt)
    progress = _Progress()
    meta = {
        "id": f"cmpl-{uuid.uuid4()}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": str(getattr(llm, "model_path", "")),
    }
    chunks = _text_chunks(_stream_tokens(llm, prompt_tokens, grammar, options, progress), progress)
    if stream:
        return _stream_response(meta, chunks, prompt_tokens, progress)
    text = "".join(chunks)
    choice = {"text": text, "index": 0, "logprobs": None, "finish_reason": progress.finish_reason}
    return {**meta, "choices": [choice], "usage": _usage(prompt_tokens, progress)}


def _stream_response(
    meta: dict[str, Any], chunks: Iterator[str], prompt_tokens: list[int], progress: _Progress
) -> Iterator[dict[str, Any]]:
    for text in chunks:
        yield {
            **meta,
            "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": None}],
        }
    yield {
        **meta,
        "choices": [
            {"text": "", "index": 0, "logprobs": None, "finish_reason": progress.finish_reason}
        ],
        "usage": _usage(prompt_tokens, progress),
    }


__all__ = ["GenerationError", "generate"]
