"""What a conversion shares with the modules that build parts of it: the options, and the
converter seen through the few methods the container, key and ``uniqueItems`` rules call back
(:class:`SubschemaCompiler`, implemented by :class:`~.convert.Converter`), so that those modules
need not import the converter."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from .emit import Layout, Rules
from .instance import InstanceChecker


@dataclass(frozen=True)
class Options:
    whitespace: str
    max_whitespace: int
    strict: bool
    additional_properties: bool | None
    indent: int
    documents: Mapping[str, Any] | None = None
    property_order: str = "schema"


class SubschemaCompiler(Protocol):
    """The converter, as the rules for arrays, objects, keys and unique items use it."""

    options: Options
    rules: Rules
    layout: Layout
    instances: InstanceChecker

    def value(self, schema: Any, path: str, depth: int) -> str | None:
        """The rule of the JSON values valid under ``schema`` (None: no value is)."""
        ...

    def flatten(self, schema: Any, path: str, seen: tuple[str, ...]) -> Any:
        """``schema`` with its ``$ref`` and ``allOf`` merged in (a dict without them, or a bool)."""
        ...

    def logic_flatten(self, schema: Any) -> Any:
        """``flatten`` for negation and the ``oneOf`` analysis (errors become ``Cannot``)."""
        ...

    def literal_value(self, v: Any, depth: int) -> str:
        """The GBNF of the JSON text of ``v`` (every spelling the layout allows)."""
        ...

    def unsupported(self, err: Any) -> None:
        """Reports what cannot be compiled exactly (an error when strict, else a warning)."""
        ...

    def plain_numbers(self) -> AbstractContextManager[None]:
        """Within it, numbers have no spelling that can only become one value (``1.0``)."""
        ...


__all__ = ["Options", "SubschemaCompiler"]
