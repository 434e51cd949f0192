"""transformers integration: ``LogitsProcessor`` for ``model.generate`` and exact vocabularies of
fast Hugging Face tokenizers (``Vocab.from_hf``, registered when this package is imported).

``LogitsProcessor`` needs torch and transformers (``pip install 'gbnf-sampler[hf]'``); it loads
on first use so that importing gbnf_sampler stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

from .vocab import extract_hf_vocab, vocab_from_hf

_LAZY = {
    "LogitsProcessor": "processor",
    "tool_call_processor": "processor",
    "vocab_for": "processor",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


__all__ = [
    "LogitsProcessor",
    "extract_hf_vocab",
    "tool_call_processor",
    "vocab_for",
    "vocab_from_hf",
]
