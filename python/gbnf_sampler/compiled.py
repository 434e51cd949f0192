"""``compile(grammar, vocab)``: a grammar bound to a tokenizer vocabulary.

A :class:`CompiledGrammar` is immutable and thread-safe: share one between any number of
token-level matchers (``gs.Matcher(compiled)``) on any threads. Compiling resolves the grammar's
token references (``<[id]>`` must be inside the vocabulary, ``<text>`` must be exactly one token,
else :class:`GrammarError` with ``code`` ``"token_id_out_of_range"``, ``"unknown_token"`` or
``"ambiguous_token"``) and costs milliseconds: the per-state token-mask cache is filled lazily,
the first time a state is met.

Filling the mask cache (see ``docs/notes/masks.md``):

* first use: a state's entry is classified by a walk of the vocabulary's token trie that steps a
  memo of the parser's byte steps (a lazily built DFA), split across idle cores for large
  vocabularies;
* shared cache: a classification is keyed by the part of the automaton the walk reads, so states
  of any grammar compiled against the same :class:`Vocab` that reach the same place (a JSON string
  body, a number, an identifier) reuse it; process-wide, within the memory budget;
* background precompute (``precompute=True``): after compile, idle cores classify the states
  reachable from the start, nearest first (the fewest output bytes away); a matcher that needs
  a state in flight joins that work; dropping the grammar stops it;
  :meth:`CompiledGrammar.precompute` runs the same plan on the calling thread for a bounded time
  (what the serving-engine adapters do on their compile threads);
* prefetch (``prefetch=True``, the default when ``precompute`` is): after each accepted token
  or byte string, a background worker classifies the entries the matcher's next fill needs and
  lacks and, when that fill is more than a copy of cached entries (a walk of context-dependent
  tokens), fills the whole next mask on a fork of the matcher, so that the model's step between
  accept and fill (a decode) hides the work; the fill takes that mask, finds the entries done or
  joins the work in flight, and fills the mask itself when the worker has not started;
* cache files (``cache_dir=...``, off by default): the filled entries are saved per grammar and
  vocabulary fingerprint (:meth:`CompiledGrammar.save_cache`, and at interpreter exit) and
  memory-mapped by a later compile after checking format version, fingerprints and checksums;
  a file that fails a check is ignored with a :class:`MaskCacheWarning`.

Compiled grammars are cached by (grammar text, root, vocabulary fingerprint, limits) in a
process-wide LRU whose budget is :data:`limits.DEFAULT_CACHE_LIMIT_BYTES` (256 MiB of
mask-cache memory, checked at each compile; change it with :func:`set_cache_limit_bytes`, 0
disables the cache) and at most :data:`limits.MAX_CACHE_ENTRIES` (128) grammars. The same budget
bounds the shared cache and stops background precompute.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import warnings
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
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

logger = logging.getLogger(__name__)

_cache_lock = threading.Lock()
_cache: OrderedDict[tuple[Any, ...], CompiledGrammar] = OrderedDict()
_cache_limit_bytes = DEFAULT_CACHE_LIMIT_BYTES
# Grammars compiled with a cache_dir, saved at interpreter exit.
_autosave: weakref.WeakSet[CompiledGrammar] = weakref.WeakSet()


class MaskCacheWarning(UserWarning):
    """A mask cache file was not used (corrupt, truncated, foreign, or unwritable)."""


@dataclass(frozen=True)
class CacheStats:
    """What a compiled grammar's mask cache holds (:meth:`CompiledGrammar.stats`)."""

    states: int  # automaton states built so far (rules are built on first reach)
    filled: int  # entries filled
    classified: int  # entries classified by a trie walk of this grammar
    background: int  # ... of which by the precompute plan (workers, or precompute())
    prefetched: int  # ... of which by a worker right after an accept (prefetch)
    masks_filled_ahead: int  # fills that took a whole mask a worker filled after the accept
    shared: int  # entries taken from the shared cache
    loaded: int  # entries loaded from a cache file
    twins: int  # entries taken from the same place of an earlier copy of a repetition
    bytes: int  # memory of the filled entries
    shared_bytes: int  # ... of which also held by the shared cache
    mapped_bytes: int  # ... of which in a memory-mapped cache file
    precompute_running: bool  # background precompute has states left


@dataclass(frozen=True)
class SharedCacheStats:
    """The process-wide shared mask cache (:func:`shared_cache_stats`)."""

    entries: int
    bytes: int
    limit_bytes: int
    hits: int
    live_entry_bytes: int  # entries of every live compiled grammar


class CompiledGrammar:
    """A grammar compiled against a vocabulary (see :func:`compile`)."""

    __slots__ = ("__weakref__", "_cache_file", "_native", "grammar", "vocab")

    def __init__(self, native: _core.CompiledGrammar, grammar: Grammar, vocab: Vocab) -> None:
        self._native = native
        self.grammar = grammar
        self.vocab = vocab
        self._cache_file: Path | None = None

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

    def stats(self) -> CacheStats:
        """The mask cache's entries by origin and its memory."""
        return CacheStats(**self._native.cache_stats())

    def precompute(self, timeout: float) -> bool:
        """Classifies the grammar's reachable states on this thread, nearest first (the plan the
        background workers run, and go on with), for about ``timeout`` seconds: at least one
        state, and a state's classification is never cut short. Returns True when the plan is
        over (every reachable state filled or being filled by a worker, or the memory budget
        reached). For code that compiles off its decoding path, such as a serving engine's
        compile threads, and would rather pay the first masks there. The GIL is released
        meanwhile."""
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise TypeError(f"precompute: timeout must be a number of seconds, got {timeout!r}")
        if not 0 <= timeout <= 86400:
            raise ValueError(f"precompute: timeout must be in [0, 86400] seconds, got {timeout}")
        return bool(self._native.precompute(float(timeout)))

    @property
    def cache_file(self) -> Path | None:
        """The file :meth:`save_cache` writes (set by ``compile(cache_dir=...)``)."""
        return self._cache_file

    def save_cache(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Writes the filled mask-cache entries to ``path`` (default: :attr:`cache_file`), through
        a temporary file renamed over it. Raises ``ValueError`` without a path, ``OSError`` when
        the file cannot be written."""
        target = Path(path) if path is not None else self._cache_file
        if target is None:
            raise ValueError("save_cache needs a path (or compile(..., cache_dir=...))")
        try:
            self._native.save_cache(str(target))
        except ValueError as e:
            raise OSError(str(e)) from None
        return target

    def _load_cache(self, cache_dir: str | os.PathLike[str]) -> None:
        directory = Path(cache_dir)
        self._cache_file = directory / self._native.cache_file_name
        _autosave.add(self)
        if not self._cache_file.exists():
            return
        loaded, error = self._native.load_cache(str(self._cache_file))
        if error:
            message = f"ignoring mask cache file {self._cache_file}: {error}"
            logger.warning(message)
            warnings.warn(message, MaskCacheWarning, stacklevel=3)
        else:
            logger.debug("loaded %d mask-cache entries from %s", loaded, self._cache_file)

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


def _check_compile_args(grammar: Grammar, vocab: Vocab, limits: tuple[int, int, int]) -> None:
    if not isinstance(grammar, Grammar):
        raise TypeError(f"compile expects a gbnf_sampler.Grammar, got {type(grammar).__name__}")
    if not isinstance(vocab, Vocab):
        raise TypeError(f"compile expects a gbnf_sampler.Vocab, got {type(vocab).__name__}")
    check_uint32("max_state_size", limits[0], 1)
    check_uint32("max_rollback", limits[1], 0)
    check_uint32("max_history_bytes", limits[2], 0, 2**63)


def compile(
    grammar: Grammar,
    vocab: Vocab,
    *,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_rollback: int = DEFAULT_MAX_ROLLBACK,
    max_history_bytes: int = DEFAULT_MAX_HISTORY_BYTES,
    max_whitespace: int | GrammarDefault | None = GRAMMAR_DEFAULT,
    cache: bool = True,
    precompute: bool = True,
    prefetch: bool | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> CompiledGrammar:
    """Compiles ``grammar`` against ``vocab`` (cached; see the module docstring). The limits
    are those of its matchers (see :class:`gbnf_sampler.Matcher`); ``max_whitespace`` bounds
    every run of whitespace bytes (space, tab, LF, CR) in the output, exactly: a token that would
    make a longer run is never allowed (default: ``grammar.max_whitespace``, None for GBNF,
    :func:`gbnf_sampler.schema.output_whitespace_bound` for JSON Schema grammars).
    ``precompute`` classifies the reachable states on background workers; ``prefetch`` (default:
    as ``precompute``) does there, after each accept, the next fill's work (neither is part of
    the compile cache's key: a cached grammar keeps the settings it was compiled with, and
    ``cache=False`` compiles with these);
    ``cache_dir`` loads and saves the mask cache there (saved entries are unfiltered: the
    whitespace bound is applied after the cache)."""
    _check_compile_args(grammar, vocab, (max_state_size, max_rollback, max_history_bytes))
    ws = whitespace_bound(max_whitespace, grammar.max_whitespace)
    limits = (max_state_size, max_rollback, max_history_bytes, ws)
    if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
        raise TypeError(f"cache_dir must be a path, got {type(cache_dir).__name__}")
    key = _key(grammar, vocab, *limits) if cache else None
    compiled = None
    if key is not None:
        with _cache_lock:
            compiled = _cache.get(key)
            if compiled is not None:
                _cache.move_to_end(key)
    if compiled is None:
        native = _core.CompiledGrammar.compile(
            grammar.automaton(),
            vocab._native,
            *limits,
            precompute=bool(precompute),
            prefetch=bool(precompute if prefetch is None else prefetch),
        )
        compiled = CompiledGrammar(native, grammar, vocab)
        if key is not None:
            with _cache_lock:
                compiled = _cache.setdefault(key, compiled)
                _cache.move_to_end(key)
                _evict_locked()
    if cache_dir is not None and compiled.cache_file is None:
        compiled._load_cache(cache_dir)
    return compiled


def set_cache_limit_bytes(limit: int) -> None:
    """Sets the memory budget of the mask caches (bytes): the compile cache's, the shared
    cache's, and where background precompute stops; 0 disables the compile and shared caches."""
    global _cache_limit_bytes
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"cache limit must be an int >= 0, got {limit!r}")
    with _cache_lock:
        _cache_limit_bytes = limit
        _core.set_mask_memory_budget(limit)
        _evict_locked()


def shared_cache_stats() -> SharedCacheStats:
    """The process-wide shared mask cache: entries, bytes, budget, hits."""
    return SharedCacheStats(**_core.shared_mask_cache_stats())


def clear_cache() -> None:
    """Empties the compile cache and the shared mask cache (grammars in use keep their entries)."""
    with _cache_lock:
        _cache.clear()
    _core.clear_shared_mask_cache()


def _save_at_exit() -> None:
    for compiled in list(_autosave):
        s = compiled.stats()
        if s.filled <= s.loaded:
            continue
        try:
            compiled.save_cache()
        except OSError as e:
            logger.warning("could not save the mask cache: %s", e)


atexit.register(_save_at_exit)


__all__ = [
    "DEFAULT_CACHE_LIMIT_BYTES",
    "MAX_CACHE_ENTRIES",
    "CacheStats",
    "CompiledGrammar",
    "MaskCacheWarning",
    "SharedCacheStats",
    "clear_cache",
    "compile",
    "set_cache_limit_bytes",
    "shared_cache_stats",
]
