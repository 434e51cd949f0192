"""The doctor's entry points: :func:`diagnose` (a GBNF grammar) and :func:`diagnose_schema` (a
JSON Schema: its own checks plus the grammar's)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..errors import Diagnostic, GrammarError
from ..grammar import DEFAULT_ROOT, Grammar
from ..limits import DOCTOR_RECURSION_LIMIT as RECURSION_LIMIT
from ..schema import schema_to_gbnf
from ..vocab import Vocab
from .checks import check_empty_output, check_unbounded_filler, core_findings
from .dialect import check_llama_cpp
from .facts import Facts
from .findings import Finding
from .growth import check_growth
from .locate import Locator
from .schema_checks import check_endless_extras
from .shadow import check_shadowed
from .source import ParsedSource, source_of_grammar
from .vocab_checks import check_vocab

# Every code the doctor reports, with what it means (the README's table is built from this).
CODES: dict[str, str] = {
    "empty_output": "the root can match the empty string: EOS is allowed before any output",
    "unbounded_filler": "endless whitespace where the output could otherwise end",
    "endless_extras": "(schema) an object or array with no bound on extra properties / items",
    "ambiguous_growth": "measured: the matcher state grows with the input (ambiguity)",
    "unused_rule": "a rule nothing references (from the core)",
    "unreachable_rule": "a rule only unreachable rules reference (from the core)",
    "redefined_rule": "a rule defined twice; the last definition wins (from the core)",
    "shadowed_alternative": "an alternative another alternative of the same choice covers",
    "unspellable": "(--vocab) a literal no sequence of ordinary tokens can write",
    "no_start": "(--vocab) no token can begin the output",
    "llama_cpp": "(--dialect llama.cpp) a construct stock llama.cpp rejects or reads otherwise",
}
DIALECTS = ("llama.cpp",)


@dataclass
class Report:
    """What the doctor found: ``errors`` (the grammar did not parse: nothing else ran) and
    ``findings`` (warnings with fixes), in source order. For a schema, ``generated`` holds the
    findings about the generated grammar ``gbnf`` (their positions point into it). ``skipped``
    names the checks that could not run (a grammar nested deeper than Python's recursion limit
    lets them walk)."""

    errors: list[Diagnostic] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    grammar: Grammar | None = None
    generated: list[Finding] = field(default_factory=list)
    gbnf: str | None = None
    skipped: list[str] = field(default_factory=list)

    @property
    def all_findings(self) -> list[Finding]:
        return self.findings + self.generated

    @property
    def ok(self) -> bool:
        return not self.errors


def _text(source: str | bytes) -> str:
    if isinstance(source, bytes):
        return source.decode("utf-8", "surrogateescape")
    return source


def diagnose(
    source: str | bytes | Grammar,
    *,
    root: str = DEFAULT_ROOT,
    vocab: Vocab | None = None,
    dialect: str | None = None,
    skip: Collection[str] = (),
) -> Report:
    """Checks a GBNF grammar for generation hazards. ``source``: GBNF text (positions point into
    it) or a :class:`Grammar` (then into its canonical text). ``vocab`` adds ``unspellable`` and
    ``no_start``; ``dialect="llama.cpp"`` adds the stock llama.cpp checks; ``skip`` names codes
    not to run (e.g. ``{"ambiguous_growth"}``, the only check that runs the matcher)."""
    if dialect is not None and dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
    if isinstance(source, Grammar):
        grammar, text = source, source.to_gbnf()
    else:
        text = _text(source)
        try:
            grammar = Grammar.from_gbnf(source, root=root)
        except GrammarError as e:
            return Report(errors=list(e.diagnostics), findings=core_findings(e.warnings))
    skipped: list[str] = []
    with_dialect = dialect == "llama.cpp" and "llama_cpp" not in skip
    parsed: ParsedSource | None = None
    if with_dialect:
        # Read first: the positioned trees then serve as grammar.rules for every check.
        with _gc_paused():
            try:
                parsed = source_of_grammar(grammar, text)
            except RecursionError:
                parsed = None  # the dialect check meets it again and reports itself skipped
    try:
        findings, facts = _grammar_findings(grammar, text, vocab, set(skip), skipped)
    except GrammarError as e:  # token references the vocabulary cannot resolve
        return Report(errors=list(e.diagnostics), grammar=grammar)
    if with_dialect:
        with _gc_paused():
            findings += _guarded(
                "llama_cpp",
                skipped,
                lambda: check_llama_cpp(text, grammar, facts, parsed),
            )
    return Report(findings=_ordered(findings), grammar=grammar, skipped=skipped)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Python's cyclic collector paused while the doctor builds and walks large syntax trees
    (none of them holds a cycle; the collector's passes over them cost more than the checks),
    and the recursion limit raised to :data:`RECURSION_LIMIT` for the recursive walks."""
    enabled = gc.isenabled()
    limit = sys.getrecursionlimit()
    gc.disable()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
        if enabled:
            gc.enable()


def _grammar_findings(
    grammar: Grammar, text: str, vocab: Vocab | None, skip: set[str], skipped: list[str]
) -> tuple[list[Finding], Facts]:
    """The findings, and the facts they were drawn from (the dialect check shares them)."""
    with _gc_paused():
        return _run_checks(grammar, text, vocab, skip, skipped)


def _guarded(code: str, skipped: list[str], run: Callable[[], list[Finding]]) -> list[Finding]:
    try:
        return run()
    except RecursionError:
        skipped.append(f"{code}: the grammar nests too deeply for this check")
        return []


def _run_checks(
    grammar: Grammar, text: str, vocab: Vocab | None, skip: set[str], skipped: list[str]
) -> tuple[list[Finding], Facts]:
    rules = grammar._rules_on_demand()  # the checks visit few rules of a large grammar
    facts = Facts(rules, grammar.root, grammar._core)
    loc = Locator(text, rules)
    findings = core_findings(grammar.warnings)
    checks = [
        ("empty_output", check_empty_output),
        ("unbounded_filler", check_unbounded_filler),
        ("shadowed_alternative", check_shadowed),
        ("ambiguous_growth", check_growth),
    ]
    for code, check in checks:
        if code not in skip:
            findings += _guarded(code, skipped, lambda c=check: c(facts, loc))  # type: ignore[misc]
    if vocab is not None:
        findings += _guarded(
            "unspellable, no_start",
            skipped,
            lambda: check_vocab(grammar, facts, loc, vocab, skip),
        )
    return [f for f in findings if f.code not in skip], facts


def _ordered(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.line == 0, f.line, f.column, f.code))


# Warnings about the converter's own output that a schema author cannot act on.
CONVERTER_ARTIFACTS = frozenset({"unused_rule", "unreachable_rule", "redefined_rule"})


def diagnose_schema(
    schema: Any,
    *,
    source_text: str | None = None,
    vocab: Vocab | None = None,
    skip: Collection[str] = (),
    **options: Any,
) -> Report:
    """Checks a JSON Schema (dict, JSON text or Pydantic model class): ``endless_extras`` in
    ``findings`` (positions in ``source_text``, the schema file; JSON text given as ``schema``
    is used when it is omitted), and the grammar ``schema_to_gbnf(schema, **options)`` (raises
    SchemaError) in ``generated`` (positions in ``gbnf``), without the converter's unused-rule
    warnings."""
    gbnf = schema_to_gbnf(schema, **options)
    grammar = Grammar.from_gbnf(gbnf)
    text = source_text if source_text is not None else schema if isinstance(schema, str) else None
    findings = []
    if "endless_extras" not in skip:
        findings += check_endless_extras(schema, text, options.get("additional_properties"))
    skipped: list[str] = []
    generated, _ = _grammar_findings(grammar, gbnf, vocab, set(skip) | CONVERTER_ARTIFACTS, skipped)
    return Report(
        findings=findings,
        grammar=grammar,
        generated=_ordered(generated),
        gbnf=gbnf,
        skipped=skipped,
    )


__all__ = ["CODES", "DIALECTS", "Report", "diagnose", "diagnose_schema"]
