"""gbnf-sampler: fast, exact grammar-constrained sampling for local LLM inference."""

from __future__ import annotations

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
    "llama",
    "bitmask_words",
    "compile",
    "fill_masks",
]
