"""Reads the key/value metadata of a GGUF file (the tokenizer arrays among them), for tests that
rebuild a Hugging Face tokenizer from a llama.cpp vocabulary. Tensors are not read.

Layout (little endian): magic ``GGUF``, u32 version (2 or 3), u64 tensor count, u64 key/value
count, then each pair: a string key (u64 length + UTF-8), a u32 value type, the value. Arrays are
a u32 element type, a u64 count and the elements.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
            11: "<q", 12: "<d"}  # fmt: skip
_STRING, _ARRAY = 8, 9


def _unpack(f: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = f.read(size)
    if len(data) != size:
        raise ValueError("truncated GGUF file")
    return struct.unpack(fmt, data)[0]


def _string(f: BinaryIO) -> str:
    n = _unpack(f, "<Q")
    return f.read(n).decode("utf-8", errors="surrogateescape")


def _value(f: BinaryIO, kind: int) -> Any:
    if kind in _SCALARS:
        return _unpack(f, _SCALARS[kind])
    if kind == _STRING:
        return _string(f)
    if kind == _ARRAY:
        inner, count = _unpack(f, "<I"), _unpack(f, "<Q")
        if inner in _SCALARS:  # one read for the whole array
            fmt = _SCALARS[inner]
            size = struct.calcsize(fmt)
            return list(struct.unpack(f"<{count}{fmt[1]}", f.read(size * count)))
        return [_value(f, inner) for _ in range(count)]
    raise ValueError(f"unknown GGUF value type {kind}")


def read_metadata(path: Path) -> dict[str, Any]:
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        version = _unpack(f, "<I")
        if version not in (2, 3):
            raise ValueError(f"{path}: GGUF version {version} is not supported")
        _unpack(f, "<Q")  # tensor count
        pairs = _unpack(f, "<Q")
        metadata: dict[str, Any] = {}
        for _ in range(pairs):
            key = _string(f)
            metadata[key] = _value(f, _unpack(f, "<I"))
        return metadata
