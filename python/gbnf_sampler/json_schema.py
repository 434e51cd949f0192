"""The JSON Schema compiler's public names under their historical module name (the compiler
lives in :mod:`gbnf_sampler.schema`)."""

from __future__ import annotations

from .schema import (
    JSON_GBNF,
    SchemaError,
    SchemaWarning,
    choices_to_gbnf,
    response_format_to_gbnf,
    schema_to_gbnf,
    tools_to_gbnf,
)

__all__ = [
    "JSON_GBNF",
    "SchemaError",
    "SchemaWarning",
    "choices_to_gbnf",
    "response_format_to_gbnf",
    "schema_to_gbnf",
    "tools_to_gbnf",
]
