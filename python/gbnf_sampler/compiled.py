"""``compile(grammar, vocab)``: a grammar bound to a tokenizer vocabulary.

A :class:`CompiledGrammar` is immutable and thread-safe: share one between any number of
token-level matchers (``gs.Matcher(compiled)``) on any threads. Compiling resolves the grammar's
token references (``<[id]>`` must be inside the vocabulary, ``<text>`` must be exactly one token,
else :class:`GrammarError` with ``code`` ``"token_id_out_of_range"``, ``"unknown_token"`` or
``"ambiguous_token"``) and costs milliseconds: the per-state token-mask cache is filled lazily,
the first time a state is met.

Compiled grammars are cached by (grammar text, root, vocabulary fingerprint, limits) in a
process-wide LRU whose budget is :data:`limits.DEFAULT_CACHE_LIMIT_BYTES` (256 MiB of
mask-cache memory, checked at each compile; change it with :func:`set_cache_limit_bytes`, 0
disables the cache) and at most :data:`limits.MAX_CACHE_ENTRIES` (128) grammars (their mask
caches fill lazily, so a new entry weighs almost nothing when it is added).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from . import _core
from .grammar import Grammar
from .limits import (
    DEFAULT_CACHE_LIMIT_BYTES,
    DEFAULT_MAX_HISTORY_BYTES,
    DEFAULT_MAX_ROLLBACK,
    DEFAULT_MAX_STATE_SIZE,
    MAX_CACHE_ENTRIES,
)
from .validation import GRAMMAR_DEFAULT, GrammarDefault, check_uint32, whitespace_bound
from .vocab import Vocab

_cache_lock = threading.Lock()
_cache: OrderedDict[tuple[Any, ...], CompiledGrammar] = OrderedDict()
_cache_limit_bytes = DEFAULT_CACHE_LIMIT_BYTES


class CompiledGrammar:
    """A grammar compiled against a vocabulary (see :func:`compile`)."""

    __slots__ = ("_native", "grammar", "vocab")

    def __init__(self, native: _core.CompiledGrammar, grammar: Grammar, vocab: Vocab) -> None:
        self._native = native
        self.grammar = grammar
        self.vocab = vocab

    @property
    def vocab_size(self) -> int:
        return int(self._native.vocab_size)

    @property
    def cache_bytes(self) -> int:
        """Memory held by the token-mask cache entries filled so far."""
        return int(self._native.cache_bytes)

    @property
    def cached_states(self) -> int:
        return int(self._native.cached_states)

    def __repr__(self) -> str:
        return (
            f"<CompiledGrammar vocab_size={self.vocab_size} "
            f"cached_states={self.cached_states} cache_bytes={self.cache_bytes}>"
        )


def _key(grammar: Grammar, vocab: Vocab, *limits: int) -> tuple[Any, ...]:
    return (grammar.to_gbnf(), grammar.root, vocab.fingerprint, *limits)


def _evict_locked() -> None:
    total = sum(c.cache_bytes for c in _cache.values())
    while _cache and (
        total > _cache_limit_bytes or _cache_limit_bytes == 0 or len(_cache) > MAX_CACHE_ENTRIES
    ):
        _, old = _cache.popitem(last=False)
        total -= old.cache_bytes


def compile(
    grammar: Grammar,
    vocab: Vocab,
    *,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_rollback: int = DEFAULT_MAX_ROLLBACK,
    max_history_bytes: int = DEFAULT_MAX_HISTORY_BYTES,
    max_whitespace: int | GrammarDefault | None = GRAMMAR_DEFAULT,
    cache: bool = True,
) -> CompiledGrammar:
    """Compiles ``grammar`` against ``vocab`` (cached; see the module docstring). The limits
    are those of its matchers (see :class:`gbnf_sampler.Matcher`); ``max_whitespace`` bounds
    every run of whitespace bytes (space, tab, LF, CR) in the output, exactly: a token that would
    make a longer run is never allowed (default: ``grammar.max_whitespace``, None for GBNF,
    :func:`gbnf_sampler.schema.output_whitespace_bound` for JSON Schema grammars)."""
    if not isinstance(grammar, Grammar):
        raise TypeError(f"compile expects a gbnf_sampler.Grammar, got {type(grammar).__name__}")
    if not isinstance(vocab, Vocab):
        raise TypeError(f"compile expects a gbnf_sampler.Vocab, got {type(vocab).__name__}")
    check_uint32("max_state_size", max_state_size, 1)
    check_uint32("max_rollback", max_rollback, 0)
    check_uint32("max_history_bytes", max_history_bytes, 0, 2**63)
    ws = whitespace_bound(max_whitespace, grammar.max_whitespace)
    limits = (max_state_size, max_rollback, max_history_bytes, ws)
    key = _key(grammar, vocab, *limits) if cache else None
    if key is not None:
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None:
                _cache.move_to_end(key)
                return hit
    native = _core.CompiledGrammar.compile(grammar.automaton(), vocab._native, *limits)
    compiled = CompiledGrammar(native, grammar, vocab)
    if key is not None:
        with _cache_lock:
            compiled = _cache.setdefault(key, compiled)
            _cache.move_to_end(key)
            _evict_locked()
    return compiled


def set_cache_limit_bytes(limit: int) -> None:
    """Sets the compile cache's memory budget (bytes of mask cache); 0 disables caching."""
    global _cache_limit_bytes
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"cache limit must be an int >= 0, got {limit!r}")
    with _cache_lock:
        _cache_limit_bytes = limit
        _evict_locked()


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


__all__ = [
    "DEFAULT_CACHE_LIMIT_BYTES",
    "MAX_CACHE_ENTRIES",
    "CompiledGrammar",
    "clear_cache",
    "compile",
    "set_cache_limit_bytes",
]
