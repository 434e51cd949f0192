"""The JSON Schema compiler: JSON Schema, Pydantic models, choices, tool lists and OpenAI
``response_format`` -> GBNF. The entry points are in :mod:`.api`; see its docstring for the
exactness contract and the keywords covered."""

from __future__ import annotations

from ..errors import SchemaError
from .api import (
    JSON_GBNF,
    choices_to_gbnf,
    layout_whitespace_run,
    output_whitespace_bound,
    response_format_to_gbnf,
    schema_to_gbnf,
    tools_to_gbnf,
)
from .convert import SchemaWarning

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
