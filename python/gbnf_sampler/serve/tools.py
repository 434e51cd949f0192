"""Tool calls for the server, in one place: the grammar a tool request is constrained by, the
prompt that tells the model about its tools, and parsing the output (whole or streamed) back
into OpenAI ``tool_calls``.

The format is the bare-JSON one of :func:`gbnf_sampler.schema.api.tools_to_gbnf`: a call is
``{"name": ..., "arguments": {...}}``, several calls are a JSON list of them, and a plain-text
answer (``tool_choice="auto"``) does not start with ``{`` or ``[``. Per-model formats (issue
#15's registry) replace the three entry points here: :func:`tool_constraint`,
:func:`parse_tool_output` and :class:`ToolStreamParser`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import SchemaError
from ..grammar import Grammar
from ..schema.api import schema_to_gbnf

_TOOLS_BASE = "https://gbnf-sampler.invalid/serve-tools/"
_TEXT_RULE = "text ::= [^{\\[ \\t\\n] [\\x00-\\U0010FFFF]*\n"


def _function(tool: Any, i: int) -> Mapping[str, Any]:
    if not isinstance(tool, Mapping):
        raise SchemaError("a tool must be an object", f"/{i}")
    fn = tool.get("function", tool)
    if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
        raise SchemaError("a tool needs a function name", f"/{i}/function/name")
    return fn


def _call_schema(tools: list[Any], only: str | None) -> dict[str, Any]:
    """One call of any tool (or of the tool named ``only``)."""
    calls = []
    for i, tool in enumerate(tools):
        fn = _function(tool, i)
        if only is not None and fn["name"] != only:
            continue
        params = fn.get("parameters") or {"type": "object"}
        if isinstance(params, Mapping):
            params = {**params, "$id": f"{_TOOLS_BASE}{i}.json"}  # its own $ref base
        calls.append(
            {
                "type": "object",
                "properties": {"name": {"const": fn["name"]}, "arguments": params},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    if not calls:
        raise SchemaError(f"no tool named {only!r}" if only else "no tools given", "")
    return {"anyOf": calls} if len(calls) > 1 else calls[0]


def _named(tool_choice: Any) -> str | None:
    if not isinstance(tool_choice, Mapping):
        return None
    fn = tool_choice.get("function")
    name = fn.get("name") if isinstance(fn, Mapping) else tool_choice.get("name")
    if not isinstance(name, str):
        raise SchemaError('tool_choice must be {"type": "function", "function": {"name": ...}}')
    return name


def tool_constraint(
    tools: list[Any],
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    chat_template: str | None = None,
) -> Grammar | None:
    """The grammar of the model's answer to a request with ``tools``; None when unconstrained.

    ``tool_choice``: ``"auto"`` (calls or a plain-text answer), ``"required"`` (calls only),
    ``"none"`` (text only: no constraint), or a named function (exactly one call of it).
    ``parallel_tool_calls=False`` allows one call, never a list. ``chat_template`` picks the
    model's own tool-call format once per-model formats exist; the bare-JSON one is used now.
    """
    del chat_template  # one format for every model until per-model formats land (#15)
    if not isinstance(tools, list):
        raise SchemaError("tools must be a list", "")
    if tool_choice is None:
        tool_choice = "auto"
    if tool_choice == "none":
        return None
    only = _named(tool_choice)
    if only is None and tool_choice not in ("auto", "required"):
        raise SchemaError(f"unknown tool_choice {tool_choice!r}", "")
    call = _call_schema(tools, only)
    if only is None and parallel_tool_calls:
        call = {"anyOf": [call, {"type": "array", "items": call, "minItems": 1}]}
    gbnf = schema_to_gbnf(call, additional_properties=False)
    if tool_choice != "auto":
        return Grammar.from_gbnf(gbnf)
    body = gbnf.replace("root ::= ", "tool-calls ::= ", 1)
    return Grammar.from_gbnf("root ::= tool-calls | text\n" + _TEXT_RULE + body)


def tool_system_prompt(tools: list[Any], tool_choice: Any = "auto") -> str:
    """What the model is told about its tools (prepended as a system message)."""
    lines = ["You can call these tools (JSON Schema of each tool's arguments):"]
    for i, tool in enumerate(tools):
        fn = _function(tool, i)
        desc = fn.get("description") or ""
        params = json.dumps(fn.get("parameters") or {"type": "object"}, ensure_ascii=False)
        lines.append(f"- {fn['name']}: {desc} Arguments: {params}")
    lines.append(
        'To call a tool, answer with only a JSON object {"name": <tool name>, "arguments": '
        "<arguments object>}, or a JSON list of such objects to call several."
    )
    if tool_choice == "auto":
        lines.append("To answer without a tool, answer in plain text.")
    return "\n".join(lines)


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _openai_call(call: Any) -> dict[str, Any]:
    if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
        raise ValueError("a tool call must be an object with a name")
    arguments = json.dumps(call.get("arguments", {}), ensure_ascii=False)
    return {
        "id": _call_id(),
        "type": "function",
        "function": {"name": call["name"], "arguments": arguments},
    }


def parse_tool_output(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """``(content, tool_calls)`` of a completed answer: OpenAI ``tool_calls`` (arguments as JSON
    text) when the answer is a call or a list of calls, else the text as content."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return text, []
    try:
        value = json.loads(stripped)
        calls = value if isinstance(value, list) else [value]
        return None, [_openai_call(c) for c in calls]
    except ValueError:  # cut short (max_tokens): what was written stays visible as text
        return text, []


@dataclass
class ToolStreamParser:
    """Splits a streamed answer into content deltas and tool-call deltas, incrementally.

    :meth:`feed` takes the next piece of text and returns OpenAI ``delta`` fragments: ``{"content":
    ...}`` for a plain-text answer, or ``{"tool_calls": [{"index", "id", "type", "function":
    {"name", "arguments"}}]}`` once each call's JSON object is complete. :meth:`finish` flushes
    what is left (an incomplete call becomes content).
    """

    mode: str = "undecided"  # "undecided", "text" or "json"
    buffer: str = ""
    depth: int = 0
    in_string: bool = False
    escaped: bool = False
    call_start: int = -1
    scan_from: int = 0
    calls: int = 0
    emitted_calls: list[dict[str, Any]] = field(default_factory=list)

    def feed(self, piece: str) -> list[dict[str, Any]]:
        if self.mode == "text":
            return [{"content": piece}] if piece else []
        self.buffer += piece
        if self.mode == "undecided":
            head = self.buffer.lstrip()
            if not head:
                return []
            if head[0] not in "{[":
                self.mode = "text"
                text, self.buffer = self.buffer, ""
                return [{"content": text}]
            self.mode = "json"
        return self._scan()

    def _scan(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for i in range(self.scan_from, len(self.buffer)):
            ch = self.buffer[i]
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif ch == "\\":
                    self.escaped = True
                elif ch == '"':
                    self.in_string = False
                continue
            if ch == '"':
                self.in_string = True
            elif ch in "{[":
                if ch == "{" and self.call_start < 0:
                    self.call_start = i
                self.depth += 1
            elif ch in "}]":
                self.depth -= 1
                if ch == "}" and self.call_start >= 0 and self._closes_call():
                    out.append(self._emit(self.buffer[self.call_start : i + 1]))
                    self.call_start = -1
        self.scan_from = len(self.buffer)
        return out

    def _closes_call(self) -> bool:
        opened_with_list = self.buffer.lstrip().startswith("[")
        return self.depth == (1 if opened_with_list else 0)

    def _emit(self, text: str) -> dict[str, Any]:
        call = _openai_call(json.loads(text))
        self.emitted_calls.append(call)
        delta = {"index": self.calls, **call}
        self.calls += 1
        return {"tool_calls": [delta]}

    def finish(self) -> list[dict[str, Any]]:
        """Deltas for what :meth:`feed` held back when the answer ends."""
        if self.mode == "json" and not self.calls and self.buffer:
            text, self.buffer = self.buffer, ""
            return [{"content": text}]
        if self.mode == "undecided" and self.buffer:
            text, self.buffer = self.buffer, ""
            return [{"content": text}]
        return []


__all__ = ["ToolStreamParser", "parse_tool_output", "tool_constraint", "tool_system_prompt"]
