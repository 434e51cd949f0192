"""JSON Schema, Pydantic models, choices, tool lists and ``response_format`` -> GBNF.

Exactness contract: a document the grammar accepts is valid under the schema (after JSON
parsing) whenever the grammar was built without a :class:`SchemaWarning`; ``strict=False``
relaxes what cannot be compiled exactly with such a warning (the grammar then accepts more).
Valid documents are accepted when their properties come in the order ``property_order`` allows,
numbers are written as JSON usually writes them (see :mod:`gbnf_sampler.schema.number_ranges`),
and whitespace follows the chosen mode:

* ``"flexible"`` (default): spaces/tabs (at most ``max_whitespace``) and at most one newline
  around every ``{ } [ ] , :`` (json.dumps' default and ``indent=`` output both fit).
* ``"compact"``: no whitespace at all (``separators=(",", ":")``).
* ``"indent"``: exactly ``json.dumps(value, indent=indent)`` layout (indentation stops growing
  past depth 32).

``property_order``:

* ``"schema"`` (default): declared properties in the order the schema lists them, undeclared
  ones (``additionalProperties``/``patternProperties``) after them; an ``enum``/``const`` object
  in its own order.
* ``"any"``: every order of the members, each key at most once (exact: :mod:`.any_order`), up to
  :data:`~gbnf_sampler.limits.MAX_ANY_ORDER_STATES` subset rules per object (twelve properties);
  a larger object is a SchemaError, or in the schema's order with a SchemaWarning when
  ``strict=False``.

Keywords: type (incl. lists; OpenAPI's ``nullable`` is not JSON Schema and is ignored), enum,
const, properties, required, additionalProperties, unevaluatedProperties (as
additionalProperties), patternProperties, propertyNames, min/maxProperties, $ref
($defs/definitions, JSON pointers, $id, $anchor), anyOf, oneOf, allOf (merged), items,
prefixItems, draft-4 tuple items + additionalItems, min/maxItems, min/maxLength, pattern, format,
minimum/maximum (inclusive and exclusive, all drafts), multipleOf (integers; 10^-n for numbers,
checked exactly in decimal: ``jsonschema``'s float division disagrees on values such as -0.07).

``oneOf`` is exact: branches are proved disjoint kind by kind, or made so by excluding the
others (``overlap``); when neither works it is a SchemaError (strict) or compiled as
``anyOf`` with a warning. ``not``, ``if``/``then``/``else`` and dependencies are exact where the
schema they negate can be negated (``logic``: also ``additionalProperties``, ``items``,
``contains``, small ``oneOf``). ``uniqueItems`` is exact when the items
are a small finite set (enum, const, boolean, null, integers within bounds of at most
:data:`~gbnf_sampler.limits.MAX_UNIQUE_DOMAIN` values: ``unique``), scalars with at least 2^32
values or enums of scalars (``scalar_items``), or open-ended (free strings, patterns that never
end, objects that take any further key: a ``#@ distinct-items`` directive that our matcher
enforces and other GBNF engines read as a comment). ``contains``
with ``minContains``/``maxContains`` is exact (``contains``) except beside ``prefixItems`` or
``uniqueItems``. Not expressible (SchemaError when strict): those ``contains``,
``uniqueItems`` on other items, unevaluatedItems,
$dynamicRef/$recursiveRef, negations of other schemas, ``$ref`` to documents not given in
``documents``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import SchemaError
from ..limits import DEFAULT_JSON_MAX_WHITESPACE, DEFAULT_MAX_WHITESPACE, MAX_INDENT_DEPTH
from ..regex.tree import literal_gbnf
from .context import Options
from .convert import Converter, SchemaWarning
from .document import parse_json_text, plain_json
from .emit import Layout, Rules, any_value

PROPERTY_ORDERS = ("schema", "any")
TOOLS_BASE = "https://gbnf-sampler.invalid/tools/"


def _load(schema: Any) -> Any:
    if isinstance(schema, (bytes, str)):
        return plain_json(parse_json_text(schema))
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        return plain_json(schema.model_json_schema())
    if isinstance(schema, (Mapping, bool)):
        return plain_json(schema)
    raise TypeError(
        f"schema must be a dict, JSON text or a Pydantic model class, not {type(schema).__name__}"
    )


def schema_to_gbnf(
    schema: Any,
    *,
    whitespace: str = "flexible",
    max_whitespace: int = DEFAULT_MAX_WHITESPACE,
    strict: bool = True,
    additional_properties: bool | None = None,
    indent: int = 2,
    documents: Mapping[str, Any] | None = None,
    property_order: str = "schema",
) -> str:
    """GBNF (root rule ``root``) for the JSON documents valid under ``schema``.

    ``schema``: a dict, JSON text, or a Pydantic model class. ``additional_properties=False``
    forbids properties a schema does not list wherever it says nothing (OpenAI strict mode,
    llama.cpp); the default follows the JSON Schema spec (allowed). ``documents`` maps URIs to
    other schema documents that ``$ref`` may name (nothing is fetched). ``property_order``:
    ``"schema"`` or ``"any"`` (see the module docstring). Raises :class:`SchemaError`
    (``.path`` is a JSON pointer) for invalid or unsupported schemas; with ``strict=False``
    unsupported keywords are relaxed with a :class:`SchemaWarning` instead.
    """
    if property_order not in PROPERTY_ORDERS:
        raise ValueError(f"property_order must be one of {PROPERTY_ORDERS}, not {property_order!r}")
    options = Options(
        whitespace, max_whitespace, strict, additional_properties, indent, documents, property_order
    )
    document = _load(schema)
    try:
        return Converter(document, options).convert()
    except RecursionError:
        # A backstop: depth limits stop realistic inputs well before this.
        raise SchemaError(
            "schema too deeply nested to convert (Python's recursion limit was reached)", ""
        ) from None


def layout_whitespace_run(
    whitespace: str = "flexible", max_whitespace: int = DEFAULT_MAX_WHITESPACE, indent: int = 2
) -> int:
    """The longest run of whitespace bytes the layout itself writes between JSON tokens:
    flexible, one separator's (CR LF and ``max_whitespace`` spaces or tabs); indent, a newline
    and the deepest indentation; compact, none."""
    if whitespace == "flexible":
        return max_whitespace + 2
    if whitespace == "indent":
        return 1 + indent * (MAX_INDENT_DEPTH + 1)
    return 0


def output_whitespace_bound(**options: Any) -> int:
    """The run-time whitespace bound (``compile(max_whitespace=...)``) of a grammar made by
    :func:`schema_to_gbnf` with ``options``: ``limits.DEFAULT_JSON_MAX_WHITESPACE``, or what the
    layout needs when that is more (so the bound never refuses a layout the grammar allows; it
    bounds runs inside strings and any runaway)."""
    layout = layout_whitespace_run(
        options.get("whitespace", "flexible"),
        options.get("max_whitespace", DEFAULT_MAX_WHITESPACE),
        options.get("indent", 2),
    )
    return max(DEFAULT_JSON_MAX_WHITESPACE, layout)


def _json_gbnf() -> str:
    rules = Rules()
    layout = Layout(rules, "flexible", DEFAULT_MAX_WHITESPACE, 2)
    return rules.text(any_value(rules, layout, 0))


JSON_GBNF: str = _json_gbnf()
"""Any JSON value (flexible whitespace inside; strings as right-recursive rules)."""


def choices_to_gbnf(choices: list[str]) -> str:
    """Exactly one of ``choices`` (plain text, not JSON-quoted)."""
    if isinstance(choices, (str, bytes)) or not isinstance(choices, Iterable):
        raise TypeError(f"choices must be a list of strings, not {type(choices).__name__}")
    choices = list(choices)
    for i, choice in enumerate(choices):
        if not isinstance(choice, str):
            raise TypeError(f"choices[{i}] must be a str, got {type(choice).__name__}")
    if not choices:
        raise SchemaError("choices must not be empty", "")
    forms = list(dict.fromkeys(choices))
    return "root ::= " + " | ".join(literal_gbnf(c) for c in forms) + "\n"


def _tool_function(tool: Any, i: int) -> tuple[str, Any]:
    if not isinstance(tool, Mapping):
        raise SchemaError("a tool must be an object", f"/{i}")
    fn = tool.get("function", tool)
    if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
        raise SchemaError("a tool needs a function name", f"/{i}")
    params = fn.get("parameters", {"type": "object"})
    return fn["name"], plain_json(params, "tool parameters")


def _call_schema(tools: list[Any], only: str | None) -> dict[str, Any]:
    calls = []
    for i, tool in enumerate(tools):
        name, params = _tool_function(tool, i)
        if only is not None and name != only:
            continue
        if isinstance(params, dict):
            params = {**params, "$id": f"{TOOLS_BASE}{i}.json"}
        calls.append(
            {
                "type": "object",
                "properties": {"name": {"const": name}, "arguments": params},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    if not calls:
        raise SchemaError(f"no tool named {only!r}" if only else "no tools given", "")
    return {"anyOf": calls} if len(calls) > 1 else calls[0]


def tools_to_gbnf(tools: list[Any], tool_choice: Any = "auto", **options: Any) -> str:
    """OpenAI-style tool calls: ``{"name": ..., "arguments": {...}}`` or a JSON list of them.

    ``tool_choice``: ``"auto"`` (a call, a list of calls, or a plain-text answer that does not
    start with ``{`` or ``[``), ``"required"`` (calls only), ``"none"`` (text only), or
    ``{"type": "function", "function": {"name": ...}}`` (one call of that tool).
    """
    text = "text ::= [^{\\[] [\\x00-\\U0010FFFF]*\n"
    if tool_choice == "none":
        return "root ::= text?\n" + text
    only = None
    if isinstance(tool_choice, Mapping):
        only = tool_choice.get("function", {}).get("name") or tool_choice.get("name")
        if not isinstance(only, str):
            raise SchemaError("tool_choice must name a function", "")
    elif tool_choice not in ("auto", "required"):
        raise SchemaError(f"unknown tool_choice {tool_choice!r}", "")
    call = _call_schema(list(tools), only)
    schema = call if only else {"anyOf": [call, {"type": "array", "items": call, "minItems": 1}]}
    grammar = schema_to_gbnf(schema, **options)
    if tool_choice != "auto":
        return grammar
    body = (
        grammar.replace("root ::= ", "tool-calls-root ::= ", 1)
        if grammar.startswith("root ::= ")
        else grammar
    )
    return "root ::= tool-calls-root | text\n" + text + body


def response_format_to_gbnf(response_format: Mapping[str, Any], **options: Any) -> str:
    """OpenAI-style ``response_format``: ``{"type": "text"}``, ``{"type": "json_object"}`` (with
    an optional ``schema``), or ``{"type": "json_schema", "json_schema": {"schema": ...,
    "strict": ...}}`` (strict: no unlisted properties anywhere)."""
    if not isinstance(response_format, Mapping):
        raise SchemaError("response_format must be an object", "")
    kind = response_format.get("type")
    if kind == "text":
        return "root ::= [\\x00-\\U0010FFFF]*\n"
    if kind == "json_object":
        schema = response_format.get("schema", {"type": "object"})
        return schema_to_gbnf(schema, **options)
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        if not isinstance(spec, Mapping) or "schema" not in spec:
            raise SchemaError("json_schema.schema is required", "/json_schema")
        if spec.get("strict"):
            options.setdefault("additional_properties", False)
        return schema_to_gbnf(spec["schema"], **options)
    raise SchemaError(f"unknown response_format type {kind!r}", "/type")


__all__ = [
    "JSON_GBNF",
    "SchemaError",
    "SchemaWarning",
    "choices_to_gbnf",
    "layout_whitespace_run",
    "output_whitespace_bound",
    "response_format_to_gbnf",
    "schema_to_gbnf",
    "tools_to_gbnf",
]
