"""gbnf-sampler in vLLM's V1 engine (``pip install "gbnf-sampler[vllm]"``).

Two ways in:

* **Logits processor (works on an unpatched vLLM).** ``vllm serve MODEL --logits-processors
  gbnf_sampler.vllm:GrammarLogitsProcessor``; each request names its grammar in
  ``vllm_xargs`` (``SamplingParams.extra_args``) under exactly one of the keys ``gbnf``
  (GBNF text), ``json_schema`` (JSON text or a dict), ``regex``, ``choice`` (a list of
  strings), ``structural_tag`` (JSON text) or ``json_object`` (any true value). Bad grammars
  are refused when the request arrives (HTTP 400 with our diagnostic); each step fills the whole
  batch's masks in one threaded call. vLLM refuses custom logits processors together with
  speculative decoding.
* **Structured-output backend.** :class:`GbnfSamplerBackend` / :class:`GbnfSamplerGrammar`
  implement vLLM's ``StructuredOutputBackend`` / ``StructuredOutputGrammar`` (json,
  json_object, regex, grammar, choice, structural_tag; speculative decoding: validate without
  advancing, rollback). vLLM 0.33 picks its backend from a fixed list in
  ``StructuredOutputManager.grammar_init``, so selecting it needs the one-line registration
  described in docs/notes/engines.md (section "vLLM").
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from vllm.v1.structured_output.backend_types import (
    StructuredOutputBackend,
    StructuredOutputGrammar,
    StructuredOutputOptions,
)

from .compiled import CompiledGrammar
from .engines import CompileFailure, EngineGrammars
from .matcher import BitmaskLike, Matcher, as_bitmask_array
from .vllm_processor import GrammarLogitsProcessor, request_spec

logger = logging.getLogger(__name__)

_KINDS = {
    StructuredOutputOptions.JSON: "json",
    StructuredOutputOptions.JSON_OBJECT: "json_object",
    StructuredOutputOptions.REGEX: "regex",
    StructuredOutputOptions.GRAMMAR: "gbnf",
    StructuredOutputOptions.CHOICE: "choice",
    StructuredOutputOptions.STRUCTURAL_TAG: "structural_tag",
}


@dataclass
class GbnfSamplerGrammar(StructuredOutputGrammar):  # type: ignore[misc]
    """One request's grammar state. Stop tokens that are not the vocabulary's EOS (vLLM's
    ``all_stop_token_ids``) behave as EOS: allowed exactly when the grammar can end, and they
    end it."""

    compiled: CompiledGrammar
    extra_stops: frozenset[int] = frozenset()
    backend: GbnfSamplerBackend | None = field(default=None, repr=False)
    matcher: Matcher = field(init=False, repr=False)
    num_processed_tokens: int = field(default=0, init=False)
    _stopped: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        self.matcher = Matcher(self.compiled)

    def _accept(self, token: int) -> bool:
        if token in self.extra_stops:
            self._stopped = self.matcher.can_terminate()
            return self._stopped
        return self.matcher.accept_token(token)

    def accept_tokens(self, request_id: str, tokens: list[int]) -> bool:
        """Advances over ``tokens``; False (and a log line) at the first refused one. Tokens
        after the end of the grammar are ignored."""
        for token in tokens:
            if self.is_terminated():
                break
            if not self._accept(int(token)):
                logger.error("gbnf_sampler: request %s: token %s refused", request_id, token)
                return False
            self.num_processed_tokens += 1
        return True

    def validate_tokens(self, tokens: list[int]) -> list[int]:
        """The longest accepted prefix of ``tokens`` (speculative drafts); the state is left as
        it was."""
        accepted: list[int] = []
        for token in tokens:
            if self.is_terminated() or not self._accept(int(token)):
                break
            accepted.append(int(token))
        self._undo(len(accepted))
        return accepted

    def _undo(self, n: int) -> None:
        if n > 0 and self._stopped:
            self._stopped = False
            n -= 1
        self.matcher.rollback(n)

    def rollback(self, num_tokens: int) -> None:
        self._undo(num_tokens)
        self.num_processed_tokens -= num_tokens

    def fill_bitmask(self, bitmask: BitmaskLike, batch_index: int) -> None:
        array = self.backend.view(bitmask) if self.backend is not None else bitmask
        self.matcher.fill_mask(array, batch_index)
        if self.extra_stops:
            _set_stops(as_bitmask_array(array)[batch_index], self.extra_stops, self.matcher)

    def is_terminated(self) -> bool:
        return self._stopped or self.matcher.is_terminated()

    def reset(self) -> None:
        self.matcher.reset()
        self._stopped = False
        self.num_processed_tokens = 0


def _set_stops(row: Any, stops: frozenset[int], matcher: Matcher) -> None:
    allowed = matcher.can_terminate()
    words = row.view("uint32")
    for token in stops:
        if token < 32 * len(words):
            bit = np.uint32(1 << (token & 31))
            word = words[token >> 5]
            words[token >> 5] = (word | bit) if allowed else (word & ~bit)


@dataclass
class GbnfSamplerBackend(StructuredOutputBackend):  # type: ignore[misc]
    """vLLM's engine-level structured-output backend over one :class:`EngineGrammars`."""

    grammars: EngineGrammars = field(init=False, repr=False)
    _bitmask: torch.Tensor | None = field(default=None, init=False, repr=False)
    _bitmask_array: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        config = getattr(self.vllm_config, "structured_outputs_config", None)
        compact = bool(getattr(config, "disable_any_whitespace", False))
        eos = getattr(self.tokenizer, "eos_token_id", None)
        self.grammars = EngineGrammars.from_tokenizer(
            self.tokenizer,
            vocab_size=self.vocab_size,
            eos_ids=[] if eos is None else [eos],
            whitespace="compact" if compact else "flexible",
        )

    def compile_grammar(
        self,
        request_type: StructuredOutputOptions,
        grammar_spec: str,
        stop_token_ids: set[int] | None = None,
    ) -> GbnfSamplerGrammar:
        """Compiles one request; a bad grammar raises ValueError with our diagnostic (vLLM
        fails that request alone)."""
        kind = _KINDS.get(request_type)
        if kind is None:
            raise ValueError(f"gbnf_sampler: unsupported request type {request_type}")
        result = self.grammars.try_compile(kind, grammar_spec)
        if isinstance(result, CompileFailure):
            raise ValueError(f"gbnf_sampler: invalid {kind} grammar: {result.message}")
        eos = set(self.grammars.vocab.eos_ids)
        stops = stop_token_ids or ()
        extra = frozenset(t for t in stops if t not in eos and 0 <= t < self.vocab_size)
        return GbnfSamplerGrammar(result, extra, self)

    def allocate_token_bitmask(self, max_num_seqs: int) -> torch.Tensor:
        """``[max_num_seqs, ceil(vocab / 32)]`` int32 on the CPU, all allowed."""
        words = (self.vocab_size + 31) // 32
        self._bitmask = torch.full((max_num_seqs, words), -1, dtype=torch.int32)
        self._bitmask_array = self._bitmask.numpy()
        return self._bitmask

    def view(self, bitmask: BitmaskLike) -> Any:
        """The numpy view of the bitmask this backend allocated (no DLPack round trip per
        request); other arrays as they are."""
        return self._bitmask_array if bitmask is self._bitmask else bitmask

    def destroy(self) -> None:
        self.grammars.shutdown()


__all__ = [
    "GbnfSamplerBackend",
    "GbnfSamplerGrammar",
    "GrammarLogitsProcessor",
    "request_spec",
]
