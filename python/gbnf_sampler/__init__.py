"""gbnf-sampler: fast, exact grammar-constrained sampling for local LLM inference."""

from __future__ import annotations

from . import ast
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
from .matcher import Matcher
from .vocab import Vocab

__version__ = "0.1.0"

__all__ = [
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
    "allocate_bitmask",
    "apply_bitmask",
    "ast",
    "bitmask_words",
]
