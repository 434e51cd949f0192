"""Small readers for parsing model output back: lenient literals, JSON values that may still be
incomplete, Python keyword arguments, Gemma-4 literals and XML parameters.

Each reader works on ``(text, start)`` and returns ``(value, end)``; :data:`INCOMPLETE` when the
text stops before the value does (streaming); None when the text is not that value.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from ..literals import GEMMA_QUOTE, types_of
from ..styles import XmlStyle

INCOMPLETE: Any = object()
_DECODER = json.JSONDecoder()
_PUNCT = set("{}[],:")


def lenient(text: str) -> str:
    """A regex for ``text`` that also accepts other whitespace where it has whitespace or JSON
    punctuation (``{"name": "`` matches ``{ "name":"``)."""
    out: list[str] = []
    for i, c in enumerate(text):
        if c.isspace():
            if not out or out[-1] != r"\s*":
                out.append(r"\s*")
            continue
        out.append(re.escape(c))
        if c in _PUNCT and i + 1 < len(text) and not text[i + 1].isspace():
            out.append(r"\s*")
    return "".join(out)


def prefix_overlap(text: str, marker: str) -> int:
    """The length of the longest suffix of ``text`` that is a proper prefix of ``marker`` (text
    to hold back while streaming: it may become the marker)."""
    for n in range(min(len(text), len(marker) - 1), 0, -1):
        if marker.startswith(text[-n:]):
            return n
    return 0


def skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def json_value(text: str, start: int) -> tuple[Any, int] | Any:
    """A JSON value at ``start`` (after whitespace): (value, end), INCOMPLETE, or None."""
    i = skip_ws(text, start)
    if i >= len(text):
        return INCOMPLETE
    try:
        value, end = _DECODER.raw_decode(text, i)
    except json.JSONDecodeError:
        return INCOMPLETE if _unfinished_json(text, i) else None
    if (
        end == len(text)
        and text[i] not in '{["'
        and not text[i:].startswith(("true", "false", "null"))
    ):
        return INCOMPLETE  # a number may go on
    return value, end


def _unfinished_json(text: str, i: int) -> bool:
    """Whether ``text[i:]`` could be the beginning of a JSON value (brackets and strings still
    open, nothing invalid seen by this rough check)."""
    depth = 0
    in_string = escape = False
    for c in text[i:]:
        if in_string:
            if escape:
                escape = False
            elif c == "\\":
                escape = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth < 0:
                return False
    if in_string or depth > 0:
        return True
    tail = text[i:].strip()
    return any(w.startswith(tail) for w in ("true", "false", "null")) or bool(
        re.fullmatch(r"-?[0-9.eE+\-]*", tail)
    )


def json_prefix_end(text: str, start: int) -> int:
    """Where the raw text of a JSON value that starts at ``start`` ends so far: the value's end
    when complete, else the end of the text (for streaming its raw text)."""
    result = json_value(text, start)
    if result is INCOMPLETE or result is None:
        return len(text)
    return int(result[1])


def _closing_paren(text: str, start: int) -> int | None:
    """The index of the ``)`` that closes a call whose arguments start at ``start``."""
    depth = 0
    quote = ""
    escape = False
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            if escape:
                escape = False
            elif c == "\\":
                escape = True
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i if c == ")" else None
            depth -= 1
    return None


def python_kwargs(text: str, start: int) -> tuple[dict[str, Any], int] | Any:
    """Python keyword arguments ``k=v, ...`` up to the closing ``)``: (dict, index of ``)``)."""
    close = _closing_paren(text, start)
    if close is None:
        return INCOMPLETE
    try:
        call = ast.parse(f"f({text[start:close]})", mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or call.args:
        return None
    out = {}
    for kw in call.keywords:
        if kw.arg is None:
            return None
        try:
            out[kw.arg] = _literal(kw.value)
        except ValueError:
            return None
    return out, close


def _literal(node: ast.expr) -> Any:
    """A Python literal; strings keep JSON's reading of their escapes (the grammar writes JSON
    strings, where ``\\/`` is ``/``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("\\/", "/")
    if isinstance(node, ast.List):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _literal(k): _literal(v)
            for k, v in zip(node.keys, node.values, strict=True)
            if k is not None
        }
    return ast.literal_eval(node)


_GEMMA_SCALAR = re.compile(r"true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_GEMMA_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def gemma_value(text: str, i: int) -> tuple[Any, int] | Any:
    """A Gemma-4 literal at ``i``: (value, end), INCOMPLETE, or None."""
    if i >= len(text):
        return INCOMPLETE
    if text.startswith(GEMMA_QUOTE, i):
        end = text.find(GEMMA_QUOTE, i + len(GEMMA_QUOTE))
        if end < 0:
            return INCOMPLETE
        return text[i + len(GEMMA_QUOTE) : end], end + len(GEMMA_QUOTE)
    if GEMMA_QUOTE.startswith(text[i:]):
        return INCOMPLETE
    if text[i] in "{[":
        return _gemma_container(text, i)
    m = _GEMMA_SCALAR.match(text, i)
    if m is None:
        return None
    if m.end() == len(text):
        return INCOMPLETE
    return json.loads(m.group()), m.end()


def _gemma_container(text: str, i: int) -> tuple[Any, int] | Any:
    is_object = text[i] == "{"
    close = "}" if is_object else "]"
    out: Any = {} if is_object else []
    i += 1
    while True:
        if i >= len(text):
            return INCOMPLETE
        if text[i] == close:
            return out, i + 1
        if out:
            if text[i] != ",":
                return None
            i += 1
        key = None
        if is_object:
            m = _GEMMA_KEY.match(text, i)
            if m is None or m.end() >= len(text):
                return INCOMPLETE if m is not None or i >= len(text) else None
            if text[m.end()] != ":":
                return None
            key, i = m.group(), m.end() + 1
        item = gemma_value(text, i)
        if item is INCOMPLETE or item is None:
            return item
        value, i = item
        if is_object:
            out[key] = value
        else:
            out.append(value)


def xml_arguments(
    text: str, i: int, style: XmlStyle, end: str, schema: Any
) -> tuple[dict[str, Any], int] | Any:
    """XML parameters from ``i`` up to the call's ``end`` literal: (arguments, index of end)."""
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    out: dict[str, Any] = {}
    closing = re.compile(lenient(end.strip()))
    while True:
        i = skip_ws(text, i)
        if closing.match(text, i):
            return out, i
        rest = "".join(text[i:].split())
        if not rest or "".join(style.open_prefix.split()).startswith(rest):
            return INCOMPLETE
        if "".join(end.split()).startswith(rest):
            return INCOMPLETE
        if not text.startswith(style.open_prefix, i):
            return None
        j = i + len(style.open_prefix)
        head = re.compile(
            r'([^\s>"]+)(' + lenient(style.raw_suffix) + "|" + lenient(style.json_suffix) + ")"
        )
        m = head.match(text, j)
        if m is None:
            return INCOMPLETE if ">" not in text[j:] else None
        name, marker = m.group(1), m.group(2)
        close = text.find(style.close.strip(), m.end())
        if close < 0:
            return INCOMPLETE
        raw = text[m.end() : close].strip("\n")
        out[name] = _xml_value(raw, marker, style, props.get(name))
        i = close + len(style.close.strip())


def _xml_value(raw: str, marker: str, style: XmlStyle, schema: Any) -> Any:
    """A parameter's value: raw text when the style marks it a string or its schema is a plain
    string, else JSON (raw text when that fails)."""
    if style.raw_suffix != style.json_suffix:
        if re.fullmatch(lenient(style.raw_suffix), marker):
            return raw
    elif schema is not None and types_of(schema) == ["string"]:
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


__all__ = [
    "INCOMPLETE",
    "gemma_value",
    "json_prefix_end",
    "json_value",
    "lenient",
    "prefix_overlap",
    "python_kwargs",
    "skip_ws",
    "xml_arguments",
]
