"""gbnf-sampler: fast, exact grammar-constrained sampling for local LLM inference."""

from __future__ import annotations

from . import ast
from .compiled import CompiledGrammar, compile
from .errors import (
    Diagnostic,
    GbnfSamplerError,
    GrammarError,
    GrammarTooComplexError,
    SchemaError,
)
from .grammar import Grammar
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
    "ast",
    "compile",
    "fill_masks",
]
