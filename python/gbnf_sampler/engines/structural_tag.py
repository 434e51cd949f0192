"""Structural tags (the JSON that SGLang and vLLM pass through from OpenAI-style requests, in
xgrammar's format) as one GBNF grammar. A minimal converter for the engine adapters; it
covers the formats engines send for tool calls:

* the legacy form ``{"structures": [{"begin", "schema", "end"}...], "triggers": [...]}``
  (free text; a trigger starts one of the tags, whose body is JSON under ``schema``);
* ``{"type": "structural_tag", "format": F}`` with F one of ``const_string`` (``value``),
  ``json_schema`` (``json_schema``), ``grammar`` (GBNF, ``grammar``), ``regex`` (``pattern``),
  ``any_text``, ``sequence`` / ``or`` (``elements``), ``tag`` (``begin``, ``content``, ``end``:
  a string or a list of strings), ``triggered_tags`` (``triggers``, ``tags``, ``at_least_one``,
  ``stop_after_first``) and ``tags_with_separator`` (``tags``, ``separator``, ``at_least_one``,
  ``stop_after_first``).

Free text is the regular language "text in which no trigger occurs" (an Aho-Corasick style
automaton printed as rules), so a trigger always leads into a tag; ``any_text`` inside a tag
stops before the tag's end string. Other format types raise ``ValueError`` naming them.
"""

from __future__ import annotations

from typing import Any

from ..grammar import Grammar
from .gbnf_text import char_class, embed_rules, literal

ANY_TEXT = "[\\u0000-\\U0010FFFF]*"
_FORMATS = (
    "const_string",
    "json_schema",
    "grammar",
    "regex",
    "any_text",
    "sequence",
    "or",
    "tag",
    "triggered_tags",
    "tags_with_separator",
)


def structural_tag_grammar(tag: Any, *, whitespace: str = "flexible") -> Grammar:
    """The grammar of a structural tag (decoded JSON, legacy or ``format`` form)."""
    builder = _Builder(whitespace)
    root = builder.format(_format_of(tag), "format")
    builder.rules["root"] = root
    text = "\n".join(f"{name} ::= {body}" for name, body in builder.rules.items())
    return Grammar.from_gbnf(text)


def _format_of(tag: Any) -> dict[str, Any]:
    if not isinstance(tag, dict):
        raise ValueError(f"a structural tag must be a JSON object, got {type(tag).__name__}")
    if "structures" in tag:
        structures = _field(tag, "structures", list, "structural tag")
        tags = []
        for i, s in enumerate(structures):
            where = f"structures[{i}]"
            content = {"type": "json_schema", "json_schema": _field(s, "schema", dict, where)}
            tags.append({"type": "tag", "begin": _field(s, "begin", str, where), "content": content,
                         "end": _field(s, "end", str, where)})  # fmt: skip
        return {
            "type": "triggered_tags",
            "triggers": _field(tag, "triggers", list, "structural tag"),
            "tags": tags,
            "at_least_one": bool(tag.get("at_least_one", False)),
        }
    fmt: dict[str, Any] = _field(tag, "format", dict, "structural tag")
    if tag.get("type", "structural_tag") != "structural_tag":
        raise ValueError(f'a structural tag has "type": "structural_tag", got {tag["type"]!r}')
    return fmt


def _field(obj: Any, name: str, kind: type, where: str) -> Any:
    if not isinstance(obj, dict) or name not in obj:
        raise ValueError(f"{where}: missing {name!r}")
    value = obj[name]
    if not isinstance(value, kind):
        raise ValueError(f"{where}.{name} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _ends(value: Any, where: str) -> list[str]:
    ends = [value] if isinstance(value, str) else value
    if not isinstance(ends, list) or not ends or not all(isinstance(e, str) for e in ends):
        raise ValueError(f"{where}.end must be a string or a non-empty list of strings")
    return ends


class _Builder:
    """Collects GBNF rules; each ``format`` call returns a GBNF expression."""

    def __init__(self, whitespace: str) -> None:
        self.whitespace = whitespace
        self.rules: dict[str, str] = {}
        self._count = 0

    def _name(self, hint: str) -> str:
        self._count += 1
        return f"st{self._count}-{hint}"

    def _embed(self, grammar: Grammar, hint: str) -> str:
        prefix = self._name(hint) + "-"
        self.rules.update(embed_rules(grammar, prefix))
        return prefix + grammar.root

    def format(self, fmt: Any, where: str) -> str:
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind not in _FORMATS:
            raise ValueError(
                f"{where}: structural tag format type {kind!r} is not supported by gbnf_sampler "
                f"(supported: {', '.join(_FORMATS)})"
            )
        if kind == "const_string":
            return literal(_field(fmt, "value", str, where))
        if kind == "json_schema":
            schema = fmt.get("json_schema")
            schema = {} if schema is None else schema
            grammar = Grammar.from_json_schema(schema, whitespace=self.whitespace)
            return self._embed(grammar, "json")
        if kind == "grammar":
            return self._embed(Grammar.from_gbnf(_field(fmt, "grammar", str, where)), "gbnf")
        if kind == "regex":
            return self._embed(Grammar.from_regex(_field(fmt, "pattern", str, where)), "regex")
        if kind == "any_text":
            return ANY_TEXT
        if kind in ("sequence", "or"):
            parts = [
                self.format(e, f"{where}.elements[{i}]")
                for i, e in enumerate(_field(fmt, "elements", list, where))
            ]
            if not parts:
                raise ValueError(f"{where}.elements is empty")
            return "(" + (" " if kind == "sequence" else " | ").join(parts) + ")"
        if kind == "tag":
            return self._tag(fmt, where)
        return self._tags(fmt, where, kind)

    def _tag(self, fmt: Any, where: str) -> str:
        begin = _field(fmt, "begin", str, where)
        ends = _ends(fmt.get("end"), where)
        content = fmt.get("content")
        end = "(" + " | ".join(literal(e) for e in ends) + ")"
        if isinstance(content, dict) and content.get("type") == "any_text":
            body = self._free_text(ends, "until-end")
        else:
            body = self.format(content, f"{where}.content")
        return f"{literal(begin)} {body} {end}"

    def _tags(self, fmt: Any, where: str, kind: str) -> str:
        specs = _field(fmt, "tags", list, where)
        tags = [self._tag(t, f"{where}.tags[{i}]") for i, t in enumerate(specs)]
        if not tags:
            raise ValueError(f"{where}.tags is empty")
        one = self._name("tag")
        self.rules[one] = " | ".join(tags)
        at_least_one = bool(fmt.get("at_least_one", False))
        first_only = bool(fmt.get("stop_after_first", False))
        if kind == "tags_with_separator":
            sep = literal(_field(fmt, "separator", str, where))
            body = one if first_only else f"{one} ({sep} {one})*"
            return body if at_least_one else f"({body})?"
        triggers = _field(fmt, "triggers", list, where)
        if not triggers or not all(isinstance(t, str) and t for t in triggers):
            raise ValueError(f"{where}.triggers must be a non-empty list of non-empty strings")
        for i, t in enumerate(specs):
            if not any(str(t.get("begin", "")).startswith(trigger) for trigger in triggers):
                raise ValueError(f"{where}.tags[{i}].begin does not start with any trigger")
        free = self._free_text(triggers, "free")
        if first_only:
            return f"{free} {one}" if at_least_one else f"{free} ({one})?"
        if at_least_one:
            return f"{free} {one} ({free} {one})* {free}"
        return f"{free} ({one} {free})*"

    def _free_text(self, forbidden: list[str], hint: str) -> str:
        """Rules for the text in which none of ``forbidden`` occurs; returns the start rule."""
        prefix = self._name(hint)
        self.rules.update(_avoiding_rules(forbidden, prefix))
        return f"{prefix}-0"


def _avoiding_rules(forbidden: list[str], prefix: str) -> dict[str, str]:
    """Right-recursive rules over the states of an automaton that tracks the longest suffix of
    the text that starts a forbidden string; a step completing one has no rule."""
    starts = sorted({w[:i] for w in forbidden for i in range(len(w))})
    index = {s: i for i, s in enumerate(starts)}  # "" is first: state 0
    alphabet = sorted({c for w in forbidden for c in w})
    rules = {}
    for state in starts:
        options = ['""', f"{char_class(alphabet, negated=True)} {prefix}-0"]
        for c in alphabet:
            text = state + c
            if any(text.endswith(w) for w in forbidden):
                continue
            nxt = next(text[i:] for i in range(len(text) + 1) if text[i:] in index)
            options.append(f"{literal(c)} {prefix}-{index[nxt]}")
        rules[f"{prefix}-{index[state]}"] = " | ".join(options)
    return rules


__all__ = ["structural_tag_grammar"]
