"""Structural tags: a JSON-able description of an output's layout, compiled to one grammar.

``Grammar.from_structural_tag(spec)`` takes xgrammar's structural-tag JSON (so its
documentation reads across): ``{"type": "structural_tag", "format": F}`` or a format object
``F`` itself, where a format is one of

========================  ===============================================================
``const_string``          ``value``: exactly this text
``json_schema``           ``json_schema``; ``style``: ``json`` (default) or an argument style
                          of :mod:`.styles` (``qwen_xml``, ``deepseek_xml``, ``python``,
                          ``gemma``...); ``max_whitespace_cnt``; (an extension)
                          ``additional_properties: false``: no unlisted properties where
                          the schema says nothing (OpenAI strict mode);
                          ``excludes``: only ``[]`` (what SGLang sends by default)
``grammar``               ``grammar``: GBNF text
``regex``                 ``pattern``
``any_text``              free text; ``excludes``: strings that must not occur
``sequence`` / ``or``     ``elements``: formats in order / one of them
``optional`` ``plus``     ``content``: zero or one / one or more / zero or more times
``star`` ``repeat``       (``repeat``: ``min``, ``max``; ``max: -1`` is unbounded)
``tag``                   ``begin`` (string or token), ``content``, ``end`` (string, list of
                          strings, or token)
``triggered_tags``        free text until one of ``triggers``, then one of ``tags`` whose
                          begin starts with it, then free text again; ``at_least_one`` (start
                          with a tag), ``stop_after_first``, ``excludes``
``tags_with_separator``   ``tags`` joined by ``separator``; ``at_least_one``,
                          ``stop_after_first``
``dispatch``              ``rules``: ``[pattern, format]`` pairs; free text until a pattern,
                          then its format; ``loop`` (default true), ``excludes``
``token``                 ``token``: one vocabulary token (id, or its ``<text>``)
``token_triggered_tags``  ``trigger_tokens`` and ``tags`` whose begin is a token format
========================  ===============================================================

End detection (as in xgrammar): free text inside a ``tag`` (``any_text``, ``triggered_tags``,
``dispatch``, ``token_triggered_tags``, also as the last element of a ``sequence`` or a branch
of an ``or``) stops at the tag's first ``end``; the end is then part of the free format's rules.

Errors: :class:`~gbnf_sampler.errors.StructuralTagError` with ``.path`` (a JSON pointer into
the spec); errors of an embedded JSON Schema carry the pointer into the schema after it. Not
supported (a clear error): ``any_text.max_tokens``/``max_chars`` (a token budget is not a
grammar: see the reasoning budget of :mod:`.formats`), ``json_schema.any_order`` with a style
other than ``json`` (with ``json`` it is exact: ``property_order="any"``), a non-empty
``json_schema.excludes``, and the token-set formats ``exclude_token``, ``any_tokens``,
``token_dispatch``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..errors import GrammarError, SchemaError, StructuralTagError
from ..grammar import Grammar, register_constructor
from ..limits import MAX_STRUCTURAL_TAG_DEPTH, MAX_TRIGGERS
from ..regex import tree
from ..vocab import Vocab
from . import spec as S
from .free_text import TextStop, free_text
from .rules import RuleSet, alternatives, literal, token_ref
from .styles import schema_expr

_UNSUPPORTED = {
    "exclude_token": "match the text instead, or name the one token with a 'token' format",
    "any_tokens": "use 'any_text' (free text never contains special tokens)",
    "token_dispatch": "use 'token_triggered_tags'",
    "qwen_xml_parameter": "use 'json_schema' with style 'qwen_xml'",
}


@dataclass(frozen=True)
class Ends:
    """The enclosing tag's end markers: ``expr`` matches any of them; free text stops at the
    ``texts`` (searched for) and at the ``anywhere`` expressions (ends that open with a special
    token, offered in every free state)."""

    expr: str
    texts: tuple[str, ...]
    anywhere: tuple[str, ...]


@dataclass(frozen=True)
class Ctx:
    rules: RuleSet
    ends: Ends | None
    depth: int
    markers: Mapping[str, str]  # special-token text -> its GBNF expression


def text_expr(ctx: Ctx, text: str) -> str:
    """GBNF for ``text``, with every special-token marker in it as a token reference."""
    if not text:
        return '""'
    if not ctx.markers:
        return literal(text)
    parts = []
    rest = text
    while rest:
        hits = [(rest.find(m), -len(m), m) for m in ctx.markers if m in rest]
        if not hits:
            parts.append(literal(rest))
            break
        at, _, marker = min(hits)
        if at:
            parts.append(literal(rest[:at]))
        parts.append(ctx.markers[marker])
        rest = rest[at + len(marker) :]
    return " ".join(parts)


def split_marker(ctx: Ctx, text: str, path: str) -> tuple[str | None, str]:
    """(expression of the special token ``text`` starts with, the rest), or (None, text) when it
    holds no special token. Free text never holds special tokens, so a trigger or an end that
    starts with one is offered as a token in every free state instead of being searched for."""
    for marker in sorted(ctx.markers, key=len, reverse=True):
        if text.startswith(marker):
            return ctx.markers[marker], text[len(marker) :]
    if any(m in text for m in ctx.markers):
        raise S.fail(
            path,
            f"{text!r} holds a special token after plain text: free text cannot "
            "be searched for it (start the trigger or end with the token)",
        )
    return None, text


@dataclass(frozen=True)
class Piece:
    """A compiled format: its expression, and whether it already matched the enclosing end."""

    expr: str
    consumed_end: bool = False


def compile_format(fmt: Any, path: str, ctx: Ctx) -> Piece:
    fmt = S.format_object(fmt, path)
    if ctx.depth > MAX_STRUCTURAL_TAG_DEPTH:
        raise S.fail(path, f"nested deeper than {MAX_STRUCTURAL_TAG_DEPTH} levels")
    kind = fmt["type"]
    if kind in _UNSUPPORTED:
        raise S.fail(path, f"format {kind!r} is not supported: {_UNSUPPORTED[kind]}")
    handler = _HANDLERS.get(kind)
    if handler is None:
        known = ", ".join(sorted(_HANDLERS))
        raise S.fail(pointer_type(path), f"unknown format type {kind!r} (known: {known})")
    return handler(fmt, path, replace(ctx, depth=ctx.depth + 1))


def pointer_type(path: str) -> str:
    return S.pointer(path, "type")


def _plain(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    """A format that is not free text: compiled without the enclosing end."""
    return compile_format(fmt, path, replace(ctx, ends=None))


# --- primitives -----------------------------------------------------------------------------------


def _const_string(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    S.check_keys(fmt, ("value",), path)
    return Piece(text_expr(ctx, S.get_str(fmt, "value", path)))


def _json_schema(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    keys = ("json_schema", "style", "any_order", "max_whitespace_cnt", "additional_properties")
    S.check_keys(fmt, (*keys, "excludes"), path)
    if S.get_strings(fmt, "excludes", path, nonempty=True):  # SGLang sends [] by default
        raise S.fail(S.pointer(path, "excludes"), "excludes in JSON strings is not supported")
    style = S.get_str(fmt, "style", path, "json")
    options: dict[str, Any] = {}
    if S.get_bool(fmt, "any_order", path, False):  # properties in any order (exactly)
        if style != "json":
            raise S.fail(S.pointer(path, "any_order"), "any_order needs style 'json'")
        options["property_order"] = "any"
    if fmt.get("max_whitespace_cnt") is not None:
        options["max_whitespace"] = S.get_int(fmt, "max_whitespace_cnt", path, 0)
    if fmt.get("additional_properties") is not None and style == "json":
        options["additional_properties"] = S.get_bool(fmt, "additional_properties", path, True)
    schema = S.get(fmt, "json_schema", path)
    try:
        return Piece(schema_expr(ctx.rules, schema, style, **options))
    except SchemaError as e:
        raise S.fail(S.pointer(path, "json_schema") + e.path, e.message) from None
    except ValueError as e:  # an unknown style
        raise S.fail(S.pointer(path, "style"), str(e)) from None


def _grammar(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    S.check_keys(fmt, ("grammar",), path)
    try:
        grammar = Grammar.from_gbnf(S.get_str(fmt, "grammar", path))
    except GrammarError as e:
        raise S.fail(S.pointer(path, "grammar"), str(e)) from None
    return Piece(ctx.rules.embed(grammar, "grammar"))


def _regex(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    S.check_keys(fmt, ("pattern",), path)
    try:
        grammar = Grammar.from_regex(S.get_str(fmt, "pattern", path))
    except SchemaError as e:
        raise S.fail(S.pointer(path, "pattern"), e.message) from None
    return Piece(ctx.rules.embed(grammar, "regex"))


def _token(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    S.check_keys(fmt, ("token",), path)
    return Piece(token_expr(S.get(fmt, "token", path), S.pointer(path, "token")))


def token_expr(token: Any, path: str) -> str:
    if isinstance(token, bool) or not isinstance(token, (int, str)):
        raise S.fail(path, "a token is an id (int) or its text written <...>")
    if isinstance(token, int) and token < 0:
        raise S.fail(path, f"token id must be >= 0, got {token}")
    try:
        return token_ref(token)
    except ValueError as e:
        raise S.fail(path, str(e)) from None


def _any_text(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    S.check_keys(fmt, ("excludes", "max_tokens", "max_chars"), path)
    for key in ("max_tokens", "max_chars"):
        if fmt.get(key) is not None:
            raise S.fail(
                S.pointer(path, key),
                f"{key} is not supported in a grammar (a budget is not a language); "
                "for a reasoning budget use the tool formats' reasoning={'budget': N}",
            )
    excludes = S.get_strings(fmt, "excludes", path, nonempty=True)
    return _free(ctx, [], excludes, None, path)


def _free(
    ctx: Ctx, arms: list[tuple[str, str]], excludes: list[str], loop_name: str | None, path: str
) -> Piece:
    """Free text that stops at the enclosing end (when there is one), at each arm's text (then
    its expression), never containing ``excludes``. ``loop_name``: a reserved rule name to
    define as the free text's start (for arms that loop back)."""
    stops: list[TextStop] = []
    anywhere: list[str] = []
    for text, expr in arms:
        token, rest = split_marker(ctx, text, path)
        if token is None:
            stops.append(TextStop(tree.literal(text), expr))
        else:
            anywhere.append(" ".join(p for p in (token, text_expr(ctx, rest), expr) if p != '""'))
    stops += [TextStop(tree.literal(x), None) for x in excludes if not _has_marker(ctx, x)]
    if ctx.ends is not None:
        stops += [TextStop(tree.literal(t), '""') for t in ctx.ends.texts]
        anywhere += list(ctx.ends.anywhere)
    start = free_text(ctx.rules, stops, anywhere=anywhere, may_end=ctx.ends is None, hint="text")
    if loop_name is not None:
        ctx.rules.define(loop_name, start)
        start = loop_name
    return Piece(start, consumed_end=ctx.ends is not None)


def _has_marker(ctx: Ctx, text: str) -> bool:
    return any(m in text for m in ctx.markers)


# --- composition ----------------------------------------------------------------------------------


def _sequence(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    S.check_keys(fmt, ("elements",), path)
    elements = S.get_list(fmt, "elements", path)
    if not elements:
        raise S.fail(S.pointer(path, "elements"), "a sequence needs at least one element")
    at = S.pointer(path, "elements")
    parts = [_plain(e, S.pointer(at, i), ctx).expr for i, e in enumerate(elements[:-1])]
    last = compile_format(elements[-1], S.pointer(at, len(elements) - 1), ctx)
    return Piece(" ".join([*parts, last.expr]), last.consumed_end)


def _or(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    S.check_keys(fmt, ("elements",), path)
    elements = S.get_list(fmt, "elements", path)
    if not elements:
        raise S.fail(S.pointer(path, "elements"), "'or' needs at least one element")
    at = S.pointer(path, "elements")
    pieces = [compile_format(e, S.pointer(at, i), ctx) for i, e in enumerate(elements)]
    if ctx.ends is None or not any(p.consumed_end for p in pieces):
        return Piece(alternatives([p.expr for p in pieces]))
    end = ctx.ends.expr
    options = [p.expr if p.consumed_end else f"{p.expr} {end}" for p in pieces]
    return Piece(alternatives(options), consumed_end=True)


def _repeat_of(fmt: Mapping[str, Any], path: str, ctx: Ctx, low: int, high: int | None) -> Piece:
    S.check_keys(fmt, ("content", "min", "max") if fmt["type"] == "repeat" else ("content",), path)
    item = _plain(S.get(fmt, "content", path), S.pointer(path, "content"), ctx).expr
    name = ctx.rules.add("repeat", item)
    hi = "" if high is None else str(high)
    return Piece(f"{name}{{{low},{hi}}}")


def _optional(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    return _repeat_of(fmt, path, ctx, 0, 1)


def _plus(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    return _repeat_of(fmt, path, ctx, 1, None)


def _star(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    return _repeat_of(fmt, path, ctx, 0, None)


def _repeat(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    low = S.get_int(fmt, "min", path, 0)
    high = S.get(fmt, "max", path)
    if high == -1:
        return _repeat_of(fmt, path, ctx, low, None)
    high = S.get_int(fmt, "max", path, low)
    return _repeat_of(fmt, path, ctx, low, high)


# --- tags -----------------------------------------------------------------------------------------


def _marker(ctx: Ctx, value: Any, path: str) -> str:
    """A begin/end marker: a string (text) or a token format; returns its GBNF expression."""
    if isinstance(value, str):
        return text_expr(ctx, value)
    if isinstance(value, Mapping) and value.get("type") == "token":
        S.check_keys(value, ("token",), path)
        return token_expr(S.get(value, "token", path), S.pointer(path, "token"))
    raise S.fail(path, "a marker is a string or a token format {'type': 'token', 'token': ...}")


def _end_markers(ctx: Ctx, fmt: Mapping[str, Any], path: str) -> Ends | None:
    end = S.get(fmt, "end", path)
    at = S.pointer(path, "end")
    ends = end if isinstance(end, list) else [end]
    if not ends:
        raise S.fail(at, "'end' must not be an empty list")
    exprs, texts, anywhere = [], [], []
    for i, e in enumerate(ends):
        where = S.pointer(at, i) if isinstance(end, list) else at
        if isinstance(e, str) and not e:
            continue
        exprs.append(_marker(ctx, e, where))
        if not isinstance(e, str):
            anywhere.append(exprs[-1])
            continue
        token, _ = split_marker(ctx, e, where)
        if token is None:
            texts.append(e)
        else:
            anywhere.append(exprs[-1])
    if not exprs:
        return None
    return Ends(alternatives(exprs), tuple(texts), tuple(anywhere))


def tag_parts(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> tuple[Any, str]:
    """A tag's raw ``begin`` (string or token format) and the expression of what follows it
    (content, then the end unless the content matched it)."""
    fmt = S.format_object(fmt, path)
    if fmt["type"] != "tag":
        raise S.fail(pointer_type(path), f"expected a 'tag' here, got {fmt['type']!r}")
    S.check_keys(fmt, ("begin", "content", "end"), path)
    begin = S.get(fmt, "begin", path)
    _marker(ctx, begin, S.pointer(path, "begin"))  # validates it
    ends = _end_markers(ctx, fmt, path)
    inner = replace(ctx, ends=ends, depth=ctx.depth + 1)
    content = compile_format(S.get(fmt, "content", path), S.pointer(path, "content"), inner)
    parts = [content.expr]
    if ends is not None and not content.consumed_end:
        parts.append(ends.expr)
    return begin, " ".join(p for p in parts if p != '""') or '""'


def tag_piece(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> str:
    """``begin content end``."""
    begin, rest = tag_parts(fmt, path, ctx)
    return _join(_marker(ctx, begin, S.pointer(path, "begin")), rest)


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p != '""') or '""'


def _tag(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    return Piece(tag_piece(fmt, path, ctx))


def _tags_list(fmt: Mapping[str, Any], path: str) -> list[Any]:
    tags = S.get_list(fmt, "tags", path)
    if not tags:
        raise S.fail(S.pointer(path, "tags"), "needs at least one tag")
    return tags


def _tags_with_separator(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    S.check_keys(fmt, ("tags", "separator", "at_least_one", "stop_after_first"), path)
    at = S.pointer(path, "tags")
    tags = [tag_piece(t, S.pointer(at, i), ctx) for i, t in enumerate(_tags_list(fmt, path))]
    one = ctx.rules.add("tag", alternatives(tags))
    sep = S.get_str(fmt, "separator", path)
    if S.get_bool(fmt, "stop_after_first", path, False):
        many = one
    else:
        rest = f"{text_expr(ctx, sep)} {one}" if sep else one
        many = f"{one} {ctx.rules.add('more-tags', rest)}*"
    if S.get_bool(fmt, "at_least_one", path, False):
        return Piece(many)
    return Piece(f"{ctx.rules.add('tags', many)}?")


def _trigger_of(begin: str, triggers: list[str], path: str) -> str:
    found = [t for t in triggers if begin.startswith(t)]
    if not found:
        raise S.fail(path, f"the tag's begin {begin!r} starts with none of the triggers {triggers}")
    if len(found) > 1:
        raise S.fail(path, f"the tag's begin {begin!r} starts with several triggers {found}")
    return found[0]


def _after_tag(fmt: Mapping[str, Any], path: str, ctx: Ctx, loop: str) -> str:
    """What follows a dispatched tag: the free text again, or (``stop_after_first``) the
    enclosing end or nothing."""
    if not S.get_bool(fmt, "stop_after_first", path, False):
        return loop
    return ctx.ends.expr if ctx.ends is not None else '""'


def _triggered_tags(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    S.check_keys(fmt, ("triggers", "tags", "at_least_one", "stop_after_first", "excludes"), path)
    triggers = S.get_strings(fmt, "triggers", path, nonempty=True)
    if not triggers or len(triggers) > MAX_TRIGGERS:
        raise S.fail(S.pointer(path, "triggers"), f"give 1 to {MAX_TRIGGERS} triggers")
    excludes = S.get_strings(fmt, "excludes", path, nonempty=True)
    at = S.pointer(path, "tags")
    loop = ctx.rules.reserve("text")
    after = _after_tag(fmt, path, ctx, loop)
    by_trigger: dict[str, list[str]] = {t: [] for t in triggers}
    full: list[str] = []
    for i, tag in enumerate(_tags_list(fmt, path)):
        where = S.pointer(at, i)
        begin, rest = tag_parts(tag, where, ctx)
        if not isinstance(begin, str):
            raise S.fail(S.pointer(where, "begin"), "tags of triggered_tags need a string begin")
        trigger = _trigger_of(begin, triggers, S.pointer(where, "begin"))
        by_trigger[trigger].append(_join(text_expr(ctx, begin[len(trigger) :]), rest))
        full.append(_join(text_expr(ctx, begin), rest))
    consumed = ctx.ends is not None
    first = S.get_bool(fmt, "at_least_one", path, False)
    if first and after != loop:  # exactly one tag: no free text at all
        return Piece(_join(alternatives(full), after), consumed)
    arms = [(t, _join(alternatives(p), after)) for t, p in by_trigger.items() if p]
    free = _free(ctx, arms, excludes, loop, path)
    if first:
        return Piece(_join(alternatives(full), after), consumed)
    return free


def _dispatch(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    S.check_keys(fmt, ("rules", "loop", "excludes"), path)
    at = S.pointer(path, "rules")
    loop = ctx.rules.reserve("text")
    repeat = S.get_bool(fmt, "loop", path, True)
    after = loop if repeat else (ctx.ends.expr if ctx.ends is not None else '""')
    arms = []
    for i, rule in enumerate(S.get_list(fmt, "rules", path)):
        where = S.pointer(at, i)
        if not (isinstance(rule, (list, tuple)) and len(rule) == 2 and isinstance(rule[0], str)):
            raise S.fail(where, "a dispatch rule is a [pattern string, format] pair")
        if not rule[0]:
            raise S.fail(S.pointer(where, 0), "the pattern must not be empty")
        arms.append((rule[0], _join(_plain(rule[1], S.pointer(where, 1), ctx).expr, after)))
    if not arms:
        raise S.fail(at, "dispatch needs at least one rule")
    return _free(ctx, arms, S.get_strings(fmt, "excludes", path, nonempty=True), loop, path)


def _token_triggered_tags(fmt: Mapping[str, Any], path: str, ctx: Ctx) -> Piece:
    keys = ("trigger_tokens", "tags", "exclude_tokens", "at_least_one", "stop_after_first")
    S.check_keys(fmt, keys, path)
    if S.get_list(fmt, "exclude_tokens", path, []):
        raise S.fail(
            S.pointer(path, "exclude_tokens"),
            "not supported: free text never contains special tokens, and plain-text tokens "
            "cannot be excluded from byte-level text",
        )
    loop = ctx.rules.reserve("text")
    after = _after_tag(fmt, path, ctx, loop)
    at = S.pointer(path, "tags")
    tags = [tag_piece(t, S.pointer(at, i), ctx) for i, t in enumerate(_tags_list(fmt, path))]
    triggers = S.get_list(fmt, "trigger_tokens", path)
    if not triggers:
        raise S.fail(S.pointer(path, "trigger_tokens"), "give at least one trigger token")
    for i, t in enumerate(triggers):
        token_expr(t, S.pointer(S.pointer(path, "trigger_tokens"), i))
    anywhere = [_join(alternatives(tags), after)]
    if ctx.ends is not None:
        anywhere += list(ctx.ends.anywhere)
    stops = [TextStop(tree.literal(t), '""') for t in (ctx.ends.texts if ctx.ends else ())]
    start = free_text(ctx.rules, stops, anywhere=anywhere, may_end=ctx.ends is None, hint="text")
    ctx.rules.define(loop, start)
    if S.get_bool(fmt, "at_least_one", path, False):
        return Piece(_join(alternatives(tags), after), consumed_end=ctx.ends is not None)
    return Piece(loop, consumed_end=ctx.ends is not None)


_HANDLERS = {
    "const_string": _const_string,
    "json_schema": _json_schema,
    "grammar": _grammar,
    "regex": _regex,
    "any_text": _any_text,
    "sequence": _sequence,
    "or": _or,
    "optional": _optional,
    "plus": _plus,
    "star": _star,
    "repeat": _repeat,
    "tag": _tag,
    "tags_with_separator": _tags_with_separator,
    "triggered_tags": _triggered_tags,
    "dispatch": _dispatch,
    "token": _token,
    "token_triggered_tags": _token_triggered_tags,
}


def structural_tag_gbnf(spec: Any, *, markers: Mapping[str, str] | None = None) -> str:
    """GBNF text of a structural tag (see the module doc). ``markers``: special-token texts
    and the GBNF to write for them (see :func:`special_markers`)."""
    root, path = S.unwrap(spec)
    rules = RuleSet()
    piece = compile_format(root, path, Ctx(rules, None, 0, dict(markers or {})))
    return rules.text(piece.expr)


def special_markers(vocab: Vocab | None) -> dict[str, str]:
    """The special (control) tokens of ``vocab`` by text, as token references; an EOS token
    becomes ``""`` (the output ends there: EOS is allowed exactly when the grammar can end).
    Text that names such a token in a structural tag is matched as that one token."""
    if vocab is None:
        return {}
    key = vocab.fingerprint
    cached = _MARKERS.get(key)
    if cached is None:
        cached = {}
        for tid in vocab.special_ids:
            raw = vocab.token_bytes(tid)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(text) > 1 and text not in cached:
                cached[text] = '""' if vocab.is_eos(tid) else f"<[{tid}]>"
        if len(_MARKERS) >= 16:
            _MARKERS.pop(next(iter(_MARKERS)))
        _MARKERS[key] = cached
    return cached


_MARKERS: dict[str, dict[str, str]] = {}


def from_structural_tag(spec: Any, *, vocab: Vocab | None = None) -> Grammar:
    """``Grammar.from_structural_tag``. ``vocab``: the vocabulary the grammar is for; text in
    the spec that spells one of its special tokens (``<|channel|>``, ``[TOOL_CALLS]``...) is
    matched as that token (a model emits it as one token, never as its spelled-out text)."""
    text = structural_tag_gbnf(spec, markers=special_markers(vocab))
    try:
        return Grammar.from_gbnf(text)
    except GrammarError as e:  # a bug of ours, or a format whose language is empty
        raise StructuralTagError(f"the compiled grammar is invalid: {e}", "") from None


register_constructor("structural_tag", from_structural_tag)

__all__ = ["from_structural_tag", "special_markers", "structural_tag_gbnf", "text_expr"]
