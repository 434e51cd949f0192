"""Turns fuzzer bytes into structured choices, deterministically (no atheris needed, so the
regression tests replay inputs exactly as the fuzzer saw them). Past the end every read returns
its smallest value, so any byte string is a valid input."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


class ByteReader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def int_in(self, lo: int, hi: int) -> int:
        """An int in [lo, hi] (hi - lo < 2**32)."""
        span = hi - lo + 1
        value = 0
        for _ in range((span.bit_length() + 7) // 8):
            value = (value << 8) | self.byte()
        return lo + value % span

    def flag(self) -> bool:
        return self.byte() & 1 == 1

    def choice(self, options: Sequence[T]) -> T:
        return options[self.int_in(0, len(options) - 1)]

    def raw(self, max_len: int) -> bytes:
        n = min(self.int_in(0, max_len), self.remaining())
        self.pos += n
        return self.data[self.pos - n : self.pos]

    def text(self, max_len: int) -> str:
        """A string that may hold any code point, lone surrogates included."""
        return self.raw(max_len).decode("utf-8", "surrogateescape")

    def rest(self) -> bytes:
        out = self.data[self.pos :]
        self.pos = len(self.data)
        return out
