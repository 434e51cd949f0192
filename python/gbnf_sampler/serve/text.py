"""Token bytes to text, one sequence at a time: complete UTF-8 characters only, and ``stop``
strings found across token boundaries (text that may be the start of a stop string is held
back until it is known not to be)."""

from __future__ import annotations

from dataclasses import dataclass, field


def complete_utf8(data: bytes) -> int:
    """Length of the longest prefix of ``data`` that does not end inside a UTF-8 sequence."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return len(data)
        if byte >= 0xC0:  # a lead byte: complete only if its whole sequence is there
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) if back >= need else len(data) - back
    return len(data)


def _held_suffix(text: str, stops: list[str]) -> int:
    """Length of the longest end of ``text`` that is a proper prefix of a stop string."""
    longest = 0
    for stop in stops:
        for n in range(min(len(stop) - 1, len(text)), longest, -1):
            if text.endswith(stop[:n]):
                longest = n
                break
    return longest


@dataclass
class TextStream:
    """Turns a sequence's token bytes into text deltas, watching for ``stops``."""

    stops: list[str] = field(default_factory=list)
    raw: bytes = b""  # bytes of an incomplete UTF-8 character
    held: str = ""  # text that may be the start of a stop string
    stopped: bool = False

    def push(self, data: bytes) -> str:
        """The text that can be emitted after ``data``; sets :attr:`stopped` (and drops the
        stop string and everything after it) when a stop string appears."""
        data = self.raw + data
        cut = complete_utf8(data)
        self.raw = data[cut:]
        text = self.held + data[:cut].decode("utf-8", errors="replace")
        if not self.stops:
            self.held = ""
            return text
        hits = [i for i in (text.find(s) for s in self.stops) if i >= 0]
        if hits:
            self.stopped = True
            self.held = ""
            return text[: min(hits)]
        keep = _held_suffix(text, self.stops)
        self.held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        """What is left when the sequence ends."""
        if self.stopped:
            return ""
        text = self.held + self.raw.decode("utf-8", errors="replace")
        self.held, self.raw = "", b""
        return text


__all__ = ["TextStream", "complete_utf8"]
