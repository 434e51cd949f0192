"""What the serving-engine adapters (:mod:`gbnf_sampler.sglang`, :mod:`gbnf_sampler.vllm`) share:
the request kinds both engines send, turned into grammars (:mod:`.specs`; structural tags by
:mod:`gbnf_sampler.structural`), and one :class:`EngineGrammars` per engine holding the
vocabulary, the compile pool and the batched fill (:mod:`.runtime`). Nothing here imports an
engine."""

from __future__ import annotations

from .runtime import CompileFailure, EngineGrammars, fill_rows, jump_forward_text
from .specs import KINDS, grammar_for

__all__ = [
    "KINDS",
    "CompileFailure",
    "EngineGrammars",
    "fill_rows",
    "grammar_for",
    "jump_forward_text",
]
