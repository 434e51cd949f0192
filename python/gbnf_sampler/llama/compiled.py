"""Grammars compiled for a llama-cpp-python model: its vocabulary, read once per model object."""

from __future__ import annotations

import weakref
from typing import Any

from ..compiled import CompiledGrammar, compile
from ..grammar import Grammar
from ..matcher import Matcher
from ..vocab import Vocab
from .vocab import vocab_from_llama

_vocab_cache: weakref.WeakKeyDictionary[Any, Vocab] = weakref.WeakKeyDictionary()


def vocab_for(llm: Any) -> Vocab:
    """The :class:`Vocab` of a ``llama_cpp.Llama``, extracted once per model object."""
    vocab = _vocab_cache.get(llm)
    if vocab is None:
        vocab = vocab_from_llama(llm)
        _vocab_cache[llm] = vocab
    return vocab


def compiled_for(llm: Any, grammar: Any) -> CompiledGrammar:
    """``grammar`` (anything :meth:`Grammar.coerce` takes) compiled for ``llm``'s vocabulary; a
    :class:`CompiledGrammar` of that vocabulary is used as it is (to choose compile options such
    as ``max_whitespace``: ``gs.compile(grammar, gs.llama.vocab_for(llm), max_whitespace=8)``)."""
    vocab = vocab_for(llm)
    if isinstance(grammar, CompiledGrammar):
        if grammar.vocab != vocab:
            raise ValueError("the compiled grammar is for another vocabulary than this model's")
        return grammar
    n_vocab = int(llm.n_vocab())
    if vocab.size != n_vocab:
        raise ValueError(
            f"vocabulary mismatch: the model reports {n_vocab} tokens but its vocabulary has "
            f"{vocab.size}; was the Vocab built from another model?"
        )
    return compile(Grammar.coerce(grammar), vocab)


def matcher_for(llm: Any, grammar: Any) -> Matcher:
    """A fresh token-level Matcher of ``grammar`` over ``llm``'s vocabulary."""
    return Matcher(compiled_for(llm, grammar))


__all__ = ["compiled_for", "matcher_for", "vocab_for"]
