"""OpenAI chat requests and responses, as pure functions a chat front end or a server shares.

    c = chat_constraint(tools=..., tool_choice=..., parallel_tool_calls=..., response_format=...,
                        reasoning=..., chat_template=template, vocab=vocab)
    c.grammar        # the Grammar to constrain generation with (None: unconstrained)
    c.budget         # a ReasoningBudget the generation loop enforces (or None)
    c.message(text)  # {"role": "assistant", "content", "tool_calls", "reasoning_content"}
    s = c.stream()   # s.feed(chunk) / s.finish() -> OpenAI delta dicts

``request_constraint(body, chat_template=..., vocab=...)`` reads the same fields from an OpenAI
request body. The tool-call format is ``tool_format`` when given, else the one
:func:`~.formats.detect` finds in the chat template; tools or reasoning without either is a
:class:`~gbnf_sampler.errors.StructuralTagError` saying so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import StructuralTagError
from ..grammar import Grammar
from ..vocab import Vocab
from . import formats
from .formats.base import Reasoning, ReasoningBudget, Tool, ToolFormat
from .formats.results import Parsed
from .formats.stream import StreamParser, new_call_id
from .tags import from_structural_tag


@dataclass
class ChatConstraint:
    """The constraint of one chat request and how to read its output back."""

    grammar: Grammar | None
    format: ToolFormat | None
    tools: list[Tool] = field(default_factory=list)
    budget: ReasoningBudget | None = None
    reasoning: Reasoning = field(default_factory=lambda: Reasoning("off"))

    def parse(self, text: str) -> Parsed:
        if self.format is None:
            return Parsed(text, [], None)
        tools = [_tool_dict(t) for t in self.tools]
        return self.format.parse(text, tools, reasoning=self.reasoning)

    def message(self, text: str) -> dict[str, Any]:
        """The OpenAI assistant message of a finished output."""
        return assistant_message(self.parse(text))

    def stream(self) -> ChatStream:
        return ChatStream(self)


def _tool_dict(tool: Tool) -> dict[str, Any]:
    return {"type": "function", "function": {"name": tool.name, "parameters": tool.parameters}}


def assistant_message(parsed: Parsed, ids: list[str] | None = None) -> dict[str, Any]:
    """``{"role": "assistant", "content", "tool_calls"?, "reasoning_content"?}``; content is
    None when there are calls and no text (as OpenAI answers)."""
    message: dict[str, Any] = {"role": "assistant", "content": parsed.content}
    if parsed.tool_calls:
        ids = list(ids or [])
        ids += [new_call_id() for _ in range(len(parsed.tool_calls) - len(ids))]
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": json.dumps(call["arguments"], ensure_ascii=False),
                },
            }
            for call_id, call in zip(ids, parsed.tool_calls, strict=False)
        ]
        if not parsed.content:
            message["content"] = None
    if parsed.reasoning_content is not None:
        message["reasoning_content"] = parsed.reasoning_content
    return message


def finish_reason(message: Mapping[str, Any], stop_reason: str) -> str:
    """``"tool_calls"`` when the message calls tools and generation stopped on its own."""
    if message.get("tool_calls") and stop_reason == "stop":
        return "tool_calls"
    return stop_reason


class ChatStream:
    """Streaming deltas of one request (plain content when there is no format)."""

    def __init__(self, constraint: ChatConstraint) -> None:
        self.constraint = constraint
        self.text = ""
        self._parser = (
            StreamParser(
                constraint.format,
                [_tool_dict(t) for t in constraint.tools],
                constraint.reasoning,
            )
            if constraint.format is not None
            else None
        )

    def feed(self, chunk: str) -> list[dict[str, Any]]:
        self.text += chunk
        if self._parser is None:
            return [{"content": chunk}] if chunk else []
        return self._parser.feed(chunk)

    def finish(self) -> list[dict[str, Any]]:
        return [] if self._parser is None else self._parser.finish()

    def message(self) -> dict[str, Any]:
        """The whole message (after :meth:`finish`), with the call ids the deltas used."""
        ids = self._parser.tool_call_ids if self._parser is not None else []
        return assistant_message(self.constraint.parse(self.text), ids)


def resolve_format(
    tool_format: str | ToolFormat | None, chat_template: str | None
) -> ToolFormat | None:
    if tool_format is not None:
        return formats.get(tool_format)
    return formats.detect(chat_template)


def chat_constraint(
    *,
    tools: Any = None,
    tool_choice: Any = None,
    parallel_tool_calls: bool | None = None,
    response_format: Mapping[str, Any] | None = None,
    reasoning: Any = False,
    tool_format: str | ToolFormat | None = None,
    chat_template: str | None = None,
    vocab: Vocab | None = None,
    property_order: str = "schema",
) -> ChatConstraint:
    """The constraint of a chat request (see the module doc). ``property_order="any"``: the
    ``response_format`` schema accepts an object's properties in any order."""
    option = Reasoning.coerce(reasoning)
    wants_tools = bool(tools) and tool_choice != "none"
    if not wants_tools and option.mode == "off":
        if not response_format:
            return ChatConstraint(None, None)
        grammar = Grammar.from_response_format(response_format, property_order=property_order)
        return ChatConstraint(grammar, None)
    fmt = resolve_format(tool_format, chat_template)
    if fmt is None:
        raise StructuralTagError(
            "the chat template's tool-call format is not one we know: pass tool_format= "
            f"(one of {', '.join(formats.names())})",
            "/tool_format",
        )
    if wants_tools and response_format is not None and response_format.get("type") != "text":
        raise StructuralTagError(
            "tools with a JSON response_format are not supported together: use "
            "tool_choice='none' for a structured answer, or no response_format",
            "/response_format",
        )
    answer = _answer_format(response_format)
    if answer is not None and answer.get("type") == "json_schema" and property_order == "any":
        answer["any_order"] = True
    constraint = fmt.constraint(
        tools or [],
        tool_choice if wants_tools else "none",
        True if parallel_tool_calls is None else bool(parallel_tool_calls),
        option,
        vocab=vocab,
        answer=answer,
    )
    return ChatConstraint(constraint.grammar, fmt, constraint.tools, constraint.budget, option)


def _answer_format(response_format: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The structural-tag format of a text answer under ``response_format``."""
    if response_format is None or response_format.get("type") in (None, "text"):
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        return {
            "type": "json_schema",
            "json_schema": response_format.get("schema", {"type": "object"}),
        }
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        if not isinstance(spec, Mapping) or "schema" not in spec:
            raise StructuralTagError(
                "json_schema.schema is required", "/response_format/json_schema"
            )
        return {"type": "json_schema", "json_schema": spec["schema"]}
    if kind == "structural_tag":
        return dict(response_format.get("format", {}))
    raise StructuralTagError(f"unknown response_format type {kind!r}", "/response_format/type")


def request_constraint(
    body: Mapping[str, Any],
    *,
    chat_template: str | None = None,
    vocab: Vocab | None = None,
    tool_format: str | ToolFormat | None = None,
) -> ChatConstraint:
    """:func:`chat_constraint` from an OpenAI chat-completions request body (``tools``,
    ``tool_choice``, ``parallel_tool_calls``, ``response_format``, and this package's
    ``reasoning``, ``tool_format`` and ``property_order``). A ``structural_tag``
    response_format without tools is compiled as is."""
    response_format = body.get("response_format")
    if (
        isinstance(response_format, Mapping)
        and response_format.get("type") == "structural_tag"
        and not body.get("tools")
    ):
        return ChatConstraint(from_structural_tag(response_format, vocab=vocab), None)
    return chat_constraint(
        tools=body.get("tools"),
        tool_choice=body.get("tool_choice"),
        parallel_tool_calls=body.get("parallel_tool_calls"),
        response_format=response_format,
        reasoning=body.get("reasoning", False),
        tool_format=tool_format or body.get("tool_format"),
        chat_template=chat_template,
        vocab=vocab,
        property_order=body.get("property_order") or "schema",
    )


__all__ = [
    "ChatConstraint",
    "ChatStream",
    "assistant_message",
    "chat_constraint",
    "finish_reason",
    "request_constraint",
    "resolve_format",
]
