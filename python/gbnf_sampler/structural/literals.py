"""Tool arguments written as literals of another language than JSON, checked against a schema.

Two literal syntaxes (:class:`LiteralSyntax`):

* ``python`` (Gemma 3's ``tool_code`` calls): Python literals. Strings are double-quoted with
  JSON escapes (a JSON string is a valid Python string), numbers as in JSON, ``True``,
  ``False``, ``None``, lists ``[a, b]``, dicts ``{"k": v}``.
* ``gemma`` (Gemma 4's calls): ``{key:value,...}`` with bare keys, strings between ``<|"|>``
  delimiters (raw text, no escapes), ``true``, ``false``, ``null``, ``[a,b]``.

The schema subset (anything else is a :class:`~gbnf_sampler.errors.SchemaError` naming its
path): ``type`` (also lists), ``enum``, ``const``, ``anyOf`` (``oneOf`` is refused: its
exclusivity is not checked here),
``$ref`` to ``#/...`` in the same document, ``properties``/``required`` (declared properties only,
in their order: ``additionalProperties`` is not used), ``items``, ``minItems``, ``maxItems``;
number and integer keywords (exact, through the JSON Schema converter); string keywords in the
``python`` syntax (``pattern``, ``format``, lengths: through the converter); ``pattern`` on raw
``gemma`` strings; annotations (title, description, default, examples...) are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import SchemaError
from ..grammar import Grammar
from ..regex import tree
from ..schema import schema_to_gbnf
from .free_text import TextStop, free_text
from .rules import RuleSet, alternatives, literal

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$id",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$defs",
        "definitions",
        "additionalProperties",
        "strict",
    }
)
_STRUCTURE = frozenset({"type", "enum", "const", "anyOf", "$ref"})
_OBJECT = frozenset({"properties", "required"})
_ARRAY = frozenset({"items", "minItems", "maxItems"})
_NUMBER = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
_STRING = frozenset({"pattern", "format", "minLength", "maxLength"})
GEMMA_QUOTE = '<|"|>'
KEY_NAME = "[A-Za-z_] [A-Za-z0-9_]*"


@dataclass(frozen=True)
class LiteralSyntax:
    name: str
    true: str
    false: str
    null: str
    key_value: str  # separator between a key and its value
    comma: str
    quoted_keys: bool
    raw_strings: bool  # strings between GEMMA_QUOTE delimiters, unescaped

    def render(self, value: Any) -> str:
        """A JSON value written in this syntax (for enum and const)."""
        if value is True:
            return self.true
        if value is False:
            return self.false
        if value is None:
            return self.null
        if isinstance(value, str):
            return f"{GEMMA_QUOTE}{value}{GEMMA_QUOTE}" if self.raw_strings else json.dumps(value)
        if isinstance(value, (int, float)):
            return json.dumps(value)
        if isinstance(value, list):
            return "[" + self.comma.join(self.render(v) for v in value) + "]"
        items = [f"{self.key(k)}{self.key_value}{self.render(v)}" for k, v in value.items()]
        return "{" + self.comma.join(items) + "}"

    def key(self, name: str) -> str:
        return json.dumps(name) if self.quoted_keys else name


PYTHON = LiteralSyntax("python", "True", "False", "None", ": ", ", ", True, False)
GEMMA = LiteralSyntax("gemma", "true", "false", "null", ":", ",", False, True)


def resolve(root: Any, schema: Any, path: str) -> tuple[Any, str]:
    """Follows local ``$ref`` pointers (a chain of them), returning the target and its path."""
    seen = set()
    while isinstance(schema, Mapping) and "$ref" in schema:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#") or ref in seen:
            raise SchemaError(f"$ref {ref!r}: only local, non-circular-chain refs here", path)
        seen.add(ref)
        target: Any = root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                raise SchemaError(f"$ref {ref!r} does not resolve", path)
            target = target[part]
        schema, path = target, ref[1:]
    return schema, path


def with_definitions(root: Any, schema: Any) -> Any:
    """``schema`` carrying the root's ``$defs``/``definitions`` (so its refs still resolve)."""
    if not isinstance(schema, Mapping) or not isinstance(root, Mapping):
        return schema
    out = dict(schema)
    for key in ("$defs", "definitions"):
        if key in root and key not in out:
            out[key] = root[key]
    return out


def types_of(schema: Any) -> list[str]:
    if schema is True or (isinstance(schema, Mapping) and not (set(schema) - ANNOTATIONS)):
        return ["string", "number", "integer", "boolean", "null", "object", "array"]
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [str(k) for k in kind]
    if isinstance(schema, Mapping) and ("enum" in schema or "const" in schema):
        values = schema.get("enum", [schema.get("const")])
        return sorted({_json_type(v) for v in values})
    return []


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (int, float)):
        return "number"
    return "array" if isinstance(value, list) else "object"


class LiteralWriter:
    """Writes GBNF rules for schema-checked values in one :class:`LiteralSyntax`."""

    def __init__(self, rules: RuleSet, root: Any, syntax: LiteralSyntax) -> None:
        self.rules = rules
        self.root = root
        self.syntax = syntax
        self._memo: dict[str, str] = {}

    def value(self, schema: Any, path: str) -> str:
        schema, path = resolve(self.root, schema, path)
        key = json.dumps(schema, sort_keys=True, default=str)
        name = self._memo.get(key)
        if name is None:
            name = self.rules.reserve(f"{self.syntax.name}-value")
            self._memo[key] = name  # before the body: recursive schemas refer to it
            self.rules.define(name, self._body(schema, path))
        return name

    def _body(self, schema: Any, path: str) -> str:
        if schema is False:
            raise SchemaError("false schema: no value is valid", path)
        if schema is True:
            return self._any()
        if not isinstance(schema, Mapping):
            raise SchemaError("a schema must be an object or a boolean", path)
        unknown = set(schema) - ANNOTATIONS - _STRUCTURE - _OBJECT - _ARRAY - _NUMBER - _STRING
        if unknown:
            raise SchemaError(
                f"{sorted(unknown)[0]!r} is not supported for {self.syntax.name}-style tool "
                "arguments (use the JSON style)",
                f"{path}/{sorted(unknown)[0]}",
            )
        if "const" in schema or "enum" in schema:
            values = schema.get("enum", [schema.get("const")])
            return alternatives([literal(self.syntax.render(v)) for v in values])
        if "anyOf" in schema:
            branches = schema["anyOf"]
            return alternatives(
                [self.value(b, f"{path}/anyOf/{i}") for i, b in enumerate(branches)]
            )
        kinds = types_of(schema)
        if not kinds:
            return self._any()
        return alternatives([self._typed(k, schema, path) for k in kinds])

    def _typed(self, kind: str, schema: Mapping[str, Any], path: str) -> str:
        s = self.syntax
        if kind == "boolean":
            return f"( {literal(s.true)} | {literal(s.false)} )"
        if kind == "null":
            return literal(s.null)
        if kind in ("number", "integer"):
            scalar = {k: v for k, v in schema.items() if k in _NUMBER}
            return self._json({"type": kind, **scalar}, path)
        if kind == "string":
            return self._string(schema, path)
        if kind == "array":
            return self._array(schema, path)
        if kind == "object":
            return self._object(schema, path)
        raise SchemaError(f"unknown type {kind!r}", f"{path}/type")

    def _json(self, schema: Mapping[str, Any], path: str) -> str:
        try:
            grammar = Grammar.from_gbnf(schema_to_gbnf(with_definitions(self.root, schema)))
        except SchemaError as e:
            raise SchemaError(e.message, path + e.path) from None
        return self.rules.embed(grammar, "json")

    def _string(self, schema: Mapping[str, Any], path: str) -> str:
        constraints = {k: v for k, v in schema.items() if k in _STRING}
        if not self.syntax.raw_strings:
            return self._json({"type": "string", **constraints}, path)
        q = literal(GEMMA_QUOTE)
        if set(constraints) - {"pattern"}:
            bad = sorted(set(constraints) - {"pattern"})[0]
            raise SchemaError(f"{bad!r} is not supported on raw strings", f"{path}/{bad}")
        if "pattern" in constraints:
            body = self.rules.embed(Grammar.from_regex(str(constraints["pattern"])), "pattern")
            return f"{q} {body} {q}"
        stop = [TextStop(tree.literal(GEMMA_QUOTE), '""')]
        return f"{q} {free_text(self.rules, stop, may_end=False, hint='raw')}"

    def _array(self, schema: Mapping[str, Any], path: str) -> str:
        item = self.value(schema.get("items", True), f"{path}/items")
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        comma = literal(self.syntax.comma)
        if high is not None and int(high) == 0:
            return '"[]"'
        more = self.rules.add("more-items", f"{comma} {item}")
        hi = "" if high is None else str(int(high) - 1)
        items = f"{item} {more}{{{max(low - 1, 0)},{hi}}}"
        inner = items if low > 0 else f"( {items} )?"
        return f'"[" {inner} "]"'

    def _object(self, schema: Mapping[str, Any], path: str) -> str:
        props = schema.get("properties")
        if not props:
            return self._any_object()
        pairs = self.pairs(schema, path, self.syntax.key_value)
        return f'"{{" {pairs} "}}"'

    def pairs(
        self, schema: Mapping[str, Any], path: str, key_value: str, *, bare: bool = False
    ) -> str:
        """The declared properties in order, required ones present, joined by the syntax's
        comma (``key_value`` between a key and its value; ``bare``: unquoted keys, as keyword
        arguments are)."""
        props = schema.get("properties") or {}
        required = set(schema.get("required", []))
        names = list(props)
        missing = required - set(names)
        if missing:
            raise SchemaError(f"required property {sorted(missing)[0]!r} is not declared", path)
        items = [
            f"{literal((n if bare else self.syntax.key(n)) + key_value)} "
            f"{self.value(props[n], f'{path}/properties/{n}')}"
            for n in names
        ]
        return optional_sequence(
            self.rules, items, [n in required for n in names], self.syntax.comma
        )

    def _any(self) -> str:
        return self.value_any()

    def value_any(self) -> str:
        name = self._memo.get("<any>")
        if name is not None:
            return name
        name = self.rules.reserve(f"{self.syntax.name}-any")
        self._memo["<any>"] = name
        kinds = ("string", "number", "boolean", "null")
        options = [self._typed(k, {"type": k}, "") for k in kinds]
        comma = literal(self.syntax.comma)
        array = f'"[" ( {name} ( {comma} {name} )* )? "]"'
        self.rules.define(name, " | ".join([*options, array, self._any_object()]))
        return name

    def _any_object(self) -> str:
        s = self.syntax
        key = self._typed("string", {}, "") if s.quoted_keys else KEY_NAME
        pair = self.rules.add("any-pair", f"{key} {literal(s.key_value)} {self.value_any()}")
        return f'"{{" ( {pair} ( {literal(s.comma)} {pair} )* )? "}}"'


def optional_sequence(rules: RuleSet, items: list[str], required: list[bool], sep: str) -> str:
    """Items in order, each optional unless required, joined by ``sep``: ``""`` when none
    is required and none is written."""
    n = len(items)
    after: list[str] = [""] * (n + 1)  # after[i]: the rest from item i, preceded by sep
    sep_expr = literal(sep) if sep else ""
    after[n] = '""'
    for i in range(n - 1, 0, -1):
        after[i] = rules.add("rest", _choose(items, required, after, i, sep_expr))
    first = _choose(items, required, after, 0, "")
    return rules.add("items", first)


def _choose(items: list[str], required: list[bool], after: list[str], i: int, sep: str) -> str:
    """The next written item is j >= i (no required item skipped), or none when no required
    item is left."""
    options = []
    for j in range(i, len(items)):
        options.append(
            " ".join(p for p in (sep, items[j], after[j + 1]) if p and p != '""') or '""'
        )
        if required[j]:
            break
    else:
        options.append('""')
    return " | ".join(options)


__all__ = [
    "ANNOTATIONS",
    "GEMMA",
    "GEMMA_QUOTE",
    "KEY_NAME",
    "PYTHON",
    "LiteralSyntax",
    "LiteralWriter",
    "optional_sequence",
    "resolve",
    "types_of",
    "with_definitions",
]
