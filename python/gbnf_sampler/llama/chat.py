"""Chat completions on llama-cpp-python: the model's own chat template, then a constrained
:func:`~gbnf_sampler.llama.generate.generate`."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any, cast

from ..grammar import Grammar
from .generate import generate


def _chat_prompt(llm: Any, messages: list[dict[str, Any]]) -> str:
    """The prompt text for ``messages`` under the model's own chat template."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llm.metadata.get("tokenizer.chat_template")
    if not template:
        lines = [f"{m['role']}: {m.get('content') or ''}" for m in messages]
        return "\n".join(lines) + "\nassistant: "
    eos = llm.detokenize([llm.token_eos()]).decode("utf-8", errors="replace")
    bos = llm.detokenize([llm.token_bos()]).decode("utf-8", errors="replace")
    formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
    return str(formatter(messages=cast(Any, messages)).prompt)


def chat(
    llm: Any,
    messages: list[dict[str, Any]],
    grammar: Any = None,
    *,
    schema: Any = None,
    response_format: Any = None,
    stream: bool = False,
    **options: Any,
) -> Any:
    """A chat completion constrained by exactly one of ``grammar``, ``schema`` (JSON Schema or
    Pydantic model) or ``response_format`` (OpenAI style), shaped like llama-cpp-python's
    ``create_chat_completion`` result (or its streaming chunks)."""
    given = [x for x in (grammar, schema, response_format) if x is not None]
    if len(given) != 1:
        raise ValueError("pass exactly one of grammar=, schema= or response_format=")
    if grammar is not None:
        constraint = Grammar.coerce(grammar)
    elif schema is not None:
        constraint = Grammar.from_json_schema(schema)
    else:
        constraint = Grammar.from_response_format(response_format)
    prompt = _chat_prompt(llm, messages)
    result = generate(llm, prompt, constraint, stream=stream, **options)
    meta = {
        "id": f"chatcmpl-{uuid.uuid4()}",
        "created": int(time.time()),
        "model": str(getattr(llm, "model_path", "")),
    }
    if stream:
        return _chat_chunks(meta, result)
    choice = result["choices"][0]
    message = {"role": "assistant", "content": choice["text"]}
    return {
        **meta,
        "object": "chat.completion",
        "usage": result["usage"],
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": choice["finish_reason"],
            }
        ],
    }


def _chat_chunks(meta: dict[str, Any], chunks: Iterator[dict[str, Any]]) -> Iterator[Any]:
    first = True
    for chunk in chunks:
        choice = chunk["choices"][0]
        delta: dict[str, Any] = {"role": "assistant"} if first else {}
        if choice["text"]:
            delta["content"] = choice["text"]
        first = False
        out = {
            **meta,
            "object": "chat.completion.chunk",
            "choices": [
                {
                    "index": 0,
                    "delta": delta,
                    "logprobs": None,
                    "finish_reason": choice["finish_reason"],
                }
            ],
        }
        if "usage" in chunk:
            out["usage"] = chunk["usage"]
        yield out


__all__ = ["chat"]
