"""What parsing a format's output gives: the finished result and the output so far."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Parsed(NamedTuple):
    """A finished output: the free text, the calls (``{"name", "arguments"}``, arguments
    decoded), and the think section's text (None when there was none)."""

    content: str
    tool_calls: list[dict[str, Any]]
    reasoning_content: str | None


@dataclass
class PartialCall:
    """A call as far as it was written: ``name`` once known; ``arguments_text``: the raw
    argument text so far (formats that write JSON), ``arguments``: the decoded arguments once
    the call is complete."""

    name: str | None = None
    arguments_text: str = ""
    streams_arguments: bool = True
    complete: bool = False
    arguments: Any = None


@dataclass
class PartialOutput:
    """The output so far: text that is surely content / reasoning (a possible marker at the end
    is held back), and the calls seen."""

    content: str = ""
    reasoning: str = ""
    calls: list[PartialCall] = field(default_factory=list)
    has_reasoning: bool = False


__all__ = ["Parsed", "PartialCall", "PartialOutput"]
