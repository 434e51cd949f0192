"""``gbnf-sampler generate``: text from any GGUF model (or the embedded one) under a grammar, a
JSON Schema, a regex or a list of choices, through llama-cpp-python's own completion API with our
logits processor."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any, TextIO

from ..grammar import Grammar
from ..llama.models import load_llama
from ..llama.processor import logits_processor
from .status import EXIT_OK


def grammar_from_args(args: argparse.Namespace) -> Grammar:
    if args.grammar:
        with open(args.grammar, "rb") as f:
            return Grammar.from_gbnf(f.read())
    if args.schema:
        with open(args.schema, encoding="utf-8") as f:
            return Grammar.from_json_schema(f.read())
    if args.regex is not None:
        return Grammar.from_regex(args.regex)
    return Grammar.from_choices([c for c in args.choices.split(",") if c])


def _pieces(llm: Any, args: argparse.Namespace, options: dict[str, Any]) -> Iterable[str]:
    if args.chat:
        messages = [{"role": "user", "content": args.prompt}]
        result = llm.create_chat_completion(messages, **options)
        if args.stream:
            return (c["choices"][0]["delta"].get("content") or "" for c in result)
        return [result["choices"][0]["message"]["content"] or ""]
    result = llm.create_completion(args.prompt, **options)
    if args.stream:
        return (c["choices"][0]["text"] for c in result)
    return [result["choices"][0]["text"]]


def run_generate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    grammar = grammar_from_args(args)
    llm = load_llama(args.model, progress=False)
    options: dict[str, Any] = {
        "max_tokens": args.max_tokens,
        "temperature": args.temperature,
        "seed": args.seed,
        "logits_processor": logits_processor(llm, grammar),
        "stream": args.stream,
    }
    for piece in _pieces(llm, args, options):
        out.write(piece)
        out.flush()
    out.write("\n")
    return EXIT_OK


def add_generate_parser(commands: Any) -> argparse.ArgumentParser:
    gen: argparse.ArgumentParser = commands.add_parser(
        "generate", help="generate text constrained by a grammar"
    )
    gen.add_argument("--model", default="default", help="GGUF path, or 'default'")
    source = gen.add_mutually_exclusive_group(required=True)
    source.add_argument("--grammar", metavar="FILE", help="GBNF grammar file")
    source.add_argument("--schema", metavar="FILE", help="JSON Schema file")
    source.add_argument("--regex", metavar="RE", help="regular expression")
    source.add_argument("--choices", metavar="A,B,...", help="comma-separated choices")
    gen.add_argument("--prompt", required=True)
    gen.add_argument("--chat", action="store_true", help="use the model's chat template")
    gen.add_argument("--max-tokens", type=int, default=256)
    gen.add_argument("--temperature", type=float, default=0.0)
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--stream", action="store_true")
    gen.set_defaults(run=run_generate)
    return gen


__all__ = ["add_generate_parser", "grammar_from_args", "run_generate"]
