"""``Matcher``: the byte-level parser state of one generated sequence.

A matcher follows every parse of the bytes accepted so far (an Earley-style item set over a
graph-structured stack in the C++ core), so ambiguous and left-recursive grammars work and cost
polynomial time. Limits (documented defaults):

* ``max_state_size`` (100,000): items plus stack entries created or visited while advancing over
  one byte. A grammar too ambiguous for the input raises :class:`GrammarTooComplexError` with
  ``limit == "max_state_size"``; the matcher is left as it was before the call.
* ``max_rollback`` (256): accept calls that :meth:`Matcher.rollback` can undo.
* ``MAX_AUTOMATON_SIZE`` (16 Mi states and edges): size of the compiled byte automaton (e.g.
  ``x{0,1000000}`` of a one-byte ``x`` needs about 3 Mi); ``limit == "max_automaton_size"``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from . import _core
from .grammar import Grammar

DEFAULT_MAX_STATE_SIZE = 100_000
DEFAULT_MAX_ROLLBACK = 256
MAX_AUTOMATON_SIZE = 16 << 20
# The builder follows the AST recursively; the parser's default nesting limit bounds it.
MAX_NESTING_DEPTH = 1000

_CACHE_SIZE = 16
_cache: OrderedDict[int, tuple[_core.Grammar, _core.Automaton]] = OrderedDict()
_cache_lock = threading.Lock()


def _automaton(grammar: Grammar) -> _core.Automaton:
    """The compiled automaton of ``grammar``, shared by its matchers (small LRU cache)."""
    core = grammar._core
    key = id(core)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] is core:
            _cache.move_to_end(key)
            return hit[1]
    automaton = _core.Automaton.build(core, MAX_AUTOMATON_SIZE, MAX_NESTING_DEPTH)
    with _cache_lock:
        _cache[key] = (core, automaton)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return automaton


def _check_uint32(name: str, value: object, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be int, got {type(value).__name__}")
    if not minimum <= value < 2**32:
        raise ValueError(f"{name} must be in [{minimum}, 2**32), got {value}")
    return value


class Matcher:
    """Tracks which bytes may come next under ``grammar``.

    ``accept_bytes`` is atomic: when it returns False the matcher is exactly as before. Not
    thread-safe: use one matcher per thread (``fork()`` is cheap).
    """

    __slots__ = ("_core", "_grammar")

    def __init__(
        self,
        grammar: Grammar,
        *,
        max_state_size: int = DEFAULT_MAX_STATE_SIZE,
        max_rollback: int = DEFAULT_MAX_ROLLBACK,
    ) -> None:
        if not isinstance(grammar, Grammar):
            raise TypeError(f"Matcher expects a gbnf_sampler.Grammar, got {type(grammar).__name__}")
        _check_uint32("max_state_size", max_state_size, 1)
        _check_uint32("max_rollback", max_rollback, 0)
        self._grammar = grammar
        self._core = _core.Matcher(_automaton(grammar), max_state_size, max_rollback)

    @property
    def grammar(self) -> Grammar:
        return self._grammar

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
        """Undoes the last ``n`` accept calls (``accept_bytes`` and ``accept_eos``)."""
        _check_uint32("n", n, 0)
        available = self.rollback_available
        if n > available:
            raise ValueError(f"rollback(n) needs n <= {available} (the history kept), got {n}")
        self._core.rollback(n)

    def fork(self) -> Matcher:
        """An independent copy (the compiled automaton is shared)."""
        clone = Matcher.__new__(Matcher)
        clone._grammar = self._grammar
        clone._core = self._core.fork()
        return clone

    def reset(self) -> None:
        """Back to the start of a sentence; the rollback history is cleared."""
        self._core.reset()

    def forced_bytes(self) -> bytes:
        """The longest byte string every continuation must start with (``b""`` when there is a
        choice or the sentence may end here). Does not change the state."""
        return bytes(self._core.forced_bytes())

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


__all__ = ["DEFAULT_MAX_ROLLBACK", "DEFAULT_MAX_STATE_SIZE", "MAX_AUTOMATON_SIZE", "Matcher"]
