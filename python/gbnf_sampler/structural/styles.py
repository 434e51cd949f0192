"""Argument styles: how a tool call's arguments object is written, checked against its schema.

``schema_expr(rules, schema, style)`` adds the rules for one arguments object and returns the
expression. Styles:

=====================  =====================================================================
``json``               the JSON Schema converter (every keyword it supports)
``qwen_xml``           Qwen3-Coder / Qwen3.5: ``<parameter=NAME>\\nVALUE\\n</parameter>\\n`` per
                       argument
``deepseek_xml``       DeepSeek-V3.2 / V4: ``<｜DSML｜parameter name="NAME" string="true">VALUE
                       </｜DSML｜parameter>\\n`` (``string="false"``: VALUE is JSON)
``deepseek_v4_1_xml``  DeepSeek-V4.1: the same with ``｜DSML｜ parameter`` (a space)
``python``             Gemma 3 ``tool_code``: keyword arguments ``k="v", n=3`` (Python literals)
``gemma``              Gemma 4: ``{k:<|"|>v<|"|>,n:3}``
=====================  =====================================================================

XML styles write a string-only argument raw (text up to the closing tag) and any other value
as JSON (checked by the JSON Schema converter against that property's schema). Arguments are
the declared properties in their declared order (required ones present); a schema without
``properties`` takes any argument names. See :mod:`.literals` for the ``python``/``gemma``
schema subset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import SchemaError
from ..grammar import Grammar
from ..regex import tree
from ..schema import schema_to_gbnf
from .free_text import TextStop, free_text
from .literals import (
    GEMMA,
    PYTHON,
    LiteralWriter,
    optional_sequence,
    resolve,
    types_of,
    with_definitions,
)
from .rules import RuleSet, alternatives, literal

XML_NAME = "[A-Za-z_] [A-Za-z0-9_.\\-]*"


@dataclass(frozen=True)
class XmlStyle:
    """One XML parameter syntax: ``open_prefix NAME open_suffix(is_string) VALUE close``."""

    open_prefix: str
    close: str
    raw_suffix: str
    json_suffix: str

    def open(self, name: str, raw: bool) -> str:
        return f"{self.open_prefix}{name}{self.raw_suffix if raw else self.json_suffix}"


XML_STYLES = {
    "qwen_xml": XmlStyle("<parameter=", "\n</parameter>\n", ">\n", ">\n"),
    "deepseek_xml": XmlStyle(
        '<｜DSML｜parameter name="',
        "</｜DSML｜parameter>\n",
        '" string="true">',
        '" string="false">',
    ),
    "deepseek_v4_1_xml": XmlStyle(
        '<｜DSML｜ parameter name="',
        "</｜DSML｜ parameter>\n",
        '" string="true">',
        '" string="false">',
    ),
}
STYLES = ("json", *XML_STYLES, "python", "gemma")


def schema_expr(rules: RuleSet, schema: Any, style: str = "json", **options: Any) -> str:
    """Adds the rules of one arguments value written in ``style``; returns the expression.
    Raises SchemaError (with the path inside ``schema``) or ValueError for an unknown style."""
    if style == "json":
        return rules.embed(Grammar.from_gbnf(schema_to_gbnf(schema, **options)), "args")
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r} (styles: {', '.join(STYLES)})")
    if isinstance(schema, str):
        raise SchemaError("give the schema as a dict for this style", "")
    root, path = resolve(schema, schema, "")
    if root is True or (isinstance(root, Mapping) and "type" not in root and not root):
        root = {"type": "object"}
    if not isinstance(root, Mapping) or "object" not in types_of(root):
        raise SchemaError(f"{style} arguments must be an object schema", path)
    if style == "python":
        return LiteralWriter(rules, schema, PYTHON).pairs(root, path, "=", bare=True)
    if style == "gemma":
        writer = LiteralWriter(rules, schema, GEMMA)
        return writer.value(root, path)
    return _xml_arguments(rules, schema, root, path, XML_STYLES[style])


def is_raw_string(schema: Any) -> bool:
    """Whether an XML argument with this schema is written raw: it can only be a string."""
    return types_of(schema) == ["string"]


def _xml_arguments(
    rules: RuleSet, root: Any, schema: Mapping[str, Any], path: str, style: XmlStyle
) -> str:
    props = schema.get("properties")
    if not props:
        return _xml_any_arguments(rules, style)
    required = set(schema.get("required", []))
    items = []
    for name, prop in props.items():
        where = f"{path}/properties/{name}"
        target, _ = resolve(root, prop, where)
        raw = is_raw_string(target)
        value = (
            _raw_value(rules, target, style, where)
            if raw
            else _json_value(rules, root, prop, style, where)
        )
        items.append(f"{literal(style.open(name, raw))} {value}")
    return optional_sequence(rules, items, [n in required for n in props], "")


def _raw_value(rules: RuleSet, schema: Any, style: XmlStyle, path: str) -> str:
    """A raw string argument and the closing tag."""
    close = literal(style.close)
    if isinstance(schema, Mapping) and ("enum" in schema or "const" in schema):
        values = schema.get("enum", [schema.get("const")])
        return f"{alternatives([literal(str(v)) for v in values])} {close}"
    if isinstance(schema, Mapping) and "pattern" in schema:
        body = rules.embed(Grammar.from_regex(str(schema["pattern"])), "pattern")
        return f"{body} {close}"
    if isinstance(schema, Mapping):
        for bad in ("format", "minLength", "maxLength"):
            if bad in schema:
                raise SchemaError(f"{bad!r} is not supported on raw XML strings", f"{path}/{bad}")
    stop = [TextStop(tree.literal(style.close), '""')]
    return free_text(rules, stop, may_end=False, hint="raw")


def _json_value(rules: RuleSet, root: Any, prop: Any, style: XmlStyle, path: str) -> str:
    try:
        grammar = Grammar.from_gbnf(schema_to_gbnf(with_definitions(root, prop)))
    except SchemaError as e:
        raise SchemaError(e.message, path + e.path) from None
    return f"{rules.embed(grammar, 'json')} {literal(style.close)}"


def _xml_any_arguments(rules: RuleSet, style: XmlStyle) -> str:
    """Any number of arguments with any names: raw values (and JSON ones where the style marks
    them)."""
    stop = [TextStop(tree.literal(style.close), '""')]
    raw = free_text(rules, stop, may_end=False, hint="raw")
    options = [f"{literal(style.open_prefix)} {XML_NAME} {literal(style.raw_suffix)} {raw}"]
    if style.json_suffix != style.raw_suffix:
        value = rules.embed(Grammar.json(), "json")
        options.append(
            f"{literal(style.open_prefix)} {XML_NAME} {literal(style.json_suffix)} {value} "
            f"{literal(style.close)}"
        )
    return f"{rules.add('argument', alternatives(options))}*"


__all__ = ["STYLES", "XML_STYLES", "XmlStyle", "is_raw_string", "schema_expr"]
