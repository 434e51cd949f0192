"""Tool calls and reasoning for the server, through the code ``gs.llama.chat`` uses.

The model's tool-call format (:mod:`gbnf_sampler.structural.formats`) is chosen once, when the
server starts (:func:`server_format`: ``--tool-format``, else the one the GGUF's chat template
shows, else one by the GGUF's architecture, else ``hermes``); a request may name another with
this package's ``tool_format`` field. A request's ``tools`` / ``tool_choice`` /
``parallel_tool_calls`` / ``reasoning`` (and ``response_format`` alongside them) become a
:class:`ChatRequest`, whose :meth:`~ChatRequest.build` runs
:func:`gbnf_sampler.structural.openai.request_constraint` on the compile pool; its result turns
the output back into OpenAI ``tool_calls`` and ``reasoning_content``, whole
(:meth:`ChatConstraint.message`) or as streaming deltas (:meth:`ChatConstraint.stream`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UnknownFormatError
from ..grammar import Grammar
from ..structural import formats
from ..structural.formats import ToolFormat
from ..structural.openai import ChatConstraint, request_constraint
from ..vocab import Vocab
from .errors import bad_request

logger = logging.getLogger(__name__)


def server_format(
    metadata: Mapping[str, Any], tool_format: str | ToolFormat | None = None
) -> tuple[ToolFormat, str]:
    """The server's tool-call format for a model (its GGUF ``metadata``) and how it was chosen;
    an unknown ``tool_format`` raises :class:`~gbnf_sampler.errors.UnknownFormatError` (its
    message lists the known names)."""
    template = metadata.get("tokenizer.chat_template")
    architecture = metadata.get("general.architecture")
    fmt, how = formats.for_model(
        str(template) if template else None,
        str(architecture) if architecture else None,
        tool_format,
    )
    logger.info("tool-call format: %s (%s)", fmt.name, how)
    return fmt, how


def request_format(body: Mapping[str, Any], default: ToolFormat) -> ToolFormat:
    """The format of one request: its ``tool_format`` field, else the server's."""
    name = body.get("tool_format")
    if name is None:
        return default
    if not isinstance(name, str):
        raise bad_request("tool_format must be a string", "tool_format")
    try:
        return formats.get(name)
    except UnknownFormatError as e:
        raise bad_request(str(e), "tool_format", "unknown_tool_format") from e


def wants_chat_constraint(body: Mapping[str, Any]) -> bool:
    """Whether the request's output is shaped by a tool-call format: tools are offered (a
    ``tool_choice`` other than "none") or reasoning is asked for."""
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise bad_request("tools must be a list", "tools")
    offered = bool(tools) and body.get("tool_choice") != "none"
    return offered or body.get("reasoning") not in (None, False)


@dataclass
class ChatRequest:
    """The tools / reasoning part of one chat request. :meth:`build` (run on the compile pool)
    makes the grammar and keeps the :class:`ChatConstraint` in :attr:`result` for reading the
    output back."""

    body: Mapping[str, Any]
    format: ToolFormat
    chat_template: str | None
    vocab: Vocab | None
    result: ChatConstraint | None = None

    def build(self) -> Grammar | None:
        self.result = request_constraint(
            self.body,
            chat_template=self.chat_template,
            vocab=self.vocab,
            tool_format=self.format,
        )
        return self.result.grammar

    def constraint(self) -> ChatConstraint:
        """The built constraint (after :meth:`build`; a plain one before)."""
        return self.result if self.result is not None else ChatConstraint(None, None)


__all__ = ["ChatRequest", "request_format", "server_format", "wants_chat_constraint"]
