"""The built-in tool-call formats, by name, and the chat-template detector.

Each format writes the calls the way its model family was trained to (the text of its chat
template's tool-call section), so a constrained model keeps its own format. A call looks like
(``f`` the tool, ``{...}`` its JSON arguments; "think" marks formats with a reasoning section):

* ``hermes`` (think): ``<tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>``
* ``qwen3_coder`` (think): ``<tool_call>\n<function=f>\n<parameter=k>\nv\n</parameter>\n``
  ``</function>\n</tool_call>`` (XML parameters, raw strings)
* ``llama3``: ``{"name": "f", "parameters": {...}}``, also after ``<|python_tag|>``
* ``mistral``: ``[TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]``
* ``mistral_v11``: ``[TOOL_CALLS]f[ARGS]{...}``
* ``deepseek_v3``: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f``
  ``\n```json\n{...}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>``
* ``deepseek_r1`` (think, opened by the prompt): as ``deepseek_v3``
* ``deepseek_v3_1`` (think, opened by the prompt): ``<｜tool▁calls▁begin｜>``
  ``<｜tool▁call▁begin｜>f<｜tool▁sep｜>{...}<｜tool▁call▁end｜><｜tool▁calls▁end｜>``
* ``deepseek_v3_2`` (think, opened by the prompt): ``<｜DSML｜function_calls>\n``
  ``<｜DSML｜invoke name="f">\n`` DSML parameters ``</｜DSML｜invoke>\n</｜DSML｜function_calls>``
* ``deepseek_v4``: as ``deepseek_v3_2`` with ``<｜DSML｜tool_calls>``;
  ``deepseek_v4_1``: with ``<｜DSML｜ calls>`` and ``<｜DSML｜ invoke`` (spaces)
* ``harmony`` (analysis channel): ``<|channel|>commentary to=functions.f <|constrain|>json``
  ``<|message|>{...}<|call|>`` (gpt-oss; see :mod:`.harmony`)
* ``gemma``: a ``tool_code`` Markdown block of ``f(k="v", n=3)`` lines (Gemma 3, see below)
* ``gemma4`` (thought channel): ``<|tool_call>call:f{k:<|"|>v<|"|>}<tool_call|>``

Gemma 3 has no tool tokens: Google's function-calling guide for Gemma 3 prompts the model to
answer with Python-style calls ``[func_name(param=value, ...)]`` and shows tool use in
Markdown code blocks tagged ``tool_code`` (results come back in ``tool_output`` blocks), which is
also what community templates (Ollama, LM Studio) prompt for. The ``gemma`` format writes that:
one ``tool_code`` block holding one call per line, arguments as Python keyword literals.
"""

from __future__ import annotations

import re

from ...errors import UnknownFormatError
from .base import ToolFormat
from .harmony import HarmonyFormat
from .tagged import CallSyntax, Section, TaggedFormat, Think

_THINK = Think("<think>", "</think>")
_QWEN_THINK = Think("<think>", "</think>", "\n\n")
_DS_THINK = Think("<think>", "</think>", in_prompt=True)
_DS_CALLS = Section(
    "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "\n", "<｜tool▁calls▁begin｜>"
)


def _json_call(prefix: str, key: str, suffix: str, trigger: str) -> CallSyntax:
    return CallSyntax(
        f'{prefix}{{"name": "', f'", "{key}": ', f"}}{suffix}", trigger, json_name=True
    )


def _dsml(calls: str, invoke: str, style: str) -> dict[str, object]:
    return {
        "calls": (
            CallSyntax(
                f'<｜DSML｜{invoke} name="',
                '">\n',
                f"</｜DSML｜{invoke}>\n",
                f"<｜DSML｜{invoke}",
                style=style,
            ),
        ),
        "section": Section(f"<｜DSML｜{calls}>\n", f"</｜DSML｜{calls}>", "", f"<｜DSML｜{calls}>"),
        "think": _DS_THINK,
    }


BUILTIN: tuple[ToolFormat, ...] = (
    TaggedFormat(
        "hermes",
        calls=(_json_call("<tool_call>\n", "arguments", "\n</tool_call>", "<tool_call>"),),
        think=_QWEN_THINK,
        aliases=("qwen2_5", "qwen3", "qwen_3", "qwq", "hermes2pro", "hermes3"),
        models="Hermes 2 Pro, Hermes 3, Qwen2.5, Qwen3, QwQ",
    ),
    TaggedFormat(
        "qwen3_coder",
        calls=(
            CallSyntax(
                "<tool_call>\n<function=",
                ">\n",
                "</function>\n</tool_call>",
                "<tool_call>",
                style="qwen_xml",
            ),
        ),
        think=_QWEN_THINK,
        aliases=("qwen_3_coder", "qwen3_5", "qwen_3_5", "qwen3_6"),
        models="Qwen3-Coder, Qwen3.5, Qwen3.6",
    ),
    TaggedFormat(
        "llama3",
        calls=(
            _json_call("", "parameters", "", '{"name": '),
            _json_call("<|python_tag|>", "parameters", "", "<|python_tag|>"),
        ),
        aliases=("llama", "llama3_1", "llama3_2", "llama3_3"),
        models="Llama 3.1, 3.2, 3.3 (JSON tool calling)",
    ),
    TaggedFormat(
        "mistral",
        calls=(_json_call("", "arguments", "", '{"name": '),),
        section=Section("[TOOL_CALLS][", "]", ", ", "[TOOL_CALLS]"),
        aliases=("mistral_nemo", "mistral_v3", "mistral_v7"),
        models="Mistral 7B v0.3, Mistral Nemo, Mistral Small 3 / 3.1, Ministral",
    ),
    TaggedFormat(
        "mistral_v11",
        calls=(CallSyntax("[TOOL_CALLS]", "[ARGS]", "", "[TOOL_CALLS]"),),
        call_separator="",
        aliases=("magistral", "devstral"),
        models="Mistral Small 3.2, Magistral, Devstral (tokenizer v11+)",
    ),
    TaggedFormat(
        "deepseek_v3",
        calls=(
            CallSyntax(
                "<｜tool▁call▁begin｜>function<｜tool▁sep｜>",
                "\n```json\n",
                "\n```<｜tool▁call▁end｜>",
                "<｜tool▁call▁begin｜>",
            ),
        ),
        section=_DS_CALLS,
        aliases=("deepseek", "deepseek_v3_0324"),
        models="DeepSeek-V3, V3-0324",
    ),
    TaggedFormat(
        "deepseek_r1",
        calls=(
            CallSyntax(
                "<｜tool▁call▁begin｜>function<｜tool▁sep｜>",
                "\n```json\n",
                "\n```<｜tool▁call▁end｜>",
                "<｜tool▁call▁begin｜>",
            ),
        ),
        section=_DS_CALLS,
        think=_DS_THINK,
        aliases=("deepseek_r1_0528",),
        models="DeepSeek-R1, R1-0528 (the prompt opens <think>)",
    ),
    TaggedFormat(
        "deepseek_v3_1",
        calls=(
            CallSyntax(
                "<｜tool▁call▁begin｜>",
                "<｜tool▁sep｜>",
                "<｜tool▁call▁end｜>",
                "<｜tool▁call▁begin｜>",
            ),
        ),
        section=Section(
            "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "", "<｜tool▁calls▁begin｜>"
        ),
        think=_DS_THINK,
        aliases=("deepseek_v3_2_exp",),
        models="DeepSeek-V3.1, V3.1-Terminus, V3.2-Exp",
    ),
    TaggedFormat(
        "deepseek_v3_2",
        **_dsml("function_calls", "invoke", "deepseek_xml"),  # type: ignore[arg-type]
        models="DeepSeek-V3.2 (DSML)",
    ),
    TaggedFormat(
        "deepseek_v4",
        **_dsml("tool_calls", "invoke", "deepseek_xml"),  # type: ignore[arg-type]
        models="DeepSeek-V4 (DSML)",
    ),
    TaggedFormat(
        "deepseek_v4_1",
        **_dsml(" calls", " invoke", "deepseek_v4_1_xml"),  # type: ignore[arg-type]
        models="DeepSeek-V4.1 (DSML)",
    ),
    HarmonyFormat(),
    TaggedFormat(
        "gemma",
        calls=(
            CallSyntax(
                "", "(", ")\n", "", style="python", name_pattern=r"([A-Za-z_][A-Za-z0-9_.\-]*)"
            ),
        ),
        section=Section("```tool_code\n", "```", "", "```tool_code"),
        aliases=("gemma3", "gemma_3"),
        models="Gemma 3 (prompted tool_code blocks)",
    ),
    TaggedFormat(
        "gemma4",
        calls=(
            CallSyntax(
                "<|tool_call>call:",
                "",
                "<tool_call|>",
                "<|tool_call>",
                style="gemma",
                name_pattern=r"([^{<\s]*)(?=\{)",
            ),
        ),
        think=Think("<|channel>thought\n", "<channel|>"),
        aliases=("gemma_4",),
        models="Gemma 4",
    ),
)

_REGISTRY: dict[str, ToolFormat] = {}


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(".", "_")


def register(fmt: ToolFormat, *, replace: bool = False) -> None:
    """Adds a format under its name and aliases (``replace=True`` to override one)."""
    for name in (fmt.name, *fmt.aliases):
        key = _key(name)
        if key in _REGISTRY and not replace and _REGISTRY[key] is not fmt:
            raise ValueError(f"a tool-call format named {name!r} is already registered")
        _REGISTRY[key] = fmt


def names() -> list[str]:
    """The formats' names (aliases not included), in registration order."""
    return list(dict.fromkeys(f.name for f in _REGISTRY.values()))


def get(name: str | ToolFormat) -> ToolFormat:
    """The format named ``name`` (or one of its aliases); raises UnknownFormatError."""
    if isinstance(name, ToolFormat):
        return name
    if not isinstance(name, str):
        raise TypeError(f"a format name must be a str, not {type(name).__name__}")
    fmt = _REGISTRY.get(_key(name))
    if fmt is None:
        raise UnknownFormatError(name, names())
    return fmt


# (format, patterns that all must be in the template), most specific first.
_SIGNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("harmony", ("<|channel|>",)),
    ("deepseek_v4_1", ("｜DSML｜ ",)),
    ("deepseek_v4", ("｜DSML｜tool_calls",)),
    ("deepseek_v3_2", ("｜DSML｜",)),
    ("deepseek_r1", ("tool▁call▁begin｜>' + tool", "<think>")),
    ("deepseek_r1", ("tool▁sep｜>' + tool['function']['name'] + '\\n```json", "<think>")),
    ("deepseek_v3", ("<｜tool▁sep｜>' + tool['function']['name'] + '\\n```json",)),
    ("deepseek_v3", ("tool▁call▁begin｜>' + tool['type']",)),
    ("deepseek_v3_1", ("<｜tool▁calls▁begin｜>",)),
    ("mistral_v11", ("[TOOL_CALLS]", "[ARGS]")),
    ("mistral", ("[TOOL_CALLS]",)),
    ("gemma4", ("<|tool_call>",)),
    ("qwen3_coder", ("<function=", "<parameter=")),
    ("hermes", ("<tool_call>",)),
    ("llama3", ("<|python_tag|>",)),
    ("llama3", ("<|start_header_id|>", '"parameters"')),
    ("gemma", ("<start_of_turn>",)),
)


def detect(chat_template: str | None) -> ToolFormat | None:
    """The format a chat template (Jinja text, e.g. a GGUF's ``tokenizer.chat_template``) writes
    tool calls in, or None when it is none of the known ones."""
    if not chat_template:
        return None
    text = re.sub(r"\s+", " ", chat_template)
    for name, signs in _SIGNS:
        if all(sign in text or sign in chat_template for sign in signs):
            return get(name)
    return None


for _fmt in BUILTIN:
    register(_fmt)

__all__ = ["BUILTIN", "detect", "get", "names", "register"]
