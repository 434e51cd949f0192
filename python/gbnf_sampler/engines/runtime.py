"""One :class:`EngineGrammars` per engine: the vocabulary, converted request grammars (an LRU
keyed by the request spec), compiles on a thread pool through the process-wide compiled-grammar
cache (:func:`gbnf_sampler.compile`), and the batched mask fill the adapters share."""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..compiled import CompiledGrammar, compile
from ..errors import GbnfSamplerError
from ..grammar import Grammar
from ..kernels import allocate_bitmask
from ..limits import (
    ENGINE_COMPILE_THREADS,
    ENGINE_GRAMMAR_CACHE_ENTRIES,
    ENGINE_PRECOMPUTE_MS,
)
from ..matcher import BitmaskLike, Matcher, fill_masks
from ..vocab import Vocab
from .specs import KINDS, WHITESPACE_MODES, grammar_for


@dataclass(frozen=True)
class CompileFailure:
    """A request whose grammar did not compile: ``message`` is the diagnostic (line and column
    for GBNF, a JSON pointer for schemas) the engine reports for that request alone."""

    kind: str
    message: str


PRECOMPUTE_ENV = "GBNF_SAMPLER_PRECOMPUTE_MS"


def _check_precompute_ms(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int (milliseconds), got {value!r}")
    if not 0 <= value <= 60_000:
        raise ValueError(f"{name} must be in [0, 60000] milliseconds, got {value}")
    return value


def _env_precompute_ms() -> int:
    """The engines create their backend themselves: ``GBNF_SAMPLER_PRECOMPUTE_MS`` sets the
    compile-time budget for them (ENGINE_PRECOMPUTE_MS when unset)."""
    text = os.environ.get(PRECOMPUTE_ENV)
    if text is None or text.strip() == "":
        return ENGINE_PRECOMPUTE_MS
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{PRECOMPUTE_ENV} must be an int (milliseconds), got {text!r}") from None
    return _check_precompute_ms(value, PRECOMPUTE_ENV)


class EngineGrammars:
    """Compiles engine requests (``kind`` in :data:`KINDS`, ``spec`` text) against one
    vocabulary. Thread-safe; compiles run on ``compile_threads`` threads (:meth:`submit`) or on
    the caller's (:meth:`compile`)."""

    def __init__(
        self,
        vocab: Vocab,
        *,
        whitespace: str = "flexible",
        compile_threads: int | None = None,
        precompute_ms: int | None = None,
    ) -> None:
        if not isinstance(vocab, Vocab):
            raise TypeError(f"vocab must be a gbnf_sampler.Vocab, got {type(vocab).__name__}")
        if whitespace not in WHITESPACE_MODES:
            raise ValueError(f"whitespace must be one of {WHITESPACE_MODES}, got {whitespace!r}")
        self.precompute_ms = _check_precompute_ms(
            _env_precompute_ms() if precompute_ms is None else precompute_ms, "precompute_ms"
        )
        threads = compile_threads or min(ENGINE_COMPILE_THREADS, os.cpu_count() or 1)
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"compile_threads must be an int >= 1, got {compile_threads!r}")
        self.vocab = vocab
        self.whitespace = whitespace
        self._threads = threads
        self._pool: ThreadPoolExecutor | None = None  # started by the first submit
        self._lock = threading.Lock()
        self._grammars: OrderedDict[tuple[str, str], Grammar] = OrderedDict()
        # Compiled grammars whose first masks a compile of this adapter computed already.
        self._started: weakref.WeakSet[CompiledGrammar] = weakref.WeakSet()

    @classmethod
    def from_tokenizer(
        cls,
        tokenizer: Any,
        *,
        vocab_size: int | None = None,
        eos_ids: Iterable[int] | None = None,
        **options: Any,
    ) -> EngineGrammars:
        """From a Hugging Face fast tokenizer (``Vocab.from_hf``): ``vocab_size`` is the
        model's logits width, ``eos_ids`` the model's end-of-generation ids."""
        eos = None if eos_ids is None else sorted(set(eos_ids))
        return cls(Vocab.from_hf(tokenizer, vocab_size=vocab_size, eos_ids=eos), **options)

    def grammar(self, kind: str, spec: str) -> Grammar:
        """The request's grammar (converted once per spec, kept in an LRU)."""
        if kind not in KINDS:
            raise ValueError(f"unknown request kind {kind!r}; expected one of {KINDS}")
        key = (kind, spec)
        with self._lock:
            hit = self._grammars.get(key)
            if hit is not None:
                self._grammars.move_to_end(key)
                return hit
        grammar = grammar_for(kind, spec, whitespace=self.whitespace, vocab=self.vocab)
        with self._lock:
            self._grammars[key] = grammar
            while len(self._grammars) > ENGINE_GRAMMAR_CACHE_ENTRIES:
                self._grammars.popitem(last=False)
        return grammar

    def compile(self, kind: str, spec: str) -> CompiledGrammar:
        """Compiles one request; raises GrammarError / SchemaError / ValueError. The first masks
        are computed here, on the compile thread, rather than in the engine's decoding steps
        (as a backend that precomputes at compile time does): the start state's, then the
        reachable states nearest first for up to ``precompute_ms`` (the background
        workers go on with the rest), once per compiled grammar: a later request for it (the
        compiled-grammar cache's hit) returns at once."""
        compiled = compile(self.grammar(kind, spec), self.vocab)
        with self._lock:
            first = compiled not in self._started
            self._started.add(compiled)
        if first:
            Matcher(compiled).fill_mask(allocate_bitmask(1, compiled.vocab_size))
            if self.precompute_ms > 0:
                compiled.precompute(self.precompute_ms / 1000)
        return compiled

    def try_compile(self, kind: str, spec: str) -> CompiledGrammar | CompileFailure:
        """:meth:`compile`, with a bad request as a :class:`CompileFailure` (other requests are
        not affected)."""
        try:
            return self.compile(kind, spec)
        except (GbnfSamplerError, ValueError, TypeError, RecursionError) as e:
            return CompileFailure(kind, f"{type(e).__name__}: {e}")

    def submit(self, kind: str, spec: str) -> Future[CompiledGrammar | CompileFailure]:
        """:meth:`try_compile` on the compile pool."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, "gbnf-sampler-compile")
            pool = self._pool
        return pool.submit(self.try_compile, kind, spec)

    def shutdown(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def fill_rows(matchers: Sequence[Matcher], rows: Sequence[int], bitmask: BitmaskLike) -> None:
    """``matchers[i]`` fills row ``rows[i]`` of ``bitmask``, all on the thread pool in one call
    (:func:`gbnf_sampler.fill_masks`); other rows are left as they are."""
    if matchers:
        fill_masks(matchers, bitmask, rows)


def jump_forward_text(matcher: Matcher) -> str:
    """The text the grammar forces next, up to its last whole UTF-8 character ("" when the next
    byte is a choice)."""
    data = matcher.forced_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        return data[: e.start].decode("utf-8")


__all__ = ["CompileFailure", "EngineGrammars", "fill_rows", "jump_forward_text"]
