"""Chat messages (OpenAI or Ollama) to the prompt text, under the model's own chat template.

Rendering is :mod:`gbnf_sampler.llama.chat`'s :func:`~gbnf_sampler.llama.chat.tools_prompt`,
the one ``gs.llama.chat`` uses (``tokenizer.chat_template`` through llama-cpp-python's
``Jinja2ChatFormatter``, or a plain ``role: content`` layout for a model without one; tools
passed to a template that renders them, else described in a system message in the tool-call
format's own words, earlier calls written as that format writes them). Before that, messages
are checked and brought to what templates read: content parts are joined, ``developer``
becomes ``system``; tool calls and tool results are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import StructuralTagError
from ..llama.chat import tools_prompt
from ..structural.formats import ToolFormat
from .errors import bad_request
from .tools import ChatRequest

_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
# What a message keeps besides role and content (OpenAI's and Ollama's tool-call fields).
_KEPT = ("name", "tool_calls", "tool_call_id", "tool_name", "thinking", "reasoning_content")


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


def _message(message: Any, i: int) -> dict[str, Any]:
    if not isinstance(message, Mapping):
        raise bad_request(f"messages[{i}] must be an object", "messages")
    role = message.get("role")
    if role not in _ROLES:
        raise bad_request(f"messages[{i}].role must be one of {', '.join(_ROLES)}", "messages")
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise bad_request(f"messages[{i}].tool_calls must be a list", "messages")
    out = {k: v for k, v in message.items() if k in _KEPT and v is not None}
    out["role"] = "system" if role == "developer" else str(role)
    out["content"] = _content(message, i)
    return out


def chat_messages(messages: Any) -> list[dict[str, Any]]:
    """The request's messages, checked (a 400 names the bad one), as templates read them."""
    if not isinstance(messages, list) or not messages:
        raise bad_request("messages must be a non-empty list", "messages")
    return [_message(m, i) for i, m in enumerate(messages)]


def render_chat(
    llm: Any,
    messages: list[dict[str, Any]],
    chat: ChatRequest | None = None,
    fmt: ToolFormat | None = None,
) -> str:
    """The prompt text of ``messages``, with the tools of ``chat`` offered in its format (a
    template error or a malformed tool is a 400). ``fmt``: the format earlier tool calls are
    written in when ``chat`` is None (no tools offered now)."""
    template = llm.metadata.get("tokenizer.chat_template")
    body = chat.body if chat is not None else {}
    try:
        return tools_prompt(
            llm,
            template,
            messages,
            chat.format if chat is not None else fmt,
            tools=body.get("tools"),
            tool_choice=body.get("tool_choice"),
            reasoning=body.get("reasoning", False),
        )
    except StructuralTagError as e:
        raise bad_request(f"tools: {e}", "tools", "invalid_tools") from e
    except Exception as e:  # jinja2 errors, raise_exception() in a template
        raise bad_request(
            f"the model's chat template rejected the messages: {e}", "messages"
        ) from e


__all__ = ["chat_messages", "render_chat"]
