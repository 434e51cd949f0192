"""Every structured-output dialect a request may speak, mapped onto one of our grammars.

:func:`find_constraint` looks at a request body once, finds the (at most one) field that
constrains the output, checks its size, and returns a :class:`Constraint` whose ``build`` makes
the :class:`~gbnf_sampler.Grammar` (run on the compile pool, never on the event loop). Two
constraining fields in one request are a 400 naming both.

=====================================  ==========================================
field (dialect)                        grammar
=====================================  ==========================================
``response_format`` (OpenAI)           text: none; json_object (+ ``schema``,
                                       llama-cpp-python); json_schema (``strict``)
``tools``, ``reasoning`` (OpenAI)     the model's tool-call format (:mod:`.tools`), as
                                       ``gs.llama.chat`` (+ ``response_format``)
``grammar`` (llama.cpp, LocalAI)       GBNF (``grammar_lazy`` + ``grammar_triggers``:
                                       free text until a word or token trigger)
``grammar_json_functions`` (LocalAI)   JSON Schema
``json_schema`` (llama.cpp server)     JSON Schema
``structured_outputs`` (vLLM)          ``json`` / ``regex`` / ``choice`` / ``grammar``
``guided_json`` etc. (older vLLM)      ``guided_json|regex|choice|grammar``
``format`` (Ollama)                    ``"json"``: a JSON object; a dict: JSON Schema
=====================================  ==========================================

A request may add ``"property_order": "any"`` (a gbnf-sampler extension; default ``"schema"``):
every JSON Schema it carries (all the fields above but ``grammar``, ``regex``, ``choice`` and
``tools``) then accepts an object's properties in any order (see
:func:`gbnf_sampler.json_schema.schema_to_gbnf`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..grammar import Grammar
from ..limits import SERVE_MAX_GRAMMAR_BYTES
from ..schema.api import PROPERTY_ORDERS
from ..structural import formats
from ..structural.formats import ToolFormat
from ..structural.openai import ChatConstraint
from ..structural.triggers import Trigger
from ..vocab import Vocab
from .errors import ApiError, bad_request
from .tools import ChatRequest, request_format, wants_chat_constraint

_VLLM_KINDS = ("json", "regex", "choice", "grammar")
_JSON_OBJECT: dict[str, Any] = {"type": "object"}


@dataclass(frozen=True)
class Constraint:
    """The constraining field of a request: ``param`` names it (for errors), ``spec`` is its
    value, ``build`` makes the grammar (None: generation is unconstrained)."""

    param: str
    spec: Any
    build: Callable[[], Grammar | None]
    chat: ChatRequest | None = None  # set when the output is parsed back by a tool format


def output_reader(constraint: Constraint | None) -> ChatConstraint:
    """How a request's output is read back into a message: by its tool-call format (after the
    constraint was built), or as plain content."""
    if constraint is not None and constraint.chat is not None:
        return constraint.chat.constraint()
    return ChatConstraint(None, None)


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8", errors="replace"))
    return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "replace"))


def _check_size(param: str, value: Any) -> None:
    size = _size(value)
    if size > SERVE_MAX_GRAMMAR_BYTES:
        raise ApiError(
            413,
            f"{param} is {size} bytes; the limit is {SERVE_MAX_GRAMMAR_BYTES} bytes",
            param=param,
            code="grammar_too_large",
        )


def _text(param: str, value: Any) -> str:
    if not isinstance(value, str):
        raise bad_request(f"{param} must be a string, got {type(value).__name__}", param)
    return value


def _choices(param: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise bad_request(f"{param} must be a list of strings", param)
    return value


def _schema_options(body: Mapping[str, Any]) -> dict[str, Any]:
    """The schema options a request body sets: ``property_order`` (checked: a 400 otherwise)."""
    order = body.get("property_order")
    if order is None:
        return {}
    if order not in PROPERTY_ORDERS:
        choices = " or ".join(f'"{o}"' for o in PROPERTY_ORDERS)
        raise bad_request(f"property_order must be {choices}, got {order!r}", "property_order")
    return {"property_order": order}


def _schema(param: str, value: Any, options: Mapping[str, Any]) -> Callable[[], Grammar]:
    if not isinstance(value, (Mapping, str, bool)):
        raise bad_request(f"{param} must be a JSON Schema object", param)
    return lambda: Grammar.from_json_schema(value, **options)


def _gbnf(param: str, value: Any) -> Callable[[], Grammar]:
    text = _text(param, value)
    return lambda: Grammar.from_gbnf(text)


def _regex(param: str, value: Any) -> Callable[[], Grammar]:
    pattern = _text(param, value)
    return lambda: Grammar.from_regex(pattern)


def _choice(param: str, value: Any) -> Callable[[], Grammar]:
    choices = _choices(param, value)
    return lambda: Grammar.from_choices(choices)


_VLLM_BUILDERS = {"regex": _regex, "choice": _choice, "grammar": _gbnf}


def _vllm(kind: str, param: str, value: Any, options: Mapping[str, Any]) -> Callable[[], Grammar]:
    if kind == "json":
        return _schema(param, value, options)
    return _VLLM_BUILDERS[kind](param, value)


def _response_format(value: Any, options: Mapping[str, Any]) -> Callable[[], Grammar | None] | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
        raise bad_request('response_format must be an object with a "type"', "response_format")
    if value["type"] == "text":
        return None
    return lambda: Grammar.from_response_format(value, **options)


def _ollama_format(value: Any, options: Mapping[str, Any]) -> Callable[[], Grammar] | None:
    if value in ("", None):
        return None
    if value == "json":
        return lambda: Grammar.from_json_schema(_JSON_OBJECT)
    if isinstance(value, Mapping):
        return _schema("format", value, options)
    raise bad_request('format must be "json" or a JSON Schema object', "format")


def _structured_outputs(
    body: Mapping[str, Any], found: list[Constraint], options: Mapping[str, Any]
) -> None:
    value = body["structured_outputs"]
    if not isinstance(value, Mapping):
        raise bad_request("structured_outputs must be an object", "structured_outputs")
    for kind in _VLLM_KINDS:
        if value.get(kind) is not None:
            param = f"structured_outputs.{kind}"
            found.append(Constraint(param, value[kind], _vllm(kind, param, value[kind], options)))
    if value.get("json_object"):
        param = "structured_outputs.json_object"
        found.append(Constraint(param, True, lambda: Grammar.from_json_schema(_JSON_OBJECT)))


@dataclass(frozen=True)
class ChatOptions:
    """What a chat request's tools and reasoning need besides the body: the chat template, the
    vocabulary (special tokens of the format) and the server's tool-call format."""

    chat_template: str | None = None
    vocab: Vocab | None = None
    tool_format: ToolFormat | None = None

    def format_for(self, body: Mapping[str, Any]) -> ToolFormat:
        default = self.tool_format or formats.for_model(self.chat_template)[0]
        return request_format(body, default)


def _chat(body: Mapping[str, Any], options: ChatOptions) -> Constraint | None:
    """Tools and/or reasoning (with ``response_format`` when it comes along): one constraint,
    built by the tool-call format."""
    if not wants_chat_constraint(body):
        return None
    request = ChatRequest(body, options.format_for(body), options.chat_template, options.vocab)
    param = "tools" if body.get("tools") else "reasoning"
    return Constraint(param, body.get(param), request.build, chat=request)


# llama.cpp's grammar trigger types (common_grammar_trigger_type), by number and by name.
_TRIGGER_TYPES: dict[Any, str] = {
    0: "token",
    1: "word",
    2: "pattern",
    3: "pattern_full",
    **{name: name for name in ("token", "word", "pattern", "pattern_full")},
}


def _trigger(value: Any, i: int) -> Trigger:
    """One of llama.cpp's ``grammar_triggers``: ``{"type": 1 | "word", "value": text}`` or
    ``{"type": 0 | "token", "token": id, "value": text}`` (or a plain string: a word)."""
    where = f"grammar_triggers[{i}]"
    if isinstance(value, str):
        value = {"type": "word", "value": value}
    if not isinstance(value, Mapping):
        raise bad_request(f"{where} must be an object with a type and a value", "grammar_triggers")
    kind = value.get("type", "word")
    kind = None if isinstance(kind, bool) else _TRIGGER_TYPES.get(kind)
    if kind is None:
        raise bad_request(
            f"{where}.type must be 0/'token', 1/'word', 2/'pattern' or 3/'pattern_full'",
            "grammar_triggers",
        )
    if kind in ("pattern", "pattern_full"):
        raise bad_request(
            f"{where}: pattern triggers are not supported (llama.cpp starts the grammar at a "
            "capture group of the match); use word or token triggers, or tools",
            "grammar_triggers",
            "unsupported_parameter",
        )
    try:
        if kind == "token":
            token = value.get("token")
            return Trigger("token", token if isinstance(token, int) else value.get("value", ""))
        return Trigger("literal", value.get("value", ""))
    except (TypeError, ValueError) as e:
        raise bad_request(f"{where}: {e}", "grammar_triggers") from e


def _lazy_grammar(body: Mapping[str, Any]) -> Callable[[], Grammar] | None:
    """llama.cpp's lazy grammar: free text until a trigger, then ``grammar``, whose own text
    starts with the trigger (as llama.cpp runs it from the trigger's first byte)."""
    lazy, triggers = body.get("grammar_lazy"), body.get("grammar_triggers")
    if not lazy:
        if triggers:
            raise bad_request("grammar_triggers needs grammar_lazy: true", "grammar_triggers")
        return None
    if body.get("grammar") in (None, ""):
        raise bad_request("grammar_lazy needs a grammar (GBNF)", "grammar")
    text = _text("grammar", body["grammar"])
    if not isinstance(triggers, list) or not triggers:
        raise bad_request(
            "grammar_lazy needs grammar_triggers: a non-empty list", "grammar_triggers"
        )
    parsed = [_trigger(t, i) for i, t in enumerate(triggers)]
    return lambda: Grammar.triggered(Grammar.from_gbnf(text), parsed, trigger_in_body=True)


def _candidates(body: Mapping[str, Any], options: ChatOptions) -> list[Constraint]:
    """The constraining fields of an OpenAI-style body (every dialect but Ollama's)."""
    found: list[Constraint] = []
    schema_options = _schema_options(body)

    def add(param: str, builder: Callable[[], Grammar | None] | None) -> None:
        if builder is not None:
            found.append(Constraint(param, body[param], builder))

    chat = _chat(body, options)
    if chat is not None:
        found.append(chat)
    elif body.get("response_format") is not None:
        add("response_format", _response_format(body["response_format"], schema_options))
    lazy = _lazy_grammar(body)
    if lazy is not None:
        add("grammar", lazy)
    elif body.get("grammar") not in (None, ""):
        add("grammar", _gbnf("grammar", body["grammar"]))
    for param in ("grammar_json_functions", "json_schema", "guided_json"):
        if body.get(param) is not None:
            add(param, _schema(param, body[param], schema_options))
    for kind in ("regex", "choice", "grammar"):
        param = f"guided_{kind}"
        if body.get(param) is not None:
            add(param, _VLLM_BUILDERS[kind](param, body[param]))
    if body.get("structured_outputs") is not None:
        _structured_outputs(body, found, schema_options)
    return found


def _ollama_candidates(body: Mapping[str, Any], options: ChatOptions) -> list[Constraint]:
    """Ollama's ``format``, and its ``tools`` / ``think`` (read as OpenAI's ``tools`` and this
    package's ``reasoning``)."""
    found: list[Constraint] = []
    builder = _ollama_format(body.get("format"), _schema_options(body))
    if builder is not None:
        found.append(Constraint("format", body["format"], builder))
    think = body.get("think")
    if think is not None and not isinstance(think, (bool, str)):
        raise bad_request('think must be true, false, or "low" / "medium" / "high"', "think")
    chat = _chat({**body, "reasoning": bool(think)} if think else body, options)
    if chat is not None:
        found.append(chat)
    return found


def find_constraint(
    body: Mapping[str, Any],
    chat_template: str | None = None,
    dialect: str = "openai",
    *,
    vocab: Vocab | None = None,
    tool_format: ToolFormat | None = None,
) -> Constraint | None:
    """The one constraint of ``body`` (None when unconstrained); raises :class:`ApiError` for
    two at once, a malformed field (400) or an oversized one (413). ``dialect="ollama"`` reads
    Ollama's ``format``, ``tools`` and ``think``; ``"openai"`` every other dialect's fields.
    ``tool_format``: the server's tool-call format (default: the one for ``chat_template``)."""
    options = ChatOptions(chat_template, vocab, tool_format)
    read = _ollama_candidates if dialect == "ollama" else _candidates
    found = read(body, options)
    if len(found) > 1:
        names = " and ".join(f"'{c.param}'" for c in found[:2])
        raise bad_request(
            f"{names} both constrain the output; send only one of them",
            found[1].param,
            "conflicting_constraints",
        )
    if not found:
        return None
    _check_size(found[0].param, found[0].spec)
    return found[0]


__all__ = ["ChatOptions", "Constraint", "find_constraint", "output_reader"]
