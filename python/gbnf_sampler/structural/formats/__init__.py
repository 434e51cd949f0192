"""Per-model tool-call and reasoning formats (``gs.tool_formats``).

    fmt = gs.tool_formats.get("hermes")            # or detect(chat_template)
    grammar = fmt.grammar(tools, tool_choice="auto", parallel_tool_calls=True, reasoning=False)
    content, tool_calls, reasoning = fmt.parse(text)
    parser = fmt.stream_parser(tools); parser.feed(chunk) -> OpenAI deltas; parser.finish()

``names()`` lists the formats, ``get(name)`` finds one by name or alias (an unknown name raises
:class:`~gbnf_sampler.errors.UnknownFormatError` listing the known ones), ``detect(template)``
picks one from a Jinja chat template, ``register(fmt)`` adds your own. The formats and what
their calls look like: :mod:`.registry`.

``tool_choice``: ``"auto"`` (free text; a call starts at the format's marker), ``"required"``
(the output opens with a call), ``"none"`` (free text without the marker), or
``{"type": "function", "function": {"name": ...}}`` (exactly one call of that tool).
``parallel_tool_calls=False``: at most one call. ``reasoning``: ``False``, ``True`` (the output
opens with the think section, free text inside), ``"auto"`` (it may), or ``{"budget": N}``
(on, and generation forces the closing tag after N tokens: see
:class:`~.base.ReasoningBudget`).
"""

from __future__ import annotations

from .base import (
    Reasoning,
    ReasoningBudget,
    Tool,
    ToolConstraint,
    ToolFormat,
    normalize_tools,
)
from .harmony import HarmonyFormat
from .registry import BUILTIN, detect, get, names, register
from .results import Parsed
from .stream import StreamParser
from .tagged import CallSyntax, Section, TaggedFormat, Think

__all__ = [
    "BUILTIN",
    "CallSyntax",
    "HarmonyFormat",
    "Parsed",
    "Reasoning",
    "ReasoningBudget",
    "Section",
    "StreamParser",
    "TaggedFormat",
    "Think",
    "Tool",
    "ToolConstraint",
    "ToolFormat",
    "detect",
    "get",
    "names",
    "normalize_tools",
    "register",
]
