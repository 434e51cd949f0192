"""Chat messages (OpenAI or Ollama) to the prompt text, under the model's own chat template.

Rendering is :mod:`gbnf_sampler.llama.chat`'s (``tokenizer.chat_template`` through
llama-cpp-python's ``Jinja2ChatFormatter``, or a plain ``role: content`` layout for a model
without one), so ``gs.llama.chat`` and the server build the same prompt. Before rendering,
messages are brought to plain text: content parts are joined, ``developer`` becomes ``system``,
tool results and earlier tool calls are written as text, and the tools are described in a system
message (:func:`.tools.tool_system_prompt`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from ..llama.chat import chat_prompt
from .errors import bad_request
from .tools import tool_system_prompt

_ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def _content(message: Mapping[str, Any], i: int) -> str:
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise bad_request(f"messages[{i}].content must be a string or a list of parts", "messages")
    texts = []
    for part in content:
        if not isinstance(part, Mapping) or part.get("type") != "text":
            kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
            raise bad_request(
                f"messages[{i}].content: only text parts are supported, got {kind!r}", "messages"
            )
        texts.append(str(part.get("text", "")))
    return "".join(texts)


def _tool_calls_text(calls: Any) -> str:
    out = []
    for call in calls if isinstance(calls, list) else []:
        fn = call.get("function", {}) if isinstance(call, Mapping) else {}
        arguments = fn.get("arguments", {})
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError):
                arguments = json.loads(arguments)
        out.append({"name": fn.get("name"), "arguments": arguments})
    return json.dumps(out[0] if len(out) == 1 else out, ensure_ascii=False)


def _plain(message: Any, i: int) -> dict[str, str]:
    if not isinstance(message, Mapping):
        raise bad_request(f"messages[{i}] must be an object", "messages")
    role = message.get("role")
    if role not in _ROLES:
        raise bad_request(f"messages[{i}].role must be one of {', '.join(_ROLES)}", "messages")
    text = _content(message, i)
    if role == "developer":
        role = "system"
    elif role in ("tool", "function"):
        name = message.get("name") or message.get("tool_call_id") or "tool"
        role, text = "user", f"Result of {name}: {text}"
    elif role == "assistant" and message.get("tool_calls"):
        text = (text + "\n" if text else "") + _tool_calls_text(message["tool_calls"])
    return {"role": str(role), "content": text}


def chat_messages(messages: Any, tools: list[Any] | None, tool_choice: Any) -> list[dict[str, str]]:
    """Plain-text messages, with the tools described in the first system message."""
    if not isinstance(messages, list) or not messages:
        raise bad_request("messages must be a non-empty list", "messages")
    plain = [_plain(m, i) for i, m in enumerate(messages)]
    if tools and tool_choice != "none":
        about = tool_system_prompt(tools, tool_choice if isinstance(tool_choice, str) else "named")
        if plain[0]["role"] == "system":
            plain[0] = {"role": "system", "content": about + "\n\n" + plain[0]["content"]}
        else:
            plain.insert(0, {"role": "system", "content": about})
    return plain


def render_chat(llm: Any, messages: list[dict[str, str]]) -> str:
    """The prompt text of ``messages`` (a template error is a 400)."""
    try:
        return chat_prompt(llm, llm.metadata.get("tokenizer.chat_template"), list(messages))
    except Exception as e:  # jinja2 errors, raise_exception() in a template
        raise bad_request(
            f"the model's chat template rejected the messages: {e}", "messages"
        ) from e


__all__ = ["chat_messages", "render_chat"]
