"""Which keys of a schema object are keywords (they constrain values) and which are not.

jsonschema ignores every key it does not know (``x-taplo``, ``x-intellij-html-description``,
``markdownDescription``...), so the converter does too: such keys are annotations, never
constraints, and two schemas that differ only in them mean the same.
"""

from __future__ import annotations

from typing import Any

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "example",
        "$comment",
        "$schema",
        "$id",
        "id",
        "$defs",
        "definitions",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
        "readOnly",
        "writeOnly",
        "deprecated",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "markdownDescription",
        "deprecationMessage",
        "errorMessage",
        "discriminator",
        "externalDocs",
        "xml",
    }
)

OBJECT_KEYWORDS = frozenset(
    {
        "__some_member__",
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependencies",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
    }
)
ARRAY_KEYWORDS = frozenset(
    {
        "items",
        "prefixItems",
        "additionalItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedItems",
    }
)
STRING_KEYWORDS = frozenset(
    {
        "pattern",
        "__patterns__",
        "format",
        "__formats__",
        "minLength",
        "maxLength",
        "__not_in__",
        "__not_strings__",
    }
)
NUMBER_KEYWORDS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "__non_integral__"}
)
KIND_KEYWORDS = {
    "null": frozenset(),
    "boolean": frozenset(),
    "object": OBJECT_KEYWORDS,
    "array": ARRAY_KEYWORDS,
    "string": STRING_KEYWORDS,
    "number": NUMBER_KEYWORDS,
}
ALL_KIND_KEYWORDS = OBJECT_KEYWORDS | ARRAY_KEYWORDS | STRING_KEYWORDS | NUMBER_KEYWORDS
# Keywords about values of every kind; any other unknown key is an annotation (jsonschema
# ignores it, and so does the converter).
GENERIC_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
    }
)


def is_keyword(key: str) -> bool:
    """Whether ``key`` constrains values (else it is an annotation or unknown: ignored)."""
    if key in ANNOTATIONS:
        return False
    return key in GENERIC_KEYWORDS or key in ALL_KIND_KEYWORDS or key.startswith("__")


def keywords_of(schema: dict[str, Any]) -> set[str]:
    """The keys of ``schema`` that constrain values."""
    return {k for k in schema if is_keyword(k)}


__all__ = [
    "ALL_KIND_KEYWORDS",
    "ANNOTATIONS",
    "ARRAY_KEYWORDS",
    "GENERIC_KEYWORDS",
    "KIND_KEYWORDS",
    "NUMBER_KEYWORDS",
    "OBJECT_KEYWORDS",
    "STRING_KEYWORDS",
    "is_keyword",
    "keywords_of",
]
