"""``Matcher.explain``: why a text is refused.

:func:`explain` feeds the text to a fork of the matcher (the matcher itself is unchanged) and
reports where it leaves the grammar (byte offset, line, column, the byte), which bytes (or, for
a token-level matcher, which tokens) would have been accepted there, whether the text could have
ended there, the rule path active there (root first), and, for a grammar made from a JSON
Schema, the JSON pointer of the value being written (found by reading the accepted JSON prefix).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class _Matcher(Protocol):
    """What explain needs of a :class:`~gbnf_sampler.Matcher` (no import: same floor)."""

    def fork(self) -> Any: ...
    def accept_bytes(self, data: bytes) -> bool: ...
    def accept_token(self, token_id: int) -> bool: ...
    def can_terminate(self) -> bool: ...
    def allowed_tokens(self) -> Any: ...
    def rule_stacks(self) -> list[list[str]]: ...


@dataclass(frozen=True)
class Explanation:
    """Where and why a text leaves the grammar.

    ``accepted``: every byte (token) was accepted; ``complete``: and the text may end there.
    Otherwise ``offset`` is the byte offset (in the given text) of the refused byte (``byte``)
    or, when all bytes fit but the text cannot end, ``len(data)`` with ``byte`` None; ``line``
    and ``column`` (1-based, the column counts code points) locate it. ``token_index``: the
    refused token of a token-id input. ``rule_paths``: the rule stacks active there, root first
    (one per live parse; ``rule_path`` is the first). ``expected``: the byte ranges that would
    have been accepted there; ``expected_tokens``: for a token-level matcher, the allowed token
    ids; ``can_end``: end-of-sequence would have been accepted there. ``json_pointer``: for a
    JSON grammar, the pointer of the value the offset is in.
    """

    accepted: bool
    complete: bool
    offset: int
    line: int
    column: int
    byte: int | None
    token_index: int | None
    rule_paths: tuple[tuple[str, ...], ...]
    expected: tuple[tuple[int, int], ...]
    expected_tokens: tuple[int, ...] | None
    can_end: bool
    json_pointer: str | None

    @property
    def rule_path(self) -> tuple[str, ...]:
        return self.rule_paths[0] if self.rule_paths else ()

    def expected_text(self) -> str:
        """The expected bytes, readably: characters for ASCII, ranges of UTF-8 lead bytes."""
        return describe_bytes(self.expected)

    def to_dict(self) -> dict[str, Any]:
        return {
            "accepted": self.accepted,
            "complete": self.complete,
            "offset": self.offset,
            "line": self.line,
            "column": self.column,
            "byte": self.byte,
            "token_index": self.token_index,
            "rule_path": list(self.rule_path),
            "rule_paths": [list(p) for p in self.rule_paths],
            "expected": [[lo, hi] for lo, hi in self.expected],
            "expected_text": self.expected_text(),
            "expected_tokens": None if self.expected_tokens is None else list(self.expected_tokens),
            "can_end": self.can_end,
            "json_pointer": self.json_pointer,
        }

    def __str__(self) -> str:
        if self.accepted and self.complete:
            return "the grammar accepts the whole text"
        where = f"byte {self.offset} (line {self.line}, column {self.column})"
        if self.byte is None and self.token_index is None:
            head = f"the text ends at {where} before the grammar is complete"
        elif self.byte is None:
            head = f"token {self.token_index} at {where} is not allowed there"
        else:
            head = f"the text leaves the grammar at {where}: {_byte_text(self.byte)} is not allowed"
        lines = [head]
        for path in self.rule_paths[:3]:
            lines.append("  in rule: " + " > ".join(path))
        if len(self.rule_paths) > 3:
            lines.append(f"  (and {len(self.rule_paths) - 3} more rule stacks)")
        expected = self.expected_text() or "nothing"
        lines.append(
            f"  expected: {expected}" + (" or the end of the text" if self.can_end else "")
        )
        if self.expected_tokens is not None:
            shown = ", ".join(map(str, self.expected_tokens[:12]))
            more = (
                f" (+{len(self.expected_tokens) - 12} more)"
                if len(self.expected_tokens) > 12
                else ""
            )
            lines.append(f"  allowed tokens: {shown}{more}" if shown else "  allowed tokens: none")
        if self.json_pointer is not None:
            lines.append(f"  JSON value: {self.json_pointer or '/'} (JSON pointer)")
        return "\n".join(lines)


def _byte_text(b: int) -> str:
    if 0x20 <= b < 0x7F:
        return f"0x{b:02X} {chr(b)!r}"
    return f"0x{b:02X}"


def _ranges(values: list[int]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for v in values:
        if out and v == out[-1][1] + 1:
            out[-1] = (out[-1][0], v)
        else:
            out.append((v, v))
    return tuple(out)


_LEADS = (
    (0xC2, 0xDF, "U+0080-U+07FF"),
    (0xE0, 0xEF, "U+0800-U+FFFF"),
    (0xF0, 0xF4, "U+10000-U+10FFFF"),
)


def describe_bytes(ranges: Sequence[tuple[int, int]]) -> str:
    """``'"'``, ``'0'-'9'``; non-ASCII bytes as hex with what they start in UTF-8."""
    parts = []
    for lo, hi in ranges:
        if hi < 0x80:
            text = repr(chr(lo)) if lo == hi else f"{chr(lo)!r}-{chr(hi)!r}"
            parts.append(text)
            continue
        text = f"0x{lo:02X}" if lo == hi else f"0x{lo:02X}-0x{hi:02X}"
        starts = [name for a, b, name in _LEADS if lo <= b and a <= hi]
        if lo >= 0xC2 and starts:
            text += f" (starts characters {', '.join(starts)})"
        elif hi <= 0xBF:
            text += " (continues a UTF-8 character)"
        parts.append(text)
    return ", ".join(parts)


def _position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (code points) of ``offset``; lines end at \\n, \\r\\n or \\r."""
    head = data[:offset]
    line = 1 + head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n")
    start = max(head.rfind(b"\n"), head.rfind(b"\r")) + 1
    column = 1 + sum(1 for b in head[start:] if b & 0xC0 != 0x80)
    return line, column


def _longest_prefix(matcher: _Matcher, data: bytes) -> tuple[Any, int]:
    """(a fork that accepted the longest acceptable prefix of ``data``, its length)."""
    fork = matcher.fork()
    done = 0
    chunk = 64
    while done < len(data):
        piece = data[done : done + chunk]
        if fork.accept_bytes(piece):
            done += len(piece)
            continue
        if chunk == 1:
            break
        chunk = 1
    return fork, done


def _expected(state: Any) -> tuple[tuple[int, int], ...]:
    return _ranges([b for b in range(256) if state.fork().accept_bytes(bytes([b]))])


def explain(
    matcher: _Matcher,
    data: bytes | Sequence[int],
    *,
    token_level: bool,
    json_grammar: bool,
    token_bytes: Any = None,
) -> Explanation:
    """The explanation of ``data`` (bytes, or token ids for a token-level matcher; then
    ``token_bytes(id)`` gives each token's bytes)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        text = bytes(data)
        state, offset = _longest_prefix(matcher, text)
        refused = offset < len(text)
        token_index = None
    else:
        state, offset, token_index, text = _tokens(matcher, list(data), token_bytes)
        refused = token_index is not None
    accepted = not refused
    line, column = _position(text, offset)
    pointer = json_pointer(text[:offset]) if json_grammar else None
    return Explanation(
        accepted=accepted,
        complete=accepted and state.can_terminate(),
        offset=offset,
        line=line,
        column=column,
        byte=text[offset] if offset < len(text) and (token_index is None or refused) else None,
        token_index=token_index,
        rule_paths=tuple(tuple(p) for p in state.rule_stacks()),
        expected=_expected(state),
        expected_tokens=tuple(int(t) for t in state.allowed_tokens()) if token_level else None,
        can_end=state.can_terminate(),
        json_pointer=pointer,
    )


def _tokens(
    matcher: _Matcher, ids: list[int], token_bytes: Any
) -> tuple[Any, int, int | None, bytes]:
    """(state before the refused token or after all, byte offset, refused index, all bytes)."""
    fork = matcher.fork()
    pieces = [bytes(token_bytes(t)) for t in ids]
    text = b"".join(pieces)
    offset = 0
    for i, tid in enumerate(ids):
        trial = fork.fork()
        if not trial.accept_token(tid):
            # Locate the byte inside the token that the grammar refuses (if any).
            inner, fitted = _longest_prefix(fork, pieces[i])
            if fitted < len(pieces[i]):
                return inner, offset + fitted, i, text
            return fork, offset, i, text
        fork = trial
        offset += len(pieces[i])
    return fork, offset, None, text


# --- JSON pointer of the value being written ------------------------------------------------


class _JsonPrefix:
    """A reader for a prefix of a JSON document that tracks the path of the current value."""

    def __init__(self) -> None:
        # Frames: ["obj", state, key] (state: key | colon | value | after) or
        # ["arr", state, index] (state: value | after).
        self.frames: list[list[Any]] = []
        self.in_string = False
        self.escape = False
        self.key_chars: list[str] | None = None

    def feed(self, text: str) -> None:
        for ch in text:
            if self.in_string:
                self._string_char(ch)
            elif ch == '"':
                self._begin_value()
                self.in_string = True
                top = self.frames[-1] if self.frames else None
                if top is not None and top[0] == "obj" and top[1] == "key":
                    self.key_chars = []
            elif ch in "{[":
                self._begin_value()
                self.frames.append(["obj", "key", None] if ch == "{" else ["arr", "value", 0])
            elif ch in "}]":
                if self.frames:
                    self.frames.pop()
                self._end_value()
            elif ch == ":" and self.frames and self.frames[-1][0] == "obj":
                self.frames[-1][1] = "value"
            elif ch == ",":
                self._comma()
            elif ch not in " \t\r\n":
                self._begin_value()

    def _string_char(self, ch: str) -> None:
        if self.escape:
            self.escape = False
        elif ch == "\\":
            self.escape = True
        elif ch == '"':
            self.in_string = False
            if self.key_chars is not None:
                raw = '"' + "".join(self.key_chars) + '"'
                try:
                    self.frames[-1][2] = json.loads(raw)
                except ValueError:
                    self.frames[-1][2] = "".join(self.key_chars)
                self.frames[-1][1] = "colon"
                self.key_chars = None
                return
            self._end_value()
            return
        if self.key_chars is not None:
            self.key_chars.append(ch)

    def _begin_value(self) -> None:
        top = self.frames[-1] if self.frames else None
        if top is not None and top[0] == "arr" and top[1] == "after":
            top[1] = "value"

    def _end_value(self) -> None:
        if self.frames and self.frames[-1][1] == "value":
            self.frames[-1][1] = "after"

    def _comma(self) -> None:
        if not self.frames:
            return
        top = self.frames[-1]
        if top[0] == "obj":
            top[1], top[2] = "key", None
        else:
            top[1], top[2] = "value", top[2] + 1

    def pointer(self) -> str:
        parts = []
        for kind, state, where in self.frames:
            if kind == "obj" and state in ("value", "after") and where is not None:
                parts.append(str(where).replace("~", "~0").replace("/", "~1"))
            elif kind == "arr" and state in ("value", "after"):
                parts.append(str(where))
            else:
                break
        return "".join("/" + p for p in parts)


def json_pointer(prefix: bytes) -> str:
    """JSON pointer of the value the end of ``prefix`` (a JSON document's beginning) is in:
    the object itself while a key is being written, ``""`` for the top-level value."""
    reader = _JsonPrefix()
    reader.feed(prefix.decode("utf-8", "replace"))
    return reader.pointer()


__all__ = ["Explanation", "describe_bytes", "explain", "json_pointer"]
