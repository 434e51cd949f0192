"""The ``gbnf-sampler`` command line: ``check`` (diagnostics for grammar files), ``convert``
(JSON Schema or regex to GBNF), ``generate`` (constrained generation with any GGUF model),
``demo`` (the main job on the embedded model) and ``serve`` (an OpenAI/Ollama-compatible
server). Exit statuses: :mod:`.status`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..errors import GbnfSamplerError, GrammarError, SchemaError
from .check import add_check_parser
from .convert import add_convert_parser
from .demo import add_demo_parser
from .generate import add_generate_parser
from .serve import add_serve_parser
from .status import EXIT_INVALID, EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gbnf-sampler", description="Grammar-constrained sampling for local LLMs."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_check_parser(commands)
    add_convert_parser(commands)
    add_demo_parser(commands)
    add_generate_parser(commands)
    add_serve_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args, sys.stdout, sys.stderr)
    except GrammarError as e:
        print(f"error[{e.code}]: {e}", file=sys.stderr)
        return EXIT_INVALID
    except SchemaError as e:
        print(f"error[schema]: {e}", file=sys.stderr)
        return EXIT_INVALID
    except (GbnfSamplerError, OSError, ValueError, ImportError) as e:
        # ModelError, a vocabulary mismatch, a missing file or package: one line.
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    return status


if __name__ == "__main__":
    sys.exit(main())
