"""``gbnf-sampler check``: diagnostics for grammar and JSON Schema files, compiler style.

Errors first (the grammar cannot be used), then the doctor's warnings, each with a fix
(:mod:`gbnf_sampler.doctor`): exit status 0 with warnings only, 1 with errors (or, with
``--strict``, with warnings), 2 when a file cannot be read. A file is read as a JSON Schema with
``--schema`` or when it holds a JSON object; its warnings about the generated grammar are
reported against ``FILE (generated GBNF)``. ``--vocab MODEL.gguf`` adds the vocabulary checks,
``--dialect llama.cpp`` the stock llama.cpp ones (``--rewrite`` prints the grammar rewritten for
it on stdout).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from ..doctor import CODES, DIALECTS, Report, diagnose, diagnose_schema
from ..doctor.dialect import to_llama_cpp
from ..errors import Diagnostic, GrammarError, SchemaError
from ..grammar import DEFAULT_ROOT
from ..vocab import Vocab
from .status import EXIT_INVALID, EXIT_OK, EXIT_USAGE


def format_diagnostic(diagnostic: Diagnostic, filename: str) -> str:
    """``FILE:LINE:COL: error[code]: message (hint)`` followed by the snippet and caret."""
    where = f"{filename}:{diagnostic.line}:{diagnostic.column}" if diagnostic.line else filename
    text = f"{where}: {diagnostic.severity}[{diagnostic.code}]: {diagnostic.message}"
    if diagnostic.hint:
        text += f" ({diagnostic.hint})"
    # The rendering ends with the snippet and caret lines; reuse them as they are.
    snippet = diagnostic.rendered.split("\n", 1)
    if diagnostic.line and len(snippet) == 2:
        text += "\n" + snippet[1]
    return text


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def _is_schema(data: bytes, forced: bool) -> bool:
    """``--schema``, or the text is a JSON object or boolean (GBNF never starts with one)."""
    if forced:
        return True
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:5]
    if not head.startswith((b"{", b"true", b"false")):
        return False
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def _check_one(data: bytes, args: argparse.Namespace, vocab: Vocab | None) -> Report:
    skip = set(args.skip or ())
    if _is_schema(data, args.schema):
        text = data.decode("utf-8-sig")
        options: dict[str, Any] = {}
        if args.additional_properties is not None:
            options["additional_properties"] = args.additional_properties
        try:
            return diagnose_schema(text, vocab=vocab, skip=skip, **options)
        except SchemaError as e:
            return Report(errors=[_schema_error(e)])
        except GrammarError as e:
            return Report(errors=list(e.diagnostics))
    return diagnose(data, root=args.root, vocab=vocab, dialect=args.dialect, skip=skip)


def _schema_error(e: SchemaError) -> Diagnostic:
    message = str(e)
    return Diagnostic("error", "schema", message, "", 0, 0, 1, "", message)


def _report_json(name: str, report: Report) -> dict[str, Any]:
    out: dict[str, Any] = {
        "file": name,
        "ok": report.ok,
        "diagnostics": [d.to_dict() for d in [*report.errors, *report.findings]],
    }
    if report.gbnf is not None:
        out["generated"] = [f.to_dict() for f in report.generated]
    if report.skipped:
        out["skipped"] = report.skipped
    return out


def _print_report(name: str, report: Report, err: TextIO) -> None:
    for d in [*report.errors, *report.findings]:
        print(format_diagnostic(d, name), file=err)
    for f in report.generated:
        print(format_diagnostic(f, f"{name} (generated GBNF)"), file=err)
    for note in report.skipped:
        print(f"{name}: note: check skipped: {note}", file=err)


def _load_vocab(path: str | None) -> Vocab | None:
    return None if path is None else Vocab.from_gguf(path)


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.rewrite and (args.dialect != "llama.cpp" or len(args.files) != 1):
        print("gbnf-sampler check: --rewrite needs --dialect llama.cpp and one file", file=err)
        return EXIT_USAGE
    vocab = _load_vocab(args.vocab)
    reports: list[dict[str, Any]] = []
    status = EXIT_OK
    for path in args.files:
        name = "<stdin>" if path == "-" else path
        try:
            data = _read(path)
        except OSError as e:
            print(f"{name}: error[io]: cannot read file: {e.strerror or e}", file=err)
            return EXIT_USAGE
        report = _check_one(data, args, vocab)
        if not report.ok or (args.strict and report.all_findings):
            status = EXIT_INVALID
        if args.json:
            reports.append(_report_json(name, report))
        else:
            _print_report(name, report, err)
        if args.rewrite and report.ok:
            out.write(to_llama_cpp(data.decode("utf-8", "surrogateescape"), args.root))
    if args.json:
        json.dump(reports, out, indent=2, ensure_ascii=False)
        out.write("\n")
    return status


def add_check_parser(commands: Any) -> argparse.ArgumentParser:
    check: argparse.ArgumentParser = commands.add_parser(
        "check",
        help="check grammar (or JSON Schema) files: errors, and warnings with fixes",
        description="Warnings: " + "; ".join(f"{c}: {d}" for c, d in CODES.items()),
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="grammar file, or - for stdin")
    check.add_argument("--root", default=DEFAULT_ROOT, help="name of the start rule")
    check.add_argument("--json", action="store_true", help="machine-readable diagnostics")
    check.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    check.add_argument("--schema", action="store_true", help="read the files as JSON Schemas")
    check.add_argument(
        "--no-additional-properties",
        dest="additional_properties",
        action="store_const",
        const=False,
        default=None,
        help="(schemas) convert as with --no-additional-properties",
    )
    check.add_argument("--vocab", metavar="MODEL.gguf", help="also check against a vocabulary")
    check.add_argument("--dialect", choices=DIALECTS, help="also check for stock llama.cpp")
    check.add_argument(
        "--rewrite", action="store_true", help="print the grammar rewritten for the --dialect"
    )
    check.add_argument(
        "--skip", action="append", metavar="CODE", choices=sorted(CODES), help="skip a check"
    )
    check.set_defaults(run=run_check)
    return check


__all__ = ["add_check_parser", "format_diagnostic", "run_check"]
