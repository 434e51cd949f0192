"""Exceptions raised by gbnf-sampler. Every error carries structured data, not just a message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Diagnostic:
    """One error or warning about a grammar text.

    ``line`` and ``column`` are 1-based (the column counts code points); both are 0 when the
    message has no position. ``snippet`` is the source line the position is on.
    """

    severity: str  # "error" or "warning"
    code: str
    message: str
    hint: str
    line: int
    column: int
    width: int
    snippet: str
    rendered: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
            "line": self.line,
            "column": self.column,
            "width": self.width,
            "snippet": self.snippet,
        }


class GbnfSamplerError(Exception):
    """Base class of every error this package raises on purpose."""


class GrammarError(GbnfSamplerError, ValueError):
    """A grammar text that cannot be used. ``diagnostics`` lists every error found; the first one
    is the primary, and its fields are also the exception's own (``code``, ``line``, ...)."""

    def __init__(
        self, diagnostics: list[Diagnostic], warnings: list[Diagnostic] | None = None
    ) -> None:
        if not diagnostics:
            raise ValueError("GrammarError needs at least one diagnostic")
        primary = diagnostics[0]
        super().__init__(primary.rendered)
        self.diagnostics = list(diagnostics)
        self.warnings = list(warnings or [])
        self.code = primary.code
        self.line = primary.line
        self.column = primary.column
        self.snippet = primary.snippet
        self.hint = primary.hint

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.diagnostics, self.warnings))


class GrammarTooComplexError(GbnfSamplerError):
    """A resource limit was reached while matching (``limit`` names it, e.g. the live parser-state
    size). Raise the limit or simplify the grammar."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.limit, str(self)))


class SchemaError(GbnfSamplerError, ValueError):
    """A JSON Schema (or regex inside one) that cannot be compiled. ``path`` is a JSON pointer to
    the offending keyword (``""`` for the whole schema)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(f"{path or '/'}: {message}")
        self.message = message
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.path))


class StructuralTagError(GbnfSamplerError, ValueError):
    """A structural tag (or tool-format request) that cannot be compiled. ``path`` is a JSON
    pointer into the spec (``""`` for the whole spec)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(f"{path or '/'}: {message}")
        self.message = message
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.path))


class UnknownFormatError(GbnfSamplerError, KeyError):
    """A tool-call format name that the registry does not know (``known`` lists the names)."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(name)
        self.name = name
        self.known = list(known)

    def __str__(self) -> str:
        return f"unknown tool-call format {self.name!r}; known formats: {', '.join(self.known)}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.known))


__all__ = [
    "Diagnostic",
    "GbnfSamplerError",
    "GrammarError",
    "GrammarTooComplexError",
    "SchemaError",
    "StructuralTagError",
    "UnknownFormatError",
]
