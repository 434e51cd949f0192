"""``gbnf-sampler check``: diagnostics for grammar files, compiler style."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from ..errors import Diagnostic, GrammarError
from ..grammar import DEFAULT_ROOT, Grammar
from .status import EXIT_INVALID, EXIT_OK, EXIT_USAGE


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


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
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
            status = EXIT_INVALID
        if args.json:
            diagnostics = [d.to_dict() for d in [*errors, *warnings]]
            reports.append({"file": name, "ok": not errors, "diagnostics": diagnostics})
        else:
            for d in [*errors, *warnings]:
                print(format_diagnostic(d, name), file=err)
    if args.json:
        json.dump(reports, out, indent=2, ensure_ascii=False)
        out.write("\n")
    return status


def add_check_parser(commands: Any) -> argparse.ArgumentParser:
    check: argparse.ArgumentParser = commands.add_parser(
        "check", help="check GBNF grammar files and report diagnostics"
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="grammar file, or - for stdin")
    check.add_argument("--root", default=DEFAULT_ROOT, help="name of the start rule")
    check.add_argument("--json", action="store_true", help="machine-readable diagnostics")
    check.set_defaults(run=run_check)
    return check


__all__ = ["add_check_parser", "format_diagnostic", "run_check"]
