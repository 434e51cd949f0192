"""Where each value of a JSON text is: JSON pointer -> (start, end) offsets, for pointing
findings about a schema at the schema file's line and column."""

from __future__ import annotations

import json
import re

_SPACE = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null")


def _string(text: str, pos: int) -> tuple[str, int]:
    """The string starting at ``pos`` (its opening quote) and the offset past it."""
    found = _STRING.match(text, pos)
    if not found:
        raise ValueError(f"not a JSON string at offset {pos}")
    return str(json.loads(found.group())), found.end()


def escape_pointer(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: dict[str, tuple[int, int]] = {}
        self.keys: dict[str, int] = {}

    def space(self, pos: int) -> int:
        found = _SPACE.match(self.text, pos)
        return found.end() if found else pos

    def value(self, pos: int, pointer: str) -> int:
        pos = self.space(pos)
        c = self.text[pos : pos + 1]
        if c == "{":
            end = self.members(pos + 1, pointer)
        elif c == "[":
            end = self.elements(pos + 1, pointer)
        elif c == '"':
            end = _string(self.text, pos)[1]
        else:
            found = _SCALAR.match(self.text, pos)
            if not found:
                raise ValueError(f"not JSON at offset {pos}")
            end = found.end()
        self.spans[pointer] = (pos, end)
        return end

    def members(self, pos: int, pointer: str) -> int:
        pos = self.space(pos)
        if self.text.startswith("}", pos):
            return pos + 1
        while True:
            key_at = self.space(pos)
            key, pos = _string(self.text, key_at)
            child = f"{pointer}/{escape_pointer(key)}"
            self.keys[child] = key_at
            pos = self.space(pos)
            pos = self.value(pos + 1, child)  # past the ':'
            pos = self.space(pos)
            if self.text.startswith("}", pos):
                return pos + 1
            pos += 1  # the ','

    def elements(self, pos: int, pointer: str) -> int:
        pos = self.space(pos)
        if self.text.startswith("]", pos):
            return pos + 1
        index = 0
        while True:
            pos = self.space(self.value(pos, f"{pointer}/{index}"))
            index += 1
            if self.text.startswith("]", pos):
                return pos + 1
            pos += 1


def json_positions(text: str) -> tuple[dict[str, tuple[int, int]], dict[str, int]]:
    """(pointer -> span of the value, pointer -> offset of the member's key) for valid JSON
    ``text`` (ValueError otherwise)."""
    json.loads(text)
    scanner = _Scanner(text)
    scanner.value(0, "")
    return scanner.spans, scanner.keys


__all__ = ["escape_pointer", "json_positions"]
