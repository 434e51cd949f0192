"""Streaming: text chunks in, OpenAI chat-completion deltas out.

``fmt.stream_parser(tools)`` (or ``StreamParser(fmt, tools)``): call :meth:`feed` with each
new piece of text and :meth:`finish` at the end; each returns a list of ``delta`` dicts as the
``choices[0].delta`` of OpenAI's streaming chunks:

* ``{"reasoning_content": "..."}`` and ``{"content": "..."}``: new text of the think section and
  of the answer. Text that may still turn out to be a marker (``<tool_`` before ``<tool_call>``)
  is held back until it is decided, and surrounding whitespace is trimmed as in :meth:`parse`.
* ``{"tool_calls": [{"index": i, "id": ..., "type": "function", "function": {"name": ...,
  "arguments": ""}}]}`` when a call's name is known, then ``{"tool_calls": [{"index": i,
  "function": {"arguments": "..."}}]}`` pieces: the raw JSON as the model writes it (formats
  whose arguments are not JSON send the decoded arguments as JSON once the call is complete).

The concatenation of the pieces equals what :meth:`ToolFormat.parse` returns for the whole text
(content, reasoning), and each call's arguments pieces are one JSON document.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Protocol

from .results import Parsed, PartialOutput


class _Format(Protocol):
    def parse(self, text: str, tools: Any = None, *, reasoning: Any = None) -> Parsed: ...

    def parse_partial(
        self, text: str, tools: Any = None, *, reasoning: Any = None
    ) -> PartialOutput: ...


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


class StreamParser:
    def __init__(self, fmt: _Format, tools: Any = None, reasoning: Any = None) -> None:
        self.format = fmt
        self.tools = tools
        self.reasoning = reasoning
        self.text = ""
        self.ids: list[str] = []
        self._sent_content = ""
        self._sent_reasoning = ""
        self._sent_args: list[str] = []
        self.result: Parsed | None = None

    def feed(self, chunk: str) -> list[dict[str, Any]]:
        self.text += chunk
        partial = self.format.parse_partial(self.text, self.tools, reasoning=self.reasoning)
        return self._deltas(partial, final=False)

    def finish(self) -> list[dict[str, Any]]:
        """The last deltas (text held back, the rest of the calls); sets :attr:`result`."""
        self.result = self.format.parse(self.text, self.tools, reasoning=self.reasoning)
        partial = PartialOutput(
            content=self.result.content,
            reasoning=self.result.reasoning_content or "",
            has_reasoning=self.result.reasoning_content is not None,
        )
        return self._deltas(partial, final=True) + self._finish_calls(self.result)

    @property
    def tool_call_ids(self) -> list[str]:
        return list(self.ids)

    def _deltas(self, partial: PartialOutput, final: bool) -> list[dict[str, Any]]:
        out = []
        reasoning = _trimmed(partial.reasoning, final)
        if reasoning.startswith(self._sent_reasoning) and len(reasoning) > len(
            self._sent_reasoning
        ):
            out.append({"reasoning_content": reasoning[len(self._sent_reasoning) :]})
            self._sent_reasoning = reasoning
        content = _trimmed(partial.content, final)
        if content.startswith(self._sent_content) and len(content) > len(self._sent_content):
            out.append({"content": content[len(self._sent_content) :]})
            self._sent_content = content
        for index, call in enumerate(partial.calls):
            if call.name is None:
                break
            if index >= len(self.ids):
                self.ids.append(new_call_id())
                self._sent_args.append("")
                out.append(_call_delta(index, self.ids[index], call.name))
            if call.streams_arguments:
                text = call.arguments_text.rstrip() if not call.complete else call.arguments_text
                out += self._args_delta(index, text)
            elif call.complete:
                out += self._args_delta(index, json.dumps(call.arguments, ensure_ascii=False))
        return out

    def _args_delta(self, index: int, text: str) -> list[dict[str, Any]]:
        sent = self._sent_args[index]
        if not text.startswith(sent) or len(text) == len(sent):
            return []
        self._sent_args[index] = text
        return [{"tool_calls": [{"index": index, "function": {"arguments": text[len(sent) :]}}]}]

    def _finish_calls(self, result: Parsed) -> list[dict[str, Any]]:
        out = []
        for index, call in enumerate(result.tool_calls):
            if index >= len(self.ids):
                self.ids.append(new_call_id())
                self._sent_args.append("")
                out.append(_call_delta(index, self.ids[index], call["name"]))
            if not self._sent_args[index]:
                out += self._args_delta(index, json.dumps(call["arguments"], ensure_ascii=False))
        return out


def _trimmed(text: str, final: bool) -> str:
    """Leading whitespace never counts; trailing whitespace only once more text follows (or at
    the end, where parse strips it too)."""
    text = text.lstrip()
    return text.strip() if final else text.rstrip()


def _call_delta(index: int, call_id: str, name: str) -> dict[str, Any]:
    return {
        "tool_calls": [
            {
                "index": index,
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }
        ]
    }


__all__ = ["StreamParser", "new_call_id"]
