"""Schema documents as given by users (dicts, JSON text, Pydantic models) turned into plain JSON
data, checked before the converter walks them: only JSON types, and at most
:data:`MAX_SCHEMA_DEPTH` levels of nesting, so that no input reaches Python's recursion limit."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import SchemaError
from ..limits import MAX_SCHEMA_DEPTH


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def parse_json_text(text: str | bytes) -> Any:
    """``json.loads`` with every failure (bad syntax or encoding, too deep, an integer too long
    for Python) as a SchemaError."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as err:  # JSONDecodeError, UnicodeDecodeError included
        reason = "nested too deeply" if isinstance(err, RecursionError) else str(err)
        raise SchemaError(f"schema is not valid JSON: {reason}", "") from None


def plain_json(value: Any, what: str = "schema") -> Any:
    """A copy of ``value`` made of dicts (string keys), lists, str, int, float, bool and None.
    Mappings and tuples become dicts and lists; other types, or nesting deeper than
    MAX_SCHEMA_DEPTH, raise SchemaError with the JSON pointer of the offending value."""
    root: list[Any] = [None]
    # (value, container to store the copy in, key there, JSON pointer, depth)
    stack: list[tuple[Any, Any, Any, str, int]] = [(value, root, 0, "", 0)]
    while stack:
        item, parent, key, path, depth = stack.pop()
        if isinstance(item, (Mapping, list, tuple)):
            if depth >= MAX_SCHEMA_DEPTH:
                raise SchemaError(f"{what} is nested deeper than {MAX_SCHEMA_DEPTH} levels", path)
            if isinstance(item, Mapping):
                copy: Any = {}
                for k, v in item.items():
                    name = str(k)
                    copy[name] = None
                    stack.append((v, copy, name, f"{path}/{_escape(name)}", depth + 1))
            else:
                copy = [None] * len(item)
                stack.extend((v, copy, i, f"{path}/{i}", depth + 1) for i, v in enumerate(item))
            parent[key] = copy
        elif item is None or isinstance(item, (str, bool, int, float)):
            parent[key] = item
        else:
            raise SchemaError(f"a {type(item).__name__} is not a JSON value", path)
    return root[0]
