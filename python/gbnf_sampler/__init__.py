"""gbnf-sampler: fast, exact grammar-constrained sampling for local LLM inference.

The pipeline, top to bottom (docs/ARCHITECTURE.md draws it): grammars come from GBNF
(:class:`Grammar`) or from the converters (:mod:`.schema`, :mod:`.regex`); :func:`compile` binds
one to a :class:`Vocab`; a :class:`Matcher` per sequence fills token bitmasks (:mod:`.kernels`
applies them). The runtime layers sit on top: :mod:`.llama` (llama-cpp-python), :mod:`.hf`
(transformers), :mod:`.torch` and :mod:`.cuda` (tensors), :mod:`.cli`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from . import hf, limits, llama, structural, syntax  # registering Vocab/Grammar constructors
from . import syntax as ast  # the former name of the syntax-tree module
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
from .structural import Trigger
from .structural import formats as tool_formats
from .vocab import Vocab

__version__ = "0.1.0"

# Submodules that import heavy optional dependencies load on first use: gs.torch (torch).
_LAZY_SUBMODULES = ("torch",)


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
    "Trigger",
    "Vocab",
    "__version__",
    "accept_tokens",
    "allocate_bitmask",
    "apply_bitmask",
    "ast",
    "bitmask_words",
    "compile",
    "fill_masks",
    "hf",
    "limits",
    "llama",
    "structural",
    "syntax",
    "tool_formats",
]
