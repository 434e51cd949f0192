"""Guesses of how the text goes on, from the text so far (prompt lookup, on bytes).

Structured output often repeats what the context already holds: a few-shot prompt's example
object, keys and values copied from the input, the whitespace and punctuation of earlier items.
Where the grammar leaves a choice (optional whitespace, a value), the bytes that followed the
last earlier occurrence of the text's longest recent suffix are a cheap guess of what comes
next. Jump-forward appends that guess to the forced text of its draft: the model checks every
such token like any other draft token, so a wrong guess costs time, never a different output.
"""

from __future__ import annotations

# The shortest suffix worth matching: shorter ones (a quote, a comma) recur everywhere and
# predict little.
MIN_MATCH_BYTES = 4
# Longer matches are not searched for: past this the guess rarely changes, the search would.
MAX_MATCH_BYTES = 64
# Only the most recent bytes are searched, so that a step costs the same on a long context.
WINDOW_BYTES = 1 << 16


class ContextLookup:
    """The bytes of the context (prompt, then output as it is written), and guesses of their
    continuation."""

    def __init__(self, data: bytes = b"") -> None:
        self._data = bytearray(data[-WINDOW_BYTES:])

    def __len__(self) -> int:
        return len(self._data)

    def extend(self, data: bytes) -> None:
        self._data += data
        excess = len(self._data) - WINDOW_BYTES
        if excess > WINDOW_BYTES // 4:  # trimmed in chunks: not a copy per token
            del self._data[:excess]

    def continuation(self, tail: bytes, size: int) -> bytes:
        """Up to ``size`` bytes guessed to follow the context and then ``tail`` (text known to
        come next, such as the grammar's forced bytes): what followed the most recent earlier
        occurrence of the longest suffix of context + tail, of at least ``MIN_MATCH_BYTES``
        bytes. Empty when no such suffix occurs earlier."""
        text = bytes(self._data[-WINDOW_BYTES:]) + tail
        if size <= 0 or len(text) <= MIN_MATCH_BYTES:
            return b""
        # A suffix of length n occurring earlier implies one of length n - 1 (the same place,
        # one byte shorter): the longest match is found by bisection.
        best, low, high = -1, MIN_MATCH_BYTES, min(MAX_MATCH_BYTES, len(text) - 1)
        while low <= high:
            n = (low + high) // 2
            at = text.rfind(text[-n:], 0, len(text) - 1)
            if at < 0:
                high = n - 1
            else:
                best, low = at + n, n + 1
        if best < 0:
            return b""
        return text[best : best + size]


__all__ = ["MAX_MATCH_BYTES", "MIN_MATCH_BYTES", "WINDOW_BYTES", "ContextLookup"]
