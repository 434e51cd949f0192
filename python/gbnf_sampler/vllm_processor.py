"""``GrammarLogitsProcessor``: gbnf-sampler on an unpatched vLLM (V1 logits-processor interface).

    vllm serve MODEL --logits-processors gbnf_sampler.vllm:GrammarLogitsProcessor

A request opts in with ``vllm_xargs`` (``SamplingParams.extra_args``), one key of
:data:`XARG_KINDS`: ``{"gbnf": "root ::= ..."}``, ``{"json_schema": "{...}"}``,
``{"regex": "..."}``, ``{"choice": ["a", "b"]}``, ``{"structural_tag": "{...}"}`` or
``{"json_object": 1}``. :meth:`GrammarLogitsProcessor.validate_params` converts the grammar when
the request arrives, so a bad one is an HTTP 400 naming line and column. Per step the processor
catches each row's matcher up with the row's new output tokens, fills every constrained row in
one threaded call and applies the mask on the logits' device.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import torch
from vllm.v1.sample.logits_processor import (
    BatchUpdate,
    LogitsProcessor,
    MoveDirectionality,
)

from . import torch as gs_torch
from .compiled import CompiledGrammar
from .engines import CompileFailure, EngineGrammars, fill_rows, grammar_for
from .errors import GbnfSamplerError
from .matcher import Matcher

logger = logging.getLogger(__name__)

# vllm_xargs key -> request kind of gbnf_sampler.engines.
XARG_KINDS = {
    "gbnf": "gbnf",
    "json_schema": "json",
    "regex": "regex",
    "choice": "choice",
    "structural_tag": "structural_tag",
    "json_object": "json_object",
}


def request_spec(extra_args: dict[str, Any] | None) -> tuple[str, str] | None:
    """``(kind, spec)`` named by a request's ``extra_args``, or None when it names no grammar.
    Raises ValueError when it names more than one or a value has the wrong type."""
    named = [k for k in XARG_KINDS if extra_args and k in extra_args]
    if not named:
        return None
    if len(named) > 1:
        raise ValueError(f"gbnf_sampler: give one grammar per request, got {named}")
    key = named[0]
    value = extra_args[key] if extra_args else None
    if key == "json_object":
        return ("json_object", "") if value else None
    if key == "choice" and isinstance(value, list):
        return "choice", json.dumps(value)
    if key in ("json_schema", "structural_tag") and isinstance(value, dict):
        return XARG_KINDS[key], json.dumps(value)
    if not isinstance(value, str):
        raise ValueError(f"gbnf_sampler: vllm_xargs[{key!r}] must be a string, got {value!r}")
    return XARG_KINDS[key], value


@dataclass
class _Row:
    """One constrained request of the persistent batch."""

    pending: Future[CompiledGrammar | CompileFailure]
    output_ids: list[int]  # vLLM's live list of the request's generated tokens
    matcher: Matcher | None = None
    consumed: int = 0
    failed: str = ""
    refused: bool = field(default=False)


class GrammarLogitsProcessor(LogitsProcessor):  # type: ignore[misc]
    """vLLM V1 logits processor constraining the requests that name a grammar."""

    @classmethod
    def validate_params(cls, sampling_params: Any) -> None:
        """Converts the request's grammar (no vocabulary needed): a bad one raises ValueError
        with our diagnostic, which vLLM returns as HTTP 400."""
        spec = request_spec(getattr(sampling_params, "extra_args", None))
        if spec is None:
            return
        try:
            grammar_for(*spec)
        except (GbnfSamplerError, ValueError, TypeError) as e:
            raise ValueError(f"gbnf_sampler: invalid {spec[0]} grammar: {e}") from None

    def __init__(self, vllm_config: Any, device: torch.device, is_pin_memory: bool) -> None:
        from vllm.tokenizers import cached_tokenizer_from_config

        model_config = vllm_config.model_config
        tokenizer = cached_tokenizer_from_config(model_config=model_config)
        # precompute_ms=0: a processor's first apply() waits for its request's compile inside the
        # engine step, so the first masks are left to the steps that meet their states.
        grammars = EngineGrammars.from_tokenizer(
            tokenizer,
            vocab_size=model_config.get_vocab_size(),
            eos_ids=[tokenizer.eos_token_id],
            precompute_ms=0,
        )
        self._setup(grammars, device, is_pin_memory)

    @classmethod
    def from_grammars(
        cls, grammars: EngineGrammars, device: torch.device | str = "cpu"
    ) -> GrammarLogitsProcessor:
        """A processor over an existing :class:`EngineGrammars` (vLLM builds it from its
        config through ``__init__``)."""
        self = cls.__new__(cls)
        self._setup(grammars, torch.device(device), False)
        return self

    def _setup(self, grammars: EngineGrammars, device: torch.device, pin: bool) -> None:
        self.grammars = grammars
        self.device = device
        self.pin_memory = pin
        self.rows: dict[int, _Row] = {}
        self._bitmask: torch.Tensor | None = None

    def is_argmax_invariant(self) -> bool:
        return False

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        if batch_update is None:
            return
        for index in batch_update.removed:
            self.rows.pop(index, None)
        for index, params, _prompt, output_ids in batch_update.added:
            self.rows.pop(index, None)
            spec = request_spec(getattr(params, "extra_args", None))
            if spec is not None:
                self.rows[index] = _Row(self.grammars.submit(*spec), output_ids)
        for a, b, direction in batch_update.moved:
            row_a, row_b = self.rows.pop(a, None), self.rows.pop(b, None)
            if row_a is not None:
                self.rows[b] = row_a
            if row_b is not None and direction == MoveDirectionality.SWAP:
                self.rows[a] = row_b

    def _catch_up(self, row: _Row) -> Matcher | None:
        """The row's matcher advanced over its new output tokens (None: leave unconstrained)."""
        if row.matcher is None and not row.failed:
            result = row.pending.result()
            if isinstance(result, CompileFailure):
                row.failed = result.message
                logger.error("gbnf_sampler: grammar failed to compile: %s", result.message)
            else:
                row.matcher = Matcher(result)
        matcher = row.matcher
        if matcher is None or row.refused:
            return None
        while row.consumed < len(row.output_ids) and not matcher.is_terminated():
            if not matcher.accept_token(int(row.output_ids[row.consumed])):
                row.refused = True
                logger.error("gbnf_sampler: token %s refused", row.output_ids[row.consumed])
                return None
            row.consumed += 1
        return None if matcher.is_terminated() else matcher

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        if not self.rows:
            return logits
        indices, matchers = [], []
        for index, row in sorted(self.rows.items()):
            matcher = self._catch_up(row)
            if matcher is not None and index < logits.shape[0]:
                indices.append(index)
                matchers.append(matcher)
        if not matchers:
            return logits
        bitmask = self._mask(logits.shape[0])
        fill_rows(matchers, indices, bitmask)
        device_mask = bitmask[: logits.shape[0]].to(logits.device, non_blocking=True)
        rows = torch.tensor(indices, dtype=torch.int64, device=logits.device)
        vocab = min(int(logits.shape[-1]), 32 * int(bitmask.shape[1]))
        gs_torch.apply_bitmask(logits, device_mask, indices=rows, vocab_size=vocab)
        return logits

    def _mask(self, rows: int) -> torch.Tensor:
        bitmask = self._bitmask
        if bitmask is None or bitmask.shape[0] < rows:
            bitmask = gs_torch.allocate_bitmask(max(rows, 8), self.grammars.vocab.size)
            if self.pin_memory:
                bitmask = bitmask.pin_memory()
            self._bitmask = bitmask
        return bitmask


__all__ = ["XARG_KINDS", "GrammarLogitsProcessor", "request_spec"]
