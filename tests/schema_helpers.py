"""Helpers for the JSON Schema / regex converter tests.

``accepts(grammar, text)`` answers with the byte-level ``gs.Matcher`` when it exists, else with
the Earley reference (``tests/reference.py``). The reference needs the rules as syntax trees: from
``Grammar.rules`` once the GBNF parser is built, else from the small GBNF reader below (only used
until the C++ parser lands; it reads the subset of GBNF the converters print).
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import gbnf_sampler as gs
from gbnf_sampler import syntax as gast

try:
    from reference import Reference
except ImportError:  # pragma: no cover - the reference lives on its own branch until merged
    Reference = None  # type: ignore[assignment,misc]


# --- a small GBNF reader (fallback) --------------------------------------------------------------

_ESCAPES = {"n": 10, "r": 13, "t": 9, "\\": 92, '"': 34, "[": 91, "]": 93, "-": 45, "^": 94}


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def ws(self, newlines: bool = False) -> None:
        while self.i < len(self.s) and (
            self.s[self.i] in " \t" or (newlines and self.s[self.i] in "\r\n")
        ):
            self.i += 1

    def escape(self) -> int:
        c = self.s[self.i]
        self.i += 1
        width = {"x": 2, "u": 4, "U": 8}.get(c)
        if width:
            cp = int(self.s[self.i : self.i + width], 16)
            self.i += width
            return cp
        return _ESCAPES[c]

    def char(self) -> int:
        c = self.s[self.i]
        self.i += 1
        return self.escape() if c == "\\" else ord(c)

    def rules(self) -> dict[str, gast.Node]:
        out: dict[str, gast.Node] = {}
        self.ws(True)
        while self.i < len(self.s):
            m = re.compile(r"([A-Za-z0-9_-]+)\s*::=").match(self.s, self.i)
            if m is None:
                raise ValueError(f"cannot read rule at {self.s[self.i : self.i + 40]!r}")
            self.i = m.end()
            out[m.group(1)] = self.alternation()
            self.ws(True)
        return out

    def alternation(self) -> gast.Node:
        items = [self.sequence()]
        while True:
            self.ws()
            if self.s.startswith("|", self.i):
                self.i += 1
                self.ws(True)
                items.append(self.sequence())
            else:
                break
        return items[0] if len(items) == 1 else gast.Alternation(tuple(items))

    def sequence(self) -> gast.Node:
        items: list[gast.Node] = []
        while True:
            self.ws()
            if self.i >= len(self.s) or self.s[self.i] in "|)\r\n":
                break
            items.append(self.postfix(self.atom()))
        return items[0] if len(items) == 1 else gast.Sequence(tuple(items))

    def atom(self) -> gast.Node:
        c = self.s[self.i]
        if c == '"':
            self.i += 1
            cps = []
            while self.s[self.i] != '"':
                cps.append(self.char())
            self.i += 1
            return gast.Literal(tuple(cps))
        if c == "[":
            self.i += 1
            negated = self.s[self.i] == "^"
            self.i += negated
            ranges = []
            while self.s[self.i] != "]":
                lo = self.char()
                hi = lo
                if self.s[self.i] == "-" and self.s[self.i + 1] != "]":
                    self.i += 1
                    hi = self.char()
                ranges.append((lo, hi))
            self.i += 1
            return gast.CharClass(tuple(ranges), negated)
        if c == ".":
            self.i += 1
            return gast.AnyChar()
        if c == "(":
            self.i += 1
            self.ws(True)
            node = self.alternation()
            self.ws(True)
            self.i += 1
            return node
        m = re.compile(r"[A-Za-z0-9_-]+").match(self.s, self.i)
        if m is None:
            raise ValueError(f"cannot read {self.s[self.i : self.i + 40]!r}")
        self.i = m.end()
        return gast.RuleRef(m.group(0))

    def postfix(self, node: gast.Node) -> gast.Node:
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in "*+?":
                self.i += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
                node = gast.Repeat(node, lo, hi)
            elif c == "{":
                end = self.s.index("}", self.i)
                body = self.s[self.i + 1 : end]
                self.i = end + 1
                if "," in body:
                    a, b = body.split(",")
                    node = gast.Repeat(node, int(a or 0), int(b) if b else None)
                else:
                    node = gast.Repeat(node, int(body), int(body))
            else:
                break
        return node


def read_gbnf(text: str) -> dict[str, gast.Node]:
    return _Reader(text).rules()


# --- acceptance ----------------------------------------------------------------------------------


def _parser_available() -> bool:
    try:
        gs.Grammar.from_gbnf('root ::= "a"')
    except (AttributeError, NotImplementedError, RuntimeError):
        return False
    return True


PARSER = _parser_available()
MATCHER = hasattr(gs, "Matcher") and PARSER


@functools.lru_cache(maxsize=256)
def _reference(text: str) -> Any:
    if Reference is None:
        raise RuntimeError("neither gs.Matcher nor tests/reference.py is available")
    if PARSER:
        return Reference.from_grammar(gs.Grammar.from_gbnf(text))
    return Reference(read_gbnf(text), "root")


def compile_text(grammar: Any) -> str:
    return grammar if isinstance(grammar, str) else grammar.to_gbnf()


def accepts(grammar: Any, text: str) -> bool:
    """Whether the grammar (a ``gs.Grammar`` or GBNF text) accepts ``text`` entirely."""
    data = text.encode("utf-8", "surrogatepass")
    if MATCHER:
        g = grammar if isinstance(grammar, gs.Grammar) else gs.Grammar.from_gbnf(grammar)
        m = gs.Matcher(g)
        return bool(m.accept_bytes(data)) and bool(m.can_terminate())
    return bool(_reference(compile_text(grammar)).accepts(data))


def dumps_styles(value: Any, whitespace: str = "flexible") -> list[str]:
    """Serializations of ``value`` that the given whitespace mode must accept."""
    if whitespace == "compact":
        return list(
            dict.fromkeys(
                [
                    json.dumps(value, separators=(",", ":"), ensure_ascii=False),
                    json.dumps(value, separators=(",", ":")),
                ]
            )
        )
    if whitespace == "indent":
        return [json.dumps(value, indent=2)]
    return list(
        dict.fromkeys(
            [
                json.dumps(value),
                json.dumps(value, separators=(",", ":"), ensure_ascii=False),
                json.dumps(value, indent=2),
                json.dumps(value, indent="\t", ensure_ascii=False),
            ]
        )
    )


def assert_decides(grammar: Any, valid: list[Any], invalid: list[Any]) -> None:
    """The grammar accepts every valid value and refuses every invalid one, in every
    serialization ``dumps_styles`` gives."""
    for instance in valid:
        for text in dumps_styles(instance):
            assert accepts(grammar, text), text
    for instance in invalid:
        for text in dumps_styles(instance):
            assert not accepts(grammar, text), text
