"""``gbnf-sampler explain``: why a grammar refuses a text (:meth:`Matcher.explain`).

Exit status 0 when the grammar accepts the whole text, 1 when it refuses it (the explanation
on stdout), 2 when the command cannot run.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from ..compiled import compile as compile_grammar
from ..grammar import DEFAULT_ROOT, Grammar
from ..matcher import Matcher
from ..vocab import Vocab
from .status import EXIT_INVALID, EXIT_OK


def _grammar(args: argparse.Namespace) -> Grammar:
    if args.grammar:
        with open(args.grammar, "rb") as f:
            return Grammar.from_gbnf(f.read(), root=args.root)
    with open(args.schema, encoding="utf-8") as f:
        return Grammar.from_json_schema(f.read())


def _text(args: argparse.Namespace) -> bytes:
    if args.text is not None:
        return str(args.text).encode("utf-8")
    if args.file == "-":
        return sys.stdin.buffer.read()
    with open(args.file, "rb") as f:
        return f.read()


def run_explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    grammar = _grammar(args)
    data = _text(args)
    if args.vocab:
        matcher = Matcher(compile_grammar(grammar, Vocab.from_gguf(args.vocab)))
    else:
        matcher = Matcher(grammar)
    explanation = matcher.explain(data)
    if args.json:
        json.dump(explanation.to_dict(), out, indent=2)
        out.write("\n")
    else:
        print(explanation, file=out)
    return EXIT_OK if explanation.accepted and explanation.complete else EXIT_INVALID


def add_explain_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "explain", help="explain why a grammar refuses a text"
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--grammar", metavar="G.gbnf", help="GBNF grammar file")
    source.add_argument("--schema", metavar="S.json", help="JSON Schema file")
    text = parser.add_mutually_exclusive_group(required=True)
    text.add_argument("--text", metavar="T", help="the text to explain")
    text.add_argument("--file", metavar="F", help="file holding the text (- for stdin)")
    parser.add_argument("--root", default=DEFAULT_ROOT, help="name of the start rule")
    parser.add_argument("--vocab", metavar="MODEL.gguf", help="also list the allowed tokens")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run_explain)
    return parser


__all__ = ["add_explain_parser", "run_explain"]
