"""Triggered (lazy) grammars: free text until a trigger, then a body grammar.

``Grammar.triggered(body, triggers)`` is an ordinary :class:`~gbnf_sampler.Grammar` whose
language is: free text in which no trigger occurs, then the first trigger, then the body. The
output may also end in the free text (unless ``required`` or ``at_start``). Triggers, as in
llama.cpp's ``grammar_triggers``:

* ``Trigger.literal("<tool_call>")`` (or the plain string): the text, anywhere;
* ``Trigger.regex(r"\\[TOOL_CALLS\\]|<tool_call>")``: the shortest text ending with a match
  (``anchored=True``: a match that starts at the beginning of the output, llama.cpp's
  ``pattern_full``);
* ``Trigger.token(128010)`` / ``Trigger.token("<|python_tag|>")``: one vocabulary token, written
  in the grammar as a token reference (resolved against the vocabulary by ``gs.compile``). Free
  text never contains special tokens, so a special token needs no search; a token that is also
  plain text (a non-special id) should be given as a literal too.

Where the trigger goes: by default (``trigger_in_body=False``) the trigger's text is part of the
free stretch and the body follows it: ``<tool_call>`` then ``{"name": ...}``. With
``trigger_in_body=True`` the body's own language starts with the trigger, which is what
llama.cpp's lazy grammars do (the grammar is run on the text from the trigger's first byte, so
a llama.cpp lazy grammar ports as is): ``root ::= "<tool_call>" ...``. Regex triggers only take
the first form (where a match starts is not known until it ends).

Either way the trigger is matched byte by byte inside the grammar: a token that completes the
trigger and runs on into the body is allowed exactly when its remaining bytes fit the body, and
text inside the body is never searched for triggers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import SchemaError
from ..grammar import Grammar, register_constructor
from ..limits import MAX_TRIGGERS
from ..regex import lookaround, parser, tree
from .free_text import PrefixStop, TextStop, free_text
from .rules import RuleSet, alternatives, literal, token_ref

_KINDS = ("literal", "regex", "token")


@dataclass(frozen=True)
class Trigger:
    """What switches a triggered grammar from free text to its body (see the module doc)."""

    kind: str
    value: str | int
    anchored: bool = False

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"Trigger kind must be one of {_KINDS}, not {self.kind!r}")
        if self.kind == "token":
            if not isinstance(self.value, (int, str)) or isinstance(self.value, bool):
                raise TypeError("a token trigger is a token id (int) or its <text>")
            token_ref(self.value)  # validates the text form
            if isinstance(self.value, int) and self.value < 0:
                raise ValueError(f"token id must be >= 0, got {self.value}")
        elif not isinstance(self.value, str) or not self.value:
            raise ValueError(f"a {self.kind} trigger needs a non-empty string")

    @classmethod
    def literal(cls, text: str) -> Trigger:
        return cls("literal", text)

    @classmethod
    def regex(cls, pattern: str, *, anchored: bool = False) -> Trigger:
        return cls("regex", pattern, anchored)

    @classmethod
    def token(cls, token: int | str) -> Trigger:
        return cls("token", token)

    @classmethod
    def coerce(cls, value: Any) -> Trigger:
        """A Trigger from what users write: a Trigger, a string (literal), an int (token id),
        ``{"regex": p}``, ``{"literal": t}``, ``{"token": id_or_text}``, or llama.cpp's
        ``{"type": "word" | "pattern" | "pattern_full" | "token", "value": ..., "token": id}``."""
        if isinstance(value, Trigger):
            return value
        if isinstance(value, str):
            return cls.literal(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return cls.token(value)
        if isinstance(value, Mapping):
            return _from_mapping(value)
        raise TypeError(
            "a trigger is a string, a token id, a gs.Trigger or a dict such as "
            f'{{"regex": ...}}, not {type(value).__name__}'
        )


def _from_mapping(value: Mapping[str, Any]) -> Trigger:
    kind = value.get("type")
    if kind is None:
        for key in ("literal", "regex", "token"):
            if key in value:
                return Trigger(key, value[key], bool(value.get("anchored", False)))
        raise ValueError(f"a trigger dict needs 'literal', 'regex', 'token' or 'type': {value!r}")
    if kind in ("word", "literal"):
        return Trigger.literal(value.get("value", ""))
    if kind in ("pattern", "regex"):
        return Trigger.regex(value.get("value", ""))
    if kind == "pattern_full":
        return Trigger.regex(value.get("value", ""), anchored=True)
    if kind == "token":
        token = value.get("token", value.get("value"))
        return Trigger.token(token)
    raise ValueError(f"unknown trigger type {kind!r} (word, pattern, pattern_full, token)")


def coerce_triggers(triggers: Any) -> list[Trigger]:
    if isinstance(triggers, (str, Trigger, Mapping)) or not isinstance(triggers, Iterable):
        triggers = [triggers]
    out = [Trigger.coerce(t) for t in triggers]
    if not out:
        raise ValueError("give at least one trigger")
    if len(out) > MAX_TRIGGERS:
        raise ValueError(f"{len(out)} triggers: at most {MAX_TRIGGERS} (gs.limits.MAX_TRIGGERS)")
    return out


def regex_node(pattern: str) -> tree.Node:
    """The tree of a trigger regex (full-match reading; lookaheads compiled)."""
    try:
        node = parser.anchor(parser.parse(pattern), search=False)
        node = lookaround.resolve(tree.without(node, ()), search=False)
    except parser.RegexSyntaxError as err:
        raise SchemaError(f"trigger regex {pattern!r}: {err}", "") from None
    if node == tree.NEVER:
        raise SchemaError(f"trigger regex {pattern!r} matches nothing", "")
    return node


def _text_pattern(trigger: Trigger) -> tree.Node:
    if trigger.kind == "literal":
        return tree.literal(str(trigger.value))
    return regex_node(str(trigger.value))


def triggered_gbnf(
    rules: RuleSet,
    body: str,
    triggers: list[Trigger],
    *,
    at_start: bool = False,
    required: bool = False,
    trigger_in_body: bool = False,
) -> str:
    """Adds a triggered stretch to ``rules``: free text, a trigger, then the GBNF expression
    ``body``; returns the expression."""
    if trigger_in_body and any(t.kind == "regex" for t in triggers):
        raise ValueError(
            "a regex trigger cannot start the body (trigger_in_body=True): where its match "
            "starts is only known once it ends; use trigger_in_body=False or a literal"
        )
    if at_start:
        return _at_start(rules, body, triggers, trigger_in_body)
    text_stops, anywhere, prefix = [], [], []
    for t in triggers:
        if t.kind == "token":
            anywhere.append(body if trigger_in_body else f"{token_ref(t.value)} {body}")
        elif trigger_in_body:
            prefix.append(PrefixStop(str(t.value), body))
        else:
            text_stops.append(TextStop(_text_pattern(t), body, t.anchored))
    return free_text(
        rules, text_stops, anywhere=anywhere, prefix_stops=prefix, may_end=not required
    )


def _at_start(rules: RuleSet, body: str, triggers: list[Trigger], trigger_in_body: bool) -> str:
    options = []
    regexes = []
    for t in triggers:
        if trigger_in_body:
            options.append(body)
        elif t.kind == "token":
            options.append(f"{token_ref(t.value)} {body}")
        elif t.kind == "literal":
            options.append(f"{literal(str(t.value))} {body}")
        else:
            regexes.append(TextStop(_text_pattern(t), body, anchored=True))
    if regexes:
        options.append(free_text(rules, regexes, may_end=False, hint="trigger"))
    return alternatives(options)


def triggered(
    body: Any,
    triggers: Any,
    *,
    at_start: bool = False,
    required: bool = False,
    trigger_in_body: bool = False,
) -> Grammar:
    """``Grammar.triggered``: see the module doc."""
    rules = RuleSet()
    name = rules.embed(Grammar.coerce(body), "body")
    expr = triggered_gbnf(
        rules,
        name,
        coerce_triggers(triggers),
        at_start=at_start,
        required=required,
        trigger_in_body=trigger_in_body,
    )
    return rules.grammar(expr)


register_constructor("triggered", triggered)

__all__ = ["Trigger", "coerce_triggers", "regex_node", "triggered", "triggered_gbnf"]
