"""Constrained generation on llama-cpp-python with the native sampler and jump-forward.

A llama.cpp sampler chain picks every token: our grammar sampler first, then greedy or the usual
top-k / top-p / min-p / temperature / dist samplers. When the grammar forces the next bytes
(``"name": `` after ``{`` in a schema object), their tokenization is a draft, evaluated in one
batch with the sampled token and kept only as far as the chain picks the same tokens
(``speculative.py``): jump-forward makes decoding faster, never different. A reasoning budget
(``structural/budget.py``), once spent, feeds the think section's closing text instead of
sampling: that text is the budget's intervention, not jump-forward.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..errors import GbnfSamplerError
from ..limits import DEFAULT_MAX_DRAFT_TOKENS
from ..structural.budget import BudgetTracker
from ..structural.formats.base import ReasoningBudget
from .compiled import matcher_for, vocab_for
from .lookup import ContextLookup
from .native_sampler import GrammarSampler, address_of
from .speculative import Draft, DraftLength, DraftStats, EvaluatedTokens, plan_draft, verify
from .step_costs import step_costs_for


class GenerationError(GbnfSamplerError):
    """The grammar constraint failed during generation (the message says why)."""


@dataclass
class _Progress:
    tokens: list[int] = field(default_factory=list)
    draft: DraftStats = field(default_factory=DraftStats)
    forced: int = 0  # tokens of a reasoning budget's closing text, fed rather than sampled
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


def _sample_function(
    llama_cpp: Any, context: Any, sampler: GrammarSampler | None, chain: Any
) -> Callable[[int], int]:
    """``row -> token``: the chain samples from a row of logits and accepts the token; through
    the grammar sampler's own entry point when there is one (no candidate array of the whole
    vocabulary)."""
    if sampler is None:
        return lambda row: int(llama_cpp.llama_sampler_sample(chain, context, row))
    return partial(sampler.sample, address_of(chain), address_of(context))


def _check(sampler: GrammarSampler | None) -> None:
    if sampler is not None and sampler.error:
        raise GenerationError(sampler.error)


def _stream_tokens(
    llm: Any, prompt_tokens: list[int], grammar: Any, options: dict[str, Any], progress: _Progress
) -> Iterator[bytes]:
    """Runs the generation loop, yielding detokenized bytes as they become available."""
    import llama_cpp

    sampler = GrammarSampler(matcher_for(llm, grammar)) if grammar is not None else None
    chain = _sampler_chain(sampler, options, int(llm.n_vocab()), int(llm.token_eos()))
    try:
        _evaluate_prompt_prefix(llm, prompt_tokens)
        loop = _DecodeLoop(llama_cpp, llm, sampler, chain, options)
        if loop.drafting and options["draft_lookup"]:
            loop.lookup = ContextLookup(bytes(llm.detokenize(prompt_tokens)))
        yield from loop.run(prompt_tokens[-1:], progress)
    finally:
        llama_cpp.llama_sampler_free(chain)  # frees the grammar sampler too


class _DecodeLoop:
    """Evaluates tokens with a jump-forward draft after them (when the grammar forces text),
    checks the draft, picks the next token (or feeds a spent reasoning budget's closing text),
    and repeats."""

    def __init__(
        self,
        llama_cpp: Any,
        llm: Any,
        sampler: GrammarSampler | None,
        chain: Any,
        options: dict[str, Any],
    ) -> None:
        self.llama_cpp = llama_cpp
        self.llm = llm
        self.vocab = llama_cpp.llama_model_get_vocab(llm._model.model)
        self.sampler = sampler
        self.sample = _sample_function(llama_cpp, llm._ctx.ctx, sampler, chain)
        self.accept = partial(llama_cpp.llama_sampler_accept, chain)
        self.evaluated = EvaluatedTokens(llm)
        self.drafting = sampler is not None and options["jump_forward"]
        self.max_tokens = options["max_tokens"]
        self.max_draft = min(options["max_draft"], self.evaluated.capacity - 1)
        self.length = DraftLength(costs=step_costs_for(llm))
        self.lookup: ContextLookup | None = None  # guesses past the forced text, when set
        self.spell = vocab_for(llm).token_bytes
        budget: ReasoningBudget | None = options["reasoning_budget"]
        self.tracker = BudgetTracker(budget) if budget is not None else None
        self.special = bool(options["special"])

    def run(self, pending: list[int], progress: _Progress) -> Iterator[bytes]:
        """``pending`` (the last prompt token first) is evaluated next; output tokens follow."""
        while True:
            planned, evaluated, kept, pick = self._step(pending, progress.tokens, progress.draft)
            if len(progress.tokens) == self.max_tokens:  # filled by the draft
                yield self._text(kept)
                return
            if pick is None:
                forced = self._budget_text(progress)
                if forced:
                    progress.tokens += forced
                    yield self._text([*kept, *forced])
                    if len(progress.tokens) == self.max_tokens:
                        return
                    pending = forced
                    continue
                pick = self.sample(-1)
                if not evaluated and planned.tokens and not planned.only[0]:  # a free check
                    self.length.observe(planned, 0, pick == planned.tokens[0])
            _check(self.sampler)  # a failure inside the step shows here too (the pick is -1)
            if self.llama_cpp.llama_vocab_is_eog(self.vocab, pick):
                progress.finish_reason = "stop"
                yield self._text(kept)
                return
            progress.tokens.append(pick)
            yield self._text([*kept, pick])
            if len(progress.tokens) == self.max_tokens or self.evaluated.room < 1:
                return  # finish "length"; the last token is not evaluated: nothing follows
            pending = [pick]

    def _text(self, tokens: list[int]) -> bytes:
        """The output bytes of ``tokens``, also followed by the reasoning budget's tracker."""
        if self.tracker is not None:
            for token in tokens:
                self.tracker.on_token(self.llm.detokenize([token], special=True))
        text = bytes(self.llm.detokenize(tokens, special=self.special))
        if self.lookup is not None:
            self.lookup.extend(text)
        return text

    def _tokenize(self, text: bytes) -> list[int]:
        return [int(t) for t in self.llm.tokenize(text, add_bos=False, special=False)]

    def _budget_text(self, progress: _Progress) -> list[int]:
        """The tokens of the reasoning budget's closing text, accepted by the chain, once the
        budget is spent; [] when it is not, or while the text does not fit (the grammar refuses
        it, e.g. inside a UTF-8 character, or it exceeds the tokens or context left): one more
        token is sampled then."""
        if self.tracker is None or not self.tracker.due:
            return []
        text = self.tracker.end_text
        tokens = [int(t) for t in self.llm.tokenize(text, add_bos=False, special=True)]
        left = min(self.max_tokens - len(progress.tokens), self.evaluated.room)
        if not tokens or len(tokens) > left:
            return []
        if self.sampler is not None and self.sampler.acceptable_prefix(tokens) < len(tokens):
            return []
        for token in tokens:
            self.accept(token)
        progress.forced += len(tokens)
        self.tracker.forced()
        return tokens

    def _plan(self, sampler: GrammarSampler, pending: int, written: int) -> Draft:
        """The draft after ``pending`` tokens, ``written`` output tokens so far."""
        room = self.evaluated.room - pending
        limit = min(self.max_tokens - written, room, self.max_draft)
        # Where checked draft tokens cannot pay (rows of logits cost more than they save), only
        # tokens the grammar allows alone can, and the first of them must be one.
        lookup = self.lookup
        if not self.length.costs.checked_may_pay():
            if sampler.allowed_count() != 1:
                return Draft()
            lookup = None
        return plan_draft(sampler, self._tokenize, self.spell, limit, lookup)

    def _step(
        self, pending: list[int], output: list[int], stats: DraftStats
    ) -> tuple[Draft, int, list[int], int | None]:
        """Evaluates ``pending`` and the part of the draft worth it. Returns the whole draft, how
        many of its tokens were evaluated, the ones kept (appended to ``output``), and the
        chain's pick where it refused a draft token (None if none did)."""
        planned = evaluated = Draft()
        budget_due = self.tracker is not None and self.tracker.due
        if self.drafting and self.sampler is not None and not budget_due:
            planned = self._plan(self.sampler, len(pending), len(output))
            evaluated = self.length.cut(planned)
        first = len(pending) - 1  # the row of the last pending token: it predicts the draft's first
        rows = [False] * first + [not o for o in evaluated.only] + [True]
        started = time.perf_counter()
        self.evaluated.decode([*pending, *evaluated.tokens], rows)
        kept, pick = 0, None
        if evaluated.tokens:
            kept, pick = verify(lambda j: self.sample(first + j), self.accept, evaluated)
            self.length.record(evaluated, kept)
        seconds = time.perf_counter() - started  # the decode and the checks of its rows
        self.length.costs.measure(len(rows), sum(rows), seconds)
        if pick is not None:
            self.evaluated.truncate(self.evaluated.length - len(evaluated) + kept)
        stats.drafted += len(evaluated)
        stats.kept += kept
        stats.unchecked += sum(evaluated.only[:kept])
        output += evaluated.tokens[:kept]
        return planned, len(evaluated), evaluated.tokens[:kept], pick


def _evaluate_prompt_prefix(llm: Any, tokens: list[int]) -> None:
    """Evaluates the prompt but its last token, reusing the model's cached prefix when it
    matches (as llama-cpp-python's own generate does). The last prompt token is evaluated by
    the decoding loop, on its own or with a draft: its logits are then the same whether or not
    the prefix was cached (llama.cpp may compute a token inside a long batch slightly
    differently from the same token in a batch of a few)."""
    cached = llm._input_ids.tolist()
    common = 0
    for old, new in zip(cached, tokens, strict=False):
        if old != new:
            break
        common += 1
    reuse = min(common, len(tokens) - 1)
    if reuse == 0 or not llm._ctx.kv_cache_seq_rm(-1, reuse, -1):
        llm.reset()
        reuse = 0
    llm.n_tokens = reuse
    if reuse < len(tokens) - 1:
        llm.eval(tokens[reuse:-1])


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
        "forced_tokens": progress.draft.kept + progress.forced,
        "draft_tokens": progress.draft.drafted,
    }


def _prompt_tokens(llm: Any, prompt: str | list[int]) -> list[int]:
    if isinstance(prompt, str):
        return [int(t) for t in llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)]
    if not all(isinstance(t, int) for t in prompt):
        raise TypeError("prompt must be text or a list of token ids")
    if not prompt:
        raise ValueError("prompt must hold at least one token")
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
    max_draft: int = DEFAULT_MAX_DRAFT_TOKENS,
    draft_lookup: bool = True,
    special: bool = False,
    reasoning_budget: ReasoningBudget | None = None,
) -> Any:
    """A completion constrained by ``grammar``, shaped like llama-cpp-python's
    ``create_completion`` result (or an iterator of its streaming chunks).

    With ``jump_forward``, text the grammar forces (and with ``draft_lookup`` text guessed from
    the context, :mod:`.lookup`) is drafted, up to ``max_draft`` tokens at a time, evaluated in
    one batch and kept only where the model picks the same tokens: the output is that of plain
    constrained decoding. ``usage`` also reports ``draft_tokens`` (drafted and evaluated) and
    ``forced_tokens`` (the draft tokens kept, and a reasoning budget's closing text); the choice
    (not streamed) also carries the output's ``token_ids``. ``grammar=None`` generates
    unconstrained with EOS banned (a fixed-length baseline). ``special``: write special tokens
    as their text (tool-call markers such as ``<|python_tag|>``). ``reasoning_budget``: force
    its closing text once that many tokens were generated inside the think section (see
    :mod:`gbnf_sampler.structural.budget`)."""
    options = {
        "max_tokens": max_tokens,
        "temperature": temperature,
        "top_k": top_k,
        "top_p": top_p,
        "min_p": min_p,
        "seed": seed,
        "jump_forward": jump_forward,
        "max_draft": max_draft,
        "draft_lookup": draft_lookup,
        "special": special,
        "reasoning_budget": reasoning_budget,
    }
    prompt_tokens = _checked_request(llm, prompt, options)
    progress = _Progress()
    meta = _completion_meta(llm)
    chunks = _text_chunks(_stream_tokens(llm, prompt_tokens, grammar, options, progress), progress)
    if stream:
        return _stream_response(meta, chunks, prompt_tokens, progress)
    choice = {
        "text": "".join(chunks),
        "index": 0,
        "logprobs": None,
        "finish_reason": progress.finish_reason,
        "token_ids": list(progress.tokens),
    }
    return {**meta, "choices": [choice], "usage": _usage(prompt_tokens, progress)}


def _completion_meta(llm: Any) -> dict[str, Any]:
    return {
        "id": f"cmpl-{uuid.uuid4()}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": str(getattr(llm, "model_path", "")),
    }


def _checked_request(llm: Any, prompt: str | list[int], options: dict[str, Any]) -> list[int]:
    """The prompt's tokens, after checking the options (a ValueError says what is wrong)."""
    max_tokens, max_draft = options["max_tokens"], options["max_draft"]
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    if isinstance(max_draft, bool) or not isinstance(max_draft, int) or max_draft < 0:
        raise ValueError(f"max_draft must be an int >= 0 (0 drafts nothing), got {max_draft!r}")
    prompt_tokens = _prompt_tokens(llm, prompt)
    if len(prompt_tokens) >= int(llm.n_ctx()):
        raise ValueError(
            f"the prompt has {len(prompt_tokens)} tokens and the context holds {llm.n_ctx()}: "
            "shorten the prompt or load the model with a larger n_ctx"
        )
    return prompt_tokens


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
