"""OpenAI's Harmony response format (gpt-oss): the answer is a stream of messages, each with a
channel, joined by ``<|start|>assistant`` (the chat template's generation prompt already wrote
the first ``<|start|>assistant``)::

    <|channel|>analysis<|message|>...reasoning...<|end|>
    <|start|>assistant<|channel|>final<|message|>...answer...<|return|>
    <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>
    {...}<|call|>

The grammar: an optional (``reasoning="auto"``) or required (``True``) analysis message, then
either the final message or the tool calls (``tool_choice``). The markers are special tokens of
gpt-oss's vocabulary: give the vocabulary (``grammar(..., vocab=...)``) so they are matched as
tokens; those that are end-of-generation tokens (``<|return|>``, ``<|call|>``) become the end of
the output.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from . import scan
from .base import (
    Reasoning,
    ReasoningBudget,
    Tool,
    ToolFormat,
    args_format,
)
from .results import Parsed, PartialCall, PartialOutput
from .tagged import render_arguments

START = "<|start|>assistant"
ANALYSIS = "<|channel|>analysis<|message|>"
FINAL = "<|channel|>final<|message|>"
END, RETURN, CALL = "<|end|>", "<|return|>", "<|call|>"
_ENDS = (END, RETURN, CALL)
_HEADER = re.compile(
    r"\s*(?:to=(?P<to1>[^\s<]+)\s*)?<\|channel\|>(?P<channel>\w+)"
    r"(?:\s*to=(?P<to2>[^\s<]+))?\s*(?:<\|constrain\|>)?\s*(?:\w+)?\s*<\|message\|>"
)


def _call_begin(name: str) -> str:
    return f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"


class HarmonyFormat(ToolFormat):
    name = "harmony"
    aliases = ("gpt_oss", "gpt-oss")
    models = "gpt-oss-20b, gpt-oss-120b"

    def _spec(
        self,
        tools: list[Tool],
        mode: str,
        parallel: bool,
        reasoning: Reasoning,
        answer: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        final = {
            "type": "tag",
            "begin": FINAL,
            "content": dict(answer) if answer else {"type": "any_text"},
            "end": [RETURN, END],
        }
        calls = {
            "type": "tags_with_separator",
            "tags": [
                {
                    "type": "tag",
                    "begin": _call_begin(t.name),
                    "content": args_format(t.parameters, "json"),
                    "end": CALL,
                }
                for t in tools
            ],
            "separator": START,
            "at_least_one": True,
            "stop_after_first": mode == "named" or not parallel,
        }
        body: dict[str, Any] = final if mode == "none" else calls
        if mode == "auto":
            body = {"type": "or", "elements": [final, calls]}
        if reasoning.mode == "off":
            return {"type": "structural_tag", "format": body}
        analysis: dict[str, Any] = {
            "type": "sequence",
            "elements": [
                {"type": "tag", "begin": ANALYSIS, "content": {"type": "any_text"}, "end": END},
                {"type": "const_string", "value": START},
            ],
        }
        if reasoning.mode == "auto":
            analysis = {"type": "optional", "content": analysis}
        return {
            "type": "structural_tag",
            "format": {"type": "sequence", "elements": [analysis, body]},
        }

    def _budget(self, reasoning: Reasoning) -> ReasoningBudget | None:
        if reasoning.budget is None or reasoning.mode == "off":
            return None
        return ReasoningBudget(ANALYSIS, END, reasoning.budget)

    def parse(self, text: str, tools: Any = None, *, reasoning: Any = None) -> Parsed:
        out = self._scan(text, final=True)
        calls = [{"name": c.name, "arguments": c.arguments} for c in out.calls if c.complete]
        reasoning = out.reasoning.strip() if out.has_reasoning else None
        return Parsed(out.content.strip(), calls, reasoning)

    def parse_partial(
        self, text: str, tools: Any = None, *, reasoning: Any = None
    ) -> PartialOutput:
        return self._scan(text, final=False)

    def _scan(self, text: str, final: bool) -> PartialOutput:
        out = PartialOutput()
        messages = re.split(r"<\|start\|>(?:assistant)?", text)
        for k, message in enumerate(messages):
            last = k == len(messages) - 1
            if not message.strip():
                continue
            m = _HEADER.match(message)
            if m is None:
                if not (last and not final):  # a header still being written, or plain text
                    out.content += message
                continue
            body = _body(message[m.end() :], final or not last)
            channel = m.group("channel")
            recipient = m.group("to1") or m.group("to2") or ""
            if recipient.startswith("functions."):
                _read_call(out, recipient[len("functions.") :], body)
            elif channel == "analysis":
                out.has_reasoning = True
                out.reasoning += body
            else:
                out.content += body
        return out

    def render(
        self, content: str, tool_calls: list[dict[str, Any]], reasoning: str | None = None
    ) -> str:
        parts = []
        if reasoning is not None:
            parts.append(f"{ANALYSIS}{reasoning}{END}")
        if tool_calls:
            parts += [
                f"{_call_begin(c['name'])}{render_arguments(c['arguments'], 'json')}{CALL}"
                for c in tool_calls
            ]
        else:
            parts.append(f"{FINAL}{content}{RETURN}")
        return START.join(parts)


def _body(text: str, closed: bool) -> str:
    """A message body up to its end marker (an end marker that is an end-of-generation token
    is not in the text: the text's end closes the message when ``closed``); while streaming, a
    possible marker at the end is held back."""
    ends = [i for i in (text.find(e) for e in _ENDS) if i >= 0]
    if ends:
        return text[: min(ends)]
    if closed:
        return text
    return text[: len(text) - max(scan.prefix_overlap(text, e) for e in _ENDS)]


def _read_call(out: PartialOutput, name: str, body: str) -> None:
    call = PartialCall(name)
    out.calls.append(call)
    result = scan.json_value(body, 0)
    start = scan.skip_ws(body, 0)
    if result is scan.INCOMPLETE or result is None:
        call.arguments_text = body[start:]
        return
    call.arguments, end = result
    call.arguments_text = body[start:end]
    call.complete = True


__all__ = ["HarmonyFormat"]
