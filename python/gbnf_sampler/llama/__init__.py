"""llama-cpp-python integration: a drop-in logits processor, a native llama.cpp sampler, and
constrained ``generate``/``chat`` with jump-forward decoding.

    import gbnf_sampler as gs
    out = llm(prompt, logits_processor=gs.llama.logits_processor(llm, grammar))
    out = gs.llama.generate(llm, prompt, grammar, max_tokens=64)

``grammar`` may be a :class:`~gbnf_sampler.Grammar`, GBNF text, a JSON Schema dict or a Pydantic
model class. llama-cpp-python is imported on first use, so the rest of the package works without
it. Importing this package registers ``Vocab.from_llama`` and ``Vocab.from_gguf``.
"""

from __future__ import annotations

from .chat import chat
from .compiled import compiled_for, matcher_for, vocab_for
from .generate import GenerationError, generate
from .native_sampler import GrammarSampler, sampler
from .processor import GrammarLogitsProcessor, logits_processor

__all__ = [
    "GenerationError",
    "GrammarLogitsProcessor",
    "GrammarSampler",
    "chat",
    "compiled_for",
    "generate",
    "logits_processor",
    "matcher_for",
    "sampler",
    "vocab_for",
]
