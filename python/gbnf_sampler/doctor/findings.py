"""``Finding``: one generation hazard the doctor found, a :class:`~gbnf_sampler.Diagnostic` with
a concrete fix.

A finding is a warning (the grammar is valid): ``code`` names the hazard, ``line``/``column``
(1-based, the column counts code points) point at the construct to change, ``snippet`` is its
source line and ``fix`` (also the diagnostic's ``hint``) says what to write instead. Findings
about a JSON Schema carry the JSON ``pointer`` of the schema location; llama.cpp dialect findings
carry ``replacement`` (the rewritten text) and ``edits`` (source spans and their new text:
:meth:`Finding.apply` makes them).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from ..errors import Diagnostic

SNIPPET_WINDOW = 100  # code points of a long line shown around the caret (as the core does)


@dataclass(frozen=True)
class Finding(Diagnostic):
    """A doctor warning: a :class:`Diagnostic` (``hint`` == ``fix``) plus the fix and context."""

    fix: str = ""
    rule: str = ""
    pointer: str | None = None
    replacement: str | None = None
    edits: tuple[tuple[int, int, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["fix"] = self.fix
        if self.rule:
            out["rule"] = self.rule
        if self.pointer is not None:
            out["pointer"] = self.pointer
        if self.replacement is not None:
            out["replacement"] = self.replacement
        if self.edits:
            out["edits"] = [{"start": a, "end": b, "text": t} for a, b, t in self.edits]
        return out

    def apply(self, text: str) -> str:
        """``text`` (the source the finding is about) with this finding's edits made."""
        return apply_edits(text, self.edits)


def apply_edits(text: str, edits: tuple[tuple[int, int, str], ...]) -> str:
    """Replaces each ``text[start:end]`` by its new text (non-overlapping spans)."""
    out = []
    last = 0
    for start, end, new in sorted(edits):
        out.append(text[last:start])
        out.append(new)
        last = end
    return "".join(out) + text[last:]


class LineIndex:
    """Line starts of a text (``\\n``, ``\\r\\n`` and ``\\r`` end lines, as in the core), for
    turning offsets (str indices) into 1-based line and column."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in _BREAK.finditer(text))]

    def locate(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        index = bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def line_text(self, line: int) -> str:
        start = self.starts[line - 1]
        found = _BREAK.search(self.text, start)
        return self.text[start : found.start() if found else len(self.text)]


_BREAK = re.compile(r"\r\n|\r|\n")


def render(line: int, column: int, width: int, snippet: str, message: str, fix: str) -> str:
    """The core's diagnostic layout: ``line L, column C: message (fix)``, the source line and a
    caret under the column (long lines cut to a window around it)."""
    out = f"line {line}, column {column}: {message}" if line else message
    if fix:
        out += f" ({fix})"
    if not line:
        return out
    caret = max(column - 1, 0)
    first = caret - SNIPPET_WINDOW // 2 if caret > SNIPPET_WINDOW // 2 else 0
    prefix = "..." if first else ""
    shown = snippet[first : first + SNIPPET_WINDOW]
    suffix = "..." if first + SNIPPET_WINDOW < len(snippet) else ""
    gutter = " " * (len(str(line)) + 1)
    pad = "".join("\t" if c == "\t" else " " for c in snippet[first:caret])
    return (
        f"{out}\n {line} | {prefix}{shown}{suffix}\n{gutter} | "
        f"{' ' * len(prefix)}{pad}{'^' * max(width, 1)}"
    )


def make_finding(
    code: str,
    message: str,
    fix: str,
    *,
    index: LineIndex | None = None,
    start: int = 0,
    end: int | None = None,
    rule: str = "",
    pointer: str | None = None,
    replacement: str | None = None,
    edits: tuple[tuple[int, int, str], ...] = (),
) -> Finding:
    """A finding at ``text[start:end]`` (no position when ``index`` is None)."""
    line = column = 0
    snippet = ""
    width = 1
    if index is not None:
        line, column = index.locate(start)
        snippet = index.line_text(line)
        stop = len(index.text) if end is None else end
        width = max(1, min(stop, index.starts[line - 1] + len(snippet)) - start)
    return Finding(
        severity="warning",
        code=code,
        message=message,
        hint=fix,
        line=line,
        column=column,
        width=width,
        snippet=snippet,
        rendered=render(line, column, width, snippet, message, fix),
        fix=fix,
        rule=rule,
        pointer=pointer,
        replacement=replacement,
        edits=edits,
    )


__all__ = ["Finding", "LineIndex", "apply_edits", "make_finding", "render"]
