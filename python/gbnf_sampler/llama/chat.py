"""Chat completions on llama-cpp-python: the model's own chat template, then a constrained
:func:`~gbnf_sampler.llama.generate.generate`.

Tool calls and reasoning (``tools``, ``tool_choice``, ``parallel_tool_calls``, ``reasoning``)
use the model's own tool-call format (``tool_format``, else the one
:func:`gbnf_sampler.structural.formats.for_model` picks, as the server does: detected from the
chat template, else by the GGUF's architecture, else ``hermes``): the output is free text until
the format's marker, the calls follow their schemas, a think section stays free. The response is
OpenAI's: ``message.tool_calls``, ``message.reasoning_content``, ``finish_reason="tool_calls"``,
and the same fields as streaming deltas. The request-to-constraint and text-to-message steps are
the pure functions of :mod:`gbnf_sampler.structural.openai`, shared with a server.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Mapping
from typing import Any, cast

from ..grammar import Grammar
from ..structural import formats
from ..structural.formats import ToolFormat
from ..structural.openai import ChatConstraint, ChatStream, chat_constraint, finish_reason
from .compiled import vocab_for
from .generate import generate


def chat_prompt(
    llm: Any, template: str | None, messages: list[dict[str, Any]], **template_args: Any
) -> str:
    """The prompt text for ``messages`` under the chat template (the model's own)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    if not template:
        lines = [f"{m['role']}: {m.get('content') or ''}" for m in messages]
        return "\n".join(lines) + "\nassistant: "
    eos = llm.detokenize([llm.token_eos()]).decode("utf-8", errors="replace")
    bos = llm.detokenize([llm.token_bos()]).decode("utf-8", errors="replace")
    formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
    return str(formatter(messages=cast(Any, messages), **template_args).prompt)


def renders_tools(template: str | None) -> bool:
    """Whether a chat template lays out ``tools`` (and tool calls and results) itself."""
    return bool(template) and "tools" in str(template)


def _decoded_arguments(call: Any) -> Any:
    fn = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(fn, Mapping) or not isinstance(fn.get("arguments"), str):
        return call
    try:
        arguments = json.loads(fn["arguments"])
    except ValueError:
        return call
    return {**call, "function": {**fn, "arguments": arguments}}


def _calls(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for call in message.get("tool_calls") or []:
        fn = _decoded_arguments(call).get("function", {}) if isinstance(call, Mapping) else {}
        out.append({"name": fn.get("name"), "arguments": fn.get("arguments", {})})
    return out


def _as_text(message: Mapping[str, Any], fmt: ToolFormat | None) -> dict[str, Any]:
    """A tool call or tool result as plain text, for a template that knows no tools."""
    role, content = message.get("role"), message.get("content") or ""
    if role in ("tool", "function"):
        name = message.get("name") or message.get("tool_name") or message.get("tool_call_id")
        return {"role": "user", "content": f"Result of {name or 'the tool'}: {content}"}
    if role == "assistant" and message.get("tool_calls"):
        calls = _calls(message)
        text = fmt.render(content, calls) if fmt is not None else json.dumps(calls)
        return {"role": "assistant", "content": text}
    return dict(message)


def tool_messages(
    messages: list[dict[str, Any]], template: str | None, fmt: ToolFormat | None, tools: Any
) -> list[dict[str, Any]]:
    """``messages`` made ready for the chat template in a request with tools (``tools``: None
    when none are offered). A template that renders tools gets earlier calls with their
    arguments decoded (templates expect objects). For one that does not (Gemma 3's, or no
    template), earlier calls are written as the format ``fmt`` writes them, tool results become
    user messages, and the format's tool instructions are added to the system message."""
    if renders_tools(template):
        return [
            {**m, "tool_calls": [_decoded_arguments(c) for c in m["tool_calls"]]}
            if m.get("tool_calls")
            else m
            for m in messages
        ]
    messages = [_as_text(m, fmt) for m in messages]
    if fmt is None or not tools:
        return messages
    text = fmt.instructions(tools)
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0])
        first["content"] = f"{first.get('content') or ''}\n\n{text}".strip()
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def tools_prompt(
    llm: Any,
    template: str | None,
    messages: list[dict[str, Any]],
    fmt: ToolFormat | None,
    *,
    tools: Any = None,
    tool_choice: Any = None,
    reasoning: Any = False,
) -> str:
    """The prompt of a chat request that may have tools or reasoning, as :func:`chat` and the
    server (``gbnf-sampler serve``) both build it: :func:`tool_messages` under the template,
    with ``tools``, ``tool_choice`` and ``enable_thinking`` passed to it."""
    offered = tools if tools and tool_choice != "none" else None
    return chat_prompt(
        llm,
        template,
        tool_messages(messages, template, fmt, offered),
        tools=offered,
        tool_choice=tool_choice,
        enable_thinking=reasoning not in (False, None),
    )


def chat(
    llm: Any,
    messages: list[dict[str, Any]],
    grammar: Any = None,
    *,
    schema: Any = None,
    response_format: Any = None,
    tools: Any = None,
    tool_choice: Any = None,
    parallel_tool_calls: bool | None = None,
    reasoning: Any = False,
    tool_format: Any = None,
    chat_template: str | None = None,
    property_order: str = "schema",
    stream: bool = False,
    **options: Any,
) -> Any:
    """A chat completion shaped like llama-cpp-python's ``create_chat_completion`` result (or
    its streaming chunks), constrained by one of ``grammar``, ``schema`` (JSON Schema or
    Pydantic model) or ``response_format`` (OpenAI style), and/or by ``tools`` (OpenAI tool
    list; ``tool_choice`` auto/required/none/named, ``parallel_tool_calls``) and ``reasoning``
    (False, True, "auto", or ``{"budget": N}``) in the model's tool-call format (``tool_format``:
    a ``gs.tool_formats`` name; default: see the module doc).
    ``chat_template``: a Jinja chat template to use instead of the GGUF's own.
    ``property_order="any"``: the JSON Schema of ``schema`` / ``response_format`` accepts an
    object's properties in any order."""
    template = chat_template or llm.metadata.get("tokenizer.chat_template")
    request = {
        "grammar": grammar,
        "schema": schema,
        "response_format": response_format,
        "tools": tools,
        "tool_choice": tool_choice,
        "parallel_tool_calls": parallel_tool_calls,
        "reasoning": reasoning,
        "tool_format": tool_format,
        "property_order": property_order,
    }
    constraint = _constraint(llm, template, request)
    prompt = tools_prompt(llm, template, messages, constraint.format, **_prompt_fields(request))
    result = generate(
        llm,
        prompt,
        constraint.grammar,
        stream=stream,
        special=True,
        reasoning_budget=constraint.budget,
        **options,
    )
    meta = {
        "id": f"chatcmpl-{uuid.uuid4()}",
        "created": int(time.time()),
        "model": str(getattr(llm, "model_path", "")),
    }
    if stream:
        return _chat_chunks(meta, result, constraint.stream())
    return _response(meta, result, constraint)


def _response(meta: dict[str, Any], result: Any, constraint: ChatConstraint) -> dict[str, Any]:
    choice = result["choices"][0]
    message = constraint.message(choice["text"])
    return {
        **meta,
        "object": "chat.completion",
        "usage": result["usage"],
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish_reason(message, choice["finish_reason"]),
            }
        ],
    }


def _prompt_fields(request: dict[str, Any]) -> dict[str, Any]:
    return {k: request[k] for k in ("tools", "tool_choice", "reasoning")}


def _constraint(llm: Any, template: str | None, request: dict[str, Any]) -> ChatConstraint:
    grammar, schema = request["grammar"], request["schema"]
    given = [x for x in (grammar, schema, request["response_format"]) if x is not None]
    if len(given) > 1:
        raise ValueError("pass at most one of grammar=, schema= or response_format=")
    structured = bool(request["tools"]) or request["reasoning"] not in (False, None)
    if grammar is not None or schema is not None:
        if structured:
            raise ValueError(
                "grammar= and schema= do not combine with tools= or reasoning=; use "
                "response_format= (with tool_choice='none' when tools are given)"
            )
        if grammar is not None:
            return ChatConstraint(Grammar.coerce(grammar), None)
        order = request["property_order"]
        return ChatConstraint(Grammar.from_json_schema(schema, property_order=order), None)
    if not given and not structured:
        raise ValueError("pass one of grammar=, schema=, response_format=, tools= or reasoning=")
    return chat_constraint(
        tools=request["tools"],
        tool_choice=request["tool_choice"],
        parallel_tool_calls=request["parallel_tool_calls"],
        response_format=request["response_format"],
        reasoning=request["reasoning"],
        tool_format=request["tool_format"]
        or formats.for_model(template, llm.metadata.get("general.architecture"))[0],
        chat_template=template,
        vocab=vocab_for(llm),
        property_order=request["property_order"],
    )


def _chunk(meta: dict[str, Any], delta: dict[str, Any], reason: str | None) -> dict[str, Any]:
    return {
        **meta,
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}],
    }


def _chat_chunks(
    meta: dict[str, Any], chunks: Iterator[dict[str, Any]], parser: ChatStream
) -> Iterator[Any]:
    yield _chunk(meta, {"role": "assistant"}, None)
    last: dict[str, Any] = {}
    for chunk in chunks:
        choice = chunk["choices"][0]
        if choice["finish_reason"] is not None:
            last = chunk
            continue
        for delta in parser.feed(choice["text"]):
            yield _chunk(meta, delta, None)
    for delta in parser.finish():
        yield _chunk(meta, delta, None)
    stop = last["choices"][0]["finish_reason"] if last else "stop"
    out = _chunk(meta, {}, finish_reason(parser.message(), stop))
    if "usage" in last:
        out["usage"] = last["usage"]
    yield out


__all__ = ["chat", "chat_prompt", "renders_tools", "tool_messages", "tools_prompt"]
