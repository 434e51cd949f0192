"""gbnf-sampler: fast, exact grammar-constrained sampling for local LLM inference."""

from __future__ import annotations

import importlib
from types import ModuleType

from . import ast, llama
from .compiled import CompiledGrammar, compile
from .errors import (
    Diagnostic,
    GbnfSamplerError,
    GrammarError,
    GrammarTooComplexError,
    SchemaError,
)
from .grammar import Grammar
from .kernels import allocate_bitmask, apply_bitmask, bitmask_words
from .limits import GrammarLimits
from .matcher import Matcher, accept_tokens, fill_masks
from .vocab import Vocab

__version__ = "0.1.0"

# Submodules that import heavy optional dependencies load on first use: gs.hf (transformers),
# gs.torch (torch).
_LAZY_SUBMODULES = ("hf", "torch")


def __getattr__(name: str) -> ModuleType:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CompiledGrammar",
    "Diagnostic",
    "GbnfSamplerError",
    "Grammar",
    "GrammarError",
    "GrammarLimits",
    "GrammarTooComplexError",
    "Matcher",
    "SchemaError",
    "Vocab",
    "__version__",
    "accept_tokens",
    "allocate_bitmask",
    "apply_bitmask",
    "ast",
    "bitmask_words",
    "compile",
    "fill_masks",
    "llama",
]
