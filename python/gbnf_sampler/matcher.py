"""``Matcher``: the byte-level parser state of one generated sequence.

A matcher follows every parse of the bytes accepted so far (an Earley-style item set over a
graph-structured stack in the C++ core), so ambiguous and left-recursive grammars work and cost
polynomial time. Limits (defaults in :mod:`gbnf_sampler.limits`), given to ``Matcher(grammar,
...)`` for a byte-level matcher and to ``compile(grammar, vocab, ...)`` for token-level ones (a
token-level ``Matcher`` refuses them with a TypeError saying so):

* ``max_state_size`` (100,000): items plus stack entries created or visited while advancing over
  one byte. A grammar too ambiguous for the input raises :class:`GrammarTooComplexError` with
  ``limit == "max_state_size"``; the matcher is left as it was before the call.
* ``max_rollback`` (256): accept calls that :meth:`Matcher.rollback` can undo.
* ``max_history_bytes`` (16 MiB): memory of that rollback history (parser items of the kept
  states). Past it the oldest states are dropped, so a pathological grammar shortens the
  rollback depth (``rollback_available``) instead of holding ``max_rollback`` huge states.
* ``limits.MAX_AUTOMATON_SIZE`` (16 Mi states and edges): size of the compiled byte automaton (e.g.
  ``x{0,1000000}`` of a one-byte ``x`` needs about 3 Mi); ``limit == "max_automaton_size"``.
* ``max_whitespace`` (default ``grammar.max_whitespace``: None for GBNF, 64 or more for JSON
  Schema grammars): the longest run of whitespace bytes (space, tab, LF, CR) the output may
  hold. Not an error: a byte or token that would make a longer run is refused like any other
  (``accept_*`` returns False, masks leave it out), so a model cannot loop on whitespace. Exact:
  the language loses only the texts with a longer run (if the grammar itself requires one, the
  matcher reaches a dead end there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _core
from .compiled import CompiledGrammar
from .explain import Explanation, explain
from .grammar import Grammar
from .limits import (
    DEFAULT_MAX_HISTORY_BYTES,
    DEFAULT_MAX_ROLLBACK,
    DEFAULT_MAX_STATE_SIZE,
    MAX_RULE_STACKS,
)
from .validation import (
    GRAMMAR_DEFAULT,
    GrammarDefault,
    as_id,
    check_token_id,
    check_uint32,
    whitespace_bound,
)

# An int32 bitmask: a numpy array, a CPU torch tensor, or any array with __dlpack__ or the buffer
# protocol (see as_bitmask_array).
BitmaskLike = Any


class Matcher:
    """Tracks which bytes (and, built from a :class:`CompiledGrammar`, which tokens) may come next.

    ``Matcher(grammar)`` is byte level; ``Matcher(compiled)`` (from :func:`gbnf_sampler.compile`)
    is token level and adds :meth:`accept_token`, :meth:`fill_mask` and :meth:`allowed_tokens`
    (its limits are the ones given to ``compile``). Accepts are atomic: when one returns False
    the matcher is exactly as before. Not thread-safe: use one matcher per thread (``fork()`` is
    cheap); the compiled grammar is shared safely.

    Token semantics: an EOS id is accepted exactly when :meth:`can_terminate`, and then nothing
    more is; empty tokens are never accepted; special (control) tokens only through a grammar
    token reference naming them (``<[id]>``, ``<text>``) or a negated one (``!<x>`` matches any
    non-EOS, non-empty token but ``x``, special ones included, as in llama.cpp). Token bytes are
    matched exactly, including bytes llama.cpp refuses by quirk (0xF5-0xFF, a leading NUL).
    """

    __slots__ = ("_compiled", "_core", "_grammar")

    def __init__(
        self,
        grammar: Grammar | CompiledGrammar,
        *,
        max_state_size: int | None = None,
        max_rollback: int | None = None,
        max_history_bytes: int | None = None,
        max_whitespace: int | GrammarDefault | None = GRAMMAR_DEFAULT,
    ) -> None:
        limits = {
            "max_state_size": max_state_size,
            "max_rollback": max_rollback,
            "max_history_bytes": max_history_bytes,
        }
        self._compiled: CompiledGrammar | None = None
        if isinstance(grammar, CompiledGrammar):
            given = [name for name, value in limits.items() if value is not None]
            if not isinstance(max_whitespace, GrammarDefault):
                given.append("max_whitespace")
            if given:
                raise TypeError(
                    f"{given[0]} of a token-level Matcher belongs to gs.compile(grammar, vocab, "
                    f"{given[0]}=...): the compiled grammar's masks are computed under it"
                )
            self._compiled = grammar
            self._grammar = grammar.grammar
            self._core: Any = _core.TokenMatcher(grammar._native)
            return
        if not isinstance(grammar, Grammar):
            raise TypeError(
                "Matcher expects a gbnf_sampler.Grammar or CompiledGrammar, "
                f"got {type(grammar).__name__}"
            )
        state_size = DEFAULT_MAX_STATE_SIZE if max_state_size is None else max_state_size
        rollback = DEFAULT_MAX_ROLLBACK if max_rollback is None else max_rollback
        history = DEFAULT_MAX_HISTORY_BYTES if max_history_bytes is None else max_history_bytes
        check_uint32("max_state_size", state_size, 1)
        check_uint32("max_rollback", rollback, 0)
        check_uint32("max_history_bytes", history, 0, 2**63)
        self._grammar = grammar
        ws = whitespace_bound(max_whitespace, grammar.max_whitespace)
        self._core = _core.Matcher(grammar.automaton(), state_size, rollback, history, ws)

    @property
    def grammar(self) -> Grammar:
        return self._grammar

    @property
    def compiled(self) -> CompiledGrammar | None:
        """The compiled grammar of a token-level matcher (None at byte level)."""
        return self._compiled

    def _token_level(self, what: str) -> Any:
        if self._compiled is None:
            raise TypeError(
                f"{what} needs a token-level matcher: Matcher(gs.compile(grammar, vocab))"
            )
        return self._core

    def accept_token(self, token_id: int) -> bool:
        """Advances over one token; False (state unchanged) if the grammar does not allow it.
        Raises ValueError for an id outside the vocabulary."""
        core = self._token_level("accept_token")
        size = self._compiled.vocab_size if self._compiled is not None else 0
        return bool(core.accept_token(check_token_id(token_id, size)))

    def fill_mask(self, bitmask: BitmaskLike, index: int = 0) -> None:
        """Writes the allowed tokens into row ``index`` of an int32 bitmask (xgrammar layout:
        ``[batch, ceil(vocab/32)]`` or 1-D; bit i of word j allows token 32*j+i). Words past
        the vocabulary (padded logits) are zeroed. ``bitmask`` is a numpy array, a CPU torch
        tensor or any array with ``__dlpack__`` or the buffer protocol, written in place."""
        core = self._token_level("fill_mask")
        array = as_bitmask_array(bitmask, "fill_mask")
        _check_bitmask(array, index, int(core.mask_words))
        core.fill_mask(array, int(index))

    def _fill_mask_reference(self, bitmask: BitmaskLike, index: int = 0) -> None:
        """The same mask by a walk over the whole token trie (slow; the tests' reference)."""
        core = self._token_level("fill_mask")
        array = as_bitmask_array(bitmask)
        _check_bitmask(array, index, int(core.mask_words))
        core.fill_mask_reference(array, int(index))

    def allowed_tokens(self) -> np.ndarray:
        """The allowed token ids, ascending (int32)."""
        return np.asarray(self._token_level("allowed_tokens").allowed_tokens(), dtype=np.int32)

    def accept_bytes(self, data: bytes | bytearray | memoryview) -> bool:
        """Advances over ``data``; False (state unchanged) if the grammar does not allow it."""
        if not isinstance(data, bytes):
            if isinstance(data, (bytearray, memoryview)):
                data = bytes(data)
            else:
                hint = " (encode text with .encode('utf-8'))" if isinstance(data, str) else ""
                raise TypeError(f"accept_bytes expects bytes, got {type(data).__name__}{hint}")
        return bool(self._core.accept_bytes(data))

    def accept_eos(self) -> bool:
        """Ends the sequence; refused (False) unless :meth:`can_terminate`."""
        if self._compiled is not None:
            eos = self._compiled.vocab.eos_ids
            return bool(eos) and bool(self._core.accept_token(eos[0]))
        return bool(self._core.accept_eos())

    def can_terminate(self) -> bool:
        """The bytes so far form a complete sentence of the root rule (and EOS is not yet
        accepted)."""
        return bool(self._core.can_terminate())

    def is_terminated(self) -> bool:
        return bool(self._core.is_terminated())

    @property
    def rollback_available(self) -> int:
        """How many accept calls :meth:`rollback` can undo now."""
        return int(self._core.rollback_available)

    def rollback(self, n: int) -> None:
        """Undoes the last ``n`` accept calls (``accept_token``, ``accept_bytes``,
        ``accept_eos``). ``n`` may not exceed :attr:`rollback_available`: the history keeps at
        most ``max_rollback`` calls within ``max_history_bytes`` of memory."""
        check_uint32("n", n, 0)
        available = self.rollback_available
        if n > available:
            raise ValueError(
                f"rollback({n}) exceeds the history kept ({available} accept calls; it is "
                "bounded by max_rollback and max_history_bytes)"
            )
        self._core.rollback(n)

    def fork(self) -> Matcher:
        """An independent copy (the compiled automaton is shared). A fork is taken for a probe:
        its accepts do not prefetch mask-cache entries (see :func:`gbnf_sampler.compile`)."""
        clone = Matcher.__new__(Matcher)
        clone._grammar = self._grammar
        clone._compiled = self._compiled
        clone._core = self._core.fork()
        return clone

    def reset(self) -> None:
        """Back to the start of a sentence; the rollback history is cleared."""
        self._core.reset()

    def forced_bytes(self) -> bytes:
        """The longest byte string every continuation must start with (``b""`` when there is a
        choice or the sentence may end here). Does not change the state."""
        return bytes(self._core.forced_bytes())

    def plan_draft(self, token_ids: Sequence[int]) -> list[bool]:
        """Checks a jump-forward draft (e.g. the tokens of :meth:`forced_bytes`) from the
        current state, which is left unchanged: one entry per token of the longest prefix the
        grammar accepts in turn, True where that token is the only one the grammar allows at its
        position (a model's logits there are not needed to pick it)."""
        core = self._token_level("plan_draft")
        size = self._compiled.vocab_size if self._compiled is not None else 0
        ids = [check_token_id(t, size, f"token_ids[{i}]") for i, t in enumerate(token_ids)]
        return [bool(b) for b in core.plan_draft(ids)]

    def explain(self, data: bytes | bytearray | memoryview | Sequence[int]) -> Explanation:
        """Why ``data`` (bytes, or token ids for a token-level matcher) is refused from the
        current state: where it leaves the grammar, what would have been accepted there, and
        for a grammar made from a JSON Schema the pointer of the value (see
        :class:`~gbnf_sampler.explain.Explanation`). The matcher itself is not changed."""
        if isinstance(data, str):
            raise TypeError(
                "explain expects bytes (encode text with .encode('utf-8')) or token ids"
            )
        token_bytes = None
        if not isinstance(data, (bytes, bytearray, memoryview)):
            if self._compiled is None:
                raise TypeError("token ids need a token-level matcher: Matcher(gs.compile(...))")
            vocab = self._compiled.vocab
            data = [check_token_id(t, vocab.size) for t in data]
            token_bytes = vocab.token_bytes
        return explain(
            self,
            data,
            token_level=self._compiled is not None,
            json_grammar=self._grammar.origin == "json_schema",
            token_bytes=token_bytes,
        )

    def rule_stacks(self, limit: int = MAX_RULE_STACKS) -> list[list[str]]:
        """The rule stacks active now, root first: one per live parse position that can take a
        byte or token next (a rule called in tail position has left the stack and is not shown;
        a stack node with several callers shows the first). Distinct stacks, at most
        ``limit``."""
        check_uint32("limit", limit, 1)
        return [list(stack) for stack in self._core.rule_stacks(limit)]

    @property
    def state_size(self) -> int:
        """Live parser items: a deterministic measure of the state's size."""
        return int(self._core.state_size)

    def __repr__(self) -> str:
        status = (
            "terminated"
            if self.is_terminated()
            else ("complete" if self.can_terminate() else "incomplete")
        )
        return f"<Matcher {status} state_size={self.state_size}>"


def as_bitmask_array(bitmask: BitmaskLike, what: str = "bitmask") -> np.ndarray:
    """A numpy view of ``bitmask`` sharing its memory (no copy): numpy arrays as they are, CPU
    torch tensors and other ``__dlpack__`` arrays through DLPack, buffer-protocol objects
    through ``numpy.asarray``. A tensor on a GPU is a ValueError naming its device; anything
    else a TypeError."""
    if type(bitmask) is np.ndarray:
        return bitmask
    kind = type(bitmask)
    if (
        kind.__name__ == "Tensor"
        and kind.__module__ == "torch"
        and bitmask.device.type == "cpu"
        and not bitmask.dtype.is_floating_point  # bfloat16: the DLPack path and its error
    ):
        return np.asarray(bitmask.numpy())  # the zero-copy view of DLPack, microseconds cheaper
    return np.asarray(_core.bitmask_array(bitmask, what))


def _check_bitmask(bitmask: np.ndarray, index: int, words: int) -> None:
    if bitmask.dtype != np.int32:
        raise TypeError(f"bitmask must have dtype int32, got {bitmask.dtype}")
    if bitmask.ndim not in (1, 2):
        raise ValueError(f"bitmask must be 1-D or 2-D, got shape {bitmask.shape}")
    if bitmask.shape[-1] < words:
        raise ValueError(
            f"bitmask rows need at least {words} int32 words (ceil(vocab/32)), "
            f"got shape {bitmask.shape}"
        )
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"index must be an int, got {type(index).__name__}")
    rows = 1 if bitmask.ndim == 1 else bitmask.shape[0]
    if not 0 <= index < rows:
        raise ValueError(f"index {index} is outside the bitmask's {rows} rows")


def _token_cores(matchers: Sequence[Matcher], what: str) -> list[Any]:
    # One comprehension on the hot path (engines call this every step for the whole batch).
    cores = [m._core for m in matchers if type(m) is Matcher and m._compiled is not None]
    if len(cores) != len(matchers):
        for i, m in enumerate(matchers):
            if not isinstance(m, Matcher) or m._compiled is None:
                raise TypeError(f"{what}: matchers[{i}] is not a token-level Matcher")
        cores = [m._core for m in matchers]  # subclasses of Matcher
    return cores


def _mask_words(matchers: Sequence[Matcher]) -> int:
    """Words per bitmask row that the widest vocabulary among the matchers needs."""
    compiled = {m._compiled for m in matchers if m._compiled is not None}
    return max((c.vocab_size + 31) // 32 for c in compiled)


def _rows(rows: Sequence[int]) -> list[int]:
    if type(rows) is list and all(type(r) is int for r in rows):
        return rows
    return [as_id(r, "rows") for r in rows]


def fill_masks(
    matchers: Sequence[Matcher], bitmask: BitmaskLike, rows: Sequence[int] | None = None
) -> None:
    """``matchers[i].fill_mask(bitmask, i)`` for every i (``rows[i]`` instead of ``i`` when
    ``rows`` is given: the rows of an engine's batch, each at most once), on a thread pool with
    the GIL released. ``bitmask`` is 2-D int32 (numpy, a CPU torch tensor, any array with
    ``__dlpack__`` or the buffer protocol), written in place; rows not named keep their words."""
    cores = _token_cores(matchers, "fill_masks")
    if not cores:
        return
    array = as_bitmask_array(bitmask, "fill_masks")
    if array.ndim != 2:
        raise ValueError(f"fill_masks needs a 2-D bitmask, got shape {array.shape}")
    if rows is None and array.shape[0] < len(cores):
        raise ValueError(f"fill_masks: bitmask has {array.shape[0]} rows for {len(cores)} matchers")
    _check_bitmask(array, 0, _mask_words(matchers))
    if rows is None:
        _core.fill_masks(cores, array)
    else:
        _core.fill_masks(cores, array, _rows(rows))


def accept_tokens(matchers: list[Matcher], token_ids: list[int] | np.ndarray) -> list[bool]:
    """``[m.accept_token(t) for m, t in zip(matchers, token_ids)]`` on a thread pool with the GIL
    released."""
    checked = list(matchers)
    cores = _token_cores(checked, "accept_tokens")
    tokens = list(token_ids)
    if len(tokens) != len(cores):
        raise ValueError(f"accept_tokens: {len(cores)} matchers but {len(tokens)} token ids")
    sizes = [m.compiled.vocab_size if m.compiled is not None else 0 for m in checked]
    ids = [
        check_token_id(t, size, f"token_ids[{i}]")
        for i, (t, size) in enumerate(zip(tokens, sizes, strict=True))
    ]
    return [bool(a) for a in _core.accept_tokens(cores, ids)]


__all__ = ["BitmaskLike", "Matcher", "accept_tokens", "as_bitmask_array", "fill_masks"]
