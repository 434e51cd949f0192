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
``tools`` + ``tool_choice`` (OpenAI)   :func:`.tools.tool_constraint`
``grammar`` (llama.cpp, LocalAI)       GBNF
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
from .errors import ApiError, bad_request
from .tools import tool_constraint

_VLLM_KINDS = ("json", "regex", "choice", "grammar")
_JSON_OBJECT: dict[str, Any] = {"type": "object"}


@dataclass(frozen=True)
class Constraint:
    """The constraining field of a request: ``param`` names it (for errors), ``spec`` is its
    value, ``build`` makes the grammar (None: generation is unconstrained)."""

    param: str
    spec: Any
    build: Callable[[], Grammar | None]
    tools: list[Any] | None = None  # set when the output is parsed back into tool calls


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


def _tools(body: Mapping[str, Any], chat_template: str | None) -> Constraint | None:
    tools, choice = body["tools"], body.get("tool_choice", "auto")
    if not isinstance(tools, list):
        raise bad_request("tools must be a list", "tools")
    if not tools or choice == "none":
        return None
    parallel = body.get("parallel_tool_calls", True) is not False

    def build() -> Grammar | None:
        return tool_constraint(tools, choice, parallel, chat_template)

    return Constraint("tools", tools, build, tools=tools)


def _lazy(body: Mapping[str, Any]) -> None:
    if body.get("grammar_lazy") or body.get("grammar_triggers"):
        raise bad_request(
            "grammar_lazy / grammar_triggers are not supported yet: send the grammar without "
            "triggers (it then applies from the first token), or use tools for tool calls",
            "grammar_lazy",
            "unsupported_parameter",
        )


def _candidates(body: Mapping[str, Any], chat_template: str | None) -> list[Constraint]:
    """The constraining fields of an OpenAI-style body (every dialect but Ollama's)."""
    found: list[Constraint] = []
    options = _schema_options(body)

    def add(param: str, builder: Callable[[], Grammar | None] | None) -> None:
        if builder is not None:
            found.append(Constraint(param, body[param], builder))

    if body.get("response_format") is not None:
        add("response_format", _response_format(body["response_format"], options))
    if body.get("tools") is not None:
        tools = _tools(body, chat_template)
        if tools is not None:
            found.append(tools)
    if body.get("grammar") not in (None, ""):
        add("grammar", _gbnf("grammar", body["grammar"]))
    for param in ("grammar_json_functions", "json_schema", "guided_json"):
        if body.get(param) is not None:
            add(param, _schema(param, body[param], options))
    for kind in ("regex", "choice", "grammar"):
        param = f"guided_{kind}"
        if body.get(param) is not None:
            add(param, _VLLM_BUILDERS[kind](param, body[param]))
    if body.get("structured_outputs") is not None:
        _structured_outputs(body, found, options)
    return found


def _ollama_candidates(body: Mapping[str, Any], chat_template: str | None) -> list[Constraint]:
    found: list[Constraint] = []
    builder = _ollama_format(body.get("format"), _schema_options(body))
    if builder is not None:
        found.append(Constraint("format", body["format"], builder))
    if body.get("tools") is not None:
        tools = _tools(body, chat_template)
        if tools is not None:
            found.append(tools)
    return found


def find_constraint(
    body: Mapping[str, Any], chat_template: str | None = None, dialect: str = "openai"
) -> Constraint | None:
    """The one constraint of ``body`` (None when unconstrained); raises :class:`ApiError` for
    two at once, a malformed field (400) or an oversized one (413). ``dialect="ollama"`` reads
    Ollama's ``format`` and ``tools``; ``"openai"`` every other dialect's fields."""
    if dialect == "ollama":
        found = _ollama_candidates(body, chat_template)
    else:
        _lazy(body)
        found = _candidates(body, chat_template)
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


__all__ = ["Constraint", "find_constraint"]
