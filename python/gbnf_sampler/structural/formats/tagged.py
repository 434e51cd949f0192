"""The formats whose calls are marked-up text in the answer: ``begin NAME name_end ARGS end``,
optionally grouped in a section (``<｜tool▁calls▁begin｜> ... <｜tool▁calls▁end｜>``), after an
optional think section. One description (:class:`TaggedFormat`) gives the structural tag, the
parser, the streaming parser and the renderer, so they cannot disagree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import StructuralTagError
from ..literals import GEMMA, PYTHON
from ..styles import XML_STYLES
from . import scan
from .base import (
    Reasoning,
    ReasoningBudget,
    Tool,
    ToolFormat,
    args_format,
    normalize_tools,
)
from .results import Parsed, PartialCall, PartialOutput


@dataclass(frozen=True)
class Think:
    """The think section: ``begin`` text ``end`` then ``suffix``; ``in_prompt``: the chat
    template's generation prompt already wrote ``begin``."""

    begin: str
    end: str
    suffix: str = ""
    in_prompt: bool = False


@dataclass(frozen=True)
class CallSyntax:
    """One call: ``begin`` + name + ``name_end`` + arguments (``style``) + ``end``; ``trigger``:
    the text that starts it in free text (a prefix of ``begin``); ``json_name``: the name is
    inside a JSON string (escaped)."""

    begin: str
    name_end: str
    end: str
    trigger: str
    style: str = "json"
    json_name: bool = False
    name_pattern: str = r"(.*?)"  # how the parser finds the name before ``name_end``

    def opening(self, name: str) -> str:
        shown = json.dumps(name)[1:-1] if self.json_name else name
        return f"{self.begin}{shown}{self.name_end}"


@dataclass(frozen=True)
class Section:
    """All calls of an answer grouped: ``begin`` calls joined by ``separator`` ``end``;
    ``trigger``: a prefix of ``begin``."""

    begin: str
    end: str
    separator: str
    trigger: str


class TaggedFormat(ToolFormat):
    def __init__(
        self,
        name: str,
        *,
        calls: tuple[CallSyntax, ...],
        section: Section | None = None,
        think: Think | None = None,
        aliases: tuple[str, ...] = (),
        models: str = "",
        call_separator: str = "\n",
    ) -> None:
        self.name = name
        self.calls = calls
        self.section = section
        self.think = think
        self.aliases = aliases
        self.models = models
        self.call_separator = call_separator
        self.triggers = (
            [section.trigger] if section else list(dict.fromkeys(c.trigger for c in calls))
        )

    # --- structural tag ---

    def _call_tags(self, tools: list[Tool]) -> list[dict[str, Any]]:
        return [
            {
                "type": "tag",
                "begin": c.opening(t.name),
                "content": args_format(t.parameters, c.style),
                "end": c.end,
            }
            for c in self.calls
            for t in tools
        ]

    def _calls_spec(
        self, tools: list[Tool], mode: str, parallel: bool, answer: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if mode == "none":
            return dict(answer) if answer else {"type": "any_text", "excludes": self.triggers}
        one = mode == "named" or not parallel
        tags = self._call_tags(tools)
        if self.section is not None:
            inner = {
                "type": "tags_with_separator",
                "tags": tags,
                "separator": self.section.separator,
                "at_least_one": True,
                "stop_after_first": one,
            }
            tags = [
                {
                    "type": "tag",
                    "begin": self.section.begin,
                    "content": inner,
                    "end": self.section.end,
                }
            ]
        return {
            "type": "triggered_tags",
            "triggers": self.triggers,
            "tags": tags,
            "at_least_one": mode in ("required", "named"),
            "stop_after_first": one,
        }

    def _think_spec(self, reasoning: Reasoning) -> dict[str, Any] | None:
        if reasoning.mode == "off":
            return None
        if self.think is None:
            raise StructuralTagError(f"format {self.name!r} has no reasoning section", "/reasoning")
        think = self.think
        spec: dict[str, Any] = {
            "type": "tag",
            "begin": "" if think.in_prompt else think.begin,
            "content": {"type": "any_text"},
            "end": think.end,
        }
        if think.suffix:
            spec = {
                "type": "sequence",
                "elements": [spec, {"type": "const_string", "value": think.suffix}],
            }
        if reasoning.mode == "auto" and not think.in_prompt:
            spec = {"type": "optional", "content": spec}
        return spec

    def _spec(
        self,
        tools: list[Tool],
        mode: str,
        parallel: bool,
        reasoning: Reasoning,
        answer: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        calls = self._calls_spec(tools, mode, parallel, answer)
        think = self._think_spec(reasoning)
        fmt = calls if think is None else {"type": "sequence", "elements": [think, calls]}
        return {"type": "structural_tag", "format": fmt}

    def _budget(self, reasoning: Reasoning) -> ReasoningBudget | None:
        if reasoning.budget is None or self.think is None or reasoning.mode == "off":
            return None
        begin = None if self.think.in_prompt else self.think.begin
        return ReasoningBudget(begin, self.think.end, reasoning.budget)

    # --- parsing ---

    def parse(self, text: str, tools: Any = None, *, reasoning: Any = None) -> Parsed:
        out = self._scan(text, _schemas(tools), True, _mode(reasoning))
        calls = [{"name": c.name, "arguments": c.arguments} for c in out.calls if c.complete]
        reasoning = out.reasoning.strip() if out.has_reasoning else None
        return Parsed(out.content.strip(), calls, reasoning)

    def parse_partial(
        self, text: str, tools: Any = None, *, reasoning: Any = None
    ) -> PartialOutput:
        return self._scan(text, _schemas(tools), False, _mode(reasoning))

    def _scan(
        self, text: str, schemas: dict[str, Any], final: bool, mode: str | None
    ) -> PartialOutput:
        out = PartialOutput()
        pos = self._scan_think(text, out, final, mode)
        parts: list[str] = []
        while pos < len(text):
            hit = _find_first(text, pos, self.triggers)
            if hit is None:
                tail = text[pos:]
                hold = 0 if final else max(scan.prefix_overlap(tail, t) for t in self.triggers)
                parts.append(tail[: len(tail) - hold])
                break
            parts.append(text[pos:hit])
            before = len(out.calls)
            end = self._read_calls(text, hit, schemas, out)
            if end is scan.INCOMPLETE and not final:
                break
            if end is scan.INCOMPLETE and any(c.complete for c in out.calls[before:]):
                out.calls = [c for c in out.calls if c.complete]  # cut off: the whole calls
                break
            if not isinstance(end, int):  # not a call after all (or cut off): it is text
                del out.calls[before:]
                parts.append(text[hit:])
                break
            pos = end
        out.content = "".join(parts)
        return out

    def _scan_think(self, text: str, out: PartialOutput, final: bool, mode: str | None) -> int:
        """Reads the think section; returns where the answer starts. ``mode``: the reasoning
        option (None: unknown; a section the prompt opened is then taken to be there when its
        end is, or, while streaming, until the text shows otherwise)."""
        think = self.think
        if think is None or mode == "off":
            return 0
        start = scan.skip_ws(text, 0)
        if think.in_prompt and mode is None and final and think.end not in text:
            return 0
        if not think.in_prompt:
            if not final and think.begin.startswith(text[start:]):
                return len(text)  # may still become the think section
            if not text.startswith(think.begin, start):
                return 0
            start += len(think.begin)
        out.has_reasoning = True
        close = text.find(think.end, start)
        if close < 0:
            hold = 0 if final else scan.prefix_overlap(text[start:], think.end)
            out.reasoning = text[start : len(text) - hold]
            return len(text)
        out.reasoning = text[start:close]
        pos = close + len(think.end)
        if think.suffix and text.startswith(think.suffix, pos):
            pos += len(think.suffix)
        return pos

    def _read_calls(self, text: str, i: int, schemas: dict[str, Any], out: PartialOutput) -> Any:
        """Reads the calls (or the section) at ``i``; returns where they end, INCOMPLETE, or
        None when the text is not a call after all."""
        if self.section is None:
            syntax = next(c for c in self.calls if text.startswith(c.trigger, i))
            return self._read_call(text, i, syntax, schemas, out)
        section = self.section
        j = _match_literal(text, i, section.begin)
        first = True
        while isinstance(j, int):
            j = scan.skip_ws(text, j)
            pending = False
            if not first:
                end = _match_literal(text, j, section.end)
                if isinstance(end, int):
                    return end
                pending = end is scan.INCOMPLETE
                if section.separator.strip():
                    sep = _match_literal(text, j, section.separator)
                    if not isinstance(sep, int):
                        return scan.INCOMPLETE if pending or sep is scan.INCOMPLETE else None
                    j = scan.skip_ws(text, sep)
            j = self._read_call(text, j, self.calls[0], schemas, out)
            if j is None and pending:
                return scan.INCOMPLETE
            first = False
        return j

    def _read_call(
        self, text: str, i: int, syntax: CallSyntax, schemas: dict[str, Any], out: PartialOutput
    ) -> Any:
        j = _match_literal(text, i, syntax.begin)
        if not isinstance(j, int):
            return j
        m = re.compile("(?s)" + syntax.name_pattern + scan.lenient(syntax.name_end)).match(text, j)
        if m is None:
            return scan.INCOMPLETE
        name = json.loads(f'"{m.group(1)}"') if syntax.json_name else m.group(1).strip()
        call = PartialCall(name, streams_arguments=syntax.style == "json")
        out.calls.append(call)
        result = _read_arguments(text, m.end(), syntax, schemas.get(name))
        if result is scan.INCOMPLETE or result is None:
            if syntax.style == "json":
                call.arguments_text = text[scan.skip_ws(text, m.end()) :]
            return result
        call.arguments, args_end = result
        if syntax.style == "json":
            call.arguments_text = text[scan.skip_ws(text, m.end()) : args_end]
        end = _match_literal(text, args_end, syntax.end)
        if isinstance(end, int):
            call.complete = True
        return end

    # --- rendering ---

    def render(
        self, content: str, tool_calls: list[dict[str, Any]], reasoning: str | None = None
    ) -> str:
        out = ""
        if reasoning is not None and self.think is not None:
            begin = "" if self.think.in_prompt else self.think.begin
            out += begin + reasoning + self.think.end + self.think.suffix
        out += content
        if not tool_calls:
            return out
        syntax = self.calls[0]
        texts = [
            syntax.opening(c["name"]) + render_arguments(c["arguments"], syntax.style) + syntax.end
            for c in tool_calls
        ]
        if self.section is not None:
            return out + self.section.begin + self.section.separator.join(texts) + self.section.end
        return out + self.call_separator.join(texts)


def _mode(reasoning: Any) -> str | None:
    return None if reasoning is None else Reasoning.coerce(reasoning).mode


def _schemas(tools: Any) -> dict[str, Any]:
    return {t.name: t.parameters for t in normalize_tools(tools)} if tools else {}


def _find_first(text: str, pos: int, triggers: list[str]) -> int | None:
    hits = [i for i in (text.find(t, pos) for t in triggers) if i >= 0]
    return min(hits) if hits else None


def _compact(text: str) -> str:
    return "".join(text.split())


def _match_literal(text: str, i: int, literal: str) -> Any:
    """The end of ``literal`` (leniently) at ``i``; INCOMPLETE when the text stops inside it;
    None when it is not there."""
    if not literal:
        return i
    m = re.compile(scan.lenient(literal)).match(text, i)
    if m is not None:
        return m.end()
    rest = _compact(text[i:])
    return scan.INCOMPLETE if _compact(literal).startswith(rest) else None


def _read_arguments(text: str, i: int, syntax: CallSyntax, schema: Any) -> Any:
    style = syntax.style
    if style == "json":
        return scan.json_value(text, i)
    if style == "python":
        return scan.python_kwargs(text, i)
    if style == "gemma":
        return scan.gemma_value(text, scan.skip_ws(text, i))
    return scan.xml_arguments(text, i, XML_STYLES[style], syntax.end, schema or {})


def render_arguments(arguments: Any, style: str) -> str:
    """Arguments written in ``style`` (as the grammar writes them)."""
    if style == "json":
        return json.dumps(arguments, ensure_ascii=False)
    if style == "python":
        return ", ".join(f"{k}={PYTHON.render(v)}" for k, v in arguments.items())
    if style == "gemma":
        return GEMMA.render(arguments)
    xml = XML_STYLES[style]
    parts = []
    for key, value in arguments.items():
        raw = isinstance(value, str)
        shown = value if raw else json.dumps(value, ensure_ascii=False)
        parts.append(f"{xml.open(key, raw)}{shown}{xml.close}")
    return "".join(parts)


__all__ = ["CallSyntax", "Section", "TaggedFormat", "Think", "render_arguments"]
