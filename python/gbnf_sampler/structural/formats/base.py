"""What every tool-call format shares: OpenAI tool lists and ``tool_choice``, the reasoning
option, the constraint handed to generation, and the parse result.

A format (:class:`ToolFormat`) turns ``(tools, tool_choice, parallel_tool_calls, reasoning)``
into a structural tag (:meth:`ToolFormat.structural_tag`), a grammar
(:meth:`ToolFormat.grammar`) or a :class:`ToolConstraint` (grammar plus the reasoning budget the
generation layer enforces), and turns the model's text back into OpenAI message fields
(:meth:`ToolFormat.parse`, :meth:`ToolFormat.stream_parser`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import StructuralTagError
from ...grammar import Grammar
from ...vocab import Vocab
from ..tags import from_structural_tag
from .results import Parsed, PartialCall, PartialOutput
from .stream import StreamParser


@dataclass(frozen=True)
class Tool:
    """One function tool: its name and the JSON Schema of its arguments."""

    name: str
    parameters: Any


def normalize_tools(tools: Any) -> list[Tool]:
    """OpenAI tools (``{"type": "function", "function": {"name", "parameters"}}``, or the bare
    function objects) as :class:`Tool` values. A missing ``parameters`` means any object."""
    if tools is None:
        return []
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise StructuralTagError("tools must be a list of tool objects", "/tools")
    out = []
    for i, tool in enumerate(tools):
        path = f"/tools/{i}"
        if not isinstance(tool, Mapping):
            raise StructuralTagError("a tool must be an object", path)
        if tool.get("type", "function") != "function":
            raise StructuralTagError(f"unsupported tool type {tool.get('type')!r}", path + "/type")
        fn = tool.get("function", tool)
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise StructuralTagError("a tool needs a function name", path + "/function/name")
        params = fn.get("parameters")
        if params is None or fn.get("strict") is False:
            params = {"type": "object"}
        out.append(Tool(fn["name"], params))
    names = [t.name for t in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise StructuralTagError(f"tool {dupes[0]!r} is listed twice", "/tools")
    return out


def resolve_tool_choice(tools: list[Tool], tool_choice: Any) -> tuple[str, list[Tool]]:
    """(mode, tools it allows): ``auto``, ``required``, ``none``, or ``named`` (one tool)."""
    if tool_choice is None:
        tool_choice = "auto"
    if isinstance(tool_choice, Mapping):
        fn = tool_choice.get("function", tool_choice)
        name = fn.get("name") if isinstance(fn, Mapping) else None
        if not isinstance(name, str):
            raise StructuralTagError("tool_choice must name a function", "/tool_choice")
        chosen = [t for t in tools if t.name == name]
        if not chosen:
            known = ", ".join(t.name for t in tools) or "none"
            raise StructuralTagError(f"no tool named {name!r} (tools: {known})", "/tool_choice")
        return "named", chosen
    if tool_choice not in ("auto", "required", "none"):
        raise StructuralTagError(
            f"unknown tool_choice {tool_choice!r} (auto, required, none, or "
            '{"type": "function", "function": {"name": ...}})',
            "/tool_choice",
        )
    if tool_choice != "none" and not tools:
        if tool_choice == "required":
            raise StructuralTagError("tool_choice 'required' needs at least one tool", "/tools")
        return "none", []
    return str(tool_choice), tools


@dataclass(frozen=True)
class Reasoning:
    """The reasoning option: ``mode`` off / on (the output opens with the think section) /
    auto (it may); ``budget``: at most this many tokens inside it (enforced by generation)."""

    mode: str
    budget: int | None = None

    @classmethod
    def coerce(cls, value: Any) -> Reasoning:
        if isinstance(value, Reasoning):
            return value
        if value is None or value is False or value == "disabled":
            return cls("off")
        if value is True or value == "enabled":
            return cls("on")
        if value == "auto":
            return cls("auto")
        if isinstance(value, Mapping):
            budget = value.get("budget")
            if budget is not None and (
                not isinstance(budget, int) or isinstance(budget, bool) or budget < 0
            ):
                raise StructuralTagError("reasoning budget must be an integer >= 0", "/reasoning")
            unknown = set(value) - {"budget", "mode"}
            if unknown:
                raise StructuralTagError(f"unknown reasoning option {sorted(unknown)[0]!r}", "")
            mode = cls.coerce(value.get("mode", True)).mode
            return cls(mode, budget)
        raise StructuralTagError(
            f"reasoning must be False, True, 'auto' or {{'budget': N}}, not {value!r}",
            "/reasoning",
        )


@dataclass(frozen=True)
class ReasoningBudget:
    """For the generation layer: once ``max_tokens`` tokens were generated inside the think
    section (opened by ``begin``, or already open when ``begin`` is None), the text ``end`` is
    forced."""

    begin: str | None
    end: str
    max_tokens: int


@dataclass(frozen=True)
class ToolConstraint:
    """A format's grammar for one request, with what generation and parsing need."""

    grammar: Grammar
    format: ToolFormat
    tools: list[Tool]
    budget: ReasoningBudget | None = None
    spec: Mapping[str, Any] = field(default_factory=dict)

    reasoning: Reasoning = Reasoning("off")

    def parse(self, text: str) -> Parsed:
        return self.format.parse(text, self.tools, reasoning=self.reasoning)


def args_format(parameters: Any, style: str) -> dict[str, Any]:
    """The structural-tag content of a call's arguments: its schema, with no property the
    schema does not list (``additionalProperties: false`` where it says nothing, as OpenAI's
    strict mode and llama.cpp do: a model adding an argument is never what the tool wants)."""
    spec: dict[str, Any] = {"type": "json_schema", "json_schema": parameters, "style": style}
    if style == "json":
        spec["additional_properties"] = False
    return spec


_PLACEHOLDERS = {"string": "...", "integer": 1, "number": 1.5, "boolean": True, "null": None}


def example_arguments(tool: Tool) -> dict[str, Any]:
    """Placeholder arguments for an example call (the required properties, by type)."""
    params = tool.parameters if isinstance(tool.parameters, Mapping) else {}
    props = params.get("properties") or {}
    out: dict[str, Any] = {}
    for name in params.get("required", list(props)[:1]):
        prop = props.get(name, {})
        enum = prop.get("enum") if isinstance(prop, Mapping) else None
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        out[name] = enum[0] if enum else _PLACEHOLDERS.get(str(kind), "...")
    return out


class ToolFormat:
    """Base class of the formats (see :mod:`gbnf_sampler.structural.formats`)."""

    name: str = ""
    aliases: tuple[str, ...] = ()
    models: str = ""

    def structural_tag(
        self,
        tools: Any,
        tool_choice: Any = "auto",
        parallel_tool_calls: bool = True,
        reasoning: Any = False,
    ) -> dict[str, Any]:
        """The structural tag (a JSON-able dict) of one request."""
        normalized = normalize_tools(tools)
        mode, allowed = resolve_tool_choice(normalized, tool_choice)
        reasoning_option = Reasoning.coerce(reasoning)
        return self._spec(allowed, mode, bool(parallel_tool_calls), reasoning_option, None)

    def constraint(
        self,
        tools: Any,
        tool_choice: Any = "auto",
        parallel_tool_calls: bool = True,
        reasoning: Any = False,
        *,
        vocab: Vocab | None = None,
        answer: Mapping[str, Any] | None = None,
    ) -> ToolConstraint:
        """The grammar of one request (``vocab``: write the format's special tokens as tokens
        of this vocabulary) and the reasoning budget for the generation layer. ``answer``: a
        structural-tag format for a text answer (a JSON Schema...), with no tool calls."""
        normalized = normalize_tools(tools)
        mode, allowed = resolve_tool_choice(normalized, tool_choice)
        if answer is not None and mode != "none":
            raise StructuralTagError(
                "an answer format needs tool_choice='none' (calls and a structured answer "
                "are not combined)",
                "/tool_choice",
            )
        option = Reasoning.coerce(reasoning)
        spec = self._spec(allowed, mode, bool(parallel_tool_calls), option, answer)
        grammar = from_structural_tag(spec, vocab=vocab)
        budget = self._budget(option)
        return ToolConstraint(grammar, self, normalized, budget, spec, option)

    def grammar(
        self,
        tools: Any,
        tool_choice: Any = "auto",
        parallel_tool_calls: bool = True,
        reasoning: Any = False,
        *,
        vocab: Vocab | None = None,
    ) -> Grammar:
        """The grammar of one request (see :meth:`constraint`)."""
        return self.constraint(
            tools, tool_choice, parallel_tool_calls, reasoning, vocab=vocab
        ).grammar

    # --- what formats implement ---

    def _spec(
        self,
        tools: list[Tool],
        mode: str,
        parallel: bool,
        reasoning: Reasoning,
        answer: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        raise NotImplementedError

    def instructions(self, tools: Any) -> str:
        """A system-prompt paragraph listing ``tools`` and showing this format's call syntax,
        for chat templates that do not render tools themselves."""
        normalized = normalize_tools(tools)
        listing = "\n".join(
            json.dumps({"name": t.name, "parameters": t.parameters}, ensure_ascii=False)
            for t in normalized
        )
        example = self.render(
            "", [{"name": normalized[0].name, "arguments": example_arguments(normalized[0])}]
        )
        return (
            "You can call these functions (JSON Schema of their arguments):\n"
            f"{listing}\n"
            "To call a function, answer in exactly this format, for example:\n"
            f"{example}"
        )

    def _budget(self, reasoning: Reasoning) -> ReasoningBudget | None:
        return None

    def parse(self, text: str, tools: Any = None, *, reasoning: Any = None) -> Parsed:
        """A finished output as (content, tool_calls, reasoning_content). ``tools`` (optional)
        decodes arguments whose written form depends on the schema (raw XML strings).
        ``reasoning``: the option the output was generated with (it says whether a prompt that
        opens the think section did); None: guess from the text."""
        raise NotImplementedError

    def parse_partial(
        self, text: str, tools: Any = None, *, reasoning: Any = None
    ) -> PartialOutput:
        """The output so far, for streaming (see :mod:`.stream`)."""
        raise NotImplementedError

    def render(
        self, content: str, tool_calls: list[dict[str, Any]], reasoning: str | None = None
    ) -> str:
        """The text a model of this format writes for these fields (the inverse of parse)."""
        raise NotImplementedError

    def stream_parser(self, tools: Any = None, *, reasoning: Any = None) -> StreamParser:
        """An incremental parser of this format's output: text chunks in, OpenAI deltas out."""
        return StreamParser(self, tools, reasoning)

    def __repr__(self) -> str:
        return f"<ToolFormat {self.name!r}>"


__all__ = [
    "Parsed",
    "PartialCall",
    "PartialOutput",
    "Reasoning",
    "ReasoningBudget",
    "Tool",
    "ToolConstraint",
    "ToolFormat",
    "example_arguments",
    "normalize_tools",
    "resolve_tool_choice",
]
