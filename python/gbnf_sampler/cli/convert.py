"""``gbnf-sampler convert``: print the GBNF for a JSON Schema file (or a regex)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from ..errors import GrammarError, SchemaError
from ..regex.convert import regex_to_gbnf
from ..schema.api import schema_to_gbnf
from .status import EXIT_INVALID, EXIT_OK, EXIT_USAGE


def add_convert_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Adds the ``convert`` subcommand to an ``argparse`` subparsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "convert",
        help="print the GBNF grammar for a JSON Schema (or, with --regex, a regex)",
        description="Print the GBNF grammar for a JSON Schema file ('-' reads stdin), or with "
        "--regex for a regular expression given on the command line.",
    )
    parser.add_argument("source", help="schema file, '-' for stdin, or the regex with --regex")
    parser.add_argument("--regex", action="store_true", help="SOURCE is a regex (full match)")
    parser.add_argument(
        "--whitespace",
        choices=("flexible", "compact", "indent"),
        default="flexible",
        help="where whitespace may go (default: flexible)",
    )
    parser.add_argument(
        "--max-whitespace",
        type=int,
        default=None,
        help="longest run of spaces/tabs in flexible mode",
    )
    parser.add_argument(
        "--indent", type=int, default=2, help="indent width for --whitespace indent (default: 2)"
    )
    parser.add_argument(
        "--no-strict",
        dest="strict",
        action="store_false",
        help="relax unsupported keywords (with a warning) instead of failing",
    )
    parser.add_argument(
        "--no-additional-properties",
        dest="additional_properties",
        action="store_const",
        const=False,
        default=None,
        help="forbid properties a schema does not list (OpenAI strict mode)",
    )
    parser.add_argument(
        "--property-order",
        choices=("schema", "any"),
        default="schema",
        help="object members in the schema's order (default) or in any order",
    )
    parser.set_defaults(run=run_convert)
    return parser


def _schema_text(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    return Path(source).read_text(encoding="utf-8")


def run_convert(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Runs the command: the GBNF on ``out``; on failure a message on ``err`` and the status
    (EXIT_INVALID for a bad schema or regex, EXIT_USAGE for an unreadable file)."""
    try:
        if args.regex:
            text = regex_to_gbnf(args.source)
        else:
            options: dict[str, Any] = {
                "whitespace": args.whitespace,
                "strict": args.strict,
                "additional_properties": args.additional_properties,
                "indent": args.indent,
                "property_order": args.property_order,
            }
            if args.max_whitespace is not None:
                options["max_whitespace"] = args.max_whitespace
            text = schema_to_gbnf(_schema_text(args.source), **options)
    except OSError as e:
        print(f"gbnf-sampler convert: cannot read {args.source}: {e.strerror or e}", file=err)
        return EXIT_USAGE
    except (SchemaError, GrammarError) as e:
        print(f"gbnf-sampler convert: {e}", file=err)
        return EXIT_INVALID
    out.write(text)
    return EXIT_OK


__all__ = ["add_convert_parser", "run_convert"]
