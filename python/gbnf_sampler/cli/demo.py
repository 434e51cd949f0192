"""``gbnf-sampler demo``: constrained generation with the embedded Gemma 3 270M model.

Three small jobs a program might give a local model - a support ticket extracted as JSON that
matches a schema, a yes/no answer, a tool call - each generated under its grammar, checked, and
timed against unconstrained generation of the same prompt.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from ..grammar import Grammar
from ..llama.generate import generate
from ..llama.models import load_llama
from .status import EXIT_OK

TICKET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^A[0-9]{5}$"},
        "issue_type": {"enum": ["no_sound", "broken", "late_delivery", "other"]},
        "priority": {"enum": ["low", "normal", "high"]},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string", "minLength": 1, "maxLength": 12},
                    "qty": {"type": "integer", "minimum": 1, "maximum": 99},
                },
                "required": ["sku", "qty"],
                "additionalProperties": False,
            },
            "minItems": 1,
            "maxItems": 5,
        },
    },
    "required": ["order_id", "issue_type", "priority", "items"],
    "additionalProperties": False,
}

_EXAMPLE_TICKET = {
    "order_id": "A10233",
    "issue_type": "no_sound",
    "priority": "normal",
    "items": [{"sku": "SPK-2", "qty": 1}],
}
TICKET_PROMPT = (
    "Extract the support ticket from the customer message as JSON.\n\n"
    "Message: Hi, order A10233 arrived but the speaker SPK-2 makes no sound at all. Help!\n"
    f"JSON: {json.dumps(_EXAMPLE_TICKET, separators=(',', ':'))}\n\n"
    "Message: My order A55120 with two lamps (LMP-7) is three weeks late. This is urgent!!\n"
    "JSON: "
)

YES_NO_GBNF = 'root ::= "yes" | "no"\n'
YES_NO_PROMPT = "Question: Is water wet?\nAnswer (yes or no): "

WEATHER_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "maxLength": 40},
                    "unit": {"enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city", "unit"],
                "additionalProperties": False,
            },
        },
    }
]
TOOL_PROMPT = """Call a tool to answer the user. Reply with a JSON tool call.

User: What's the weather in Paris, in celsius?
Tool call: """


@dataclass
class Run:
    text: str
    tokens: int
    seconds: float

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


def complete(llm: Any, prompt: str, *, max_tokens: int, processor: Any = None) -> Run:
    """Greedy completion; with no processor, EOS is banned so both runs are the same length."""
    kwargs: dict[str, Any] = {"max_tokens": max_tokens, "temperature": 0.0, "seed": 0}
    if processor is not None:
        kwargs["logits_processor"] = processor
    else:
        kwargs["logit_bias"] = {int(llm.token_eos()): -1e9}
    start = time.perf_counter()
    out = llm.create_completion(prompt, **kwargs)
    seconds = time.perf_counter() - start
    return Run(out["choices"][0]["text"], int(out["usage"]["completion_tokens"]), seconds)


def _validate_json(text: str, schema: dict[str, Any]) -> str:
    value = json.loads(text)
    try:
        import jsonschema
    except ImportError:
        return "parses as JSON (install jsonschema to validate against the schema)"
    jsonschema.validate(value, schema)
    return "valid JSON, matches the schema"


def constrained(llm: Any, prompt: str, grammar: Any, *, max_tokens: int) -> Run:
    """Greedy generation under the grammar: native sampler with jump-forward, from an empty KV
    cache (so that two runs do the same model work: the prompt is evaluated in each)."""
    llm.reset()
    start = time.perf_counter()
    out = generate(llm, prompt, grammar, max_tokens=max_tokens)
    seconds = time.perf_counter() - start
    return Run(out["choices"][0]["text"], int(out["usage"]["completion_tokens"]), seconds)


def _job(
    out: TextIO,
    title: str,
    llm: Any,
    prompt: str,
    grammar: Any,
    max_tokens: int,
    check: Callable[[str], str],
) -> tuple[Run, Run]:
    # The first run meets the grammar for the first time (its automaton and token masks are
    # built as the run needs them); the warm run repeats it on the filled caches.
    first = constrained(llm, prompt, grammar, max_tokens=max_tokens)
    result = constrained(llm, prompt, grammar, max_tokens=max_tokens)
    free = complete(llm, prompt, max_tokens=max(result.tokens, 1))
    print(f"\n== {title}", file=out)
    print(result.text, file=out)
    print(f"   check: {check(result.text)}", file=out)
    print(
        f"   first run {first.seconds:.2f} s, warm run {result.seconds:.2f} s "
        f"({result.tokens} tokens, {result.tokens_per_second:.1f} tokens/s)",
        file=out,
    )
    print(f"   unconstrained, same prompt: {free.text[:70]!r}...", file=out)
    return result, free


def run_demo(model: str | None = None, out: TextIO = sys.stdout) -> int:
    llm = load_llama(model)
    # The decoding loop's one-time setup (llama.cpp's and ours), before any clock: the first run
    # of each job then differs from its warm run by what the grammar's first use costs.
    generate(llm, "Hello", None, max_tokens=1)
    ticket = Grammar.from_json_schema(TICKET_SCHEMA, whitespace="compact")
    tool_grammar = Grammar.from_tools(WEATHER_TOOLS, tool_choice="required")
    tool_schema = {
        "type": "object",
        "properties": {
            "name": {"const": "get_weather"},
            "arguments": WEATHER_TOOLS[0]["function"]["parameters"],
        },
        "required": ["name", "arguments"],
    }

    def yes_no(text: str) -> str:
        if text not in ("yes", "no"):
            raise ValueError(f"not yes/no: {text!r}")
        return "one of yes / no"

    runs = [
        _job(
            out,
            "support ticket -> JSON (schema)",
            llm,
            TICKET_PROMPT,
            ticket,
            160,
            lambda t: _validate_json(t, TICKET_SCHEMA),
        ),
        _job(out, "yes / no (GBNF)", llm, YES_NO_PROMPT, YES_NO_GBNF, 4, yes_no),
        _job(
            out,
            "tool call (OpenAI tools)",
            llm,
            TOOL_PROMPT,
            tool_grammar,
            80,
            lambda t: _validate_json(t, tool_schema),
        ),
    ]
    constrained_tokens = sum(c.tokens for c, _ in runs)
    constrained_time = sum(c.seconds for c, _ in runs)
    free_tokens = sum(f.tokens for _, f in runs)
    free_time = sum(f.seconds for _, f in runs)
    c_rate = constrained_tokens / constrained_time
    f_rate = free_tokens / free_time
    print(
        f"\ntokens/s: constrained {c_rate:.1f}, unconstrained {f_rate:.1f} "
        f"(ratio {c_rate / f_rate:.2f}x)",
        file=out,
    )
    return EXIT_OK


def add_demo_parser(commands: Any) -> argparse.ArgumentParser:
    demo: argparse.ArgumentParser = commands.add_parser(
        "demo", help="constrained generation with the default model"
    )
    demo.add_argument("--model", default=None, help="GGUF path (default: Gemma 3 270M)")
    demo.set_defaults(run=lambda args, out, err: run_demo(args.model, out=out))
    return demo


__all__ = ["TICKET_SCHEMA", "add_demo_parser", "complete", "constrained", "run_demo"]
