"""The grammar of an engine request: ``grammar_for(kind, spec)``.

Kinds (the union of what SGLang and vLLM send; each adapter maps its own names onto these):

* ``json``: a JSON Schema as JSON text; ``""`` or SGLang's ``"$$ANY$$"`` for any JSON value.
* ``json_object``: any JSON object (vLLM's ``json_object``, OpenAI's ``{"type": "json_object"}``).
* ``regex``: a regex in the ECMA-262 dialect of JSON Schema's ``pattern``, matched in full.
* ``gbnf``: GBNF text (llama.cpp's grammar language; SGLang calls it ``ebnf``, vLLM
  ``grammar``), root rule ``root``. Lark grammars are refused with a hint.
* ``choice``: a JSON list of strings, exactly one of which is generated.
* ``structural_tag``: a structural tag as JSON text in xgrammar's format (``format``, or the
  older ``structures``/``triggers``), compiled by ``Grammar.from_structural_tag``
  (:mod:`gbnf_sampler.structural`) for the engine's vocabulary: text that spells one of its
  special tokens is that token.

Errors are the package's own (:class:`GrammarError` with line and column;
:class:`SchemaError` and :class:`StructuralTagError` with a JSON pointer) or a ``ValueError``
naming the kind; the adapters turn them into the engine's per-request failure.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..grammar import Grammar
from ..structural import from_structural_tag
from ..vocab import Vocab

KINDS = ("json", "json_object", "regex", "gbnf", "choice", "structural_tag")
ANY_JSON = "$$ANY$$"  # SGLang's spelling of "any JSON value"
WHITESPACE_MODES = ("flexible", "compact")

# A Lark rule ("name: ..." or "?name: ...") on a line of a grammar that has no "::=" at all.
_LARK_RULE = re.compile(r"^\s*[?!]?[a-z_][a-z0-9_]*\s*:(?!:=)", re.MULTILINE)


def grammar_for(
    kind: str, spec: str, *, whitespace: str = "flexible", vocab: Vocab | None = None
) -> Grammar:
    """The grammar of one request. ``whitespace`` applies to JSON requests: ``"flexible"``
    (spaces and one newline allowed between tokens, bounded) or ``"compact"`` (none); a
    structural tag's schemas follow the tag's own ``max_whitespace_cnt``. ``vocab``: the
    vocabulary the grammar is for (structural tags match its special tokens as tokens)."""
    if whitespace not in WHITESPACE_MODES:
        raise ValueError(f"whitespace must be one of {WHITESPACE_MODES}, got {whitespace!r}")
    if not isinstance(spec, str):
        raise TypeError(f"the {kind} spec must be a str, got {type(spec).__name__}")
    if kind == "json":
        if spec.strip() in ("", ANY_JSON):
            return Grammar.json()
        return Grammar.from_json_schema(_json_text(spec, "JSON schema"), whitespace=whitespace)
    if kind == "json_object":
        return Grammar.from_json_schema({"type": "object"}, whitespace=whitespace)
    if kind == "regex":
        return Grammar.from_regex(spec)
    if kind == "gbnf":
        if "::=" not in spec and _LARK_RULE.search(spec):
            raise ValueError(
                "this grammar looks like Lark (rule: ...); gbnf_sampler reads GBNF, llama.cpp's "
                'grammar language: write rules as name ::= ..., e.g. root ::= "yes" | "no"'
            )
        return Grammar.from_gbnf(spec)
    if kind == "choice":
        return Grammar.from_choices(_choices(spec))
    if kind == "structural_tag":
        return from_structural_tag(_json_text(spec, "structural tag"), vocab=vocab)
    raise ValueError(f"unknown request kind {kind!r}; expected one of {KINDS}")


def _json_text(spec: str, what: str) -> Any:
    try:
        return json.loads(spec)
    except json.JSONDecodeError as e:
        raise ValueError(
            f"the {what} is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}"
        ) from None


def _choices(spec: str) -> list[str]:
    choices = _json_text(spec, "choice list")
    if not isinstance(choices, list) or not choices:
        raise ValueError(f"choice must be a non-empty JSON list of strings, got {spec[:80]!r}")
    for i, choice in enumerate(choices):
        if not isinstance(choice, str):
            raise ValueError(f"choice[{i}] must be a string, got {type(choice).__name__}")
    return choices


__all__ = ["ANY_JSON", "KINDS", "WHITESPACE_MODES", "grammar_for"]
