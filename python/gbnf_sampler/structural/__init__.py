"""Structure around free text: triggered (lazy) grammars (:mod:`.triggers`), structural tags
(:mod:`.tags`), per-model tool-call and reasoning formats (:mod:`.formats`, ``gs.tool_formats``)
and the OpenAI request/response glue a chat front end or server needs (:mod:`.openai`)."""

from __future__ import annotations

from . import formats
from .tags import from_structural_tag, structural_tag_gbnf
from .triggers import Trigger, triggered

__all__ = ["Trigger", "formats", "from_structural_tag", "structural_tag_gbnf", "triggered"]
