"""The ``gbnf-sampler`` command line: ``check`` (diagnostics for grammar files), ``demo`` (the
main job on the embedded model) and ``generate`` (constrained generation with any GGUF model)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from .cli_convert import add_convert_parser, run_convert
from .errors import Diagnostic, GbnfSamplerError, GrammarError
from .grammar import DEFAULT_ROOT, Grammar

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2


def format_diagnostic(diagnostic: Diagnostic, filename: str) -> str:
    """``FILE:LINE:COL: error[code]: message (hint)`` followed by the snippet and caret."""
    where = f"{filename}:{diagnostic.line}:{diagnostic.column}" if diagnostic.line else filename
    text = f"{where}: {diagnostic.severity}[{diagnostic.code}]: {diagnostic.message}"
    if diagnostic.hint:
        text += f" ({diagnostic.hint})"
    # The core's rendering ends with the snippet and caret lines; reuse them as they are.
    snippet = diagnostic.rendered.split("\n", 1)
    if diagnostic.line and len(snippet) == 2:
        text += "\n" + snippet[1]
    return text


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def _check_one(path: str, root: str) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings) of one grammar file. OSError propagates."""
    text = _read(path)
    try:
        grammar = Grammar.from_gbnf(text, root=root)
    except GrammarError as e:
        return e.diagnostics, e.warnings
    return [], grammar.warnings


def _run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    reports: list[dict[str, Any]] = []
    status = EXIT_OK
    for path in args.files:
        name = "<stdin>" if path == "-" else path
        try:
            errors, warnings = _check_one(path, args.root)
        except OSError as e:
            print(f"{name}: error[io]: cannot read file: {e.strerror or e}", file=err)
            return EXIT_USAGE
        if errors:
            status = EXIT_ERRORS
        if args.json:
            reports.append(
                {
                    "file": name,
                    "ok": not errors,
                    "diagnostics": [d.to_dict() for d in [*errors, *warnings]],
                }
            )
        else:
            for d in [*errors, *warnings]:
                print(format_diagnostic(d, name), file=err)
    if args.json:
        json.dump(reports, out, indent=2, ensure_ascii=False)
        out.write("\n")
    return status


def _grammar_from_args(args: argparse.Namespace) -> Grammar:
    if args.grammar:
        with open(args.grammar, "rb") as f:
            return Grammar.from_gbnf(f.read())
    if args.schema:
        with open(args.schema, encoding="utf-8") as f:
            return Grammar.from_json_schema(f.read())
    if args.regex is not None:
        return Grammar.from_regex(args.regex)
    return Grammar.from_choices([c for c in args.choices.split(",") if c])


def _run_generate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .llama import logits_processor
    from .models import load_llama

    grammar = _grammar_from_args(args)
    llm = load_llama(args.model, progress=False)
    options: dict[str, Any] = {
        "max_tokens": args.max_tokens,
        "temperature": args.temperature,
        "seed": args.seed,
        "logits_processor": logits_processor(llm, grammar),
        "stream": args.stream,
    }
    if args.chat:
        messages = [{"role": "user", "content": args.prompt}]
        result = llm.create_chat_completion(messages, **options)
        pieces = (
            (c["choices"][0]["delta"].get("content") or "" for c in result)
            if args.stream
            else [result["choices"][0]["message"]["content"] or ""]
        )
    else:
        result = llm.create_completion(args.prompt, **options)
        pieces = (
            (c["choices"][0]["text"] for c in result)
            if args.stream
            else [result["choices"][0]["text"]]
        )
    for piece in pieces:
        out.write(piece)
        out.flush()
    out.write("\n")
    return EXIT_OK


def _run_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .demo import run_demo

    return run_demo(args.model, out=out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gbnf-sampler", description="Grammar-constrained sampling for local LLMs."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    check = commands.add_parser("check", help="check GBNF grammar files and report diagnostics")
    check.add_argument("files", nargs="+", metavar="FILE", help="grammar file, or - for stdin")
    check.add_argument("--root", default=DEFAULT_ROOT, help="name of the start rule")
    check.add_argument("--json", action="store_true", help="machine-readable diagnostics")
    check.set_defaults(run=_run_check)

    add_convert_parser(commands).set_defaults(run=lambda args, out, err: run_convert(args))

    demo = commands.add_parser("demo", help="constrained generation with the default model")
    demo.add_argument("--model", default=None, help="GGUF path (default: Gemma 3 270M)")
    demo.set_defaults(run=_run_demo)

    gen = commands.add_parser("generate", help="generate text constrained by a grammar")
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
    gen.set_defaults(run=_run_generate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args, sys.stdout, sys.stderr)
    except GrammarError as e:
        print(f"error[{e.code}]: {e}", file=sys.stderr)
        return EXIT_USAGE
    except (GbnfSamplerError, OSError, ValueError, ImportError) as e:
        # ModelError, SchemaError, a vocabulary mismatch, a missing file or package: one line.
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    return status


if __name__ == "__main__":
    sys.exit(main())
